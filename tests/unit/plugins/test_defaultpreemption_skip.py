"""DefaultPreemption's dry run gives a node without a pod of lower priority than the preemptor
its status (UnschedulableAndUnresolvable "No preemption victims found for incoming pod")
without copying it; only nodes with such a pod get a cloned NodeInfo and CycleState.

The reference is the plugin with the private switch ``_skip_nodes_without_victims`` off: every
node tried is copied and goes through SelectVictimsOnNode, as kube-scheduler v1.36.3 does. The
skip must change no status, no message count, no RNG draw, no candidate, no victim, no event.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# --- randomized clusters on the default profile: skip on and off ------------------------------


def _pdb(allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": allowed},
    }


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    b = make_node().name(f"n{i}").capacity(cpu=rng.choice(["2", "4"]), memory="8Gi", pods=rng.choice(["110", "3"]))
    b = b.label(ZONE, f"z{i % 3}").label(HOST, f"n{i}")
    if rng.random() < 0.1:
        b = b.taints([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
    return b.obj()


def _pod(name: str, rng: random.Random, priorities: list[int], node: str = "") -> dict[str, Any]:
    b = make_pod().name(name).uid(name).priority(rng.choice(priorities))
    b = b.req(cpu=rng.choice(["500m", "1", "1500m", "3"]), memory=rng.choice(["128Mi", "1Gi"]))
    r = rng.random()
    if r < 0.15:
        b = b.label("app", "db")  # guarded by the PDB
    elif r < 0.25:
        b = b.label("app", "web").pod_anti_affinity_exists("app", HOST)  # InterPodAffinity's extensions
    elif r < 0.35:
        b = b.label("app", "spread").spread_constraint(1, ZONE, selector={"matchLabels": {"app": "spread"}})
    elif r < 0.42:
        b = b.node_affinity_in(ZONE, ["z1"])  # other zones: UnschedulableAndUnresolvable
    elif r < 0.47:
        b = b.preemption_policy("Never")
    if node:
        b = b.node(node)
    return b.obj()


def _drive(seed: int, skip: bool, priorities: list[int], prebound: str) -> tuple[Any, ...]:
    """One randomized run; ``prebound``: "some" puts pods of the lowest priority on some nodes
    before the scheduler starts, "none" puts none."""
    rng = random.Random(seed)
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                           source="<test>", installed_plugins=reg.names())
    objs: list[dict[str, Any]] = [_node(i, rng) for i in range(10)]
    objs.append(_pdb(rng.choice([0, 1])))
    if prebound == "some":
        for i in range(0, 10, 3):
            for k in range(2):
                objs.append({"apiVersion": "v1", "kind": "Pod", **_pod(f"pre{i}-{k}", rng, priorities[:1], node=f"n{i}")})
    sim = SimulatedCluster([], source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    fw = next(iter(sched.frameworks.values()))
    pl = fw.plugins["DefaultPreemption"]
    pl._skip_nodes_without_victims = skip
    sim.start(sched.on_cluster_event)
    for o in objs:
        sim.store.create(apply_defaults(o))
    sched.run_until_idle()
    names: list[str] = []
    for step in range(70):
        if rng.random() < 0.1 and names:
            name = names.pop(rng.randrange(len(names)))
            if sim.store.peek("v1", "Pod", name, "default") is not None:
                sim.store.delete("v1", "Pod", name, "default")
        else:
            name = f"p{step}"
            names.append(name)
            sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **_pod(name, rng, priorities)}))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + rng.choice([0.01, 0.5, 2.0]))
    sched.run_until_idle()
    results = sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values())
    events = [(e.regarding, e.reason, e.note) for e in sim.events]
    left = sorted((p["metadata"]["name"], p["spec"].get("nodeName"), (p.get("status") or {}).get("nominatedNodeName"))
                  for p in sim.store.list("v1", "Pod"))
    return results, events, left, pl._rng.getstate()


@pytest.mark.parametrize(
    ("seed", "priorities", "prebound"),
    [
        (1, [0, 10, 100, 1000], "none"),
        (2, [0, 10, 100, 1000], "some"),
        (3, [5, 5, 50], "some"),
        (4, [0, 1000], "none"),
        (5, [7], "none"),  # every node lacks victims, always
        (6, [7], "some"),
    ],
)
def test_skip_never_changes_a_decision(seed: int, priorities: list[int], prebound: str) -> None:
    fast = _drive(seed, True, priorities, prebound)
    slow = _drive(seed, False, priorities, prebound)
    assert fast[0] == slow[0]  # placements, final messages, attempts
    assert fast[1] == slow[1]  # every event: FailedScheduling messages of every attempt, Preempted
    assert fast[2] == slow[2]  # the pods left, their nodes and nominations
    assert fast[3] == slow[3]  # the same offset draws
    notes = [n for _, reason, n in fast[1] if reason == "FailedScheduling"]
    assert any("No preemption victims found for incoming pod" in n for n in notes)
    if len(priorities) > 2:
        assert any(reason == "Preempted" for _, reason, _ in fast[1])
    if priorities == [7]:
        assert not any(reason == "Preempted" for _, reason, _ in fast[1])
