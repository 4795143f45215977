"""kube-scheduler v1.36.3 dynamicresources_test.go TestIsSchedulableAfterClaimChange,
TestIsSchedulableAfterPodChange, Test_computesScore, TestNormalizeScore, TestGatherAllocatedState
and TestAllocatorSelection, and dra_manager_test.go's TestSignalClaimPendingAllocation,
TestGetPendingAllocation and TestMaybeRemoveClaimPendingAllocation, transcribed. The hints and
the manager run on the object store as ``handle.objects``."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the case objects beside this file

from dra_plugin_cases import (
    ALLOCATED_CLAIM,
    ALLOCATED_CLAIM2,
    ALLOCATION_RESULT,
    ALLOCATION_RESULT2,
    DRIVER,
    NODE_NAME,
    OTHER_ALLOCATED_CLAIM,
    PENDING_CLAIM,
    PENDING_CLAIM2,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    POD_WITH_TWO_CLAIM_TEMPLATES,
    allocated,
    dc,
    name_selector,
    sub_request,
)

from kubesched.runtime.plugins.dynamicresources import DynamicResources, compute_score
from kubesched.runtime.plugins.dynamicresources.claims import NodeAllocation
from kubesched.runtime.plugins.dynamicresources.features import (
    DEFAULT_FEATURES,
    SchedulerFeatures,
    allocator_features,
    allocator_implementation,
)
from kubesched.runtime.plugins.dynamicresources.manager import DraManager, InFlightAllocation
from kubesched.sdk import NodeScore, Pod, QueueingHint
from kubesched.testing import make_handle

Q, S = QueueingHint.QUEUE, QueueingHint.SKIP


def _plugin(*claims: dict[str, Any]) -> DynamicResources:
    handle = make_handle()
    for c in claims:
        handle.objects.create(dc(c))
    return DynamicResources(None, handle)


def _stored(pl: DynamicResources, c: dict[str, Any]) -> dict[str, Any]:
    return pl.handle.objects.get("resource.k8s.io/v1", "ResourceClaim", c["metadata"]["name"], "default")


def _with(c: dict[str, Any], **status: Any) -> dict[str, Any]:
    c = dc(c)
    c.setdefault("status", {}).update(status)
    return c


# --- TestIsSchedulableAfterClaimChange ---------------------------------------------------------


def _wrong_owner(c: dict[str, Any]) -> dict[str, Any]:
    c = dc(c)
    c["metadata"]["ownerReferences"][0]["uid"] += "123"
    return c


def _renamed(c: dict[str, Any]) -> dict[str, Any]:
    c = dc(c)
    c["metadata"]["name"] += "-foo"
    return c


def _finalizer(c: dict[str, Any]) -> dict[str, Any]:
    c = dc(c)
    c["metadata"].setdefault("finalizers", []).append("foo")
    return c


CLAIM_CHANGE = {
    "skip-deletes": (POD_WITH_CLAIM_TEMPLATE, [], ALLOCATED_CLAIM, None, S),
    "skip-wrong-claim": (POD_WITH_CLAIM_TEMPLATE, [], None, _wrong_owner(ALLOCATED_CLAIM), S),
    "skip-unrelated-claim": (POD_WITH_CLAIM_TEMPLATE, [ALLOCATED_CLAIM], None, _renamed(ALLOCATED_CLAIM), S),
    "queue-on-add": (POD_WITH_CLAIM_NAME, [], None, PENDING_CLAIM, Q),
    "skip-adding-finalizer": (POD_WITH_CLAIM_NAME, [PENDING_CLAIM], PENDING_CLAIM, _finalizer(PENDING_CLAIM), S),
    "queue-on-status-change": (POD_WITH_CLAIM_NAME, [PENDING_CLAIM], PENDING_CLAIM, _with(PENDING_CLAIM, allocation={}), Q),
    "claim-deallocate": (POD_WITH_CLAIM_NAME, [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], OTHER_ALLOCATED_CLAIM,
                         allocated(OTHER_ALLOCATED_CLAIM, None), Q),
}


@pytest.mark.parametrize("case", list(CLAIM_CHANGE), ids=[f"GoTestIsSchedulableAfterClaimChange/{n}" for n in CLAIM_CHANGE])
def test_is_schedulable_after_claim_change(case: str) -> None:
    pod, claims, old, new, want = CLAIM_CHANGE[case]
    pl = _plugin(*claims)
    if new is not None:
        # add or update through the store, as Go does through the client and the informer
        if old is None:
            pl.handle.objects.create(dc(new))
        else:
            pl.handle.objects.update(dc(new))
        new = _stored(pl, new)
    assert pl.is_schedulable_after_claim_change(Pod(pod), old, new) is want


@pytest.mark.parametrize(
    "old, new",
    [pytest.param(None, "not-a-claim", id="GoTestIsSchedulableAfterClaimChange/backoff-wrong-new-object"),
     pytest.param("not-a-claim", PENDING_CLAIM, id="GoTestIsSchedulableAfterClaimChange/backoff-wrong-old-object")],
)
def test_is_schedulable_after_claim_change_wrong_object(old: Any, new: Any) -> None:
    """Go returns an error (the pod is queued); a kubesched hint that raises queues it."""
    pl = _plugin(PENDING_CLAIM)
    with pytest.raises(TypeError, match=r"^unexpected object in isSchedulableAfterClaimChange: str$"):
        pl.is_schedulable_after_claim_change(Pod(POD_WITH_CLAIM_NAME), old, new)


# --- TestIsSchedulableAfterPodChange -------------------------------------------------------------


def _other_pod() -> dict[str, Any]:
    p = dc(POD_WITH_CLAIM_TEMPLATE)
    p["metadata"]["name"] += "2"
    p["metadata"]["uid"] += "2"
    return p


def _incomplete() -> dict[str, Any]:
    p = dc(POD_WITH_TWO_CLAIM_TEMPLATES)
    p["status"] = {"resourceClaimStatuses": [{"name": p["spec"]["resourceClaims"][0]["name"], "resourceClaimName": "my-pod-my-resource"}]}
    return p


POD_CHANGE = {
    "complete": ([PENDING_CLAIM], POD_WITH_CLAIM_TEMPLATE, POD_WITH_CLAIM_TEMPLATE_IN_STATUS, Q),
    "wrong-pod": ([PENDING_CLAIM], _other_pod(), POD_WITH_CLAIM_TEMPLATE_IN_STATUS, S),
    "missing-claim": ([], POD_WITH_CLAIM_TEMPLATE, POD_WITH_CLAIM_TEMPLATE_IN_STATUS, S),
    "incomplete": ([PENDING_CLAIM], POD_WITH_TWO_CLAIM_TEMPLATES, _incomplete(), S),
}


@pytest.mark.parametrize("case", list(POD_CHANGE), ids=[f"GoTestIsSchedulableAfterPodChange/{n}" for n in POD_CHANGE])
def test_is_schedulable_after_pod_change(case: str) -> None:
    claims, pod, new, want = POD_CHANGE[case]
    pl = _plugin(*claims)
    assert pl.is_schedulable_after_pod_change(Pod(pod), None, Pod(new)) is want


def test_is_schedulable_after_pod_change_wrong_object() -> None:
    """GoTestIsSchedulableAfterPodChange/backoff-wrong-new-object."""
    with pytest.raises(TypeError, match=r"^unexpected object in isSchedulableAfterClaimChange: str$"):
        _plugin().is_schedulable_after_pod_change(Pod(POD_WITH_CLAIM_TEMPLATE), None, "not-a-claim")


# --- Test_computesScore ----------------------------------------------------------------------------


def _pclaim(*requests: tuple[str, int]) -> dict[str, Any]:
    return {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
        {"name": name, "firstAvailable": [sub_request(f"subreq-{i}", 1) for i in range(1, n + 1)]} for name, n in requests]}}}


def _results(*requests: str) -> dict[str, Any]:
    return {"devices": {"results": [{"request": r} for r in requests]}}


COMPUTE_SCORE = {
    "more-claims-than-allocations": ([_pclaim(("req-1", 1)), _pclaim(("req-2", 1))], [], None),
    "mix-of-allocated-and-unallocated-claims": ([ALLOCATED_CLAIM, PENDING_CLAIM2], [ALLOCATION_RESULT2], 0),
    "single-request-only-subrequest-allocated": ([_pclaim(("req-1", 1))], [_results("req-1/subreq-1")], 8),
    "single-request-last-subrequest-allocated": ([_pclaim(("req-1", 8))], [_results("req-1/subreq-8")], 1),
    "multiple-requests-with-middle-subrequests-allocated": (
        [_pclaim(("req-1", 4), ("req-2", 5))], [_results("req-1/subreq-4", "req-2/subreq-5")], 9),
    "multiple-requests-with-top-subrequests-allocated": (
        [_pclaim(("req-1", 8), ("req-2", 1))], [_results("req-1/subreq-8", "req-2/subreq-1")], 9),
    "multiple-claims-with-last-subrequests-allocated": (
        [_pclaim(("req-1", 8)), _pclaim(("req-2", 8))], [_results("req-1/subreq-8"), _results("req-2/subreq-8")], 2),
    "multiple-claims-with-top-subrequests-allocated": (
        [_pclaim(("req-1", 1)), _pclaim(("req-2", 1))], [_results("req-1/subreq-1"), _results("req-2/subreq-1")], 16),
}


@pytest.mark.parametrize("case", list(COMPUTE_SCORE), ids=[f"GoTest_computesScore/{n}" for n in COMPUTE_SCORE])
def test_compute_score(case: str) -> None:
    claims, results, want = COMPUTE_SCORE[case]
    if want is None:
        with pytest.raises(ValueError, match=r"^number of allocations 0 is smaller than number of claims needing allocation$"):
            compute_score(claims, NodeAllocation(results))
        return
    assert compute_score(claims, NodeAllocation(results)) == want


# --- TestNormalizeScore ----------------------------------------------------------------------------

MAX32 = 2**31 - 1
NORMALIZE = {
    "empty": ([], []),
    "single-score": ([42], [100]),
    "all-same": ([8, 8], [100, 100]),
    "all-same-very-large": ([MAX32, MAX32], [100, 100]),
    "max-and-min-values": ([MAX32, 0], [100, 0]),
    "mid-value": ([99, 98, 97], [100, 98, 97]),
    "large-spread-lost-precision": ([MAX32, MAX32 - 1, 1, 0], [100, 99, 0, 0]),
}


@pytest.mark.parametrize("case", list(NORMALIZE), ids=[f"GoTestNormalizeScore/{n}" for n in NORMALIZE])
def test_normalize_score(case: str) -> None:
    """DefaultNormalizeScore(100) for a pod with claims; the column form agrees."""
    import numpy as np

    from kubesched.sdk import CycleState

    raw, want = NORMALIZE[case]
    pl = _plugin()
    state = CycleState()
    pl.pre_filter(state, Pod(POD_WITH_CLAIM_NAME))  # a pod with claims (its claim is missing)
    scores = [NodeScore(f"node-{i + 1}", s) for i, s in enumerate(raw)]
    assert pl.normalize_score(state, scores) is None
    assert [s.score for s in scores] == want
    got = pl.normalize_score_columns(state, np.array(raw, np.int64))
    assert list(got) == want


# --- TestGatherAllocatedState ----------------------------------------------------------------------

SHARED = "shared-instance"


def _shared(share: str, capacity: str | None) -> dict[str, Any]:
    r: dict[str, Any] = {"driver": DRIVER, "pool": NODE_NAME, "device": SHARED, "request": "req-1", "shareID": share}
    if capacity is not None:
        r["consumedCapacity"] = {"my-cap": capacity}
    return allocated(PENDING_CLAIM, {"devices": {"results": [r]}, "nodeSelector": name_selector(NODE_NAME)})


WITH_SHARED = _shared("share-123", None)
WITH_CAPACITY = _shared("share-123", "1")
WITH_CAPACITY2 = _shared("share-456", "1")


def _named(c: dict[str, Any], name: str) -> dict[str, Any]:
    c = dc(c)
    c["metadata"]["name"] = name
    return c


GATHER = {
    "no-claims": (True, [], [], 0, 0, None),
    "single-allocated-claim": (True, [ALLOCATED_CLAIM], [], 1, 0, None),
    "single-allocated-claim-with-shared-device": (True, [WITH_SHARED], [], 0, 1, None),
    "single-allocated-claim-with-capacity": (True, [WITH_CAPACITY], [], 0, 1, "1"),
    "disabled-single-allocated-claim-with-capacity": (False, [WITH_CAPACITY], [], 1, 0, None),
    "mixed-allocated-claim": (True, [ALLOCATED_CLAIM, _named(WITH_CAPACITY, "c2")], [], 1, 1, "1"),
    "add-inflight-allocated-claim-with-capacity": (True, [ALLOCATED_CLAIM, _named(WITH_CAPACITY, "c2")], [WITH_CAPACITY2], 1, 2, "2"),
    "disabled-inflight-allocated-claim-with-capacity": (False, [ALLOCATED_CLAIM, _named(WITH_CAPACITY, "c2")], [WITH_CAPACITY2], 2, 0, None),
}


@pytest.mark.parametrize("case", list(GATHER), ids=[f"GoTestGatherAllocatedState/{n}" for n in GATHER])
def test_gather_allocated_state(case: str) -> None:
    consumable, claims, in_flight, n_ids, n_shared, capacity = GATHER[case]
    pl = _plugin(*claims)
    for c in in_flight:
        pl.manager.signal_claim_pending_allocation("claim-2-uid", c)
    state = pl.manager.gather_allocated_state(consumable)
    assert len(state.allocated_devices) == n_ids
    assert len(state.allocated_shared_device_ids) == n_shared
    if capacity is None:
        assert state.aggregated_capacity == {}
    else:
        assert state.aggregated_capacity[(DRIVER, NODE_NAME, SHARED)]["my-cap"] == Fraction(capacity)


# --- TestAllocatorSelection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "features, want",
    [pytest.param(SchedulerFeatures.ga_only(), "stable", id="GoTestAllocatorSelection/only-GA"),
     pytest.param(DEFAULT_FEATURES, "incubating", id="GoTestAllocatorSelection/default"),
     pytest.param(SchedulerFeatures(), "incubating", id="GoTestAllocatorSelection/alpha")],
)
def test_allocator_selection(features: SchedulerFeatures, want: str) -> None:
    """With 1.36's gates kube-scheduler uses the incubating allocator, which kubesched ports
    (alpha gates add nothing the allocator reads: ListTypeAttributes is not an allocator
    feature of AllocatorFeatures)."""
    assert allocator_implementation(allocator_features(features)) == want


# --- dra_manager_test.go ---------------------------------------------------------------------------

UID1, UID2 = "claim-uid-1", "claim-uid-2"


def _manager(in_flight: dict[str, tuple[Any, int]]) -> DraManager:
    m = DraManager(make_handle().objects)
    for uid, (claim, sharers) in in_flight.items():
        m.in_flight[uid] = InFlightAllocation(claim, sharers)
    return m


def _view(m: DraManager) -> dict[str, tuple[Any, int]]:
    return {uid: (f.claim, f.sharers) for uid, f in m.in_flight.items()}


@pytest.mark.parametrize(
    "before, want",
    [pytest.param({}, {UID1: (ALLOCATED_CLAIM, 1)}, id="GoTestSignalClaimPendingAllocation/empty"),
     pytest.param({UID1: (ALLOCATED_CLAIM, 1), UID2: (ALLOCATED_CLAIM2, 10)}, {UID1: (ALLOCATED_CLAIM, 2), UID2: (ALLOCATED_CLAIM2, 10)},
                  id="GoTestSignalClaimPendingAllocation/already-exists")],
)
def test_signal_claim_pending_allocation(before: dict[str, Any], want: dict[str, Any]) -> None:
    m = _manager(before)
    m.signal_claim_pending_allocation(UID1, ALLOCATED_CLAIM)
    assert _view(m) == want


@pytest.mark.parametrize(
    "before, want",
    [pytest.param({}, None, id="GoTestGetPendingAllocation/empty"),
     pytest.param({UID1: (None, 0)}, None, id="GoTestGetPendingAllocation/nil-claim"),
     pytest.param({UID1: (ALLOCATED_CLAIM, 1), UID2: (ALLOCATED_CLAIM2, 10)}, ALLOCATION_RESULT, id="GoTestGetPendingAllocation/claim")],
)
def test_get_pending_allocation(before: dict[str, Any], want: Any) -> None:
    m = _manager(before)
    snapshot = _view(m)
    assert m.get_pending_allocation(UID1) == want
    assert _view(m) == snapshot  # strictly read-only


@pytest.mark.parametrize(
    "before, force, want, after",
    [pytest.param({}, True, False, {}, id="GoTestMaybeRemoveClaimPendingAllocation/empty"),
     pytest.param({UID1: (ALLOCATED_CLAIM, 1), UID2: (ALLOCATED_CLAIM2, 10)}, False, True, {UID2: (ALLOCATED_CLAIM2, 10)},
                  id="GoTestMaybeRemoveClaimPendingAllocation/delete-last-sharer"),
     pytest.param({UID1: (ALLOCATED_CLAIM, 1), UID2: (ALLOCATED_CLAIM2, 10)}, True, True, {UID2: (ALLOCATED_CLAIM2, 10)},
                  id="GoTestMaybeRemoveClaimPendingAllocation/force-delete-last-sharer"),
     pytest.param({UID1: (ALLOCATED_CLAIM, 2), UID2: (ALLOCATED_CLAIM2, 10)}, False, False,
                  {UID1: (ALLOCATED_CLAIM, 1), UID2: (ALLOCATED_CLAIM2, 10)},
                  id="GoTestMaybeRemoveClaimPendingAllocation/decrement-remaining-sharers"),
     pytest.param({UID1: (ALLOCATED_CLAIM, 2), UID2: (ALLOCATED_CLAIM2, 10)}, True, True, {UID2: (ALLOCATED_CLAIM2, 10)},
                  id="GoTestMaybeRemoveClaimPendingAllocation/force-delete-remaining-sharers")],
)
def test_maybe_remove_claim_pending_allocation(before: dict[str, Any], force: bool, want: bool, after: dict[str, Any]) -> None:
    m = _manager(before)
    assert m.maybe_remove_claim_pending_allocation(UID1, force) is want
    assert _view(m) == after


def test_one_manager_per_object_client() -> None:
    """Every profile's plugin on the same object client shares one manager (Go's
    SharedDRAManager); another client gets its own."""
    handle = make_handle()
    a, b = DynamicResources(None, handle), DynamicResources(None, handle)
    assert a.manager is b.manager
    assert DynamicResources(None, make_handle()).manager is not a.manager



