"""``kubesched simulate``: schedule a cluster file on the embedded simulated cluster."""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import click

from kubesched.sdk._text import printable

from ..scheduler.results import STATUSES, gated_message, status_before_scheduling
from ..timefmt import go_duration
from . import app
from .app import guard, load_config_file, main


@main.command("simulate")
@click.argument("cluster", type=click.Path(dir_okay=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="KubeSchedulerConfiguration file.")
@click.option("--seed", type=int, default=None, help="Seed for tie-breaking between equal scores.")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--trace", is_flag=True, default=False, help="Log every extension-point call (or KUBESCHED_TRACE=1).")
@click.option("--reuse-results/--no-reuse-results", default=True, show_default=True, help="Reuse Filter results and raw Scores between pods with equal signatures (sign_pod); decisions are the same either way.")
@click.option("--metrics", "metrics_path", type=click.Path(dir_okay=False), default=None, help="Write what the run measured: FILE.json (Measurements) or FILE.csv (the series over virtual time).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None, help="Write the HTML report (charts; opens in a browser) to this file.")
@click.option("--progress/--no-progress", default=None, help="A progress bar on stderr (default: when stderr is a terminal and the output is a table).")
@click.pass_context
def simulate_cmd(
    ctx: click.Context,
    cluster: str,
    config_path: str | None,
    seed: int | None,
    output: str,
    trace: bool,
    reuse_results: bool,
    metrics_path: str | None,
    report_path: str | None,
    progress: bool | None,
) -> None:
    """Schedule the pods of CLUSTER (multi-document YAML) on the embedded simulated cluster.

    With time annotations (sim.kubesched.io/arrive-at, delete-at, run-for, ...) or controllers
    (Deployments, StatefulSets, Jobs ...) CLUSTER is a workload replayed over virtual time
    (docs/simulator.md). Ctrl-C stops a long run and still writes what it measured."""
    trace = trace or os.environ.get("KUBESCHED_TRACE", "") not in ("", "0", "false")
    if metrics_path is not None and not metrics_path.endswith((".json", ".csv")):
        app.fail(f"--metrics {metrics_path}: the file name must end in .json or .csv")
    show = progress if progress is not None else (output == "table" and sys.stderr.isatty())

    def run() -> dict[str, Any]:
        with progress_bar(show) as bar:
            return simulate(cluster, config_path, seed=seed, trace=trace, reuse_results=reuse_results, progress=bar)

    report = guard(ctx, run)
    import msgspec

    metrics = report["metrics"]
    if metrics_path is not None:
        from ..sim.measure import series_csv

        with open(metrics_path, "wb") as f:
            f.write(series_csv(metrics).encode() if metrics_path.endswith(".csv") else msgspec.json.encode(metrics))
    if report_path is not None:
        from ..sim.report import render_report

        with open(report_path, "w") as out:
            out.write(render_report([metrics]))
    if output == "json":
        # msgspec writes the same JSON as json.dumps(indent=2) (UTF-8 kept, floats in their
        # shortest form) ~10x faster: the metrics of a trace hold ~500,000 heat map cells
        click.echo(msgspec.json.format(msgspec.json.encode(report), indent=2).decode())
    else:
        _print_table(report)
    if metrics["interrupted"]:
        click.echo(f"kubesched: interrupted at {go_duration(metrics['end'])} of virtual time: the output holds what was measured so far", err=True)
        ctx.exit(130)


@contextmanager
def progress_bar(show: bool) -> Iterator[Callable[[float, int, int], None] | None]:
    """A rich progress bar on stderr over the replay's actions (None when not ``show``)."""
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TextColumn("virtual {task.fields[t]}"), TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("replay", total=None, t="0s")
        last = [0.0]

        def update(t: float, done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1 or done == total:
                last[0] = now
                bar.update(task, completed=done, total=total, t=go_duration(round(t)))

        yield update


def simulate(
    cluster_path: str,
    config_path: str | None = None,
    *,
    seed: int | None = None,
    trace: bool = False,
    registry: Any = None,
    tracer: Any = None,
    reuse_results: bool = True,
    progress: Callable[[float, int, int], None] | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Run a simulation and return the JSON report: ``pods`` (one row per pod of the file and
    per pod a controller created), ``summary`` and ``metrics`` (the Measurements dict,
    docs/simulator.md). Ctrl-C during the run ends it early: ``metrics["interrupted"]``."""
    from ..cluster.simulated import SimulatedCluster, load_manifests
    from ..observe.trace import Tracer
    from ..scheduler import Scheduler
    from ..sim.measure import MeasuringResults, Recorder

    reg = registry or app.registry()
    cfg = load_config_file(config_path, reg)
    manifests = load_manifests(cluster_path)
    sim = SimulatedCluster(manifests, source=cluster_path)
    if tracer is None and trace:
        tracer = Tracer(sys.stderr)
    observer = MeasuringResults()
    sched = Scheduler(cfg, reg, sim, seed=seed, tracer=tracer, simulated=True, reuse_results=reuse_results, observer=observer)
    profiles = [p.scheduler_name for p in cfg.profiles]
    recorder = Recorder(sched.clock, sched.clock.now(), profiles, sched.cache.pod)
    sim.store.subscribe(recorder.on_event)
    started = time.perf_counter()
    # the loaded cluster, the plugins and the caches live as long as the run: keep them out of
    # the collector's generations (as `kubesched run` does after its caches synced), so the
    # collections during the run walk only what scheduling allocates; given back at the end
    # (a sweep or a test runs many simulations in one process)
    gc.freeze()
    try:
        replay = sim.run(sched, recorder=recorder, progress=progress)
    finally:
        gc.unfreeze()
        try:
            sched.shutdown()  # the run is over (or failed): plugins' close()
        except KeyboardInterrupt:
            pass
    elapsed = time.perf_counter() - started
    preempted = {e.regarding: e.note for e in sim.events if e.reason == "Preempted"}
    pods = [pod_row_of(sim, replay, sched, obj, profiles, preempted) for obj in manifests if obj.get("kind") == "Pod"]
    pods += [pod_row_of(sim, replay, sched, obj, profiles, preempted, uid=obj["metadata"]["uid"]) for obj in replay.generated]
    counts = dict.fromkeys(STATUSES, 0)
    for p in pods:
        counts[p["status"]] = counts.get(p["status"], 0) + 1
    summary = {
        "nodes": sched.cache.node_count(),
        "pods": len(pods),
        "scheduled": counts["Scheduled"],
        "unschedulable": counts["Unschedulable"],
        "errors": counts["Error"],
        **{_summary_key(s): n for s, n in counts.items() if s not in ("Scheduled", "Unschedulable", "Error")},
        "profiles": profiles,
    }
    name = label if label is not None else os.path.splitext(os.path.basename(config_path))[0] if config_path else "default"
    recorder.finish(replay.end)
    metrics = recorder.measurements(
        observer,
        preemptions=sched.pod_deletions,
        elapsed=elapsed,
        interrupted=replay.interrupted,
        label=name,
        workload=cluster_path,
        config=config_path,
        seed=seed,
    )
    report: dict[str, Any] = {"pods": pods, "summary": summary, "metrics": metrics}
    claims = replay.claims.rows() if replay.claims is not None else []
    if claims:  # dynamic resource allocation: each claim's allocation (sim/resourceclaims.py)
        report["claims"] = claims
    return report


def _summary_key(status: str) -> str:
    return status[0].lower() + status[1:]


def pod_row_of(sim: Any, replay: Any, sched: Any, obj: Mapping[str, Any], profiles: Sequence[str], preempted: Mapping[str, str], uid: str | None = None) -> dict[str, Any]:
    """:func:`pod_row` of a pod of the file (``uid`` None: the pod created from ``obj``, if any)
    or of a pod a controller created (``uid``), with the scheduler's result of that very pod."""
    if uid is None:
        uid = replay.uids.get(id(obj))
    res = sched.results.get(uid) if uid is not None else None
    return pod_row(sim, obj, profiles, res, preempted, sched.cache, replay.departures, uid=uid)


def pod_row(
    sim: Any,
    obj: Mapping[str, Any],
    profiles: Sequence[str],
    result: Any,
    preempted: Mapping[str, str],
    cache: Any = None,
    departures: Mapping[str, tuple[str, str]] | None = None,
    *,
    uid: str | None = None,
) -> dict[str, Any]:
    """The report's row of one Pod of the input: its scheduling ``result`` (the scheduler's
    PodResult of that pod, or None), or why it has none
    (refused by the cluster: Error; Running, NodeNotFound, Ignored, Gated, Deleted; see
    STATUSES). ``preempted``: the note of each victim's Preempted event, by "Pod ns/name";
    ``departures``: (status, why) of each pod the replay completed or deleted, by uid; ``uid``:
    the pod the cluster created from ``obj`` (None: unknown, or refused), so that another pod
    of the same name later (a StatefulSet's, recreated) is not taken for it.

    A pod whose spec ``Pod.validate()`` refuses is an Error naming its file and document
    (``FILE: document N (Pod ns/name): invalid pod spec: FIELD: ...``), whatever else it is. The
    scheduler validated every pod it scheduled (Scheduled, Unschedulable) and every bound pod
    it holds in ``cache`` (the scheduler's cache: a bound pod that does not validate is kept
    out of it): only the others are validated here, so a pod is validated once."""
    md = obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    ns, name = str(md.get("namespace") or "default"), str(md.get("name"))
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    scheduler_name = spec.get("schedulerName")
    row = {"namespace": ns, "name": name, "node": None, "status": "Pending", "message": "", "profile": scheduler_name if isinstance(scheduler_name, str) else ""}
    rejected = sim.rejected.get((ns, name)) if uid is None else None
    if rejected is not None:
        row["status"], row["message"] = "Error", rejected
        return row
    before = status_before_scheduling(spec, profiles, lambda n: sim.store.peek("v1", "Node", n, None) is not None)
    if before is not None:
        row["status"], row["message"], row["node"] = before
    elif result is not None:
        row.update(result.as_dict())
    current = sim.store.peek("v1", "Pod", name, ns)
    if current is not None and uid is not None and (current.get("metadata") or {}).get("uid") != uid:
        current = None  # another pod of the same name: this one is gone
    gone = departures.get(uid) if departures and uid is not None and current is None else None
    if gone is not None and row["status"] in ("Running", "Scheduled", "Deleted", "Pending"):
        left, why = gone
        if left == "Completed" or row["node"] is None:
            row["status"], row["message"] = left, why
        else:
            row["status"], row["message"] = "Deleted", f"{why}, from node {row['node']}"
    elif current is None and row["status"] in ("Running", "Scheduled"):
        note = preempted.get(f"Pod {ns}/{name}", "")
        row["status"], row["message"] = "Deleted", f"deleted during the run, from node {row['node']}" + (f": {note}" if note else "")
    elif row["status"] == "Pending" and current is not None:
        gated = gated_message(current.get("spec") or {})
        if gated is not None:
            row["status"], row["message"] = "Gated", gated
    status = row["status"]
    if status in _VALIDATED or (status == "Running" and cache is not None and current is not None and cache.has_pod((current.get("metadata") or {}).get("uid"))):
        return row
    from ..cluster.simulated import spec_problem

    problem = spec_problem(obj)
    if problem is not None:
        row["status"], row["message"], row["node"] = "Error", f"{sim.where(obj)}: {problem}", None
    return row


#: the statuses of pods the scheduling cycle validated (Pod.validate()) before deciding them,
#: and Deleted (the pod is gone: its last status was Running or Scheduled, or it was pending)
_VALIDATED = frozenset(("Scheduled", "Unschedulable", "Completed", "Deleted"))


def explain_status(sim: Any, obj: Mapping[str, Any], profiles: Sequence[str], where: str) -> Any:
    """``kubesched explain`` of a pod ``simulate`` reports without a scheduling cycle: an
    Explanation with simulate's status and message (Error for a pod the cluster refuses or
    whose spec does not validate, NodeNotFound, Ignored, Gated), or None for a pod to dry-run (one waiting for a node, or
    Running: explained as if it were not placed yet). ``where`` names the pod's file and
    document."""
    from ..cluster.manifests import pod_problem
    from ..cluster.simulated import spec_problem
    from ..observe.explain import Explanation

    md = obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    name = spec.get("schedulerName")
    ex = Explanation(pod=f"{md.get('namespace') or 'default'}/{md.get('name')}", profile=name if isinstance(name, str) else "")
    problem = pod_problem(obj)
    if problem is None:
        problem = spec_problem(obj)
    if problem is not None:
        ex.outcome, ex.message = "Error", f"{where}: {problem}"
        ex.error = ex.message
        return ex
    before = status_before_scheduling(spec, profiles, lambda n: sim.store.peek("v1", "Node", n, None) is not None)
    if before is not None and before[0] != "Running":
        ex.outcome, ex.message = before[0], before[1]
        return ex
    gated = gated_message(spec) if before is None else None
    if gated is not None:
        ex.outcome, ex.message = "Gated", gated
        return ex
    return None


_STYLE = {"Completed": "green", "Scheduled": "green", "Unschedulable": "yellow", "Error": "red", "NodeNotFound": "red", "Gated": "cyan", "Ignored": "magenta", "Running": "blue", "Deleted": "yellow"}


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
    # names, nodes and messages come from the input: control characters are escaped
    plain = [
        (printable(f"{p['namespace']}/{p['name']}"), printable(p.get("profile") or "-"), printable(p["node"] or "-"), p["status"], printable(p["message"]))
        for p in report["pods"]
    ]
    if not (fast and plain and console.color_system is None and not console.legacy_windows and not console.options.ascii_only and not console.record):
        for pod, profile, node, status, message in plain:
            table.add_row(escape(pod), escape(profile), escape(node), f"[{_STYLE.get(status, 'white')}]{status}[/]", escape(message))
        console.print(table)
    else:
        _print_rows(console, table, plain)
    if report.get("claims"):
        console.print(claims_table(report["claims"]))
    console.print(summary_line(report["summary"]))


def claims_table(claims: Sequence[Mapping[str, Any]]) -> Any:
    """The ResourceClaims of a run as a rich table: reserved for which pods, on which node,
    each request's device as ``request: driver/pool/device``, and the status (Allocated,
    Pending, Deallocated or Deleted, the last two with the allocation they had)."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="ResourceClaims")
    t.add_column("claim")
    t.add_column("reserved for")
    t.add_column("node")
    t.add_column("devices (request: driver/pool/device)", overflow="fold")
    t.add_column("status")
    for c in claims:
        devices = "\n".join(escape(printable(f"{d['request']}: {d['driver']}/{d['pool']}/{d['device']}")) for d in c["devices"])
        t.add_row(
            escape(printable(f"{c['namespace']}/{c['name']}")),
            escape(printable(", ".join(c["pods"]) or "-")),
            escape(printable(c["node"] or "-")),
            devices or "-",
            f"[{_CLAIM_STYLE.get(c['status'], 'white')}]{c['status']}[/]",
        )
    return t


_CLAIM_STYLE = {"Allocated": "green", "Pending": "yellow", "Deallocated": "blue", "Deleted": "yellow"}


def summary_line(s: Mapping[str, Any]) -> str:
    """"N pods on M nodes: a scheduled, b unschedulable, c errors", then the count of every
    other status that some pod has ("1 running, 2 ignored"); "1 pod", "1 node", "1 error"."""
    others = "".join(f", {s[k]} {k if k != 'nodeNotFound' else 'node not found'}" for k in map(_summary_key, STATUSES[3:]) if s.get(k))
    return f"{_count(s['pods'], 'pod')} on {_count(s['nodes'], 'node')}: {s['scheduled']} scheduled, {s['unschedulable']} unschedulable, {_count(s['errors'], 'error')}{others}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _is_plain(text: str) -> bool:
    """True when rich shows ``text`` (escaped markup) as is, one character per cell."""
    from rich._emoji_replace import _emoji_replace

    return text.isascii() and text.isprintable() and "[" not in text and "\\" not in text and (":" not in text or _emoji_replace(text) == text)


#: how many wrapped cells of a column ``_print_rows`` also has rich render, to compare
_WRAP_CHECKS = 16


def _print_rows(console: Any, table: Any, rows: Sequence[tuple[str, ...]]) -> None:
    """Write ``table`` with ``rows`` as ``console.print`` would, on a console without colors.

    rich sizes a column from the largest minimum and maximum widths of its cells; a small table
    holding only the cells that set them (plain ones measured here; every other cell is
    measured by rich) is rendered by rich for the title, edges, header and column widths. A
    plain cell that fits its column is one padded line; a longer plain cell of the folding
    message column is cut into lines by rich's own line breaker (``wrap``); every other cell
    is rendered by rich alone at its column's width (once per distinct text)."""
    from rich._wrap import divide_line
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

    fold = [table.columns[j].overflow == "fold" and not table.columns[j].no_wrap and table.columns[j].justify in ("default", "left") for j in range(ncols)]
    checked = [0] * ncols

    def wrap(j: int, text: str) -> list[str]:
        """A plain cell of a folding left-justified column, word-wrapped by rich's own line
        breaker (``divide_line``) without rendering it; the first few are rendered by rich too
        and, should one differ, the column goes back to rich for good."""
        w = widths[j] - 2
        cuts = [0, *divide_line(text, w, fold=True), len(text)]
        got = [" " + text[a:b][:w].ljust(w) + " " for a, b in pairwise(cuts)]
        if checked[j] < _WRAP_CHECKS:
            checked[j] += 1
            if got != render(j, text):
                fold[j] = False
                return render(j, text)
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
            elif fold[j] and is_plain[text]:
                lines.append(wrap(j, text))
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
