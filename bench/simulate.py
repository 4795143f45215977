"""Simulate throughput: pods/s of ``kubesched simulate`` on a generated cluster or the openb trace
(no API server).

    python bench/simulate.py --nodes 1000 --pods 5000 [--profile default|minimal] [--seed 1] [--json]
    python bench/simulate.py --openb [--openb-nodes CSV --openb-pods CSV] [--nodes N --pods M]
    python bench/simulate.py --openb --growth [--grid 400,800,1523x2000,4000,8152]

Generated cluster: nodes 4 CPU, 16Gi, 110 pods, Ready, spread over 3 zones; pods 100m CPU, 128Mi
(the scheduler_perf SchedulingBasic shape). ``--openb``: the trace as bench/openb.py converts it
(default CSVs in /work/shared/traces/openb/); ``--nodes N``/``--pods M`` keep its first N nodes
(file order) and first M pods (creation order). ``--growth`` runs each point of ``--grid``
(``NODES,...xPODS,...``; ``all`` = the whole trace's count) in its own process and prints how
time grows with nodes and with pods. Prints figures; it is not a pass/fail test.

``load`` is reading the YAML once (timed alone); ``schedule`` is the rest of ``simulate()``
(it reads the file again, which is subtracted). ``pods/s`` is pods / schedule wall time;
``pods/cpu-s`` is pods / schedule CPU time of this process, which a busy machine disturbs less.
``--json`` prints one JSON object instead (bench/bench.py uses it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
OPENB = Path("/work/shared/traces/openb")

MINIMAL = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: "*"}]
    queueSort: {enabled: [{name: PrioritySort}]}
    bind: {enabled: [{name: DefaultBinder}]}
"""


def write_cluster(path: str, nodes: int, pods: int) -> None:
    docs = []
    for i in range(nodes):
        docs.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i}", "labels": {
                "kubernetes.io/hostname": f"node-{i}", "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]},
        })
    for i in range(pods):
        docs.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
        })
    with open(path, "w") as f:
        yaml.safe_dump_all(docs, f)


def write_openb(path: str, nodes_csv: str, pods_csv: str, nodes: int | None, pods: int | None) -> tuple[int, int]:
    """The trace's first ``nodes`` nodes and first ``pods`` pods as a cluster YAML; returns the counts."""
    sys.path.insert(0, str(HERE))
    import openb

    objs = openb.convert(nodes_csv, pods_csv)
    ns = [o for o in objs if o["kind"] == "Node"][:nodes]
    ps = [o for o in objs if o["kind"] == "Pod"][:pods]
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with open(path, "w") as f:
        yaml.dump_all(ns + ps, f, Dumper=dumper, sort_keys=False)
    return len(ns), len(ps)


def measure(cluster: str, cfg: str | None, seed: int) -> dict[str, Any]:
    """Load time alone, then ``simulate()`` (which loads again: subtracted)."""
    from kubesched.runtime.cli import simulate
    from kubesched.runtime.cluster.simulated import load_manifests

    t0 = time.perf_counter()
    c0 = time.process_time()
    load_manifests(cluster)
    load = time.perf_counter() - t0
    load_cpu = time.process_time() - c0
    t0 = time.perf_counter()
    c0 = time.process_time()
    report = simulate(cluster, cfg, seed=seed)
    wall = max(1e-9, time.perf_counter() - t0 - load)
    cpu = time.process_time() - c0
    sched_cpu = max(1e-9, cpu - load_cpu)
    s = report["summary"]
    return {"scheduled": s["scheduled"], "unschedulable": s["unschedulable"], "errors": s["errors"],
            "load_s": load, "load_cpu_s": load_cpu, "schedule_s": wall, "schedule_cpu_s": sched_cpu,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def parse_grid(spec: str, total_nodes: int, total_pods: int) -> list[tuple[int, int]]:
    ns, _, ps = spec.partition("x")

    def num(v: str, total: int) -> int:
        return total if v.strip() == "all" else min(total, int(v))

    return [(num(n, total_nodes), num(p, total_pods)) for n in ns.split(",") for p in ps.split(",")]


def growth(a: argparse.Namespace) -> int:
    """Each grid point in its own process; a table of how time grows with nodes and pods."""
    import csv

    with open(a.openb_nodes, newline="") as f:
        total_nodes = sum(1 for _ in csv.DictReader(f))
    with open(a.openb_pods, newline="") as f:
        total_pods = sum(1 for _ in csv.DictReader(f))
    points = parse_grid(a.grid, total_nodes, total_pods)
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    for n, m in points:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--openb", "--openb-nodes", a.openb_nodes, "--openb-pods", a.openb_pods,
               "--nodes", str(n), "--pods", str(m), "--profile", a.profile, "--seed", str(a.seed), "--json"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        if p.returncode != 0:
            print(f"{n} x {m}: failed: {p.stderr[-500:]}", file=sys.stderr)
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        rows[(n, m)] = r
        print(f"{n:>6} nodes x {m:>6} pods: bound {r['scheduled']:>6}, schedule {r['schedule_cpu_s']:.1f} CPU-s ({r['pods_per_cpu_s']:.0f} pods/cpu-s, {1000 / r['pods_per_cpu_s']:.2f} ms/pod), load {r['load_s']:.1f} s", file=sys.stderr, flush=True)
    nodes = sorted({n for n, _ in rows})
    pods = sorted({m for _, m in rows})
    print(f"kubesched simulate on the openb trace ({a.openb_pods}): the first N nodes x the first M pods, profile {a.profile}, seed {a.seed}, python {platform.python_version()}")
    print()
    for title, f in (("schedule CPU seconds (pods bound)", lambda r: f"{r['schedule_cpu_s']:.1f} ({r['scheduled']:,})"),
                     ("pods per CPU-second", lambda r: f"{r['pods_per_cpu_s']:.0f}"),
                     ("ms CPU per pod", lambda r: f"{1000 / r['pods_per_cpu_s']:.2f}")):
        print(f"{title}:")
        print()
        print("| nodes \\ pods | " + " | ".join(f"{m:,}" for m in pods) + " |")
        print("|---:|" + "---:|" * len(pods))
        for n in nodes:
            print(f"| {n:,} | " + " | ".join(f(rows[(n, m)]) if (n, m) in rows else "-" for m in pods) + " |")
        print()
    if a.out:
        Path(a.out).write_text(json.dumps([{"nodes": n, "pods": m, **r} for (n, m), r in sorted(rows.items())], indent=1) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--nodes", type=int, default=None, help="generated: number of nodes (default 1000); --openb: keep the first N")
    ap.add_argument("--pods", type=int, default=None, help="generated: number of pods (default 5000); --openb: keep the first M")
    ap.add_argument("--openb", action="store_true", help="the openb trace instead of a generated cluster")
    ap.add_argument("--openb-nodes", default=str(OPENB / "openb_node_list_all_node.csv"))
    ap.add_argument("--openb-pods", default=str(OPENB / "openb_pod_list_default.csv"))
    ap.add_argument("--growth", action="store_true", help="with --openb: run the --grid points, print the growth tables")
    ap.add_argument("--grid", default="400,800,allx2000,4000,all", help="NODES,...xPODS,... for --growth ('all' = the whole trace)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per --growth point")
    ap.add_argument("--out", default="", help="with --growth: also write the points as JSON here")
    ap.add_argument("--profile", choices=["default", "minimal"], default="default")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    if a.growth:
        if not a.openb:
            ap.error("--growth needs --openb")
        return growth(a)

    with tempfile.TemporaryDirectory() as d:
        cluster = os.path.join(d, "cluster.yaml")
        if a.openb:
            nodes, pods = write_openb(cluster, a.openb_nodes, a.openb_pods, a.nodes, a.pods)
            what = f"openb trace ({a.openb_pods})"
        else:
            nodes, pods = a.nodes or 1000, a.pods or 5000
            write_cluster(cluster, nodes, pods)
            what = "generated"
        cfg = None
        if a.profile == "minimal":
            cfg = os.path.join(d, "config.yaml")
            with open(cfg, "w") as f:
                f.write(MINIMAL)
        r = measure(cluster, cfg, a.seed)
    r.update({"nodes": nodes, "pods": pods, "cluster": "openb" if a.openb else "generated", "profile": a.profile, "python": platform.python_version(),
              "pods_per_s": pods / r["schedule_s"], "pods_per_cpu_s": pods / r["schedule_cpu_s"]})
    if a.json:
        print(json.dumps(r))
        return 0
    print(f"kubesched simulate: {what}, {nodes} nodes x {pods} pods, profile={a.profile}, seed {a.seed}, python {platform.python_version()}")
    print(f"  scheduled={r['scheduled']} unschedulable={r['unschedulable']} errors={r['errors']}")
    print(f"  load {r['load_s']:.2f}s (cpu {r['load_cpu_s']:.2f}s); schedule {r['schedule_s']:.2f}s (cpu {r['schedule_cpu_s']:.2f}s) -> {r['pods_per_s']:.0f} pods/s, {r['pods_per_cpu_s']:.0f} pods/cpu-s, {1000 * r['schedule_cpu_s'] / pods:.2f} ms CPU per pod, peak RSS {r['peak_rss_mib']:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
