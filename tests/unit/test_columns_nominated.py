"""The column Filter path while pods are nominated (RunFilterPluginsWithNominatedPods): every
node gets the column verdict, and a node holding nominated pods of the pod's priority or higher
first runs Filter with them added, whose failure decides the node.

Whole scheduler runs with ``use_columns`` on and off (the per-node path is the reference, and it
equals kube-scheduler's) must give the same placements, statuses, messages and attempts pod by
pod, on random clusters where high-priority pods preempt (and so are nominated while others are
scheduled), with host ports, spreading and (anti-)affinity so that the run with the nominated
pods added rejects nodes the run without them passes, and the other way round."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.runtime.scheduling import Scheduling
from kubesched.sdk import Pod
from kubesched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
PRIORITIES = (0, 0, 10, 100, 1000)


def _scheduler(seed: int, columns: bool) -> tuple[Scheduler, SimulatedCluster, Any]:
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, source="<test>", installed_plugins=reg.names())
    sim = SimulatedCluster([], source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True, reuse_results=False)
    fw = next(iter(sched.frameworks.values()))
    fw.use_batch = False
    fw.use_columns = columns
    sim.start(sched.on_cluster_event)
    return sched, sim, fw


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    b = make_node().name(f"n{i}").capacity(cpu=rng.choice(["1", "2", "4"]), memory="8Gi", pods=rng.choice(["110", "4"]))
    return b.label(ZONE, f"z{i % 3}").label(HOST, f"n{i}").obj()


def _pod(name: str, kind: int, priority: int) -> dict[str, Any]:
    b = make_pod().name(name).priority(priority).req(cpu=("300m", "700m", "1500m")[kind % 3], memory="256Mi")
    if kind == 3:
        b = b.host_port(8080)
    elif kind == 4:
        b = b.label("app", "web").pod_anti_affinity_exists("app", HOST)
    elif kind == 5:
        b = b.label("app", "web").spread_constraint(1, ZONE, selector={"matchLabels": {"app": "web"}})
    elif kind == 6:
        b = b.label("app", "db").pod_affinity_exists("app", ZONE)
    elif kind == 7:
        b = b.label("app", "db").pod_anti_affinity_exists("app", ZONE)
    return {"apiVersion": "v1", "kind": "Pod", **b.obj()}


def _drive(seed: int, columns: bool, n_nodes: int, steps: int) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    """One randomized run; returns (per pod: name, node, status, message, attempts) and counts
    of the column path's cycles with nominated pods and of the runs with them added (all, and
    those that rejected the node)."""
    rng = random.Random(seed)
    sched, sim, fw = _scheduler(seed, columns)
    seen = {"column cycles": 0, "added runs": 0, "added rejected": 0}
    column_pass = Scheduling._pass_filters_columns
    added_run = fw.run_filter_with_nominated_pods_added

    def counting_pass(self: Scheduling, fwk: Any, *rest: Any) -> Any:
        got = column_pass(self, fwk, *rest)
        if got is not None and fwk.services.has_nominated_pods():
            seen["column cycles"] += 1
        return got

    def counting_added(*args: Any) -> Any:
        st = added_run(*args)
        seen["added runs"] += 1
        seen["added rejected"] += st is not None
        return st

    sched.algo._pass_filters_columns = counting_pass.__get__(sched.algo)  # type: ignore[method-assign]
    fw.run_filter_with_nominated_pods_added = counting_added
    for i in range(n_nodes):
        sim.store.create(apply_defaults(_node(i, rng)))
    sched.run_until_idle()
    pods: list[str] = []
    kind = 0
    for step in range(steps):
        r = rng.random()
        if r < 0.06 and pods:  # a pod goes away
            name = pods.pop(rng.randrange(len(pods)))
            if sim.store.peek("v1", "Pod", name, "default") is not None:
                sim.store.delete("v1", "Pod", name, "default")
        else:
            if rng.random() < 0.4:
                kind = rng.randrange(8)
            name = f"p{step}"
            pods.append(name)
            sim.store.create(apply_defaults(_pod(name, kind, rng.choice(PRIORITIES))))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + 0.05)
    sched.run_until_idle()
    out = sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values())
    return out, seen


@pytest.mark.parametrize(("seed", "n_nodes"), [(1, 12), (2, 12), (3, 24), (4, 24), (5, 130), (6, 130)])
def test_columns_with_nominated_pods_never_change_a_decision(seed: int, n_nodes: int) -> None:
    steps = 220 if n_nodes < 100 else 500
    with_columns, seen = _drive(seed, True, n_nodes, steps)
    without, _ = _drive(seed, False, n_nodes, steps)
    assert with_columns == without
    statuses = {r[2] for r in without}
    assert "Scheduled" in statuses and "Unschedulable" in statuses
    assert any("preemption:" in r[3] for r in without)  # some pod preempted (and was nominated)
    # the column path ran while pods were nominated, and the run with them added rejected
    # some node the column verdict alone would not have decided
    assert seen["column cycles"] > 0, seen
    assert seen["added rejected"] > 0, seen


def _nominated_case(columns: bool) -> tuple[Scheduler, Any, dict[str, int]]:
    """Two nodes with room for one 1-CPU pod each; a priority-100 pod is nominated to n0 (it
    waits for its victims there); a priority-10 pod must not take n0 from it."""
    sched, sim, fw = _scheduler(1, columns)
    used = {"columns": 0}
    column_pass = Scheduling._pass_filters_columns

    def counting_pass(self: Scheduling, *args: Any) -> Any:
        got = column_pass(self, *args)
        used["columns"] += got is not None
        return got

    sched.algo._pass_filters_columns = counting_pass.__get__(sched.algo)  # type: ignore[method-assign]
    for i in range(2):
        sim.store.create(apply_defaults(make_node().name(f"n{i}").capacity(cpu="1", memory="8Gi").label(HOST, f"n{i}").obj()))
    sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("filler").priority(2000).req(cpu="1").node("n1").obj()}))
    sched.run_until_idle()
    waiting = Pod(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("waiting").uid("waiting-uid").priority(100).req(cpu="1").obj()}))
    sched.queue.nominator.add(waiting, "n0")
    return sched, sim, used


def _result(sched: Scheduler, name: str) -> Any:
    (r,) = [r for r in sched.results.values() if r.name.rsplit("/", 1)[-1] == name]
    return r


@pytest.mark.parametrize("columns", [True, False])
def test_a_nominated_pod_keeps_its_node_on_the_column_path(columns: bool) -> None:
    sched, sim, used = _nominated_case(columns)
    sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("low").priority(10).req(cpu="500m").obj()}))
    sched.run_until_idle()
    r = _result(sched, "low")
    assert (r.node, r.status) == (None, "Unschedulable")
    assert r.message == "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    assert used["columns"] == (1 if columns else 0)


@pytest.mark.parametrize("columns", [True, False])
def test_an_equal_priority_pod_is_kept_out_and_a_higher_one_is_not(columns: bool) -> None:
    sched, sim, used = _nominated_case(columns)
    sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("peer").priority(100).req(cpu="500m").obj()}))
    sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("vip").priority(1000).req(cpu="500m").obj()}))
    sched.run_until_idle()
    vip = _result(sched, "vip")
    assert (vip.node, vip.status) == ("n0", "Scheduled")
    peer = _result(sched, "peer")
    assert peer.status == "Unschedulable"
    assert peer.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert used["columns"] >= (2 if columns else 0)
