"""``kubesched simulate``: schedule a cluster file on the embedded simulated cluster."""

from __future__ import annotations

import json
import os
import sys
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


def _print_table(report: dict[str, Any]) -> None:
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
    style = {"Scheduled": "green", "Unschedulable": "yellow", "Error": "red"}
    for p in report["pods"]:
        table.add_row(
            escape(f"{p['namespace']}/{p['name']}"),
            escape(p.get("profile") or "-"),
            escape(p["node"] or "-"),
            f"[{style.get(p['status'], 'white')}]{p['status']}[/]",
            escape(p["message"]),
        )
    console.print(table)
    s = report["summary"]
    console.print(
        f"{s['pods']} pods on {s['nodes']} nodes: {s['scheduled']} scheduled, "
        f"{s['unschedulable']} unschedulable, {s['errors']} errors"
    )
