"""TaintToleration, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go (v1.36.3).

kubesched follows v1.36.3 with its default gates: TaintTolerationComparisonOperators (alpha) is off,
so a ``Gt``/``Lt`` toleration tolerates nothing. Transcribed: the four "feature gate is disabled"
cases of TestTaintTolerationFilterWithFeatureGate. Not transcribed: the cases that turn the gate on
(TestTaintTolerationScore "Numeric Gt/Lt operator ...", TestTaintTolerationFilter "Pod with Gt/Lt
toleration ..." and the "feature gate is enabled" ones).
"""

from __future__ import annotations

import pytest

from kubesched.runtime.plugins.tainttoleration import ERR_REASON_UNTOLERATED, TaintToleration
from kubesched.sdk import (
    MAX_NODE_SCORE,
    ActionType,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeInfo,
    NodeScore,
    Pod,
    QueueingHint,
    Status,
)
from kubesched.testing import build_plugin, make_handle


def node_with_taints(name: str, taints: list[dict]) -> dict:
    return {"metadata": {"name": name}, "spec": {"taints": taints}}


def pod_with_tolerations(name: str, tolerations: list[dict]) -> dict:
    return {"metadata": {"name": name}, "spec": {"tolerations": tolerations}}


def taint(key: str, value: str, effect: str) -> dict:
    return {"key": key, "value": value, "effect": effect}


def tol(key: str, value: str = "", effect: str = "", operator: str = "") -> dict:
    t = {"key": key}
    if operator:
        t["operator"] = operator
    if value:
        t["value"] = value
    if effect:
        t["effect"] = effect
    return t


UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)


@pytest.mark.parametrize(
    ("pod", "nodes", "expected"),
    [
        pytest.param(
            pod_with_tolerations("pod1", [tol("foo", "bar", "PreferNoSchedule", "Equal")]),
            [
                node_with_taints("nodeA", [taint("foo", "bar", "PreferNoSchedule")]),
                node_with_taints("nodeB", [taint("foo", "blah", "PreferNoSchedule")]),
            ],
            [("nodeA", MAX_NODE_SCORE), ("nodeB", 0)],
            id="TestTaintTolerationScore/node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
        ),
        pytest.param(
            pod_with_tolerations(
                "pod1",
                [tol("cpu-type", "arm64", "PreferNoSchedule", "Equal"), tol("disk-type", "ssd", "PreferNoSchedule", "Equal")],
            ),
            [
                node_with_taints("nodeA", []),
                node_with_taints("nodeB", [taint("cpu-type", "arm64", "PreferNoSchedule")]),
                node_with_taints(
                    "nodeC", [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]
                ),
            ],
            [("nodeA", MAX_NODE_SCORE), ("nodeB", MAX_NODE_SCORE), ("nodeC", MAX_NODE_SCORE)],
            id="TestTaintTolerationScore/the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable taints a node has",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("foo", "bar", "PreferNoSchedule", "Equal")]),
            [
                node_with_taints("nodeA", []),
                node_with_taints("nodeB", [taint("cpu-type", "arm64", "PreferNoSchedule")]),
                node_with_taints(
                    "nodeC", [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]
                ),
            ],
            [("nodeA", MAX_NODE_SCORE), ("nodeB", 50), ("nodeC", 0)],
            id="TestTaintTolerationScore/the more intolerable taints a node has, the lower score it gets.",
        ),
        pytest.param(
            pod_with_tolerations(
                "pod1", [tol("cpu-type", "arm64", "NoSchedule", "Equal"), tol("disk-type", "ssd", "NoSchedule", "Equal")]
            ),
            [
                node_with_taints("nodeA", []),
                node_with_taints("nodeB", [taint("cpu-type", "arm64", "NoSchedule")]),
                node_with_taints(
                    "nodeC", [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]
                ),
            ],
            [("nodeA", MAX_NODE_SCORE), ("nodeB", MAX_NODE_SCORE), ("nodeC", 0)],
            id="TestTaintTolerationScore/only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function",
        ),
        pytest.param(
            pod_with_tolerations("pod1", []),
            [node_with_taints("nodeA", []), node_with_taints("nodeB", [taint("cpu-type", "arm64", "PreferNoSchedule")])],
            [("nodeA", MAX_NODE_SCORE), ("nodeB", 0)],
            id="TestTaintTolerationScore/Default behaviour No taints and tolerations, lands on node with no taints",
        ),
    ],
)
def test_score(pod, nodes, expected):
    handle = make_handle(nodes)
    p = build_plugin(TaintToleration, None, handle)
    state = CycleState()
    pod = Pod(pod)
    node_infos = handle.snapshot().list()
    assert p.pre_score(state, pod, node_infos) is None
    got = []
    for ni in node_infos:
        s = p.score(state, pod, ni)
        assert isinstance(s, int)
        got.append(NodeScore(ni.name, s))
    assert p.normalize_score(state, pod, got) is None
    assert [(s.name, s.score) for s in got] == expected


def test_score_without_pre_score_is_an_error():
    p = build_plugin(TaintToleration)
    score, status = p.score(CycleState(), Pod({}), NodeInfo(Node(node_with_taints("n", []))))
    assert score == 0
    assert status.code is Code.ERROR
    assert status.message == 'failed to read "PreScoreTaintToleration" from cycleState: not found'


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            pod_with_tolerations("pod1", []),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            UNTOLERATED,
            id="TestTaintTolerationFilter/A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user1", "NoSchedule")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            None,
            id="TestTaintTolerationFilter/A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user2", "NoSchedule", "Equal")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            UNTOLERATED,
            id="TestTaintTolerationFilter/A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("foo", effect="NoSchedule", operator="Exists")]),
            node_with_taints("nodeA", [taint("foo", "bar", "NoSchedule")]),
            None,
            id="TestTaintTolerationFilter/A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
        ),
        pytest.param(
            pod_with_tolerations(
                "pod1", [tol("dedicated", "user2", "NoSchedule", "Equal"), tol("foo", effect="NoSchedule", operator="Exists")]
            ),
            node_with_taints("nodeA", [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")]),
            None,
            id="TestTaintTolerationFilter/A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto the node",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("foo", "bar", "PreferNoSchedule", "Equal")]),
            node_with_taints("nodeA", [taint("foo", "bar", "NoSchedule")]),
            UNTOLERATED,
            id="TestTaintTolerationFilter/A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, can't be scheduled onto the node",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("foo", "bar", operator="Equal")]),
            node_with_taints("nodeA", [taint("foo", "bar", "NoSchedule")]),
            None,
            id="TestTaintTolerationFilter/The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user2", "NoSchedule", "Equal")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "PreferNoSchedule")]),
            None,
            id="TestTaintTolerationFilter/The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            pod_with_tolerations("pod1", []),
            node_with_taints("nodeA", [taint("dedicated", "user1", "PreferNoSchedule")]),
            None,
            id="TestTaintTolerationFilter/The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        ),
    ],
)
def test_filter(pod, node, want):
    p = build_plugin(TaintToleration)
    got = p.filter(CycleState(), Pod(pod), NodeInfo(Node(node)))
    if want is None:
        assert got is None
    else:
        assert got == want and got.code is want.code


SLA = "node.kubernetes.io/sla"


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            pod_with_tolerations("pod1", [tol(SLA, "750", "NoSchedule", "Gt")]),
            node_with_taints("nodeA", [taint(SLA, "950", "NoSchedule")]),
            UNTOLERATED,
            id="TestTaintTolerationFilterWithFeatureGate/Pod with Gt toleration cannot be scheduled when feature gate is disabled",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol(SLA, "950", "NoSchedule", "Lt")]),
            node_with_taints("nodeA", [taint(SLA, "800", "NoSchedule")]),
            UNTOLERATED,
            id="TestTaintTolerationFilterWithFeatureGate/Pod with Lt toleration cannot be scheduled when feature gate is disabled",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user1", "NoSchedule", "Equal"), tol(SLA, "750", "NoSchedule", "Gt")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            None,
            id="TestTaintTolerationFilterWithFeatureGate/Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user1", "NoSchedule", "Equal"), tol(SLA, "750", "NoSchedule", "Gt")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule"), taint(SLA, "950", "NoSchedule")]),
            UNTOLERATED,
            id="TestTaintTolerationFilterWithFeatureGate/Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled",
        ),
    ],
)
def test_filter_with_feature_gate_disabled(pod, node, want):
    p = build_plugin(TaintToleration)
    assert p.filter(CycleState(), Pod(pod), NodeInfo(Node(node))) == want
    # the batch form agrees
    assert p.filter_batch(CycleState(), Pod(pod), [NodeInfo(Node(node))]) == [want]


def test_score_gt_toleration_tolerates_nothing_with_the_gate_off():
    """Not a Go case: the "Numeric Gt operator" Score case with the gate at its default (off):
    the Gt toleration tolerates neither node's PreferNoSchedule taint, so both score alike."""
    nodes = [
        node_with_taints("nodeA", [taint(SLA, "800", "PreferNoSchedule")]),
        node_with_taints("nodeB", [taint(SLA, "999", "PreferNoSchedule")]),
    ]
    pod = Pod(pod_with_tolerations("pod1", [tol(SLA, "950", "PreferNoSchedule", "Gt")]))
    handle = make_handle(nodes)
    p = build_plugin(TaintToleration, None, handle)
    state = CycleState()
    infos = [handle.snapshot().get(n["metadata"]["name"]) for n in nodes]
    assert p.pre_score(state, pod, infos) is None
    scores = [NodeScore(ni.node.name, p.score(state, pod, ni)) for ni in infos]
    assert p.normalize_score(state, pod, scores) is None
    assert [(s.name, s.score) for s in scores] == [("nodeA", 0), ("nodeB", 0)]


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "expected"),
    [
        pytest.param(None, None, "not-a-node", QueueingHint.QUEUE, id="TestIsSchedulableAfterNodeChange/backoff-wrong-new-object"),
        pytest.param(
            None,
            "not-a-node",
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterNodeChange/backoff-wrong-old-object",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user2", "NoSchedule", "Equal")]),
            None,
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterNodeChange/skip-queue-on-untoleratedtaint-node-added",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user2", "NoSchedule", "Equal")]),
            None,
            node_with_taints("nodeA", [taint("dedicated", "user2", "NoSchedule")]),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterNodeChange/queue-on-toleratedtaint-node-added",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user2", "NoSchedule", "Equal")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule"), taint("dedicated", "user3", "NoSchedule")]),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterNodeChange/skip-unrelated-change",
        ),
        pytest.param(
            pod_with_tolerations("pod1", [tol("dedicated", "user2", "NoSchedule", "Equal")]),
            node_with_taints("nodeA", [taint("dedicated", "user1", "NoSchedule")]),
            node_with_taints("nodeA", [taint("dedicated", "user2", "NoSchedule")]),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterNodeChange/queue-on-taint-change",
        ),
    ],
)
def test_is_schedulable_after_node_change(pod, old_obj, new_obj, expected):
    p = build_plugin(TaintToleration)
    assert p.is_schedulable_after_node_change(pod, old_obj, new_obj) is expected


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "expected"),
    [
        pytest.param({}, None, "not-a-pod", QueueingHint.QUEUE, id="Test_isSchedulableAfterPodTolerationChange/backoff-wrong-new-object"),
        pytest.param({}, "not-a-pod", {}, QueueingHint.QUEUE, id="Test_isSchedulableAfterPodTolerationChange/backoff-wrong-old-object"),
        pytest.param(
            {"metadata": {"name": "pod-1", "namespace": "ns-1", "uid": "uid0"}},
            {"metadata": {"name": "pod-2", "namespace": "ns-1", "uid": "uid1"}},
            {
                "metadata": {"name": "pod-2", "namespace": "ns-1", "uid": "uid1"},
                "spec": {"tolerations": [{"key": "foo", "effect": "NoSchedule"}]},
            },
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterPodTolerationChange/skip-updates-other-pod",
        ),
        pytest.param(
            {"metadata": {"name": "pod-1", "namespace": "ns-1"}},
            {"metadata": {"name": "pod-1", "namespace": "ns-1"}},
            {"metadata": {"name": "pod-1", "namespace": "ns-1"}, "spec": {"tolerations": [{"key": "foo", "effect": "NoSchedule"}]}},
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterPodTolerationChange/queue-on-toleration-added",
        ),
    ],
)
def test_is_schedulable_after_pod_toleration_change(pod, old_obj, new_obj, expected):
    p = build_plugin(TaintToleration)
    assert p.is_schedulable_after_pod_toleration_change(pod, old_obj, new_obj) is expected


def test_events_to_register():
    p = build_plugin(TaintToleration)
    evs = p.events_to_register()
    assert [(e.event.resource, e.event.action, e.hint) for e in evs] == [
        (EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_TAINT, p.is_schedulable_after_node_change),
        (EventResource.POD.value, ActionType.UPDATE_POD_TOLERATION, p.is_schedulable_after_pod_toleration_change),
    ]
