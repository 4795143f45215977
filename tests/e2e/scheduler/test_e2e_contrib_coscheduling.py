"""Coscheduling (kubesched-coscheduling) on a real API server: the PodGroup CRD installed from
the package, a gang of 3 whose nodes hold only 2 of them is never partly bound; a third node lets
the whole gang be bound at once."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from e2e_contrib import BindWatcher, ensure_podgroup_crd, make_owned_pod, make_pod_group
from e2e_sched import (
    GROUP_LABEL,
    KUBESCHED_CONTROLLER,
    Kubesched,
    events_by_pod,
    make_group_nodes,
    scheduler_config,
    wait_bound,
    wait_scheduled_events,
)
from helpers import make_node, wait_for

PERMIT_WAIT = 5  # permitWaitingTimeSeconds
# podGroupBackoffSeconds: 0. With kube-scheduler 1.36's queue (SchedulerPopFromBackoffQ) a
# requeued member is tried at once, and a group backoff then rejects it as "failed recently" until
# an event comes that ends the backoff, which may not (the plugin's README says so).
GROUP_BACKOFF = 0
MEMBERS = 3
#: How long the incomplete gang is watched: several permit waits.
INCOMPLETE_FOR = 3 * PERMIT_WAIT
#: The note of a member released from Permit (kube-scheduler reports it as a 1-node FitError).
HELD_AND_RELEASED = re.compile(
    r"0/1 nodes are available: 1 (optimistic rejection in PostFilter|rejection in Unreserve"
    r"|rejected due to timeout)"
)


def gang_profile(scheduler_name: str) -> dict[str, Any]:
    return {
        "schedulerName": scheduler_name,
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {
                "enabled": [{"name": "Coscheduling"}],
                "disabled": [{"name": "PrioritySort"}],
            },
        },
        "pluginConfig": [
            {
                "name": "Coscheduling",
                "args": {
                    "permitWaitingTimeSeconds": PERMIT_WAIT,
                    "podGroupBackoffSeconds": GROUP_BACKOFF,
                },
            }
        ],
    }


def test_coscheduling_gang_all_or_nothing(
    kube_client: Any,
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    from kubesched_coscheduling import POD_GROUP_LABEL

    # The CRD first: kubesched resolves the PodGroup kind (for its informer) when it starts.
    ensure_podgroup_crd(kube_client)
    group = f"gang-{test_id}"
    scheduler = f"gang-{test_id}"
    # 2 cpus per node, 1500m per member: one member per node, so 2 nodes hold 2 of the 3.
    nodes = make_group_nodes(core_v1, group, 2, cpu="2", memory="8Gi")
    ks = run_kubesched(scheduler_config([gang_profile(scheduler)]))
    assert "PodGroup" in ks.log_text(), "kubesched did not start a PodGroup informer"

    make_pod_group(kube_client, "trainer", namespace, {"minMember": MEMBERS})
    members = [f"trainer-{i}" for i in range(MEMBERS)]
    with BindWatcher(core_v1, namespace) as watcher:
        for name in members:
            make_owned_pod(
                core_v1,
                name,
                namespace,
                None,
                scheduler_name=scheduler,
                group=group,
                labels={POD_GROUP_LABEL: "trainer"},
                cpu="1500m",
                memory="1Gi",
            )
        created = time.monotonic()

        # 1. Room for 2 of 3: the scheduler tries every member (each gets a FailedScheduling
        # event), and during several permit waits no member is ever bound.
        def assert_none_bound() -> None:
            assert not watcher.snapshot(), f"part of an incomplete gang was bound: {watcher.bound}"

        def failures() -> dict[str, list[Any]]:
            return events_by_pod(events_v1, namespace, "FailedScheduling")

        while not set(members) <= set(failures()):
            assert_none_bound()
            assert time.monotonic() < created + 30, f"FailedScheduling events: {failures()}"
            time.sleep(0.2)
        for m in members:
            assert all(e.reporting_controller == KUBESCHED_CONTROLLER for e in failures()[m])
        while time.monotonic() < created + INCOMPLETE_FOR:
            assert_none_bound()
            time.sleep(0.2)
        assert ks.alive()
        assert_none_bound()
        for p in core_v1.list_namespaced_pod(namespace).items:
            assert p.spec.node_name is None, (p.metadata.name, p.spec.node_name)
        # Members were placed and held at Permit, then released when the third did not fit (or
        # their wait ran out): the gang was really tried together, not merely filtered out.
        # (events are written asynchronously and the first round may be a PreFilter rejection
        # while the siblings are still being created: poll, and keep checking nothing is bound)
        deadline = time.monotonic() + 45
        while True:
            notes = [e.note for evs in failures().values() for e in evs]
            if any(HELD_AND_RELEASED.search(n) for n in notes):
                break
            assert_none_bound()
            assert time.monotonic() < deadline, notes
            time.sleep(0.5)

        # 2. A third node: the whole gang is bound, one member per node, all at once.
        third = f"{group}-n{len(nodes):02d}"
        make_node(core_v1, third, cpu="2", memory="8Gi", labels={GROUP_LABEL: group})
        placement = wait_bound(core_v1, namespace, members, timeout=90)
        assert sorted(placement.values()) == sorted([*nodes, third]), placement
        wait_for(lambda: len(watcher.snapshot()) == MEMBERS, timeout=10, message="the watch")
        bound = watcher.snapshot()

    # No partial gang: the three bindings came together, not one or two members bound while the
    # third waited (a member held longer than the permit wait would have been released).
    times = sorted(t for t, _ in bound.values())
    spread = times[-1] - times[0]
    assert spread < PERMIT_WAIT, f"gang bound over {spread:.1f}s: {bound}"
    assert {m: n for m, (_, n) in bound.items()} == placement
    evs = wait_scheduled_events(events_v1, namespace, members, timeout=30)
    for m in members:
        assert [e.note for e in evs[m]] == [
            f"Successfully assigned {namespace}/{m} to {placement[m]}"
        ]
    assert ks.alive()
