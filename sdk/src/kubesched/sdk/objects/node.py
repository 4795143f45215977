"""The read-only Node view."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

from ..readonly import EMPTY_DICT, ReadOnlyDict, ReadOnlyList, read_only
from ..selectors import InvalidObjectError
from .pod import _ro_list
from .resource import Resource, _set
from .taints import Taint

#: What assigning or deleting an attribute of a Node view raises (``TypeError``).
NODE_READ_ONLY_MESSAGE = "Node views are read-only; write through handle.objects.patch(...)"


def _node_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(NODE_READ_ONLY_MESSAGE)


class Node:
    """A read-only view of a v1.Node. ``node.raw`` is the API object, as read-only mappings
    and lists (a copy made once, when the view is built); writes raise ``TypeError``."""

    __slots__ = ("__dict__", "raw")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise InvalidObjectError("", "a Node must be an object")
        _set(self, "raw", read_only(raw))

    if TYPE_CHECKING:
        raw: Mapping[str, Any]
    else:
        __setattr__ = _node_error
        __delattr__ = _node_error

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

    @cached_property
    def unschedulable(self) -> bool:
        return bool(self.spec.get("unschedulable"))

    @cached_property
    def taints(self) -> tuple[Taint, ...]:
        out = []
        for i, t in enumerate(self.spec.get("taints") or []):
            if not isinstance(t, Mapping) or not t.get("key"):
                raise InvalidObjectError(f"spec.taints[{i}].key", "Required value")
            eff = t.get("effect") or ""
            if eff not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                raise InvalidObjectError(f"spec.taints[{i}].effect", f'Unsupported value: "{eff}": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"')
            out.append(Taint(str(t["key"]), str(t.get("value") or ""), eff))
        return tuple(out)

    @cached_property
    def allocatable(self) -> Resource:
        alloc = self.status.get("allocatable")
        if alloc is None:
            alloc = self.status.get("capacity")
        return Resource.from_list(alloc, "status.allocatable").read_only()

    @cached_property
    def capacity(self) -> Resource:
        return Resource.from_list(self.status.get("capacity"), "status.capacity").read_only()

    @cached_property
    def images(self) -> Sequence[tuple[Sequence[str], int]]:
        """``status.images`` as (names, size in bytes)."""
        return ReadOnlyList([(_ro_list(i.get("names")), int(i.get("sizeBytes") or 0)) for i in self.status.get("images") or []])

    @cached_property
    def conditions(self) -> Mapping[str, str]:
        return ReadOnlyDict({str(c.get("type")): str(c.get("status")) for c in self.status.get("conditions") or []})

    def validate(self) -> None:
        if not self.name:
            raise InvalidObjectError("metadata.name", "Required value: name is required")
        _ = (self.taints, self.allocatable, self.capacity, self.images)

    # a view is immutable: copies are the view itself; pickling rebuilds it from ``raw``
    def __copy__(self) -> Node:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Node:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Node, (self.raw,))

    def __repr__(self) -> str:
        return f"Node({self.name})"
