"""kubesched's status writes for one pod land in the order they were issued, on a real API
server: many alternating set / clear writes of ``status.nominatedNodeName`` (with a new
``PodScheduled`` message each) end with the last one's value, while another pod's writes go out
beside them (tests/unit/test_writers_order.py holds a write back to prove the order)."""

from __future__ import annotations

from typing import Any

from helpers import make_node, make_pod, unique_name

from kubesched.runtime.cluster.kubernetes import KubeClient
from kubesched.runtime.cluster.kubernetes.writers import Writer
from kubesched.sdk import Pod


def test_alternating_nominations_of_one_pod_end_with_the_last_write(control_plane: Any, core_v1: Any, kube_client: Any, namespace: str) -> None:
    node = unique_name("order")
    make_node(core_v1, node)
    for name in ("p", "q"):
        make_pod(core_v1, name, namespace, scheduler_name="nobody")  # no scheduler touches them
    writer = Writer(KubeClient(str(control_plane.kubeconfig)), reporting_controller="kubesched", instance="e2e")

    def stored(name: str) -> dict[str, Any]:
        return kube_client.sanitize_for_serialization(core_v1.read_namespaced_pod(name, namespace))

    def state(name: str) -> tuple[str | None, str]:
        pod = stored(name)
        (c,) = [c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
        return pod["status"].get("nominatedNodeName"), c.get("message", "")

    p, q = Pod(stored("p")), Pod(stored("q"))
    try:
        for i in range(100):
            for pod, last in ((p, 99), (q, 98)):
                nominated = node if i % 2 == last % 2 else ""
                writer.update_pod_condition(pod, {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": f"attempt {i}"}, nominated)
        writer.flush(60.0)
        assert state("p") == (node, "attempt 99")
        assert state("q") == (None, "attempt 99")
    finally:
        writer.flush()
        writer.stop()
