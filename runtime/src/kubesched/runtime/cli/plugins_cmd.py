"""``kubesched plugins``: the installed plugins, broken ones marked with the reason."""

from __future__ import annotations

import json

import click

from . import app
from .app import main


@main.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def plugins_cmd(as_json: bool) -> None:
    """List installed plugins: name, distribution, version, extension points. A broken plugin
    is marked BROKEN with the reason; problems of the installation are warnings on stderr."""
    reg = app.registry()
    specs = reg.specs()
    if as_json:
        click.echo(json.dumps([s.as_dict() for s in specs], indent=2, default=str))
        for w in reg.warnings():
            click.echo(f"warning: {w}", err=True)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="kubesched plugins", show_lines=False)
    for col in ("name", "distribution", "version", "extension points", "args"):
        table.add_column(col)
    for s in specs:
        points = "BROKEN: " + (s.error or "") if s.broken else ", ".join(s.extension_points)
        table.add_row(s.name, s.distribution, s.version, escape(points), s.args_kind or "-")
    Console(width=160).print(table)
    for s in specs:
        if s.broken:
            click.echo(f"broken: {s.describe_error()}", err=True)
        for w in s.warnings:
            click.echo(f"warning: {s.name}: {w}", err=True)
    for w in reg.warnings():
        click.echo(f"warning: {w}", err=True)
