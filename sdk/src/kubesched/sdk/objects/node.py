"""The read-only Node view."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property

from ..readonly import ReadOnlyDict, ReadOnlyList
from ..selectors import InvalidObjectError
from .pod import _ro_list
from .resource import Resource
from .taints import Taint
from .view import ObjectView

#: What assigning or deleting an attribute of a Node view raises (``TypeError``).
NODE_READ_ONLY_MESSAGE = "Node views are read-only; write through handle.objects.patch(...)"


class Node(ObjectView):
    """A read-only view of a v1.Node. ``node.raw`` is the API object, as read-only mappings
    and lists (a copy made once, when the view is built); writes raise ``TypeError``."""

    __slots__ = ()
    kind = "Node"
    read_only_message = NODE_READ_ONLY_MESSAGE

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

    def __repr__(self) -> str:
        return f"Node({self.name})"
