"""bench/workloads.py, bench/loadgen.py and bench/simulate.py: the objects each bench workload
creates (scheduler_perf v1.36.3's templates), its init pod counts, and the trace's files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import loadgen  # noqa: E402
import simulate  # noqa: E402
import workloads  # noqa: E402


def test_anti_affinity_pod_is_scheduler_perfs_template() -> None:
    # templates/pod-with-pod-anti-affinity.yaml, named and placed
    assert workloads.pod_body(7, "sched-1", shape="anti-affinity") == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "anti-affinity-pod-7", "namespace": "sched-1", "labels": {"color": "green"}},
        "spec": {
            "schedulerName": "default-scheduler",
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": "kubernetes.io/hostname", "namespaces": ["sched-1", "sched-0"]}]}},
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.2", "ports": [{"containerPort": 80}],
                            "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}, "limits": {"cpu": "100m", "memory": "500Mi"}}}],
        },
    }


def test_preemption_pods_and_a_bound_init_pod() -> None:
    high = workloads.pod_body(0, "namespace-2", shape="high-priority")
    assert high["metadata"]["name"] == "pod-high-priority-0"
    assert high["spec"]["priority"] == 10
    assert high["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "3000m", "memory": "500Mi"}
    low = workloads.pod_body(5, "namespace-1", shape="low-priority", node="node-5")
    assert low["spec"]["terminationGracePeriodSeconds"] == 0
    assert low["spec"]["nodeName"] == "node-5"
    assert low["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "900m", "memory": "500Mi"}


def test_spreading_pods_differ_only_in_when_unsatisfiable() -> None:
    hard = workloads.pod_body(1, "namespace-2", shape="topology-spreading")
    soft = workloads.pod_body(1, "namespace-2", shape="preferred-topology-spreading")
    assert hard["spec"]["topologySpreadConstraints"] == [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                                                          "labelSelector": {"matchLabels": {"color": "blue"}}}]
    soft["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"] = "DoNotSchedule"
    assert soft == hard


def test_nodes() -> None:
    perf = workloads.node_body(4, "perf", ("moon-1", "moon-2", "moon-3"))
    assert perf["metadata"] == {"name": "node-4", "labels": {"kubernetes.io/hostname": "node-4", "topology.kubernetes.io/zone": "moon-2"}}
    assert perf["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}
    assert workloads.node_body(0, "perf")["metadata"]["labels"] == {"kubernetes.io/hostname": "node-0"}
    basic = workloads.node_body(5, "basic")
    assert basic["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-2"
    assert basic["status"]["allocatable"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}


@pytest.mark.parametrize(("name", "nodes", "init", "cap"), [
    ("basic", 500, 0, None),
    ("anti-affinity", 500, 100, 400),
    ("anti-affinity", 5000, 1000, 4000),
    ("topology-spreading", 500, 1000, None),
    ("topology-spreading", 5000, 5000, None),
    ("preferred-topology-spreading", 5000, 5000, None),
    ("node-affinity", 500, 500, None),
    ("preemption", 500, 2000, 500),
    ("preemption", 5000, 20000, 5000),
])
def test_init_pods_follow_scheduler_perfs_ratios(name: str, nodes: int, init: int, cap: int | None) -> None:
    w = workloads.workload(name)
    assert w.init_count(nodes) == init
    assert w.max_measured(nodes) == cap


def test_workload_names() -> None:
    assert workloads.workload("SchedulingPodAntiAffinity").name == "anti-affinity"
    assert workloads.workload("PreemptionBasic").name == "preemption"
    assert workloads.init_pods(workloads.workload("preemption"), 100) == [("low-priority", "namespace-1", 400, 0)]
    with pytest.raises(KeyError) as e:
        workloads.workload("nope")
    assert e.value.args[0] == "unknown workload 'nope': basic, openb, anti-affinity, topology-spreading, preferred-topology-spreading, node-affinity, preemption"


def test_loadgen_posts_file_objects(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.jsonl"
    nodes.write_text(json.dumps({"kind": "Node", "metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}) + "\n")
    pods = tmp_path / "pods.jsonl"
    pods.write_text("\n".join(json.dumps({"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}}) for i in range(3)) + "\n")
    a = argparse.Namespace(file=str(nodes), offset=0, namespace="bench")
    (post, path, _, _, ok), (patch, spath, body, ctype, _) = loadgen._ops("nodes", 0, a)
    assert (post, path, ok, patch, spath, ctype) == ("POST", "/api/v1/nodes", (201,), "PATCH", "/api/v1/nodes/n1/status", "application/merge-patch+json")
    cond = json.loads(body)["status"]["conditions"][0]
    assert set(cond) == {"type", "status", "lastHeartbeatTime", "lastTransitionTime"}
    a = argparse.Namespace(file=str(pods), offset=1, namespace="bench")
    ((method, path, body, _, _),) = loadgen._ops("pods", 1, a)
    assert (method, path, json.loads(body)["metadata"]["name"]) == ("POST", "/api/v1/namespaces/default/pods", "p2")


def test_loadgen_binds_init_pods_round_robin() -> None:
    a = argparse.Namespace(file="", offset=10, namespace="sched-0", scheduler_name="default-scheduler", shape="anti-affinity", bind_nodes=4)
    ((_, path, body, _, _),) = loadgen._ops("pods", 3, a)
    pod = json.loads(body)
    assert (path, pod["metadata"]["name"], pod["spec"]["nodeName"]) == ("/api/v1/namespaces/sched-0/pods", "anti-affinity-pod-13", "node-1")


def test_simulate_growth_grid() -> None:
    assert simulate.parse_grid("400,allx2000,all", 1523, 8152) == [(400, 2000), (400, 8152), (1523, 2000), (1523, 8152)]
    assert simulate.parse_grid("5000x9000", 1523, 8152) == [(1523, 8152)]
