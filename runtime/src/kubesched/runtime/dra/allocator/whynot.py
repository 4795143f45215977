"""kubesched's extra for ``explain``: one line naming the claim and request the allocator could
not satisfy on a node, and why (the furthest request the search reached)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .search import taint_prevents
from .types import AllocatorError, kobj

if TYPE_CHECKING:
    from .search import Search

__all__ = ["why_not"]


def _plural(n: int) -> str:
    return f"{n} device" if n == 1 else f"{n} devices"


def why_not(search: Search) -> str | None:
    if not search.claims:
        return None
    ci, ri = search.furthest
    claim = search.claims[ci]
    data = search.request_data.get((ci, ri, 0))
    if data is None:
        return None
    head = f"claim {kobj(claim)}, request {data.request_name() if data.parent is None else data.parent.name}"
    if any(p.is_incomplete for p in search.pools):
        head_extra = " (some resource pools are being updated)"
    else:
        head_extra = ""
    total = matching = in_use = tainted = 0
    state = search.state
    for pool in search.pools:
        if pool.is_incomplete or pool.is_invalid:
            continue
        for slc in pool.slices:
            for device in slc.devices:
                total += 1
                try:
                    if not search.is_selectable((ci, ri, 0), data, slc, device):
                        continue
                except AllocatorError:
                    continue
                matching += 1
                if (slc.driver, slc.pool, device.name) in state.allocated_devices and not data.request.admin_access:
                    in_use += 1
                elif search.features.device_taints and taint_prevents(device, data.request):
                    tainted += 1
    if matching == 0:
        return f"{head}: no device matches the selectors ({_plural(total)} on the node){head_extra}"
    want = data.num_devices
    text = f"{head}: needs {_plural(want)}, {matching} match, {in_use} of them already allocated"
    if tainted:
        text += f", {tainted} tainted"
    if matching - in_use - tainted >= want:
        text += "; constraints, shared counters or capacity rule out the rest"
    return text + head_extra
