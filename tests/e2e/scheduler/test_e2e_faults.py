"""Faults: an API server crash mid-run, an expired watch (410 Gone -> relist), leader election
with a crashing leader, a clean hand-over and a stolen lease."""

from __future__ import annotations

import base64
import datetime
import json
import os
import signal
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from e2e_sched import (
    GROUP_LABEL,
    Kubesched,
    assert_within_allocatable,
    create_pod_retrying,
    make_group_nodes,
    make_pods,
    scheduler_config,
    wait_bound,
    wait_scheduled_events,
)
from helpers import wait_for
from kubernetes import client

RELIST_LOG = "watch of Pod expired (410 Gone): relisting"
OUTAGE_SECONDS = 8.0


def _etcd(control_plane: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """etcd's v3 JSON gateway (etcdctl is not available)."""
    req = urllib.request.Request(
        control_plane.etcd_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _etcd_revision(control_plane: Any) -> int:
    return int(_etcd(control_plane, "/v3/kv/range", {"key": "AA=="})["header"]["revision"])


def _assert_one_scheduled_event_each(
    events_v1: Any, namespace: str, pods: list[str], placement: dict[str, str]
) -> None:
    events = wait_scheduled_events(events_v1, namespace, pods, timeout=90)
    for pod in pods:
        notes = [e.note for e in events[pod]]
        assert notes == [f"Successfully assigned {namespace}/{pod} to {placement[pod]}"], (
            pod,
            notes,
        )


# ---------------------------------------------------------------------------------------------
# 4a. the API server is killed (SIGKILL) and restarted while pods are created and scheduled


def test_apiserver_crash_mid_run(
    control_plane: Any,
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    group = f"crash-{test_id}"
    name = f"kubesched-{test_id}"
    nodes = make_group_nodes(core_v1, group, 3, cpu="2")
    # A low client QPS keeps bindings and events queued in kubesched when the API server dies.
    ks = run_kubesched(
        scheduler_config([{"schedulerName": name}], clientConnection={"qps": 8, "burst": 4}),
        verbosity=5,
    )
    pods = [f"churn-{i:02d}" for i in range(40)]
    errors: list[BaseException] = []

    def create_all() -> None:
        try:
            for p in pods:
                create_pod_retrying(
                    core_v1, p, namespace, scheduler_name=name, node_selector={GROUP_LABEL: group}
                )
                time.sleep(0.05)
        except BaseException as e:
            errors.append(e)

    creator = threading.Thread(target=create_all, name="pod-creator")
    creator.start()
    try:
        # Crash the API server once kubesched is busy: some pods bound, more being created.
        def some_bound() -> bool:
            items = core_v1.list_namespaced_pod(namespace).items
            return sum(1 for p in items if p.spec.node_name) >= 5

        wait_for(some_bound, timeout=60, message="the first pods to be bound")
        try:
            control_plane.kill_apiserver()
            # Down for longer than kubesched retries a single request (bindings, events), so
            # bindings fail and are requeued, and writes must outlast the outage.
            time.sleep(OUTAGE_SECONDS)
        finally:
            control_plane.restart_apiserver()  # the session's control plane must come back
    finally:
        creator.join(180)
    assert not errors, errors
    assert not creator.is_alive()

    placement = wait_bound(core_v1, namespace, pods, timeout=150)
    assert set(placement.values()) <= set(nodes)
    assert_within_allocatable(core_v1, nodes)
    _assert_one_scheduled_event_each(events_v1, namespace, pods, placement)
    assert ks.alive(), ks.log_tail()
    wait_for(ks.ready, timeout=60, message="kubesched /readyz after the API server restart")


# ---------------------------------------------------------------------------------------------
# 4b. an expired watch: 410 Gone -> relist, nothing missed


def test_expired_watch_relists_and_misses_nothing(
    control_plane: Any,
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    """kubesched is frozen (SIGSTOP: a partition, a long pause) while the API server restarts,
    pods are created and etcd is compacted; when it resumes, its watches resume from a
    resourceVersion that the new API server cannot serve (410 Gone), so it must relist.

    What makes the 410 deterministic: a restarted kube-apiserver initialises its watch cache
    from a list at the current etcd revision R and answers a watch from any resourceVersion
    older than R with "too old resource version" (410). A watch from exactly R is served, so a
    revision must pass between the informer's last resourceVersion and the restart without the
    informer seeing it (a bookmark would carry it). The revision is bumped by a write straight
    into etcd (a key outside /registry) while the API server is down, when no bookmark can be
    sent. Compacting etcd afterwards also makes the old revision unservable from storage."""
    group = f"relist-{test_id}"
    name = f"kubesched-{test_id}"
    make_group_nodes(core_v1, group, 1)
    sel = {GROUP_LABEL: group}
    ks = run_kubesched(scheduler_config([{"schedulerName": name}]))
    make_pods(core_v1, ["before"], namespace, scheduler_name=name, node_selector=sel)
    wait_bound(core_v1, namespace, ["before"])  # the informers are watching
    assert RELIST_LOG not in ks.log_text()

    during = [f"during-{i}" for i in range(5)]
    os.kill(ks.pid, signal.SIGSTOP)
    try:
        try:
            control_plane.kill_apiserver()
            before = _etcd_revision(control_plane)
            _etcd(
                control_plane,
                "/v3/kv/put",
                {"key": _b64(f"/kubesched-e2e/{test_id}"), "value": _b64("x")},
            )
            assert _etcd_revision(control_plane) > before
        finally:
            control_plane.restart_apiserver()  # the session's control plane must come back
        wait_for(
            lambda: core_v1.read_namespace(namespace), timeout=30, message="the API server back"
        )
        make_pods(core_v1, during, namespace, scheduler_name=name, node_selector=sel)
        rev = _etcd_revision(control_plane)
        _etcd(control_plane, "/v3/kv/compaction", {"revision": str(rev), "physical": True})
        # nothing of this was seen by kubesched yet
        assert all(
            not p.spec.node_name
            for p in core_v1.list_namespaced_pod(namespace).items
            if p.metadata.name in during
        )
    finally:
        os.kill(ks.pid, signal.SIGCONT)

    placement = wait_bound(core_v1, namespace, during, timeout=90)
    wait_for(lambda: RELIST_LOG in ks.log_text(), timeout=30, message="the Pod informer to relist")
    _assert_one_scheduled_event_each(events_v1, namespace, during, placement)
    assert ks.alive()
    wait_for(ks.ready, timeout=30, message="kubesched ready after the relist")
    # and it keeps watching after the relist
    make_pods(core_v1, ["after"], namespace, scheduler_name=name, node_selector=sel)
    wait_bound(core_v1, namespace, ["after"])


# ---------------------------------------------------------------------------------------------
# 4c. two replicas with leader election


def _leader_election(lease: str) -> dict[str, Any]:
    return {
        "leaderElect": True,
        "resourceName": lease,
        "resourceNamespace": "default",
        "leaseDuration": "4s",
        "renewDeadline": "3s",
        "retryPeriod": "1s",
    }


def _holder(coordination: Any, lease: str) -> str | None:
    try:
        return coordination.read_namespaced_lease(lease, "default").spec.holder_identity
    except client.ApiException as e:
        if e.status == 404:
            return None
        raise


def test_leader_election_failover(
    kube_client: Any,
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    coordination: Any = client.CoordinationV1Api(kube_client)
    group = f"le-{test_id}"
    name = f"kubesched-{test_id}"
    lease = f"kubesched-e2e-{test_id}"
    make_group_nodes(core_v1, group, 2)
    sel = {GROUP_LABEL: group}
    cfg = scheduler_config([{"schedulerName": name}], leader_election=_leader_election(lease))
    replicas = {
        ident: run_kubesched(cfg, identity=ident, name=ident)
        for ident in (f"replica-a-{test_id}", f"replica-b-{test_id}")
    }

    holder = wait_for(
        lambda: _holder(coordination, lease) in replicas and _holder(coordination, lease),
        timeout=30,
        message="a leader",
    )
    leader = replicas[holder]
    standby = next(r for i, r in replicas.items() if i != holder)
    wait_for(
        lambda: leader.metric("leader_election_master_status", name=lease) == 1,
        timeout=10,
        message="leader metric",
    )

    first = make_pods(
        core_v1, [f"first-{i}" for i in range(5)], namespace, scheduler_name=name, node_selector=sel
    )
    placement = wait_bound(core_v1, namespace, first)
    _assert_one_scheduled_event_each(events_v1, namespace, first, placement)
    # Only the leader scheduled: its attempts count the pods, the standby has none, and only the
    # leader logged the acquisition. The lease still names it.
    assert leader.metric(
        "scheduler_schedule_attempts_total", profile=name, result="scheduled"
    ) == len(first)
    assert not standby.metric("scheduler_schedule_attempts_total", profile=name, result="scheduled")
    assert not standby.metric("leader_election_master_status", name=lease)
    assert f"successfully acquired lease default/{lease} as {leader.identity}" in leader.log_text()
    assert "successfully acquired lease" not in standby.log_text()
    assert _holder(coordination, lease) == leader.identity
    transitions = coordination.read_namespaced_lease(lease, "default").spec.lease_transitions or 0

    # The leader crashes: the standby takes over after leaseDuration (4s) and schedules new pods.
    leader.kill()
    wait_for(
        lambda: _holder(coordination, lease) == standby.identity,
        timeout=30,
        message="the standby to take the lease over",
    )
    assert (
        coordination.read_namespaced_lease(lease, "default").spec.lease_transitions or 0
    ) == transitions + 1
    second = make_pods(
        core_v1,
        [f"second-{i}" for i in range(5)],
        namespace,
        scheduler_name=name,
        node_selector=sel,
    )
    placement.update(wait_bound(core_v1, namespace, second, timeout=60))
    # No pod bound twice: exactly one Scheduled event for each of the ten; the new leader
    # scheduled only the new pods (the first five were already bound when it took over).
    _assert_one_scheduled_event_each(events_v1, namespace, first + second, placement)
    assert standby.metric(
        "scheduler_schedule_attempts_total", profile=name, result="scheduled"
    ) == len(second)
    assert (
        f"successfully acquired lease default/{lease} as {standby.identity}" in standby.log_text()
    )

    # SIGTERM on the leader: it releases the lease (empty holder) and exits 0.
    assert standby.terminate() == 0, standby.log_tail()
    assert _holder(coordination, lease) in ("", None)
    assert f"released lease default/{lease}" in standby.log_text()


def test_stolen_lease_exits_1(
    kube_client: Any,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    """A leader that finds the Lease held by someone else stops leading and exits 1."""
    coordination: Any = client.CoordinationV1Api(kube_client)
    lease = f"kubesched-e2e-{test_id}"
    cfg = scheduler_config(
        [{"schedulerName": f"kubesched-{test_id}"}], leader_election=_leader_election(lease)
    )
    ks = run_kubesched(cfg, identity=f"victim-{test_id}")
    wait_for(lambda: _holder(coordination, lease) == ks.identity, timeout=30, message="the lease")

    def steal() -> bool:
        obj = coordination.read_namespaced_lease(lease, "default")
        obj.spec.holder_identity = "intruder"
        obj.spec.lease_duration_seconds = 3600
        obj.spec.renew_time = datetime.datetime.now(datetime.UTC)
        # a renew in between makes this a 409 conflict: wait_for retries
        coordination.replace_namespaced_lease(lease, "default", obj)
        return True

    wait_for(steal, timeout=15, message="stealing the lease")
    ks.expected_exit = 1
    code = ks.proc.wait(30)
    assert code == 1, ks.log_tail()
    assert "leader election lost" in ks.log_text()
    assert _holder(coordination, lease) == "intruder"
