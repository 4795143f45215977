"""``kubesched config validate``."""

from __future__ import annotations

from typing import Any

import click

from . import app
from .app import guard, load_config_file, main


@main.group("config")
def config_grp() -> None:
    """Work with KubeSchedulerConfiguration files."""


@config_grp.command("validate")
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_context
def config_validate(ctx: click.Context, file: str) -> None:
    """Validate FILE: schema, defaults, plugin names and every plugin's args."""

    def run() -> None:
        reg = app.registry()
        cfg = load_config_file(file, reg)
        _check_frameworks(cfg, reg)
        names = ", ".join(p.scheduler_name for p in cfg.profiles)
        click.echo(f"{file}: valid {cfg.api_version} configuration; profiles: {names}")

    guard(ctx, run)


def _check_frameworks(cfg: Any, reg: Any) -> None:
    """Build every profile's framework against a throwaway simulated cluster (validates args and
    constructs each plugin), then close them."""
    from ..cluster.simulated import SimulatedCluster
    from ..scheduler import Scheduler

    Scheduler(cfg, reg, SimulatedCluster([], source=cfg.source or "<config>"), simulated=True).shutdown()
