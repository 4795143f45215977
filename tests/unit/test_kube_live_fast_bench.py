# ruff: noqa: RUF001  (the report uses the multiplication sign)
"""bench/loadgen.py's bind-event ops and bench/bench.py's ceiling lines: what the server does per
scheduled pod, and how the report prints it next to the results."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import loadgen  # noqa: E402

import bench  # noqa: E402


def test_bind_event_is_the_binding_then_kube_schedulers_event() -> None:
    a = argparse.Namespace(offset=10, namespace="bench", nodes=4, pod_refs={"pod-13": ("uid-13", "77")})
    (bind, event) = loadgen._ops("bind-event", 3, a)
    assert bind[:2] == ("POST", "/api/v1/namespaces/bench/pods/pod-13/binding")
    assert json.loads(bind[2])["target"] == {"apiVersion": "v1", "kind": "Node", "name": "node-3"}
    method, path, body, ctype, okc = event
    assert (method, path, ctype, okc) == ("POST", "/apis/events.k8s.io/v1/namespaces/bench/events", "application/json", (201,))
    ev = json.loads(body)
    assert ev["metadata"]["name"].startswith("pod-13.")
    del ev["metadata"]["name"], ev["eventTime"]
    assert ev == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"namespace": "bench"},
        "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-bench",
        "action": "Binding", "reason": "Scheduled", "type": "Normal", "note": "Successfully assigned bench/pod-13 to node-3",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "name": "pod-13", "namespace": "bench", "uid": "uid-13", "resourceVersion": "77"},
    }


def test_event_time_is_micro_time() -> None:
    ev = loadgen.event_body("ns", "p", "u", "1", "n", 1795554069.1234567)
    assert (ev["eventTime"], ev["metadata"]["name"]) == ("2026-11-24T21:01:09.123456Z", f"p.{int(1795554069.1234567 * 1e9):x}")


def ceiling() -> dict:
    run = {"procs": 2, "threads": 16, "ok": 3000, "errors": 0, "cpu_s": 1.5, "rate": 1200.0, "seconds": 2.5}
    return {
        "type": "ceiling", "nodes": 500, "pods": 3000, "cores": 2, "loadavg_start": 0.5, "loadavg_end": 1.5,
        "node_creation": {"rate": 500.0}, "pod_creation": {**run, "rate": 1100.0}, "bind": run,
        "server_cpu_bind_s": {"kube-apiserver": 3.0, "etcd": 0.6},
        "bind_event": {**run, "ok": 6000, "rate": 600.0, "seconds": 5.0, "cpu_s": 2.0, "watch_events": 3000},
        "server_cpu_bind_event_s": {"kube-apiserver": 6.0, "etcd": 1.5},
    }


def test_ceiling_lines_print_the_pair_rate_its_cpu_and_the_bound_of_two_cores() -> None:
    lines = bench.ceiling_lines(ceiling())
    assert lines[2] == (
        "**What each scheduled pod costs the server**: its Binding and the Event kube-scheduler writes for it (`events.k8s.io/v1`, reason Scheduled), "
        "with one watch on all pods open (a scheduler's informer; `loadgen.py bind-event --watch`): **600 pairs/s** (3,000 pairs, 0 errors, "
        "the watch delivered 3000 events; apiserver 6.0 s + etcd 1.5 s CPU in 5.0 s, 2.00 + 0.50 ms per pair, 1.50 cores; client CPU 2.0 s; "
        "at that CPU per pair, the machine's 2 cores given to the server alone would carry at most **800 pairs/s**). "
        "With the machine as loaded as it was then (load average above), no scheduler that binds each pod and writes its Event in the run can schedule faster than this "
        "(one that writes its Events later can bind faster for a while, up to the bind rate); a scheduler running beside the server takes cores from it."
    )


def test_summary_prints_the_ceiling_next_to_the_results() -> None:
    live = {"type": "live", "workload": "basic", "nodes": 500, "pods": 3000, "qps": 5000.0, "burst": 5000, "create": "before", "round": 1, "bound": 3000, "throughput": {"avg": 400.0}}
    groups = {(500, 3000, 5000.0, 5000, "before", "basic", 1): {"kube-scheduler": {**live, "scheduler": "kube-scheduler"}}}
    rows = bench.summary_table(groups, {(500, 3000): ceiling()})
    assert rows[-2] == "| basic | 500 × 3,000 | 5000/5000, before | 1 | ceiling: bind + Event, no scheduler | 600.0 (kube-scheduler × 1.50) | | | | | | | | |"


def test_machine_cpu_per_pod_and_what_the_cores_carry() -> None:
    r = {"bound": 3000, "cores": 2, "cpu_window_s": {"scheduler": 5.4, "kube-apiserver": 6.0, "etcd": 0.6}}
    assert round(bench.live_value(r, ("_machine_per_pod",), 1), 6) == 4.0
    assert round(bench.live_value(r, ("_cores_bound",), 1), 6) == 500.0
    assert bench.live_value({**r, "cores": None}, ("_cores_bound",), 1) is None
    assert bench.live_value({**r, "cpu_window_s": {"scheduler": 5.4, "kube-apiserver": None, "etcd": 0.6}}, ("_machine_per_pod",), 1) is None
