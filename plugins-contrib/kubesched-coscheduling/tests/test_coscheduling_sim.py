"""Coscheduling through real framework cycles on the simulated cluster: kube-scheduler's default
profile with Coscheduling added as the README configures it."""

from __future__ import annotations

import pytest
from cosched_support import (
    PROFILE,
    T0,
    advance,
    bound,
    first_attempt_order,
    member,
    node,
    pod_group,
    rerun,
    run,
    solo,
)

from kubesched.testing import RunResult

GANG = ("p1", "p2", "p3")


def permit_results(result: RunResult, pod: str | None = None) -> list[str]:
    return [r[4] for r in result.call_results(pod) if r[0] == "Permit" and r[1] == "Coscheduling"]


def gang_binds(result: RunResult, pods: tuple[str, ...]) -> list[str]:
    keys = {f"default/{p}" for p in pods}
    return [k for k, _node in result.cluster.binds if k in keys]


def assert_no_partial_gang(result: RunResult, pods: tuple[str, ...], min_member: int) -> None:
    n = len(gang_binds(result, pods))
    assert n == 0 or n >= min_member, f"partial gang bound: {gang_binds(result, pods)}"


# a gang that does not fit --------------------------------------------------------------------------


def test_gang_with_room_for_two_of_three_is_not_bound_then_binds_when_a_node_is_added() -> None:
    result = run(
        nodes=[node("n1"), node("n2")],
        pods=[member(p, "pg") for p in GANG],
        objects=[pod_group("pg", 3, scheduleTimeoutSeconds=10)],
        args={"podGroupBackoffSeconds": 30},
    )
    # two members were placed and held at Permit, the third did not fit ...
    waits = [r for p in GANG for r in permit_results(result, p) if r.startswith("Wait")]
    assert len(waits) == 2
    # ... so the two were rejected and unreserved: nothing is bound
    assert result.cluster.binds == []
    assert bound(result, *GANG) == {"p1": None, "p2": None, "p3": None}
    assert {result.status(p) for p in GANG} == {"Unschedulable"}
    messages = [result.message(p) for p in GANG]
    assert sum("optimistic rejection in PostFilter" in m for m in messages) == 2
    assert any("PodGroup default/pg gets rejected due to Pod" in m for m in messages)
    # the member that failed was tried again while the group was backed off
    assert any("podGroup default/pg failed recently" in m for m in messages)
    assert ("Unreserve", "Coscheduling") in {(c[0], c[1]) for c in result.calls()}

    # after the backoff, a third node makes room: the whole gang is bound together
    advance(result, 31)
    result.cluster.store.create(node("n3"))
    result = rerun(result)
    placements = bound(result, *GANG)
    assert all(placements.values())
    assert sorted(placements.values()) == ["n1", "n2", "n3"]  # type: ignore[type-var]
    assert {result.status(p) for p in GANG} == {"Scheduled"}
    assert len(gang_binds(result, GANG)) == 3


@pytest.mark.parametrize("status_later", [False, True], ids=["node with status", "status after the node"])
def test_a_node_added_during_the_group_backoff_ends_it(status_later: bool) -> None:
    """With the v1.36 queue the members a node event requeues are tried at once (popped from the
    backoffQ): the event ends the group's backoff, so they are not rejected as "failed recently"
    and left waiting. A new node usually gets its allocatable from the kubelet after it is
    created: the status update requeues the gang as the add does."""
    result = run(
        nodes=[node("n1"), node("n2")],
        pods=[member(p, "pg") for p in GANG],
        objects=[pod_group("pg", 3, scheduleTimeoutSeconds=10)],
        args={"podGroupBackoffSeconds": 300},
    )
    assert result.cluster.binds == []
    n3 = node("n3")
    if status_later:
        result.cluster.store.create({k: v for k, v in n3.items() if k != "status"})
        result = rerun(result)
        assert result.cluster.binds == []  # no allocatable yet: nothing fits there
        result.cluster.store.patch("v1", "Node", "n3", {"status": n3["status"]})
    else:
        result.cluster.store.create(n3)
    result = rerun(result)  # no time passes: well inside the 300 s backoff
    assert sorted(bound(result, *GANG).values()) == ["n1", "n2", "n3"]  # type: ignore[type-var]


def test_gang_whose_min_resources_do_not_fit_is_never_reserved() -> None:
    result = run(
        nodes=[node("n1"), node("n2")],
        pods=[member(p, "pg") for p in GANG],
        objects=[pod_group("pg", 3, minResources={"cpu": "3"})],
    )
    assert result.cluster.binds == []
    assert permit_results(result) == []  # no member was ever placed
    assert "resource gap: cpu=1" in result.message("p3")
    assert "PodGroup default/pg does not fit in the cluster's free resources" in result.message("p3")
    assert {result.status(p) for p in GANG} == {"Unschedulable"}

    result.cluster.store.create(node("n3"))
    result = rerun(result)
    assert sorted(bound(result, *GANG).values()) == ["n1", "n2", "n3"]  # type: ignore[type-var]


def test_waiting_members_time_out_together_and_the_gang_binds_when_the_last_member_comes() -> None:
    # all members exist from the start (creationTimestamp), but p3 is held by a scheduling gate
    pods = [member("p1", "pg", created=T0), member("p2", "pg", created=T0), member("p3", "pg", created=T0, gates=["wait"])]
    result = run(
        nodes=[node("n1", cpu="4")],
        pods=pods,
        objects=[pod_group("pg", 3, scheduleTimeoutSeconds=5)],
    )
    assert result.cluster.binds == []
    assert [r.split(":")[0] for r in permit_results(result)] == ["Wait", "Wait"]
    # both waited since the same instant, so both time out (a member rejected first would take
    # the other with it: "rejection in Unreserve", see the hook tests)
    timeout = "rejected due to timeout after waiting 5s at plugin Coscheduling"
    for p in ("p1", "p2"):
        assert result.status(p) == "Unschedulable"
        assert timeout in result.message(p) or "rejection in Unreserve" in result.message(p)
    assert any(timeout in result.message(p) for p in ("p1", "p2"))

    # the gate is lifted: p3 waits, asks for its siblings to be tried again, and all are bound
    result.cluster.store.patch("v1", "Pod", "p3", {"spec": {"schedulingGates": None}}, "default")
    result = rerun(result)
    assert all(bound(result, *GANG).values())
    assert len(gang_binds(result, GANG)) == 3


def test_scheduling_timeout_defaults_to_permit_waiting_time_seconds() -> None:
    pods = [member("p1", "pg", created=T0), member("p2", "pg", created=T0, gates=["wait"])]
    result = run(nodes=[node("n1", cpu="4")], pods=pods, objects=[pod_group("pg", 2)], args={"permitWaitingTimeSeconds": 7})
    assert "rejected due to timeout after waiting 7s at plugin Coscheduling" in result.message("p1")
    assert result.cluster.binds == []


# membership problems ---------------------------------------------------------------------------------


def test_pod_group_missing_is_reported_and_its_creation_requeues_the_gang() -> None:
    result = run(nodes=[node("n1", cpu="4")], pods=[member("p1", "nope"), member("p2", "nope")])
    for p in ("p1", "p2"):
        assert result.status(p) == "Unschedulable"
        assert "PodGroup default/nope not found" in result.message(p)
        assert "scheduling.x-k8s.io/pod-group=nope" in result.message(p)
    assert result.cluster.binds == []

    result.cluster.store.create(pod_group("nope", 2))
    result = rerun(result)
    assert bound(result, "p1", "p2") == {"p1": "n1", "p2": "n1"}


def test_min_member_larger_than_the_pods_that_exist() -> None:
    result = run(
        nodes=[node("n1", cpu="8")],
        pods=[member(p, "pg") for p in GANG],
        objects=[pod_group("pg", 5)],
    )
    for p in GANG:
        assert result.status(p) == "Unschedulable"
        assert f"pre-filter pod {p} cannot find enough sibling pods" in result.message(p)
        assert "minMember of group: 5" in result.message(p)
    assert "current pods number: 3" in result.message("p3")
    assert permit_results(result) == []

    # two more members arrive: the last one completes the gang and brings its siblings along
    result.cluster.store.create(member("p4", "pg"))
    result.cluster.store.create(member("p5", "pg"))
    result = rerun(result)
    everyone = (*GANG, "p4", "p5")
    assert all(bound(result, *everyone).values())
    assert len(gang_binds(result, everyone)) == 5


def test_pods_without_a_group_are_scheduled_as_usual() -> None:
    result = run(nodes=[node("n1", cpu="2")], pods=[solo("a"), solo("b"), solo("c")])
    assert bound(result, "a", "b", "c") == {"a": "n1", "b": "n1", "c": None}
    assert result.message("c").startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert "PodGroup" not in result.message("c")


# QueueSort and competition ------------------------------------------------------------------------


def test_queue_sort_keeps_gang_members_adjacent() -> None:
    later = "2024-01-01T00:01:00Z"
    pods = [
        member("b1", "gang-b", created=T0),
        member("a1", "gang-a", created=T0),
        solo("s1", created=T0),
        member("b2", "gang-b", created=T0),
        member("a2", "gang-a", created=T0),
        solo("s2", created=T0),
        member("b3", "gang-b", created=T0),
        member("a3", "gang-a", created=T0),
    ]
    result = run(
        nodes=[node("n1", cpu="16")],
        pods=pods,
        objects=[pod_group("gang-b", 3, created=later), pod_group("gang-a", 3, created=T0)],
    )
    order = first_attempt_order(result)
    gangs = [p for p in order if not p.startswith("s")]
    # each gang is tried as a block, the older PodGroup first, members in name order
    assert gangs == ["a1", "a2", "a3", "b1", "b2", "b3"]
    assert order.index("a3") - order.index("a1") == 2
    assert order.index("b3") - order.index("b1") == 2
    assert all(bound(result, *[p["metadata"]["name"] for p in pods]).values())


@pytest.mark.parametrize("older", ["gang-a", "gang-b"])
def test_two_gangs_competing_for_room_for_one(older: str) -> None:
    """Room for four pods, two gangs of three: the gang whose PodGroup is older is bound whole;
    the other gets the fourth slot for one member at most, and gives it back."""
    newer = "gang-b" if older == "gang-a" else "gang-a"
    times = {older: T0, newer: "2024-01-01T00:05:00Z"}
    a = ("a1", "a2", "a3")
    b = ("b1", "b2", "b3")
    pods = [member(n, "gang-a" if n in a else "gang-b", created=T0) for n in ("b1", "a1", "b2", "a2", "b3", "a3")]
    result = run(
        nodes=[node(f"n{i}") for i in range(1, 5)],
        pods=pods,
        objects=[pod_group(g, 3, created=times[g], scheduleTimeoutSeconds=10) for g in ("gang-a", "gang-b")],
        args={"podGroupBackoffSeconds": 60},
    )
    winner, loser = (a, b) if older == "gang-a" else (b, a)
    # a member of the losing gang did get the fourth slot and waited at Permit ...
    assert any(r.startswith("Wait") for p in loser for r in permit_results(result, p))
    # ... and was released when its sibling did not fit
    assert any("optimistic rejection in PostFilter" in result.message(p) for p in loser)
    assert all(bound(result, *winner).values())
    assert not any(bound(result, *loser).values())
    assert len(gang_binds(result, winner)) == 3
    assert gang_binds(result, loser) == []
    for p in loser:
        assert result.status(p) == "Unschedulable"
    assert_no_partial_gang(result, winner, 3)


def test_priority_orders_before_the_group_age() -> None:
    high = member("h1", "gang-h", created=T0)
    high["spec"]["priority"] = 100
    pods = [member("l1", "gang-l", created=T0), high]
    result = run(
        nodes=[node("n1", cpu="4")],
        pods=pods,
        objects=[pod_group("gang-l", 1, created=T0), pod_group("gang-h", 1, created="2024-06-01T00:00:00Z")],
    )
    assert first_attempt_order(result) == ["h1", "l1"]


def test_the_profile_uses_coscheduling_as_its_only_queue_sort() -> None:
    result = run(nodes=[node("n1")], pods=[solo("a")])
    fw = result.scheduler.frameworks[PROFILE]
    assert fw.points["queueSort"] == ["Coscheduling"]
    assert {"preFilter", "postFilter", "reserve", "permit"} <= {p for p, names in fw.points.items() if "Coscheduling" in names}
