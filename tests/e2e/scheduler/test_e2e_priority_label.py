"""The PriorityLabel walk-through (docs' quickstart) on a real API server: a contrib plugin,
pip-installed, named in a KubeSchedulerConfiguration, filtering and scoring real Nodes."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from e2e_sched import (
    KUBESCHED_CONTROLLER,
    Kubesched,
    events_by_pod,
    make_group_nodes,
    pod_condition,
    priority_label_profile,
    scheduler_config,
    wait_bound,
    wait_event,
)
from helpers import make_pod, wait_for

SYNC_LABEL = "e2e.kubesched.io/sync"
FAILED_NOTE = re.compile(
    r"0/(\d+) nodes are available: (\d+) node\(s\) didn't have label priority\."
)


@pytest.fixture
def two_nodes(core_v1: Any, test_id: str) -> Iterator[list[str]]:
    nodes = make_group_nodes(core_v1, f"pl-{test_id}", 2)
    yield nodes
    # The profile sees every node of the cluster: leave no `priority` label behind for others.
    for n in nodes:
        core_v1.patch_node(n, {"metadata": {"labels": {"priority": None, SYNC_LABEL: None}}})


def test_priority_label_walkthrough(
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    two_nodes: list[str],
    run_kubesched: Callable[..., Kubesched],
) -> None:
    first, second = two_nodes
    pl = f"pl-{test_id}"
    # A second profile (kube-scheduler's defaults) in the same process only serves as a barrier:
    # once its pod, which selects a fresh label, is bound to a node, the scheduler has processed
    # that node update, and with it the `priority` label changed in the same patch. Without it,
    # a new pod could race the node update through the two separate watches.
    # (kube-scheduler's validation wants the same queueSort stanza in every profile.)
    sync = f"sync-{test_id}"
    sync_profile = {
        "schedulerName": sync,
        "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
    }
    ks = run_kubesched(scheduler_config([priority_label_profile(pl), sync_profile]))

    def relabel(node: str, value: str) -> None:
        token = uuid.uuid4().hex[:10]
        core_v1.patch_node(node, {"metadata": {"labels": {"priority": value, SYNC_LABEL: token}}})
        name = f"sync-{token}"
        make_pod(core_v1, name, namespace, scheduler_name=sync, node_selector={SYNC_LABEL: token})
        assert wait_bound(core_v1, namespace, [name])[name] == node

    # 1. No node has the label: Pending, FailedScheduling with kube-scheduler's message format.
    make_pod(core_v1, "p1", namespace, scheduler_name=pl)
    ev = wait_event(events_v1, namespace, "p1", "FailedScheduling")
    m = FAILED_NOTE.fullmatch(ev.note)
    assert m, ev.note
    node_count = len(core_v1.list_node().items)
    assert int(m.group(1)) == int(m.group(2)) == node_count >= 2, (ev.note, node_count)
    assert ev.type == "Warning"
    assert ev.action == "Scheduling"
    assert ev.reporting_controller == KUBESCHED_CONTROLLER
    assert ev.regarding.namespace == namespace

    def unschedulable_condition() -> Any:
        c = pod_condition(core_v1.read_namespaced_pod("p1", namespace))
        return c if c is not None and c.status == "False" else None

    cond = wait_for(unschedulable_condition, timeout=30, message="PodScheduled=False on p1")
    assert cond.reason == "Unschedulable"
    assert cond.message == ev.note
    assert core_v1.read_namespaced_pod("p1", namespace).spec.node_name is None

    # 2. One node labelled: the pending pod is moved by the node update and bound there.
    core_v1.patch_node(first, {"metadata": {"labels": {"priority": "5"}}})
    assert wait_bound(core_v1, namespace, ["p1"], timeout=60) == {"p1": first}

    # 3. Both labelled: a new pod goes to the higher value.
    relabel(second, "10")
    make_pod(core_v1, "p2", namespace, scheduler_name=pl)
    assert wait_bound(core_v1, namespace, ["p2"]) == {"p2": second}

    # 4. Relabelled: a new pod follows the highest value back to the first node.
    relabel(first, "20")
    make_pod(core_v1, "p3", namespace, scheduler_name=pl)
    assert wait_bound(core_v1, namespace, ["p3"]) == {"p3": first}

    # Each pod was bound once, by kubesched, with kube-scheduler's Scheduled event.
    expected = {"p1": first, "p2": second, "p3": first}

    def scheduled() -> dict[str, list[Any]] | None:
        evs = events_by_pod(events_v1, namespace, "Scheduled")
        return evs if set(expected) <= set(evs) else None

    evs = wait_for(scheduled, timeout=30, message="Scheduled events")
    for pod, node in expected.items():
        assert [e.note for e in evs[pod]] == [f"Successfully assigned {namespace}/{pod} to {node}"]
        assert evs[pod][0].reporting_controller == KUBESCHED_CONTROLLER
        c = pod_condition(core_v1.read_namespaced_pod(pod, namespace))
        assert c is not None and c.status == "True"
    assert ks.alive()
