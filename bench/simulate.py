"""Simulate throughput: pods/s of ``kubesched simulate`` on a generated cluster (no API server).

    python bench/simulate.py --nodes 1000 --pods 5000 [--profile default|minimal] [--seed 1] [--json]

Nodes: 4 CPU, 16Gi, 110 pods, Ready, spread over 3 zones. Pods: 100m CPU, 128Mi (the
scheduler_perf SchedulingBasic shape). Prints figures; it is not a pass/fail test.

``load`` is reading the YAML once (timed alone); ``schedule`` is the rest of ``simulate()``
(it reads the file again, which is subtracted). ``pods/s`` is pods / schedule wall time;
``pods/cpu-s`` is pods / schedule CPU time of this process, which a busy machine disturbs less.
``--json`` prints one JSON object instead (bench/bench.py uses it).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time

import yaml

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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--profile", choices=["default", "minimal"], default="default")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()

    from kubesched.runtime.cli import simulate

    with tempfile.TemporaryDirectory() as d:
        cluster = os.path.join(d, "cluster.yaml")
        write_cluster(cluster, a.nodes, a.pods)
        cfg = None
        if a.profile == "minimal":
            cfg = os.path.join(d, "config.yaml")
            with open(cfg, "w") as f:
                f.write(MINIMAL)
        from kubesched.runtime.cluster.simulated import load_manifests

        t0 = time.perf_counter()
        c0 = time.process_time()
        load_manifests(cluster)
        load = time.perf_counter() - t0
        load_cpu = time.process_time() - c0
        t0 = time.perf_counter()
        c0 = time.process_time()
        report = simulate(cluster, cfg, seed=a.seed)
        wall = time.perf_counter() - t0 - load
        cpu = time.process_time() - c0
        sched_cpu = max(1e-9, cpu - load_cpu)
    s = report["summary"]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if a.json:
        import json

        print(json.dumps({
            "nodes": a.nodes, "pods": a.pods, "profile": a.profile, "python": platform.python_version(),
            "scheduled": s["scheduled"], "unschedulable": s["unschedulable"], "errors": s["errors"],
            "load_s": load, "load_cpu_s": load_cpu, "schedule_s": wall, "schedule_cpu_s": sched_cpu,
            "pods_per_s": a.pods / wall, "pods_per_cpu_s": a.pods / sched_cpu, "peak_rss_mib": rss,
        }))
        return 0
    print(f"kubesched simulate: {a.nodes} nodes x {a.pods} pods, profile={a.profile}, python {platform.python_version()}")
    print(f"  scheduled={s['scheduled']} unschedulable={s['unschedulable']} errors={s['errors']}")
    print(f"  load {load:.2f}s; schedule {wall:.2f}s (cpu {sched_cpu:.2f}s) -> {a.pods / wall:.0f} pods/s, {a.pods / sched_cpu:.0f} pods/cpu-s, peak RSS {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
