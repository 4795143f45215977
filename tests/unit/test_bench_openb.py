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


def _trace_gap():
    spec = importlib.util.spec_from_file_location("bench_trace_gap", ROOT / "bench" / "trace_gap.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


KS_LOG = """\
I1124 03:44:20.606143   14780 schedule_one.go:123] "Attempting to schedule pod" pod="default/openb-pod-1741"
I1124 03:44:20.612338   14780 schedule_one.go:123] "Attempting to schedule pod" pod="default/openb-pod-1858"
I1124 03:44:20.613000   14780 batch.go:89] "OpportunisticBatch provided node hint" profile="default-scheduler" pod="default/openb-pod-1858" cycleCount=2 hint="openb-node-0007" remainingNodes=3
I1124 03:44:20.616435   14780 schedule_one.go:481] "Successfully bound pod to node" pod="default/openb-pod-1741" node="openb-node-0521" evaluatedNodes=726 feasibleNodes=578
I1124 03:44:21.370074   14780 schedule_one.go:1239] "Unable to schedule pod; no fit; waiting" pod="default/openb-pod-1858" err="0/1523 nodes are available: 1475 Insufficient memory, 1517 Insufficient cpu."
I1124 03:44:22.000000   14780 schedule_one.go:123] "Attempting to schedule pod" pod="default/openb-pod-1858"
"""


def test_trace_gap_reads_kube_schedulers_attempts_in_order() -> None:
    got = _trace_gap().parse_kube_scheduler_log(KS_LOG)
    assert got == {
        "attempts": [
            {"pod": "default/openb-pod-1741", "outcome": "bound", "node": "openb-node-0521", "evaluated": 726, "feasible": 578},
            {
                "pod": "default/openb-pod-1858",
                "outcome": "unschedulable",
                "hint": "openb-node-0007",
                "err": "0/1523 nodes are available: 1475 Insufficient memory, 1517 Insufficient cpu.",
            },
            {"pod": "default/openb-pod-1858", "outcome": "none"},
        ]
    }


def test_trace_gap_window_size_is_kube_schedulers() -> None:
    nf = _trace_gap().num_feasible_nodes_to_find
    assert [nf(50), nf(1523), nf(1523, 100), nf(5000), nf(150, 10)] == [50, 578, 1523, 500, 100]
