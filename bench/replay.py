"""Replay the openb trace over its real times with ``kubesched simulate``: wall, CPU, peak RSS.

    python bench/replay.py [--rounds 3] [--seed 1] [--config C] [--departures delete-at|run-for|none]
                           [--openb-nodes CSV --openb-pods CSV] [--no-write]

The trace (default CSVs in /work/shared/traces/openb/) is imported once with
``kubesched import openb`` (default departures: each pod arrives at its creation time and is
deleted at its deletion time: 8,152 pods on 1,523 nodes over 149 virtual days). Each round then
runs ``kubesched simulate WORKLOAD --seed S --metrics M.json --report R.html`` (table output to
/dev/null) in a child process, which this script measures from outside: wall time, CPU seconds
(user + sys of the child, from ``wait4``), peak RSS. Inside the child, the command runs
unchanged; a wrapper around three of its functions only notes the wall and CPU time of each phase:

* ``start``: Python start-up and imports, up to reading the workload;
* ``load``: ``load_manifests`` (parse the YAML);
* ``setup``: the simulated cluster, the scheduler and its plugins;
* ``replay``: ``SimulatedCluster.run`` (the replay over virtual time; the Measurements'
  ``elapsed`` is this wall time plus the plugins' ``close()``);
* ``report``: ``render_report`` (the HTML report);
* ``rest``: the pod rows, the measurements, writing the metrics JSON and the table.

``pods/cpu-s`` is pods / CPU seconds (of the replay, and of the whole command), which a busy
machine disturbs less than wall time. The load average (``/proc/loadavg``) before and after says
how busy the machine was. Results go to bench/results/replay/DATE-COMMIT.{json,md} (``--no-write``
only prints). Prints figures; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OPENB = Path("/work/shared/traces/openb")
RESULTS = HERE / "results" / "replay"
PHASES = ("start", "load", "setup", "replay", "report", "rest")

#: run in the child: ``kubesched simulate`` as the CLI runs it, with the wall and CPU time of each
#: phase noted around three functions (one call each), written as JSON to argv[1]
CHILD = r"""
import json, sys, time
T0 = (time.perf_counter(), time.process_time())
marks = {}

def wrap(owner, name, phase):
    fn = getattr(owner, name)
    def timed(*args, **kwargs):
        w, c = time.perf_counter(), time.process_time()
        marks.setdefault(phase + "_at", (w, c))
        try:
            return fn(*args, **kwargs)
        finally:
            marks[phase] = (time.perf_counter() - w, time.process_time() - c)
    setattr(owner, name, timed)

from kubesched.runtime.cli import main
from kubesched.runtime.cluster import simulated
from kubesched.runtime.sim import report
wrap(simulated, "load_manifests", "load")
wrap(simulated.SimulatedCluster, "run", "replay")
wrap(report, "render_report", "report")
out = sys.argv[1]
try:
    main.main(args=sys.argv[2:], prog_name="kubesched", standalone_mode=False)
finally:
    end = (time.perf_counter(), time.process_time())
    json.dump({"t0": T0, "end": end, "marks": marks}, open(out, "w"))
"""


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    sha = git("rev-parse", "--short", "HEAD") or "unknown"
    # the work tree is shared: uncommitted changes to tracked files make the figures not the commit's
    return sha + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def run_child(argv: list[str]) -> dict[str, float]:
    """Run ``argv`` to completion (stdout to /dev/null); its wall, CPU (user + sys) and peak RSS
    (MiB), from ``wait4``: this child's own resource usage."""
    with tempfile.TemporaryFile() as err:
        w = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - w
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)}: exit code {proc.returncode}\n{err.read().decode(errors='replace')}")
    return {
        "wall": wall,
        "cpu": ru.ru_utime + ru.ru_stime,
        "user": ru.ru_utime,
        "sys": ru.ru_stime,
        "maxrss_mib": ru.ru_maxrss / 1024,
    }


def phases(timing: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Wall and CPU seconds of each phase (PHASES) from the child's marks."""
    t0w, t0c = timing["t0"]
    endw, endc = timing["end"]
    marks = timing["marks"]
    missing = [p for p in ("load", "replay", "report") if p not in marks]
    if missing:
        raise SystemExit(f"the child did not reach {', '.join(missing)}: did simulate change?")
    out: dict[str, dict[str, float]] = {}
    out["start"] = {"wall": marks["load_at"][0] - t0w, "cpu": marks["load_at"][1] - t0c}
    out["load"] = {"wall": marks["load"][0], "cpu": marks["load"][1]}
    load_end = (marks["load_at"][0] + marks["load"][0], marks["load_at"][1] + marks["load"][1])
    out["setup"] = {
        "wall": marks["replay_at"][0] - load_end[0],
        "cpu": marks["replay_at"][1] - load_end[1],
    }
    out["replay"] = {"wall": marks["replay"][0], "cpu": marks["replay"][1]}
    out["report"] = {"wall": marks["report"][0], "cpu": marks["report"][1]}
    accounted_w = sum(v["wall"] for v in out.values())
    accounted_c = sum(v["cpu"] for v in out.values())
    out["rest"] = {"wall": (endw - t0w) - accounted_w, "cpu": (endc - t0c) - accounted_c}
    return out


def summarize(rounds: list[dict[str, Any]], pods: int) -> dict[str, Any]:
    """Median, min and max of each figure over the rounds."""

    def stats(values: list[float]) -> dict[str, float]:
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    out: dict[str, Any] = {
        "wall": stats([r["wall"] for r in rounds]),
        "cpu": stats([r["cpu"] for r in rounds]),
        "maxrss_mib": stats([r["maxrss_mib"] for r in rounds]),
        "elapsed": stats([r["elapsed"] for r in rounds]),
        "pods_per_cpu_s": stats([pods / r["cpu"] for r in rounds]),
        "replay_pods_per_cpu_s": stats([pods / r["phases"]["replay"]["cpu"] for r in rounds]),
        "phases": {
            p: {k: stats([r["phases"][p][k] for r in rounds]) for k in ("wall", "cpu")}
            for p in PHASES
        },
    }
    return out


def _f(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def _range(s: dict[str, float], digits: int = 2) -> str:
    if _f(s["min"], digits) == _f(s["max"], digits):
        return _f(s["median"], digits)
    return f"{_f(s['median'], digits)} ({_f(s['min'], digits)}..{_f(s['max'], digits)})"


def markdown(result: dict[str, Any]) -> str:
    """The result as the Markdown page written beside the JSON."""
    s = result["summary"]
    lines = [
        f"# openb replay: {result['date']} at {result['commit']}",
        "",
        f"`{result['command']}`",
        "",
        f"Workload: the openb trace, `kubesched import openb --departures {result['departures']}` "
        f"({result['nodes']} nodes, {result['pods']} pods; import {_f(result['import']['wall'])} s wall, "
        f"{_f(result['import']['cpu'])} s CPU). Config: {result['config'] or 'default profile'}, "
        f"seed {result['seed']}. {len(result['rounds'])} round{'s' if len(result['rounds']) > 1 else ''}, "
        "one process each; median (min..max).",
        "",
        f"Machine: {result['machine']['cpus']} CPUs, {result['machine']['platform']}, Python "
        f"{result['machine']['python']}; load average (1, 5, 15 min) before "
        f"{', '.join(map(str, result['loadavg_before']))}, after "
        f"{', '.join(map(str, result['loadavg_after']))}.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| replay wall (Measurements' `elapsed`), s | {_range(s['elapsed'])} |",
        f"| replay CPU, s | {_range(s['phases']['replay']['cpu'])} |",
        f"| replay pods / CPU-s | {_range(s['replay_pods_per_cpu_s'], 0)} |",
        f"| whole command wall, s | {_range(s['wall'])} |",
        f"| whole command CPU (user + sys), s | {_range(s['cpu'])} |",
        f"| whole command pods / CPU-s | {_range(s['pods_per_cpu_s'], 0)} |",
        f"| peak RSS, MiB | {_range(s['maxrss_mib'], 0)} |",
        "",
        "| phase | wall, s | CPU, s |",
        "|---|---|---|",
    ]
    for p in PHASES:
        ph = s["phases"][p]
        lines.append(f"| {p} | {_range(ph['wall'])} | {_range(ph['cpu'])} |")
    lines += [
        "",
        "| round | wall, s | CPU, s | elapsed, s | replay CPU, s | peak RSS, MiB | load avg before |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(result["rounds"], 1):
        lines.append(
            f"| {i} | {_f(r['wall'])} | {_f(r['cpu'])} | {_f(r['elapsed'])} | "
            f"{_f(r['phases']['replay']['cpu'])} | {_f(r['maxrss_mib'], 0)} | {r['loadavg_before'][0]} |"
        )
    lines += [
        "",
        f"Totals of every round: {result['totals']}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--config", default=None, help="KubeSchedulerConfiguration (default: the default profile)")
    ap.add_argument("--departures", default="delete-at", choices=["delete-at", "run-for", "none"])
    ap.add_argument("--openb-nodes", default=str(OPENB / "openb_node_list_all_node.csv"))
    ap.add_argument("--openb-pods", default=str(OPENB / "openb_pod_list_default.csv"))
    ap.add_argument("--no-write", action="store_true", help="print only; write nothing under bench/results")
    a = ap.parse_args(argv)
    if a.rounds < 1:
        ap.error("--rounds: expected at least 1")
    kubesched = [sys.executable, "-m", "kubesched.runtime.cli"]
    started = datetime.datetime.now(datetime.UTC)
    load_before = loadavg()
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        workload = os.path.join(tmp, "openb.yaml")
        imp = run_child(
            [*kubesched, "import", "openb", "--nodes", a.openb_nodes, "--pods", a.openb_pods,
             "--departures", a.departures, "-o", workload]
        )
        print(f"import: {imp['wall']:.2f} s wall, {imp['cpu']:.2f} s CPU", file=sys.stderr)
        rounds: list[dict[str, Any]] = []
        totals: list[dict[str, Any]] = []
        nodes = pods = 0
        for i in range(a.rounds):
            metrics_path = os.path.join(tmp, f"m{i}.json")
            timing_path = os.path.join(tmp, f"t{i}.json")
            args = ["simulate", workload, "--seed", str(a.seed), "--metrics", metrics_path,
                    "--report", os.path.join(tmp, f"r{i}.html")]
            if a.config:
                args += ["--config", a.config]
            before = loadavg()
            r = run_child([sys.executable, "-c", CHILD, timing_path, *args])
            m = json.loads(Path(metrics_path).read_text())
            with open(timing_path) as f:
                r["phases"] = phases(json.load(f))
            r["elapsed"] = m["elapsed"]
            r["loadavg_before"] = before
            totals.append(m["totals"])
            nodes = len(m["heatmap"]["nodes"])
            pods = m["totals"]["arrived"]
            rounds.append(r)
            print(
                f"round {i + 1}: wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s, replay {r['elapsed']:.2f} s wall "
                f"{r['phases']['replay']['cpu']:.2f} s CPU, peak RSS {r['maxrss_mib']:.0f} MiB (load {before[0]})",
                file=sys.stderr,
            )
    if any(t != totals[0] for t in totals):
        raise SystemExit(f"the rounds disagree (a seeded replay is deterministic): {totals}")
    command = "kubesched simulate openb.yaml --seed {} --metrics M.json --report R.html{}".format(
        a.seed, f" --config {a.config}" if a.config else ""
    )
    result = {
        "bench": "replay",
        "date": started.strftime("%Y-%m-%d"),
        "started": started.isoformat(timespec="seconds"),
        "commit": commit(),
        "command": command,
        "departures": a.departures,
        "config": a.config,
        "seed": a.seed,
        "nodes": nodes,
        "pods": pods,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "import": imp,
        "rounds": rounds,
        "totals": totals[0],
        "summary": summarize(rounds, pods),
    }
    md = markdown(result)
    print(md)
    if not a.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = RESULTS / f"{result['date']}-{result['commit']}"
        stem.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
        stem.with_suffix(".md").write_text(md)
        print(f"wrote {stem}.json and {stem}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
