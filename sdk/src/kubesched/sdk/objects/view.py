"""What the read-only views of API objects (:class:`~.pod.Pod`, :class:`~.node.Node`) share:
the object as read-only JSON, its metadata, and the guard against writes."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from ..readonly import EMPTY_DICT, read_only
from ..selectors import InvalidObjectError
from .resource import _set

__all__ = ["ObjectView"]


class ObjectView:
    """A read-only view of one API object. ``view.raw`` is the object, as read-only mappings and
    lists (a copy made once, when the view is built); assigning or deleting an attribute raises
    ``TypeError`` with the subclass's ``read_only_message``. Parsed parts are cached
    properties."""

    __slots__ = ("__dict__", "raw")

    #: the kind, as messages name it
    kind: ClassVar[str] = "object"
    #: what a write to the view raises (``TypeError``)
    read_only_message: ClassVar[str] = "views are read-only"

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise InvalidObjectError("", f"a {self.kind} must be an object")
        _set(self, "raw", read_only(raw))

    if TYPE_CHECKING:
        raw: Mapping[str, Any]
    else:

        def __setattr__(self, *_args: Any) -> NoReturn:
            raise TypeError(self.read_only_message)

        __delattr__ = __setattr__

    @cached_property
    def metadata(self) -> Mapping[str, Any]:
        return self.raw.get("metadata") or EMPTY_DICT

    @cached_property
    def spec(self) -> Mapping[str, Any]:
        return self.raw.get("spec") or EMPTY_DICT

    @cached_property
    def status(self) -> Mapping[str, Any]:
        return self.raw.get("status") or EMPTY_DICT

    @cached_property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @cached_property
    def labels(self) -> Mapping[str, str]:
        return self.metadata.get("labels") or EMPTY_DICT

    @cached_property
    def annotations(self) -> Mapping[str, str]:
        return self.metadata.get("annotations") or EMPTY_DICT

    # a view is immutable: copies are the view itself; pickling rebuilds it from ``raw``
    def __copy__(self) -> ObjectView:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ObjectView:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.raw,))
