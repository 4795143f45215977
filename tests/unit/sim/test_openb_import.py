"""``kubesched import openb``: the openb trace's CSV rows become exactly these workload objects."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main
from kubesched.runtime.sim.openb import TraceError, convert
from kubesched.runtime.sim.workload import ARRIVE_AT, DELETE_AT, RUN_FOR

#: the real trace (never copied into the repository): /work/shared/traces/openb
#: ($OPENB overrides; a relative path would break in a clone outside /work, as CI's is)
TRACE = Path(os.environ.get("OPENB") or "/work/shared/traces/openb")

NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
openb-node-0000,32000,262144,0,
openb-node-0001,96000,786432,8,V100M32
"""

PODS_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0002,4000,8192,1,460,,LS,Running,20,100,20
openb-pod-0000,12000,16384,2,1000,G2|T4,Burstable,Running,10,250,10
openb-pod-0001,6000,12288,0,0,,BE,Running,20,,
"""


def _write(tmp_path: Path, nodes: str = NODES_CSV, pods: str = PODS_CSV) -> tuple[Path, Path]:
    n, p = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    n.write_text(nodes)
    p.write_text(pods)
    return n, p


NODES = [
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
]


def _pods(departure: dict[str, dict[str, str]]) -> list[dict]:
    """The three pods in creation order (10, then the two of time 20 in file order), with the
    departure annotations ``departure[name]``."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "openb-pod-0000",
                "namespace": "default",
                "annotations": {
                    ARRIVE_AT: "10",
                    **departure["openb-pod-0000"],
                    "openb.kubesched.io/gpu-milli": "1000",
                    "openb.kubesched.io/qos": "Burstable",
                    "openb.kubesched.io/gpu-spec": "G2|T4",
                },
            },
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
            "metadata": {
                "name": "openb-pod-0002",
                "namespace": "default",
                "annotations": {
                    ARRIVE_AT: "20",
                    **departure["openb-pod-0002"],
                    "openb.kubesched.io/gpu-milli": "460",
                    "openb.kubesched.io/qos": "LS",
                },
            },
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
            "metadata": {
                "name": "openb-pod-0001",
                "namespace": "default",
                # no deletion_time: the pod never leaves, whatever the departures mode
                "annotations": {ARRIVE_AT: "20", "openb.kubesched.io/gpu-milli": "0", "openb.kubesched.io/qos": "BE"},
            },
            "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "6000m", "memory": "12288Mi"}}}]},
        },
    ]


DELETE_AT_PODS = _pods({"openb-pod-0000": {DELETE_AT: "250"}, "openb-pod-0002": {DELETE_AT: "100"}, "openb-pod-0001": {}})
RUN_FOR_PODS = _pods({"openb-pod-0000": {RUN_FOR: "240"}, "openb-pod-0002": {RUN_FOR: "80"}, "openb-pod-0001": {}})
NO_DEPARTURE_PODS = _pods({"openb-pod-0000": {}, "openb-pod-0002": {}, "openb-pod-0001": {}})


def test_rows_become_these_objects_leaving_at_their_deletion_time(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    assert convert(nodes, pods) == NODES + DELETE_AT_PODS


@pytest.mark.parametrize(
    ("departures", "expected"),
    [("delete-at", DELETE_AT_PODS), ("run-for", RUN_FOR_PODS), ("none", NO_DEPARTURE_PODS)],
)
def test_departures_modes(tmp_path: Path, departures: str, expected: list[dict]) -> None:
    nodes, pods = _write(tmp_path)
    assert convert(nodes, pods, departures=departures) == NODES + expected


def test_limit_keeps_every_node_and_the_first_pods_in_creation_order(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    assert convert(nodes, pods, limit=2) == NODES + DELETE_AT_PODS[:2]
    assert convert(nodes, pods, limit=0) == NODES


def test_without_annotations_the_static_cluster(tmp_path: Path) -> None:
    """bench/openb.py's objects: no time, no trace fields."""
    nodes, pods = _write(tmp_path)
    got = convert(nodes, pods, annotate=False)
    for p in NO_DEPARTURE_PODS:
        del p["metadata"]["annotations"]
    assert got == NODES + NO_DEPARTURE_PODS


def test_empty_cells_count_as_zero_and_an_empty_creation_time_as_the_start(tmp_path: Path) -> None:
    nodes, pods = _write(
        tmp_path,
        "sn,cpu_milli,memory_mib,gpu,model\nn1,,,,\n",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np2,1,1,0,,,,,5,9,\np1,,,,,,,,,7,\n",
    )
    got = convert(nodes, pods, departures="run-for")
    assert got[0]["status"]["allocatable"] == {"cpu": "0m", "memory": "0Mi", "pods": "110"}
    assert got[0]["metadata"]["labels"] == {"kubernetes.io/hostname": "n1"}
    assert [(p["metadata"]["name"], p["metadata"]["annotations"]) for p in got[1:]] == [
        ("p1", {ARRIVE_AT: "0", RUN_FOR: "7"}),
        ("p2", {ARRIVE_AT: "5", RUN_FOR: "4"}),
    ]
    assert got[1]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "0m", "memory": "0Mi"}}


# ---------------------------------------------------------------------------------------------
# bad input: one line naming file, line and column


def _error(tmp_path: Path, nodes: str = NODES_CSV, pods: str = PODS_CSV) -> str:
    n, p = _write(tmp_path, nodes, pods)
    with pytest.raises(TraceError) as e:
        convert(n, p)
    return str(e.value)


def test_a_non_integer_cell(tmp_path: Path) -> None:
    bad = NODES_CSV.replace("96000", "abc")
    assert _error(tmp_path, nodes=bad) == f'{tmp_path}/nodes.csv:3: column "cpu_milli": expected an integer, got "abc"'


def test_a_non_integer_time(tmp_path: Path) -> None:
    bad = PODS_CSV.replace(",10,250,10", ",10,2.5e2,10")
    assert _error(tmp_path, pods=bad) == f'{tmp_path}/pods.csv:3: column "deletion_time": expected an integer, got "2.5e2"'


def test_a_negative_cell(tmp_path: Path) -> None:
    bad = PODS_CSV.replace(",0,0,,BE", ",-1,0,,BE")
    assert _error(tmp_path, pods=bad) == f'{tmp_path}/pods.csv:4: column "num_gpu": expected an integer >= 0, got "-1"'


def test_a_long_cell_is_cut_and_control_characters_escaped(tmp_path: Path) -> None:
    bad = NODES_CSV.replace("96000", "\x1b[2J" + "x" * 70)
    assert _error(tmp_path, nodes=bad) == (
        f'{tmp_path}/nodes.csv:3: column "cpu_milli": expected an integer, got "\\x1b[2J' + "x" * 60 + '... (10 more characters)"'
    )


def test_a_missing_column(tmp_path: Path) -> None:
    bad = PODS_CSV.replace("name,cpu_milli,memory_mib,", "name,cpu,memory_mib,")
    assert _error(tmp_path, pods=bad) == (
        f'{tmp_path}/pods.csv:1: no column "cpu_milli" in the header (it has: name, cpu, memory_mib, num_gpu, gpu_milli, '
        "gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time)"
    )


def test_an_empty_name(tmp_path: Path) -> None:
    bad = NODES_CSV.replace("openb-node-0001,", ",")
    assert _error(tmp_path, nodes=bad) == f'{tmp_path}/nodes.csv:3: column "sn" is empty'


def test_an_empty_file(tmp_path: Path) -> None:
    assert _error(tmp_path, pods="") == f"{tmp_path}/pods.csv: the file is empty (expected a header line: {', '.join(['name', 'cpu_milli', 'memory_mib', 'num_gpu', 'gpu_milli', 'gpu_spec', 'qos', 'creation_time', 'deletion_time'])})"


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TraceError) as e:
        convert(tmp_path / "nope.csv", tmp_path / "pods.csv")
    assert str(e.value) == f"{tmp_path}/nope.csv: no such file"


# ---------------------------------------------------------------------------------------------
# the command


def _assert_user_error(result, message: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stderr == f"kubesched: error: {message}\n"
    assert result.stdout == ""


def test_cli_writes_the_workload(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    out = tmp_path / "w.yaml"
    r = CliRunner().invoke(main, ["import", "openb", "--nodes", str(nodes), "--pods", str(pods), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert r.stderr == f"{out}: 2 nodes, 3 pods\n"
    assert list(yaml.safe_load_all(out.read_text())) == NODES + DELETE_AT_PODS


def test_cli_stdout_limit_and_run_for(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    r = CliRunner().invoke(main, ["import", "openb", "--nodes", str(nodes), "--pods", str(pods), "--limit", "1", "--departures", "run-for"])
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert list(yaml.safe_load_all(r.stdout)) == NODES + RUN_FOR_PODS[:1]


def test_cli_bad_cell_is_one_line_exit_2(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path, pods=PODS_CSV.replace("4000,8192", "4000,8G"))
    r = CliRunner().invoke(main, ["import", "openb", "--nodes", str(nodes), "--pods", str(pods), "-o", str(tmp_path / "w.yaml")])
    _assert_user_error(r, f'{pods}:2: column "memory_mib": expected an integer, got "8G"')
    assert not (tmp_path / "w.yaml").exists()


def test_cli_missing_file_is_one_line_exit_2(tmp_path: Path) -> None:
    nodes, _ = _write(tmp_path)
    r = CliRunner().invoke(main, ["import", "openb", "--nodes", str(nodes), "--pods", str(tmp_path / "missing.csv")])
    _assert_user_error(r, f"{tmp_path}/missing.csv: no such file")


def test_cli_unwritable_output_is_one_line_exit_2(tmp_path: Path) -> None:
    nodes, pods = _write(tmp_path)
    out = tmp_path / "no" / "w.yaml"
    r = CliRunner().invoke(main, ["import", "openb", "--nodes", str(nodes), "--pods", str(pods), "-o", str(out)])
    _assert_user_error(r, f"{out}: cannot write: No such file or directory")


UNSCHEDULABLE = (
    "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, "
    "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
)


@pytest.mark.parametrize(
    ("departures", "expected"),
    [
        (
            "delete-at",
            {
                "openb-pod-0000": ("Deleted", None, "deleted at 4m10s (sim.kubesched.io/delete-at)"),
                "openb-pod-0002": ("Deleted", "openb-node-0001", "deleted at 1m40s (sim.kubesched.io/delete-at), from node openb-node-0001"),
                "openb-pod-0001": ("Scheduled", "openb-node-0001", ""),
            },
        ),
        (
            "run-for",
            {
                "openb-pod-0000": ("Unschedulable", None, UNSCHEDULABLE),
                "openb-pod-0002": ("Completed", "openb-node-0001", "ran 1m20s on node openb-node-0001 (sim.kubesched.io/run-for)"),
                "openb-pod-0001": ("Scheduled", "openb-node-0001", ""),
            },
        ),
        (
            "none",
            {
                "openb-pod-0000": ("Unschedulable", None, UNSCHEDULABLE),
                "openb-pod-0002": ("Scheduled", "openb-node-0001", ""),
                "openb-pod-0001": ("Scheduled", "openb-node-0001", ""),
            },
        ),
    ],
)
def test_the_workload_replays(tmp_path: Path, departures: str, expected: dict) -> None:
    """``kubesched simulate`` replays the output over its times: the G2|T4 pod matches no node
    (and is deleted at 250 s with delete-at), the GPU pod leaves at 100 s or after 80 s."""
    from kubesched.runtime.cli.simulate_cmd import simulate

    nodes, pods = _write(tmp_path)
    out = tmp_path / "w.yaml"
    r = CliRunner().invoke(main, ["import", "openb", "--nodes", str(nodes), "--pods", str(pods), "--departures", departures, "-o", str(out)])
    assert r.exit_code == 0, r.output
    got = {p["name"]: (p["status"], p.get("node"), p.get("message", "")) for p in simulate(str(out), seed=1)["pods"]}
    assert got == expected


def test_the_real_trace() -> None:
    """Every node and pod of the trace, pods in creation order, each arriving at its
    creation_time and deleted at its deletion_time."""
    import csv

    objs = convert(TRACE / "openb_node_list_all_node.csv", TRACE / "openb_pod_list_default.csv")
    nodes = [o for o in objs if o["kind"] == "Node"]
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert (len(nodes), len(pods)) == (1523, 8152)
    with open(TRACE / "openb_pod_list_default.csv", newline="") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    arrive = [int(p["metadata"]["annotations"][ARRIVE_AT]) for p in pods]
    assert arrive == sorted(arrive)
    for p in pods:
        ann = p["metadata"]["annotations"]
        row = rows[p["metadata"]["name"]]
        assert (ann[ARRIVE_AT], ann[DELETE_AT], ann["openb.kubesched.io/qos"]) == (row["creation_time"], row["deletion_time"], row["qos"])
