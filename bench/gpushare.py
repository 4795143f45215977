"""The paper's experiment in the simulator: GPU allocation against the arrived workload, per policy.

    python bench/gpushare.py [--seeds 42-46] [--policy fgd --policy bestfit ...] [-j 2]
                             [--ratio 1.3] [--trace DIR] [--configs DIR] [--note TEXT] [--no-write]

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent" (USENIX ATC 2023), Figure 7 / the artifact's ``analysis_allo_discrete.csv``
(GitHub hkust-adsl/kubernetes-scheduler-simulator, experiments/analysis/expected_results/), on
the openb default pod list. For each seed the workload is built as the paper's simulator builds
it (``kubesched.runtime.sim.openb.convert``: the 1,213 GPU nodes, GPU sharing as
``alibabacloud.com/gpu-milli``, pods shuffled by the seed and inflated by copies drawn with it
until the GPU requests reach 1.3 x the GPU capacity, one arrival per virtual second, no
departures); each policy's configuration (``examples/gpushare/<policy>.yaml``: GpuShare and the
policy, the default score plugins off, percentageOfNodesToScore 100) runs it with that seed,
through the sweep (``run_experiments``, a local pool of ``-j`` processes). FGD's
``typicalPods`` are computed from the trace's pods (``kubesched_gpushare.typical.typical_pods``,
the reference's typicalPodsConfig: CPU pods included, popularity 95 %, step 1).

The figure read from each run is the reference's: the share of GPU milli allocated at 100 % and
130 % of the GPU capacity arrived (``kubesched.runtime.sim.measure.allocation_at_arrived``).
Writes bench/results/gpushare/DATE-COMMIT.{md,json,svg}: mean and min..max over the seeds per
policy, the paper's figures beside them, the seconds each experiment took, and the chart of
allocation against arrived workload (mean over the seeds). ``--config FILE`` runs other
configurations instead (a stand-in to test the pipeline: write with ``--out-dir`` elsewhere).
Prints figures; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OPENB = Path(os.environ.get("OPENB", "/work/shared/traces/openb"))
CONFIGS = ROOT / "examples" / "gpushare"
RESULTS = HERE / "results" / "gpushare"
RESOURCE = "alibabacloud.com/gpu-milli"
#: the policies, as the files of examples/gpushare and the names the paper uses
POLICIES = {
    "random": "Random",
    "dotproduct": "DotProd",
    "gpuclustering": "GpuClustering",
    "gpupacking": "GpuPacking",
    "bestfit": "BestFit",
    "fgd": "FGD",
}
#: the paper's figures: GPU allocation (%) at 100 % and 130 % arrived, openb_pod_list_default,
#: tune 1.3, seeds 42..51, as (mean, min, max); read from the artifact's
#: experiments/analysis/expected_results/analysis_allo_discrete.csv (columns "100" and "130")
PAPER = {
    "Random": ((86.30, 85.87, 86.79), (87.47, 87.07, 88.03)),
    "DotProd": ((90.62, 90.34, 91.00), (90.85, 90.54, 91.28)),
    "GpuClustering": ((91.65, 90.62, 92.75), (91.88, 90.81, 92.96)),
    "GpuPacking": ((91.78, 91.07, 92.58), (92.00, 91.29, 92.79)),
    "BestFit": ((92.86, 92.64, 93.04), (93.08, 92.87, 93.25)),
    "FGD": ((95.23, 95.06, 95.38), (95.39, 95.27, 95.49)),
}
POINTS = (100, 130)
#: typicalPodsConfig of the reference's runs (scripts/generate_config_and_run.py defaults):
#: CPU pods included, popularity threshold 95 %, increase step 1
TYPICAL_CPU_PODS, TYPICAL_POPULARITY, TYPICAL_STEP = True, 95, 1


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    sha = git("rev-parse", "--short", "HEAD") or "unknown"
    return sha + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the sweep's pool)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def parse_seeds(spec: str) -> list[int]:
    from kubesched.runtime.sim.sweep import parse_seeds as parse

    return parse(ranges=[spec])


# --- the workloads and the configurations -------------------------------------------------------


def build_workload(trace: Path, seed: int, ratio: float, out: Path) -> dict[str, Any]:
    """The paper's workload of ``seed`` written to ``out``; what it holds."""
    from kubesched.runtime.sim.openb import GPU_SHARE_MILLI, convert, dump_yaml

    objs = convert(
        trace / "openb_node_list_all_node.csv",
        trace / "openb_pod_list_default.csv",
        gpu_share=True,
        gpu_nodes_only=True,
        shuffle=True,
        inflate=ratio,
        seed=seed,
    )
    with open(out, "w") as f:
        dump_yaml(objs, f)
    nodes = [o for o in objs if o["kind"] == "Node"]
    pods = [o for o in objs if o["kind"] == "Pod"]
    capacity = sum(int(n["status"]["allocatable"].get(GPU_SHARE_MILLI, 0)) for n in nodes)
    asked = sum(int(p["spec"]["containers"][0]["resources"]["requests"].get(GPU_SHARE_MILLI, 0)) for p in pods)
    return {"seed": seed, "nodes": len(nodes), "pods": len(pods), "gpu_capacity_milli": capacity, "gpu_asked_milli": asked}


def typical_pods_args(trace: Path) -> list[dict[str, Any]]:
    """FGD's ``typicalPods`` from the trace's pods (the reference computes them from the pod list
    before it is inflated, so every seed has the same)."""
    from kubesched_gpushare.typical import typical_pods

    from kubesched.runtime.sim.openb import GPU_CARD_MODEL, GPU_SHARE_MILLI, convert

    objs = convert(trace / "openb_node_list_all_node.csv", trace / "openb_pod_list_default.csv", gpu_share=True, annotate=False)
    classes = []
    for p in objs:
        if p["kind"] != "Pod":
            continue
        req = p["spec"]["containers"][0]["resources"]["requests"]
        cpu = int(req["cpu"].rstrip("m"))
        milli = int(req.get(GPU_SHARE_MILLI, 0))
        model = (p["metadata"].get("annotations") or {}).get(GPU_CARD_MODEL, "")
        if milli == 0:
            classes.append((cpu, 0, 0, ""))
        elif milli < 1000:
            classes.append((cpu, milli, 1, model))
        else:
            classes.append((cpu, 1000, milli // 1000, model))
    typical = typical_pods(classes, popularity_threshold=TYPICAL_POPULARITY, increase_step=TYPICAL_STEP, include_cpu_pods=TYPICAL_CPU_PODS)
    return [
        {"cpuMilli": t.cpu_milli, "gpuMilli": t.gpu_milli, "gpuCount": t.gpu_count, "gpuModel": t.gpu_model, "percentage": round(t.percentage, 6)}
        for t in typical
    ]


def with_typical_pods(config: Path, typical: list[dict[str, Any]], out: Path) -> Path:
    """``config`` with ``typicalPods`` set in the FGDScore args of every profile, written to ``out``."""
    import yaml

    doc = yaml.safe_load(config.read_text())
    for prof in doc.get("profiles") or []:
        pcs = prof.setdefault("pluginConfig", [])
        entry = next((pc for pc in pcs if pc.get("name") == "FGDScore"), None)
        if entry is None:
            entry = {"name": "FGDScore", "args": {}}
            pcs.append(entry)
        entry.setdefault("args", {})["typicalPods"] = typical
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


#: the policies' Score plugins (kubesched_gpushare.policies)
POLICY_PLUGINS = ("RandomScore", "DotProductScore", "GpuClusteringScore", "GpuPackingScore", "BestFitScore", "FGDScore")


def with_tie_break(config: Path, seed: int, out: Path) -> Path:
    """``config`` with ``tieBreak: name`` and ``tieBreakSeed: seed`` in the args of every policy
    plugin its profiles score with, written to ``out``: among equal scores the node first in an
    order drawn from the seed, as the paper's simulator decides (its kube-scheduler fork picks the
    smallest node name, the names prefixed with a permutation drawn from the seed), where
    kube-scheduler draws at random."""
    import yaml

    doc = yaml.safe_load(config.read_text())
    for prof in doc.get("profiles") or []:
        plugins = prof.get("plugins") or {}
        names = [e.get("name") for point in ("score", "multiPoint") for e in ((plugins.get(point) or {}).get("enabled") or [])]
        pcs = prof.setdefault("pluginConfig", [])
        for name in dict.fromkeys(n for n in names if n in POLICY_PLUGINS):
            entry = next((pc for pc in pcs if pc.get("name") == name), None)
            if entry is None:
                entry = {"name": name, "args": {}}
                pcs.append(entry)
            entry.setdefault("args", {}).update({"tieBreak": "name", "tieBreakSeed": seed})
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


# --- the figures --------------------------------------------------------------------------------


def curve(m: Mapping[str, Any]) -> dict[int, float | None]:
    """Allocation (%) at each arrived % of one run."""
    from kubesched.runtime.sim.measure import allocation_at_arrived

    return {x: (None if v is None else round(100 * v, 2)) for x, v in allocation_at_arrived(m, RESOURCE).items()}


def stats(values: Sequence[float]) -> dict[str, float]:
    return {"mean": round(statistics.fmean(values), 2), "min": min(values), "max": max(values)}


def summarize(runs: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> dict[str, Any]:
    """Per label: the runs' allocation at POINTS (mean, min, max), seconds, the mean curve."""
    out: dict[str, Any] = {}
    for label in labels:
        mine = [r for r in runs if r["label"] == label and "curve" in r]
        if not mine:
            continue
        row: dict[str, Any] = {"runs": len(mine), "seeds": [r["seed"] for r in mine]}
        for x in POINTS:
            vals = [r["curve"].get(str(x), r["curve"].get(x)) for r in mine]
            got = [v for v in vals if v is not None]
            row[f"at_{x}"] = stats(got) if got else None
        row["seconds"] = stats([r["elapsed"] for r in mine])
        top = max(int(k) for r in mine for k in r["curve"])
        mean_curve = {}
        for x in range(top + 1):
            got = [v for r in mine if (v := r["curve"].get(str(x), r["curve"].get(x))) is not None]
            if got:
                mean_curve[x] = round(statistics.fmean(got), 3)
        row["curve"] = mean_curve
        out[label] = row
    return out


def chart_svg(summary: Mapping[str, Any], title: str, *, xlo: int = 0, ylo: int = 0, step: int = 10) -> str:
    """Allocation (%) against arrived workload (% of the GPU capacity, ``xlo`` to 130), one
    line per policy (the mean over the seeds), y from ``ylo`` to 100 %; drawn by hand (no
    charting library here)."""
    from kubesched.runtime.sim.charts import PALETTE

    width, height = 640, 400
    x0, x1, y0, y1 = 58, width - 150, height - 42, 34
    xmax, yhi = 130.0, 100.0

    def px(x: float) -> float:
        return x0 + (x1 - x0) * (x - xlo) / (xmax - xlo)

    def py(y: float) -> float:
        return y0 - (y0 - y1) * (y - ylo) / (yhi - ylo)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11" role="img" aria-label="{escape(title)}">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{x0}" y="18" font-size="13">{escape(title)}</text>',
    ]
    for y in range(ylo, 101, step):
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{py(y):.1f}" text-anchor="end" dy="0.32em">{y} %</text>')
    for x in range(xlo, 131, step):
        out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{y0}" y2="{y0 + 4}" stroke="#333"/>')
        out.append(f'<text x="{px(x):.1f}" y="{y0 + 16}" text-anchor="middle">{x}</text>')
    for x in POINTS:
        out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{y1}" y2="{y0}" stroke="#999" stroke-dasharray="3 3"/>')
    out.append(f'<line x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}" stroke="#333"/>')
    out.append(f'<line x1="{x0}" x2="{x0}" y1="{y1}" y2="{y0}" stroke="#333"/>')
    out.append(f'<text x="{(x0 + x1) / 2:.0f}" y="{height - 6}" text-anchor="middle">arrived workload (GPU requests, % of the GPU capacity)</text>')
    out.append(f'<text transform="translate(13 {(y0 + y1) / 2:.0f}) rotate(-90)" text-anchor="middle">GPUs allocated (%)</text>')
    for k, (label, row) in enumerate(summary.items()):
        color = PALETTE[k % len(PALETTE)]
        pts = sorted((int(x), v) for x, v in row["curve"].items() if int(x) >= xlo and v >= ylo)
        if not pts:
            continue
        d = "M" + " L".join(f"{px(x):.1f} {py(v):.1f}" for x, v in pts)
        out.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="1.6" data-series="{escape(label)}"><title>{escape(label)}</title></path>')
        ly = y1 + 8 + 16 * k
        last = row["at_130"]["mean"] if row.get("at_130") else pts[-1][1]
        out.append(f'<rect x="{x1 + 12}" y="{ly - 8}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{x1 + 26}" y="{ly + 1}">{escape(label)} {last:.1f} %</text>')
    out.append("</svg>")
    return "\n".join(out)


def fmt(s: Mapping[str, float] | None) -> str:
    if not s:
        return "n/a"
    return f"{s['mean']:.2f} ({s['min']:.2f}..{s['max']:.2f})" if s["min"] != s["max"] else f"{s['mean']:.2f}"


def page(info: Mapping[str, Any], summary: Mapping[str, Any], svg_name: str) -> str:
    lines = [
        f"# GPU allocation against the arrived workload: the paper's experiment, {info['date']}",
        "",
        f"kubesched {info['commit']}, `python bench/gpushare.py {' '.join(info['argv'])}`: openb default pod list "
        f"on the {info['workloads'][0]['nodes']:,} GPU nodes ({info['workloads'][0]['gpu_capacity_milli'] // 1000:,} GPUs), "
        f"GPU sharing, pods shuffled and inflated to {info['ratio']:g} x the GPU capacity by each seed "
        f"({', '.join(str(w['pods']) for w in info['workloads'])} pods for seeds {', '.join(str(s) for s in info['seeds'])}), "
        "one arrival per virtual second, no departures. Allocation = GPU milli requested by bound pods / capacity, "
        "read at 100 % and 130 % of the capacity arrived as the paper's artifact reads it "
        "(mean over the seeds, min..max).",
        "",
        "| policy | allocation at 100 % (ours) | paper | allocation at 130 % (ours) | paper | seconds per experiment |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in summary.items():
        paper = PAPER.get(label)
        p100 = f"{paper[0][0]:.2f} ({paper[0][1]:.2f}..{paper[0][2]:.2f})" if paper else ""
        p130 = f"{paper[1][0]:.2f} ({paper[1][1]:.2f}..{paper[1][2]:.2f})" if paper else ""
        lines.append(f"| {label} | {fmt(row['at_100'])} | {p100} | {fmt(row['at_130'])} | {p130} | {fmt(row['seconds'])} |")
    lines += [
        "",
        f"![allocation against arrived workload]({svg_name})",
        f"![the same, zoomed to 80-130 % arrived]({svg_name.replace('.svg', '-zoom.svg')})",
        "",
        "The paper's figures: the artifact's experiments/analysis/expected_results/analysis_allo_discrete.csv "
        "(hkust-adsl/kubernetes-scheduler-simulator), openb_pod_list_default, tune 1.3, seeds 42..51.",
        "",
        "## Run",
        "",
        f"- {info['experiments']} experiments ({len(summary)} policies x {len(info['seeds'])} seeds), -j {info['jobs']}, "
        f"{info['wall']:.0f} s wall for the sweep, {info['cpu']:.0f} CPU-s in its processes "
        f"({info['cpu'] / max(1, info['experiments']):.0f} CPU-s per experiment); "
        f"load average before / after: {info['load_before']} / {info['load_after']}.",
        f"- Seconds per experiment: the run's own wall time (Measurements `elapsed`), {info['jobs']} at a time on "
        f"{os.cpu_count()} shared cores.",
        f"- Machine: {info['machine']}.",
    ]
    if info.get("failed"):
        lines.append(f"- Failed experiments: {len(info['failed'])}: " + "; ".join(info["failed"]))
    for note in info.get("notes") or ():
        lines.append(f"- {note}")
    return "\n".join(lines) + "\n"


# --- the run ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="42-46", help="seeds: a range 42-46 or a list 42,43 (default 42-46)")
    ap.add_argument("--policy", action="append", choices=list(POLICIES), help="a policy (repeat; default: all six)")
    ap.add_argument("--config", action="append", type=Path, help="run these configurations instead of the policies (their stem is the label)")
    ap.add_argument("--configs", type=Path, default=CONFIGS, help="where <policy>.yaml are (default examples/gpushare)")
    ap.add_argument("--ratio", type=float, default=1.3, help="inflate to this x the GPU capacity (default 1.3)")
    ap.add_argument("--trace", type=Path, default=OPENB, help="the openb trace's directory")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--note", action="append", default=[], help="a line for the Run notes")
    ap.add_argument("--no-write", action="store_true", help="only print")
    ap.add_argument(
        "--tie-break",
        choices=("name", "random"),
        default="name",
        help="equal scores: the first node in an order drawn from the seed, as the paper's simulator (default), or kube-scheduler's random draw",
    )
    args = ap.parse_args(argv)

    from kubesched.runtime.sim.sweep import Experiment, run_experiments

    seeds = parse_seeds(args.seeds)
    rev = commit()  # at the start: other engineers may commit while the sweep runs
    work = Path(tempfile.mkdtemp(prefix="kubesched-gpushare-"))
    workloads: dict[int, Path] = {}
    built = []
    for seed in seeds:
        path = work / f"openb-gpushare-{args.ratio:g}-{seed}.yaml"
        built.append(build_workload(args.trace, seed, args.ratio, path))
        workloads[seed] = path
        print(f"seed {seed}: {built[-1]['pods']} pods, GPU asked {built[-1]['gpu_asked_milli'] / built[-1]['gpu_capacity_milli']:.4f} x capacity", file=sys.stderr)
    if args.config:
        configs = [(p.stem, p) for p in args.config]
    else:
        configs = [(POLICIES[p], args.configs / f"{p}.yaml") for p in (args.policy or list(POLICIES))]
    resolved = []
    for label, cfg in configs:
        if label == "FGD":
            cfg = with_typical_pods(cfg, typical_pods_args(args.trace), work / "fgd.yaml")
        resolved.append((label, cfg))
    exps = []
    for label, cfg in resolved:
        for s in seeds:
            run_cfg = cfg
            if args.tie_break == "name" and not args.config:
                run_cfg = with_tie_break(cfg, s, work / f"{label}-{s}.yaml")
            exps.append(Experiment(str(workloads[s]), str(run_cfg), s, label))

    def progress(exp: Experiment, res: dict[str, Any]) -> None:
        if "error" in res:
            print(f"failed {exp.label} seed {exp.seed}: {res['error']}", file=sys.stderr)
            return
        c = curve(res)
        print(f"done {exp.label} seed {exp.seed}: {c.get(100)} % at 100 %, {c.get(130)} % at 130 % ({res['elapsed']:.1f} s)", file=sys.stderr)

    load_before = os.getloadavg()
    t0 = time.monotonic()
    cpu0 = cpu_seconds()
    results = run_experiments(exps, jobs=args.jobs, progress=progress)
    cpu = cpu_seconds() - cpu0
    wall = time.monotonic() - t0
    runs, failed = [], []
    for m in results:
        if "error" in m:
            failed.append(f"{m['label']} seed {m['seed']}: {m['error']}")
            continue
        runs.append({"label": m["label"], "seed": m["seed"], "elapsed": m["elapsed"], "attempts": m["totals"]["attempts"], "scheduled": m["totals"]["scheduled"], "curve": curve(m)})
    summary = summarize(runs, [label for label, _ in resolved])
    today = datetime.date.today().isoformat()
    info = {
        "date": today,
        "commit": rev,
        "argv": list(argv if argv is not None else sys.argv[1:]),
        "seeds": seeds,
        "ratio": args.ratio,
        "jobs": args.jobs,
        "experiments": len(exps),
        "workloads": built,
        "wall": wall,
        "cpu": cpu,
        "load_before": " ".join(f"{x:.2f}" for x in load_before),
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "machine": f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        "failed": failed,
        "tie_break": args.tie_break,
        "notes": [
            *args.note,
            *(
                ["Equal scores: the first node in an order drawn from the seed (the policies' tieBreak: name, tieBreakSeed: the seed), "
                 "as the paper's simulator, whose kube-scheduler fork picks the smallest node name among equal scores."]
                if args.tie_break == "name" and not args.config
                else []
            ),
        ],
    }
    name = f"{today}-{info['commit'].replace('+', '-')}"
    md = page(info, summary, f"{name}.svg")
    print(md)
    if not args.no_write:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        (args.out_dir / f"{name}.md").write_text(md)
        title = f"GPU allocation vs arrived workload, openb, mean of {len(seeds)} seeds"
        (args.out_dir / f"{name}.svg").write_text(chart_svg(summary, title) + "\n")
        (args.out_dir / f"{name}-zoom.svg").write_text(chart_svg(summary, title + " (zoomed)", xlo=80, ylo=80, step=5) + "\n")
        (args.out_dir / f"{name}.json").write_text(json.dumps({"info": info, "summary": summary, "runs": runs, "paper": PAPER}, indent=1) + "\n")
        print(f"wrote {args.out_dir / name}.{{md,svg,json}} and -zoom.svg", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
