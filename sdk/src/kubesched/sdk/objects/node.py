"""The read-only Node view."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .._text import cut
from ..readonly import ReadOnlyDict, ReadOnlyList
from ..selectors import InvalidObjectError
from .pod import _ro_list
from .resource import Resource, _q
from .taints import Taint
from .view import ObjectView, _int, _mapping, _objects, _show, _text, cached_property

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
        for i, t in enumerate(_objects(self.spec.get("taints"), "spec.taints")):
            if not _text(t.get("key")):
                raise InvalidObjectError(f"spec.taints[{i}].key", "Required value")
            eff = t.get("effect") or ""
            if eff not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                raise InvalidObjectError(f"spec.taints[{i}].effect", f'Unsupported value: {_show(eff)}: supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"')
            out.append(Taint(_text(t["key"]), _text(t.get("value")), eff))
        return tuple(out)

    @cached_property
    def allocatable(self) -> Resource:
        alloc = self.status.get("allocatable")
        if alloc is None:
            return Resource.from_list(self.status.get("capacity"), "status.capacity").read_only()
        return Resource.from_list(alloc, "status.allocatable").read_only()

    @cached_property
    def capacity(self) -> Resource:
        return Resource.from_list(self.status.get("capacity"), "status.capacity").read_only()

    @cached_property
    def images(self) -> Sequence[tuple[Sequence[str], int]]:
        """``status.images`` as (names, size in bytes)."""
        out = []
        for n, i in enumerate(_objects(self.status.get("images"), "status.images")):
            names = i.get("names")
            if names is not None and not isinstance(names, list):
                raise InvalidObjectError(f"status.images[{n}].names", "must be a list of strings")
            out.append((_ro_list(names), _int(i.get("sizeBytes"), f"status.images[{n}].sizeBytes")))
        return ReadOnlyList(out)

    @cached_property
    def conditions(self) -> Mapping[str, str]:
        return ReadOnlyDict({_text(c.get("type"), "None"): _text(c.get("status"), "None") for c in _objects(self.status.get("conditions"), "status.conditions")})

    def validate(self) -> None:
        """Parse everything the scheduler reads; raises :class:`InvalidObjectError` with the
        field path of the first problem (a negative capacity or allocatable quantity as the API
        server's ValidateNodeResources says it)."""
        self._validate_object()
        if not self.name:
            raise InvalidObjectError("metadata.name", "Required value: name is required")
        _ = (self.unschedulable, self.taints, self.allocatable, self.capacity, self.images, self.conditions)
        for part in ("capacity", "allocatable"):
            for k, v in _mapping(self.status.get(part), f"status.{part}").items():
                if _q(v, f"status.{part}.{cut(k)}") < 0:
                    raise InvalidObjectError(f"status.{part}.{cut(k)}", f"Invalid value: {_show(v)}: must be greater than or equal to 0")

    def __repr__(self) -> str:
        return f"Node({self.name})"
