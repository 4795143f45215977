"""What the read-only views of API objects (:class:`~.pod.Pod`, :class:`~.node.Node`) share:
the object as read-only JSON, its metadata, and the guard against writes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NoReturn, TypeVar, overload

from .._text import quote
from ..readonly import EMPTY_DICT, EMPTY_LIST, ReadOnlyDict, read_only
from ..selectors import InvalidObjectError
from ..selectors import _objects as _objects  # the views read lists of objects as selectors do
from .resource import _set

__all__ = ["ObjectView"]

_T = TypeVar("_T")


class cached_property(Generic[_T]):
    """``functools.cached_property`` without its lock (as in Python 3.12): 3.11's takes a lock,
    one per property shared by every instance, on each first read, about 1 µs per computed part
    of a view. A view is read-only, so two threads reading a part at once both compute the same
    value. Computed on the first read, then kept in the instance's ``__dict__``, which later
    reads find first (a non-data descriptor)."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...
    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value


def _show(v: Any) -> str:
    """A user's value as a message names it: a scalar quoted and cut, a container by its kind."""
    if isinstance(v, Mapping):
        return "an object"
    if isinstance(v, (list, tuple)):
        return "a list"
    if v is None or isinstance(v, bool):
        return "null" if v is None else str(v).lower()
    try:
        return quote(v)
    except ValueError:  # an int too long for str()
        return "a number"


def _text(v: Any, default: str = "") -> str:
    """A scalar field as a string: ``default`` when it is missing, empty or not a scalar (the
    view's ``validate()`` names such a field)."""
    if type(v) is str:
        return v or default
    if not v or not isinstance(v, (str, int, float)):
        return default
    try:
        return str(v)
    except ValueError:  # an int too long for str()
        return default


def _mapping(v: Any, field: str) -> Mapping[str, Any]:
    """An object field (empty when missing); InvalidObjectError when it is not an object."""
    t = type(v)
    if t is ReadOnlyDict or t is dict or isinstance(v, Mapping):  # the exact types first: no ABC check
        return v
    if v is None:
        return EMPTY_DICT
    raise InvalidObjectError(field, "must be an object")


def _list(v: Any, field: str, what: str = "a list") -> list[Any]:
    """A list field (empty when missing); InvalidObjectError when it is not a list."""
    if isinstance(v, list):
        return v
    if v is None:
        return EMPTY_LIST
    raise InvalidObjectError(field, f"must be {what}")


def _int(v: Any, field: str) -> int:
    """An integer field (0 when missing or empty, as ``int(v or 0)``)."""
    if not v:
        return 0
    if type(v) is int:
        return v
    try:
        if isinstance(v, (str, int, float)):
            return int(v)
    except (ValueError, OverflowError):
        pass
    raise InvalidObjectError(field, f"invalid value {_show(v)}: must be an integer")


def _string_map(md: Mapping[str, Any], key: str, field: str) -> None:
    """``validate()``'s check of labels / annotations: a map of scalars."""
    v = md.get(key)
    if v is None:
        return
    if not isinstance(v, Mapping):
        raise InvalidObjectError(field, "must be a map of strings")
    for k, x in v.items():
        if type(x) is not str and isinstance(x, (Mapping, list, tuple)):
            raise InvalidObjectError(f"{field}[{_show(k)}]", "must be a string")


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
        if type(raw) is not ReadOnlyDict and not isinstance(raw, Mapping):
            raise InvalidObjectError("", f"a {self.kind} must be an object")
        try:
            _set(self, "raw", read_only(raw))
        except RecursionError:
            raise InvalidObjectError("", f"a {self.kind} must not be nested this deeply") from None

    if TYPE_CHECKING:
        raw: Mapping[str, Any]
    else:

        def __setattr__(self, *_args: Any) -> NoReturn:
            raise TypeError(self.read_only_message)

        __delattr__ = __setattr__

    # The identity of an object and the parts the runtime routes it by are read before the
    # object is validated: they never raise (a part of the wrong type reads as empty), and
    # ``validate()`` names the field.
    @cached_property
    def metadata(self) -> Mapping[str, Any]:
        v = self.raw.get("metadata")
        return v if type(v) is ReadOnlyDict or isinstance(v, Mapping) else EMPTY_DICT

    @cached_property
    def spec(self) -> Mapping[str, Any]:
        v = self.raw.get("spec")
        return v if type(v) is ReadOnlyDict or isinstance(v, Mapping) else EMPTY_DICT

    @cached_property
    def status(self) -> Mapping[str, Any]:
        v = self.raw.get("status")
        return v if type(v) is ReadOnlyDict or isinstance(v, Mapping) else EMPTY_DICT

    @cached_property
    def name(self) -> str:
        return _text(self.metadata.get("name"))

    @cached_property
    def labels(self) -> Mapping[str, str]:
        v = self.metadata.get("labels")
        return v if type(v) is ReadOnlyDict or isinstance(v, Mapping) else EMPTY_DICT

    @cached_property
    def annotations(self) -> Mapping[str, str]:
        v = self.metadata.get("annotations")
        return v if type(v) is ReadOnlyDict or isinstance(v, Mapping) else EMPTY_DICT

    def _validate_object(self) -> None:
        """The checks every kind shares: metadata, spec and status are objects, the name is a
        non-empty string, labels and annotations are maps of strings."""
        raw = self.raw
        for part in ("metadata", "spec", "status"):
            v = raw.get(part)
            if v is not None and type(v) is not ReadOnlyDict and not isinstance(v, Mapping):
                raise InvalidObjectError(part, "must be an object")
        md = self.metadata
        name = md.get("name")
        if name is not None and not isinstance(name, (str, int, float)):
            raise InvalidObjectError("metadata.name", "must be a string")
        _string_map(md, "labels", "metadata.labels")
        _string_map(md, "annotations", "metadata.annotations")

    # a view is immutable: copies are the view itself; pickling rebuilds it from ``raw``
    def __copy__(self) -> ObjectView:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ObjectView:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.raw,))
