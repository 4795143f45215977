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
@click.option("--alone", is_flag=True, default=False, help="With --cluster: schedule the other pods of the file first, then explain POD alone against the result (the behaviour before explain in context).")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="Explain on a live cluster (read-only).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="KubeSchedulerConfiguration file.")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--seed", type=int, default=None, help="Seed for tie-breaking between equal scores (give simulate the same one to compare).")
@click.pass_context
def explain_cmd(ctx: click.Context, pod: str, cluster_path: str | None, alone: bool, kubeconfig: str | None, config_path: str | None, output: str, seed: int | None) -> None:
    """Explain where POD ([namespace/]name) would land and why: every Filter plugin's verdict on
    every node, every Score plugin's raw, normalized and weighted score, the ranking.

    With --cluster, in context (the default): the file is simulated as `kubesched simulate`
    runs it (same config, same --seed, same order), and POD's last scheduling cycle in that run
    is explained, on the cluster as that cycle saw it, with the attempt count, the virtual time
    and the status simulate reports (Scheduled on node X, Unschedulable, Deleted as a
    preemption victim, Error, Gated, Ignored, NodeNotFound, Running). The explained cycle
    selects the node simulate reports.

    With --cluster --alone: the other pods of the file are scheduled first, and POD is explained
    alone against the result (it may land where simulate would not place it).

    Without --cluster, the live cluster of --kubeconfig (or the default kubeconfig) is read;
    nothing is written."""
    if alone and not cluster_path:
        raise click.UsageError("--alone needs --cluster")

    def run() -> Any:
        if cluster_path:
            if alone:
                return explain_simulated(cluster_path, pod, config_path, seed=seed, alone=True)
            return explain_simulated(cluster_path, pod, config_path, seed=seed)
        return explain_live(pod, config_path, kubeconfig, seed=seed)

    ex = guard(ctx, run)
    if output == "json":
        click.echo(json.dumps(ex.as_dict(), indent=2))
    else:
        _print_explanation(ex)


def _find_pod(manifests: Any, cluster_path: str, ns: str, name: str) -> Any:
    from ..cluster.simulated import ManifestError

    for obj in manifests:
        md = obj.get("metadata") or {}
        if obj.get("kind") == "Pod" and md.get("name") == name and (md.get("namespace") or "default") == ns:
            return obj
    raise ManifestError(f"{cluster_path}: no Pod {ns}/{name} in the file")


def explain_simulated(cluster_path: str, pod: str, config_path: str | None = None, *, seed: int | None = None, registry: Any = None, alone: bool = False) -> Any:
    """``kubesched explain POD --cluster FILE``: POD's last scheduling cycle in the simulation
    of the file (in context), or, with ``alone``, POD against the other pods scheduled first."""
    if alone:
        return explain_alone(cluster_path, pod, config_path, seed=seed, registry=registry)
    return explain_in_context(cluster_path, pod, config_path, seed=seed, registry=registry)


class _Captured(Exception):
    """Ends the replay at the explained cycle."""

    def __init__(self, explanation: Any) -> None:
        super().__init__("captured")
        self.explanation = explanation


def _target_cycles(sched: Any, ns: str, name: str, record: Any) -> Any:
    """A ``before_cycle`` hook that counts the popped pods and calls ``record(ordinal, qpi)``
    for each pop of ns/name that runs a scheduling cycle (Cycles.schedule_one skips a pod
    without a profile, a deleted one and one already in the cache)."""
    count = [0]

    def hook(qpi: Any) -> None:
        count[0] += 1
        p = qpi.pod
        if p.name == name and p.namespace == ns and p.scheduler_name in sched.frameworks and p.deletion_timestamp is None and not sched.cache.has_pod(p.uid):
            record(count[0], qpi)

    return hook


def explain_in_context(cluster_path: str, pod: str, config_path: str | None = None, *, seed: int | None = None, registry: Any = None) -> Any:
    """Run the simulation ``simulate`` runs (same config, seed and order) and explain POD's last
    scheduling cycle on the state that cycle saw.

    The explanation never touches the run whose outcome it reports: the first run only counts
    POD's cycles (and gives simulate's status); a second run, identical up to that point (same
    RNG state), is stopped at POD's last cycle and explained there (plugins keep state of
    their own that a dry run could change, as a gang's backoff)."""
    from ..cluster.simulated import SimulatedCluster, load_manifests
    from ..observe.explain import Explanation, explain_pod
    from ..scheduler import Scheduler
    from .simulate_cmd import pod_row_of

    reg = registry or app.registry()
    cfg = load_config_file(config_path, reg)
    ns, name = split_pod(pod)
    manifests = load_manifests(cluster_path)
    target = _find_pod(manifests, cluster_path, ns, name)
    profiles = [p.scheduler_name for p in cfg.profiles]

    # the run simulate makes; the hook only counts
    cycles: list[tuple[int, int, float]] = []
    sim = SimulatedCluster(manifests, source=cluster_path)
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    rng_state = sched.algo.rng.getstate()
    start = float(sched.clock.now())  # virtual time 0 of the run
    sched.before_cycle = _target_cycles(sched, ns, name, lambda n, qpi: cycles.append((n, qpi.attempts, float(sched.clock.now()))))
    try:
        replay = sim.run(sched)
    finally:
        sched.shutdown()
    preempted = {e.regarding: e.note for e in sim.events if e.reason == "Preempted"}
    row = pod_row_of(sim, replay, sched, target, profiles, preempted)  # simulate's row of the pod

    early = explain_status(sim, target, profiles, manifests.where(target))
    if early is not None and (not cycles or early.outcome == "Error"):
        early.mode = "in-context"
        return early  # what simulate reports for a pod no cycle decides (or that does not validate)
    if not cycles:  # Running (placed by the file), or deleted before its first cycle
        md = target.get("metadata") or {}
        spec = target.get("spec") or {}
        ex = Explanation(pod=f"{ns}/{md.get('name')}", profile=str(spec.get("schedulerName") or "default-scheduler"), mode="in-context")
        ex.outcome, ex.message, ex.node, ex.attempts = row["status"], row["message"], row["node"], 0
        return ex

    # the same run again, stopped at POD's last cycle, explained on the state it sees
    last, attempts, at = cycles[-1]
    sim2 = SimulatedCluster(manifests, source=cluster_path)
    sched2 = Scheduler(cfg, reg, sim2, seed=seed, simulated=True)
    sched2.algo.rng.setstate(rng_state)

    def explain_here(n: int, qpi: Any) -> None:
        if n != last:
            return
        if qpi.attempts != attempts or float(sched2.clock.now()) != at:
            raise RuntimeError(f"explain: the replay of {cluster_path} diverged at pod {ns}/{name}'s attempt {attempts}")
        fw = sched2.frameworks[qpi.pod.scheduler_name]
        raise _Captured(explain_pod(fw, sched2.cache.update_snapshot(), qpi.pod, cycle=sched2.algo))

    sched2.before_cycle = _target_cycles(sched2, ns, name, explain_here)
    try:
        sim2.run(sched2)
    except _Captured as c:
        ex = c.explanation
    else:
        raise RuntimeError(f"explain: the replay of {cluster_path} ended before pod {ns}/{name}'s attempt {attempts}")
    finally:
        sched2.shutdown()
    ex.mode, ex.attempts, ex.time = "in-context", attempts, round(at - start, 6)
    ex.outcome, ex.node = row["status"], row["node"]
    if row["message"]:
        ex.message = row["message"]
    return ex


def explain_alone(cluster_path: str, pod: str, config_path: str | None = None, *, seed: int | None = None, registry: Any = None) -> Any:
    """POD alone on the file's cluster: the other pods of the file are scheduled first, then
    POD is dry-run against the result."""
    from kubesched.sdk import Pod

    from ..cluster.simulated import ManifestError, SimulatedCluster, load_manifests
    from ..observe.explain import explain_pod
    from ..scheduler import Scheduler

    reg = registry or app.registry()
    cfg = load_config_file(config_path, reg)
    ns, name = split_pod(pod)
    manifests = load_manifests(cluster_path)
    target = _find_pod(manifests, cluster_path, ns, name)
    rest = [obj for obj in manifests if obj is not target]
    sim = SimulatedCluster(rest, source=cluster_path)
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    try:
        sim.run(sched)
        early = explain_status(sim, target, list(sched.frameworks), manifests.where(target))
        if early is not None:  # what simulate reports for a pod it does not schedule
            early.mode = "alone"
            return early
        raw = dict(target)
        spec = dict(raw.get("spec") or {})
        spec.pop("nodeName", None)
        spec.setdefault("schedulerName", "default-scheduler")
        raw["spec"] = spec
        claims = sim.replay.claims if sim.replay is not None else None
        if claims is not None and any(isinstance(c, dict) and c.get("resourceClaimTemplateName") for c in spec.get("resourceClaims") or ()):
            # the pod enters the cluster (the scheduler does not run again), so that the
            # resourceclaim controller makes the claims of its templates, as it would
            sim.store.create(raw)
            raw = dict(sim.store.peek("v1", "Pod", name, ns) or raw)
        p = Pod(raw)
        fw = sched.frameworks.get(p.scheduler_name)
        if fw is None:
            raise ManifestError(f"{cluster_path}: pod {ns}/{name} has schedulerName {p.scheduler_name!r}, which no profile handles")
        ex = explain_pod(fw, sched.cache.update_snapshot(), p, select=sched.algo.select_host)
        ex.mode = "alone"
        return ex
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
        ex = explain_pod(fw, sched.cache.update_snapshot(), p, select=sched.algo.select_host)
        ex.mode = "live"
        return ex
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
