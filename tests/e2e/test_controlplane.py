"""Smoke tests of the e2e harness itself: a real apiserver, Nodes without kubelets, the real
kube-scheduler binding a Pod, and an apiserver crash that keeps the data."""

from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from controlplane import ControlPlane, pinned_kubernetes_version
from helpers import make_node, make_pod, unique_name, wait_for
from kubernetes import client

pytestmark = pytest.mark.e2e

# Kubernetes client models have Optional attributes everywhere; the tests treat them as Any.

SCHEDULER_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
"""


def _get(cp: ControlPlane, path: str) -> tuple[int, str]:
    ctx = ssl.create_default_context(cafile=str(cp.ca_file))
    ctx.load_cert_chain(str(cp.client_cert_file), str(cp.client_key_file))
    with urllib.request.urlopen(cp.url + path, timeout=10, context=ctx) as r:
        return r.status, r.read().decode()


def test_apiserver_is_ready_and_runs_the_pinned_version(control_plane: ControlPlane) -> None:
    assert control_plane.url.startswith("https://127.0.0.1:")
    assert control_plane.etcd_url.startswith("http://127.0.0.1:")
    assert set(control_plane.pids) >= {"etcd", "kube-apiserver"}
    assert _get(control_plane, "/readyz") == (200, "ok")
    _, body = _get(control_plane, "/version")
    assert json.loads(body)["gitVersion"] == pinned_kubernetes_version()
    assert Path(control_plane.kubeconfig).is_file()


def test_admin_is_in_system_masters(core_v1: Any) -> None:
    # RBAC is on; the admin client certificate (O=system:masters) bypasses it.
    names = [ns.metadata.name for ns in core_v1.list_namespace().items]
    assert {"default", "kube-system"} <= set(names)


def test_make_node_sets_allocatable_and_ready(kube_client: Any) -> None:
    name = unique_name("node")
    make_node(kube_client, name, cpu="8", memory="32Gi", pods="50", labels={"zone": "a"})
    node: Any = client.CoreV1Api(kube_client).read_node(name)
    assert node.status.allocatable == {"cpu": "8", "memory": "32Gi", "pods": "50"}
    assert node.status.capacity["cpu"] == "8"
    ready = [c for c in node.status.conditions if c.type == "Ready"]
    assert ready and ready[0].status == "True"
    assert node.metadata.labels["zone"] == "a"
    assert not node.spec.taints  # TaintNodesByCondition is disabled: no not-ready taint


def test_kube_scheduler_binds_a_pod(
    control_plane: ControlPlane, core_v1: Any, tmp_path: Path
) -> None:
    node = unique_name("node")
    make_node(core_v1, node, labels={"e2e/pin": node})
    config = tmp_path / "scheduler.yaml"
    config.write_text(SCHEDULER_CONFIG)
    sched = control_plane.start_kube_scheduler(config)
    try:
        pod = unique_name("pod")
        make_pod(core_v1, pod, node_selector={"e2e/pin": node})
        bound = wait_for(
            lambda: core_v1.read_namespaced_pod(pod, "default").spec.node_name,
            timeout=60,
            message=f"pod {pod} to be bound",
        )
        assert bound == node
        assert sched.poll() is None
    finally:
        sched.terminate()
        sched.wait(30)


def test_restart_apiserver_keeps_data(control_plane: ControlPlane, core_v1: Any) -> None:
    name = unique_name("node")
    make_node(core_v1, name)
    old_pid = control_plane.pids["kube-apiserver"]
    etcd_pid = control_plane.pids["etcd"]
    url = control_plane.url

    control_plane.restart_apiserver()

    assert control_plane.url == url
    assert control_plane.pids["kube-apiserver"] != old_pid
    assert control_plane.pids["etcd"] == etcd_pid
    node = wait_for(lambda: core_v1.read_node(name), timeout=30, message="node after restart")
    assert node.status.allocatable["cpu"] == "4"
