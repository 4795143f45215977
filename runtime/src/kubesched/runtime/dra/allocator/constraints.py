"""Claim constraints as Go's incubating allocator (v0.36.3): ``matchAttribute``
(allocator_incubating.go) and ``distinctAttribute`` (constraint.go). Constraints are monotonic:
``add`` is called before a device is picked, ``remove`` exactly once for each successful
``add`` when the search backtracks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .pools import Device
from .types import DeviceID

__all__ = ["DistinctAttribute", "MatchAttribute", "lookup_attribute"]

_KINDS = ("string", "int", "bool", "version")


def lookup_attribute(device: Device, device_id: DeviceID, name: str) -> Mapping[str, Any] | None:
    """Go's lookupAttribute: the fully qualified name, or the bare ID when the domain is the
    device's driver."""
    attrs = device.attributes
    attr = attrs.get(name)
    if attr is not None:
        return attr
    i = name.find("/")
    if i < 0 or name[:i] != device_id[0]:
        return None
    return attrs.get(name[i + 1 :])


def _typed(attr: Mapping[str, Any]) -> tuple[str, Any] | None:
    for kind in _KINDS:
        v = attr.get(kind)
        if v is not None:
            return kind, v
    return None


class _Constraint:
    __slots__ = ("attribute_name", "request_names")

    def __init__(self, request_names: list[str], attribute_name: str) -> None:
        self.request_names = frozenset(request_names)
        self.attribute_name = attribute_name

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.request_names:
            return True
        if request in self.request_names:
            return True
        return bool(sub_request) and f"{request}/{sub_request}" in self.request_names


class MatchAttribute(_Constraint):
    """All devices of the named requests share the attribute's value."""

    __slots__ = ("num_devices", "value")

    def __init__(self, request_names: list[str], attribute_name: str) -> None:
        super().__init__(request_names, attribute_name)
        self.value: tuple[str, Any] | None = None
        self.num_devices = 0

    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> bool:
        if not self.applies(request, sub_request):
            return True
        attr = lookup_attribute(device, device_id, self.attribute_name)
        if attr is None:
            return False
        typed = _typed(attr)
        if self.num_devices == 0:
            self.value = typed
            self.num_devices = 1
            return True
        if typed is None or typed != self.value:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> None:
        if self.applies(request, sub_request):
            self.num_devices -= 1


class DistinctAttribute(_Constraint):
    """No two devices of the named requests share the attribute's value. As in Go, the values
    are remembered per request name (a second device of the same request replaces the first's)."""

    __slots__ = ("attributes", "num_devices")

    def __init__(self, request_names: list[str], attribute_name: str) -> None:
        super().__init__(request_names, attribute_name)
        self.attributes: dict[str, tuple[str, Any] | None] = {}
        self.num_devices = 0

    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> bool:
        if not self.applies(request, sub_request):
            return True
        attr = lookup_attribute(device, device_id, self.attribute_name)
        if attr is None:
            return False
        typed = _typed(attr)
        if self.num_devices == 0:
            self.attributes[request] = typed
            self.num_devices = 1
            return True
        if typed is None:
            if self.attributes:
                return False
        else:
            for have in self.attributes.values():
                if have == typed:
                    return False
        self.attributes[request] = typed
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> None:
        if self.applies(request, sub_request):
            self.attributes.pop(request, None)
            self.num_devices -= 1
