"""PreFilter semantics: node sets intersected, empty intersection, Skip disables Filter,
rejections stop the cycle (kube-scheduler's RunPreFilterPlugins / findNodesThatFitPod)."""

from __future__ import annotations

from kubesched.sdk import Code, CycleState, PreFilterResult, Status, hookimpl


def _narrowing(names: set[str] | None, calls: list, tag: str) -> type:
    class P:
        @hookimpl
        def pre_filter(self, state, pod, nodes):
            calls.append((tag, "pre_filter"))
            return PreFilterResult(None if names is None else set(names))

        @hookimpl
        def filter(self, pod, node_info):
            calls.append((tag, node_info.name))

    return P


def test_prefilter_node_sets_are_intersected(ks, calls):
    A = _narrowing({"n1", "n2"}, calls, "A")
    B = _narrowing({"n2", "n3"}, calls, "B")
    r = ks.run(
        {"A": A, "B": B},
        {"preFilter": ["A", "B"], "filter": ["A", "B"]},
        ks.nodes(4) + [ks.pod("p")],
    )
    filtered = {n for tag, n in calls if n != "pre_filter"}
    assert filtered == {"n2"}, calls
    assert r.result("p").status == "Scheduled"
    assert r.result("p").node == "n2"


def test_prefilter_result_none_means_all_nodes(ks, calls):
    A = _narrowing(None, calls, "A")
    B = _narrowing({"n3"}, calls, "B")
    r = ks.run(
        {"A": A, "B": B}, {"preFilter": ["A", "B"], "filter": ["A"]}, ks.nodes(4) + [ks.pod("p")]
    )
    assert [n for tag, n in calls if tag == "A" and n != "pre_filter"] == ["n3"]
    assert r.result("p").node == "n3"


def test_prefilter_empty_intersection_is_unresolvable_naming_both(ks, calls):
    A = _narrowing({"n1"}, calls, "A")
    B = _narrowing({"n2"}, calls, "B")
    r = ks.run(
        {"A": A, "B": B},
        {"preFilter": ["A", "B"], "filter": ["A", "B"]},
        ks.nodes(3) + [ks.pod("p")],
    )
    res = r.result("p")
    assert res.status == "Unschedulable"
    assert (
        res.message
        == "0/3 nodes are available: node(s) didn't satisfy plugin(s) [A B] simultaneously."
    )
    # Filter never ran
    assert all(n == "pre_filter" for _, n in calls)
    (ev,) = r.events("FailedScheduling")
    assert ev.note == res.message


def test_prefilter_empty_intersection_status_code(ks, calls):
    """At the framework level the status is UnschedulableAndUnresolvable."""
    A = _narrowing({"n1"}, calls, "A")
    B = _narrowing({"n2"}, calls, "B")
    r = ks.build({"A": A, "B": B}, {"preFilter": ["A", "B"]}, ks.nodes(2))
    fw = r.framework
    from kubesched.sdk import Pod

    result, st, plugins = fw.run_pre_filter(CycleState(), Pod(ks.pod("p")), [])
    assert st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message == "node(s) didn't satisfy plugin(s) [A B] simultaneously"
    assert plugins == {"A", "B"}
    assert result is not None and result.node_names == set()


def test_prefilter_single_plugin_empty_set_names_the_plugin(ks, calls):
    A = _narrowing(set(), calls, "A")
    r = ks.run({"A": A}, {"preFilter": ["A"], "filter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").message == "0/3 nodes are available: node(s) didn't satisfy plugin A."
    assert r.result("p").status == "Unschedulable"


def test_prefilter_narrowing_reports_other_nodes_as_not_satisfying(ks, calls):
    """Nodes outside the PreFilterResult count in the histogram with the plugin names."""

    class A:
        @hookimpl
        def pre_filter(self, state, pod, nodes):
            return PreFilterResult({"n1"})

        @hookimpl
        def filter(self, node_info):
            return Status.unschedulable("nope")

    r = ks.run({"A": A}, {"preFilter": ["A"], "filter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
    assert (
        r.result("p").message
        == "0/3 nodes are available: 1 nope, 2 node(s) didn't satisfy plugin(s) [A]."
    )


def test_prefilter_skip_disables_its_filter(ks, calls):
    class A:
        @hookimpl
        def pre_filter(self, state, pod, nodes):
            return Status.skip()

        @hookimpl
        def filter(self, node_info):
            calls.append(("A", node_info.name))
            return Status.unschedulable("A rejects")

    class B:
        @hookimpl
        def pre_filter(self, state, pod, nodes):
            return None

        @hookimpl
        def filter(self, node_info):
            calls.append(("B", node_info.name))

    r = ks.run(
        {"A": A, "B": B},
        {"preFilter": ["A", "B"], "filter": ["A", "B"]},
        ks.nodes(2) + [ks.pod("p")],
    )
    assert not [c for c in calls if c[0] == "A"]
    assert {n for t, n in calls if t == "B"} == {"n1", "n2"}
    assert r.result("p").status == "Scheduled"


def test_prefilter_skip_is_per_cycle(ks, calls):
    """A plugin that skips for one pod still filters the next one."""

    class A:
        @hookimpl
        def pre_filter(self, pod):
            return Status.skip() if pod.name == "skipper" else None

        @hookimpl
        def filter(self, pod, node_info):
            calls.append((pod.name, node_info.name))

    ks.run(
        {"A": A},
        {"preFilter": ["A"], "filter": ["A"]},
        ks.nodes(2) + [ks.pod("skipper"), ks.pod("other")],
    )
    assert {p for p, _ in calls} == {"other"}


def test_prefilter_unschedulable_stops_cycle_with_its_reason(ks, calls):
    class A:
        @hookimpl
        def pre_filter(self, pod):
            return Status.unschedulable("pod has no ticket")

        @hookimpl
        def filter(self, node_info):
            calls.append(node_info.name)

    r = ks.run({"A": A}, {"preFilter": ["A"], "filter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
    assert calls == []
    assert r.result("p").status == "Unschedulable"
    assert r.result("p").message == "0/3 nodes are available: pod has no ticket."


def test_prefilter_may_return_tuple_result_status(ks, calls):
    class A:
        @hookimpl
        def pre_filter(self, state, pod, nodes):
            return PreFilterResult({"n2"}), None

    r = ks.run({"A": A}, {"preFilter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").node == "n2"


def test_prefilter_state_is_visible_to_filter(ks, calls):
    class A:
        @hookimpl
        def pre_filter(self, state, pod):
            state.write("PreFilterA", {"allowed": "n3"})

        @hookimpl
        def filter(self, state, node_info):
            if state.read("PreFilterA")["allowed"] != node_info.name:
                return Status.unschedulable("not allowed")

    r = ks.run({"A": A}, {"preFilter": ["A"], "filter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").node == "n3"
