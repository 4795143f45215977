"""The differential test at scale: many random scenarios, kube-scheduler v1.36.3 against kubesched,
decision by decision, and a report.

    python bench/differential.py --scenarios 60 --first-seed 1 [--config FILE] [--out DIR]

Starts its own control plane (etcd + kube-apiserver built from Go modules, as the e2e tests),
runs ``--scenarios`` seeded scenarios (``tests/e2e/differential/scenarios.py``: 3-9 nodes, 14-26
pending pods each) through the harness (``tests/e2e/differential/harness.py``: kube-scheduler
at -v=10 and kubesched on the same state before each pod) and writes
``bench/results/<date>-differential.md`` (and ``.json`` with every pod's comparison, about 1 MB
per 100 scenarios: not committed). The exit
status is 1 when any difference was found.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "controlplane"))
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "differential"))

from controlplane import ControlPlane, ensure_assets, pinned_kubernetes_version  # noqa: E402
from harness import Differential, ScenarioResult, summarize  # noqa: E402
from scenarios import scenario  # noqa: E402


def _git_rev() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def report(results: list[ScenarioResult], meta: dict[str, Any]) -> str:
    s = summarize(results)
    L = [f"# Differential test: kube-scheduler {meta['kubernetes']} vs kubesched — {meta['date']}", ""]
    L.append(
        f"Commit `{meta['commit']}`, {meta['machine']}. Command: `{meta['command']}`. Scenarios "
        f"from `tests/e2e/differential/scenarios.py` (seeds {meta['seeds']}), compared by "
        "`tests/e2e/differential/harness.py` (kube-scheduler at -v=10 with OpportunisticBatching off, "
        "kubesched in process on the same API server, the same state before each pod)."
    )
    L.append("")
    L.append("| figure | value |")
    L.append("|---|---|")
    rows = [
        ("scenarios", s["scenarios"]),
        ("pending pods compared", s["pods"]),
        ("bound by kube-scheduler in their first cycle", s["bound"]),
        ("unschedulable in their first cycle (messages compared)", s["unschedulable"]),
        ("of which preempted", s["preempted"]),
        ("pods with several feasible nodes (scores compared)", s["scored"]),
        ("(pod, node) pairs whose every plugin score and total were compared", s["node_scores_compared"]),
        ("pods whose top total was tied (chosen node checked among the tied)", s["ties"]),
        ("**pods with any difference**", f"**{s['pods_with_differences']}**"),
        ("wall time of the runs (s)", s["seconds"]),
    ]
    L += [f"| {k} | {v} |" for k, v in rows]
    L.append("")
    if s["differences_by_kind"]:
        L.append("Differences by kind:")
        L.append("")
        for k, n in sorted(s["differences_by_kind"].items(), key=lambda kv: -kv[1]):
            L.append(f"- {k}: {n}")
        L.append("")
        L.append("First differences:")
        L.append("")
        shown = 0
        for r in results:
            for d in r.differences:
                if shown < 40:
                    L.append(f"- `{d}`")
                    shown += 1
        L.append("")
    else:
        L.append("**0 differences**: feasible nodes, every plugin's per-node score, totals, chosen nodes and messages are the same for every pod; "
                 "the cycle's own algorithm (the column forms, as `kubesched run` schedules) agrees with them on every pod.")
        L.append("")
    L.append("| seed | nodes | pods | bound | unschedulable | preempted | differences | seconds |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in results:
        L.append(
            f"| {r.seed} | {r.nodes} | {len(r.pods)} | {sum(1 for p in r.pods if p.kube_node)} | "
            f"{sum(1 for p in r.pods if not p.kube_node)} | {sum(1 for p in r.pods if p.preempted)} | "
            f"{len(r.differences)} | {r.seconds:.1f} |"
        )
    L.append("")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", type=int, default=60)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--config", help="KubeSchedulerConfiguration both schedulers run (default: the default profile)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"), help="directory of the report")
    ap.add_argument("--workdir", help="control plane and logs here (default: a temporary directory)")
    args = ap.parse_args(argv)

    config = yaml.safe_load(Path(args.config).read_text()) if args.config else None
    seeds = list(range(args.first_seed, args.first_seed + args.scenarios))
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="kubesched-differential-"))
    cp = ControlPlane(ensure_assets(), workdir / "controlplane", start_timeout=180).start()
    results: list[ScenarioResult] = []
    try:
        d = Differential(cp, workdir / "differential", config)
        try:
            for seed in seeds:
                r = d.run(scenario(seed))
                results.append(r)
                print(f"seed {seed}: {len(r.pods)} pods, {len(r.differences)} differences, {r.seconds:.1f}s", flush=True)
                for line in r.differences[:5]:
                    print(f"    {line}", flush=True)
        finally:
            d.close()
    finally:
        cp.stop()

    date = dt.date.today().isoformat()
    meta = {
        "date": date,
        "commit": _git_rev(),
        "kubernetes": pinned_kubernetes_version(),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "command": "python bench/differential.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seeds": f"{seeds[0]} to {seeds[-1]}",
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    md = out / f"{date}-differential.md"
    md.write_text(report(results, meta))
    (out / f"{date}-differential.json").write_text(json.dumps({"meta": meta, "summary": summarize(results), "scenarios": [{"seed": r.seed, "nodes": r.nodes, "seconds": round(r.seconds, 2), "pods": [{k: v for k, v in p.as_dict().items() if k != "scores"} for p in r.pods]} for r in results]}, separators=(",", ":")))
    print(f"wrote {md}")
    print(json.dumps(summarize(results), indent=1))
    return 1 if any(r.differences for r in results) else 0


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"{time.monotonic() - started:.0f} s")
    sys.exit(code)
