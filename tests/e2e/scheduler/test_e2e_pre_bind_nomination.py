"""The binding cycle's nomination (v1.36 NominatedNodeNameForExpectation) on a real API server:
``nominate`` patches ``pods/status`` through kubesched's object client with the pod's uid as a
precondition, as kube-scheduler's updatePod does before PreBind; the binding then clears it
(ClearingNominatedNodeNameAfterBinding). A pod recreated under the same name is not written.
"""

from __future__ import annotations

from typing import Any

from helpers import make_node, make_pod, unique_name

from kubesched.runtime.cluster.kubernetes import KubeClient
from kubesched.runtime.cluster.kubernetes.cluster import KubernetesCluster
from kubesched.runtime.scheduler.cycles import nominate
from kubesched.sdk import Pod


def test_nominate_sets_the_node_before_the_binding_clears_it(control_plane: Any, core_v1: Any, kube_client: Any, namespace: str) -> None:
    node = unique_name("pbpf")
    make_node(core_v1, node)
    make_pod(core_v1, "p", namespace, scheduler_name="nobody")  # no scheduler touches it
    cluster = KubernetesCluster(KubeClient(str(control_plane.kubeconfig)))

    def stored() -> dict[str, Any]:
        return kube_client.sanitize_for_serialization(core_v1.read_namespaced_pod("p", namespace))

    try:
        pod = Pod(stored())
        nominate(cluster.objects, pod, node)
        assert stored()["status"].get("nominatedNodeName") == node
        # a pod of another uid under the same name: the precondition refuses the write (logged)
        stale = Pod({**pod.raw, "metadata": {**pod.raw["metadata"], "uid": "00000000-0000-0000-0000-000000000000"}})
        nominate(cluster.objects, Pod({**stale.raw, "status": {}}), "elsewhere")
        assert stored()["status"].get("nominatedNodeName") == node
        cluster.bind(Pod(stored()), node)
        after = stored()
        assert (after["spec"]["nodeName"], after["status"].get("nominatedNodeName")) == (node, None)
    finally:
        cluster.stop()
