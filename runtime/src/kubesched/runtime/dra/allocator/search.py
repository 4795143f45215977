"""The search of Go's incubating allocator (allocator_incubating.go v0.36.3): ``allocateOne``
(depth-first over claims, requests and device slots, trying devices in pool/slice/device order;
the first full solution wins), ``allocateDevice`` (in use, counters, taints, constraints,
capacity) and ``isSelectable`` (class and request CEL selectors, memoised per device and
request)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .capacity import consumed_capacity, fits_capacity
from .pools import Device, Pool, Slice, node_matches
from .requests import ALL, RequestData, RequestView
from .state import insert_capacity, remove_capacity
from .types import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocatorError,
    AllocatorTimeout,
    DeviceID,
    Quantity,
    device_id_str,
    kobj,
)

if TYPE_CHECKING:
    from .allocator import Allocator
    from .constraints import DistinctAttribute, MatchAttribute

__all__ = ["DeviceResult", "MaxSizeExceeded", "Search"]


class MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: backtrack further (not an error)."""



#: known taint effects that prevent allocation (others, including None, are ignored)
_BLOCKING_EFFECTS = frozenset(("NoSchedule", "NoExecute"))


class DeviceResult:
    """internalDeviceResult."""

    __slots__ = ("admin_access", "consumed", "device", "id", "parent", "request", "request_view", "share_id", "slice")

    def __init__(self, request: RequestView, parent: str, device_id: DeviceID, device: Device, slc: Slice) -> None:
        self.request_view = request
        self.request = request.name
        self.parent = parent
        self.id = device_id
        self.device = device
        self.slice = slc
        self.share_id: str | None = None
        self.consumed: dict[str, Quantity] | None = None
        self.admin_access = request.admin_access

    def request_name(self) -> str:
        return f"{self.parent}/{self.request}" if self.parent else self.request


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """resourceclaim.ToleratesTaint."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or ""
    if op in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def taint_prevents(device: Device, request: RequestView) -> bool:
    for taint in device.taints:
        if taint.get("effect") in _BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in request.tolerations):
            return True
    return False


class Search:
    """Go's per-call ``allocator``: the state of one ``Allocate``."""

    def __init__(self, owner: Allocator, node: Mapping[str, Any], claims: Sequence[Mapping[str, Any]], pools: list[Pool], deadline: float | None) -> None:
        self.owner = owner
        self.features = owner.features
        self.state = owner.allocated_state
        self.node = node
        self.claims = claims
        self.pools = pools
        self.deadline = deadline
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.constraints: list[list[MatchAttribute | DistinctAttribute]] = [[] for _ in claims]
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.request_data: dict[tuple[int, int, int], RequestData] = {}
        self.result: list[list[DeviceResult]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.invocations = 0
        #: the furthest (claim, request) the search reached, for why_not
        self.furthest = (0, 0)

    # --- selectors ------------------------------------------------------------------------

    def is_selectable(self, key: tuple[int, int, int], data: RequestData, slc: Slice, device: Device) -> bool:
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        device_id = (slc.driver, slc.pool, device.name)
        mkey = (device_id, *key)
        got = self.matches.get(mkey)
        if got is not None:
            return got
        ok = True
        if data.class_ is not None:
            ok = self._selectors_match(key[0], device, slc.driver, data.class_, (data.class_.get("spec") or {}).get("selectors") or ())
        if ok:
            ok = self._selectors_match(key[0], device, slc.driver, None, data.request.selectors)
        if ok and slc.per_device:
            ok = node_matches(self.node, device)
        self.matches[mkey] = ok
        return ok

    def _selectors_match(self, claim_index: int, device: Device, driver: str, cls: Mapping[str, Any] | None, selectors: Sequence[Mapping[str, Any]]) -> bool:
        cache = self.owner.cel_cache
        for i, selector in enumerate(selectors):
            compiled = cache.get_or_compile((selector.get("cel") or {}).get("expression", ""))
            where = f"class {(cls.get('metadata') or {}).get('name', '')}" if cls is not None else f"claim {kobj(self.claims[claim_index])}"
            if compiled.error is not None:
                raise AllocatorError(f"{where}: selector #{i}: {compiled.error}")
            try:
                matched = compiled.device_matches(driver, device.raw)
            except Exception as e:  # CelError (kubesched.runtime.dra.cel)
                raise AllocatorError(f"{where}: selector #{i}: {e}") from e
            if not matched:
                return False
        return True

    # --- in use, counters, capacity ---------------------------------------------------------

    def device_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.state.allocated_devices or bool(self.allocating.get(device_id))

    def _fits_capacity(self, request: RequestView, device_id: DeviceID, device: Device) -> bool:
        return fits_capacity(self.state.aggregated_capacity.get(device_id), request.capacities, device.capacity, self.allocating_capacity.get(device_id))

    def _available_counters(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        cache = self.owner.available_counters
        got = cache.get(pool.pool)
        if got is not None:
            return got
        avail = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        state = self.state
        for slices in (pool.slices, pool.slices_not_targeting):
            for slc in slices:
                for device in slc.devices:
                    if not device.consumes_counters or not state.is_device_allocated((slc.driver, slc.pool, device.name)):
                        continue
                    for set_name, counters in device.consumes_counters:
                        cs = avail.get(set_name)
                        if cs is None:
                            continue
                        for name, v in counters.items():
                            if name in cs:
                                cs[name] -= v
        cache[pool.pool] = avail
        return avail

    def _take_counters(self, device: Device, pool: Pool) -> bool:
        available = self._available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.pool, {})
        for set_name, counters in device.consumes_counters:
            cs = consumed.setdefault(set_name, {})
            for name, v in counters.items():
                cs[name] = cs.get(name, 0) + v
        for set_name, counters in available.items():
            used = consumed.get(set_name) or {}
            for name, v in counters.items():
                if v < used.get(name, 0):
                    self._release_counters(device, pool)
                    return False
        return True

    def _release_counters(self, device: Device, pool: Pool) -> None:
        consumed = self.consumed_counters[pool.pool]
        for set_name, counters in device.consumes_counters:
            cs = consumed[set_name]
            for name, v in counters.items():
                cs[name] -= v

    # --- the search ---------------------------------------------------------------------------

    def allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        """Go's allocateOne; raises MaxSizeExceeded for errAllocationResultMaxSizeExceeded."""
        self.invocations += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocatorTimeout("filter operation aborted: context deadline exceeded")
        if ci >= len(self.claims):
            return True
        requests = ((self.claims[ci].get("spec") or {}).get("devices") or {}).get("requests") or ()
        if ri >= len(requests):
            try:
                return self.allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except MaxSizeExceeded:
                return False
        if (ci, ri) > self.furthest:
            self.furthest = (ci, ri)
        data = self.request_data[(ci, ri, si)]

        if not in_sub and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    ok = self.allocate_one(ci, ri, sub, di, True, (0, 0, 0))
                except MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.request_data[(ci, ri, 0)].selected_sub_request = sub
                    return True
                sub += 1
            if all_exceeded:
                raise MaxSizeExceeded
            return False

        request = data.request
        do_all = request.mode == ALL
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self.allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.result[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise MaxSizeExceeded

        if do_all:
            device_id, device, slc, pool = data.all_devices[di]
            undo = self.allocate_device(ci, ri, si, data, device_id, device, slc, pool, True)
            if undo is None:
                return False
            try:
                done = self.allocate_one(ci, ri, si, di + 1, in_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        admin = request.admin_access
        key = (ci, ri, si)
        pools = self.pools
        for pi in range(start[0], len(pools)):
            pool = pools[pi]
            if pool.is_incomplete or pool.is_invalid:
                continue
            slices = pool.slices
            for sli in range(start[1] if pi == start[0] else 0, len(slices)):
                slc = slices[sli]
                devices = slc.devices
                first = start[2] if pi == start[0] and sli == start[1] else 0
                for dvi in range(first, len(devices)):
                    device = devices[dvi]
                    device_id = (pool.driver, pool.pool, device.name)
                    if admin:
                        if ci in self.allocating.get(device_id, ()):
                            continue
                    elif self.device_in_use(device_id):
                        continue
                    if not self.is_selectable(key, data, slc, device):
                        continue
                    if self.features.consumable_capacity and not self._fits_capacity(request, device_id, device):
                        continue
                    undo = self.allocate_device(ci, ri, si, data, device_id, device, slc, pool, False)
                    if undo is None:
                        continue
                    try:
                        done = self.allocate_one(ci, ri, si, di + 1, in_sub, (pi, sli, dvi + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def allocate_device(
        self, ci: int, ri: int, si: int, data: RequestData, device_id: DeviceID, device: Device, slc: Slice, pool: Pool, must: bool
    ) -> Callable[[], None] | None:
        """Go's allocateDevice: the undo function, or None when the device cannot be used."""
        features = self.features
        request = data.request
        multi = features.consumable_capacity and bool(device.allow_multi)
        if not multi and request.admin_access and ci in self.allocating.get(device_id, ()):
            return None
        if not request.admin_access and self.device_in_use(device_id):
            return None
        if not features.partitionable_devices and device.consumes_counters:
            return None
        skip_counters = multi and (device_id in self.state.aggregated_capacity or device_id in self.allocating_capacity)
        counters_taken = False
        if not skip_counters and device.consumes_counters:
            if not self._take_counters(device, pool):
                return None
            counters_taken = True
        if data.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = data.parent.name, request.name

        def release(added: list[MatchAttribute | DistinctAttribute]) -> None:
            for c in reversed(added):
                c.remove(base, sub, device, device_id)
            if counters_taken:
                self._release_counters(device, pool)

        if features.device_taints and taint_prevents(device, request):
            release([])
            return None
        added: list[MatchAttribute | DistinctAttribute] = []
        for c in self.constraints[ci]:
            if not c.add(base, sub, device, device_id):
                release(added)
                if must:
                    raise AllocatorError(
                        f"claim {kobj(self.claims[ci])}, request {request.name}: cannot add device {device_id_str(device_id)} because a claim constraint would not be satisfied"
                    )
                return None
            added.append(c)
        marked = False
        if not multi:
            self.allocating.setdefault(device_id, set()).add(ci)
            marked = True
        consumed: dict[str, Quantity] | None = None
        share_id: str | None = None
        entry_existed = False
        if features.consumable_capacity:
            if not self._fits_capacity(request, device_id, device):
                if marked:
                    self.allocating[device_id].discard(ci)
                release(added)
                return None
            if multi:
                consumed = consumed_capacity(request.capacities, device.capacity)
                share_id = str(uuid.uuid4())
                entry_existed = device_id in self.allocating_capacity
                insert_capacity(self.allocating_capacity, device_id, {name: q.value for name, q in consumed.items()})
        result = DeviceResult(request, data.parent.name if data.parent is not None else "", device_id, device, slc)
        result.share_id = share_id
        if consumed:
            result.consumed = consumed
        results = self.result[ci]
        n = len(results)
        results.append(result)

        def undo() -> None:
            del results[n:]
            if consumed is not None:
                remove_capacity(self.allocating_capacity, device_id, {name: q.value for name, q in consumed.items()})
                if entry_existed and device_id not in self.allocating_capacity:
                    self.allocating_capacity[device_id] = {}
            if marked:
                self.allocating[device_id].discard(ci)
            release(added)

        return undo
