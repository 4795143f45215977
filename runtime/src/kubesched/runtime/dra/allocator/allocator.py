"""The structured allocator kube-scheduler v1.36.3 uses with its default features: Go's
*incubating* allocator (dynamic-resource-allocation v0.36.3,
``structured/internal/incubating/allocator_incubating.go`` ``NewAllocator`` and ``Allocate``).

One :class:`Allocator` serves one pod's scheduling cycle (built in PreFilter, ``allocate()``
called per node in Filter). Slices are read into :mod:`.pools` objects the first time a node
needs them, once per allocator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Protocol

from .constraints import DistinctAttribute, MatchAttribute
from .pools import Pool, Slice, gather_pools
from .requests import ALL, EXACT_COUNT, MAX_INT, RequestData, RequestView, check_request
from .result import build_result
from .search import MaxSizeExceeded, Search
from .types import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocatedState,
    AllocatorError,
    FailedOnNode,
    Features,
    kobj,
)
from .whynot import why_not

__all__ = ["Allocator"]


class _Compiled(Protocol):
    error: Any

    def device_matches(self, driver: str, device: Mapping[str, Any]) -> bool: ...


class CelCache(Protocol):
    def get_or_compile(self, expression: str) -> _Compiled: ...


class Allocator:
    """Go's ``incubating.Allocator``."""

    def __init__(
        self,
        features: Features,
        allocated_state: AllocatedState,
        classes: Callable[[str], Mapping[str, Any] | None],
        slices: Sequence[Mapping[str, Any]],
        cel_cache: CelCache,
    ) -> None:
        self.features = features
        self.allocated_state = allocated_state
        self.classes = classes
        self.cel_cache = cel_cache
        self._all = slices
        self._on_node: dict[str, list[Mapping[str, Any]]] = {}
        self._shared: list[Mapping[str, Any]] = []
        for s in slices:
            spec = s.get("spec") or {}
            name = spec.get("nodeName") or ""
            if not name or spec.get("sharedCounters"):
                self._shared.append(s)
            else:
                self._on_node.setdefault(name, []).append(s)
        self._parsed: dict[int, Slice] = {}
        #: the available counters per pool name (Go's availableCounters)
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        #: Go's Stats.NumAllocateOneInvocations, summed over allocate() calls
        self.num_allocate_one_invocations = 0
        #: after allocate() returned None: which claim and request could not be satisfied, and why
        self.why_not: str | None = None

    def _slice(self, raw: Mapping[str, Any]) -> Slice:
        got = self._parsed.get(id(raw))
        if got is None:
            got = self._parsed[id(raw)] = Slice(raw)
        return got

    def _slices_in_pool(self, driver: str, pool: str) -> list[Slice]:
        out = []
        for raw in self._all:
            spec = raw.get("spec") or {}
            if spec.get("driver") == driver and (spec.get("pool") or {}).get("name") == pool:
                out.append(self._slice(raw))
        return out

    def allocate(self, node: Mapping[str, Any], claims: Sequence[Mapping[str, Any]], deadline: float | None = None) -> list[dict[str, Any]] | None:
        """One v1 AllocationResult dict per claim, or None when the claims do not fit on the
        node. Raises :class:`FailedOnNode` (``invalid resource pools were encountered``),
        :class:`AllocatorError` (Go's other errors) and, past ``deadline`` (a
        ``time.monotonic()`` value), :class:`AllocatorTimeout`."""
        self.why_not = None
        node_name = (node.get("metadata") or {}).get("name", "")
        raw_slices = self._on_node.get(node_name, []) + self._shared
        try:
            pools = gather_pools([self._slice(s) for s in raw_slices], node, self.features, self._slices_in_pool)
        except AllocatorError as e:
            raise AllocatorError(f"gather pool information: {e}") from e
        search = Search(self, node, claims, pools, deadline)
        for ci, claim in enumerate(claims):
            self._prepare_claim(search, ci, claim, pools)
        try:
            done = search.allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except MaxSizeExceeded as e:  # Go returns errAllocationResultMaxSizeExceeded as it is
            raise AllocatorError("allocation max size exceeded") from e
        finally:
            self.num_allocate_one_invocations += search.invocations
        if not done:
            if any(p.is_invalid for p in pools):
                raise FailedOnNode("invalid resource pools were encountered")
            self.why_not = why_not(search)
            return None
        return [build_result(claim, ci, search.result[ci], search.request_data, node_name, self.features) for ci, claim in enumerate(claims)]

    def _prepare_claim(self, search: Search, ci: int, claim: Mapping[str, Any], pools: list[Pool]) -> None:
        features = self.features
        name = kobj(claim)
        devices = (claim.get("spec") or {}).get("devices") or {}
        min_devices = 0
        for ri, request in enumerate(devices.get("requests") or ()):
            subs = request.get("firstAvailable") or []
            rname = request.get("name", "")
            if not features.prioritized_list and subs:
                raise AllocatorError(f"claim {name}, request {rname}: has subrequests, but the DRAPrioritizedList feature is disabled")
            if not features.consumable_capacity:
                if (request.get("exactly") or {}).get("capacity") is not None:
                    raise AllocatorError(f"claim {name}, request {rname}: has capacity requests, but the DRAConsumableCapacity feature is disabled")
                for sub in subs:
                    if sub.get("capacity") is not None:
                        raise AllocatorError(f"claim {name}, subrequest {sub.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled")
            if subs:
                parent = RequestView.exact(request)
                least = MAX_INT
                for si, sub in enumerate(subs):
                    data = self._validate(search, name, RequestView.sub(sub), parent, (ci, ri, si), pools)
                    search.request_data[(ci, ri, si)] = data
                    least = min(least, data.num_devices)
                min_devices += least
            else:
                data = self._validate(search, name, RequestView.exact(request), None, (ci, ri, 0), pools)
                search.request_data[(ci, ri, 0)] = data
                min_devices += data.num_devices
        if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocatorError(f"claim {name}: number of requested devices {min_devices} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
        constraints: list[MatchAttribute | DistinctAttribute] = []
        for i, c in enumerate(devices.get("constraints") or ()):
            reqs = list(c.get("requests") or ())
            if c.get("matchAttribute") is not None:
                constraints.append(MatchAttribute(reqs, c["matchAttribute"]))
            elif c.get("distinctAttribute") is not None:
                constraints.append(DistinctAttribute(reqs, c["distinctAttribute"]))
            else:
                raise AllocatorError(f"claim {name}, constraint #{i}: empty constraint (unsupported constraint type?)")
        search.constraints[ci] = constraints

    def _validate(self, search: Search, claim_name: str, request: RequestView, parent: RequestView | None, key: tuple[int, int, int], pools: list[Pool]) -> RequestData:
        """Go's validateDeviceRequest."""
        check_request(claim_name, request, self.features.admin_access)
        cls = self.classes(request.class_name)
        if cls is None:
            raise AllocatorError(
                f"claim {claim_name}, request {request.name}: could not retrieve device class {request.class_name}: "
                f'deviceclass.resource.k8s.io "{request.class_name}" not found'
            )
        data = RequestData(request, parent, cls)
        if request.mode == EXACT_COUNT:
            if request.count > MAX_INT:
                raise AllocatorError(f"claim {claim_name}, request {request.name}: exact count {request.count} is too large")
            data.num_devices = request.count
        elif request.mode == ALL:
            for pool in pools:
                if pool.is_incomplete:
                    raise AllocatorError(f"claim {claim_name}, request {request.name}: asks for all devices, but resource pool {pool} is currently being updated")
                if pool.is_invalid:
                    raise AllocatorError(f"claim {claim_name}, request {request.name}: asks for all devices, but resource pool {pool} is currently invalid")
                for slc in pool.slices:
                    for device in slc.devices:
                        if not search.is_selectable(key, data, slc, device):
                            continue
                        device_id = (slc.driver, slc.pool, device.name)
                        if self.features.consumable_capacity and not search._fits_capacity(request, device_id, device):
                            continue
                        data.all_devices.append((device_id, device, slc, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocatorError(f"claim {claim_name}, request {request.name}: unsupported count mode {request.mode}")
        return data
