"""NodeDeclaredFeatures, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures_test.go (v1.36.3), plus the
features component-helpers v0.36.3 registers (features/*) and a default-profile run.

The Go tests' ``ndftesting.MockFeature`` is a :class:`Feature` with a test function; Go's
``preFilterState{reqs: newFS(...)}`` is the frozenset of names.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.nodedeclaredfeatures import (
    ALL_FEATURES,
    COMPONENT_VERSION,
    DEFAULT_FRAMEWORK,
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    PRE_FILTER_STATE_KEY,
    Feature,
    FeatureFramework,
    NodeDeclaredFeatures,
    _PreFilterState,
    parse_version,
)
from kubesched.runtime.scheduler import node_update_events
from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
)
from kubesched.testing import make_node, make_pod, run_profile

FEATURE_1, FEATURE_2 = "TestFeature1", "TestFeature2"


def mock_feature(name: str, infer: bool, max_version: str = "") -> Feature:
    return Feature(name, lambda spec: infer, parse_version(max_version) if max_version else None)


def plugin(*features: Feature, enabled: bool = True, version: str | None = "1.35.0") -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(
        enabled=enabled, framework=FeatureFramework(features), version=parse_version(version) if version else None
    )


def node_with_features(name: str, features: list[str] | None = None) -> dict[str, Any]:
    n: dict[str, Any] = {"metadata": {"name": name}}
    if features is not None:
        n["status"] = {"declaredFeatures": features}
    return n


def test_pod() -> Pod:
    return Pod(make_pod().name("test-pod").obj())


test_pod.__test__ = False  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("enabled", "features", "version", "want_status", "want_reqs"),
    [
        pytest.param(
            False, [mock_feature(FEATURE_1, True), mock_feature(FEATURE_2, False)], "1.35.0", Status(Code.SKIP), None,
            id="TestPreFilter/plugin disabled",
        ),
        pytest.param(
            True, [mock_feature(FEATURE_1, True), mock_feature(FEATURE_2, False)], "1.35.0", None, {FEATURE_1},
            id="TestPreFilter/Pod with feature requirements",
        ),
        pytest.param(
            True, [mock_feature(FEATURE_1, True, "1.38.0"), mock_feature(FEATURE_2, True, "1.38.0")], "1.35.0", None,
            {FEATURE_1, FEATURE_2},
            id="TestPreFilter/Pod with multiple feature requirements",
        ),
        pytest.param(
            True, [mock_feature(FEATURE_1, False), mock_feature(FEATURE_2, False)], "1.35.0", Status(Code.SKIP), None,
            id="TestPreFilter/Pod with no requirements",
        ),
        pytest.param(
            True, [mock_feature(FEATURE_1, True, "1.33.0"), mock_feature(FEATURE_2, False)], "1.34.0", Status(Code.SKIP), None,
            id="TestPreFilter/Feature not required, version > MaxVersion",
        ),
    ],
)
def test_pre_filter(enabled, features, version, want_status, want_reqs):
    p = plugin(*features, enabled=enabled, version=version)
    state = CycleState()
    assert p.pre_filter(state, test_pod(), []) == want_status
    s = state.get(PRE_FILTER_STATE_KEY)
    if want_reqs is None:
        assert s is None
    else:
        assert isinstance(s, _PreFilterState)
        assert s.reqs == frozenset(want_reqs)


FEATURE_A, FEATURE_B, FEATURE_C = "FeatureA", "FeatureB", "FeatureC"
NOT_MATCHED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)


@pytest.mark.parametrize(
    ("enabled", "node", "reqs", "want"),
    [
        pytest.param(False, node_with_features("node-1", [FEATURE_A, FEATURE_B]), None, None, id="TestFilter/plugin disabled"),
        pytest.param(True, node_with_features("node-1", [FEATURE_A, FEATURE_B]), [FEATURE_A], None, id="TestFilter/Node matches requirements"),
        pytest.param(True, node_with_features("node-1", [FEATURE_B]), [FEATURE_A], NOT_MATCHED, id="TestFilter/Node does not match requirements"),
        # pluginEnabled is left out (false) in the Go case, so Filter does nothing.
        pytest.param(
            False, node_with_features("node-multi", [FEATURE_A, FEATURE_B, FEATURE_C]), [FEATURE_A, FEATURE_C], None,
            id="TestFilter/Node with multiple features, pod requires subset",
        ),
        pytest.param(True, node_with_features("node-1"), [FEATURE_A], NOT_MATCHED, id="TestFilter/Node has no declared features"),
        pytest.param(
            True, node_with_features("node-1", [FEATURE_A]), [FEATURE_A, FEATURE_B], NOT_MATCHED,
            id="TestFilter/Node with some but not all required features",
        ),
        pytest.param(
            True, node_with_features("node-1"), None,
            Status(Code.ERROR, 'error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found'),
            id="TestFilter/Error getting pre-filter state",
        ),
    ],
)
def test_filter(enabled, node, reqs, want):
    # ndftesting.NewMockFramework(featureA, featureB, featureC)
    p = plugin(*(mock_feature(n, False) for n in (FEATURE_A, FEATURE_B, FEATURE_C)), enabled=enabled)
    state = CycleState()
    if reqs is not None:
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(reqs)))
    assert p.filter(state, test_pod(), NodeInfo(Node(node))) == want


def test_filter_wrong_state_type():
    p = NodeDeclaredFeatures()
    state = CycleState()
    state.write(PRE_FILTER_STATE_KEY, Status(Code.SUCCESS))
    assert p.filter(state, test_pod(), NodeInfo(Node(node_with_features("n")))) == Status(
        Code.ERROR, "invalid PreFilter state, got type Status, expected *nodedeclaredfeatures.preFilterState"
    )


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node_with_features("node-1", ["FeatureA"]), QueueingHint.QUEUE, id="TestEnqueueExtensionsNodeUpdate/Node Add with feature"),
        pytest.param(
            node_with_features("node-1"), node_with_features("node-1", ["FeatureA"]), QueueingHint.QUEUE,
            id="TestEnqueueExtensionsNodeUpdate/Node Update (Features Added)",
        ),
        pytest.param(
            node_with_features("node-1", ["FeatureA"]), node_with_features("node-1", ["FeatureA"]), QueueingHint.SKIP,
            id="TestEnqueueExtensionsNodeUpdate/Node Update (Features Unchanged)",
        ),
        pytest.param(None, "not-a-node", QueueingHint.QUEUE, id="wrong object type"),
    ],
)
def test_enqueue_extensions_node_update(old, new, want):
    p = plugin()  # ndf.New([]ndf.Feature{})
    assert p.is_schedulable_after_node_change(test_pod(), old, new) == want


def _sequence(*answers: bool) -> Any:
    calls = iter(answers)

    def infer(spec: Any) -> bool:
        return next(calls)  # StopIteration: "unexpected calls to SetInferForScheduling"

    return infer


def _pod(name: str, uid: str, **labels: str) -> dict[str, Any]:
    w = make_pod().name(name).uid(uid)
    for k, v in labels.items():
        w = w.label(k, v)
    return w.obj()


@pytest.mark.parametrize(
    ("old", "new", "infer", "version", "want"),
    [
        pytest.param(
            _pod("test-pod", "123"), _pod("test-pod", "123", foo="bar"), _sequence(False, True), "1.35.0", QueueingHint.QUEUE,
            id="TestEnqueueExtensionsPodUpdate/Pod Update adds requirement",
        ),
        pytest.param(
            _pod("test-pod", "123", foo="bar"), _pod("test-pod", "123"), _sequence(True, False), "1.35.0", QueueingHint.QUEUE,
            id="TestEnqueueExtensionsPodUpdate/Pod Update removes requirement",
        ),
        pytest.param(
            _pod("test-pod", "123"), _pod("test-pod", "123"), lambda spec: False, "1.35.0", QueueingHint.SKIP,
            id="TestEnqueueExtensionsPodUpdate/Pod Update with no change in requirements",
        ),
        pytest.param(
            _pod("another-test-pod", "456", foo="bar"), _pod("another-test-pod", "456"), lambda spec: False, "1.35.0",
            QueueingHint.SKIP,
            id="TestEnqueueExtensionsPodUpdate/Updated pod not the same as target pod",
        ),
        # Go: (Queue, "target version cannot be nil")
        pytest.param(
            _pod("test-pod", "123"), _pod("test-pod", "123", foo="bar"), lambda spec: True, None, QueueingHint.QUEUE,
            id="TestEnqueueExtensionsPodUpdate/Infer returns error",
        ),
    ],
)
def test_enqueue_extensions_pod_update(old, new, infer, version, want):
    p = plugin(Feature("TestFeature", infer), version=version)
    assert p.is_schedulable_after_pod_update(Pod(_pod("test-pod", "123")), old, new) == want


def test_pre_filter_without_version_is_an_error():
    p = plugin(mock_feature(FEATURE_1, True), version=None)
    assert p.pre_filter(CycleState(), test_pod(), []) == Status(Code.ERROR, "target version cannot be nil")


def test_events_to_register():
    p = NodeDeclaredFeatures()
    assert [e.event for e in p.events_to_register()] == [
        ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
        ClusterEvent(EventResource.POD.value, ActionType.UPDATE),
    ]
    assert NodeDeclaredFeatures(enabled=False).events_to_register() == []


def test_node_update_events_report_declared_feature_change():
    """events.go extractNodeFeaturesChange: a change of status.declaredFeatures is
    UpdateNodeDeclaredFeature (and only that when nothing else changed)."""
    old = Node(node_with_features("n", ["A"]))
    assert node_update_events(old, Node(node_with_features("n", ["A", "B"]))) == [ActionType.UPDATE_NODE_DECLARED_FEATURE]
    assert node_update_events(old, Node(node_with_features("n", ["A"]))) == []


# ------------------------------------------------------------------ the registered features


def test_default_framework_registry_is_component_helpers_v0_36_3():
    assert DEFAULT_FRAMEWORK.names == (
        "ExtendWebSocketsToKubelet",
        "InPlacePodLevelResourcesVerticalScaling",
        "InPlacePodVerticalScalingInitContainers",
        "RestartAllContainersOnContainerExits",
        "UserNamespacesHostNetworkSupport",
    )
    assert all(f.max_version is None for f in ALL_FEATURES)
    assert COMPONENT_VERSION == (1, 36, 3)


RESTART_ALL = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param({"containers": [{"name": "c", "image": "i"}]}, set(), id="plain pod"),
        pytest.param(
            {"containers": [{"name": "c", "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}]}]},
            set(), id="restart rule with another action",
        ),
        pytest.param(
            {"containers": [{"name": "c", "restartPolicyRules": [RESTART_ALL]}]},
            {"RestartAllContainersOnContainerExits"}, id="container RestartAllContainers",
        ),
        pytest.param(
            {"containers": [{"name": "c"}], "initContainers": [{"name": "i", "restartPolicyRules": [RESTART_ALL]}]},
            {"RestartAllContainersOnContainerExits"}, id="init container RestartAllContainers",
        ),
        pytest.param({"hostNetwork": True}, set(), id="hostNetwork without hostUsers"),
        pytest.param({"hostNetwork": True, "hostUsers": True}, set(), id="hostNetwork hostUsers true"),
        pytest.param({"hostUsers": False}, set(), id="hostUsers false without hostNetwork"),
        pytest.param({"hostNetwork": True, "hostUsers": False}, {"UserNamespacesHostNetworkSupport"}, id="hostNetwork hostUsers false"),
        pytest.param(
            {"hostNetwork": True, "hostUsers": False, "containers": [{"name": "c", "restartPolicyRules": [RESTART_ALL]}]},
            {"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}, id="both",
        ),
        # InferForScheduling of the three update-only features is false whatever the spec.
        pytest.param(
            {"resources": {"requests": {"cpu": "1"}}, "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1"}}}]},
            set(), id="update-only features are never required",
        ),
    ],
)
def test_infer_for_pod_scheduling(spec, want):
    assert DEFAULT_FRAMEWORK.infer_for_pod_scheduling(spec, COMPONENT_VERSION) == frozenset(want)


@pytest.mark.parametrize(
    ("declared", "want"),
    [
        pytest.param([], set(), id="none"),
        pytest.param(["Unknown", "UserNamespacesHostNetworkSupport"], {"UserNamespacesHostNetworkSupport"}, id="unknown ignored"),
        pytest.param(
            ["RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"],
            {"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}, id="sorted",
        ),
        # walked as sorted, as Go's TryMap does: the earlier name is passed over
        pytest.param(
            ["UserNamespacesHostNetworkSupport", "RestartAllContainersOnContainerExits"],
            {"UserNamespacesHostNetworkSupport"}, id="unsorted",
        ),
    ],
)
def test_try_map(declared, want):
    assert DEFAULT_FRAMEWORK.try_map(declared) == frozenset(want)


def test_sign_pod_is_the_inferred_set():
    p = NodeDeclaredFeatures()
    plain = Pod(make_pod().name("a").obj())
    userns = Pod({"metadata": {"name": "b"}, "spec": {"hostNetwork": True, "hostUsers": False, "containers": [{"name": "c"}]}})
    assert p.sign_pod(plain) == ()
    assert p.sign_pod(userns) == ("UserNamespacesHostNetworkSupport",)
    assert plugin(mock_feature(FEATURE_1, True), version=None).sign_pod(plain) is None


# ------------------------------------------------------------------ in the default profile


@pytest.mark.parametrize("reuse_results", [False, True])
def test_default_profile_filters_nodes_without_the_feature(reuse_results):
    nodes = [
        make_node().name("plain").obj(),
        {**make_node().name("userns").obj(), "status": {**make_node().name("userns").obj().get("status", {}),
                                                          "declaredFeatures": ["UserNamespacesHostNetworkSupport"]}},
    ]
    needs = {"metadata": {"name": "needs", "namespace": "default"},
             "spec": {"hostNetwork": True, "hostUsers": False, "containers": [{"name": "c", "image": "i"}]}}
    needs_other = {"metadata": {"name": "needs-other", "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "i", "restartPolicyRules": [RESTART_ALL]}]}}
    r = run_profile([], nodes=nodes, pods=[make_pod().name("free").obj(), needs, needs_other], defaults=True,
                    reuse_results=reuse_results)
    assert r.status("default/free") == "Scheduled"
    assert r.node("default/needs") == "userns"
    assert r.filter_reasons("default/needs") == {"plain": [ERR_REASON_UNSATISFIED_REQUIREMENTS]}
    assert r.status("default/needs-other") == "Unschedulable"
    # (the PostFilter plugins' part of the message after this is theirs)
    assert r.message("default/needs-other").startswith(
        "0/2 nodes are available: 2 node(s) didn't match Pod's required features. "
    )
    # a pod requiring no feature: PreFilter skips the plugin, so its Filter is never called
    assert [c for c in r.calls("default/free") if c[1] == "NodeDeclaredFeatures"] == [
        ("PreFilter", "NodeDeclaredFeatures", "default/free", "-")
    ]
