"""``kubesched plugins``: the installed plugins, broken ones marked with the reason, and the
entry points discovery left out (not in ``KUBESCHED_LOAD_PLUGINS``, or named like a built-in)."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import click

from kubesched.sdk._text import printable

from . import app
from .app import main

if TYPE_CHECKING:
    from ..registry import Registry


def _discover() -> Registry:
    """The registry, its discovery warnings not logged: this command prints them itself, once."""
    logger = logging.getLogger("kubesched.registry")
    was = logger.disabled
    logger.disabled = True
    try:
        reg: Registry = app.registry()
        return reg
    finally:
        logger.disabled = was


@main.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def plugins_cmd(as_json: bool) -> None:
    """List installed plugins: name, distribution, version, extension points. A broken plugin
    is marked BROKEN with the reason; entry points not loaded (KUBESCHED_LOAD_PLUGINS, or a
    built-in plugin's name) and problems of the installation are on stderr."""
    reg = _discover()
    specs = reg.specs()
    if as_json:
        click.echo(json.dumps([s.as_dict() for s in specs], indent=2, default=str))
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        table = Table(title="kubesched plugins", show_lines=False)
        for col in ("name", "distribution", "version", "extension points", "args"):
            table.add_column(col)
        for s in specs:
            points = "BROKEN: " + (s.error or "") if s.broken else ", ".join(s.extension_points)
            cells = (s.name, s.distribution, s.version, points, s.args_kind or "-")
            table.add_row(*(escape(printable(c)) for c in cells))
        Console(width=160).print(table)
        for s in specs:
            if s.broken:
                click.echo(f"broken: {s.describe_error()}", err=True)
            for w in s.warnings:
                click.echo(f"warning: {printable(s.name)}: {printable(w)}", err=True)
    for skipped in sorted(reg.skipped, key=lambda k: (k.name, k.distribution)):
        click.echo(f"skipped: {skipped.describe()}", err=True)
    for w in reg.warnings():
        click.echo(f"warning: {w}", err=True)
