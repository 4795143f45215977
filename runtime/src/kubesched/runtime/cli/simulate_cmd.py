"""``kubesched simulate``: schedule a cluster file on the embedded simulated cluster."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from . import app
from .app import guard, load_config_file, main


@main.command("simulate")
@click.argument("cluster", type=click.Path(dir_okay=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="KubeSchedulerConfiguration file.")
@click.option("--seed", type=int, default=None, help="Seed for tie-breaking between equal scores.")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--trace", is_flag=True, default=False, help="Log every extension-point call (or KUBESCHED_TRACE=1).")
@click.option("--reuse-results/--no-reuse-results", default=True, show_default=True, help="Reuse Filter results and raw Scores between pods with equal signatures (sign_pod); decisions are the same either way.")
@click.pass_context
def simulate_cmd(ctx: click.Context, cluster: str, config_path: str | None, seed: int | None, output: str, trace: bool, reuse_results: bool) -> None:
    """Schedule the pods of CLUSTER (multi-document YAML) on the embedded simulated cluster."""
    trace = trace or os.environ.get("KUBESCHED_TRACE", "") not in ("", "0", "false")

    def run() -> dict[str, Any]:
        return simulate(cluster, config_path, seed=seed, trace=trace, reuse_results=reuse_results)

    report = guard(ctx, run)
    if output == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        _print_table(report)


def simulate(
    cluster_path: str,
    config_path: str | None = None,
    *,
    seed: int | None = None,
    trace: bool = False,
    registry: Any = None,
    tracer: Any = None,
    reuse_results: bool = True,
) -> dict[str, Any]:
    """Run a simulation and return the JSON report (``pods`` and ``summary``)."""
    from ..cluster.simulated import SimulatedCluster, load_manifests
    from ..observe.trace import Tracer
    from ..scheduler import Scheduler

    reg = registry or app.registry()
    cfg = load_config_file(config_path, reg)
    manifests = load_manifests(cluster_path)
    sim = SimulatedCluster(manifests, source=cluster_path)
    if tracer is None and trace:
        tracer = Tracer(sys.stderr)
    sched = Scheduler(cfg, reg, sim, seed=seed, tracer=tracer, simulated=True, reuse_results=reuse_results)
    try:
        sim.run(sched)
    finally:
        sched.shutdown()  # the run is over (or failed): plugins' close()
    by_name: dict[tuple[str, str], Any] = {}
    for r in sched.results.values():
        by_name.setdefault((r.namespace, r.name), r)
    pods = []
    for obj in manifests:
        if obj.get("kind") != "Pod":
            continue
        md = obj.get("metadata") or {}
        ns = str(md.get("namespace") or "default")
        name = str(md.get("name"))
        if (obj.get("spec") or {}).get("nodeName"):
            continue  # already running
        res = by_name.get((ns, name))
        if res is None:
            continue  # another scheduler's pod
        pods.append(res.as_dict())
    summary = {
        "nodes": sched.cache.node_count(),
        "pods": len(pods),
        "scheduled": sum(1 for p in pods if p["status"] == "Scheduled"),
        "unschedulable": sum(1 for p in pods if p["status"] == "Unschedulable"),
        "errors": sum(1 for p in pods if p["status"] == "Error"),
        "profiles": [p.scheduler_name for p in cfg.profiles],
    }
    return {"pods": pods, "summary": summary}


_STYLE = {"Scheduled": "green", "Unschedulable": "yellow", "Error": "red"}


def _print_table(report: dict[str, Any], *, fast: bool = True) -> None:
    """The report as a rich table, then the summary line. Without colors (output to a file or
    a pipe) the rows are laid out by :func:`_print_rows`, which writes the bytes rich writes at
    a fraction of its cost (rich spends ~0.7 ms per row: 6 s for 8,000 pods)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=max(120, Console().width))
    table = Table(title="kubesched simulate")
    table.add_column("pod")
    table.add_column("profile")
    table.add_column("node")
    table.add_column("status")
    table.add_column("message", overflow="fold")
    plain = [
        (f"{p['namespace']}/{p['name']}", p.get("profile") or "-", p["node"] or "-", p["status"], p["message"])
        for p in report["pods"]
    ]
    if not (fast and plain and console.color_system is None and not console.legacy_windows and not console.options.ascii_only and not console.record):
        for pod, profile, node, status, message in plain:
            table.add_row(escape(pod), escape(profile), escape(node), f"[{_STYLE.get(status, 'white')}]{status}[/]", escape(message))
        console.print(table)
    else:
        _print_rows(console, table, plain)
    s = report["summary"]
    console.print(
        f"{s['pods']} pods on {s['nodes']} nodes: {s['scheduled']} scheduled, "
        f"{s['unschedulable']} unschedulable, {s['errors']} errors"
    )


def _is_plain(text: str) -> bool:
    """True when rich shows ``text`` (escaped markup) as is, one character per cell."""
    from rich._emoji_replace import _emoji_replace

    return text.isascii() and text.isprintable() and "[" not in text and "\\" not in text and (":" not in text or _emoji_replace(text) == text)


def _print_rows(console: Any, table: Any, rows: Sequence[tuple[str, ...]]) -> None:
    """Write ``table`` with ``rows`` as ``console.print`` would, on a console without colors.

    rich sizes a column from the largest minimum and maximum widths of its cells; a small table
    holding only the cells that set them (plain ones measured here; every other cell is
    measured by rich) is rendered by rich for the title, edges, header and column widths. A
    plain cell that fits its column is one padded line; every other cell is rendered by rich
    alone at its column's width (once per distinct text)."""
    from rich.markup import escape
    from rich.table import Column, Table

    ncols = len(table.columns)
    best_min: list[tuple[int, str]] = [(-1, "")] * ncols
    best_max: list[tuple[int, str]] = [(-1, "")] * ncols
    special: dict[tuple[int, str], None] = {}
    is_plain: dict[str, bool] = {}
    for row in rows:
        for j, text in enumerate(row):
            ok = is_plain.get(text)
            if ok is None:
                ok = is_plain[text] = _is_plain(text)
            if not ok:
                special[(j, text)] = None
                continue
            n = len(text)
            if n > best_max[j][0]:
                best_max[j] = (n, text)
            if n > best_min[j][0]:
                w = max(map(len, text.split()), default=n)
                if w > best_min[j][0]:
                    best_min[j] = (w, text)

    def markup(j: int, text: str) -> str:
        return f"[{_STYLE.get(text, 'white')}]{text}[/]" if j == 3 else escape(text)

    cells = [(j, text) for j in range(ncols) for n, text in (best_min[j], best_max[j]) if n >= 0]
    for j, text in [*cells, *special]:
        table.add_row(*[markup(j, text) if k == j else "" for k in range(ncols)])
    with console.capture() as cap:
        console.print(table)
    head = cap.get().split("\n")[:-1]
    box = table.box.substitute(console.options, safe=console.safe_box)
    sep = next(i for i, line in enumerate(head) if line.startswith(box.head_row_left))
    widths = [len(c) for c in head[sep][1:-1].split(box.head_row_cross)]
    out = head[: sep + 1]

    rendered: dict[tuple[int, str], list[str]] = {}

    def render(j: int, text: str) -> list[str]:
        got = rendered.get((j, text))
        if got is None:
            col = table.columns[j]
            one = Table(Column(width=widths[j] - 2, justify=col.justify, overflow=col.overflow, no_wrap=col.no_wrap), box=None, show_header=False, show_edge=False)
            one.add_row(markup(j, text))
            with console.capture() as c:
                console.print(one)
            got = rendered[(j, text)] = c.get().split("\n")[:-1]
        return got

    blank = [" " * w for w in widths]
    last = len(rows) - 1
    for i, row in enumerate(rows):
        left, mid, right = (box.foot_left, box.foot_vertical, box.foot_right) if i == last else (box.mid_left, box.mid_vertical, box.mid_right)
        lines: list[list[str]] = []
        for j, text in enumerate(row):
            w = widths[j]
            if len(text) <= w - 2 and is_plain[text]:
                lines.append([" " + text + " " * (w - 1 - len(text))])
            else:
                lines.append(render(j, text))
        height = max(map(len, lines))
        if height == 1:
            out.append(left + mid.join(c[0] for c in lines) + right)
        else:
            for k in range(height):
                out.append(left + mid.join(c[k] if k < len(c) else blank[j] for j, c in enumerate(lines)) + right)
    out.append(head[-1])
    console.file.write("\n".join(out) + "\n")
