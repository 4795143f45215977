"""Go's TestAllocator (dynamic-resource-allocation v0.36.3) run against kubesched's allocator:
the cases are in :mod:`go_allocator_cases`; this module runs them as Go's ``RunTestAllocator``
does (error by substring, results compared with ConsistOf of Go's matchers and shareIDs
replaced (:func:`dra_builders.consist_of`), inputs and the allocated state not modified, and the
number of allocateOne invocations where the case states it)."""

from __future__ import annotations

from copy import deepcopy
from fractions import Fraction
from typing import Any

import pytest
from dra_builders import Features, consist_of, node, node1, region1
from go_allocator_cases import CASES

from kubesched.runtime.dra.allocator import AllocatedState, Allocator, AllocatorError
from kubesched.runtime.dra.cel import Cache
from kubesched.sdk.quantity import parse_quantity


def run_case(tc: dict[str, Any]) -> None:
    classes = {c["metadata"]["name"]: c for c in tc.get("classes") or []}
    claims = tc.get("claimsToAllocate") or []
    slices = tc.get("slices") or []
    inputs = deepcopy((claims, slices, list(classes.values())))
    state = AllocatedState(
        set(tc.get("allocatedDevices") or ()),
        set(tc.get("allocatedSharedDeviceIDs") or ()),
        {d: {k: Fraction(parse_quantity(v)) for k, v in caps.items()} for d, caps in (tc.get("allocatedCapacityDevices") or {}).items()},
    )
    state_before = deepcopy((state.allocated_devices, state.allocated_shared_device_ids, state.aggregated_capacity))
    allocated_before = deepcopy(tc.get("allocatedDevices"))
    allocator = Allocator(tc.get("features") or Features(), state, classes.get, slices, Cache(1))
    want_error = tc.get("expectError")
    if want_error is not None:
        with pytest.raises(AllocatorError) as info:
            allocator.allocate(tc.get("node") or node(node1, region1), claims)
        assert want_error in str(info.value)
        results = None
    else:
        results = allocator.allocate(tc.get("node") or node(node1, region1), claims)
    assert consist_of(list(results or []), list(tc.get("expectResults") or [])), results
    assert deepcopy((claims, slices, list(classes.values()))) == inputs
    assert tc.get("allocatedDevices") == allocated_before
    assert (state.allocated_devices, state.allocated_shared_device_ids, state.aggregated_capacity) == state_before
    invocations = tc.get("expectNumAllocateOneInvocations")
    if invocations:
        invocations = (tc.get("expectNumAllocateOneInvocationsByChannel") or {}).get("incubating", invocations)
        assert allocator.num_allocate_one_invocations == invocations


@pytest.mark.parametrize("name", list(CASES), ids=[f"GoTestAllocator/{n}" for n in CASES])
def test_go_allocator(name: str) -> None:
    run_case(CASES[name])


def test_consist_of_compares_as_go_does() -> None:
    """The comparison itself: order and quantity text count where Go's DeepEqual sees them."""
    from dra_builders import (
        allocationResult,
        allocationResultWithConfigs,
        deviceAllocationResult,
        deviceConfiguration,
        deviceRequestAllocationResult,
        driverA,
        fixedShareID,
        localNodeSelector,
        pool1,
    )

    a = deviceAllocationResult("r0", driverA, pool1, "device-0", False)
    b = deviceAllocationResult("r1", driverA, pool1, "device-1", False)
    config = [{"source": "FromClass", "requests": ["r0"], **deviceConfiguration(driverA, "x")}]
    got = {"devices": {"results": [a, b], "config": config}, "nodeSelector": localNodeSelector(node1)}
    assert consist_of([got], [allocationResultWithConfigs(localNodeSelector(node1), [a, b], config)])
    assert not consist_of([got], [allocationResultWithConfigs(localNodeSelector(node1), [b, a], config)])
    plain = {"devices": {"results": [a, b]}, "nodeSelector": localNodeSelector(node1)}
    assert consist_of([plain], [allocationResult(localNodeSelector(node1), b, a)])
    assert not consist_of([got], [allocationResult(localNodeSelector(node1), a, b)])  # config must be nil
    shared = deviceRequestAllocationResult("r0", driverA, pool1, "device-0")
    q = {"devices": {"results": [{**shared, "shareID": "some-uuid", "consumedCapacity": {"c": "1Ki"}}]}}
    assert consist_of([q], [allocationResult(None, shared.withConsumedCapacity(fixedShareID, {"c": "1Ki"}))])
    assert not consist_of([q], [allocationResult(None, shared.withConsumedCapacity(fixedShareID, {"c": "1024"}))])
