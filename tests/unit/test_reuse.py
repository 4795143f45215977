"""Result reuse between pods with equal signatures (sign_pod): speed never changes a decision.

The randomized runs drive the simulated cluster event by event (pods, node updates, node
additions with images, pod deletions) twice, with and without reuse, and require the same
placements and messages; they also require that reuse really skipped plugin calls.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.framework import Framework
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import Code, Status, freeze, hookimpl
from kubesched.testing import make_node, make_pod, run_profile

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
MB = 1024 * 1024


# freeze ------------------------------------------------------------------------------------------
def test_freeze_equal_exactly_when_values_equal() -> None:
    a = {"x": [1, {"b": 2, "a": "s"}], "y": None}
    b = {"y": None, "x": [1, {"a": "s", "b": 2}]}
    assert freeze(a) == freeze(b)
    assert hash(freeze(a)) == hash(freeze(b))
    assert freeze({"x": [1, 2]}) != freeze({"x": [2, 1]})
    assert freeze({"x": 1}) != freeze({"x": "1"})
    assert freeze({}) != freeze([])
    assert freeze([1, "a"]) == freeze((1, "a"))
    assert freeze(None) is not None  # a pod without the field still signs
    with pytest.raises(TypeError, match="unsupported value of type set"):
        freeze({"x": {1, 2}})


# randomized equivalence -------------------------------------------------------------------------
def _node(i: int, rng: random.Random) -> dict[str, Any]:
    b = make_node().name(f"n{i}").capacity(cpu=rng.choice(["2", "4", "8"]), memory=rng.choice(["4Gi", "16Gi"]), pods=rng.choice(["110", "6"]))
    b = b.label(ZONE, f"z{i % 3}").label(HOST, f"n{i}")
    taints = []
    if rng.random() < 0.15:
        taints.append({"key": "dedicated", "value": "x", "effect": "NoSchedule"})
    if rng.random() < 0.25:
        taints.append({"key": "soft", "value": "y", "effect": "PreferNoSchedule"})
    if taints:
        b = b.taints(taints)
    obj = b.obj()
    images = [img for img in ("img-a", "img-b", "img-c") if rng.random() < 0.35]
    if images:
        obj["status"]["images"] = [{"names": [f"{img}:1"], "sizeBytes": {"img-a": 300, "img-b": 900, "img-c": 60}[img] * MB} for img in images]
    if rng.random() < 0.08:
        obj["spec"] = {**obj.get("spec", {}), "unschedulable": True}
    return obj


def _pod(name: str, kind: int) -> dict[str, Any]:
    image = ("img-a:1", "img-b:1", "img-c:1", "other:1")[kind % 4]
    b = make_pod().name(name).req(cpu=("100m", "500m", "1", "3")[kind % 4], memory=("128Mi", "1Gi")[kind % 2])
    if kind == 4:
        b = b.toleration("dedicated", "x", "NoSchedule")
    elif kind == 5:
        b = b.node_selector({ZONE: "z1"})
    elif kind == 6:
        b = b.host_port(8080)
    elif kind == 7:
        b = b.label("app", "web").pod_anti_affinity_exists("app", HOST)  # not signed: no reuse
    elif kind == 8:
        b = b.toleration("soft", "y", "PreferNoSchedule")
    obj = b.obj()
    obj["spec"]["containers"][0]["image"] = image
    if kind == 9:
        obj["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 60, "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z2"]}]}}]}}
    return obj


def _drive(seed: int, reuse: bool, steps: int = 260, batch: bool = True, columns: bool = False, n_nodes: int = 24) -> tuple[list[tuple[Any, ...]], int]:
    """One randomized run; returns (per pod: name, node, status, message) and the number of
    nodes the framework ran the Filter plugins on (one by one or in batches; the column forms
    are not counted)."""
    rng = random.Random(seed)
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, source="<test>", installed_plugins=reg.names())
    sim = SimulatedCluster([], source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True, reuse_results=reuse)
    fw = next(iter(sched.frameworks.values()))
    assert fw.reuse_results is reuse
    calls = 0
    inner_batch = fw.run_filter_plugins_batch

    def counting_batch(state: Any, pod: Any, nodes: Any, *rest: Any) -> Any:
        nonlocal calls
        calls += len(nodes)
        return inner_batch(state, pod, nodes, *rest)

    fw.run_filter_plugins_batch = counting_batch  # type: ignore[method-assign]
    fw.use_batch = batch
    fw.use_columns = columns
    sim.start(sched.on_cluster_event)
    for i in range(n_nodes):
        sim.store.create(apply_defaults(_node(i, rng)))
    sched.run_until_idle()
    pods: list[str] = []
    kind = 0
    for step in range(steps):
        r = rng.random()
        if r < 0.04:  # a new node (its images change ImageLocality's spread for every node)
            sim.store.create(apply_defaults(_node(n_nodes, rng)))
            n_nodes += 1
        elif r < 0.08:  # a node update: new labels / taints / images
            i = rng.randrange(n_nodes)
            cur = sim.store.get("v1", "Node", f"n{i}")
            new = apply_defaults(_node(i, rng))
            new["metadata"]["resourceVersion"] = cur["metadata"].get("resourceVersion")
            sim.store.update(new)
        elif r < 0.12 and pods:  # a pod goes away
            name = pods.pop(rng.randrange(len(pods)))
            if sim.store.peek("v1", "Pod", name, "default") is not None:
                sim.store.delete("v1", "Pod", name, "default")
        else:
            if rng.random() < 0.3:  # mostly runs of the same template, as ReplicaSets create
                kind = rng.randrange(10)
            name = f"p{step}"
            pods.append(name)
            sim.store.create(apply_defaults({"apiVersion": "v1", "kind": "Pod", **_pod(name, kind)}))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + 0.01)
    sched.run_until_idle()
    out = sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values())
    return out, calls


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_reuse_never_changes_a_decision(seed: int) -> None:
    with_reuse, calls_reuse = _drive(seed, True)
    without, calls_plain = _drive(seed, False, batch=False)  # the reference: node by node
    assert with_reuse == without
    batch_only, _ = _drive(seed, False)
    assert batch_only == without
    statuses = {r[2] for r in without}
    assert "Scheduled" in statuses and "Unschedulable" in statuses  # both paths exercised
    # and reuse did skip work (not all: unsigned pods, nominated pods and changed nodes run
    # the plugins)
    assert calls_reuse < calls_plain * 0.75, (calls_reuse, calls_plain)


@pytest.mark.parametrize(("seed", "n_nodes"), [(1, 24), (2, 24), (3, 24), (4, 130), (5, 130), (6, 260)])
def test_columns_never_change_a_decision(seed: int, n_nodes: int) -> None:
    """The column forms of the default plugins against the per-node forms (no reuse, no batch),
    with taints, node selectors and affinity, host ports, images, anti-affinity, node updates
    and additions, pod deletions; 130 and 260 nodes cut the search after 100 feasible nodes
    (percentageOfNodesToScore), so the rotating start and the cut are compared too."""
    steps = 260 if n_nodes < 100 else 160
    with_columns, calls = _drive(seed, False, steps=steps, columns=True, n_nodes=n_nodes)
    without, _ = _drive(seed, False, steps=steps, batch=False, n_nodes=n_nodes)
    assert with_columns == without
    statuses = {r[2] for r in without}
    assert "Scheduled" in statuses
    if n_nodes < 100:
        assert "Unschedulable" in statuses  # the rejections' messages are compared too


# what is signed, what is not -----------------------------------------------------------------
class CountingFilter:
    """Filter on a label; signs pods by their "want" label."""

    instances: list[CountingFilter] = []

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.calls = 0
        CountingFilter.instances.append(self)

    @hookimpl
    def sign_pod(self, pod: Any) -> Any:
        return pod.labels.get("want", "")

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        self.calls += 1
        if node_info.node.labels.get("kind") != pod.labels.get("want", ""):
            return Status(Code.UNSCHEDULABLE, "wrong kind")
        return None


class UnsignedFilter(CountingFilter):
    @hookimpl
    def sign_pod(self, pod: Any) -> Any:
        return None


def _counting_run(cls: type[CountingFilter], reuse: bool = True, nodes: Any = None, pods: Any = None) -> tuple[Any, CountingFilter]:
    CountingFilter.instances.clear()
    if nodes is None:
        nodes = [make_node().name(f"n{i}").capacity(cpu="4", memory="8Gi").label("kind", "a" if i % 2 else "b").obj() for i in range(10)]
    if pods is None:
        pods = [make_pod().name(f"p{i}").label("want", "a" if i < 5 else "b").obj() for i in range(10)]
    res = run_profile({cls.__name__: cls}, nodes=nodes, pods=pods, reuse_results=reuse)
    (plugin,) = CountingFilter.instances
    return res, plugin


def test_signed_plugin_is_called_again_only_for_changed_nodes() -> None:
    res, plugin = _counting_run(CountingFilter)
    for i in range(10):
        node = res.node(f"p{i}")
        assert node is not None and int(node[1:]) % 2 == (1 if i < 5 else 0)
    # first pod of each signature: 10 nodes; every later pod: only the node the pod before it
    # went to (its NodeInfo changed)
    assert plugin.calls == 10 + 4 + 10 + 4


def test_unsigned_plugin_is_called_for_every_node_of_every_pod() -> None:
    res, plugin = _counting_run(UnsignedFilter)
    assert all(res.node(f"p{i}") is not None for i in range(10))
    assert plugin.calls == 100
    _res, plugin2 = _counting_run(CountingFilter, reuse=False)
    assert plugin2.calls == 100


class BrokenSigner(CountingFilter):
    @hookimpl
    def sign_pod(self, pod: Any) -> Any:
        if pod.name == "bad":
            raise ValueError("boom")
        return ""


def test_sign_pod_exception_is_an_error_for_that_pod() -> None:
    nodes = [make_node().name("n1").capacity(cpu="4", memory="8Gi").label("kind", "").obj()]
    res, _plugin = _counting_run(BrokenSigner, nodes=nodes, pods=[make_pod().name("bad").obj(), make_pod().name("good").obj()])
    assert res.status("bad") == "Error"
    assert 'running SignPod plugin "BrokenSigner": ValueError: boom' in res.message("bad")
    assert res.node("good") == "n1"


class UnhashableSigner(CountingFilter):
    @hookimpl
    def sign_pod(self, pod: Any) -> Any:
        return [pod.labels.get("want", "")]


def test_unhashable_signature_is_a_clear_error() -> None:
    nodes = [make_node().name("n1").capacity(cpu="4", memory="8Gi").label("kind", "").obj()]
    res, _plugin = _counting_run(UnhashableSigner, nodes=nodes, pods=[make_pod().name("p").obj()])
    assert res.status("p") == "Error"
    assert 'running SignPod plugin "UnhashableSigner": sign_pod returned an unhashable list (see kubesched.sdk.freeze)' in res.message("p")


def test_tracing_turns_reuse_off() -> None:
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, source="<test>", installed_plugins=reg.names())

    class NullTracer:
        def wrap(self, profile: str, point: str, hook: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            return fn

    traced = Scheduler(cfg, reg, SimulatedCluster([]), simulated=True, tracer=NullTracer())
    plain = Scheduler(cfg, reg, SimulatedCluster([]), simulated=True)
    off = Scheduler(cfg, reg, SimulatedCluster([]), simulated=True, reuse_results=False)
    assert [fw.reuse_results for fw in traced.frameworks.values()] == [False]
    assert [fw.reuse_results for fw in plain.frameworks.values()] == [True]
    assert [fw.reuse_results for fw in off.frameworks.values()] == [False]


def test_default_plugins_that_read_only_the_pod_and_its_node_sign() -> None:
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, source="<test>", installed_plugins=reg.names())
    fw: Framework = next(iter(Scheduler(cfg, reg, SimulatedCluster([]), simulated=True).frameworks.values()))
    assert sorted(fw.signers) == sorted([
        "DynamicResources", "ImageLocality", "NodeAffinity", "NodeDeclaredFeatures", "NodeName",
        "NodePorts", "NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable",
        "TaintToleration",
    ])
    from kubesched.sdk import Pod

    a = Pod(make_pod().name("a").req(cpu="1").toleration("k", "v", "NoSchedule").obj())
    b = Pod(make_pod().name("b").req(cpu="1").toleration("k", "v", "NoSchedule").obj())
    c = Pod(make_pod().name("c").req(cpu="2").toleration("k", "v", "NoSchedule").obj())
    names = list(fw.signers)
    assert fw.sign(names, a) == fw.sign(names, b)
    assert fw.sign(names, a) != fw.sign(names, c)
    assert fw.sign(["NodeResourcesFit"], a) != fw.sign(["NodeResourcesFit"], c)
    assert fw.sign(["TaintToleration"], a) == fw.sign(["TaintToleration"], c)
    assert fw.sign(["InterPodAffinity"], a) is None  # depends on other pods: never signed
