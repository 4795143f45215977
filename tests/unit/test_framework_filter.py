"""Filter and PostFilter semantics, the FitError message, and errors raised by plugins."""

from __future__ import annotations

import pytest

from kubesched.runtime.diagnosis import Diagnosis, FitError
from kubesched.sdk import Code, Pod, PostFilterResult, Status, hookimpl


def _recording_filter(tag: str, calls: list, reject: dict[str, str] | None = None) -> type:
    reject = reject or {}

    class F:
        @hookimpl
        def filter(self, state, pod, node_info):
            calls.append((tag, node_info.name))
            if node_info.name in reject:
                return Status.unschedulable(reject[node_info.name])
            return None

    return F


def test_filters_run_in_profile_order_per_node(ks, calls):
    plugins = {n: _recording_filter(n, calls) for n in ("C", "A", "B")}
    ks.run(plugins, {"filter": ["C", "A", "B"]}, ks.nodes(2) + [ks.pod("p")])
    per_node: dict[str, list[str]] = {}
    for tag, n in calls:
        per_node.setdefault(n, []).append(tag)
    assert per_node == {"n1": ["C", "A", "B"], "n2": ["C", "A", "B"]}


def test_filter_stops_at_first_failure_per_node(ks, calls):
    A = _recording_filter("A", calls, reject={"n1": "A says no"})
    B = _recording_filter("B", calls)
    r = ks.run({"A": A, "B": B}, {"filter": ["A", "B"]}, ks.nodes(2) + [ks.pod("p")])
    assert ("B", "n1") not in calls
    assert ("A", "n1") in calls and ("A", "n2") in calls and ("B", "n2") in calls
    assert r.result("p").node == "n2"


def test_filter_rejection_records_the_rejecting_plugin(ks, calls):
    A = _recording_filter("A", calls)
    B = _recording_filter("B", calls, reject={"n1": "B says no"})
    r = ks.build({"A": A, "B": B}, {"filter": ["A", "B"]}, ks.nodes(1)).start()
    fw = r.framework
    ni = r.scheduler.cache.update_snapshot().get("n1")
    from kubesched.sdk import CycleState

    st = fw.run_filter_plugins(CycleState(), Pod(ks.pod("p")), ni)
    assert st.code is Code.UNSCHEDULABLE
    assert st.plugin == "B"
    assert st.reasons == ["B says no"]


def test_failure_message_histogram(ks, calls):
    """kube-scheduler's FitError: sorted "count reason" entries, comma separated, final period."""
    A = _recording_filter(
        "A",
        calls,
        reject={
            "n1": "node(s) were unschedulable",
            "n2": "Insufficient cpu",
            "n3": "Insufficient cpu",
        },
    )
    r = ks.run({"A": A}, {"filter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
    res = r.result("p")
    assert res.status == "Unschedulable"
    assert res.node is None
    assert (
        res.message == "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
    )
    (ev,) = r.events("FailedScheduling")
    assert ev.note == res.message
    assert ev.event_type == "Warning"
    assert r.cluster.binds == []


def test_failure_message_counts_every_reason_of_a_status():
    d = Diagnosis(
        node_to_status={
            "n1": Status.unschedulable("Insufficient cpu", "Insufficient memory"),
            "n2": Status.unschedulable("Insufficient memory"),
            "n3": Status.unresolvable("node(s) had untolerated taint {k: v}"),
        }
    )
    msg = FitError(Pod({"metadata": {"name": "p"}}), 3, d).message()
    assert msg == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {k: v}, "
        "2 Insufficient memory."
    )


def test_failure_message_with_multiple_filters(ks, calls):
    A = _recording_filter(
        "A", calls, reject={"n1": "node(s) had untolerated taint {dedicated: gpu}"}
    )
    B = _recording_filter("B", calls, reject={"n2": "Insufficient cpu", "n3": "Insufficient cpu"})
    r = ks.run({"A": A, "B": B}, {"filter": ["A", "B"]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu."
    )


# PostFilter ----------------------------------------------------------------------------------


def test_postfilter_not_called_when_a_node_fits(ks, calls):
    A = _recording_filter("A", calls, reject={"n1": "no"})

    class PF:
        @hookimpl
        def post_filter(self, state, pod, filtered_node_status):
            calls.append(("PF", pod.name))

    r = ks.run(
        {"A": A, "PF": PF}, {"filter": ["A"], "postFilter": ["PF"]}, ks.nodes(2) + [ks.pod("p")]
    )
    assert ("PF", "p") not in calls
    assert r.result("p").node == "n2"


def test_postfilter_runs_after_failed_filter_with_node_statuses(ks, calls):
    A = _recording_filter("A", calls, reject={"n1": "no cpu", "n2": "no memory"})
    seen: dict = {}

    class PF:
        @hookimpl
        def post_filter(self, state, pod, filtered_node_status):
            seen.update({k: (v.code, v.reasons, v.plugin) for k, v in filtered_node_status.items()})
            return Status.unschedulable("preemption: not eligible")

    r = ks.run(
        {"A": A, "PF": PF}, {"filter": ["A"], "postFilter": ["PF"]}, ks.nodes(2) + [ks.pod("p")]
    )
    assert seen == {
        "n1": (Code.UNSCHEDULABLE, ["no cpu"], "A"),
        "n2": (Code.UNSCHEDULABLE, ["no memory"], "A"),
    }
    assert r.result("p").status == "Unschedulable"


def test_postfilter_message_is_appended_to_event_message(ks, calls):
    """kube-scheduler 1.34's FitError appends the PostFilter message with " %v" (the histogram
    gets " %v." but the PostFilter message is taken as it is)."""
    A = _recording_filter("A", calls, reject={"n1": "Insufficient cpu", "n2": "Insufficient cpu"})

    class PF:
        @hookimpl
        def post_filter(self, pod):
            return Status.unschedulable(
                "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
            )

    r = ks.run(
        {"A": A, "PF": PF}, {"filter": ["A"], "postFilter": ["PF"]}, ks.nodes(2) + [ks.pod("p")]
    )
    expected = (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert r.result("p").message == expected
    (ev,) = r.events("FailedScheduling")
    assert ev.note == expected


def test_postfilter_message_after_prefilter_rejection(ks, calls):
    class A:
        @hookimpl
        def pre_filter(self):
            return Status.unschedulable("pod has no ticket")

    class PF:
        @hookimpl
        def post_filter(self):
            return Status.unschedulable("preemption: not eligible due to preemptionPolicy=Never.")

    r = ks.run(
        {"A": A, "PF": PF}, {"preFilter": ["A"], "postFilter": ["PF"]}, ks.nodes(2) + [ks.pod("p")]
    )
    assert r.result("p").message == (
        "0/2 nodes are available: pod has no ticket. preemption: not eligible due to preemptionPolicy=Never."
    )


def test_postfilter_success_stops_later_postfilters_and_nominates(ks, calls):
    A = _recording_filter("A", calls, reject={"n1": "no", "n2": "no"})

    class PF1:
        @hookimpl
        def post_filter(self, pod):
            calls.append("PF1")
            return PostFilterResult("n2"), Status()

    class PF2:
        @hookimpl
        def post_filter(self, pod):
            calls.append("PF2")

    r = ks.run(
        {"A": A, "PF1": PF1, "PF2": PF2},
        {"filter": ["A"], "postFilter": ["PF1", "PF2"]},
        ks.nodes(2) + [ks.pod("p")],
    )
    assert "PF1" in calls and "PF2" not in calls
    assert r.scheduler.queue.nominator.pods_for_node("n2")[0].name == "p"
    stored = r.cluster.store.get("v1", "Pod", "p", "default")
    assert stored["status"].get("nominatedNodeName") == "n2"


# errors -----------------------------------------------------------------------------------------


def test_raising_filter_is_an_error_for_that_pod_only(ks, calls):
    class Boom:
        @hookimpl
        def filter(self, pod, node_info):
            if pod.name == "bad":
                raise RuntimeError("kaboom in filter")

    r = ks.run(
        {"Boom": Boom},
        {"filter": ["Boom"]},
        ks.nodes(2) + [ks.pod("bad"), ks.pod("good1"), ks.pod("good2")],
    )
    bad = r.result("bad")
    assert bad.status == "Error"
    assert bad.node is None
    assert "RuntimeError" in bad.message and "kaboom in filter" in bad.message
    assert '"Boom"' in bad.message or "Boom" in bad.message
    assert r.result("good1").status == "Scheduled"
    assert r.result("good2").status == "Scheduled"
    assert {"good1", "good2"} == set(r.bound())
    ev = [e for e in r.events("FailedScheduling") if "bad" in e.regarding]
    assert ev and "kaboom in filter" in ev[0].note


@pytest.mark.parametrize("point", ["preFilter", "score", "reserve", "permit", "preBind", "bind"])
def test_raising_plugin_at_any_point_is_error_and_scheduler_keeps_going(ks, calls, point):
    hook = {
        "preFilter": "pre_filter",
        "score": "score",
        "reserve": "reserve",
        "permit": "permit",
        "preBind": "pre_bind",
        "bind": "bind",
    }[point]

    def impl(self, state, pod, *rest):
        if pod.name == "bad":
            raise ValueError(f"broken {hook}")
        if hook == "score":
            return 10
        if hook == "bind":
            return Status.skip()
        return None

    # give the method the exact spec signature so pluggy accepts it
    from kubesched.sdk import hookspecs

    spec = getattr(hookspecs, hook)
    argnames = spec.__code__.co_varnames[: spec.__code__.co_argcount]
    ns: dict = {}
    exec(
        f"def {hook}(self, {', '.join(argnames)}):\n    return impl(self, {', '.join(argnames)})",
        {"impl": impl},
        ns,
    )
    Cls = type("Boom", (), {hook: hookimpl(ns[hook])})
    points: dict = {point: ["Boom"]}
    if point == "bind":
        points["bind"] = ["Boom", "DefaultBinder"]
    r = ks.run({"Boom": Cls}, points, ks.nodes(2) + [ks.pod("bad"), ks.pod("good")])
    assert r.result("bad").status == "Error", r.result("bad")
    assert f"broken {hook}" in r.result("bad").message
    assert "ValueError" in r.result("bad").message
    assert r.result("good").status == "Scheduled"
    assert "bad" not in r.bound()


def test_filter_returning_error_status_fails_the_cycle(ks, calls):
    class A:
        @hookimpl
        def filter(self, node_info):
            calls.append(node_info.name)
            return Status.failed("disk on fire")

    r = ks.run({"A": A}, {"filter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    assert "disk on fire" in r.result("p").message
    assert len(calls) == 1  # the cycle stops at the first Error


# hook signatures ----------------------------------------------------------------------------------


def test_hookimpl_may_declare_fewer_arguments(ks, calls):
    class NoArgs:
        @hookimpl
        def filter(self):
            calls.append(("NoArgs",))

    class NodeOnly:
        @hookimpl
        def filter(self, node_info):
            calls.append(("NodeOnly", node_info.name))
            return None if node_info.name == "n2" else Status.unschedulable("x")

    class Reordered:
        @hookimpl
        def filter(self, node_info, pod):
            calls.append(("Reordered", pod.name, node_info.name))

    class ScoreNode:
        @hookimpl
        def score(self, node_info):
            return 7

    r = ks.run(
        {"NoArgs": NoArgs, "NodeOnly": NodeOnly, "Reordered": Reordered, "ScoreNode": ScoreNode},
        {"filter": ["NoArgs", "NodeOnly", "Reordered"], "score": ["ScoreNode"]},
        ks.nodes(3) + [ks.pod("p")],
    )
    assert ("Reordered", "p", "n2") in calls
    assert ("NodeOnly", "n1") in calls
    assert r.result("p").node == "n2"


def test_hookimpl_with_unknown_argument_is_rejected_when_profile_is_built(ks):
    from kubesched.runtime.config import ConfigError

    class Bad:
        @hookimpl
        def filter(self, pod, node, whatever):
            return None

    with pytest.raises(ConfigError) as ei:
        ks.build({"Bad": Bad}, {"filter": ["Bad"]}, ks.nodes(1))
    msg = str(ei.value)
    assert "Bad" in msg
    assert "whatever" in msg or "node" in msg


def test_hookimpl_with_unknown_hook_name_is_rejected(ks):
    from kubesched.runtime.config import ConfigError

    class Typo:
        @hookimpl
        def filter(self, node_info):
            return None

        @hookimpl
        def fitler(self, node_info):
            return None

    with pytest.raises(ConfigError) as ei:
        ks.build({"Typo": Typo}, {"filter": ["Typo"]}, ks.nodes(1))
    assert "fitler" in str(ei.value)


# hot path ----------------------------------------------------------------------------------------


def test_collected_filter_entries_are_bound_methods_when_tracing_is_off(ks):
    import types

    import pluggy

    class A:
        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    class B:
        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    r = ks.build({"A": A, "B": B}, {"filter": ["A", "B"]}, ks.nodes(1))
    fw = r.framework
    assert [n for n, _ in fw.filter] == ["A", "B"]
    for name, fn in fw.filter:
        assert isinstance(fn, types.MethodType), fn
        assert not isinstance(fn, pluggy.HookCaller)
        assert fn.__self__ is fw.plugins[name]
        assert fn.__func__ is type(fw.plugins[name]).filter


def test_collected_entries_are_wrapped_when_tracing_is_on(ks):
    import types

    from kubesched.runtime.observe.trace import Tracer

    class A:
        @hookimpl
        def filter(self, state, pod, node_info):
            return None

    r = ks.build({"A": A}, {"filter": ["A"]}, ks.nodes(1), tracer=Tracer(stream=None, keep=True))
    ((_, fn),) = r.framework.filter
    assert not isinstance(fn, types.MethodType)
    assert isinstance(fn.__wrapped__, types.MethodType)
