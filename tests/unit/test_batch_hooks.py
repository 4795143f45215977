"""filter_batch / score_batch: the default plugins' batch forms equal their per-node forms, and
the framework runs batch forms with kube-scheduler's Filter semantics (order, first rejection,
stop once enough feasible nodes are found)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.runtime.plugins.imagelocality import ImageLocality
from kubesched.runtime.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.runtime.plugins.noderesources.fit import Fit
from kubesched.runtime.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.runtime.plugins.tainttoleration import TaintToleration
from kubesched.sdk import Code, CycleState, Status, hookimpl
from kubesched.testing import build_plugin, make_handle, make_node, make_pod

MB = 1024 * 1024


def _random_cluster(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    nodes = []
    for i in range(40):
        b = make_node().name(f"n{i}").capacity(cpu=rng.choice(["1", "2", "4"]), memory=rng.choice(["1Gi", "4Gi"]), pods=rng.choice(["2", "110"]))
        taints = []
        if rng.random() < 0.3:
            taints.append({"key": "k", "value": "v", "effect": rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])})
        if rng.random() < 0.2:
            taints.append({"key": "soft", "value": "", "effect": "PreferNoSchedule"})
        if taints:
            b = b.taints(taints)
        obj = b.obj()
        if rng.random() < 0.15:
            obj["spec"] = {**obj.get("spec", {}), "unschedulable": True}
        if rng.random() < 0.5:
            obj["status"]["images"] = [{"names": ["img:1"], "sizeBytes": rng.choice([100, 300, 900]) * MB}]
        nodes.append(obj)
    assigned = []
    for j in range(60):
        n = rng.randrange(40)
        assigned.append(make_pod().name(f"a{j}").node(f"n{n}").req(cpu=rng.choice(["100m", "500m"]), memory=rng.choice(["64Mi", "512Mi"])).obj())
    return nodes, assigned


POD_KINDS = [
    make_pod().name("plain").req(cpu="200m", memory="256Mi").obj(),
    make_pod().name("big").req(cpu="3", memory="3Gi").obj(),
    make_pod().name("besteffort").obj(),
    make_pod().name("tolerant").req(cpu="100m").toleration("k", "v", "NoSchedule").toleration("soft", "", "PreferNoSchedule").obj(),
    make_pod().name("unsched").req(cpu="100m").toleration("node.kubernetes.io/unschedulable", "", "NoSchedule").obj(),
    make_pod().name("image").req(cpu="100m").image("img:1").obj(),
]


def _status_key(st: Status | None) -> Any:
    return None if st is None or st.is_success() else (st.code, tuple(st.reasons))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("cls", [Fit, TaintToleration, NodeUnschedulable])
def test_filter_batch_equals_filter(cls: Any, seed: int) -> None:
    nodes, assigned = _random_cluster(seed)
    handle = make_handle(nodes, assigned)
    plugin = build_plugin(cls, None, handle)
    infos = list(handle.snapshot().list())
    for raw in POD_KINDS:
        from kubesched.sdk import Pod

        pod = Pod(raw)
        state = CycleState()
        if hasattr(plugin, "pre_filter"):
            plugin.pre_filter(state, pod) if cls is Fit else plugin.pre_filter(state, pod, infos)
        one = [_status_key(plugin.filter(state, pod, ni)) for ni in infos]
        many = [_status_key(st) for st in plugin.filter_batch(state, pod, infos)]
        assert many == one, raw["metadata"]["name"]
    # every kind of result appears somewhere, so the comparison means something
    assert any(k is not None for k in one) or cls is not Fit


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("cls", [Fit, BalancedAllocation, TaintToleration, ImageLocality])
def test_score_batch_equals_score(cls: Any, seed: int) -> None:
    nodes, assigned = _random_cluster(seed)
    handle = make_handle(nodes, assigned)
    plugin = build_plugin(cls, None, handle)
    infos = list(handle.snapshot().list())
    seen = set()
    for raw in POD_KINDS:
        from kubesched.sdk import Pod

        pod = Pod(raw)
        state = CycleState()
        if hasattr(plugin, "pre_score"):
            st = plugin.pre_score(state, pod) if cls in (Fit, BalancedAllocation) else plugin.pre_score(state, pod, infos)
            if st is not None and st.code is Code.SKIP:
                continue
        one = [plugin.score(state, pod, ni) for ni in infos]
        many = list(plugin.score_batch(state, pod, infos))
        assert many == one, raw["metadata"]["name"]
        seen.update(one)
    assert len(seen) > 1  # the scores differ across nodes and pods


# the framework ------------------------------------------------------------------------------------
class Batched:
    """Filter on a node label (wanted by the pod's label), scored by a number in another label;
    both in per-node and batch form, counting calls."""

    log: list[tuple[str, int]] = []

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @staticmethod
    def _one(pod: Any, node_info: Any) -> Status | None:
        if node_info.node.labels.get("kind") != pod.labels.get("want"):
            return Status(Code.UNSCHEDULABLE, f"kind is not {pod.labels.get('want')}")
        return None

    @hookimpl
    def filter(self, pod: Any, node_info: Any) -> Status | None:
        Batched.log.append(("filter", 1))
        return self._one(pod, node_info)

    @hookimpl
    def filter_batch(self, pod: Any, nodes: Any) -> list[Status | None]:
        Batched.log.append(("filter_batch", len(nodes)))
        return [self._one(pod, ni) for ni in nodes]

    @hookimpl
    def score(self, node_info: Any) -> int:
        Batched.log.append(("score", 1))
        return int(node_info.node.labels.get("rank", "0"))

    @hookimpl
    def score_batch(self, nodes: Any) -> list[int]:
        Batched.log.append(("score_batch", len(nodes)))
        return [int(ni.node.labels.get("rank", "0")) for ni in nodes]


def _nodes(n: int) -> list[dict[str, Any]]:
    return [make_node().name(f"n{i:03}").capacity(cpu="4", memory="8Gi").label("kind", "a" if i % 3 else "b").label("rank", str(i % 7 * 10)).obj() for i in range(n)]


def test_framework_uses_the_batch_forms_with_the_same_results() -> None:
    pods = [make_pod().name(f"p{i}").label("want", "a" if i % 2 else "b").obj() for i in range(8)]
    Batched.log.clear()
    batched = _run(Batched, _nodes(30), pods, batch=True)
    assert {k for k, _ in Batched.log} == {"filter_batch", "score_batch"}
    Batched.log.clear()
    one_by_one = _run(Batched, _nodes(30), pods, batch=False)
    assert {k for k, _ in Batched.log} == {"filter", "score"}
    assert batched == one_by_one
    assert all(node is not None for node in batched.values())


def test_batch_filter_drops_nodes_past_the_feasible_count() -> None:
    # 300 nodes: numFeasibleNodesToFind is 150 (50% - 300/125% of 300, at least 100); the batch
    # form sees chunks past that point, whose results must not reach the diagnosis
    pods = [make_pod().name(f"p{i}").label("want", "a").obj() for i in range(5)]
    results = []
    for batch in (True, False):
        Batched.log.clear()
        sched = _sched(Batched, _nodes(300), pods, batch=batch, diagnostics=True)
        results.append(({r.name: r.node for r in sched.results.values()}, sched.algo.next_start_node_index, {u: sorted(d["filter"]) for u, d in sched.diagnostics.items()}))
        assert any(k == ("filter_batch" if batch else "filter") for k, _ in Batched.log)
    assert results[0] == results[1]


class WrongLength(Batched):
    @hookimpl
    def filter_batch(self, pod: Any, nodes: Any) -> list[Status | None]:
        return [None]


class RaisingScore(Batched):
    @hookimpl
    def score_batch(self, nodes: Any) -> list[int]:
        raise RuntimeError("boom")


def _sched(cls: Any, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], *, batch: bool = True, diagnostics: bool = False) -> Any:
    """A profile of only ``cls`` (as "B"), untraced (run_profile traces, which turns batch
    forms off), run on the simulated cluster."""
    from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
    from kubesched.runtime.config import load_config_data
    from kubesched.runtime.registry import Registry
    from kubesched.runtime.scheduler import Scheduler

    reg = Registry.discover()
    reg.register("B", cls)
    cfg = load_config_data(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "B"}]}}}],
        },
        source="<test>",
        installed_plugins=reg.names(),
    )
    sim = SimulatedCluster([apply_defaults({"apiVersion": "v1", "kind": "Node", **n}) for n in nodes] + [{"apiVersion": "v1", "kind": "Pod", **p} for p in pods])
    sched = Scheduler(cfg, reg, sim, seed=7, simulated=True, reuse_results=False, record_diagnostics=diagnostics)
    for fw in sched.frameworks.values():
        fw.use_batch = batch
    sim.run(sched)
    return sched


def _run(cls: Any, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], batch: bool) -> dict[str, Any]:
    return {r.name: (r.node, r.status, r.message) for r in _sched(cls, nodes, pods, batch=batch).results.values()}


def _run_untraced(cls: Any) -> Any:
    return next(iter(_sched(cls, _nodes(6), [make_pod().name("p").label("want", "a").obj()], batch=True).results.values()))


def test_failing_filter_batch_falls_back_to_the_per_node_form(caplog: pytest.LogCaptureFixture) -> None:
    # the chunk may reach past the nodes kube-scheduler would evaluate: the per-node form decides
    r = _run_untraced(WrongLength)
    assert r.status == "Scheduled"
    assert r.node in {f"n{i:03}" for i in range(6) if i % 3}
    assert 'filter_batch of plugin "B" failed (ValueError: 1 results for 6 nodes); using its filter for these nodes' in caplog.text


def test_score_batch_errors_match_the_per_node_form() -> None:
    from kubesched.runtime.plugins.tainttoleration import TaintToleration

    plugin = build_plugin(TaintToleration, None, make_handle(_nodes(2)))
    from kubesched.sdk import Pod

    state, pod = CycleState(), Pod(make_pod().name("p").obj())
    infos = list(make_handle(_nodes(2)).snapshot().list())
    batch = plugin.score_batch(state, pod, infos)  # no PreScore state
    one = plugin.score(state, pod, infos[0])
    assert isinstance(batch, Status) and batch.code is Code.ERROR
    assert batch.message == one[1].message


class ReturnsNone(Batched):
    @hookimpl
    def score_batch(self, nodes: Any) -> Any:
        return None


def test_score_batch_returning_nothing_is_an_error_for_the_cycle() -> None:
    r = _run_untraced(ReturnsNone)
    assert r.status == "Error"
    assert 'running Score plugins: plugin "B" failed with: TypeError' in r.message


def test_batch_score_exception_is_an_error_for_the_cycle() -> None:
    r = _run_untraced(RaisingScore)
    assert r.status == "Error"
    assert 'running Score plugins: plugin "B" failed with: RuntimeError: boom' in r.message
