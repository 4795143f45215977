"""kubesched's pod status writes and binds on a real API server, as they bear on
``status.nominatedNodeName``.

* ``update_pod_condition`` with None leaves the nomination, with a node sets it and with ""
  removes it (kube-scheduler v1.36's updatePod with NominatingInfo ModeNoop / ModeOverride; the
  failure handler clears it after every failure but PostFilter's own result).
* The API server's binding clears it: v1.36 ``pkg/registry/core/pod/storage/storage.go``
  setPodNodeAndMetadata under ClearingNominatedNodeNameAfterBinding (beta, on since 1.35). The
  simulated cluster's bind does the same (tests/unit/test_scheduler_failures.py).
"""

from __future__ import annotations

from typing import Any

from helpers import make_node, make_pod, unique_name

from kubesched.runtime.cluster.kubernetes import KubeClient
from kubesched.runtime.cluster.kubernetes.writers import Writer
from kubesched.sdk import Pod


def test_nominated_node_name_is_left_set_cleared_and_cleared_by_the_binding(
    control_plane: Any, core_v1: Any, kube_client: Any, namespace: str
) -> None:
    node = unique_name("nom")
    make_node(core_v1, node)
    make_pod(core_v1, "p", namespace, scheduler_name="nobody")  # no scheduler touches it
    core_v1.patch_namespaced_pod_status("p", namespace, {"status": {"nominatedNodeName": node}})
    writer = Writer(KubeClient(str(control_plane.kubeconfig)), reporting_controller="kubesched", instance="e2e")

    def stored() -> dict[str, Any]:
        return kube_client.sanitize_for_serialization(core_v1.read_namespaced_pod("p", namespace))

    def condition(pod: dict[str, Any]) -> tuple[str, str]:
        (c,) = [c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
        return c["status"], c.get("message", "")

    try:
        writer.update_pod_condition(Pod(stored()), {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "one"}, None)
        writer.flush()
        pod = stored()
        assert (pod["status"].get("nominatedNodeName"), condition(pod)) == (node, ("False", "one"))

        writer.update_pod_condition(Pod(pod), {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "two"}, "")
        writer.flush()
        pod = stored()
        assert (pod["status"].get("nominatedNodeName"), condition(pod)) == (None, ("False", "two"))

        writer.update_pod_condition(Pod(pod), {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "three"}, node)
        writer.flush()
        pod = stored()
        assert (pod["status"].get("nominatedNodeName"), condition(pod)) == (node, ("False", "three"))

        writer.bind(Pod(pod), node)
        pod = stored()
        assert (pod["spec"]["nodeName"], pod["status"].get("nominatedNodeName"), condition(pod)[0]) == (node, None, "True")
    finally:
        writer.flush()
        writer.stop()
