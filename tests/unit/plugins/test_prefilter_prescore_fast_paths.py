"""The short ways PreFilter/PreScore take for pods like openb's (no spread constraints, no pod
(anti-)affinity, no owner): each gives the answer of the full computation, and sees a change of
the cluster (a pod with affinity placed, a Namespace's labels, a Service) at the next cycle."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.interpodaffinity import (
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)
from kubesched.runtime.plugins.noderesources import BalancedAllocation, Fit
from kubesched.runtime.plugins.noderesources.features import ALL_OFF, DEFAULT_FEATURES
from kubesched.runtime.plugins.noderesources.pod_requests import compute_pod_resource_request
from kubesched.runtime.plugins.podtopologyspread import PodTopologySpread
from kubesched.runtime.plugins.podtopologyspread.plugin import PRE_SCORE_STATE_KEY as PTS_PRE_SCORE
from kubesched.runtime.snapshot import Snapshot
from kubesched.sdk import CycleState, Pod, Status
from kubesched.sdk.status import as_status
from kubesched.testing import build_plugin, make_handle, make_node, make_pod

_ZONE = "topology.kubernetes.io/zone"


def _nodes() -> list[dict[str, Any]]:
    return [
        make_node().name(n).label(_ZONE, z).label("kubernetes.io/hostname", n).capacity({"cpu": "8", "memory": "16Gi", "pods": "110"}).obj()
        for n, z in (("a", "z1"), ("b", "z2"))
    ]


def _namespace(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


# InterPodAffinity -----------------------------------------------------------------------------


def _ipa_run(pl: InterPodAffinity, handle: Any, p: Pod) -> tuple[Status, list[Status], Status]:
    state = CycleState()
    pre = as_status(pl.pre_filter(state, p, handle.snapshot().list()))
    filters = [] if not pre.is_success() else [as_status(pl.filter(state, p, ni)) for ni in handle.snapshot().list()]
    score_state = CycleState()
    pre_score = as_status(pl.pre_score(score_state, p, handle.snapshot().list()))
    return pre, filters, pre_score


def test_inter_pod_affinity_sees_anti_affinity_and_namespace_labels_appear() -> None:
    """A pod without terms in a cluster without pod affinity: PreFilter and PreScore skip.
    Then a pod whose required anti-affinity selects it (by its namespace's labels) is placed,
    and the Namespace gets the label: each step gives the scan's answer."""
    anti = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": _ZONE,
        "namespaceSelector": {"matchLabels": {"team": "t1"}},
    }
    existing = make_pod().name("guard").uid("guard").namespace("other").node("a").pod_affinity_term(anti, anti=True).obj()
    incoming = Pod(make_pod().name("p").uid("p").namespace("ns1").label("app", "db").obj())
    handle = make_handle(_nodes(), [], [_namespace("ns1", {})])
    fast = build_plugin(InterPodAffinity, {}, handle)
    scan = build_plugin(InterPodAffinity, {}, handle)
    scan.use_index = False

    skip = Status.skip()
    for pl in (fast, scan):
        pre, filters, pre_score = _ipa_run(pl, handle, incoming)
        assert (pre.code, pre_score.code) == (skip.code, skip.code)

    # the guard is placed: its anti-affinity does not select ns1 yet (no "team" label)
    handle.set_snapshot(Snapshot.from_objects(_nodes(), [existing]))
    for pl in (fast, scan):
        pre, filters, pre_score = _ipa_run(pl, handle, incoming)
        assert pre.code == skip.code and pre_score.code == skip.code

    # ns1 gets the label: the next cycle reads it
    handle.objects.patch("v1", "Namespace", "ns1", {"metadata": {"labels": {"team": "t1"}}})
    for pl in (fast, scan):
        pre, filters, _ = _ipa_run(pl, handle, incoming)
        assert pre.is_success()
        assert [(f.code, f.reasons) for f in filters] == [
            (Status.unschedulable().code, [ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH]),
            (Status().code, []),
        ]


def test_inter_pod_affinity_pre_score_sees_an_existing_preferred_term() -> None:
    """PreScore skips while no pod has affinity; a placed pod's preferred affinity term that
    selects the incoming pod makes it score (the same map as the scan's)."""
    pref = {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": _ZONE}}
    existing = make_pod().name("e").uid("e").node("b").obj()
    existing["spec"]["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [pref]}}
    incoming = Pod(make_pod().name("p").uid("p").label("app", "web").obj())
    handle = make_handle(_nodes(), [])
    fast = build_plugin(InterPodAffinity, {}, handle)
    scan = build_plugin(InterPodAffinity, {}, handle)
    scan.use_index = False
    for pl in (fast, scan):
        assert as_status(pl.pre_score(CycleState(), incoming, handle.snapshot().list())).is_skip()
    handle.set_snapshot(Snapshot.from_objects(_nodes(), [existing]))
    got = []
    for pl in (fast, scan):
        state = CycleState()
        assert as_status(pl.pre_score(state, incoming, handle.snapshot().list())).is_success()
        got.append([pl.score(state, incoming, ni) for ni in handle.snapshot().list()])
    assert got == [[0, 5], [0, 5]]


# PodTopologySpread ----------------------------------------------------------------------------


def test_pod_topology_spread_default_constraints_follow_the_services() -> None:
    """A pod without constraints is spread by the system defaults only while a Service selects
    it: none at first (PreScore skips), a Service is created (hostname and zone constraints
    with its selector), its selector is changed away (skips again)."""
    handle = make_handle(_nodes(), [])
    pl = build_plugin(PodTopologySpread, {}, handle)
    p = Pod(make_pod().name("p").uid("p").label("app", "web").obj())

    def constraints() -> Any:
        state = CycleState()
        st = as_status(pl.pre_score(state, p, handle.snapshot().list()))
        if st.is_skip():
            return None
        assert st.is_success()
        s = state.get(PTS_PRE_SCORE)
        return [(c.topology_key, c.max_skew, c.selector.matches({"app": "web"}), c.selector.matches({"app": "db"})) for c in s.constraints]

    assert as_status(pl.pre_filter(CycleState(), p, handle.snapshot().list())).is_skip()
    assert constraints() is None
    handle.objects.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}})
    want = [("kubernetes.io/hostname", 3, True, False), (_ZONE, 5, True, False)]
    assert constraints() == want
    assert constraints() == want  # the parsed defaults are reused: the same answer
    handle.objects.patch("v1", "Service", "web", {"spec": {"selector": {"app": "other"}}}, "default")
    assert constraints() is None


def test_pod_topology_spread_list_defaults_per_action_and_gate() -> None:
    """defaultingType List: the parsed defaults are kept per action and feature gate; a
    DoNotSchedule default constraint filters with the Service's selector, and switching the
    node inclusion policy gate off gives its own constraints (the policies at their nil
    defaults)."""
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": _ZONE, "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "Honor"},
        ],
    }
    handle = make_handle(_nodes(), [])
    handle.objects.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}})
    pl = build_plugin(PodTopologySpread, args, handle)
    p = Pod(make_pod().name("p").uid("p").label("app", "web").obj())
    got = pl.get_constraints(p)
    assert [(c.topology_key, c.max_skew, c.node_taints_policy, c.selector.matches({"app": "web"})) for c in got] == [(_ZONE, 1, "Honor", True)]
    assert pl.get_constraints(p, "ScheduleAnyway") == []
    pl.enable_node_inclusion_policy = False
    assert [c.node_taints_policy for c in pl.get_constraints(p)] == ["Ignore"]


# NodeResourcesFit / NodeResourcesBalancedAllocation -------------------------------------------


def _pods() -> list[dict[str, Any]]:
    plain = make_pod().name("plain").uid("plain").req({"cpu": "1500m", "memory": "1Gi"}).obj()
    empty = make_pod().name("empty").uid("empty").obj()
    level = make_pod().name("level").uid("level").req({"cpu": "1", "memory": "1Gi"}).obj()
    level["spec"]["resources"] = {"requests": {"cpu": "3", "memory": "5Gi"}}
    resized = make_pod().name("resized").uid("resized").req({"cpu": "1", "memory": "1Gi"}).obj()
    resized["status"] = {"containerStatuses": [{"name": resized["spec"]["containers"][0]["name"], "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}]}
    gpu = make_pod().name("gpu").uid("gpu").req({"cpu": "250m", "nvidia.com/gpu": "2"}).obj()
    return [plain, empty, level, resized, gpu]


@pytest.mark.parametrize("features", [DEFAULT_FEATURES, ALL_OFF], ids=["defaults", "all-off"])
def test_request_lists_equal_the_full_computation(features: Any) -> None:
    """Fit's and BalancedAllocation's request lists (read from the pod view where the options
    allow) equal ``calculatePodResourceRequestList`` computed in full, for pods with pod-level
    requests, an in-place resize in the status, no requests and extended resources."""
    fit = Fit(features=features)
    ba = BalancedAllocation(features=features)
    got = {}
    for obj in _pods():
        p = Pod(obj)
        for pl in (fit, ba):
            s = pl.scorer
            full = [s.calculate_pod_resource_request(p, r.name) for r in s.resources]
            assert s.calculate_pod_resource_request_list(p) == full
            got[(obj["metadata"]["name"], type(pl).__name__)] = full
    gib = 1 << 30
    on = features is DEFAULT_FEATURES
    assert got == {
        ("plain", "Fit"): [1500, gib],
        ("plain", "BalancedAllocation"): [1500, gib],
        ("empty", "Fit"): [100, 200 << 20],
        ("empty", "BalancedAllocation"): [0, 0],
        # Fit's scorer never reads pod-level requests (Go builds it without the flag)
        ("level", "Fit"): [1000, gib],
        ("level", "BalancedAllocation"): [3000, 5 * gib] if on else [1000, gib],
        ("resized", "Fit"): [1000, gib],
        ("resized", "BalancedAllocation"): [2000, 2 * gib] if on else [1000, gib],
        ("gpu", "Fit"): [250, 200 << 20],
        ("gpu", "BalancedAllocation"): [250, 0],
    }


@pytest.mark.parametrize("features", [DEFAULT_FEATURES, ALL_OFF], ids=["defaults", "all-off"])
def test_fit_pre_filter_state_equals_compute_pod_resource_request(features: Any) -> None:
    """Fit's PreFilter keeps computePodResourceRequest's values (the pod view's requests when
    pod-level resources are on)."""
    fit = Fit(features=features)
    for obj in _pods():
        p = Pod(obj)
        state = CycleState()
        assert fit.pre_filter(state, p) is None
        s = state.get("PreFilterNodeResourcesFit")
        want = compute_pod_resource_request(p, pod_level=features.enable_pod_level_resources)
        assert (s.milli_cpu, s.memory, s.ephemeral_storage, s.scalars) == (
            want.milli_cpu,
            want.memory,
            want.ephemeral_storage,
            tuple(sorted((k, v) for k, v in want.scalar.items() if v)),
        )
