"""DefaultPreemption's dry-run memo (``plugins/defaultpreemption/reuse.py``): a node's result
kept from an earlier preemptor with the same Filter signature and priority, while the node's
NodeInfo generation, the nominated pods Filter adds there, the PDBs and the snapshot's
generation are unchanged. Against ``_reuse_dry_runs = False`` (every node computed in every dry
run), the decisions, every dry run's candidates and statuses, the events and the messages must
be the same; and a key without the generation or the nominated pods gives a stale victim.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.plugins.defaultpreemption import NO_VICTIMS_MSG
from kubesched.runtime.plugins.defaultpreemption.plugin import _latest_start
from kubesched.runtime.plugins.defaultpreemption.reuse import NO_START, DryRunMemo
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import Code, CycleState, Pod, Status
from kubesched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _scheduler(seed: int = 0) -> tuple[Scheduler, SimulatedCluster, Any, Any]:
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                           source="<test>", installed_plugins=reg.names())
    sim = SimulatedCluster([], source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    fw = next(iter(sched.frameworks.values()))
    sim.start(sched.on_cluster_event)
    return sched, sim, fw, fw.plugins["DefaultPreemption"]


def _pdb(name: str, app: str, allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed},
    }


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    b = make_node().name(f"n{i}").capacity(cpu=rng.choice(["2", "4"]), memory="8Gi", pods="110")
    b = b.label(ZONE, f"z{i % 3}").label(HOST, f"n{i}")
    if rng.random() < 0.15:
        b = b.taints([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
    return {"apiVersion": "v1", "kind": "Node", **b.obj()}


def _pod(name: str, rng: random.Random, priorities: list[int], node: str = "") -> dict[str, Any]:
    # few shapes, so that many preemptors share a signature; some differ (requests,
    # tolerations, node affinity) and some have no signature (anti-affinity)
    b = make_pod().name(name).uid(name).priority(rng.choice(priorities))
    b = b.req(cpu=rng.choice(["1", "1", "1500m", "3"]), memory="128Mi")
    r = rng.random()
    if r < 0.15:
        b = b.label("app", "db")  # guarded by a PDB
    elif r < 0.25:
        b = b.label("app", "cache")  # guarded by the other PDB
    elif r < 0.32:
        b = b.label("app", "web").pod_anti_affinity_exists("app", HOST)  # not signed
    elif r < 0.4:
        b = b.node_affinity_in(ZONE, ["z1", "z2"])
    elif r < 0.47:
        b = b.toleration("dedicated", "x", "NoSchedule")
    if node:
        b = b.node(node)
        if rng.random() < 0.5:
            b = b.start_time(rng.choice(["2023-11-14T22:00:00Z", "2023-11-14T22:13:20Z"]))
    return {"apiVersion": "v1", "kind": "Pod", **b.obj()}


def _drive(seed: int, reuse: bool, priorities: list[int]) -> tuple[Any, ...]:
    rng = random.Random(seed)
    sched, sim, fw, pl = _scheduler(seed)
    pl._reuse_dry_runs = reuse
    dry_runs: list[tuple[Any, ...]] = []
    computed: list[str] = []
    dry_run, incremental = pl.dry_run_preemption, pl._select_victims_incremental

    def recording_dry_run(state: Any, pod: Pod, *a: Any) -> Any:
        cands, statuses, errs = got = dry_run(state, pod, *a)
        dry_runs.append((pod.name, [(c.name, [v.name for v in c.victims], c.num_pdb_violations) for c in cands],
                         sorted((n, st.code, tuple(st.reasons)) for n, st in statuses.items()), list(errs)))
        return got

    def counting(state: Any, pod: Pod, ni: Any, *a: Any) -> Any:
        computed.append(ni.name)
        return incremental(state, pod, ni, *a)

    pl.dry_run_preemption = recording_dry_run
    pl._select_victims_incremental = counting
    nodes = 10
    for i in range(nodes):
        sim.store.create(apply_defaults(_node(i, rng)))
    sim.store.create(apply_defaults(_pdb("db", "db", rng.choice([0, 1]))))
    sim.store.create(apply_defaults(_pdb("cache", "cache", rng.choice([0, 2]))))
    for i in range(nodes):
        for k in range(rng.choice([1, 2, 3])):
            sim.store.create(apply_defaults(_pod(f"low{i}-{k}", rng, priorities[:2], node=f"n{i}")))
    sched.run_until_idle()
    names: list[str] = []
    step = 0
    for _ in range(40):
        r = rng.random()
        if r < 0.08 and names:
            name = names.pop(rng.randrange(len(names)))
            if sim.store.peek("v1", "Pod", name, "default") is not None:
                sim.store.delete("v1", "Pod", name, "default")
        elif r < 0.14:
            # a node changes between preemptors (its generation), or a new node comes
            i = rng.randrange(nodes + 1)
            if i == nodes:
                sim.store.create(apply_defaults(_node(nodes, rng)))
                nodes += 1
            else:
                sim.store.patch("v1", "Node", f"n{i}", {"metadata": {"labels": {"touched": str(step)}}})
        elif r < 0.18:
            sim.store.patch("policy/v1", "PodDisruptionBudget", "db", {"status": {"disruptionsAllowed": rng.choice([0, 1, 2])}},
                            "default", subresource="status")
        elif r < 0.22:
            i = rng.randrange(nodes)
            sim.store.create(apply_defaults(_pod(f"late{step}", rng, priorities[:2], node=f"n{i}")))
            step += 1
        else:
            # several pods pending at once: the later ones meet the earlier ones' nominations
            for _ in range(rng.choice([1, 2, 3, 4])):
                name = f"p{step}"
                step += 1
                names.append(name)
                sim.store.create(apply_defaults(_pod(name, rng, priorities)))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + rng.choice([0.0, 0.01, 2.0]))
    sched.run_until_idle()
    results = sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values())
    events = [(e.regarding, e.reason, e.note) for e in sim.events]
    left = sorted((p["metadata"]["name"], p["spec"].get("nodeName"), (p.get("status") or {}).get("nominatedNodeName"))
                  for p in sim.store.list("v1", "Pod"))
    return results, events, left, dry_runs, pl._rng.getstate(), computed


@pytest.mark.parametrize(
    ("seed", "priorities"),
    [
        (1, [0, 10, 100, 1000]),
        (2, [0, 10, 100, 100, 1000]),
        (3, [5, 5, 50]),
        (4, [0, 1000]),
        (5, [1, 2, 3, 4, 5, 6]),
        (6, [0, 0, 10, 10, 100]),
        (7, [0, 100]),
        (8, [0, 1, 100, 100]),
    ],
)
def test_reuse_makes_the_same_dry_runs_and_decisions(seed: int, priorities: list[int]) -> None:
    on = _drive(seed, True, priorities)
    off = _drive(seed, False, priorities)
    assert on[3] == off[3]  # every dry run: its candidates, victims, statuses and messages, errors
    assert on[0] == off[0]  # placements, final messages, attempts
    assert on[1] == off[1]  # every event: FailedScheduling of every attempt, Preempted
    assert on[2] == off[2]  # the pods left, their nodes and nominations
    assert on[4] == off[4]  # the same offset draws
    # the runs went through what the comparison is about: preemptions, and nodes not computed
    assert any(reason == "Preempted" for _, reason, _ in on[1])
    assert len(on[5]) < len(off[5])


def _victims(pl: Any, fw: Any, sched: Scheduler, pod: Pod) -> tuple[list[tuple[str, list[str]]], dict[str, list[str]]]:
    """One dry run of ``pod`` over every node, as ``preempt`` runs it (PreFilter's state, the
    Filter signature set)."""
    nodes = list(sched.cache.update_snapshot().list())
    state = CycleState()
    _, st, _ = fw.run_pre_filter(state, pod, nodes)
    assert st.is_success()
    pl._dry_run_sig = pl._dry_run_signature(state, pod, pod)
    assert pl._dry_run_sig is not None  # the reuse applies to this pod
    try:
        cands, statuses, errs = pl.dry_run_preemption(state, pod, nodes, pl.get_pod_disruption_budgets(), 0, len(nodes))
    finally:
        pl._dry_run_sig = None
    assert errs == []
    return [(c.name, [v.name for v in c.victims]) for c in cands], {n: s.reasons for n, s in statuses.items()}


def _preemptor(name: str, cpu: str = "3") -> Pod:
    return Pod(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name(name).uid(name).priority(100).req(cpu=cpu).obj()}))


def _one_node() -> tuple[Scheduler, SimulatedCluster, Any, Any]:
    # n1: 4 CPUs, lo-a (priority 5, 2 CPUs) and lo-b (priority 1, 1 CPU); a preemptor asking
    # for 3 CPUs evicts lo-a and keeps lo-b (reprieved: 1 + 3 fits)
    sched, sim, fw, pl = _scheduler()
    sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Node", **make_node().name("n1").capacity(cpu="4", memory="8Gi", pods="110").obj()}))
    for name, prio, cpu in (("lo-a", 5, "2"), ("lo-b", 1, "1")):
        sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name(name).uid(name).priority(prio).req(cpu=cpu).node("n1").obj()}))
    sched.run_until_idle()
    return sched, sim, fw, pl


def test_the_generation_is_in_the_key() -> None:
    sched, sim, fw, pl = _one_node()
    assert _victims(pl, fw, sched, _preemptor("p1")) == ([("n1", ["lo-a"])], {})
    (table,) = pl._memo._tables.values()
    stale = table["n1"]
    assert [v.name for v in stale[3]] == ["lo-a"] and stale[2] == NO_START
    # a pod of priority 3 and 1 CPU joins n1: lo-a and lo-b are evicted, lo-d is reprieved
    sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("lo-d").uid("lo-d").priority(3).req(cpu="1").node("n1").obj()}))
    sched.run_until_idle()
    want = ([("n1", ["lo-a", "lo-b"])], {})
    assert _victims(pl, fw, sched, _preemptor("p2")) == want
    # a key without the generation would have reused the stale entry: the wrong victims
    (ni,) = sched.cache.update_snapshot().list()
    table["n1"] = (ni.generation, *stale[1:])
    assert _victims(pl, fw, sched, _preemptor("p4")) == ([("n1", ["lo-a"])], {})


def test_the_nominated_pods_are_in_the_key() -> None:
    sched, _, fw, pl = _one_node()
    assert _victims(pl, fw, sched, _preemptor("p1")) == ([("n1", ["lo-a"])], {})
    (table,) = pl._memo._tables.values()
    stale = table["n1"]
    # a pod of the preemptors' priority nominated to n1 (1 CPU): Filter counts it, so lo-b
    # is evicted too; the NodeInfo (and its generation) is unchanged
    nominated = _preemptor("nom", cpu="1")
    sched.queue.nominator.add(nominated, "n1")
    (ni,) = sched.cache.update_snapshot().list()
    assert ni.generation == stale[0]
    assert _victims(pl, fw, sched, _preemptor("p2")) == ([("n1", ["lo-a", "lo-b"])], {})
    assert table["n1"][1] == (nominated,)
    # a key without the nominated pods would have reused the entry made without them
    table["n1"] = (stale[0], (nominated,), *stale[2:])
    assert _victims(pl, fw, sched, _preemptor("p3")) == ([("n1", ["lo-a"])], {})
    # an updated nominated pod (a new object) is not the same key
    sched.queue.nominator.add(_preemptor("nom", cpu="1"), "n1")
    assert _victims(pl, fw, sched, _preemptor("p4")) == ([("n1", ["lo-a", "lo-b"])], {})
    # a preemptor nominated to n1 is not added for itself: n1 is as without nominations for
    # it, and full for the next preemptor of its signature
    sched.queue.nominator.delete(nominated)
    p5 = _preemptor("p5")
    sched.queue.nominator.add(p5, "n1")
    assert _victims(pl, fw, sched, p5) == ([("n1", ["lo-a"])], {})
    assert table["n1"][1] == ()
    assert _victims(pl, fw, sched, _preemptor("p6")) == ([], {"n1": ["Insufficient cpu"]})


def test_a_failure_status_is_reused_and_an_unstarted_victim_waits_for_the_clock() -> None:
    sched, sim, fw, pl = _one_node()
    # 5 CPUs do not fit on n1 even without its pods: the node's status is kept
    assert _victims(pl, fw, sched, _preemptor("big1", cpu="5")) == ([], {"n1": ["Insufficient cpu"]})
    (table,) = pl._memo._tables.values()
    kept = table["n1"][5]
    assert kept.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and kept.reasons == ["Insufficient cpu"]
    computed: list[str] = []
    incremental = pl._select_victims_incremental
    pl._select_victims_incremental = lambda state, pod, ni, *a: computed.append(ni.name) or incremental(state, pod, ni, *a)
    assert _victims(pl, fw, sched, _preemptor("big2", cpu="5")) == ([], {"n1": ["Insufficient cpu"]})
    assert computed == []
    # a started victim at the clock's "now": not kept (an unstarted one would sort before it
    # at a later "now")
    now = sched.clock.now()
    (ni,) = sched.cache.update_snapshot().list()
    started = Pod(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("s").uid("s").priority(0).node("n1")
                                  .start_time("2023-11-14T22:13:20Z").obj()}))
    assert _latest_start([*ni.pods, started], 100) == 1_700_000_000.0 == now
    assert _latest_start([started], 100) == NO_START  # every potential victim started
    assert _latest_start(ni.pods, 100) == NO_START  # none started
    assert _latest_start([*ni.pods, started], 0) == NO_START  # no potential victim


def test_a_node_without_victims_is_not_a_table_entry() -> None:
    sched, _, fw, pl = _one_node()
    pod = Pod(apply_defaults({"apiVersion": "v1", "kind": "Pod", **make_pod().name("p").uid("p").priority(1).req(cpu="3").obj()}))
    assert _victims(pl, fw, sched, pod) == ([], {"n1": [NO_VICTIMS_MSG]})
    assert len(pl._memo) == 0


def test_the_memo_is_bounded_and_dropped_with_the_pdbs_and_the_snapshot_generation() -> None:
    memo = DryRunMemo()
    pdbs = [_pdb("db", "db", 1)]
    first = memo.table(("sig", 0), 10, 1, pdbs, 2)
    first["n1"] = (1, (), NO_START, (), 0, Status.unschedulable("x"))
    assert memo.table(("sig", 0), 10, 1, [_pdb("db", "db", 1)], 2) is first and len(memo) == 1
    assert memo.table(("sig", 0), 10, 1, [_pdb("db", "db", 0)], 2) == {}  # a PDB changed
    t = memo.table(("sig", 0), 10, 1, pdbs, 2)
    t["n1"] = first["n1"]
    assert memo.table(("sig", 0), 10, 2, pdbs, 2) == {}  # the node set or images changed
    t = memo.table(("sig", 0), 10, 2, pdbs, 1)
    for k in range(3):
        t[f"n{k}"] = first["n1"]
    assert memo.table(("sig", 0), 10, 2, pdbs, 1) == {}  # more entries than twice the nodes
    for prio in range(DryRunMemo.TABLES + 3):
        memo.table(("sig", 0), prio, 2, pdbs, 1)["n"] = first["n1"]
    assert len(memo._tables) == DryRunMemo.TABLES
    assert [k[1] for k in memo._tables] == list(range(3, DryRunMemo.TABLES + 3))  # the last ones
