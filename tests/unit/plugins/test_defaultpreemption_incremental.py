"""DefaultPreemption's victims through ``_select_victims_incremental`` (one copy of the NodeInfo
and of the state per node tried, updated in place; the PDBs parsed once per dry run) against
``select_victims_on_node`` on ``ni.clone()`` and ``state.clone()``, the reference behind the
private switch ``_incremental_victims = False``.

Both must make the same AddPod/RemovePod extension calls and the same Filter calls, in the same
order, on NodeInfos with the same pods and totals, and reach the same victims, statuses,
messages, events, nominations and RNG draws: randomized default-profile clusters with PDBs,
nominated pods (several pods pending at once), required anti-affinity and topology spread
(InterPodAffinity's and PodTopologySpread's extensions), node affinity, taints and several
priorities.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.plugins.defaultpreemption.victims import (
    filter_pods_with_pdb_violation,
    parse_pdbs,
    split_by_pdbs,
)
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import Pod
from kubesched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _pdb(name: str, app: str, allowed: int, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed},
    }


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    b = make_node().name(f"n{i}").capacity(cpu=rng.choice(["2", "4"]), memory="8Gi", pods=rng.choice(["110", "4"]))
    b = b.label(ZONE, f"z{i % 3}").label(HOST, f"n{i}")
    if rng.random() < 0.1:
        b = b.taints([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
    return b.obj()


def _pod(name: str, rng: random.Random, priorities: list[int], node: str = "") -> dict[str, Any]:
    b = make_pod().name(name).uid(name).priority(rng.choice(priorities))
    b = b.req(cpu=rng.choice(["500m", "900m", "1", "1500m", "3"]), memory=rng.choice(["128Mi", "1Gi"]))
    r = rng.random()
    if r < 0.15:
        b = b.label("app", "db")  # guarded by a PDB
    elif r < 0.22:
        b = b.label("app", "cache")  # guarded by the other PDB
    elif r < 0.32:
        b = b.label("app", "web").pod_anti_affinity_exists("app", HOST)  # InterPodAffinity's extensions
    elif r < 0.42:
        b = b.label("app", "spread").spread_constraint(1, ZONE, selector={"matchLabels": {"app": "spread"}})
    elif r < 0.48:
        b = b.node_affinity_in(ZONE, ["z1"])
    elif r < 0.52:
        b = b.preemption_policy("Never")
    if node:
        b = b.node(node)
    return b.obj()


def _recording(calls: list[tuple[Any, ...]], hook: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def ext(state: Any, pod: Any, other: Any, node_info: Any) -> Any:
        calls.append((hook, name, pod.name, other.name, node_info.name, sorted(p.name for p in node_info.pods),
                      node_info.requested.milli_cpu, node_info.is_sealed))
        return fn(state, pod, other, node_info)

    def filt(state: Any, pod: Any, node_info: Any) -> Any:
        st = fn(state, pod, node_info)
        calls.append((hook, name, pod.name, node_info.name, sorted(p.name for p in node_info.pods),
                      node_info.requested.milli_cpu, node_info.non_zero_requested.milli_cpu,
                      None if st is None else (st.code, tuple(st.reasons))))
        return st

    return filt if hook == "filter" else ext


def _drive(seed: int, incremental: bool, priorities: list[int]) -> tuple[Any, ...]:
    rng = random.Random(seed)
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                           source="<test>", installed_plugins=reg.names())
    objs: list[dict[str, Any]] = [_node(i, rng) for i in range(12)]
    objs.append(_pdb("db", "db", rng.choice([0, 1])))
    objs.append(_pdb("cache", "cache", rng.choice([0, 2])))
    for i in range(0, 12, 2):
        for k in range(rng.choice([1, 2, 3])):
            objs.append({"apiVersion": "v1", "kind": "Pod", **_pod(f"pre{i}-{k}", rng, priorities[:2], node=f"n{i}")})
    sim = SimulatedCluster([], source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    fw = next(iter(sched.frameworks.values()))
    pl = fw.plugins["DefaultPreemption"]
    pl._incremental_victims = incremental
    pl._reuse_dry_runs = False  # every node's calls are compared (the reuse is test_preemption_reuse's)
    calls: list[tuple[Any, ...]] = []
    paths: list[str] = []
    incremental_select, reference_select = pl._select_victims_incremental, pl.select_victims_on_node
    pl._select_victims_incremental = lambda *a: paths.append("incremental") or incremental_select(*a)
    pl.select_victims_on_node = lambda *a: paths.append("reference") or reference_select(*a)
    nominated_for_node = fw.services.nominated_pods_for_node

    def nominated(node_name: str) -> list[Pod]:
        got = nominated_for_node(node_name)
        if got:
            paths.append("nominated")
        return got

    fw.services.nominated_pods_for_node = nominated
    for hook in ("pre_filter_add_pod", "pre_filter_remove_pod", "filter"):
        fw.entries[hook][:] = [(name, _recording(calls, hook, name, fn)) for name, fn in fw.entries[hook]]
    sim.start(sched.on_cluster_event)
    for o in objs:
        sim.store.create(apply_defaults(o))
    sched.run_until_idle()
    names: list[str] = []
    step = 0
    for _ in range(30):
        if rng.random() < 0.1 and names:
            name = names.pop(rng.randrange(len(names)))
            if sim.store.peek("v1", "Pod", name, "default") is not None:
                sim.store.delete("v1", "Pod", name, "default")
        else:
            # several pods pending at once: the later ones meet the earlier ones' nominations
            for _ in range(rng.choice([1, 2, 3])):
                name = f"p{step}"
                step += 1
                names.append(name)
                sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **_pod(name, rng, priorities)}))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + rng.choice([0.01, 0.5, 2.0]))
    sched.run_until_idle()
    results = sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values())
    events = [(e.regarding, e.reason, e.note) for e in sim.events]
    left = sorted((p["metadata"]["name"], p["spec"].get("nodeName"), (p.get("status") or {}).get("nominatedNodeName"))
                  for p in sim.store.list("v1", "Pod"))
    return results, events, left, pl._rng.getstate(), calls, paths


@pytest.mark.parametrize(
    ("seed", "priorities"),
    [
        (1, [0, 10, 100, 1000]),
        (2, [0, 10, 100, 1000]),
        (3, [5, 5, 50]),
        (4, [0, 1000]),
        (5, [1, 2, 3, 4, 5, 6]),
        (6, [0, 0, 10, 10, 100]),
    ],
)
def test_incremental_victims_make_the_same_calls_and_decisions(seed: int, priorities: list[int]) -> None:
    fast = _drive(seed, True, priorities)
    slow = _drive(seed, False, priorities)
    assert fast[4] == slow[4]  # every AddPod/RemovePod/Filter call, in order, with its NodeInfo
    assert fast[0] == slow[0]  # placements, final messages, attempts
    assert fast[1] == slow[1]  # every event: FailedScheduling of every attempt, Preempted
    assert fast[2] == slow[2]  # the pods left, their nodes and nominations
    assert fast[3] == slow[3]  # the same offset draws
    # the runs went through what the comparison is about
    assert {c[0] for c in fast[4]} == {"pre_filter_add_pod", "pre_filter_remove_pod", "filter"}
    assert any(reason == "Preempted" for _, reason, _ in fast[1])
    assert "incremental" in fast[5] and "reference" not in fast[5]
    assert "reference" in slow[5] and "incremental" not in slow[5]
    assert "nominated" in fast[5]


def test_split_by_parsed_pdbs_equals_filter_pods_with_pdb_violation() -> None:
    rng = random.Random(7)
    pdbs = [
        _pdb("a", "db", 1),
        _pdb("b", "db", 0, namespace="other"),
        _pdb("c", "cache", 2),
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "empty", "namespace": "default"},
         "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "nil", "namespace": "default"},
         "spec": {}, "status": {"disruptionsAllowed": 0}},
        {**_pdb("d", "db", 0), "status": {"disruptionsAllowed": 0, "disruptedPods": {"x3": "2024-01-01T00:00:00Z"}}},
    ]
    assert [p[0] for p in parse_pdbs(pdbs)] == ["default", "other", "default", "default"]
    for _ in range(50):
        pods = []
        for i in range(rng.randrange(0, 8)):
            b = make_pod().name(f"x{i}").uid(f"x{i}").namespace(rng.choice(["default", "other"]))
            app = rng.choice(["db", "cache", "web", ""])
            if app:
                b = b.label("app", app)
            pods.append(Pod(b.obj()))
        chosen = rng.sample(pdbs, rng.randrange(0, len(pdbs) + 1))
        assert split_by_pdbs(pods, parse_pdbs(chosen)) == filter_pods_with_pdb_violation(pods, chosen)
