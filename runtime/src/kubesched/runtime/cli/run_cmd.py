"""``kubesched run``: the scheduler against a Kubernetes cluster."""

from __future__ import annotations

import gc
import sys
from typing import Any

import click

from . import app
from .app import guard, load_config_file, main


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
    from ..observe.logging import setup_logging

    if ctx.find_root().params.get("debug"):
        verbosity = max(verbosity, app.DEBUG_VERBOSITY)
    setup_logging(verbosity, log_format)

    def prepare() -> tuple[Any, Any]:
        reg = app.registry()
        return reg, load_config_file(config_path, reg)

    reg, cfg = guard(ctx, prepare)
    # a profile whose plugins cannot be built (a broken plugin, args its constructor rejects) is
    # a one-line error too, as in `config validate`
    code = guard(ctx, lambda: run_scheduler(cfg, reg, kubeconfig=kubeconfig, address=address, identity=identity, seed=seed, ctx=ctx, record_results=record_results, reuse_results=reuse_results))
    sys.exit(code)


def run_scheduler(cfg: Any, reg: Any, *, kubeconfig: str | None, address: str, identity: str | None = None, seed: int | None = None, ctx: click.Context | None = None, stop: Any = None, record_results: bool = False, reuse_results: bool = True) -> int:
    """The body of ``kubesched run``: returns the process exit code."""
    import logging
    import signal
    import socket
    import threading
    import uuid

    from ..cluster.kubernetes import KubeClient, KubernetesCluster
    from ..leaderelection import LeaderElector
    from ..observe.metrics import HealthServer, Metrics, parse_address
    from ..scheduler import RUN_MAX_RESULTS, Scheduler

    log = logging.getLogger("kubesched")
    parse_address(address)  # a malformed --address fails before anything starts
    cc = cfg.client_connection
    client = KubeClient(kubeconfig or cc.kubeconfig or None, qps=cc.qps, burst=cc.burst)
    metrics = Metrics()
    stop = stop or threading.Event()
    kinds = required_kinds(cfg, reg)
    cluster = KubernetesCluster(client, kinds=kinds, reporting_controller="kubesched")
    loop_alive = threading.Event()
    loop_alive.set()
    # /readyz stays 503 until the caches synced; ?verbose says why (the informers' errors)
    server = HealthServer(address, metrics, ready=cluster.synced, alive=loop_alive.is_set, reason=cluster.not_ready_reason)
    try:
        sched = Scheduler(cfg, reg, cluster, seed=seed, metrics=metrics, record_results=record_results, reuse_results=reuse_results, max_results=RUN_MAX_RESULTS)
    except BaseException:
        server.stop()
        raise
    metrics._clock = sched.clock.now
    metrics.watch_queue(sched.queue.pending)
    metrics.watch_stores(cluster.store_sizes)
    log.info("serving /healthz /livez /readyz /metrics on %s:%d", server.host, server.port)
    log.info("connecting to the API server at %s (credentials from %s)", client.server, client.source)

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
    if not cluster.synced():
        # stopped while the server was unreachable or refused us: nothing was scheduled
        log.info("stopped before the caches synced (%s)", cluster.not_ready_reason())
        sched.shutdown()  # closes the plugins
        cluster.stop(flush=0)
        server.stop()
        log.info("stopped")
        return 0
    log.info("caches synced: %s", ", ".join(cluster.informers))
    # what start-up built (plugins, the synced caches, their views) lives as long as the process:
    # move it out of the collector's generations, so that collections during scheduling walk
    # only what scheduling allocates (the objects stay refcounted and are freed as usual)
    gc.collect()
    gc.freeze()
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
    from ..framework import Framework, FrameworkServices
    from ..objectstore import ObjectStore

    kinds: list[str] = []
    services = FrameworkServices(snapshot=lambda: None, objects=ObjectStore(), clock=None, event_recorder=None, bind_pod=lambda p, n: None)
    for profile in cfg.profiles:
        fw = Framework.build(profile, reg, services, source=cfg.source)
        try:
            for name, evs in fw.events.items():
                for ewh in evs or []:
                    r = str(ewh.event.resource)
                    if r not in ("*", "Pod", "Node", "AssignedPod", "UnschedulablePod") and r not in kinds:
                        kinds.append(r)
                for k in getattr(fw.plugins[name], "watches", ()) or ():
                    kind = k[1] if isinstance(k, tuple) else str(k)
                    if kind not in kinds:
                        kinds.append(kind)
        finally:
            fw.close()  # a throwaway framework: its plugins are closed at once
    return kinds
