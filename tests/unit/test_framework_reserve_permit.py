"""Reserve / Unreserve / Permit semantics (kube-scheduler's schedulingCycle and bindingCycle)."""

from __future__ import annotations

import pytest

from kubesched.runtime.framework import MAX_PERMIT_TIMEOUT
from kubesched.runtime.timefmt import go_duration
from kubesched.sdk import Status, hookimpl


def _reserver(tag: str, calls: list, fail: Status | None = None) -> type:
    class R:
        @hookimpl
        def reserve(self, state, pod, node_name):
            calls.append(("reserve", tag, pod.name, node_name))
            return fail

        @hookimpl
        def unreserve(self, state, pod, node_name):
            calls.append(("unreserve", tag, pod.name, node_name))

    return R


def _unreserves(calls: list) -> list[str]:
    return [c[1] for c in calls if c[0] == "unreserve"]


def _assert_released(r, pod_uid: str = "p") -> None:
    cache = r.scheduler.cache
    assert not cache.is_assumed(pod_uid)
    for name in ("n1", "n2"):
        ni = cache.node_info(name)
        if ni is not None:
            assert all(p.uid != pod_uid for p in ni.pods)
            assert ni.requested.milli_cpu == 0


def test_reserve_failure_unreserves_all_in_reverse_order(ks, calls):
    plugins = {
        "R1": _reserver("R1", calls),
        "R2": _reserver("R2", calls),
        "R3": _reserver("R3", calls, fail=Status.unschedulable("no room in R3")),
    }
    r = ks.run(plugins, {"reserve": ["R1", "R2", "R3"]}, ks.nodes(1) + [ks.pod("p", cpu="1")])
    assert [c[:2] for c in calls] == [
        ("reserve", "R1"),
        ("reserve", "R2"),
        ("reserve", "R3"),
        ("unreserve", "R3"),
        ("unreserve", "R2"),
        ("unreserve", "R1"),
    ]
    assert all(c[3] == "n1" for c in calls)
    res = r.result("p")
    assert res.status == "Unschedulable"
    assert res.message == "0/1 nodes are available: 1 no room in R3."
    assert r.cluster.binds == []
    _assert_released(r)


def test_reserve_stops_at_first_failure(ks, calls):
    plugins = {
        "R1": _reserver("R1", calls, fail=Status.failed("R1 broke")),
        "R2": _reserver("R2", calls),
    }
    r = ks.run(plugins, {"reserve": ["R1", "R2"]}, ks.nodes(1) + [ks.pod("p")])
    assert ("reserve", "R2", "p", "n1") not in calls
    assert _unreserves(calls) == ["R2", "R1"]
    assert r.result("p").status == "Error"
    assert "R1 broke" in r.result("p").message


def test_permit_reject_unreserves_in_reverse_order(ks, calls):
    class P:
        @hookimpl
        def permit(self, pod, node_name):
            calls.append(("permit", "P"))
            return Status.unschedulable("not now")

    plugins = {"R1": _reserver("R1", calls), "R2": _reserver("R2", calls), "P": P}
    r = ks.run(
        plugins, {"reserve": ["R1", "R2"], "permit": ["P"]}, ks.nodes(1) + [ks.pod("p", cpu="1")]
    )
    assert [c[:2] for c in calls] == [
        ("reserve", "R1"),
        ("reserve", "R2"),
        ("permit", "P"),
        ("unreserve", "R2"),
        ("unreserve", "R1"),
    ]
    assert r.result("p").status == "Unschedulable"
    assert r.result("p").message == "0/1 nodes are available: 1 not now."
    assert r.cluster.binds == []
    _assert_released(r)


def test_prebind_failure_unreserves_in_reverse_order(ks, calls):
    class PB:
        @hookimpl
        def pre_bind(self, pod, node_name):
            calls.append(("pre_bind", "PB"))
            return Status.failed("volume not ready")

    plugins = {"R1": _reserver("R1", calls), "R2": _reserver("R2", calls), "PB": PB}
    r = ks.run(
        plugins, {"reserve": ["R1", "R2"], "preBind": ["PB"]}, ks.nodes(1) + [ks.pod("p", cpu="1")]
    )
    assert [c[:2] for c in calls] == [
        ("reserve", "R1"),
        ("reserve", "R2"),
        ("pre_bind", "PB"),
        ("unreserve", "R2"),
        ("unreserve", "R1"),
    ]
    res = r.result("p")
    assert res.status == "Error"
    assert res.message == 'running PreBind plugin "PB": volume not ready'
    assert r.cluster.binds == []
    _assert_released(r)


def test_bind_failure_unreserves_in_reverse_order(ks, calls):
    class B:
        @hookimpl
        def bind(self, pod, node_name):
            calls.append(("bind", "B"))
            return Status.failed("api server unavailable")

    plugins = {"R1": _reserver("R1", calls), "R2": _reserver("R2", calls), "B": B}
    r = ks.run(
        plugins, {"reserve": ["R1", "R2"], "bind": ["B"]}, ks.nodes(1) + [ks.pod("p", cpu="1")]
    )
    assert [c[:2] for c in calls] == [
        ("reserve", "R1"),
        ("reserve", "R2"),
        ("bind", "B"),
        ("unreserve", "R2"),
        ("unreserve", "R1"),
    ]
    assert r.result("p").status == "Error"
    assert "api server unavailable" in r.result("p").message
    assert r.cluster.binds == []
    _assert_released(r)


def test_successful_cycle_does_not_unreserve(ks, calls):
    r = ks.run({"R1": _reserver("R1", calls)}, {"reserve": ["R1"]}, ks.nodes(1) + [ks.pod("p")])
    assert _unreserves(calls) == []
    assert r.result("p").status == "Scheduled"


def test_assumed_pod_is_seen_by_reserve_with_node_name(ks, calls):
    class R:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def reserve(self, pod, node_name):
            ni = self.handle.snapshot().get(node_name)
            calls.append((pod.node_name, [p.name for p in ni.pods], ni.requested.milli_cpu))

    ks.run({"R": R}, {"reserve": ["R"]}, ks.nodes(1) + [ks.pod("p", cpu="500m")])
    assert calls == [("n1", ["p"], 500)]


# Permit Wait --------------------------------------------------------------------------------------


def _waiting_permit(timeout: float, calls: list) -> type:
    class P:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def permit(self, state, pod, node_name):
            calls.append(("permit", pod.name, self.handle.clock.now()))
            return Status.wait(), timeout

        @hookimpl
        def reserve(self, pod, node_name):
            calls.append(("reserve", pod.name, self.handle.clock.now()))

        @hookimpl
        def unreserve(self, pod, node_name):
            calls.append(("unreserve", pod.name, self.handle.clock.now()))

    return P


def test_permit_wait_timeout_is_unschedulable_and_unreserves(ks, calls):
    P = _waiting_permit(10, calls)
    r = ks.run({"P": P}, {"reserve": ["P"], "permit": ["P"]}, ks.nodes(1) + [ks.pod("p", cpu="1")])
    res = r.result("p")
    assert res.status == "Unschedulable"
    assert "rejected due to timeout after waiting 10s at plugin P" in res.message
    assert (
        res.message
        == "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin P."
    )
    ((_, _, t_permit),) = [c for c in calls if c[0] == "permit"]
    ((_, _, t_unreserve),) = [c for c in calls if c[0] == "unreserve"]
    assert t_unreserve - t_permit == pytest.approx(10)
    assert r.cluster.binds == []
    assert r.scheduler.waiting_pods == {}
    _assert_released(r)


def test_permit_wait_timeout_is_capped_at_15_minutes(ks, calls):
    P = _waiting_permit(3600, calls)
    r = ks.run({"P": P}, {"reserve": ["P"], "permit": ["P"]}, ks.nodes(1) + [ks.pod("p")])
    res = r.result("p")
    assert "rejected due to timeout after waiting 15m0s at plugin P" in res.message
    ((_, _, t_permit),) = [c for c in calls if c[0] == "permit"]
    ((_, _, t_unreserve),) = [c for c in calls if c[0] == "unreserve"]
    assert t_unreserve - t_permit == pytest.approx(MAX_PERMIT_TIMEOUT) == pytest.approx(900)


def test_go_duration_formatting():
    assert go_duration(10) == "10s"
    assert go_duration(900) == "15m0s"
    assert go_duration(90) == "1m30s"
    assert go_duration(3600) == "1h0m0s"
    assert go_duration(0.5) == "500ms"
    assert go_duration(0) == "0s"


T0 = "2024-01-01T00:00:00Z"


def _pending_together(ks, cpu_a: str | None = None, cpu_b: str | None = None) -> list:
    """Pods "a" then "b", both pending from the start (creationTimestamp set), "a" popped first."""
    return [
        ks.pod("a", cpu=cpu_a, priority=10, created=T0),
        ks.pod("b", cpu=cpu_b, priority=0, created=T0),
    ]


def _gang(calls: list, action: str) -> type:
    """Pod "a" waits at Permit; pod "b" allows or rejects it through the handle."""

    class Gang:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def permit(self, pod, node_name):
            calls.append(("permit", pod.name, self.handle.clock.now()))
            if pod.name == "a":
                return Status.wait(), 60
            wp = self.handle.get_waiting_pod("a")
            calls.append(
                ("found-waiting", wp is not None and wp.pod.name, wp and wp.pending_plugins())
            )
            if action == "allow":
                wp.allow("Gang")
            else:
                wp.reject("Gang", "gang member b gave up")
            return None

        @hookimpl
        def reserve(self, pod, node_name):
            return None

        @hookimpl
        def unreserve(self, pod, node_name):
            calls.append(("unreserve", pod.name, self.handle.clock.now()))

        @hookimpl
        def post_bind(self, pod, node_name):
            calls.append(("post_bind", pod.name, self.handle.clock.now()))

    return Gang


def test_permit_allow_through_handle_lets_both_bind(ks, calls):
    r = ks.run(
        {"Gang": _gang(calls, "allow")},
        {"reserve": ["Gang"], "permit": ["Gang"], "postBind": ["Gang"]},
        ks.nodes(2) + _pending_together(ks),
    )
    assert r.result("a").status == "Scheduled", r.result("a")
    assert r.result("b").status == "Scheduled"
    assert set(r.bound()) == {"a", "b"}
    assert ("found-waiting", "a", ["Gang"]) in calls
    assert not [c for c in calls if c[0] == "unreserve"]
    t_permit_a = next(c[2] for c in calls if c[:2] == ("permit", "a"))
    t_bound_a = next(c[2] for c in calls if c[:2] == ("post_bind", "a"))
    assert t_bound_a - t_permit_a < 60  # allowed, not timed out
    assert r.scheduler.waiting_pods == {}


def test_permit_reject_through_handle(ks, calls):
    r = ks.run(
        {"Gang": _gang(calls, "reject")},
        {"reserve": ["Gang"], "permit": ["Gang"], "postBind": ["Gang"]},
        ks.nodes(2) + _pending_together(ks),
    )
    a = r.result("a")
    assert a.status == "Unschedulable"
    first = next(e.note for e in r.events("FailedScheduling") if e.regarding.endswith("/a"))
    assert "gang member b gave up" in first
    # b's binding came while a was held at Permit: replayed when a failed (kube-scheduler's
    # in-flight events), it requeued a (Gang registers no events: any event may help), whose
    # next wait timed out
    assert "rejected due to timeout" in a.message
    assert ("unreserve", "a") in [c[:2] for c in calls]
    assert r.result("b").status == "Scheduled"
    assert set(r.bound()) == {"b"}


def test_permit_waits_for_every_waiting_plugin(ks, calls):
    """A pod waiting on two plugins is released only when both allow."""

    class W1:
        @hookimpl
        def permit(self, pod):
            if pod.name == "a":
                return Status.wait(), 30
            return None

    class W2:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def permit(self, pod):
            if pod.name == "a":
                return Status.wait(), 30
            wp = self.handle.get_waiting_pod("a")
            calls.append(sorted(wp.pending_plugins()))
            wp.allow("W2")  # W1 still pending: a times out at W1
            return None

    r = ks.run({"W1": W1, "W2": W2}, {"permit": ["W1", "W2"]}, ks.nodes(2) + _pending_together(ks))
    assert calls == [["W1", "W2"]]
    assert r.result("a").status == "Unschedulable"
    assert "rejected due to timeout after waiting 30s at plugin W1" in r.result("a").message
    assert r.result("b").status == "Scheduled"


def test_waiting_pod_holds_its_resources(ks, calls):
    """While "a" waits at Permit it stays assumed: "b" sees its requests on the node."""

    class Fit:
        @hookimpl
        def filter(self, pod, node_info):
            if (
                node_info.requested.milli_cpu + pod.requests.milli_cpu
                > node_info.allocatable.milli_cpu
            ):
                return Status.unschedulable("Insufficient cpu")

    class P:
        @hookimpl
        def permit(self, pod):
            if pod.name == "a":
                return Status.wait(), 30

    r = ks.run(
        {"Fit": Fit, "P": P},
        {"filter": ["Fit"], "permit": ["P"]},
        ks.nodes(1, cpu="2") + _pending_together(ks, cpu_a="2", cpu_b="1"),
    )
    # b was tried while a held the node: rejected with Insufficient cpu (may later fit)
    assert r.result("a").status == "Unschedulable"
    b_events = [e for e in r.events("FailedScheduling") if e.regarding.endswith("/b")]
    assert b_events and b_events[0].note == "0/1 nodes are available: 1 Insufficient cpu."
