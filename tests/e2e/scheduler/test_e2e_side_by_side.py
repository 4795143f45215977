"""kube-scheduler and kubesched on the same API server: each binds only the pods that name it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from e2e_sched import (
    GROUP_LABEL,
    KUBESCHED_CONTROLLER,
    Kubesched,
    events_by_pod,
    make_group_nodes,
    make_pods,
    scheduler_config,
    wait_bound,
    wait_scheduled_events,
)

PER_SCHEDULER = 6


def test_kube_scheduler_and_kubesched_side_by_side(
    control_plane: Any,
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    tmp_path: Path,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    group = f"sbs-{test_id}"
    nodes = make_group_nodes(core_v1, group, 2)
    ks_name = f"ks-{test_id}"
    ours = f"kubesched-{test_id}"
    nobody = f"nobody-{test_id}"

    ks_config = tmp_path / "kube-scheduler.yaml"
    ks_config.write_text(yaml.safe_dump(scheduler_config([{"schedulerName": ks_name}])))
    kube_scheduler = control_plane.start_kube_scheduler(ks_config)
    try:
        kubesched = run_kubesched(scheduler_config([{"schedulerName": ours}]))
        sel = {GROUP_LABEL: group}
        # A pod for neither scheduler first: both have seen it by the time the others are bound.
        make_pods(core_v1, ["orphan"], namespace, scheduler_name=nobody, node_selector=sel)
        theirs = make_pods(
            core_v1,
            [f"ks-{i}" for i in range(PER_SCHEDULER)],
            namespace,
            scheduler_name=ks_name,
            node_selector=sel,
        )
        mine = make_pods(
            core_v1,
            [f"kubesched-{i}" for i in range(PER_SCHEDULER)],
            namespace,
            scheduler_name=ours,
            node_selector=sel,
        )

        placement = wait_bound(core_v1, namespace, theirs + mine, timeout=120)
        assert set(placement.values()) <= set(nodes)
        events = wait_scheduled_events(events_v1, namespace, theirs + mine, timeout=60)
        for pod in theirs + mine:
            evs = events[pod]
            assert len(evs) == 1, (pod, [(e.reporting_controller, e.note) for e in evs])
            ev = evs[0]
            assert ev.note == f"Successfully assigned {namespace}/{pod} to {placement[pod]}"
            # kube-scheduler's recorder is named after the profile's schedulerName
            # ("default-scheduler" for the default profile); kubesched's is "kubesched".
            expected = ks_name if pod in theirs else KUBESCHED_CONTROLLER
            assert ev.reporting_controller == expected, (pod, ev.reporting_controller)

        # kubesched ran exactly one scheduling cycle per pod of its own, none for the others.
        assert (
            kubesched.metric("scheduler_schedule_attempts_total", profile=ours, result="scheduled")
            == PER_SCHEDULER
        )
        # Neither touched the pod of a third scheduler: unbound, no event, no condition.
        orphan = core_v1.read_namespaced_pod("orphan", namespace)
        assert orphan.spec.node_name is None
        assert not orphan.status.conditions
        assert "orphan" not in events_by_pod(events_v1, namespace)
        assert kube_scheduler.poll() is None
    finally:
        kube_scheduler.terminate()
        kube_scheduler.wait(30)
