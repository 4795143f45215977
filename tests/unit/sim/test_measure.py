"""What a run measures (sim/measure.py): the Measurements dict, hand-computed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main, simulate
from kubesched.runtime.sim import run_experiment
from kubesched.runtime.sim.measure import HEATMAP_BUCKETS, series_csv, summary_row

GPU = "nvidia.com/gpu"


def node(name: str, cpu: str, gpus: int = 0, **ann: str) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": "4Gi", "pods": "110"}
    if gpus:
        alloc[GPU] = str(gpus)
    md: dict[str, Any] = {"name": name}
    if ann:
        md["annotations"] = {f"sim.kubesched.io/{k.replace('_', '-')}": v for k, v in ann.items()}
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "status": {"allocatable": alloc}}


def pod(name: str, cpu: str, gpus: int = 0, **ann: str) -> dict[str, Any]:
    req: dict[str, str] = {"cpu": cpu, "memory": "1Gi"}
    res: dict[str, Any] = {"requests": req}
    if gpus:
        req[GPU] = str(gpus)
        res["limits"] = {GPU: str(gpus)}
    md: dict[str, Any] = {"name": name, "namespace": "default"}
    if ann:
        md["annotations"] = {f"sim.kubesched.io/{k.replace('_', '-')}": v for k, v in ann.items()}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {"containers": [{"name": "c", "image": "i", "resources": res}]}}


WORKLOAD = [
    node("a", "4", gpus=2),
    node("b", "4", arrive_at="100"),
    pod("p1", "2", gpus=1, delete_at="200"),  # a: cpu 2/4, gpu 1/2 over [0, 200)
    pod("p2", "4", arrive_at="50", run_for="100"),  # waits for b (100), runs on b until 200
    pod("p3", "8", arrive_at="300"),  # fits nowhere: stays pending
]


def measure(tmp_path: Path) -> dict[str, Any]:
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all(WORKLOAD))
    return run_experiment(str(f), seed=3, label="hand")


def test_measurements_by_hand(tmp_path: Path) -> None:
    m = measure(tmp_path)
    assert (m["version"], m["label"], m["seed"], m["config"], m["interrupted"]) == (1, "hand", 3, None, False)
    assert m["resources"] == ["cpu", "memory", GPU]
    assert m["units"] == {"cpu": "cores", "memory": "bytes", GPU: ""}
    s = m["series"]
    gi = 1024**3
    assert s["t"] == [0.0, 50.0, 100.0, 200.0, 300.0]
    assert s["nodes"] == [1, 1, 2, 2, 2]
    assert s["pending"] == [0, 1, 0, 0, 1]
    assert s["running"] == [1, 1, 2, 0, 0]
    assert s["allocatable"] == {"cpu": [4.0, 4.0, 8.0, 8.0, 8.0], "memory": [4.0 * gi, 4.0 * gi, 8.0 * gi, 8.0 * gi, 8.0 * gi], GPU: [2.0] * 5}
    assert s["requested"] == {"cpu": [2.0, 2.0, 6.0, 0.0, 0.0], "memory": [gi, gi, 2.0 * gi, 0.0, 0.0], GPU: [1.0, 1.0, 1.0, 0.0, 0.0]}
    assert m["end"] == 300.0
    t = m["totals"]
    assert t == {
        "arrived": 3, "scheduled": 2, "completed": 1, "deleted": 1, "pending_at_end": 1,
        "attempts": 4, "preemptions": 0,
        # p2 at 50 (a: cpu), p3 at 300 (both nodes: cpu)
        "failures": {"Insufficient cpu": 2},
    }
    assert m["wait"] == {"count": 2, "mean": 25.0, "p50": 0.0, "p90": 50.0, "p99": 50.0, "max": 50.0}
    a = m["allocation"]
    assert a["final"] == {"cpu": 0.0, "memory": 0.0, GPU: 0.0}
    assert a["peak"] == {"cpu": 0.75, "memory": 0.25, GPU: 0.5}
    # cpu: 0.5 over [0,100), 0.75 over [100,200), 0 after: (50 + 75) / 300
    assert abs(a["mean"]["cpu"] - 125 / 300) < 1e-12
    assert abs(a["mean"][GPU] - 100 / 300) < 1e-12


def test_heat_map_by_hand(tmp_path: Path) -> None:
    m = measure(tmp_path)
    h = m["heatmap"]
    assert h["nodes"] == ["a", "b"]
    assert len(h["t"]) == HEATMAP_BUCKETS and h["t"][:3] == [0.0, 3.0, 6.0]
    cpu = h["allocation"]["cpu"]
    # a bucket shows the allocation at its end: bucket k ends at 3(k+1)
    assert cpu[0][0] == 0.5 and cpu[0][65] == 0.5 and cpu[0][66] == 0.0  # p1 leaves at 200 (end of bucket 66 is 201)
    assert cpu[1][:33] == [None] * 33  # b arrives at 100 (bucket 33 ends at 102)
    assert cpu[1][33] == 1.0 and cpu[1][65] == 1.0 and cpu[1][66] == 0.0
    assert h["allocation"][GPU][0][0] == 0.5 and h["allocation"][GPU][1][40] == 0.0


def test_failures_by_reason_count_each_reason_of_an_attempt(tmp_path: Path) -> None:
    objs = [node("a", "1"), node("b", "4", gpus=1), pod("p", "2", gpus=2)]
    objs[0]["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    m = run_experiment(str(f), seed=1)
    assert m["totals"]["failures"] == {"Insufficient nvidia.com/gpu": 1, "node(s) had untolerated taint(s)": 1}
    assert m["label"] == "default"


def test_csv_and_summary_row(tmp_path: Path) -> None:
    m = measure(tmp_path)
    lines = series_csv(m).splitlines()
    assert lines[0] == "t,nodes,pending,running,requested_cpu,allocatable_cpu,allocation_cpu,requested_memory,allocatable_memory,allocation_memory,requested_nvidia.com/gpu,allocatable_nvidia.com/gpu,allocation_nvidia.com/gpu"
    assert lines[1] == "0,1,0,1,2,4,0.5,1073741824,4294967296,0.25,1,2,0.5"
    assert lines[3] == "100,2,0,2,6,8,0.75,2147483648,8589934592,0.25,1,2,0.5"
    assert len(lines) == 6
    row = summary_row(m)
    assert list(row)[:12] == ["label", "workload", "config", "seed", "elapsed", "arrived", "scheduled", "pending_at_end", "attempts", "preemptions", "wait_mean", "wait_p99"]
    assert (row["label"], row["arrived"], row["scheduled"], row["pending_at_end"], row["wait_mean"], row["wait_p99"]) == ("hand", 3, 2, 1, 25.0, 50.0)
    assert row["alloc_peak_cpu"] == 0.75 and row[f"alloc_peak_{GPU}"] == 0.5 and row["alloc_final_memory"] == 0.0


def test_simulate_writes_metrics_json_and_csv(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all(WORKLOAD))
    for name in ("m.json", "m.csv"):
        r = CliRunner().invoke(main, ["simulate", str(f), "--seed", "3", "--metrics", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["series"]["t"] == [0.0, 50.0, 100.0, 200.0, 300.0] and m["workload"] == str(f)
    assert (tmp_path / "m.csv").read_text() == series_csv(m)


def test_the_report_and_its_metrics_agree(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all(WORKLOAD))
    report = simulate(str(f), seed=3)
    statuses = [p["status"] for p in report["pods"]]
    assert statuses == ["Deleted", "Completed", "Unschedulable"]
    t = report["metrics"]["totals"]
    assert (t["completed"], t["deleted"], t["pending_at_end"]) == (statuses.count("Completed"), statuses.count("Deleted"), statuses.count("Unschedulable"))
