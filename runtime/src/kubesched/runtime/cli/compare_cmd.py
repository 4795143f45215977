"""``kubesched compare``: one workload under several configs and seeds, side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from kubesched.sdk._text import cut, printable

from ..sim.sweep import ID_COLUMNS, Results, result_row
from .app import fail, main
from .sweep_cmd import cell, check_inputs, emit, grid, print_table, run_with_progress, sweep_options

__all__ = ["side_by_side"]


def side_by_side(results: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> list[list[str]]:
    """The comparison: a header (``metric``, then one column per label), a ``runs`` row, then
    one row per metric of the summary rows: the mean over the label's successful runs, with
    ``(min..max)`` where their values differ."""
    by_label: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
    failed: dict[str, int] = dict.fromkeys(labels, 0)
    metrics: dict[str, None] = {}
    for m in results:
        row = result_row(m)
        label = str(row.get("label"))
        if "error" in row:
            failed[label] = failed.get(label, 0) + 1
            continue
        by_label.setdefault(label, []).append(row)
        metrics.update(dict.fromkeys(k for k in row if k not in ID_COLUMNS))
    out = [["metric", *labels]]
    out.append(["runs", *(f"{len(by_label[lb])}" + (f" ({failed[lb]} failed)" if failed.get(lb) else "") for lb in labels)])
    for metric in metrics:
        line = [metric]
        for lb in labels:
            values = [r[metric] for r in by_label[lb] if isinstance(r.get(metric), int | float) and not isinstance(r.get(metric), bool)]
            if not values:
                line.append("")
                continue
            mean = sum(values) / len(values)
            lo, hi = min(values), max(values)
            line.append(cell(mean) if lo == hi else f"{cell(mean)} ({cell(lo)}..{cell(hi)})")
        out.append(line)
    return out


@main.command("compare")
@click.argument("workload", type=click.Path(dir_okay=False))
@sweep_options
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the comparison as a self-contained HTML report.")
@click.pass_context
def compare_cmd(
    ctx: click.Context,
    workload: str,
    configs: tuple[str, ...],
    with_default: bool,
    seeds: tuple[int, ...],
    seed_ranges: tuple[str, ...],
    output: str,
    full: bool,
    out_path: str | None,
    jobs: int | None,
    address: str | None,
    report_path: str | None,
) -> None:
    """Run WORKLOAD under each --config (and --default) with each seed; the results side by
    side, one column per config."""
    exps = grid([workload], configs, with_default, seeds, seed_ranges)
    check_inputs(ctx, [workload], configs, jobs)
    labels = list(dict.fromkeys(str(e.label) for e in exps))
    results = run_with_progress(ctx, exps, jobs, address, output)
    if report_path:
        _write_report(report_path, results)

    def table(res: Results) -> None:
        rows = side_by_side(res, labels)
        print_table(f"kubesched compare {printable(workload)}", rows[0], rows[1:])
        for m in res:
            if "error" in m:
                seed = "" if m.get("seed") is None else f" seed {m.get('seed')}"
                click.echo(f"failed {printable(m.get('label'))}{seed}: {cut(m['error'], 300)}")

    emit(ctx, results, len(exps), output, full, out_path, table)


def _write_report(path: str, results: Results) -> None:
    from ..sim.report import render_report

    ms = [m for m in results if "error" not in m]
    if not ms:
        click.echo(f"kubesched: no experiment finished: no report written to {printable(path)}", err=True)
        return
    html = render_report(ms)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
    except OSError as e:
        fail(f"--report {printable(path)}: {e.strerror}")
    click.echo(f"kubesched: wrote the report {printable(path)}", err=True)
