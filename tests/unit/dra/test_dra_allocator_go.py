"""Go's TestAllocator (dynamic-resource-allocation v0.36.3) run against kubesched's allocator:
the cases are in :mod:`go_allocator_cases`; this module runs them as Go's ``RunTestAllocator``
does (error by substring, results compared with ConsistOf and shareIDs replaced, inputs not
modified, and the number of allocateOne invocations where the case states it)."""

from __future__ import annotations

from copy import deepcopy
from fractions import Fraction
from typing import Any

import pytest
from dra_builders import Features, node, node1, normalize, region1
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
    allocator = Allocator(tc.get("features") or Features(), state, classes.get, slices, Cache(1))
    want_error = tc.get("expectError")
    if want_error is not None:
        with pytest.raises(AllocatorError) as info:
            allocator.allocate(tc.get("node") or node(node1, region1), claims)
        assert want_error in str(info.value)
        results = None
    else:
        results = allocator.allocate(tc.get("node") or node(node1, region1), claims)
    assert sorted(normalize(r) for r in results or []) == sorted(normalize(r) for r in tc.get("expectResults") or [])
    assert deepcopy((claims, slices, list(classes.values()))) == inputs
    invocations = tc.get("expectNumAllocateOneInvocations")
    if invocations:
        invocations = (tc.get("expectNumAllocateOneInvocationsByChannel") or {}).get("incubating", invocations)
        assert allocator.num_allocate_one_invocations == invocations


@pytest.mark.parametrize("name", list(CASES), ids=[f"GoTestAllocator/{n}" for n in CASES])
def test_go_allocator(name: str) -> None:
    run_case(CASES[name])
