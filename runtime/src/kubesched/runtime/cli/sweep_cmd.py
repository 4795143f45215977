"""``kubesched sweep``: workloads x configs x seeds in parallel, one table of results; and what
``compare`` shares with it (checking the inputs, progress, the table, CSV and JSON outputs)."""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from kubesched.sdk._text import cut, printable

from ..sim.sweep import (
    ID_COLUMNS,
    Experiment,
    Results,
    SweepError,
    experiment_grid,
    parse_seeds,
    result_row,
    run_experiments,
)
from . import app
from .app import fail, guard, load_config_file, main

__all__ = ["cell", "check_inputs", "emit", "result_rows", "rows_csv", "rows_json", "run_with_progress", "sweep_options"]


def sweep_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options ``compare`` and ``sweep`` share."""
    for opt in reversed(
        [
            click.option("--config", "configs", multiple=True, type=click.Path(dir_okay=False), help="KubeSchedulerConfiguration file (repeat for several)."),
            click.option("--default", "with_default", is_flag=True, help='Also run the default profile (labelled "default").'),
            click.option("--seed", "seeds", multiple=True, type=int, help="Seed for tie-breaking (repeat for several)."),
            click.option("--seeds", "seed_ranges", multiple=True, metavar="A-B", help="Seeds as a range (1-5) or a list (1,3,5)."),
            click.option("--output", "-o", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True),
            click.option("--full", is_flag=True, help="-o json (and --out FILE.json): each row with its full Measurements."),
            click.option("--out", "out_path", type=click.Path(dir_okay=False), help="Also write the rows to FILE (.json: JSON, else CSV)."),
            click.option("--jobs", "-j", type=int, default=None, help="Experiments at a time in local processes (default: the CPU count; 1: in this process)."),
            click.option("--address", default=None, metavar="ADDR", help="Run on the Dask distributed cluster whose scheduler is at ADDR (tcp://host:8786)."),
        ]
    ):
        fn = opt(fn)
    return fn


def grid(workloads: Sequence[str], configs: Sequence[str], with_default: bool, seeds: Sequence[int], seed_ranges: Sequence[str]) -> list[Experiment]:
    """The experiments, after checking the inputs (one-line errors, exit 2)."""
    try:
        seed_list = parse_seeds(seeds, seed_ranges)
    except SweepError as e:
        fail(str(e))
    config_list: list[str | None] = [*([None] if with_default or not configs else []), *configs]
    return experiment_grid(workloads, config_list, seed_list)


def check_inputs(ctx: click.Context, workloads: Sequence[str], configs: Sequence[str], jobs: int | None) -> None:
    """Every workload file is readable and every config validates (with the plugins installed
    here) before any experiment starts."""
    if jobs is not None and jobs < 1:
        fail(f"-j {jobs}: expected at least 1 job")
    for w in workloads:
        if not os.path.isfile(w):
            fail(f"{printable(w)}: no such file" if not os.path.exists(w) else f"{printable(w)}: not a file")
        if not os.access(w, os.R_OK):
            fail(f"{printable(w)}: not readable")
    if configs:
        reg = app.registry()
        for c in configs:
            guard(ctx, functools.partial(_validate_config, c, reg))


def _validate_config(path: str, reg: Any) -> None:
    """As ``kubesched config validate``: the schema, the plugin names, every plugin's args."""
    from .config_cmd import _check_frameworks

    _check_frameworks(load_config_file(path, reg), reg)


def run_with_progress(ctx: click.Context, exps: Sequence[Experiment], jobs: int | None, address: str | None, output: str) -> Results:
    """Run the experiments; on a terminal (table output) a progress bar on stderr and one line
    per finished experiment; quiet otherwise."""
    if output != "table" or not sys.stderr.isatty():
        return _run(exps, jobs, address, None)
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    # auto_refresh off: no display thread, so forking the experiments' processes is safe
    with Progress(TextColumn("experiments"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True), auto_refresh=False, transient=True) as bar:
        task = bar.add_task("experiments", total=len(exps))
        bar.refresh()

        def progress(exp: Experiment, res: dict[str, Any]) -> None:
            bar.console.print(escape(progress_line(exp, res)), highlight=False)
            bar.advance(task)
            bar.refresh()

        return _run(exps, jobs, address, progress)


def _run(exps: Sequence[Experiment], jobs: int | None, address: str | None, progress: Any) -> Results:
    try:
        return run_experiments(exps, jobs=jobs, address=address, progress=progress)
    except SweepError as e:
        fail(str(e))


def progress_line(exp: Experiment, res: Mapping[str, Any]) -> str:
    """One finished experiment: ``done LABEL seed N WORKLOAD: S scheduled, P pending at the
    end (E s)`` or ``failed LABEL ...: ERROR``."""
    name = f"{printable(exp.label)}{'' if exp.seed is None else f' seed {exp.seed}'} {printable(exp.workload)}"
    if "error" in res:
        return f"failed {name}: {cut(res['error'], 300)}"
    tot = res.get("totals") or {}
    stopped = " (interrupted)" if res.get("interrupted") else ""
    return f"done {name}: {tot.get('scheduled')} scheduled, {tot.get('pending_at_end')} pending at the end{stopped} ({res.get('elapsed', 0):.1f} s)"


# -- outputs ----------------------------------------------------------------------------------


def result_rows(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [result_row(m) for m in results]


def columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every key some row has, in order of first appearance; ``error`` last."""
    cols: dict[str, None] = dict.fromkeys(ID_COLUMNS)
    for r in rows:
        cols.update(dict.fromkeys(k for k in r if k != "error"))
    return [*cols, *(["error"] if any("error" in r for r in rows) else [])]


def cell(v: Any) -> str:
    """A value in a table: numbers rounded to 4 decimals (``0.3333``, ``12902960.5``, ``2``),
    None empty, text with control characters escaped."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format(round(v, 4), ".15g")
    return printable(v)


def rows_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as CSV, one column per key (:func:`columns`); values as they are (floats in
    full), missing or None empty."""
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=columns(rows), restval="", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if v is None else v for k, v in r.items()})
    return out.getvalue()


def rows_json(results: Sequence[Mapping[str, Any]], full: bool) -> list[dict[str, Any]]:
    """The rows; with ``full`` each successful one has its Measurements under ``measurements``."""
    out = []
    for m in results:
        row = result_row(m)
        if full and "error" not in m:
            row["measurements"] = dict(m)
        out.append(row)
    return out


def print_table(title: str, header: Sequence[str], body: Sequence[Sequence[str]], *, first_bold: bool = False) -> None:
    """A rich table on stdout, as wide as it needs (no wrapping when piped)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for h in header:
        table.add_column(escape(h), no_wrap=True)
    for row in body:
        table.add_row(*(escape(c) for c in row))
    natural = sum(max([len(h), *(len(r[i]) for r in body)]) + 3 for i, h in enumerate(header)) + 1
    Console(width=max(natural, len(title), Console().width), highlight=False).print(table)


def emit(ctx: click.Context, results: Results, total: int, output: str, full: bool, out_path: str | None, table: Callable[[Results], None]) -> None:
    """Print the results (``table`` prints the table output), write ``--out``, then report
    failures and cancellations on stderr; exit 1 when an experiment failed, 130 when Ctrl-C
    cancelled some."""
    rows = result_rows(results)
    if output == "json":
        click.echo(json.dumps(rows_json(results, full), indent=2))
    elif output == "csv":
        click.echo(rows_csv(rows), nl=False)
    else:
        table(results)
    if out_path:
        text = json.dumps(rows_json(results, full), indent=2) + "\n" if out_path.endswith(".json") else rows_csv(rows)
        try:
            with open(out_path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            fail(f"--out {printable(out_path)}: {e.strerror}")
    failed = sum(1 for r in rows if "error" in r)
    if failed:
        click.echo(f"kubesched: {failed} of {total} experiment{'' if total == 1 else 's'} failed", err=True)
    if results.interrupted:
        stopped = sum(1 for m in results if m.get("interrupted"))
        early = f" ({stopped} stopped early: what it measured so far)" if stopped else ""
        click.echo(f"kubesched: interrupted: {len(results)} of {total} experiments finished{early}, {len(results.cancelled)} cancelled", err=True)
        ctx.exit(130)
    if failed:
        ctx.exit(1)


def sweep_table(results: Results) -> None:
    rows = result_rows(results)
    cols = columns(rows)
    print_table("kubesched sweep", cols, [[cell(r.get(c)) if c != "error" else cut(r.get("error") or "", 200) for c in cols] for r in rows])


@main.command("sweep")
@click.option("--workload", "workloads", multiple=True, required=True, type=click.Path(dir_okay=False), help="Workload file (repeat for several).")
@sweep_options
@click.pass_context
def sweep_cmd(
    ctx: click.Context,
    workloads: tuple[str, ...],
    configs: tuple[str, ...],
    with_default: bool,
    seeds: tuple[int, ...],
    seed_ranges: tuple[str, ...],
    output: str,
    full: bool,
    out_path: str | None,
    jobs: int | None,
    address: str | None,
) -> None:
    """Run every workload under every config with every seed, in parallel; one row per
    experiment."""
    exps = grid(workloads, configs, with_default, seeds, seed_ranges)
    check_inputs(ctx, workloads, configs, jobs)
    results = run_with_progress(ctx, exps, jobs, address, output)
    emit(ctx, results, len(exps), output, full, out_path, sweep_table)
