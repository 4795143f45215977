"""``kubesched snapshot``: a live cluster as a workload file (docs/importers.md)."""

from __future__ import annotations

from typing import Any

import click

from kubesched.sdk._text import printable

from . import app
from .app import guard, load_config_file, main
from .import_cmd import _write
from .run_cmd import required_kinds


@main.command("snapshot")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="The cluster to read (default: the configuration's clientConnection.kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster).")
@click.option("--context", "context", default=None, help="The kubeconfig context to use (default: its current context).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="KubeSchedulerConfiguration file: the kinds its plugins watch are read too.")
@click.option("--output", "-o", default="-", show_default=True, type=click.Path(dir_okay=False, allow_dash=True), help="Workload YAML to write (- for stdout).")
@click.pass_context
def snapshot_cmd(ctx: click.Context, kubeconfig: str | None, context: str | None, config_path: str | None, output: str) -> None:
    """Write a live cluster (read-only) as a workload file for ``kubesched simulate``: its Nodes,
    its Pods (not the terminated ones) and every kind the configured plugins watch, without
    managedFields and status noise. Secrets are never read."""

    def run() -> list[dict[str, Any]]:
        return take_snapshot(kubeconfig, config_path, context=context)

    objs = guard(ctx, run)
    from ..sim.openb import dump_yaml

    _write(objs, output, dump_yaml)
    if output != "-":
        counts: dict[str, int] = {}
        for o in objs:
            counts[o["kind"]] = counts.get(o["kind"], 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing"
        click.echo(f"{printable(output)}: {summary}", err=True)


def take_snapshot(kubeconfig: str | None, config_path: str | None = None, *, context: str | None = None, registry: Any = None) -> list[dict[str, Any]]:
    """The objects of the live cluster a snapshot writes (``sim.snapshot.read_cluster``); a cluster
    that cannot be read raises ServerUnusable (one line)."""
    from ..cluster.kubernetes import KubeClient
    from ..sim.snapshot import SnapshotError, read_cluster

    reg = registry or app.registry()
    cfg = load_config_file(config_path, reg)
    cc = cfg.client_connection
    client = KubeClient(kubeconfig or cc.kubeconfig or None, qps=cc.qps, burst=cc.burst, context=context)
    warnings: list[str] = []
    try:
        objs = read_cluster(client, required_kinds(cfg, reg), warn=warnings.append)
    except SnapshotError as e:
        raise app.ServerUnusable(str(e)) from None
    for w in warnings:
        click.echo(f"kubesched: warning: {printable(w)}", err=True)
    return objs
