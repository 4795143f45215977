"""Bind / PostBind semantics and the order of every extension point in one cycle."""

from __future__ import annotations

import pytest

from kubesched.sdk import (
    BindConflict,
    CycleState,
    ObjectConflict,
    ObjectNotFound,
    Pod,
    Status,
    hookimpl,
)


def _binder(tag: str, calls: list, *, skip: bool = False, bind: bool = False) -> type:
    class B:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def bind(self, state, pod, node_name):
            calls.append(("bind", tag, pod.name, node_name))
            if skip:
                return Status.skip()
            if bind:
                self.handle.bind_pod(pod, node_name)
            return None

    return B


def test_binders_run_in_order_and_skip_passes_to_next(ks, calls):
    plugins = {
        "S1": _binder("S1", calls, skip=True),
        "S2": _binder("S2", calls, skip=True),
        "B": _binder("B", calls, bind=True),
        "After": _binder("After", calls, bind=True),
    }
    r = ks.run(plugins, {"bind": ["S1", "S2", "B", "After"]}, ks.nodes(1) + [ks.pod("p")])
    assert [c[1] for c in calls] == ["S1", "S2", "B"]
    assert r.cluster.binds == [("default/p", "n1")]
    assert r.result("p").status == "Scheduled"
    assert r.result("p").node == "n1"


def test_first_binder_that_does_not_skip_decides(ks, calls):
    plugins = {"B": _binder("B", calls, bind=True)}
    r = ks.run(plugins, {"bind": ["B", "DefaultBinder"]}, ks.nodes(1) + [ks.pod("p")])
    # DefaultBinder would raise a conflict if it were called after B bound the pod
    assert r.cluster.binds == [("default/p", "n1")]
    assert r.result("p").status == "Scheduled"


def test_default_binder_binds_through_cluster(ks):
    r = ks.run({}, {}, ks.nodes(1) + [ks.pod("p")])
    assert r.cluster.binds == [("default/p", "n1")]
    stored = r.cluster.store.get("v1", "Pod", "p", "default")
    assert stored["spec"]["nodeName"] == "n1"
    (ev,) = r.events("Scheduled")
    assert ev.note == "Successfully assigned default/p to n1"


def test_all_binders_skip_pod_not_bound_and_error(ks, calls):
    class R:
        @hookimpl
        def reserve(self, pod):
            calls.append(("reserve", pod.name))

        @hookimpl
        def unreserve(self, pod):
            calls.append(("unreserve", pod.name))

    plugins = {"S1": _binder("S1", calls, skip=True), "S2": _binder("S2", calls, skip=True), "R": R}
    r = ks.run(plugins, {"reserve": ["R"], "bind": ["S1", "S2"]}, ks.nodes(1) + [ks.pod("p")])
    assert [c[1] for c in calls if c[0] == "bind"] == ["S1", "S2"]
    assert r.cluster.binds == []
    res = r.result("p")
    assert res.status == "Error"
    assert res.node is None
    assert ("unreserve", "p") in calls
    assert not r.scheduler.cache.is_assumed("p")
    stored = r.cluster.store.get("v1", "Pod", "p", "default")
    assert not stored["spec"].get("nodeName")


def test_postbind_runs_after_successful_bind(ks, calls):
    class PB:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def post_bind(self, state, pod, node_name):
            stored = self.handle.objects.get("v1", "Pod", pod.name, pod.namespace)
            calls.append(("post_bind", pod.name, node_name, stored["spec"].get("nodeName")))

    plugins = {"B": _binder("B", calls, bind=True), "PB": PB}
    ks.run(plugins, {"bind": ["B"], "postBind": ["PB"]}, ks.nodes(1) + [ks.pod("p")])
    assert calls == [("bind", "B", "p", "n1"), ("post_bind", "p", "n1", "n1")]


def test_postbind_not_run_when_bind_fails(ks, calls):
    class Fail:
        @hookimpl
        def bind(self):
            return Status.failed("nope")

    class PB:
        @hookimpl
        def post_bind(self, pod):
            calls.append(("post_bind", pod.name))

    r = ks.run(
        {"Fail": Fail, "PB": PB},
        {"bind": ["Fail"], "postBind": ["PB"]},
        ks.nodes(1) + [ks.pod("p")],
    )
    assert calls == []
    assert r.result("p").status == "Error"


def test_postbind_failure_is_ignored(ks):
    class PB:
        @hookimpl
        def post_bind(self):
            raise RuntimeError("informational only")

    r = ks.run({"PB": PB}, {"postBind": ["PB"]}, ks.nodes(1) + [ks.pod("p")])
    assert r.result("p").status == "Scheduled"


def test_extension_points_run_in_kube_scheduler_order(ks, calls):
    class All:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def pre_filter(self, pod):
            calls.append("PreFilter")

        @hookimpl
        def filter(self, node_info):
            calls.append(f"Filter {node_info.name}")

        @hookimpl
        def pre_score(self, nodes):
            calls.append("PreScore")

        @hookimpl
        def score(self, node_info):
            calls.append(f"Score {node_info.name}")
            return 100 if node_info.name == "n2" else 0

        @hookimpl
        def normalize_score(self, scores):
            calls.append("NormalizeScore")

        @hookimpl
        def reserve(self, node_name):
            calls.append(f"Reserve {node_name}")

        @hookimpl
        def unreserve(self, node_name):
            calls.append("Unreserve")

        @hookimpl
        def permit(self, node_name):
            calls.append("Permit")

        @hookimpl
        def pre_bind(self, node_name):
            calls.append("PreBind")

        @hookimpl
        def bind(self, pod, node_name):
            calls.append("Bind")
            self.handle.bind_pod(pod, node_name)

        @hookimpl
        def post_bind(self, node_name):
            calls.append("PostBind")

    points = {
        p: ["All"]
        for p in (
            "preFilter",
            "filter",
            "preScore",
            "score",
            "reserve",
            "permit",
            "preBind",
            "bind",
            "postBind",
        )
    }
    r = ks.run({"All": All}, points, ks.nodes(2) + [ks.pod("p")])
    assert calls == [
        "PreFilter",
        "Filter n1",
        "Filter n2",
        "PreScore",
        "Score n1",
        "Score n2",
        "NormalizeScore",
        "Reserve n2",
        "Permit",
        "PreBind",
        "Bind",
        "PostBind",
    ]
    assert r.result("p").node == "n2"


def test_plugin_returning_a_non_status_is_an_error_for_that_pod_and_the_run_goes_on() -> None:
    """A filter that returns True (not a Status) must not stop the scheduler: the pod gets an
    Error, the next pod is still scheduled."""
    from kubesched.sdk import NodeInfo, hookimpl
    from kubesched.testing import make_node, make_pod, run_profile

    class Bad:
        @hookimpl
        def filter(self, pod: Pod, node_info: NodeInfo) -> object:
            return True if pod.name == "bad" else None

    r = run_profile({"Bad": Bad}, nodes=[make_node().name("a").obj()], pods=[make_pod().name("bad").obj(), make_pod().name("good").obj()])
    assert r.status("bad") == "Error"
    assert r.message("bad") == 'plugin "Bad" hook filter returned bool True; expected None or a Status'
    assert r.node("good") == "a"


def test_binder_returning_a_non_status_requeues_the_pod_unbound() -> None:
    from kubesched.sdk import hookimpl
    from kubesched.testing import make_node, make_pod, run_profile

    class BadBinder:
        @hookimpl
        def bind(self) -> object:
            return "done"

    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "bad-binder",
            "plugins": {
                "multiPoint": {"disabled": [{"name": "*"}]},
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "bind": {"enabled": [{"name": "BadBinder"}]},
            },
        }],
    }
    r = run_profile({"BadBinder": BadBinder}, nodes=[make_node().name("a").obj()], pods=[make_pod().name("p").obj()], config=config)
    assert r.status("p") == "Error"
    assert r.node("p") is None
    assert r.objects().get("v1", "Pod", "p", "default")["spec"].get("nodeName") is None
    assert not r.scheduler.cache.is_assumed(r.objects().get("v1", "Pod", "p", "default")["metadata"]["uid"])


# a pod already bound or gone ----------------------------------------------------------------------


def _twice_binder(calls: list, *, returns: bool) -> type:
    """Binds the pod, then again as a binder that retried would (the second bind_pod raises
    ObjectConflict): lets it escape, or returns Status.bind_conflict."""

    class Twice:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def bind(self, pod, node_name):
            calls.append(("bind", node_name))
            self.handle.bind_pod(pod, node_name)
            try:
                self.handle.bind_pod(pod, node_name)
            except ObjectConflict as e:
                if returns:
                    return Status.bind_conflict(f"already bound: {e}", error=e)
                raise

        @hookimpl
        def unreserve(self, pod, node_name):
            calls.append(("unreserve", node_name))

    return Twice


@pytest.mark.parametrize("returns", [True, False], ids=["returned", "raised"])
def test_a_bind_conflict_returned_or_escaping_from_bind_pod_is_not_retried(ks, calls, returns):
    r = ks.run({"T": _twice_binder(calls, returns=returns)}, {"reserve": ["T"], "bind": ["T"]}, ks.nodes(1) + [ks.pod("p")])
    assert calls == [("bind", "n1"), ("unreserve", "n1")]  # one cycle: undone, not retried
    assert r.cluster.binds == [("default/p", "n1")]  # bound once
    assert r.events("FailedScheduling") == []
    assert not r.scheduler.queue.contains("p")
    stored = r.cluster.store.get("v1", "Pod", "p", "default")
    assert stored["spec"]["nodeName"] == "n1"
    assert [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"] == [{"type": "PodScheduled", "status": "True"}]


@pytest.mark.parametrize("exc", [ObjectConflict("pod default/p is already assigned to node \"n2\""), ObjectNotFound('pods "p" not found')])
def test_run_bind_turns_an_escaped_object_conflict_or_not_found_into_a_bind_conflict(ks, exc):
    class Raises:
        @hookimpl
        def bind(self):
            raise exc

    r = ks.build({"R": Raises}, {"bind": ["R"]}, ks.nodes(1))
    st = r.framework.run_bind(CycleState(), Pod(ks.pod("p")), "n1")
    assert isinstance(st, BindConflict) and st.is_bind_conflict()
    assert (st.message, st.plugin, st.error) == (f'running Bind plugin "R": {type(exc).__name__}: {exc}', "R", exc)


def test_run_bind_keeps_other_exceptions_plain_errors(ks):
    e = RuntimeError("apiserver unavailable")

    class Raises:
        @hookimpl
        def bind(self):
            raise e

    r = ks.build({"R": Raises}, {"bind": ["R"]}, ks.nodes(1))
    st = r.framework.run_bind(CycleState(), Pod(ks.pod("p")), "n1")
    assert not st.is_bind_conflict()
    assert (st.message, st.plugin, st.error) == ('running Bind plugin "R": RuntimeError: apiserver unavailable', "R", e)
