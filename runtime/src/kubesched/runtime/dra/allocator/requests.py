"""Requests and subrequests of a claim (Go's requestAccessor, requestData and
validateDeviceRequest, allocator_incubating.go v0.36.3).

Defaulting: Go's allocator does none; the API server applies ``SetDefaults_ExactDeviceRequest``
and ``SetDefaults_DeviceSubRequest`` (pkg/apis/resource/v1/defaults.go) when a claim is created:
an empty ``allocationMode`` is ``ExactCount``, and an ``ExactCount`` request's ``count`` of 0
(or none) is 1. :class:`RequestView` applies the same rule when it reads a request, because the
simulated cluster's claims are read from manifests that no API server defaulted; a claim from an
API server already has both fields, so there it changes nothing. (Go's allocator given an
undefaulted request would fail with ``unsupported count mode``.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .types import AllocatorError, Quantity

if TYPE_CHECKING:
    from .pools import Device, Pool, Slice

__all__ = ["RequestData", "RequestView"]

EXACT_COUNT = "ExactCount"
ALL = "All"
#: Go's math.MaxInt
MAX_INT = (1 << 63) - 1


class RequestView:
    """One request (``exactly``) or one subrequest (an entry of ``firstAvailable``), read once."""

    __slots__ = ("admin_access", "capacities", "class_name", "count", "has_admin_access", "has_capacity", "mode", "name", "selectors", "tolerations")

    def __init__(self, name: str, spec: Mapping[str, Any], sub: bool) -> None:
        self.name = name
        self.class_name: str = spec.get("deviceClassName") or ""
        # the API server's defaulting (see the module's doc)
        self.mode: str = spec.get("allocationMode") or EXACT_COUNT
        self.count: int = (spec.get("count") or 1) if self.mode == EXACT_COUNT else (spec.get("count") or 0)
        aa = None if sub else spec.get("adminAccess")
        self.has_admin_access = aa is not None
        self.admin_access = bool(aa)
        self.selectors: list[Mapping[str, Any]] = spec.get("selectors") or []
        self.tolerations: list[Mapping[str, Any]] = spec.get("tolerations") or []
        cap = spec.get("capacity")
        self.capacities: dict[str, Quantity] | None = None
        if cap is not None:
            self.capacities = {k: Quantity.parse(v) for k, v in (cap.get("requests") or {}).items()}
        self.has_capacity = cap is not None


    @classmethod
    def exact(cls, request: Mapping[str, Any]) -> RequestView:
        return cls(request.get("name", ""), request.get("exactly") or {}, False)

    @classmethod
    def sub(cls, sub_request: Mapping[str, Any]) -> RequestView:
        return cls(sub_request.get("name", ""), sub_request, True)


@dataclass
class RequestData:
    request: RequestView
    parent: RequestView | None = None
    class_: Mapping[str, Any] | None = None
    num_devices: int = 0
    selected_sub_request: int = 0
    #: the devices of an "All" request: (device id, device, slice, pool)
    all_devices: list[tuple[tuple[str, str, str], Device, Slice, Pool]] = field(default_factory=list)

    def request_name(self) -> str:
        if self.parent is not None:
            return f"{self.parent.name}/{self.request.name}"
        return self.request.name


def check_request(claim_name: str, request: RequestView, admin_access_enabled: bool) -> None:
    """The part of validateDeviceRequest before the class lookup."""
    for i, selector in enumerate(request.selectors):
        if selector.get("cel") is None:
            raise AllocatorError(f"claim {claim_name}, request {request.name}, selector #{i}: CEL expression empty (unsupported selector type?)")
    if not admin_access_enabled and request.has_admin_access:
        raise AllocatorError(f"claim {claim_name}, request {request.name}: admin access is requested, but the feature is disabled")
    if not request.class_name:
        raise AllocatorError(f"claim {claim_name}, request {request.name}: missing device class name (unsupported request type?)")
