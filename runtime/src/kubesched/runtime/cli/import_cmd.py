"""``kubesched import openb``: a trace as a workload file (docs/importers.md)."""

from __future__ import annotations

import sys
from typing import Any

import click

from kubesched.sdk._text import printable

from .app import fail, main


@main.group("import")
def import_grp() -> None:
    """Turn a cluster trace into a workload file for ``kubesched simulate``."""


@import_grp.command("openb")
@click.option("--nodes", "nodes_csv", required=True, type=click.Path(dir_okay=False), help="The trace's node list (openb_node_list_all_node.csv).")
@click.option("--pods", "pods_csv", required=True, type=click.Path(dir_okay=False), help="The trace's pod list (openb_pod_list_default.csv).")
@click.option("--output", "-o", default="-", show_default=True, type=click.Path(dir_okay=False, allow_dash=True), help="Workload YAML to write (- for stdout).")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Keep only the first N pods (in creation order); every node is kept.")
@click.option(
    "--departures",
    type=click.Choice(["delete-at", "run-for", "none"]),
    default=None,
    help="How pods leave: at the trace's deletion time (delete-at, the default), after running as long as in the trace (run-for), or never (none; the only one with --shuffle/--inflate).",
)
@click.option("--gpu-share", is_flag=True, help="GPU pods ask alibabacloud.com/gpu-milli (num_gpu x gpu_milli) instead of nvidia.com/gpu; GPU nodes also advertise it (1000 per GPU).")
@click.option("--gpu-nodes-only", is_flag=True, help="Keep only the nodes with GPUs (the paper's cluster).")
@click.option("--shuffle", is_flag=True, help="The paper's order: pods by name, shuffled by --seed; pod i arrives at second i and never leaves.")
@click.option("--inflate", type=float, default=None, metavar="RATIO", help="Add pods drawn from the trace by --seed until the GPU requests reach RATIO x the GPU capacity (the paper: 1.3); pod i arrives at second i and never leaves.")
@click.option("--seed", type=int, default=None, help="The seed of --shuffle and --inflate.")
def import_openb(
    nodes_csv: str,
    pods_csv: str,
    output: str,
    limit: int | None,
    departures: str | None,
    gpu_share: bool,
    gpu_nodes_only: bool,
    shuffle: bool,
    inflate: float | None,
    seed: int | None,
) -> None:
    """Convert the openb GPU trace (Alibaba cluster-trace-gpu-v2023) into a workload: a Node per
    row of --nodes, a Pod per row of --pods in creation order, arriving at its creation time
    (or the paper's workload: --shuffle, --inflate)."""
    from ..sim.openb import TraceError, convert, dump_yaml

    try:
        objs = convert(
            nodes_csv,
            pods_csv,
            departures=departures,
            limit=limit,
            gpu_share=gpu_share,
            gpu_nodes_only=gpu_nodes_only,
            shuffle=shuffle,
            inflate=inflate,
            seed=seed,
        )
    except TraceError as e:
        fail(str(e))
    _write(objs, output, dump_yaml)
    if output != "-":
        nodes = sum(1 for o in objs if o["kind"] == "Node")
        click.echo(f"{printable(output)}: {nodes} nodes, {len(objs) - nodes} pods", err=True)


def _write(objs: list[dict[str, Any]], output: str, dump: Any) -> None:
    """Write ``objs`` with ``dump(objs, file)`` to ``output`` (``-``: stdout); a file that cannot
    be written is a one-line error."""
    if output == "-":
        dump(objs, sys.stdout)
        return
    try:
        with open(output, "w") as f:
            dump(objs, f)
    except OSError as e:
        fail(f"{printable(output)}: cannot write: {printable(e.strerror or e)}")
