"""Coscheduling's hooks called directly, with the kit's TestHandle (snapshot, object store, clock)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from cosched_support import FakeWaitingPod, member, node, pod_group, qpi, reasons, solo

from kubesched.sdk import ActionType, Code, CycleState, EventResource, Pod, QueueingHint, Status
from kubesched.testing import TestHandle, build_plugin, make_handle
from kubesched_coscheduling import Coscheduling, resource_gap


def plugin(
    *,
    nodes: Iterable[Mapping[str, Any]] = (),
    pods: Iterable[Mapping[str, Any]] = (),
    objects: Iterable[Mapping[str, Any]] = (),
    args: Mapping[str, Any] | None = None,
) -> tuple[Coscheduling, TestHandle]:
    handle = make_handle(nodes=list(nodes), pods=list(pods), objects=list(objects))
    return build_plugin(Coscheduling, args, handle), handle


def waited(out: Any) -> tuple[Status, float]:
    """Permit's ``(Status.wait(), timeout)``."""
    assert isinstance(out, tuple), out
    st, timeout = out
    assert isinstance(st, Status) and st.code is Code.WAIT
    return st, float(timeout)


def wait_for(handle: TestHandle, *pods: Mapping[str, Any]) -> list[FakeWaitingPod]:
    out = []
    for p in pods:
        wp = FakeWaitingPod(p)
        handle.waiting_pods[wp.pod.uid] = wp
        out.append(wp)
    return out


# PreFilter ---------------------------------------------------------------------------------------------


def test_pre_filter_ignores_pods_without_a_group() -> None:
    pl, h = plugin(nodes=[node("n1")])
    assert pl.pre_filter(Pod(solo("a")), h.snapshot().list()) is None


def test_pre_filter_rejects_a_pod_whose_pod_group_does_not_exist() -> None:
    p1 = member("p1", "missing")
    pl, h = plugin(nodes=[node("n1")], pods=[p1])
    st = pl.pre_filter(Pod(p1), h.snapshot().list())
    assert st is not None and st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert reasons(st) == ["PodGroup default/missing not found (pod default/p1 has label scheduling.x-k8s.io/pod-group=missing)"]


def test_pre_filter_looks_for_the_group_in_the_pods_namespace() -> None:
    p1 = member("p1", "pg", namespace="team-a")
    pl, h = plugin(nodes=[node("n1")], pods=[p1], objects=[pod_group("pg", 1, namespace="team-b")])
    st = pl.pre_filter(Pod(p1), h.snapshot().list())
    assert st is not None and "PodGroup team-a/pg not found" in st.message


def test_pre_filter_counts_the_members_that_exist() -> None:
    pods = [member("p1", "pg"), member("p2", "pg"), member("other", "pg", namespace="elsewhere")]
    done = member("old", "pg")
    done["status"]["phase"] = "Succeeded"  # finished members do not count
    pl, h = plugin(nodes=[node("n1")], pods=[*pods, done], objects=[pod_group("pg", 3)])
    st = pl.pre_filter(Pod(pods[0]), h.snapshot().list())
    assert st is not None and st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert reasons(st) == [
        "pre-filter pod p1 cannot find enough sibling pods, current pods number: 2, minMember of group: 3"
    ]
    h.objects.create(member("p3", "pg"))
    assert pl.pre_filter(Pod(pods[0]), h.snapshot().list()) is None


def test_pre_filter_reports_an_invalid_pod_group() -> None:
    p1 = member("p1", "pg")
    pl, h = plugin(nodes=[node("n1")], pods=[p1], objects=[pod_group("pg", "three")])  # type: ignore[arg-type]
    st = pl.pre_filter(Pod(p1), h.snapshot().list())
    assert st is not None and st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message == "PodGroup default/pg is invalid: spec.minMember: invalid value 'three': must be an integer"


def test_pre_filter_checks_min_resources_against_free_capacity_ignoring_the_groups_own_pods() -> None:
    busy = solo("busy", cpu="500m")
    busy["spec"]["nodeName"] = "n1"
    own = member("p0", "pg", node_name="n2")  # an already placed member frees its share
    p1 = member("p1", "pg")
    objects = [pod_group("pg", 2, minResources={"cpu": "2"})]
    pl, h = plugin(nodes=[node("n1"), node("n2")], pods=[busy, own, p1], objects=objects)
    st = pl.pre_filter(Pod(p1), h.snapshot().list())
    assert st is not None and st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message == "PodGroup default/pg does not fit in the cluster's free resources: resource gap: cpu=500m"

    enough = [pod_group("pg", 2, minResources={"cpu": "1500m", "memory": "1Gi"})]
    pl, h = plugin(nodes=[node("n1"), node("n2")], pods=[busy, own, p1], objects=enough)
    assert pl.pre_filter(Pod(p1), h.snapshot().list()) is None


def test_min_resources_count_pods_and_extended_resources() -> None:
    nodes = make_handle(nodes=[node("n1"), node("n2")]).snapshot().list()
    # pods = minMember is always part of the request; no node has GPUs
    assert resource_gap(nodes, {"pods": 3, "nvidia.com/gpu": 1}, "default/pg") == {"nvidia.com/gpu": 1}
    assert resource_gap(nodes, {"pods": 65}, "default/pg") == {"pods": 1}  # 2 nodes x 32 pods
    assert resource_gap(nodes, {"cpu": 2000, "pods": 2}, "default/pg") == {}
    assert resource_gap([], {"cpu": 1}, "default/pg") == {"cpu": 1}


def test_a_passed_min_resources_check_is_remembered_for_permit_waiting_time_seconds() -> None:
    p1 = member("p1", "pg")
    pl, h = plugin(nodes=[node("n1", cpu="2")], pods=[p1], objects=[pod_group("pg", 1, minResources={"cpu": "2"})], args={"permitWaitingTimeSeconds": 20})
    assert pl.pre_filter(Pod(p1), h.snapshot().list()) is None
    filler = solo("filler", cpu="2")
    filler["spec"]["nodeName"] = "n1"
    full = make_handle(nodes=[node("n1", cpu="2")], pods=[filler]).snapshot().list()
    assert pl.pre_filter(Pod(p1), full) is None  # not checked again yet
    h.clock.advance(21)
    st = pl.pre_filter(Pod(p1), full)
    assert st is not None and "resource gap: cpu=2" in st.message


# PostFilter and backoff ------------------------------------------------------------------------------


def test_post_filter_rejects_the_waiting_gang_and_backs_the_group_off() -> None:
    placed = [member("p1", "pg", node_name="n1"), member("p2", "pg", node_name="n2")]
    p3 = member("p3", "pg")
    other_group = member("q1", "other", node_name="n1")
    other_ns = member("p9", "pg", namespace="elsewhere", node_name="n2")
    pl, h = plugin(
        nodes=[node("n1"), node("n2")],
        pods=[*placed, p3, other_group, other_ns],
        objects=[pod_group("pg", 3)],
        args={"podGroupBackoffSeconds": 30},
    )
    w1, w2, wq, wo = wait_for(h, *placed, other_group, other_ns)
    st = pl.post_filter(Pod(p3))
    assert st.code is Code.UNSCHEDULABLE
    assert st.message == "PodGroup default/pg gets rejected due to Pod p3 is unschedulable even after PostFilter"
    for wp in (w1, w2):
        assert wp.rejected == [("Coscheduling", "optimistic rejection in PostFilter: pod default/p3 of PodGroup default/pg is unschedulable")]
    assert wq.rejected == [] and wo.rejected == []

    # the group is in backoff for 30 seconds
    pre = pl.pre_filter(Pod(p3), h.snapshot().list())
    assert pre is not None and pre.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pre.message == "podGroup default/pg failed recently"
    h.clock.advance(29)
    assert pl.pre_filter(Pod(p3), h.snapshot().list()) is not None
    h.clock.advance(2)
    assert pl.pre_filter(Pod(p3), h.snapshot().list()) is None


def test_post_filter_does_not_back_off_without_the_arg_or_without_enough_members() -> None:
    p1 = member("p1", "pg")
    pl, h = plugin(nodes=[node("n1")], pods=[p1], objects=[pod_group("pg", 1)])
    assert pl.post_filter(Pod(p1)).code is Code.UNSCHEDULABLE
    assert pl.pre_filter(Pod(p1), h.snapshot().list()) is None  # backoff 0: no backoff

    pl, h = plugin(nodes=[node("n1")], pods=[p1], objects=[pod_group("pg", 3)], args={"podGroupBackoffSeconds": 30})
    pl.post_filter(Pod(p1))  # 1 pod of 3: waiting for members, not a failed gang
    st = pl.pre_filter(Pod(p1), h.snapshot().list())
    assert st is not None and "cannot find enough sibling pods" in st.message


def test_post_filter_leaves_the_gang_alone_when_it_is_complete_or_almost_complete() -> None:
    # enough members placed already
    placed = [member(f"p{i}", "pg", node_name="n1") for i in range(1, 4)]
    p4 = member("p4", "pg")
    pl, h = plugin(nodes=[node("n1", cpu="8")], pods=[*placed, p4], objects=[pod_group("pg", 3)])
    (w,) = wait_for(h, placed[0])
    st = pl.post_filter(Pod(p4))
    assert st.code is Code.UNSCHEDULABLE and st.reasons == [] and w.rejected == []

    # 9 of 10 placed: the 10% gap is within podGroupRejectPercentage (default 10)
    placed = [member(f"p{i}", "pg", node_name="n1") for i in range(1, 10)]
    last = member("p10", "pg")
    pl, h = plugin(nodes=[node("n1", cpu="16")], pods=[*placed, last], objects=[pod_group("pg", 10)])
    waiting = wait_for(h, *placed)
    assert pl.post_filter(Pod(last)).reasons == []
    assert all(wp.rejected == [] for wp in waiting)
    # with podGroupRejectPercentage 0 any gap rejects the gang
    pl = build_plugin(Coscheduling, {"podGroupRejectPercentage": 0}, h)
    assert pl.post_filter(Pod(last)).reasons
    assert all(wp.rejected for wp in waiting)


def test_post_filter_says_nothing_for_pods_outside_groups() -> None:
    pl, _h = plugin(nodes=[node("n1")])
    st = pl.post_filter(Pod(solo("a")))
    assert st.code is Code.UNSCHEDULABLE and st.reasons == []


# Permit ------------------------------------------------------------------------------------------------


def test_permit_waits_for_the_gang_and_asks_for_the_siblings_to_be_activated() -> None:
    p1 = member("p1", "pg", node_name="n1")  # the pod of this cycle, assumed on n1
    p2, p3 = member("p2", "pg"), member("p3", "pg")
    placed_elsewhere = member("p4", "pg", node_name="n1", namespace="elsewhere")
    pl, _h = plugin(nodes=[node("n1", cpu="4")], pods=[p1, p2, p3, placed_elsewhere], objects=[pod_group("pg", 3, scheduleTimeoutSeconds=25)])
    state = CycleState()
    st, timeout = waited(pl.permit(state, Pod(p1)))
    assert st.message == "PodGroup default/pg: 1 of 3 members placed"
    assert timeout == 25.0
    assert sorted(p.name for p in state.pods_to_activate.values()) == ["p2", "p3"]
    assert set(state.pods_to_activate) == {"uid-default-p2", "uid-default-p3"}


def test_permit_only_the_first_waiting_member_activates_siblings() -> None:
    p1 = member("p1", "pg", node_name="n1")
    p2 = member("p2", "pg", node_name="n1")
    p3 = member("p3", "pg")
    pl, _h = plugin(nodes=[node("n1", cpu="4")], pods=[p1, p2, p3], objects=[pod_group("pg", 4)])
    state = CycleState()
    st, _timeout = waited(pl.permit(state, Pod(p2)))
    assert st.message == "PodGroup default/pg: 2 of 4 members placed"
    assert state.pods_to_activate == {}


@pytest.mark.parametrize(
    ("args", "spec", "expected"),
    [
        ({}, {}, 60.0),
        ({"permitWaitingTimeSeconds": 12}, {}, 12.0),
        ({"permitWaitingTimeSeconds": 12}, {"scheduleTimeoutSeconds": 3}, 3.0),
        ({"permitWaitingTimeSeconds": 0}, {}, 60.0),
        ({"permitWaitingTimeSeconds": 12}, {"scheduleTimeoutSeconds": 0}, 12.0),
    ],
)
def test_permit_wait_timeout(args: dict[str, Any], spec: dict[str, Any], expected: float) -> None:
    p1 = member("p1", "pg", node_name="n1")
    pl, _h = plugin(nodes=[node("n1")], pods=[p1], objects=[pod_group("pg", 2, **spec)], args=args)
    _st, timeout = waited(pl.permit(CycleState(), Pod(p1)))
    assert timeout == expected


def test_permit_allows_the_whole_gang_when_the_last_member_is_placed() -> None:
    p1, p2 = member("p1", "pg", node_name="n1"), member("p2", "pg", node_name="n1")
    p3 = member("p3", "pg", node_name="n1")
    stranger = member("x1", "other", node_name="n1")
    pl, h = plugin(nodes=[node("n1", cpu="4")], pods=[p1, p2, p3, stranger], objects=[pod_group("pg", 3), pod_group("other", 2)])
    w1, w2, wx = wait_for(h, p1, p2, stranger)
    state = CycleState()
    assert pl.permit(state, Pod(p3)) is None
    assert w1.allowed_by == ["Coscheduling"] and w2.allowed_by == ["Coscheduling"]
    assert wx.allowed_by == []
    assert state.pods_to_activate == {}


def test_permit_counts_bound_members() -> None:
    bound = [member("p1", "pg", node_name="n1"), member("p2", "pg", node_name="n1")]
    p3 = member("p3", "pg", node_name="n1")
    pl, _h = plugin(nodes=[node("n1", cpu="4")], pods=[*bound, p3], objects=[pod_group("pg", 3)])
    assert pl.permit(CycleState(), Pod(p3)) is None  # the two bound and this one make three


def test_permit_rejects_when_the_pod_group_is_gone_and_ignores_pods_outside_groups() -> None:
    p1 = member("p1", "gone", node_name="n1")
    pl, _h = plugin(nodes=[node("n1")], pods=[p1])
    st = pl.permit(CycleState(), Pod(p1))
    assert isinstance(st, Status) and st.code is Code.UNSCHEDULABLE and st.message == "PodGroup not found"
    assert pl.permit(CycleState(), Pod(solo("a"))) is None


# Reserve / Unreserve -----------------------------------------------------------------------------------


def test_unreserve_rejects_the_waiting_siblings() -> None:
    p1, p2, p3 = (member(p, "pg", node_name="n1") for p in ("p1", "p2", "p3"))
    stranger = member("x1", "other", node_name="n1")
    pl, h = plugin(nodes=[node("n1", cpu="4")], pods=[p1, p2, p3, stranger], objects=[pod_group("pg", 4)])
    assert pl.reserve() is None
    w2, w3, wx = wait_for(h, p2, p3, stranger)
    pl.unreserve(Pod(p1))
    message = "rejection in Unreserve: pod default/p1 of PodGroup default/pg was unreserved"
    assert w2.rejected == [("Coscheduling", message)]
    assert w3.rejected == [("Coscheduling", message)]
    assert wx.rejected == []
    pl.unreserve(Pod(solo("a")))  # no group: nothing to do


# QueueSort ---------------------------------------------------------------------------------------------


def _sorted(pl: Coscheduling, infos: list[Any]) -> list[str]:
    def cmp(a: Any, b: Any) -> int:
        if pl.queue_sort_less(a, b):
            return -1
        if pl.queue_sort_less(b, a):
            return 1
        return 0

    return [q.pod.name for q in sorted(infos, key=functools.cmp_to_key(cmp))]


def test_queue_sort_orders_by_priority_then_group_age_then_keys() -> None:
    groups = [
        pod_group("old", 2, created="2024-01-01T00:00:00Z"),
        pod_group("new", 2, created="2024-01-02T00:00:00Z"),
        pod_group("same-time", 2, created="2024-01-02T00:00:00Z"),
    ]
    pl, _h = plugin(objects=groups)
    day1 = 1704067200.0  # 2024-01-01T00:00:00Z
    hi = solo("urgent")
    hi["spec"]["priority"] = 10
    infos = [
        qpi(member("n2", "new"), day1 - 100),
        qpi(solo("early"), day1 - 50),  # queued before every group was created
        qpi(member("o2", "old"), day1 + 9000),
        qpi(member("s1", "same-time"), day1 + 10),
        qpi(solo("late"), day1 + 200000),
        qpi(member("n1", "new"), day1 + 500),
        qpi(hi, day1 + 999999),
        qpi(member("o1", "old"), day1 + 1),
        qpi(member("s2", "same-time"), day1 - 999),
    ]
    assert _sorted(pl, infos) == ["urgent", "early", "o1", "o2", "n1", "n2", "s1", "s2", "late"]


def test_queue_sort_uses_the_first_attempt_time_of_pods_outside_groups_or_with_a_missing_group() -> None:
    pl, _h = plugin()
    a = qpi(solo("a"), timestamp=50.0, initial=40.0)
    b = qpi(member("b", "missing"), timestamp=45.0)
    assert pl.queue_sort_less(a, b) and not pl.queue_sort_less(b, a)


def test_queue_sort_keeps_groups_without_creation_time_together() -> None:
    pl, _h = plugin(objects=[pod_group("g1", 2, created=None), pod_group("g2", 2, created=None)])
    infos = [qpi(member(n, g), t) for n, g, t in [("a", "g2", 1.0), ("b", "g1", 2.0), ("c", "g2", 3.0), ("d", "g1", 4.0)]]
    assert _sorted(pl, infos) == ["b", "d", "a", "c"]


# EnqueueExtensions -------------------------------------------------------------------------------------


def test_events_to_register_and_their_hints() -> None:
    pl, _h = plugin()
    events = {str(e.event.resource): e for e in pl.events_to_register()}
    assert set(events) == {"PodGroup", EventResource.POD.value, EventResource.UNSCHEDULABLE_POD.value, EventResource.NODE.value}
    # an unscheduled member's add, by name (kubesched delivers it to plugins that register it)
    assert events["UnschedulablePod"].event.action == ActionType.ADD
    waiting_member = Pod(member("p1", "pg"))
    assert events["UnschedulablePod"].hint(waiting_member, None, Pod(member("p3", "pg"))) is QueueingHint.QUEUE
    assert events["PodGroup"].event.action == ActionType.ADD | ActionType.UPDATE
    assert events["Pod"].event.action == ActionType.ADD
    # a node that is added, or gets allocatable (the kubelet's first status), labels or taints
    node_actions = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
    assert events["Node"].event.action == node_actions
    assert events["Node"].hint is not None and events["Node"].hint(Pod(member("p1", "pg")), None, None) is QueueingHint.QUEUE

    waiting = Pod(member("p1", "pg"))
    pg_hint = events["PodGroup"].hint
    assert pg_hint is not None
    assert pg_hint(waiting, None, pod_group("pg", 2)) is QueueingHint.QUEUE
    assert pg_hint(waiting, pod_group("pg", 2), pod_group("pg", 3)) is QueueingHint.QUEUE
    assert pg_hint(waiting, None, pod_group("other", 2)) is QueueingHint.SKIP
    assert pg_hint(waiting, None, pod_group("pg", 2, namespace="elsewhere")) is QueueingHint.SKIP

    pod_hint = events["Pod"].hint
    assert pod_hint is not None
    assert pod_hint(waiting, None, Pod(member("p2", "pg"))) is QueueingHint.QUEUE
    assert pod_hint(waiting, None, Pod(member("q", "other"))) is QueueingHint.SKIP
    assert pod_hint(waiting, None, Pod(solo("x"))) is QueueingHint.SKIP
    assert pod_hint(waiting, None, Pod(member("p2", "pg", namespace="elsewhere"))) is QueueingHint.SKIP
