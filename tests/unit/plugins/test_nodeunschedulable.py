"""NodeUnschedulable, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go (v1.36.3)."""

from __future__ import annotations

import pytest

from kubesched.runtime.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from kubesched.sdk import (
    ActionType,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
)
from kubesched.testing import build_plugin, make_pod

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


def node(unschedulable: bool, taints: list[dict] | None = None) -> dict:
    spec: dict = {"unschedulable": unschedulable}
    if taints is not None:
        spec["taints"] = taints
    return {"spec": spec}


@pytest.mark.parametrize(
    ("pod", "node_obj", "want"),
    [
        pytest.param(
            {},
            node(True),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE),
            id="TestNodeUnschedulable/Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param({}, node(False), None, id="TestNodeUnschedulable/Schedule pod to normal node"),
        pytest.param(
            {"spec": {"tolerations": [{"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule"}]}},
            node(True),
            None,
            id="TestNodeUnschedulable/Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        # Not a Go case: v1.36 passes TaintTolerationComparisonOperators (alpha, off) to
        # TolerationsTolerateTaint, so a Gt toleration does not tolerate the unschedulable taint.
        pytest.param(
            {"spec": {"tolerations": [{"key": UNSCHEDULABLE_TAINT_KEY, "operator": "Gt", "value": "1", "effect": "NoSchedule"}]}},
            node(True),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE),
            id="Gt toleration with the comparison operators gate off",
        ),
    ],
)
def test_filter(pod, node_obj, want):
    p = build_plugin(NodeUnschedulable)
    got = p.filter(CycleState(), Pod(pod), NodeInfo(Node(node_obj)))
    if want is None:
        assert got is None
    else:
        assert got == want and got.code is want.code


@pytest.mark.parametrize(
    ("old_obj", "new_obj", "expected"),
    [
        pytest.param(None, "not-a-node", QueueingHint.QUEUE, id="TestIsSchedulableAfterNodeChange/error-wrong-new-object"),
        pytest.param("not-a-node", node(True), QueueingHint.QUEUE, id="TestIsSchedulableAfterNodeChange/error-wrong-old-object"),
        pytest.param(None, node(True), QueueingHint.SKIP, id="TestIsSchedulableAfterNodeChange/skip-queue-on-unschedulable-node-added"),
        pytest.param(None, node(False), QueueingHint.QUEUE, id="TestIsSchedulableAfterNodeChange/queue-on-schedulable-node-added"),
        pytest.param(
            node(True),
            node(True, [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterNodeChange/skip-unrelated-change-unschedulable-true",
        ),
        pytest.param(
            node(False),
            node(False, [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterNodeChange/skip-unrelated-change-unschedulable-false",
        ),
        pytest.param(node(True), node(False), QueueingHint.QUEUE, id="TestIsSchedulableAfterNodeChange/queue-on-unschedulable-field-change"),
    ],
)
def test_is_schedulable_after_node_change(old_obj, new_obj, expected):
    p = build_plugin(NodeUnschedulable)
    assert p.is_schedulable_after_node_change({}, old_obj, new_obj) is expected


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "expected"),
    [
        pytest.param({}, None, "not-a-pod", QueueingHint.QUEUE, id="TestIsSchedulableAfterPodTolerationChange/error-wrong-new-object"),
        pytest.param({}, "not-a-pod", {}, QueueingHint.QUEUE, id="TestIsSchedulableAfterPodTolerationChange/error-wrong-old-object"),
        pytest.param(
            make_pod().uid("uid").obj(),
            make_pod().uid("different-uid").obj(),
            make_pod().uid("different-uid").toleration(UNSCHEDULABLE_TAINT_KEY, operator="Exists").obj(),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPodTolerationChange/skip-different-pod-update",
        ),
        pytest.param(
            make_pod().uid("uid").obj(),
            make_pod().uid("uid").obj(),
            make_pod().uid("uid").toleration(UNSCHEDULABLE_TAINT_KEY, operator="Exists").obj(),
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterPodTolerationChange/queue-when-the-unsched-pod-gets-toleration",
        ),
        pytest.param(
            make_pod().uid("uid").obj(),
            make_pod().uid("uid").obj(),
            make_pod().uid("uid").toleration("unrelated-key", operator="Exists").obj(),
            QueueingHint.SKIP,
            id="TestIsSchedulableAfterPodTolerationChange/skip-when-the-unsched-pod-gets-unrelated-toleration",
        ),
    ],
)
def test_is_schedulable_after_pod_toleration_change(pod, old_obj, new_obj, expected):
    p = build_plugin(NodeUnschedulable)
    assert p.is_schedulable_after_pod_toleration_change(pod, old_obj, new_obj) is expected


def test_events_to_register():
    p = build_plugin(NodeUnschedulable)
    evs = p.events_to_register()
    assert [(e.event.resource, e.event.action, e.hint) for e in evs] == [
        (EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_TAINT, p.is_schedulable_after_node_change),
        (EventResource.POD.value, ActionType.UPDATE_POD_TOLERATION, p.is_schedulable_after_pod_toleration_change),
    ]
