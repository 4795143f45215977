"""PreFilter extensions (AddPod / RemovePod) and Filter with nominated pods
(kube-scheduler's RunFilterPluginsWithNominatedPods)."""

from __future__ import annotations

from kubesched.sdk import Code, CycleState, Pod, StateData, Status, hookimpl


class Extra(StateData):
    """Pods added by AddPod; cloned deeply, as the StateData contract asks."""

    def __init__(self) -> None:
        self.extra_pods: list[str] = []

    def clone(self) -> Extra:
        c = Extra()
        c.extra_pods = list(self.extra_pods)
        return c


def _counting(calls: list, *, skip: bool = False, fail_add: bool = False) -> type:
    class P:
        @hookimpl
        def pre_filter(self, state, pod, nodes):
            state.write("PreFilterP", Extra())
            return Status.skip() if skip else None

        @hookimpl
        def pre_filter_add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
            calls.append(("add", pod_to_schedule.name, pod_to_add.name, node_info.name))
            state.read("PreFilterP").extra_pods.append(pod_to_add.name)
            return Status.failed("cannot add") if fail_add else None

        @hookimpl
        def pre_filter_remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
            calls.append(("remove", pod_to_schedule.name, pod_to_remove.name, node_info.name))

        @hookimpl
        def filter(self, state, pod, node_info):
            extra = list(state.read("PreFilterP").extra_pods)
            calls.append(("filter", node_info.name, sorted(p.name for p in node_info.pods), extra))
            if extra:
                return Status.unschedulable("node(s) reserved for a nominated pod")

    return P


def _setup(ks, calls, **kw):
    P = _counting(calls, **kw)
    r = ks.build({"P": P}, {"preFilter": ["P"], "filter": ["P"]}, ks.nodes(1)).start()
    nominated = Pod(ks.pod("big", priority=100))
    r.framework.services.nominated_pods_for_node = lambda n: [nominated] if n == "n1" else []
    ni = r.scheduler.cache.update_snapshot().get("n1")
    return r, ni, nominated


def test_filter_with_higher_priority_nominated_pod_runs_add_pod_on_a_clone(ks, calls):
    r, ni, nominated = _setup(ks, calls)
    fw = r.framework
    state = CycleState()
    pod = Pod(ks.pod("small", priority=1))
    fw.run_pre_filter(state, pod, [ni])
    st = fw.run_filter_plugins_with_nominated_pods(state, pod, ni)
    assert ("add", "small", "big", "n1") in calls
    assert ("filter", "n1", ["big"], ["big"]) in calls  # first pass: nominated pod added
    assert st.code is Code.UNSCHEDULABLE
    assert ni.pods == []  # the real NodeInfo is untouched
    assert state.read("PreFilterP").extra_pods == []  # and so is the real state


def test_lower_priority_nominated_pods_are_ignored(ks, calls):
    r, ni, nominated = _setup(ks, calls)
    fw = r.framework
    state = CycleState()
    pod = Pod(ks.pod("vip", priority=1000))
    fw.run_pre_filter(state, pod, [ni])
    st = fw.run_filter_plugins_with_nominated_pods(state, pod, ni)
    assert st.is_success()
    assert not [c for c in calls if c[0] == "add"]


def test_add_pod_error_fails_with_plugin_name(ks, calls):
    r, ni, nominated = _setup(ks, calls, fail_add=True)
    fw = r.framework
    state = CycleState()
    pod = Pod(ks.pod("small"))
    fw.run_pre_filter(state, pod, [ni])
    st = fw.run_filter_plugins_with_nominated_pods(state, pod, ni)
    assert st.code is Code.ERROR
    assert st.message == 'running AddPod on PreFilter plugin "P": cannot add'


def test_extensions_not_called_for_a_skipped_plugin(ks, calls):
    r, ni, nominated = _setup(ks, calls, skip=True)
    fw = r.framework
    state = CycleState()
    pod = Pod(ks.pod("small"))
    fw.run_pre_filter(state, pod, [ni])
    assert state.skip_filter_plugins == {"P"}
    fw.run_pre_filter_extension_add_pod(state, pod, nominated, ni)
    fw.run_pre_filter_extension_remove_pod(state, pod, nominated, ni)
    assert not [c for c in calls if c[0] in ("add", "remove")]


def test_remove_pod_through_the_handle(ks, calls):
    r, ni, nominated = _setup(ks, calls)
    fw = r.framework
    state = CycleState()
    pod = Pod(ks.pod("small"))
    fw.run_pre_filter(state, pod, [ni])
    st = fw.handle.run_pre_filter_extension_remove_pod(state, pod, nominated, ni)
    assert st.is_success()
    assert calls == [("remove", "small", "big", "n1")]
