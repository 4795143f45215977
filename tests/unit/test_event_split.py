"""A node or pod update is one cluster event per changed property, moved one by one, as
kube-scheduler v1.36.3 does (events.go NodeSchedulingPropertiesChange /
PodSchedulingPropertiesChange, eventhandlers.go's loops): an event matches a registration only
when its action is not above the registered mask (MatchClusterEvents), so an update OR-ing two
properties would miss the plugins that registered the lower one."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.scheduler import node_update_events
from kubesched.sdk import ActionType, ClusterEvent, Node
from kubesched.testing import make_node, make_pod, run_profile


def _node(**kw: Any) -> Node:
    w = make_node().name("n")
    if "unschedulable" in kw:
        w = w.unschedulable(kw["unschedulable"])
    if "capacity" in kw:
        w = w.capacity(**kw["capacity"])
    if "taints" in kw:
        w = w.taints(kw["taints"])
    o = w.obj()
    o["metadata"].setdefault("labels", {}).update(kw.get("labels", {}))
    if "annotations" in kw:
        o["metadata"]["annotations"] = kw["annotations"]
    if "conditions" in kw:
        o.setdefault("status", {})["conditions"] = kw["conditions"]
    return Node(o)


UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    "new, old, want",
    [
        pytest.param(_node(unschedulable=False), _node(unschedulable=False), [],
                     id="TestNodeSchedulingPropertiesChange/no specific changed applied"),
        pytest.param(_node(unschedulable=False), _node(unschedulable=True), [ActionType.UPDATE_NODE_TAINT],
                     id="TestNodeSchedulingPropertiesChange/only node spec unavailable changed"),
        pytest.param(_node(capacity={"cpu": "1000m"}), _node(capacity={"cpu": "200m"}), [ActionType.UPDATE_NODE_ALLOCATABLE],
                     id="TestNodeSchedulingPropertiesChange/only node allocatable changed"),
        pytest.param(_node(labels={"foo": "bar"}), _node(labels={"foo": "fuz"}), [ActionType.UPDATE_NODE_LABEL],
                     id="TestNodeSchedulingPropertiesChange/only node label changed"),
        pytest.param(
            _node(taints=[{"key": UNSCHEDULABLE_TAINT, "value": "", "effect": "NoSchedule"}]),
            _node(taints=[{"key": UNSCHEDULABLE_TAINT, "value": "foo", "effect": "NoSchedule"}]),
            [ActionType.UPDATE_NODE_TAINT],
            id="TestNodeSchedulingPropertiesChange/only node taint changed"),
        pytest.param(_node(annotations={"foo": "bar"}), _node(annotations={"foo": "fuz"}), [ActionType.UPDATE_NODE_ANNOTATION],
                     id="TestNodeSchedulingPropertiesChange/only node annotation changed"),
        pytest.param(
            _node(), _node(conditions=[{"type": "Ready", "status": "True", "reason": "Ready", "message": "Ready"}]),
            [ActionType.UPDATE_NODE_CONDITION],
            id="TestNodeSchedulingPropertiesChange/only node condition changed"),
        pytest.param(
            _node(labels={"foo": "bar"}, taints=[{"key": UNSCHEDULABLE_TAINT, "value": "", "effect": "NoSchedule"}]),
            _node(taints=[{"key": UNSCHEDULABLE_TAINT, "value": "foo", "effect": "NoSchedule"}]),
            [ActionType.UPDATE_NODE_LABEL, ActionType.UPDATE_NODE_TAINT],
            id="TestNodeSchedulingPropertiesChange/both node label and node taint changed"),
        # kubesched's own cases
        pytest.param(_node(unschedulable=True), _node(unschedulable=False), [],
                     id="cordoning is no event (only becoming schedulable is)"),
        pytest.param(
            _node(conditions=[{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-24T00:00:10Z"}]),
            _node(conditions=[{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-24T00:00:00Z"}]),
            [], id="a heartbeat alone is no condition change"),
        pytest.param(
            _node(capacity={"cpu": "2"}, conditions=[{"type": "Ready", "status": "True"}]),
            _node(capacity={"cpu": "1"}),
            [ActionType.UPDATE_NODE_ALLOCATABLE, ActionType.UPDATE_NODE_CONDITION],
            id="a kubelet's first status: allocatable and conditions, two events"),
    ],
)
def test_node_scheduling_properties_change(new: Node, old: Node, want: list[ActionType]) -> None:
    assert node_update_events(old, new) == want


def test_an_or_of_two_properties_would_not_match_the_lower_registration() -> None:
    """Why the events are split: MatchClusterEvents requires the incoming action not to exceed
    the registered mask."""
    registered = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)
    assert registered.matches(ClusterEvent("Node", ActionType.UPDATE_NODE_ALLOCATABLE))
    assert not registered.matches(ClusterEvent("Node", ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_CONDITION))


def test_a_pod_rejected_for_cpu_is_requeued_by_a_status_update_that_also_changes_conditions() -> None:
    """The node that a kubelet registers gets allocatable and its Ready condition in one status
    update: the pod NodeResourcesFit rejected is retried and bound (it stayed pending before)."""
    node = make_node().name("n1").capacity(cpu="1", memory="4Gi").obj()
    result = run_profile(
        {},
        nodes=[node],
        pods=[make_pod().name("big").req(cpu="2").obj()],
        defaults=True,
    )
    assert result.node("big") is None
    result.cluster.store.patch(
        "v1", "Node", "n1",
        {"status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "False"}]}},
    )
    result = result.rerun()
    assert result.node("big") == "n1"
