"""StickyNode (kubesched-sticky-node) on a real API server: a StatefulSet's pod goes back to the
node its owner remembers, through deletions, against the default scoring; policy strict keeps it
Pending while that node is cordoned, policy preferred lets it go elsewhere.

No StatefulSet controller runs here: the test creates the StatefulSet and plays the controller
(deleting and recreating ``web-0`` with the same name and an ownerReference to it)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from e2e_contrib import delete_pod_and_wait, make_owned_pod, make_statefulset
from e2e_sched import (
    KUBESCHED_CONTROLLER,
    Kubesched,
    make_group_nodes,
    pod_condition,
    scheduler_config,
    wait_bound,
    wait_event,
)
from helpers import make_pod, wait_for
from kubernetes import client

POD = "web-0"
KEY = f"sticky-node.kubesched.io/{POD}"


def sticky_profile(scheduler_name: str, policy: str) -> dict[str, Any]:
    """kube-scheduler's default plugins plus StickyNode at every point it implements."""
    return {
        "schedulerName": scheduler_name,
        "plugins": {"multiPoint": {"enabled": [{"name": "StickyNode"}]}},
        "pluginConfig": [{"name": "StickyNode", "args": {"policy": policy}}],
    }


def test_sticky_node_statefulset(
    kube_client: Any,
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    apps = client.AppsV1Api(kube_client)
    group = f"sn-{test_id}"
    nodes = make_group_nodes(core_v1, group, 2, cpu="4", memory="16Gi")
    strict, preferred = f"sticky-strict-{test_id}", f"sticky-pref-{test_id}"
    labels = {"app": f"web-{test_id}"}
    # The StatefulSet exists before kubesched starts, so its informer has it from the first list
    # (PostBind reads the owner from that cache: an owner created just before its pod could
    # still be missing from it).
    sts = make_statefulset(kube_client, "web", namespace, labels)
    ks = run_kubesched(
        scheduler_config([sticky_profile(strict, "strict"), sticky_profile(preferred, "preferred")])
    )

    def remembered() -> str | None:
        obj: Any = apps.read_namespaced_stateful_set("web", namespace)
        return (obj.metadata.annotations or {}).get(KEY)

    def recreate(scheduler: str) -> Any:
        delete_pod_and_wait(core_v1, POD, namespace)
        return make_owned_pod(
            core_v1, POD, namespace, sts, scheduler_name=scheduler, group=group, labels=labels
        )

    def cordon(node: str, on: bool) -> None:
        core_v1.patch_node(node, {"spec": {"unschedulable": on}})
        if not on:
            return
        # Barrier: a probe pod that can only go to `node` is reported unschedulable by the
        # NodeUnschedulable filter, so kubesched's cache has the cordon before web-0 comes back.
        probe = f"probe-{uuid.uuid4().hex[:8]}"
        make_pod(
            core_v1,
            probe,
            namespace,
            scheduler_name=strict,
            node_selector={"kubernetes.io/hostname": node},
        )
        wait_event(
            events_v1,
            namespace,
            probe,
            "FailedScheduling",
            lambda e: "unschedulable" in (e.note or ""),
            timeout=30,
        )
        delete_pod_and_wait(core_v1, probe, namespace)

    try:
        # 1. First placement: normal scheduling; PostBind records the node on the StatefulSet.
        make_owned_pod(
            core_v1, POD, namespace, sts, scheduler_name=strict, group=group, labels=labels
        )
        home = wait_bound(core_v1, namespace, [POD])[POD]
        assert home in nodes
        other = next(n for n in nodes if n != home)
        assert wait_for(
            lambda: remembered() == home, timeout=30, message=f"{KEY}={home} on sts/web"
        )

        # 2. The remembered node fills up (3 of its 4 cpus, pods bound directly): the default
        # scoring now clearly prefers the other node, as a pod without an owner shows...
        delete_pod_and_wait(core_v1, POD, namespace)
        for i in range(3):
            make_pod(core_v1, f"filler-{i}", namespace, cpu="1", memory="4Gi", node_name=home)
        # (free-0 does not match the StatefulSet's selector: PodTopologySpread's default
        # constraints, which count such pods, then score both nodes alike for web-0)
        make_owned_pod(
            core_v1,
            "free-0",
            namespace,
            None,
            scheduler_name=strict,
            group=group,
            labels={"app": f"free-{test_id}"},
        )
        assert wait_bound(core_v1, namespace, ["free-0"])["free-0"] == other
        # ... yet web-0, recreated (same name, same owner), goes back home.
        make_owned_pod(
            core_v1, POD, namespace, sts, scheduler_name=strict, group=group, labels=labels
        )
        assert wait_bound(core_v1, namespace, [POD])[POD] == home
        assert remembered() == home

        # 3. Home cordoned, policy strict: the recreated pod stays Pending, and says why.
        cordon(home, True)
        pod = recreate(strict)
        ev = wait_event(
            events_v1,
            namespace,
            POD,
            "FailedScheduling",
            lambda e: e.regarding.uid == pod.metadata.uid,
            timeout=30,
        )
        assert f"sticky node {home} is unschedulable (cordoned)" in ev.note, ev.note
        assert ev.type == "Warning" and ev.reporting_controller == KUBESCHED_CONTROLLER

        def unschedulable_condition() -> Any:
            c = pod_condition(core_v1.read_namespaced_pod(POD, namespace))
            return c if c is not None and c.status == "False" else None

        cond = wait_for(unschedulable_condition, timeout=30, message=f"PodScheduled=False on {POD}")
        assert cond.reason == "Unschedulable" and home in cond.message, cond.message
        # it stays Pending although the other node has room (kubesched keeps running)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            assert core_v1.read_namespaced_pod(POD, namespace).spec.node_name is None
            time.sleep(0.25)
        assert ks.alive()
        assert remembered() == home

        # 4. Uncordoned: the node update requeues the pending pod, which goes home.
        cordon(home, False)
        assert wait_bound(core_v1, namespace, [POD], timeout=60)[POD] == home

        # 5. Home cordoned again, policy preferred: the recreated pod is placed normally (on the
        # other node), and the new node is remembered.
        cordon(home, True)
        recreate(preferred)
        assert wait_bound(core_v1, namespace, [POD])[POD] == other
        assert wait_for(
            lambda: remembered() == other, timeout=30, message=f"{KEY}={other} on sts/web"
        )
        assert ks.alive()
    finally:
        for n in nodes:
            core_v1.patch_node(n, {"spec": {"unschedulable": False}})
