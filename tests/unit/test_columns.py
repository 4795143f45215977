"""The columnar core: NodeColumns kept up to date by the cache, the framework's column path
(filter_columns / score_columns / normalize_score_columns) and the column forms of
NodeResourcesFit, its scoring strategies and NodeResourcesBalancedAllocation, each compared with
the per-node hooks (the reference) on random clusters."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.plugins.noderesources import BalancedAllocation, Fit, NodeResourcesFitArgs
from kubesched.runtime.plugins.noderesources.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.runtime.snapshot import Snapshot
from kubesched.sdk import (
    Code,
    CycleState,
    Node,
    NodeColumns,
    NodeScore,
    Pod,
    Status,
    default_normalize_columns,
    default_normalize_score,
    hookimpl,
)
from kubesched.testing import make_node, make_pod
from kubesched.testing.run import profile_config

GPU = "nvidia.com/gpu"
EXT = "example.com/foo"


def _rand_node(i: int, rng: random.Random) -> dict[str, Any]:
    cap: dict[str, str] = {"pods": rng.choice(["3", "6", "110"])}
    if rng.random() < 0.95:
        cap["cpu"] = rng.choice(["0", "500m", "2", "4", "32"])
    if rng.random() < 0.95:
        cap["memory"] = rng.choice(["0", "1Gi", "4Gi", "64Gi"])
    if rng.random() < 0.5:
        cap["ephemeral-storage"] = rng.choice(["1Gi", "20Gi"])
    if rng.random() < 0.4:
        cap[GPU] = str(rng.choice([0, 1, 2, 8]))
    if rng.random() < 0.2:
        cap[EXT] = str(rng.choice([1, 5]))
    return make_node().name(f"n{i}").capacity(cap).obj()


def _rand_pod(name: str, rng: random.Random, node: str | None = None) -> dict[str, Any]:
    b = make_pod().name(name)
    for _ in range(rng.choice([0, 1, 1, 2])):
        req: dict[str, str] = {}
        if rng.random() < 0.8:
            req["cpu"] = rng.choice(["100m", "250m", "1", "3", "40"])
        if rng.random() < 0.8:
            req["memory"] = rng.choice(["64Mi", "1Gi", "3Gi", "100Gi"])
        if rng.random() < 0.2:
            req["ephemeral-storage"] = rng.choice(["500Mi", "5Gi", "30Gi"])
        if rng.random() < 0.3:
            req[GPU] = str(rng.choice([1, 2, 4, 9]))
        if rng.random() < 0.1:
            req[EXT] = str(rng.choice([1, 3, 7]))
        b = b.req(**req) if req else b.container("c")
    obj = b.obj()
    if node is not None:
        obj["spec"]["nodeName"] = node
    return obj


def _cluster(rng: random.Random, n_nodes: int = 40, n_pods: int = 60) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [_rand_node(i, rng) for i in range(n_nodes)]
    pods = [_rand_pod(f"e{k}", rng, f"n{rng.randrange(n_nodes)}") for k in range(n_pods)]
    return nodes, pods


def _fresh_equal(cols: NodeColumns, infos: list[Any]) -> None:
    ref = NodeColumns(infos)
    for name in set(ref.resource_names()) | set(cols.resource_names()):
        assert cols.allocatable(name).tolist() == ref.allocatable(name).tolist(), name
        assert cols.requested(name).tolist() == ref.requested(name).tolist(), name
        assert cols.non_zero_requested(name).tolist() == ref.non_zero_requested(name).tolist(), name
    assert cols.pod_count.tolist() == ref.pod_count.tolist()


# NodeColumns ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cache_keeps_columns_equal_to_a_fresh_build(seed: int) -> None:
    rng = random.Random(seed)
    nodes, pods = _cluster(rng, 12, 0)
    cache = Cache()
    for n in nodes:
        cache.add_node(Node(n))
    snap = cache.update_snapshot()
    cols = snap.columns
    placed: list[Pod] = []
    for step in range(200):
        r = rng.random()
        if r < 0.5 or not placed:
            p = Pod(_rand_pod(f"p{step}", rng, f"n{rng.randrange(12)}"))
            (cache.assume_pod if rng.random() < 0.5 else cache.add_pod)(p)
            placed.append(p)
        elif r < 0.8:
            p = placed.pop(rng.randrange(len(placed)))
            if cache.is_assumed(p.uid):
                cache.forget_pod(p.uid)
            else:
                cache.remove_pod(p)
        else:  # a node update: other allocatable, maybe a new extended resource
            i = rng.randrange(12)
            cache.add_node(Node(_rand_node(i, rng)))
        snap = cache.update_snapshot()
        assert snap.columns is cols  # updated row by row, not rebuilt
        _fresh_equal(snap.columns, list(snap.list()))


def test_columns_are_read_only_to_plugins() -> None:
    snap = Snapshot.from_objects([make_node().name("a").capacity(cpu="1").obj()])
    with pytest.raises(ValueError, match="read-only"):
        snap.columns.allocatable("cpu")[0] = 5
    with pytest.raises(ValueError, match="read-only"):
        snap.columns.pod_count[0] = 5


def test_label_taint_and_image_columns() -> None:
    a = make_node().name("a").label("zone", "z1").taints([{"key": "k", "value": "v", "effect": "NoSchedule"}]).obj()
    a["status"]["images"] = [{"names": ["img:1"], "sizeBytes": 300}]
    b = make_node().name("b").label("zone", "z2").obj()
    c = make_node().name("c").label("zone", "z1").obj()
    c["spec"] = {"unschedulable": True}
    cols = Snapshot.from_objects([a, b, c]).columns
    codes, values = cols.label("zone")
    assert [values[x] for x in codes.tolist()] == ["z1", "z2", "z1"]
    codes, values = cols.label("missing")
    assert codes.tolist() == [-1, -1, -1] and values == []
    tcodes, sets = cols.taint_sets()
    assert tcodes.tolist() == [0, 1, 1] and [len(s) for s in sets] == [1, 0]
    assert cols.unschedulable.tolist() == [False, False, True]
    assert cols.image("img:1").tolist() == [300, -1, -1]
    assert cols.by_node("name-len", lambda n: len(n.name)).tolist() == [1, 1, 1]


def test_default_normalize_columns_equals_default_normalize_score() -> None:
    rng = random.Random(7)
    for _ in range(300):
        raw = [rng.choice([0, 0, 1, 3, 7, 40, 100, 12345]) for _ in range(rng.randrange(0, 9))]
        for reverse in (False, True):
            lst = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
            default_normalize_score(100, reverse, lst)
            got = default_normalize_columns(100, reverse, np.array(raw, np.int64))
            assert list(got) == [s.score for s in lst], (raw, reverse)


# NodeResourcesFit Filter -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_fit_filter_columns_equal_filter(seed: int) -> None:
    rng = random.Random(seed)
    nodes, pods = _cluster(rng)
    snap = Snapshot.from_objects(nodes, pods)
    cols = snap.columns
    args = NodeResourcesFitArgs()
    if seed % 2:
        args.ignored_resources = [EXT]
    fit = Fit(args)
    for k in range(40):
        pod = Pod(_rand_pod(f"p{k}", rng))
        state = CycleState()
        assert fit.pre_filter(state, pod) is None
        codes, table = fit.filter_columns(state, pod, cols)
        for i, ni in enumerate(snap.list()):
            want = fit.filter(state, pod, ni)
            c = int(codes[i])
            if want is None:
                assert c == 0, (ni.name, table[c])
            else:
                assert c != 0, (ni.name, want)
                got = table[c]
                assert (got.code, got.reasons) == (want.code, want.reasons)


# scoring strategies ------------------------------------------------------------------------------
def _strategy(kind: str, resources: list[ResourceSpec]) -> NodeResourcesFitArgs:
    args = NodeResourcesFitArgs()
    shape = None
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        shape = RequestedToCapacityRatioParam([UtilizationShapePoint(0, 10), UtilizationShapePoint(35, 3), UtilizationShapePoint(70, 0), UtilizationShapePoint(100, 9)])
    args.scoring_strategy = ScoringStrategy(type=kind, resources=resources, requested_to_capacity_ratio=shape)
    return args


RESOURCE_SETS = [
    [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)],
    [ResourceSpec("cpu", 3), ResourceSpec("memory", 1)],
    [ResourceSpec("cpu", 1), ResourceSpec("memory", 2), ResourceSpec(GPU, 5)],
    [ResourceSpec("memory", 1), ResourceSpec("ephemeral-storage", 2), ResourceSpec(EXT, 1)],
]


@pytest.mark.parametrize("kind", [LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO])
@pytest.mark.parametrize("rset", range(len(RESOURCE_SETS)))
def test_fit_score_columns_equal_score(kind: str, rset: int) -> None:
    rng = random.Random(rset * 10 + len(kind))
    nodes, pods = _cluster(rng)
    snap = Snapshot.from_objects(nodes, pods)
    cols = snap.columns
    fit = Fit(_strategy(kind, RESOURCE_SETS[rset]))
    infos = list(snap.list())
    for k in range(30):
        pod = Pod(_rand_pod(f"p{k}", rng))
        state = CycleState()
        assert fit.pre_score(state, pod) is None
        rows = np.array(sorted(rng.sample(range(len(infos)), rng.randrange(1, len(infos)))), np.intp)
        got = fit.score_columns(state, pod, cols, rows)
        want = [fit.score(state, pod, infos[r]) for r in rows.tolist()]
        assert got.dtype == np.int64
        assert got.tolist() == want


@pytest.mark.parametrize("resources", [
    [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)],
    [ResourceSpec("cpu", 1), ResourceSpec(GPU, 1)],
    [ResourceSpec("memory", 1), ResourceSpec("ephemeral-storage", 1)],
])
@pytest.mark.parametrize("seed", range(4))
def test_balanced_allocation_score_columns_equal_score(resources: list[ResourceSpec], seed: int) -> None:
    rng = random.Random(seed)
    nodes, pods = _cluster(rng)
    snap = Snapshot.from_objects(nodes, pods)
    cols = snap.columns
    ba = BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources=resources))
    infos = list(snap.list())
    rows = np.arange(len(infos), dtype=np.intp)
    for k in range(40):
        pod = Pod(_rand_pod(f"p{k}", rng))
        state = CycleState()
        ba.pre_score(state, pod)  # Skip for best-effort pods: score then reads no state
        got = ba.score_columns(state, pod, cols, rows)
        want = [ba.score(state, pod, ni) for ni in infos]
        assert got.tolist() == want


def test_balanced_allocation_has_no_column_form_beyond_two_resources() -> None:
    ba = BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources=[ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(GPU, 1)]))
    snap = Snapshot.from_objects([make_node().name("a").capacity(cpu="1", memory="1Gi").obj()])
    pod = Pod(make_pod().name("p").req(cpu="1").obj())
    state = CycleState()
    ba.pre_score(state, pod)
    assert ba.score_columns(state, pod, snap.columns, np.array([0])) is None  # per-node form runs


# the framework's column path ---------------------------------------------------------------------
class LabelColumns:
    """A third-party plugin with column forms: Filter on a "kind" label, Score by a "rank"
    label, normalized in reverse."""

    name = "LabelColumns"
    calls: dict[str, int] = {}

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        LabelColumns.calls = {"filter": 0, "filter_columns": 0, "score": 0, "score_columns": 0, "normalize_score_columns": 0}

    @hookimpl
    def filter(self, state: Any, pod: Pod, node_info: Any) -> Status | None:
        LabelColumns.calls["filter"] += 1
        if node_info.node.labels.get("kind") != pod.labels.get("want"):
            return Status(Code.UNSCHEDULABLE, "node(s) of another kind")
        return None

    @hookimpl
    def filter_columns(self, state: Any, pod: Pod, columns: NodeColumns) -> Any:
        LabelColumns.calls["filter_columns"] += 1
        codes, values = columns.label("kind")
        want = pod.labels.get("want")
        ok = codes == (values.index(want) if want in values else -2)
        return np.where(ok, 0, 1), [None, Status(Code.UNSCHEDULABLE, "node(s) of another kind")]

    @hookimpl
    def score(self, state: Any, pod: Pod, node_info: Any) -> int:
        LabelColumns.calls["score"] += 1
        return int(node_info.node.labels.get("rank", "0"))

    @hookimpl
    def score_columns(self, state: Any, pod: Pod, columns: NodeColumns, rows: Any) -> Any:
        LabelColumns.calls["score_columns"] += 1
        return columns.by_node("rank", lambda n: int(n.labels.get("rank", "0")))[rows]

    @hookimpl
    def normalize_score(self, state: Any, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(100, True, scores)

    @hookimpl
    def normalize_score_columns(self, state: Any, pod: Pod, scores: Any) -> Any:
        LabelColumns.calls["normalize_score_columns"] += 1
        return default_normalize_columns(100, True, scores)


def _label_cluster(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [make_node().name(f"n{i:03d}").capacity(cpu="4", memory="8Gi").label("kind", "ab"[i % 2]).label("rank", str(i % 7)).obj() for i in range(n)]
    pods = [make_pod().name(f"p{i}").label("want", "abc"[i % 3]).obj() for i in range(30)]
    return nodes, pods


def _run(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], columns: bool, plugin: type = LabelColumns, seed: int = 3) -> list[tuple[Any, ...]]:
    """Schedule ``pods`` with a profile of ``plugin`` as ``kubesched run`` does (no tracer, no
    diagnostics kept), with or without the column forms."""
    reg = Registry.discover()
    reg.register("LabelColumns", plugin)
    cfg = load_config_data(profile_config(["LabelColumns"]), source="<test>", installed_plugins=reg.names())
    manifests = [apply_defaults({"apiVersion": "v1", "kind": "Node", **n}) for n in nodes]
    for p in pods:
        p = dict(p)
        p["spec"] = {**p["spec"], "schedulerName": cfg.profiles[0].scheduler_name}
        manifests.append({"apiVersion": "v1", "kind": "Pod", **p})
    sim = SimulatedCluster(manifests, source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    for fw in sched.frameworks.values():
        fw.use_columns = columns
    sim.run(sched)
    return sorted((r.name, r.node, r.status, r.message) for r in sched.results.values())


@pytest.mark.parametrize("n", [10, 230])
def test_third_party_column_forms_decide_as_the_per_node_forms(n: int) -> None:
    nodes, pods = _label_cluster(n)
    on = _run(nodes, pods, True)
    assert LabelColumns.calls["filter_columns"] > 0 and LabelColumns.calls["filter"] == 0
    assert LabelColumns.calls["score_columns"] > 0 and LabelColumns.calls["normalize_score_columns"] > 0
    assert LabelColumns.calls["score"] == 0
    off = _run(nodes, pods, False)
    assert LabelColumns.calls["filter_columns"] == 0 and LabelColumns.calls["filter"] > 0
    assert on == off
    failed = [r for r in on if r[2] != "Scheduled"]
    assert failed and failed[0][3] == f"0/{n} nodes are available: {n} node(s) of another kind."
    # ties between equal totals are broken by the same draws
    assert len({r[1] for r in on if r[2] == "Scheduled"}) > 1


class BadColumns(LabelColumns):
    @hookimpl
    def filter_columns(self, state: Any, pod: Pod, columns: NodeColumns) -> Any:
        return np.zeros(columns.n + 1, np.int64), []


def test_wrong_shape_of_filter_columns_is_an_error() -> None:
    nodes, pods = _label_cluster(4)
    (r, *_) = _run(nodes, pods[:1], True, BadColumns)
    assert r[2] == "Error"
    assert 'plugin "LabelColumns" hook filter_columns returned' in r[3]
