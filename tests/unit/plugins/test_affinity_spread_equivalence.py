"""InterPodAffinity and PodTopologySpread through the pod index and the column forms decide
exactly as the scans and the per-node hooks, in whole scheduler runs: random clusters (zones,
hostnames, racks; 120 to 260 nodes, so percentageOfNodesToScore cuts the search), pods with
required and preferred (anti-)affinity and spread constraints of both whenUnsatisfiable kinds,
pods selected by a Service (system default spreading), pods arriving and deleted, node label
updates. Placements, statuses, messages and attempts are compared pod by pod."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"
NAMESPACES = ("default", "team-a", "team-b")
PLUGINS = ("InterPodAffinity", "PodTopologySpread")


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    labels = {HOST: f"n{i}"}
    if rng.random() < 0.93:
        labels[ZONE] = f"z{rng.randrange(4)}"
    if rng.random() < 0.5:
        labels[RACK] = f"r{rng.randrange(6)}"
    res = {"cpu": rng.choice(["2", "4", "8"]), "memory": "16Gi", "pods": rng.choice(["110", "110", "5"])}
    spec: dict[str, Any] = {}
    if rng.random() < 0.08:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}, "spec": spec,
        "status": {"capacity": dict(res), "allocatable": dict(res), "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _term(rng: random.Random, app: str) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": rng.choice([ZONE, HOST, HOST, RACK]), "labelSelector": {"matchLabels": {"app": app}}}
    r = rng.random()
    if r < 0.15:
        t["namespaces"] = list(rng.sample(NAMESPACES, 2))
    elif r < 0.3:
        t["namespaceSelector"] = {"matchLabels": {"tier": rng.choice(["front", "back"])}}
    elif r < 0.35:
        t["namespaceSelector"] = {}
    r = rng.random()
    if r < 0.1:
        t["matchLabelKeys"] = ["version"]
    elif r < 0.15:
        t["mismatchLabelKeys"] = ["version"]
    return t


def _template(rng: random.Random) -> Callable[[str], dict[str, Any]]:
    """A ReplicaSet-like template: the pods it makes differ by name only."""
    app = rng.choice(["web", "db", "cache", "batch"])
    ns = rng.choice(NAMESPACES)
    labels = {"app": app, "version": rng.choice(["v1", "v2"])}
    aff: dict[str, Any] = {}
    spread: list[dict[str, Any]] = []
    kind = rng.randrange(8)
    other = rng.choice(["web", "db", "cache", "batch"])
    if kind == 0:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(rng, app)]}
    elif kind == 1:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(rng, rng.choice([app, other]))]}
    elif kind == 2:
        aff["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.choice([1, 10, 100]), "podAffinityTerm": _term(rng, rng.choice([app, other]))} for _ in range(rng.choice([1, 2]))]}
    elif kind == 3:
        aff["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.choice([1, 10, 100]), "podAffinityTerm": _term(rng, rng.choice([app, other]))}]}
        if rng.random() < 0.5:
            aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(rng, other)]}
    elif kind in (4, 5):
        for _ in range(rng.choice([1, 1, 2])):
            c: dict[str, Any] = {
                "maxSkew": rng.choice([1, 1, 2, 5]), "topologyKey": rng.choice([ZONE, HOST, RACK]),
                "whenUnsatisfiable": "DoNotSchedule" if kind == 4 else "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
            if rng.random() < 0.3:
                c["minDomains"] = rng.choice([2, 5])
                c["whenUnsatisfiable"] = "DoNotSchedule"
            if rng.random() < 0.2:
                c["nodeTaintsPolicy"] = "Honor"
            if rng.random() < 0.2:
                c["matchLabelKeys"] = ["version"]
            spread.append(c)
    # kind 6, 7: no constraint of their own (app=web is selected by a Service: default spreading)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": rng.choice(["100m", "500m", "1"]), "memory": "128Mi"}}}]}
    if aff:
        spec["affinity"] = aff
    if spread:
        spec["topologySpreadConstraints"] = spread
    if rng.random() < 0.1:
        spec["nodeSelector"] = {ZONE: rng.choice(["z0", "z1"])}

    def make(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": dict(labels)}, "spec": spec}

    return make


def _drive(seed: int, n_nodes: int, indexed: bool, steps: int = 150) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    rng = random.Random(seed)
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, source="<test>", installed_plugins=reg.names())
    sim = SimulatedCluster([], source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True, reuse_results=False)
    fw = next(iter(sched.frameworks.values()))
    fw.use_columns = indexed
    fw.use_batch = indexed
    for name in PLUGINS:
        fw.plugins[name].use_index = indexed
    # how often each plugin's column forms answered (they must, for the comparison to mean anything)
    answered = {f"{k}:{n}": 0 for k in ("filter", "score") for n in PLUGINS}
    for kind, table in (("filter", fw.filter_columns), ("score", fw.score_columns)):
        for name in PLUGINS:
            inner = table[name]

            def counted(*a: Any, _inner: Any = inner, _key: str = f"{kind}:{name}") -> Any:
                got = _inner(*a)
                if got is not None:
                    answered[_key] += 1
                return got

            table[name] = counted
    sim.start(sched.on_cluster_event)
    for i, ns in enumerate(NAMESPACES):
        sim.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"tier": ("front", "back")[i % 2]}}})
    sim.store.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}})
    for i in range(n_nodes):
        sim.store.create(apply_defaults(_node(i, rng)))
    sched.run_until_idle()
    pods: list[tuple[str, str]] = []
    make = _template(rng)
    for step in range(steps):
        r = rng.random()
        if r < 0.05:  # a node's labels change (zone, rack)
            i = rng.randrange(n_nodes)
            cur = sim.store.get("v1", "Node", f"n{i}")
            new = apply_defaults(_node(i, rng))
            new["metadata"]["resourceVersion"] = cur["metadata"].get("resourceVersion")
            sim.store.update(new)
        elif r < 0.12 and pods:  # a pod goes away
            name, ns = pods.pop(rng.randrange(len(pods)))
            if sim.store.peek("v1", "Pod", name, ns) is not None:
                sim.store.delete("v1", "Pod", name, ns)
        else:
            if rng.random() < 0.25:
                make = _template(rng)
            for k in range(rng.choice([1, 1, 3])):
                obj = make(f"p{step}-{k}")
                pods.append((obj["metadata"]["name"], obj["metadata"]["namespace"]))
                sim.store.create(apply_defaults(obj))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + 0.01)
    sched.run_until_idle()
    out = sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values())
    return out, answered


@pytest.mark.parametrize(("seed", "n_nodes"), [(2, 150), (3, 200), (4, 260), (8, 150), (12, 180), (14, 240)])
def test_index_and_columns_never_change_a_decision(seed: int, n_nodes: int) -> None:
    fast, answered = _drive(seed, n_nodes, indexed=True)
    ref, none = _drive(seed, n_nodes, indexed=False)
    assert not any(none.values())
    assert fast == ref
    assert {r[2] for r in ref} >= {"Scheduled", "Unschedulable"}
    assert all(answered.values()), answered
