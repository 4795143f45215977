"""kube-scheduler's default plugins (a profile with only a schedulerName) on a real API server:
200 pods exactly fill 20 nodes, so any accounting error leaves a pod Pending or overcommits a
node."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from e2e_sched import (
    GROUP_LABEL,
    KUBESCHED_CONTROLLER,
    Kubesched,
    assert_within_allocatable,
    make_group_nodes,
    make_pods,
    pod_condition,
    scheduler_config,
    wait_bound,
    wait_scheduled_events,
)

NODES = 20
PODS = 200  # 10 x 100m on each 1-cpu node: exactly full


def test_default_profile_fills_nodes_exactly(
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    group = f"fill-{test_id}"
    name = f"kubesched-{test_id}"
    nodes = make_group_nodes(core_v1, group, NODES, cpu="1", memory="4Gi", pods="110")
    ks = run_kubesched(scheduler_config([{"schedulerName": name}]))

    pods = make_pods(
        core_v1,
        [f"fill-{i:03d}" for i in range(PODS)],
        namespace,
        cpu="100m",
        memory="128Mi",
        scheduler_name=name,
        node_selector={GROUP_LABEL: group},
    )
    placement = wait_bound(core_v1, namespace, pods, timeout=180)

    # Every pod on one of this test's nodes, no node over its allocatable (cpu, memory, pods);
    # with exactly 200 slots that means 10 per node.
    assert set(placement.values()) <= set(nodes)
    per_node = assert_within_allocatable(core_v1, nodes)
    assert per_node == dict.fromkeys(nodes, 10)
    assert Counter(placement.values()) == Counter(per_node)

    # Exactly one Scheduled event per pod, naming the node it is bound to; PodScheduled=True.
    events = wait_scheduled_events(events_v1, namespace, pods, timeout=60)
    for pod in pods:
        evs = events[pod]
        assert len(evs) == 1, f"{pod}: {len(evs)} Scheduled events: {[e.note for e in evs]}"
        assert evs[0].note == f"Successfully assigned {namespace}/{pod} to {placement[pod]}"
        assert evs[0].reporting_controller == KUBESCHED_CONTROLLER
    for p in core_v1.list_namespaced_pod(namespace).items:
        c = pod_condition(p)
        assert c is not None and c.status == "True", (p.metadata.name, c)

    # One successful scheduling cycle per pod and no failed one: nothing was scheduled twice.
    assert ks.metric("scheduler_schedule_attempts_total", profile=name, result="scheduled") == PODS
    assert not ks.metric("scheduler_schedule_attempts_total", profile=name, result="unschedulable")
    assert not ks.metric("scheduler_schedule_attempts_total", profile=name, result="error")
