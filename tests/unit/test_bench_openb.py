"""bench/openb.py: the openb trace's CSV rows become exactly these Kubernetes objects."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _openb():
    spec = importlib.util.spec_from_file_location("bench_openb", ROOT / "bench" / "openb.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
openb-node-0000,32000,262144,0,
openb-node-0001,96000,786432,8,V100M32
"""

PODS_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0002,4000,8192,1,460,,LS,Running,20,100,20
openb-pod-0000,12000,16384,2,1000,G2|T4,LS,Running,10,100,10
openb-pod-0001,6000,12288,0,0,,BE,Running,20,100,
"""


def _write(tmp_path: Path) -> tuple[Path, Path]:
    n, p = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    n.write_text(NODES_CSV)
    p.write_text(PODS_CSV)
    return n, p


EXPECTED = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "openb-node-0000", "labels": {"kubernetes.io/hostname": "openb-node-0000"}},
        "status": {
            "capacity": {"cpu": "32000m", "memory": "262144Mi", "pods": "110"},
            "allocatable": {"cpu": "32000m", "memory": "262144Mi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "openb-node-0001", "labels": {"kubernetes.io/hostname": "openb-node-0001", "gpu-model": "V100M32"}},
        "status": {
            "capacity": {"cpu": "96000m", "memory": "786432Mi", "pods": "110", "nvidia.com/gpu": "8"},
            "allocatable": {"cpu": "96000m", "memory": "786432Mi", "pods": "110", "nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    },
    # creation_time 10 first; the two pods of time 20 keep their file order
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "openb-pod-0000", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "img",
                    "resources": {
                        "requests": {"cpu": "12000m", "memory": "16384Mi", "nvidia.com/gpu": "2"},
                        "limits": {"nvidia.com/gpu": "2"},
                    },
                }
            ],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu-model", "operator": "In", "values": ["G2", "T4"]}]}]
                    }
                }
            },
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "openb-pod-0002", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "img",
                    "resources": {"requests": {"cpu": "4000m", "memory": "8192Mi", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
                }
            ]
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "openb-pod-0001", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "6000m", "memory": "12288Mi"}}}]},
    },
]


def test_convert_exact_objects(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    assert _openb().convert(nodes, pods) == EXPECTED


def test_cli_writes_the_same_objects_as_yaml(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    out = tmp_path / "cluster.yaml"
    assert _openb().main(["--nodes", str(nodes), "--pods", str(pods), "-o", str(out)]) == 0
    assert list(yaml.safe_load_all(out.read_text())) == EXPECTED


def test_cli_limit_keeps_every_node_and_the_first_pods(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    out = tmp_path / "cluster.yaml"
    assert _openb().main(["--nodes", str(nodes), "--pods", str(pods), "-o", str(out), "--limit", "1"]) == 0
    assert list(yaml.safe_load_all(out.read_text())) == EXPECTED[:3]


def test_the_cluster_simulates(tmp_path: Path) -> None:
    """kubesched simulate reads the output: the 2-GPU pod's G2|T4 affinity matches no node."""
    from kubesched.runtime.cli.simulate_cmd import simulate

    nodes, pods = _write(tmp_path)
    out = tmp_path / "cluster.yaml"
    _openb().main(["--nodes", str(nodes), "--pods", str(pods), "-o", str(out)])
    rep = simulate(str(out), seed=1)
    got = {p["name"]: (p["status"], p.get("node")) for p in rep["pods"]}
    assert got == {
        "openb-pod-0000": ("Unschedulable", None),
        "openb-pod-0002": ("Scheduled", "openb-node-0001"),
        "openb-pod-0001": ("Scheduled", got["openb-pod-0001"][1]),
    }
    assert got["openb-pod-0001"][1] in ("openb-node-0000", "openb-node-0001")
