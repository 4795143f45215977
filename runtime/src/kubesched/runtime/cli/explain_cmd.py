"""``kubesched explain``: every plugin's verdict and score for one pod."""

from __future__ import annotations

import json
from typing import Any

import click

from . import app
from .app import guard, load_config_file, main, split_pod
from .run_cmd import required_kinds
from .simulate_cmd import explain_status


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

    ex = guard(ctx, run)
    if output == "json":
        click.echo(json.dumps(ex.as_dict(), indent=2))
    else:
        _print_explanation(ex)


def explain_simulated(cluster_path: str, pod: str, config_path: str | None = None, *, seed: int | None = None, registry: Any = None) -> Any:
    from kubesched.sdk import Pod

    from ..cluster.simulated import ManifestError, SimulatedCluster, load_manifests
    from ..observe.explain import explain_pod
    from ..scheduler import Scheduler

    reg = registry or app.registry()
    cfg = load_config_file(config_path, reg)
    ns, name = split_pod(pod)
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
    try:
        sim.run(sched)
        early = explain_status(sim, target, list(sched.frameworks), manifests.where(target))
        if early is not None:  # what simulate reports for a pod it does not schedule
            return early
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
    finally:
        sched.shutdown()


def explain_live(pod: str, config_path: str | None, kubeconfig: str | None, *, seed: int | None = None, registry: Any = None) -> Any:
    from kubesched.sdk import Pod

    from ..cluster.kubernetes import KubeClient, KubernetesCluster
    from ..cluster.simulated import ManifestError
    from ..observe.explain import explain_pod
    from ..scheduler import Scheduler

    reg = registry or app.registry()
    cfg = load_config_file(config_path, reg)
    cc = cfg.client_connection
    client = KubeClient(kubeconfig or cc.kubeconfig or None, qps=cc.qps, burst=cc.burst)
    ns, name = split_pod(pod)
    cluster = KubernetesCluster(client, kinds=required_kinds(cfg, reg))
    sched = None
    try:
        sched = Scheduler(cfg, reg, cluster, seed=seed, simulated=False)
        cluster.problems.quiet = True  # the error is this command's one line, not a log
        cluster.start_informers()
        _wait_for_sync(cluster)
        cluster.start(sched.on_cluster_event)
        sched.drain()
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
        if sched is not None:
            sched.shutdown()
        cluster.stop(flush=0)


#: how long ``explain`` keeps trying a server that fails (refused, 401, not Kubernetes...)
FAIL_AFTER = 3.0
#: how long it waits for the caches of a server that answers
SYNC_TIMEOUT = 60.0


def _wait_for_sync(cluster: Any, *, fail_after: float = FAIL_AFTER, timeout: float = SYNC_TIMEOUT) -> None:
    """Wait until the caches synced; raise ServerUnusable with the informers' errors in words
    once they have failed for ``fail_after`` seconds on end, or after ``timeout``."""
    import time

    start = time.monotonic()
    failing_since: float | None = None
    while not cluster.wait_for_sync(0.1):
        now = time.monotonic()
        errors = [e for e in (inf.error for inf in list(cluster.informers.values()) if not inf.synced.is_set()) if e]
        if not errors:
            failing_since = None
        elif failing_since is None:
            failing_since = now
        elif now - failing_since >= fail_after:
            raise app.ServerUnusable("cannot read the cluster: " + "; ".join(dict.fromkeys(errors)))
        if now - start >= timeout:
            raise app.ServerUnusable(f"cannot read the cluster: the caches did not sync within {timeout:g}s ({cluster.not_ready_reason()})")


def _print_explanation(ex: Any) -> None:
    from ..observe.explain import render_explanation

    render_explanation(ex)
