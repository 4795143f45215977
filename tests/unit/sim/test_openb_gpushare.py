"""``kubesched import openb --gpu-share`` and the paper's workload (--shuffle, --inflate, --seed),
and the allocation-against-arrived-workload read-out (sim/openb.py, sim/measure.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main
from kubesched.runtime.sim import run_experiment
from kubesched.runtime.sim.measure import allocation_at_arrived
from kubesched.runtime.sim.openb import TraceError, convert, gpu_request, paper_order
from kubesched.runtime.sim.workload import ARRIVE_AT

MILLI = "alibabacloud.com/gpu-milli"
MODEL = "alibabacloud.com/gpu-card-model"

NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
openb-node-0000,32000,262144,0,
openb-node-0001,96000,786432,8,V100M32
openb-node-0002,64000,262144,2,
"""

PODS_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0002,4000,8192,1,460,,LS,Running,20,100,20
openb-pod-0000,12000,16384,2,1000,G2|T4,Burstable,Running,10,250,10
openb-pod-0001,6000,12288,0,0,,BE,Running,20,,
openb-pod-0003,1000,1024,1,,,BE,Running,30,,
"""


def _write(tmp_path: Path, nodes: str = NODES_CSV, pods: str = PODS_CSV) -> tuple[Path, Path]:
    n, p = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    n.write_text(nodes)
    p.write_text(pods)
    return n, p


def _pods(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == "Pod"]


def _asked(pod: dict[str, Any]) -> int:
    return int(pod["spec"]["containers"][0]["resources"]["requests"].get(MILLI, 0))


# -- --gpu-share: the objects -----------------------------------------------------------------


def test_gpu_share_nodes_advertise_milli_and_the_model_label(tmp_path: Path) -> None:
    objs = convert(*_write(tmp_path), gpu_share=True)
    nodes = [o for o in objs if o["kind"] == "Node"]
    assert nodes[0]["metadata"]["labels"] == {"kubernetes.io/hostname": "openb-node-0000"}
    assert nodes[0]["status"]["allocatable"] == {"cpu": "32000m", "memory": "262144Mi", "pods": "110"}
    assert nodes[1]["metadata"]["labels"] == {"kubernetes.io/hostname": "openb-node-0001", MODEL: "V100M32"}
    alloc = {"cpu": "96000m", "memory": "786432Mi", "pods": "110", "nvidia.com/gpu": "8", MILLI: "8000"}
    assert nodes[1]["status"]["allocatable"] == alloc and nodes[1]["status"]["capacity"] == alloc
    # a GPU node without a model: GPUs, no model label
    assert nodes[2]["metadata"]["labels"] == {"kubernetes.io/hostname": "openb-node-0002"}
    assert nodes[2]["status"]["allocatable"][MILLI] == "2000"


def test_gpu_share_pods_ask_milli_and_carry_the_model_annotation(tmp_path: Path) -> None:
    pods = _pods(convert(*_write(tmp_path), gpu_share=True))
    by = {p["metadata"]["name"]: p for p in pods}
    whole = by["openb-pod-0000"]
    assert whole["spec"] == {
        "containers": [
            {
                "name": "c",
                "image": "img",
                "resources": {"requests": {"cpu": "12000m", "memory": "16384Mi", MILLI: "2000"}, "limits": {MILLI: "2000"}},
            }
        ]
    }  # no node affinity: the model constraint is the annotation
    assert whole["metadata"]["annotations"][MODEL] == "G2|T4"
    assert whole["metadata"]["annotations"]["openb.kubesched.io/gpu-spec"] == "G2|T4"
    share = by["openb-pod-0002"]
    assert share["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "4000m", "memory": "8192Mi", MILLI: "460"}, "limits": {MILLI: "460"}}
    assert MODEL not in share["metadata"]["annotations"]
    cpu = by["openb-pod-0001"]
    assert cpu["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "6000m", "memory": "12288Mi"}}
    # an empty gpu_milli with num_gpu 1: one whole GPU
    assert _asked(by["openb-pod-0003"]) == 1000
    # nothing asks nvidia.com/gpu
    assert not any("nvidia.com/gpu" in str(p["spec"]) for p in pods)


def test_gpu_share_without_annotations_keeps_the_model_annotation(tmp_path: Path) -> None:
    pods = _pods(convert(*_write(tmp_path), gpu_share=True, annotate=False))
    assert pods[0]["metadata"] == {"name": "openb-pod-0000", "namespace": "default", "annotations": {MODEL: "G2|T4"}}
    assert pods[1]["metadata"] == {"name": "openb-pod-0002", "namespace": "default"}


def test_gpu_request_by_hand() -> None:
    row = {"name": "p", "num_gpu": 1, "gpu_milli": 460}
    assert gpu_request(row, gpu_share=True) == 460
    assert gpu_request(row) == 1000  # nvidia.com/gpu: a whole GPU
    assert gpu_request({"name": "p", "num_gpu": 4, "gpu_milli": 1000}, gpu_share=True) == 4000
    assert gpu_request({"name": "p", "num_gpu": 2, "gpu_milli": None}, gpu_share=True) == 2000
    assert gpu_request({"name": "p", "num_gpu": 0, "gpu_milli": 0}, gpu_share=True) == 0


def test_a_share_of_several_gpus_is_an_error(tmp_path: Path) -> None:
    bad = PODS_CSV + "openb-pod-0009,1000,1024,2,500,,BE,Running,40,,\n"
    with pytest.raises(TraceError) as e:
        convert(*_write(tmp_path, pods=bad), gpu_share=True)
    assert str(e.value) == (
        f'{tmp_path / "pods.csv"}: pod "openb-pod-0009": num_gpu 2 with gpu_milli 500: a share (gpu_milli < 1000) is of one GPU '
        "(alibabacloud.com/gpu-milli cannot ask 2 shares)"
    )
    # without --gpu-share the same row is two whole nvidia.com/gpu, as before
    assert len(_pods(convert(*_write(tmp_path, pods=bad)))) == 5


def test_gpu_nodes_only(tmp_path: Path) -> None:
    objs = convert(*_write(tmp_path), gpu_nodes_only=True)
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "Node"] == ["openb-node-0001", "openb-node-0002"]


# -- the paper's workload -------------------------------------------------------------------------


def test_shuffle_orders_by_seed_one_arrival_per_second_no_departure(tmp_path: Path) -> None:
    a = _pods(convert(*_write(tmp_path), shuffle=True, seed=1))
    names = [p["metadata"]["name"] for p in a]
    assert sorted(names) == ["openb-pod-0000", "openb-pod-0001", "openb-pod-0002", "openb-pod-0003"]
    assert [p["metadata"]["annotations"][ARRIVE_AT] for p in a] == ["0", "1", "2", "3"]
    assert not any(k.startswith("sim.kubesched.io/") and k != ARRIVE_AT for p in a for k in p["metadata"]["annotations"])
    # the same seed: the same order; the orders of seeds 0..19 are not all the same
    assert [p["metadata"]["name"] for p in _pods(convert(*_write(tmp_path), shuffle=True, seed=1))] == names
    orders = {tuple(p["metadata"]["name"] for p in _pods(convert(*_write(tmp_path), shuffle=True, seed=s))) for s in range(20)}
    assert len(orders) > 1


def test_paper_order_by_hand() -> None:
    rows = [{"name": n, "num_gpu": g, "gpu_milli": m} for n, g, m in (("c", 1, 500), ("a", 0, 0), ("b", 1, 1000))]
    # shuffle: by name, then random.Random(seed).shuffle
    import random

    expected = ["a", "b", "c"]
    random.Random(7).shuffle(expected)
    assert [n for n, _ in paper_order(rows, seed=7, shuffle=True)] == expected
    # no shuffle: the rows' order
    assert [n for n, _ in paper_order(rows, seed=7)] == ["c", "a", "b"]


def test_inflate_reaches_the_ratio_and_depends_on_the_seed(tmp_path: Path) -> None:
    n, p = _write(tmp_path)
    capacity = 10_000  # 8 + 2 GPUs
    a = _pods(convert(n, p, gpu_share=True, inflate=1.3, seed=42))
    total = sum(_asked(x) for x in a)
    # the trace asks 3,460; copies are added while the total plus the next one's GPU per GPU
    # stays within 13,000 (the reference's rule); a pod asks at most 1,000 per GPU, 2 GPUs
    assert total <= 1.3 * capacity + 1000
    assert total > 1.3 * capacity - 1000  # the next draw's per-GPU ask did not fit
    assert [x["metadata"]["name"] for x in a[:4]] == ["openb-pod-0000", "openb-pod-0002", "openb-pod-0001", "openb-pod-0003"]
    copies = [x["metadata"]["name"] for x in a[4:]]
    assert copies and all(c.rsplit("-inflate-", 1)[0] in {"openb-pod-0000", "openb-pod-0001", "openb-pod-0002", "openb-pod-0003"} for c in copies)
    assert [c.rsplit("-", 1)[1] for c in copies] == [str(i) for i in range(len(copies))]
    assert [x["metadata"]["annotations"][ARRIVE_AT] for x in a] == [str(i) for i in range(len(a))]
    # a copy is its row's pod under another name
    src = {x["metadata"]["name"]: x for x in a[:4]}
    c = a[4]
    assert c["spec"] == src[c["metadata"]["name"].rsplit("-inflate-", 1)[0]]["spec"]
    # deterministic per seed; other seeds draw other copies
    assert _pods(convert(n, p, gpu_share=True, inflate=1.3, seed=42)) == a
    draws = {tuple(x["metadata"]["name"] for x in _pods(convert(n, p, gpu_share=True, inflate=1.3, seed=s))) for s in range(10)}
    assert len(draws) > 1


def test_inflate_stops_on_the_per_gpu_ask_as_the_reference() -> None:
    # tuneUpPods: a copy is added while total + its milli PER GPU <= target, and adds its whole
    # request: one 2-GPU pod (2,000), target 1.0 x 3,000: 2,000 + 1,000 <= 3,000 adds a copy
    # (total 4,000); then 4,000 + 1,000 > 3,000 stops. (A rule on the whole request would add none.)
    row = {"name": "p", "num_gpu": 2, "gpu_milli": 1000}
    out = paper_order([row], seed=1, inflate=1.0, capacity=3000, gpu_share=True)
    assert [name for name, _ in out] == ["p", "p-inflate-0"]


def test_inflate_without_gpu_share_counts_whole_gpus(tmp_path: Path) -> None:
    a = _pods(convert(*_write(tmp_path), inflate=1.0, seed=3))
    gpus = sum(int(x["spec"]["containers"][0]["resources"]["requests"].get("nvidia.com/gpu", 0)) for x in a)
    assert 8 <= gpus <= 10


def test_inflate_below_what_the_trace_asks_adds_nothing(tmp_path: Path) -> None:
    a = _pods(convert(*_write(tmp_path), gpu_share=True, inflate=0.1, seed=3))
    assert [x["metadata"]["name"] for x in a] == ["openb-pod-0000", "openb-pod-0002", "openb-pod-0001", "openb-pod-0003"]


def test_inflate_with_shuffle_and_gpu_nodes_only(tmp_path: Path) -> None:
    a = convert(*_write(tmp_path), gpu_share=True, gpu_nodes_only=True, shuffle=True, inflate=1.3, seed=5)
    assert sum(1 for o in a if o["kind"] == "Node") == 2
    assert sorted(x["metadata"]["name"] for x in _pods(a)[:4]) == ["openb-pod-0000", "openb-pod-0001", "openb-pod-0002", "openb-pod-0003"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"inflate": 0.0, "seed": 1}, "--inflate 0: expected a ratio > 0 (1.3: add pods until the GPU requests reach 1.3 x the GPU capacity)"),
        ({"inflate": -1.0, "seed": 1}, "--inflate -1: expected a ratio > 0 (1.3: add pods until the GPU requests reach 1.3 x the GPU capacity)"),
        ({"inflate": float("nan"), "seed": 1}, "--inflate nan: expected a ratio > 0 (1.3: add pods until the GPU requests reach 1.3 x the GPU capacity)"),
        ({"inflate": 1.3}, "--inflate needs --seed N (the shuffle and the pods added are drawn from it)"),
        ({"shuffle": True}, "--shuffle needs --seed N (the shuffle and the pods added are drawn from it)"),
        ({"seed": 4}, "--seed 4: only --shuffle and --inflate draw from a seed"),
        (
            {"shuffle": True, "seed": 1, "departures": "delete-at"},
            "--departures delete-at: with --shuffle or --inflate pods arrive one per second in the new order and never leave (--departures none)",
        ),
    ],
)
def test_bad_paper_options(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TraceError) as e:
        convert(*_write(tmp_path), **kwargs)
    assert str(e.value) == message


def test_inflate_needs_gpus_and_gpu_pods(tmp_path: Path) -> None:
    n, p = _write(tmp_path, nodes="sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,0,\n")
    with pytest.raises(TraceError) as e:
        convert(n, p, inflate=1.3, seed=1)
    assert str(e.value) == f"--inflate 1.3: the nodes have no GPUs ({n})"
    n, p = _write(tmp_path, pods="name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time\np0,1000,1024,0,0,,BE,0,\n")
    with pytest.raises(TraceError) as e:
        convert(n, p, inflate=1.3, seed=1)
    assert str(e.value) == f"--inflate 1.3: no pod asks for a GPU ({p})"


def test_cli_paper_workload(tmp_path: Path) -> None:
    n, p = _write(tmp_path)
    out = tmp_path / "w.yaml"
    r = CliRunner().invoke(
        main,
        ["import", "openb", "--nodes", str(n), "--pods", str(p), "-o", str(out), "--gpu-share", "--gpu-nodes-only", "--shuffle", "--inflate", "1.3", "--seed", "42"],
    )
    assert r.exit_code == 0, r.output
    objs = list(yaml.safe_load_all(out.read_text()))
    assert objs == convert(n, p, gpu_share=True, gpu_nodes_only=True, shuffle=True, inflate=1.3, seed=42)
    assert r.output == f"{out}: 2 nodes, {len(objs) - 2} pods\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--inflate", "0", "--seed", "1"], "kubesched: error: --inflate 0: expected a ratio > 0 (1.3: add pods until the GPU requests reach 1.3 x the GPU capacity)\n"),
        (["--shuffle"], "kubesched: error: --shuffle needs --seed N (the shuffle and the pods added are drawn from it)\n"),
        (["--seed", "2"], "kubesched: error: --seed 2: only --shuffle and --inflate draw from a seed\n"),
        (
            ["--shuffle", "--seed", "2", "--departures", "run-for"],
            "kubesched: error: --departures run-for: with --shuffle or --inflate pods arrive one per second in the new order and never leave (--departures none)\n",
        ),
    ],
)
def test_cli_bad_paper_options_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    n, p = _write(tmp_path)
    r = CliRunner().invoke(main, ["import", "openb", "--nodes", str(n), "--pods", str(p), *args])
    assert r.exit_code == 2
    assert r.output == message


# -- the measurement: allocation against the arrived workload ------------------------------------------


def _node(name: str, gpus: int) -> dict[str, Any]:
    alloc = {"cpu": "8", "memory": "8Gi", "pods": "110", MILLI: str(1000 * gpus)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"allocatable": alloc}}


def _pod(name: str, milli: int, at: int) -> dict[str, Any]:
    req = {"cpu": "1", "memory": "1Gi", MILLI: str(milli)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": {ARRIVE_AT: str(at)}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": req, "limits": {MILLI: str(milli)}}}]},
    }


def test_arrived_series_and_the_read_out_by_hand(tmp_path: Path) -> None:
    # 2 nodes x 1 GPU = 2,000 milli; pods arrive one per second; p3 (1,000) finds no room after
    # p0..p2 (600 + 900 + 400 = 1,900 bound: the nodes' totals, as the default plugins see them)
    objs = [_node("a", 1), _node("b", 1), _pod("p0", 600, 0), _pod("p1", 900, 1), _pod("p2", 400, 2), _pod("p3", 1000, 3), _pod("p4", 100, 4)]
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    m = run_experiment(str(f), seed=1)
    s = m["series"]
    assert s["t"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert s["arrived"][MILLI] == [600.0, 1500.0, 1900.0, 2900.0, 3000.0]
    assert s["requested"][MILLI] == [600.0, 1500.0, 1900.0, 1900.0, 2000.0]
    assert s["arrived"]["cpu"] == [1.0, 2.0, 3.0, 4.0, 5.0]
    # arrived %: 30, 75, 95, 145, 150; allocation: 0.30, 0.75, 0.95, 0.95, 1.0
    a = allocation_at_arrived(m, MILLI, [30, 75, 96, 100, 146, 150])
    assert a == {30: 0.3, 75: 0.75, 96: 0.95, 100: None, 146: 0.95, 150: 1.0}
    # every percent from 0 to the highest arrived
    full = allocation_at_arrived(m, MILLI)
    assert list(full) == list(range(151)) and full[0] is None and full[31] == 0.3 and full[149] == 1.0
    # a resource the run does not have
    assert allocation_at_arrived(m, "example.com/none", [100]) == {100: None}


def test_the_arrived_series_counts_a_departed_pod(tmp_path: Path) -> None:
    objs = [_node("a", 1), _pod("p0", 500, 0), _pod("p1", 200, 1)]
    objs[1]["metadata"]["annotations"]["sim.kubesched.io/delete-at"] = "2"
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    s = run_experiment(str(f), seed=1)["series"]
    assert s["t"] == [0.0, 1.0, 2.0]
    assert s["arrived"][MILLI] == [500.0, 700.0, 700.0]
    assert s["requested"][MILLI] == [500.0, 700.0, 200.0]
