"""The ``kubesched`` command line: simulate, plugins, config validate, run, explain."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from . import __version__

__all__ = ["main"]


class UserError(click.ClickException):
    """Bad input: one line, exit code 2, no traceback (unless --debug)."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"kubesched: error: {self.message}", err=True)


def _fail(msg: str) -> NoReturn:
    raise UserError(msg)


def _guard(ctx: click.Context, fn: Callable[[], Any]) -> Any:
    """Turn known input errors into one-line exits (exit 2); show tracebacks only with --debug."""
    from .cluster.simulated import ManifestError
    from .config import ConfigError
    from .registry import UnknownPluginError

    debug = bool(ctx.find_root().params.get("debug"))
    try:
        return fn()
    except (ConfigError, ManifestError, UnknownPluginError) as e:
        if debug:
            raise
        _fail(str(e))


def _registry() -> Any:
    from .registry import Registry

    return Registry.discover()


def _load_config(path: str | None, registry: Any) -> Any:
    from .config import load_config

    return load_config(path, installed_plugins=registry.names(), unknown_plugin_hints=registry.unknown_plugin_hints())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kubesched", message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
def main(debug: bool) -> None:
    """kubesched — the Kubernetes scheduling framework in Python."""


# plugins -------------------------------------------------------------------------------------------
@main.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def plugins_cmd(as_json: bool) -> None:
    """List installed plugins: name, distribution, version, extension points. A broken plugin
    is marked BROKEN with the reason; problems of the installation are warnings on stderr."""
    reg = _registry()
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


# config ---------------------------------------------------------------------------------------------
@main.group("config")
def config_grp() -> None:
    """Work with KubeSchedulerConfiguration files."""


@config_grp.command("validate")
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_context
def config_validate(ctx: click.Context, file: str) -> None:
    """Validate FILE: schema, defaults, plugin names and every plugin's args."""

    def run() -> None:
        reg = _registry()
        cfg = _load_config(file, reg)
        _build_frameworks(cfg, reg)
        names = ", ".join(p.scheduler_name for p in cfg.profiles)
        click.echo(f"{file}: valid {cfg.api_version} configuration; profiles: {names}")

    _guard(ctx, run)


def _build_frameworks(cfg: Any, reg: Any) -> dict[str, Any]:
    """Build every profile's framework against a throwaway simulated cluster (validates args)."""
    from .cluster.simulated import SimulatedCluster
    from .scheduler import Scheduler

    sched = Scheduler(cfg, reg, SimulatedCluster([], source=cfg.source or "<config>"), simulated=True)
    return sched.frameworks


# simulate ---------------------------------------------------------------------------------------------
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

    report = _guard(ctx, run)
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
    from .cluster.simulated import SimulatedCluster, load_manifests
    from .observe.trace import Tracer
    from .scheduler import Scheduler

    reg = registry or _registry()
    cfg = _load_config(config_path, reg)
    manifests = load_manifests(cluster_path)
    sim = SimulatedCluster(manifests, source=cluster_path)
    if tracer is None and trace:
        tracer = Tracer(sys.stderr)
    sched = Scheduler(cfg, reg, sim, seed=seed, tracer=tracer, simulated=True, reuse_results=reuse_results)
    sim.run(sched)
    pods = []
    for obj in manifests:
        if obj.get("kind") != "Pod":
            continue
        md = obj.get("metadata") or {}
        ns = str(md.get("namespace") or "default")
        name = str(md.get("name"))
        if (obj.get("spec") or {}).get("nodeName"):
            continue  # already running
        res = next((r for r in sched.results.values() if r.namespace == ns and r.name == name), None)
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


# explain ------------------------------------------------------------------------------------------
@main.command("explain")
@click.argument("pod")
@click.option("--cluster", "cluster_path", type=click.Path(dir_okay=False), help="Explain on the simulated cluster of this YAML file.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="Explain on a live cluster (read-only).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="KubeSchedulerConfiguration file.")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--seed", type=int, default=None)
@click.pass_context
def explain_cmd(ctx: click.Context, pod: str, cluster_path: str | None, kubeconfig: str | None, config_path: str | None, output: str, seed: int | None) -> None:
    """Explain where POD ([namespace/]name) would land and why: every Filter plugin's verdict on
    every node, every Score plugin's raw, normalized and weighted score, the ranking.

    With --cluster, the other pods of the file are scheduled first and POD is explained against
    the result. Without it, the live cluster of --kubeconfig (or the default kubeconfig) is read;
    nothing is written."""

    def run() -> Any:
        if cluster_path:
            return explain_simulated(cluster_path, pod, config_path, seed=seed)
        return explain_live(pod, config_path, kubeconfig, seed=seed)

    ex = _guard(ctx, run)
    if output == "json":
        click.echo(json.dumps(ex.as_dict(), indent=2))
    else:
        _print_explanation(ex)


def _split_pod(pod: str) -> tuple[str, str]:
    return (pod.split("/", 1)[0], pod.split("/", 1)[1]) if "/" in pod else ("default", pod)


def explain_simulated(cluster_path: str, pod: str, config_path: str | None = None, *, seed: int | None = None, registry: Any = None) -> Any:
    from kubesched.sdk import Pod

    from .cluster.simulated import ManifestError, SimulatedCluster, load_manifests
    from .observe.explain import explain_pod
    from .scheduler import Scheduler

    reg = registry or _registry()
    cfg = _load_config(config_path, reg)
    ns, name = _split_pod(pod)
    manifests = load_manifests(cluster_path)
    target = None
    rest = []
    for obj in manifests:
        md = obj.get("metadata") or {}
        if obj.get("kind") == "Pod" and md.get("name") == name and (md.get("namespace") or "default") == ns:
            target = obj
        else:
            rest.append(obj)
    if target is None:
        raise ManifestError(f"{cluster_path}: no Pod {ns}/{name} in the file")
    sim = SimulatedCluster(rest, source=cluster_path)
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    sim.run(sched)
    raw = dict(target)
    spec = dict(raw.get("spec") or {})
    spec.pop("nodeName", None)
    spec.setdefault("schedulerName", "default-scheduler")
    raw["spec"] = spec
    p = Pod(raw)
    fw = sched.frameworks.get(p.scheduler_name)
    if fw is None:
        raise ManifestError(f"{cluster_path}: pod {ns}/{name} has schedulerName {p.scheduler_name!r}, which no profile handles")
    return explain_pod(fw, sched.cache.update_snapshot(), p, select=sched.algo.select_host)


def explain_live(pod: str, config_path: str | None, kubeconfig: str | None, *, seed: int | None = None, registry: Any = None) -> Any:
    from kubesched.sdk import Pod

    from .cluster.kubernetes import KubeClient, KubernetesCluster
    from .cluster.simulated import ManifestError
    from .observe.explain import explain_pod
    from .scheduler import Scheduler

    reg = registry or _registry()
    cfg = _load_config(config_path, reg)
    cc = cfg.client_connection
    client = KubeClient(kubeconfig or cc.kubeconfig or None, qps=cc.qps, burst=cc.burst)
    ns, name = _split_pod(pod)
    cluster = KubernetesCluster(client, kinds=required_kinds(cfg, reg))
    try:
        sched = Scheduler(cfg, reg, cluster, seed=seed, simulated=False)
        cluster.start_informers()
        cluster.wait_for_sync(60)
        cluster.start(sched.on_cluster_event)
        sched._drain()
        obj = cluster.informers["Pod"].store.get(f"{ns}/{name}")
        if obj is None:
            raise ManifestError(f"pod {ns}/{name} not found")
        raw = dict(obj)
        spec = dict(raw.get("spec") or {})
        was = spec.pop("nodeName", None)
        raw["spec"] = spec
        p = Pod(raw)
        if was:
            existing = sched.cache.pod(p.uid)
            if existing is not None:
                sched.cache.remove_pod(existing)  # explain it as if it were not placed yet
        fw = sched.frameworks.get(p.scheduler_name)
        if fw is None:
            raise ManifestError(f"pod {ns}/{name} has schedulerName {p.scheduler_name!r}, which no profile of the configuration handles")
        return explain_pod(fw, sched.cache.update_snapshot(), p, select=sched.algo.select_host)
    finally:
        cluster.stop(flush=0)


def _print_explanation(ex: Any) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=max(140, Console().width))
    console.print(f"[bold]{escape(ex.pod)}[/] (profile {escape(ex.profile)})")
    if ex.error and not ex.prefilter and not ex.filter:
        console.print(f"[red]Error[/]: {escape(ex.error)}")
        return
    if ex.prefilter:
        console.print("PreFilter: " + escape(", ".join(f"{k}={v}" for k, v in ex.prefilter.items())))
    skipped = sorted({p for v in ex.filter.values() for p, r in v.items() if r == "skipped"})
    t = Table(title="Filter: every plugin on every node")
    t.add_column("node")
    t.add_column("result")
    t.add_column("rejected by (plugin: reason)", overflow="fold")
    t.add_column("passed")
    for node, verdicts in ex.filter.items():
        bad = [(p, r) for p, r in verdicts.items() if r not in ("passed", "skipped")]
        passed = [p for p, r in verdicts.items() if r == "passed"]
        t.add_row(
            escape(node),
            "[green]feasible[/]" if not bad else "[yellow]rejected[/]",
            escape("\n".join(f"{p}: {r}" for p, r in bad)),
            str(len(passed)),
        )
    if ex.filter:
        console.print(t)
    if skipped:
        console.print("skipped for this pod (PreFilter returned Skip): " + escape(", ".join(skipped)))
    if ex.scores:
        splugins: list[str] = []
        for per in ex.scores.values():
            for p in per:
                if p not in splugins:
                    splugins.append(p)
        st = Table(title="Score: raw / normalized / weighted")
        st.add_column("node")
        for p in splugins:
            st.add_column(p)
        st.add_column("total")
        for node, total in ex.ranking:
            per = ex.scores[node]
            st.add_row(escape(node), *[("{}/{}/{}".format(*per[p]) if p in per else "-") for p in splugins], str(total))
        console.print(st)
    if ex.error:
        console.print(f"[red]Error[/]: {escape(ex.error)}")
    elif ex.selected:
        console.print(f"selected node: [bold green]{escape(ex.selected)}[/]")
    else:
        console.print(f"[yellow]unschedulable[/]: {escape(ex.message)}")


# run ----------------------------------------------------------------------------------------------
@main.command("run")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="KubeSchedulerConfiguration file (default: kube-scheduler's defaults).")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="Kubeconfig (default: clientConnection.kubeconfig, in-cluster config, or ~/.kube/config).")
@click.option("--address", default="0.0.0.0:10251", show_default=True, help="Where /healthz, /livez, /readyz and /metrics are served (plain HTTP).")
@click.option("--identity", default=None, help="Leader election identity (default: hostname_uuid).")
@click.option("-v", "--v", "verbosity", type=int, default=0, show_default=True, help="Log verbosity, kube-scheduler style: 0 lifecycle and problems, 2 also every scheduling decision, 4+ debug.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--seed", type=int, default=None, help="Seed for tie-breaking (tests).")
@click.option("--record-results", is_flag=True, help="Write each plugin's results to the pod's annotations (kube-scheduler-simulator's keys).")
@click.option("--reuse-results/--no-reuse-results", default=True, show_default=True, help="Reuse Filter results and raw Scores between pods with equal signatures (sign_pod); decisions are the same either way.")
@click.pass_context
def run_cmd(
    ctx: click.Context,
    config_path: str | None,
    kubeconfig: str | None,
    address: str,
    identity: str | None,
    verbosity: int,
    log_format: str,
    seed: int | None,
    record_results: bool,
    reuse_results: bool,
) -> None:
    """Run the scheduler against a Kubernetes cluster."""
    from .observe.logging import setup_logging

    setup_logging(verbosity, log_format)

    def prepare() -> tuple[Any, Any]:
        reg = _registry()
        return reg, _load_config(config_path, reg)

    reg, cfg = _guard(ctx, prepare)
    code = run_scheduler(cfg, reg, kubeconfig=kubeconfig, address=address, identity=identity, seed=seed, ctx=ctx, record_results=record_results, reuse_results=reuse_results)
    sys.exit(code)


def run_scheduler(cfg: Any, reg: Any, *, kubeconfig: str | None, address: str, identity: str | None = None, seed: int | None = None, ctx: click.Context | None = None, stop: Any = None, record_results: bool = False, reuse_results: bool = True) -> int:
    """The body of ``kubesched run``: returns the process exit code."""
    import logging
    import signal
    import socket
    import threading
    import uuid

    from .cluster.kubernetes import KubeClient, KubernetesCluster
    from .leaderelection import LeaderElector
    from .observe.metrics import HealthServer, Metrics
    from .scheduler import RUN_MAX_RESULTS, Scheduler

    log = logging.getLogger("kubesched")
    cc = cfg.client_connection
    client = KubeClient(kubeconfig or cc.kubeconfig or None, qps=cc.qps, burst=cc.burst)
    metrics = Metrics()
    stop = stop or threading.Event()
    kinds = required_kinds(cfg, reg)
    cluster = KubernetesCluster(client, kinds=kinds, reporting_controller="kubesched")
    sched = Scheduler(cfg, reg, cluster, seed=seed, metrics=metrics, record_results=record_results, reuse_results=reuse_results, max_results=RUN_MAX_RESULTS)
    metrics._clock = sched.clock.now
    metrics.watch_queue(sched.queue.pending)
    loop_alive = threading.Event()
    loop_alive.set()
    server = HealthServer(address, metrics, ready=cluster.synced, alive=loop_alive.is_set)
    log.info("serving /healthz /livez /readyz /metrics on %s:%d", server.host, server.port)

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("received signal %d: stopping", signum)
        stop.set()
        sched.wake()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    cluster.start_informers()
    while not cluster.wait_for_sync(1.0):
        if stop.is_set():
            break
    log.info("caches synced: %s", ", ".join(cluster.informers))
    exit_code = 0
    le = cfg.leader_election
    done = threading.Event()
    started = threading.Event()
    crashed = threading.Event()

    def lead() -> None:
        started.set()
        try:
            cluster.start(sched.on_cluster_event)
            sched.run(stop)
        except Exception:
            log.exception("scheduler loop failed")
            loop_alive.clear()
            crashed.set()
            stop.set()  # stop renewing the lease: another replica takes over
        finally:
            done.set()

    if le.leader_elect:
        ident = identity or f"{socket.gethostname()}_{uuid.uuid4()}"
        lost = threading.Event()

        def on_stopped() -> None:
            lost.set()
            stop.set()
            sched.wake()

        elector = LeaderElector(
            client,
            namespace=le.resource_namespace,
            name=le.resource_name,
            identity=ident,
            lease_duration=le.lease_duration,
            renew_deadline=le.renew_deadline,
            retry_period=le.retry_period,
        )
        log.info("attempting to acquire leader lease %s/%s as %s", le.resource_namespace, le.resource_name, ident)
        # On SIGTERM the elector keeps renewing until the scheduler has stopped taking pods and
        # finished its in-flight bindings, and only then releases the lease: a successor must
        # not start from a cache that misses bindings still in flight.
        elector_stop = threading.Event()

        def stop_elector_after_drain() -> None:
            stop.wait()
            if started.is_set():
                done.wait(60)
            elector_stop.set()

        threading.Thread(target=stop_elector_after_drain, name="lease-release", daemon=True).start()
        elector.run(elector_stop, lead, on_stopped, metrics)
        if started.is_set():
            done.wait(60)
        if lost.is_set():
            log.error("leaderelection lost")
            exit_code = 1
    else:
        lead()
    if crashed.is_set():
        exit_code = 1
    cluster.flush(10)
    cluster.stop()
    server.stop()
    log.info("stopped")
    return exit_code


def required_kinds(cfg: Any, reg: Any) -> list[str]:
    """Kinds the informers must watch for the enabled plugins: those named in their registered
    events, plus those they declare in a ``watches`` class attribute (kinds read through
    ``handle.objects``; any other kind a plugin reads gets an informer on first use)."""
    from .framework import Framework, FrameworkServices
    from .objectstore import ObjectStore

    kinds: list[str] = []
    services = FrameworkServices(snapshot=lambda: None, objects=ObjectStore(), clock=None, event_recorder=None, bind_pod=lambda p, n: None)
    for profile in cfg.profiles:
        fw = Framework.build(profile, reg, services, source=cfg.source)
        for name, evs in fw.events.items():
            for ewh in evs or []:
                r = str(ewh.event.resource)
                if r not in ("*", "Pod", "Node", "AssignedPod", "UnschedulablePod") and r not in kinds:
                    kinds.append(r)
            for k in getattr(fw.plugins[name], "watches", ()) or ():
                kind = k[1] if isinstance(k, tuple) else str(k)
                if kind not in kinds:
                    kinds.append(kind)
    return kinds


# last, so that every command above is registered when run as ``python -m kubesched.runtime.cli``
if __name__ == "__main__":  # pragma: no cover
    main()
