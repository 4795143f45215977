"""Pods the API server accepts but kubesched cannot schedule: each gets a FailedScheduling event
with the reason and a PodScheduled=False condition, and the scheduler keeps going.

What the API server lets through was probed on this control plane (v1.36): an invalid quantity
is refused at decoding (400), a matchFields ``In`` with two values and a Gt in a pod
(anti-)affinity label selector are refused by validation (422), ``spec.priority`` without a
PriorityClass by the Priority admission plugin (403). A node affinity requirement ``Gt`` with a
non-integer value is *accepted* (validation checks only that there is one value), and kubesched
cannot parse it. A pod whose ResourceClaim asks for a DeviceClass that does not exist is
accepted too, and DynamicResources' PreFilter rejects it as kube-scheduler's does.

For the Gt pod kubesched does what kube-scheduler does: node affinity uses a "lazy error" node
selector, so the unparseable term simply matches no node ("node(s) didn't match Pod's node
affinity/selector", reason Unschedulable)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from e2e_dra import DraApi, claim_spec, exactly, resource_claim
from e2e_sched import (
    GROUP_LABEL,
    Kubesched,
    make_group_nodes,
    pod_condition,
    scheduler_config,
    wait_bound,
    wait_event,
)
from helpers import PAUSE_IMAGE, make_pod, wait_for


def _condition(core_v1: Any, namespace: str, pod: str) -> Any:
    def get() -> Any:
        c = pod_condition(core_v1.read_namespaced_pod(pod, namespace))
        return c if c is not None and c.status == "False" else None

    return wait_for(get, timeout=30, message=f"PodScheduled=False on {pod}")


def test_unparseable_and_rejected_pods_do_not_stop_the_scheduler(
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    group = f"bad-{test_id}"
    name = f"kubesched-{test_id}"
    (node,) = make_group_nodes(core_v1, group, 1)
    sel = {GROUP_LABEL: group}
    ks = run_kubesched(scheduler_config([{"schedulerName": name}]))

    # 1. Accepted by the API server, unparseable for the scheduler: Gt with a non-integer.
    gt_abc = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "e2e.kubesched.io/rank", "operator": "Gt", "values": ["abc"]}
                        ]
                    }
                ]
            }
        }
    }
    created = make_pod(
        core_v1, "bad-gt", namespace, scheduler_name=name, node_selector=sel, affinity=gt_abc
    )
    assert created.spec.affinity.node_affinity is not None  # really accepted as written
    ev = wait_event(events_v1, namespace, "bad-gt", "FailedScheduling")
    assert ev.type == "Warning"
    assert "node(s) didn't match Pod's node affinity/selector" in ev.note, ev.note
    cond = _condition(core_v1, namespace, "bad-gt")
    assert cond.reason == "Unschedulable"  # as kube-scheduler: the bad term matches no node
    assert cond.message == ev.note

    # 2. Accepted and parseable, rejected by a plugin: DynamicResources, a claim whose request
    # names a DeviceClass that does not exist (PreFilter: UnschedulableAndUnresolvable).
    missing_class = f"no-such-class-{test_id}"
    DraApi(core_v1.api_client).create(
        namespace,
        "resourceclaims",
        resource_claim(f"bad-claim-{test_id}", claim_spec([exactly("gpu", missing_class)])),
    )
    claims = {
        "resourceClaims": [{"name": "gpu", "resourceClaimName": f"bad-claim-{test_id}"}],
        "containers": [
            {
                "name": "main",
                "image": PAUSE_IMAGE,
                "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]},
            }
        ],
    }
    make_pod(
        core_v1,
        "bad-claims",
        namespace,
        scheduler_name=name,
        node_selector=sel,
        spec_overrides=claims,
    )
    ev = wait_event(events_v1, namespace, "bad-claims", "FailedScheduling")
    assert f"request gpu: device class {missing_class} does not exist" in ev.note, ev.note
    assert ev.note.startswith("0/"), ev.note  # kube-scheduler's "0/N nodes are available: ..." form
    cond = _condition(core_v1, namespace, "bad-claims")
    assert cond.reason == "Unschedulable"

    # 3. The scheduler keeps going: an ordinary pod created after them is bound, the bad ones
    # are not, and the process is alive and healthy.
    make_pod(core_v1, "good", namespace, scheduler_name=name, node_selector=sel)
    assert wait_bound(core_v1, namespace, ["good"]) == {"good": node}
    for bad in ("bad-gt", "bad-claims"):
        assert core_v1.read_namespaced_pod(bad, namespace).spec.node_name is None
    assert ks.alive()
    assert ks.status_of("/healthz") == 200
    # both bad pods are unschedulable (no node fits / DynamicResources rejects), not errors
    assert ks.metric("scheduler_schedule_attempts_total", profile=name, result="unschedulable")
    assert ks.metric("scheduler_schedule_attempts_total", profile=name, result="scheduled") == 1
