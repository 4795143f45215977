"""The scheduler's one failure handler (scheduling failures, binding failures, bind conflicts,
what becomes of a pod's nomination), plugin tracebacks at -v 4, and the bounded results of
``kubesched run``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster
from kubesched.runtime.observe.logging import setup_logging
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import ObjectConflict, PostFilterResult, Status, hookimpl


class Boom:
    @hookimpl
    def filter(self, pod, node_info):
        raise ValueError("boom")


@pytest.fixture
def verbosity(caplog: pytest.LogCaptureFixture) -> Iterator[Callable[[int], None]]:
    """``setup_logging(v)`` as ``kubesched -v v`` does, with caplog's handler kept on the root."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    names = ("kubesched", "kubesched.scheduler", "kubesched.kubernetes", "urllib3", "kubernetes")
    levels = {n: logging.getLogger(n).level for n in names}

    def set_v(v: int) -> None:
        setup_logging(v)
        root.addHandler(caplog.handler)
        caplog.clear()

    yield set_v
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
    for n, lvl in levels.items():
        logging.getLogger(n).setLevel(lvl)


def _tracebacks(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """(message, message with its traceback) of every record that carries one."""
    return [(r.getMessage(), caplog.handler.formatter.format(r)) for r in caplog.records if r.exc_info]


def test_plugin_exception_traceback_is_logged_at_v4(ks, caplog, verbosity):
    verbosity(4)
    r = ks.run({"Boom": Boom}, {"filter": ["Boom"]}, ks.nodes(1) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    msg = r.result("p").message
    assert msg == 'running Filter plugin "Boom": ValueError: boom'
    (message, text), *_ = _tracebacks(caplog)
    assert message == f'pod="default/p" failed with an error: {msg}'
    assert "Traceback (most recent call last)" in text
    assert 'raise ValueError("boom")' in text
    assert text.endswith("ValueError: boom")


def test_plugin_exception_traceback_is_not_logged_by_default(ks, caplog, verbosity):
    verbosity(0)
    r = ks.run({"Boom": Boom}, {"filter": ["Boom"]}, ks.nodes(1) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    assert r.result("p").message == 'running Filter plugin "Boom": ValueError: boom'
    assert _tracebacks(caplog) == []


# one failure handler ---------------------------------------------------------------------------


def test_scheduling_failure_goes_through_the_failure_handler(ks):
    class No:
        @hookimpl
        def filter(self, pod, node_info):
            return Status.unschedulable("no")

    r = ks.run({"No": No}, {"filter": ["No"]}, ks.nodes(2) + [ks.pod("p")])
    res = r.result("p")
    assert (res.status, res.node, res.message) == ("Unschedulable", None, "0/2 nodes are available: 2 no.")
    (ev,) = r.events("FailedScheduling")
    assert ev.note == "0/2 nodes are available: 2 no."
    assert r.scheduler.queue.unschedulable_pods()[0].unschedulable_plugins == {"No"}


def test_binding_failure_is_unreserved_forgotten_and_retried(ks, calls):
    class Flaky:
        def __init__(self, handle):
            self.handle = handle
            self.failures = 1

        @hookimpl
        def reserve(self, pod, node_name):
            calls.append(("reserve", node_name))

        @hookimpl
        def unreserve(self, pod, node_name):
            calls.append(("unreserve", node_name))

        @hookimpl
        def pre_bind(self, pod, node_name):
            if self.failures:
                self.failures -= 1
                return Status.failed("volume not ready")

    r = ks.build({"Flaky": Flaky}, {"reserve": ["Flaky"], "preBind": ["Flaky"]}, ks.nodes(1) + [ks.pod("p")]).start()
    assert calls == [("reserve", "n1"), ("unreserve", "n1")]
    res = r.result("p")
    assert (res.status, res.node, res.message) == ("Error", None, 'running PreBind plugin "Flaky": volume not ready')
    (ev,) = r.events("FailedScheduling")
    assert ev.note == 'running PreBind plugin "Flaky": volume not ready'
    assert not r.scheduler.cache.is_assumed("p") and r.cluster.binds == []
    r.create(ks.node("n2"))  # any event retries a pod that failed with an Error
    assert calls[2:] == [("reserve", calls[2][1])]
    assert (r.result("p").status, r.result("p").attempts) == ("Scheduled", 2)
    assert r.bound() == {"p": calls[2][1]}


def test_bind_conflict_is_not_retried_and_never_bound_twice(ks, calls):
    class Conflicting:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def bind(self, pod, node_name):
            calls.append(("bind", node_name))
            return Status.bind_conflict("pods p is already assigned", error=ObjectConflict("409"))

        @hookimpl
        def unreserve(self, pod, node_name):
            calls.append(("unreserve", node_name))

    r = ks.run({"C": Conflicting}, {"reserve": ["C"], "bind": ["C"]}, ks.nodes(1) + [ks.pod("p")])
    assert calls == [("bind", "n1"), ("unreserve", "n1")]  # one bind, undone, not retried
    assert r.cluster.binds == []
    assert r.events("FailedScheduling") == []
    assert not r.scheduler.cache.is_assumed("p")
    assert not r.scheduler.queue.contains("p")


def test_a_plain_bind_error_is_retried(ks, calls):
    """Only the explicit bind-conflict status stops a retry, not the exception it carries."""

    class Once:
        def __init__(self, handle):
            self.handle = handle
            self.failed = False

        @hookimpl
        def bind(self, pod, node_name):
            calls.append(("bind", node_name))
            if not self.failed:
                self.failed = True
                return Status.failed("apiserver unavailable", error=ObjectConflict("409"))
            return Status.skip()  # DefaultBinder binds

    r = ks.build({"O": Once}, {"bind": ["O", "DefaultBinder"]}, ks.nodes(1) + [ks.pod("p")]).start()
    assert r.result("p").message == 'running Bind plugin "O": apiserver unavailable'
    r.create(ks.node("n2"))
    assert len(calls) == 2
    assert r.bound() == {"p": calls[1][1]}


# bounded results under `kubesched run` ------------------------------------------------------------


def _sched(ks, max_results):
    reg = ks.registry()
    cfg = ks.load_cfg({}, reg)
    cluster = SimulatedCluster(ks.nodes(2, cpu="100"))
    sched = Scheduler(cfg, reg, cluster, simulated=True, seed=1, max_results=max_results)
    cluster.start(sched.on_cluster_event)
    for m in cluster.manifests:
        cluster.store.create(m)
    sched.run_until_idle()
    return sched, cluster


def test_run_keeps_the_newest_results_up_to_the_bound(ks):
    sched, cluster = _sched(ks, 5)
    for i in range(12):
        cluster.store.create(ks.pod(f"p{i:02d}"))
        sched.run_until_idle()
        assert len(sched.results) <= 5
    assert [r.name for r in sched.results.values()] == ["p07", "p08", "p09", "p10", "p11"]
    assert {r.status for r in sched.results.values()} == {"Scheduled"}
    assert len(cluster.binds) == 12


def test_run_drops_results_of_deleted_pods(ks):
    sched, cluster = _sched(ks, 5)
    for name in ("a", "b"):
        cluster.store.create(ks.pod(name))
    sched.run_until_idle()
    cluster.store.delete("v1", "Pod", "a", "default")
    sched.run_until_idle()
    assert [r.name for r in sched.results.values()] == ["b"]


def test_finite_runs_keep_every_result(ks):
    sched, cluster = _sched(ks, None)
    for i in range(12):
        cluster.store.create(ks.pod(f"p{i:02d}"))
    sched.run_until_idle()
    cluster.store.delete("v1", "Pod", "p00", "default")
    sched.run_until_idle()
    assert len(sched.results) == 12


def test_max_results_must_be_positive(ks):
    with pytest.raises(ValueError, match=r"^max_pods must be at least 1, got 0$"):
        _sched(ks, 0)


class HoldAtPermit:
    """Holds every pod at Permit for 30s; counts Reserve and Unreserve."""

    def __init__(self, handle):
        self.handle = handle
        self.calls: list[tuple[str, str]] = []

    @hookimpl
    def reserve(self, pod, node_name):
        self.calls.append(("reserve", pod.name))

    @hookimpl
    def unreserve(self, pod, node_name):
        self.calls.append(("unreserve", pod.name))

    @hookimpl
    def permit(self, pod, node_name):
        return Status.wait(), 30


@pytest.mark.parametrize("max_results", [None, 100])
def test_pod_deleted_while_waiting_at_permit_is_rejected_and_never_requeued(ks, caplog, max_results):
    reg = ks.registry({"Hold": HoldAtPermit})
    cfg = ks.load_cfg({"reserve": ["Hold"], "permit": ["Hold"]}, reg)
    cluster = SimulatedCluster([dict(m) for m in ks.nodes(1) + [ks.pod("p")]])
    s = Scheduler(cfg, reg, cluster, simulated=True, seed=1, max_results=max_results)
    r = ks.Run(s, cluster)
    cluster.start(s.on_cluster_event)
    for m in cluster.manifests:
        cluster.store.create(m)
    s.run_until_idle(advance_time=False)
    uid = next(iter(s.results))
    assert list(s.waiting_pods) == [uid]
    assert s.cache.is_assumed(uid)
    caplog.set_level(logging.INFO, logger="kubesched.scheduler")

    cluster.store.delete("v1", "Pod", "p", "default")
    s.run_until_idle()  # and let the Permit timeout pass

    assert r.framework.plugins["Hold"].calls == [("reserve", "p"), ("unreserve", "p")]
    assert s.waiting_pods == {}
    assert not s.queue.contains(uid)
    assert s.queue.unschedulable_pods() == []
    assert not s.cache.has_pod(uid)
    assert not s.cache.is_assumed(uid)
    assert r.events("FailedScheduling") == []
    assert cluster.binds == []
    if max_results is None:
        assert (s.results[uid].status, s.results[uid].message, s.results[uid].profile) == ("Deleted", "", ks.SCHEDULER_NAME)
    else:
        assert uid not in s.results
    gone = [rec.getMessage() for rec in caplog.records if rec.name == "kubesched.scheduler"]
    assert gone == ['Pod is gone; not requeued pod="default/p" err="0/1 nodes are available: 1 removed."']


# the nomination after a failure ------------------------------------------------------------------
# v1.36 schedule_one.go clears the nominated node (clearNominatedNode: NominatingInfo Override
# with no node) on every scheduling and binding failure; only PostFilter's own result is kept:
# a node it nominates, or the nomination as it is when it returns no result (ModeNoop).
# handleSchedulingFailure puts it in the nominator (AddNominatedPod) and in the API (updatePod).


class RejectAll:
    @hookimpl
    def filter(self, pod, node_info):
        return Status.unschedulable("no")


class FilterError:
    @hookimpl
    def filter(self, pod, node_info):
        return Status.failed("disk read failed")


class NoResult:
    @hookimpl
    def post_filter(self, pod):
        return None, Status.unschedulable("nothing to preempt")


class NominatesN2:
    @hookimpl
    def post_filter(self, pod):
        return PostFilterResult("n2"), Status.success()


class Clears:
    @hookimpl
    def post_filter(self, pod):
        return PostFilterResult("", mode="clear"), Status.unschedulable("no candidate")


class RejectAtReserve:
    @hookimpl
    def reserve(self, pod, node_name):
        return Status.unschedulable("no room")


class RejectAtPermit:
    @hookimpl
    def permit(self, pod, node_name):
        return Status.unschedulable("not now")


class FailAtPreBind:
    @hookimpl
    def pre_bind(self, pod, node_name):
        return Status.failed("volume not ready")


_NOMINATION_CASES = {
    # v1.34 left the nomination when there were no PostFilter plugins (ScheduleResult{})
    "no PostFilter plugins": ({"filter": ["RejectAll"]}, None),
    "PostFilter returns no result": ({"filter": ["RejectAll"], "postFilter": ["NoResult"]}, "n1"),
    "PostFilter nominates another node": ({"filter": ["RejectAll"], "postFilter": ["NominatesN2"]}, "n2"),
    "PostFilter clears it": ({"filter": ["RejectAll"], "postFilter": ["Clears"]}, None),
    "Filter error": ({"filter": ["FilterError"], "postFilter": ["NoResult"]}, None),
    "Reserve rejects": ({"reserve": ["RejectAtReserve"], "postFilter": ["NoResult"]}, None),
    "Permit rejects": ({"permit": ["RejectAtPermit"], "postFilter": ["NoResult"]}, None),
    "binding cycle fails": ({"preBind": ["FailAtPreBind"], "postFilter": ["NoResult"]}, None),
}


@pytest.mark.parametrize("case", list(_NOMINATION_CASES))
def test_a_failure_clears_the_nomination_unless_post_filter_decides(ks, case):
    points, expected = _NOMINATION_CASES[case]
    plugins = {
        "RejectAll": RejectAll, "FilterError": FilterError, "NoResult": NoResult, "NominatesN2": NominatesN2,
        "Clears": Clears, "RejectAtReserve": RejectAtReserve, "RejectAtPermit": RejectAtPermit, "FailAtPreBind": FailAtPreBind,
    }
    p = ks.pod("p")
    p["status"] = {**(p.get("status") or {}), "nominatedNodeName": "n1"}
    r = ks.build(plugins, points, ks.nodes(2) + [p])
    r.cluster.start(r.scheduler.on_cluster_event)
    for m in r.cluster.manifests:
        r.cluster.store.create(m)
    r.scheduler.run_until_idle(advance_time=False)  # one attempt
    q = r.scheduler.queue

    assert r.result("p").status in ("Unschedulable", "Error")
    assert r.bound() == {}
    nominated = {n: [x.name for x in q.nominator.pods_for_node(n)] for n in ("n1", "n2")}
    assert nominated == {n: ["p"] if n == expected else [] for n in ("n1", "n2")}
    stored = r.cluster.store.get("v1", "Pod", "p", "default")["status"]
    assert stored.get("nominatedNodeName") == expected
    assert len(r.events("FailedScheduling")) == 1


def test_a_bound_pod_has_no_nominated_node_name(ks):
    """The simulated API server's binding clears status.nominatedNodeName, as v1.36's
    pkg/registry/core/pod/storage/storage.go setPodNodeAndMetadata does
    (ClearingNominatedNodeNameAfterBinding, beta and on since 1.35)."""
    p = ks.pod("p")
    p["status"] = {**(p.get("status") or {}), "nominatedNodeName": "n2"}
    r = ks.build({}, {}, ks.nodes(2) + [p]).start()
    assert r.bound() == {"p": r.result("p").node}
    stored = r.cluster.store.get("v1", "Pod", "p", "default")
    assert stored["spec"]["nodeName"] == r.result("p").node
    assert "nominatedNodeName" not in stored["status"]
    assert [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"] == [{"type": "PodScheduled", "status": "True"}]
    assert r.scheduler.queue.nominator.pods_for_node("n2") == []
