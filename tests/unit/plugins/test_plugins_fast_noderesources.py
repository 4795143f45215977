"""The fast column forms of NodeResourcesFit and NodeResourcesBalancedAllocation (issue 14, zone
C): Fit's Filter over the resource matrix (one comparison for every resource, the codes packed
from bits), the (cpu, memory) scorers over columns gathered once per cycle, and the matrix cache
kept per version of the snapshot's columns. Each is compared with the per-node hooks (the
reference)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.plugins.noderesources import BalancedAllocation, Fit, NodeResourcesFitArgs
from kubesched.runtime.plugins.noderesources.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.runtime.plugins.noderesources.column_cache import ResourceMatrix, matrix
from kubesched.runtime.snapshot import Snapshot
from kubesched.sdk import Code, CycleState, Node, Pod
from kubesched.testing import make_node, make_pod

#: more extended resources than fit one byte of codes (with the fixed four and "unresolvable")
EXTENDED = [f"example.com/r{i}" for i in range(7)]


def _node(i: int, rng: random.Random, *, scalars: bool) -> dict[str, Any]:
    cap: dict[str, str] = {
        "pods": rng.choice(["2", "4", "110"]),
        "cpu": rng.choice(["500m", "2", "4", "32"]),
        "memory": rng.choice(["1Gi", "4Gi", "64Gi"]),
    }
    if rng.random() < 0.5:
        cap["ephemeral-storage"] = rng.choice(["1Gi", "20Gi"])
    if scalars:
        for name in EXTENDED:
            if rng.random() < 0.4:
                cap[name] = str(rng.choice([0, 1, 3]))
    return make_node().name(f"n{i}").capacity(cap).obj()


def _pod(name: str, rng: random.Random, node: str | None = None, *, scalars: bool) -> dict[str, Any]:
    b = make_pod().name(name)
    for _ in range(rng.choice([0, 1, 2])):
        req: dict[str, str] = {}
        if rng.random() < 0.8:
            req["cpu"] = rng.choice(["100m", "1", "3", "40"])
        if rng.random() < 0.8:
            req["memory"] = rng.choice(["64Mi", "1Gi", "3Gi", "100Gi"])
        if rng.random() < 0.2:
            req["ephemeral-storage"] = rng.choice(["500Mi", "30Gi"])
        if scalars:
            for r in EXTENDED:
                if rng.random() < 0.15:
                    req[r] = str(rng.choice([1, 2, 4]))
        b = b.req(**req) if req else b.container("c")
    obj = b.obj()
    if node is not None:
        obj["spec"]["nodeName"] = node
    return obj


def _cluster(rng: random.Random, *, scalars: bool, n_nodes: int = 30, n_pods: int = 70) -> Snapshot:
    # more pods than some nodes hold: nodes over their pod count and their allocatable amounts
    nodes = [_node(i, rng, scalars=scalars) for i in range(n_nodes)]
    pods = [_pod(f"e{k}", rng, f"n{rng.randrange(n_nodes)}", scalars=scalars) for k in range(n_pods)]
    return Snapshot.from_objects(nodes, pods)


def _assert_filter_equal(fit: Fit, state: CycleState, pod: Pod, snap: Snapshot) -> None:
    codes, table = fit.filter_columns(state, pod, snap.columns)
    assert codes.dtype.kind in "iu"
    for i, ni in enumerate(snap.list()):
        want = fit.filter(state, pod, ni)
        c = int(codes[i])
        if want is None:
            assert c == 0, (ni.name, table[c])
        else:
            got = table[c]
            assert (got.code, got.reasons) == (want.code, want.reasons), ni.name


@pytest.mark.parametrize("seed", range(6))
def test_fit_filter_columns_with_codes_wider_than_a_byte(seed: int) -> None:
    rng = random.Random(seed)
    snap = _cluster(rng, scalars=True)
    assert len(matrix(snap.columns).names) == 4 + len(EXTENDED)  # 12 bits: codes over 2 bytes
    args = NodeResourcesFitArgs()
    if seed % 2:
        args.ignored_resources = [EXTENDED[0]]
    fit = Fit(args)
    for k in range(40):
        pod = Pod(_pod(f"p{k}", rng, scalars=True))
        state = CycleState()
        assert fit.pre_filter(state, pod) is None
        _assert_filter_equal(fit, state, pod, snap)


def test_fit_filter_columns_of_a_resource_no_node_has() -> None:
    snap = Snapshot.from_objects([make_node().name("a").capacity(cpu="2", memory="1Gi", pods="1").obj()])
    fit = Fit()
    pod = Pod(make_pod().name("p").req(cpu="1", **{"example.com/none": "1"}).obj())
    state = CycleState()
    fit.pre_filter(state, pod)
    codes, table = fit.filter_columns(state, pod, snap.columns)
    st = table[int(codes[0])]
    assert st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ["Insufficient example.com/none"]


def _strategy(kind: str, weights: tuple[int, int]) -> NodeResourcesFitArgs:
    args = NodeResourcesFitArgs()
    shape = None
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        shape = RequestedToCapacityRatioParam([UtilizationShapePoint(0, 10), UtilizationShapePoint(50, 3), UtilizationShapePoint(100, 8)])
    args.scoring_strategy = ScoringStrategy(
        type=kind,
        resources=[ResourceSpec("cpu", weights[0]), ResourceSpec("memory", weights[1])],
        requested_to_capacity_ratio=shape,
    )
    return args


@pytest.mark.parametrize("kind", [LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO])
@pytest.mark.parametrize("weights", [(1, 1), (3, 1)])
def test_cpu_memory_score_columns_equal_score(kind: str, weights: tuple[int, int]) -> None:
    # every node has cpu and memory: the scorers read the gathered (cpu, memory) columns, Fit's
    # and BalancedAllocation's on the same rows object
    rng = random.Random(weights[0] * 7 + len(kind))
    snap = _cluster(rng, scalars=False)
    cols = snap.columns
    assert matrix(cols).cpu_mem() is not None
    fit = Fit(_strategy(kind, weights))
    ba = BalancedAllocation()
    infos = list(snap.list())
    for k in range(40):
        pod = Pod(_pod(f"p{k}", rng, scalars=False))
        state = CycleState()
        assert fit.pre_score(state, pod) is None
        ba.pre_score(state, pod)
        rows = np.array(sorted(rng.sample(range(len(infos)), rng.randrange(1, len(infos)))), np.intp)
        for plugin in (fit, ba):
            got = plugin.score_columns(state, pod, cols, rows)
            assert got.dtype == np.int64
            assert got.tolist() == [plugin.score(state, pod, infos[r]) for r in rows.tolist()], plugin.name


def test_score_columns_where_a_node_lacks_memory_take_the_general_form() -> None:
    a = make_node().name("a").capacity(cpu="4", memory="8Gi", pods="10").obj()
    b = make_node().name("b").capacity(cpu="4", pods="10").obj()
    snap = Snapshot.from_objects([a, b])
    assert matrix(snap.columns).cpu_mem() is None
    pod = Pod(make_pod().name("p").req(cpu="1", memory="1Gi").obj())
    rows = np.array([0, 1], np.intp)
    for plugin in (Fit(), BalancedAllocation()):
        state = CycleState()
        plugin.pre_score(state, pod)
        got = plugin.score_columns(state, pod, snap.columns, rows)
        assert got.tolist() == [plugin.score(state, pod, ni) for ni in snap.list()]


def test_columns_shared_by_the_plugins_follow_a_pod_landing_on_a_node() -> None:
    # the matrix and the gathered columns are kept per version of the columns: a pod assumed on
    # a node between two cycles must show in the next cycle's Filter and Scores, even when the
    # framework hands the same rows object again
    cache = Cache()
    for name in ("a", "b"):
        cache.add_node(Node(make_node().name(name).capacity(cpu="4", memory="8Gi", pods="2").obj()))
    snap = cache.update_snapshot()
    cols = snap.columns
    fit, ba = Fit(), BalancedAllocation()
    rows = np.array([0, 1], np.intp)

    def cycle(pod: Pod) -> tuple[list[int], list[int], list[int]]:
        # a cycle reads snapshot.columns: the rows the cache marked dirty are refreshed then
        assert snap.columns is cols
        state = CycleState()
        fit.pre_filter(state, pod)
        fit.pre_score(state, pod)
        ba.pre_score(state, pod)
        codes, _table = fit.filter_columns(state, pod, cols)
        return codes.tolist(), fit.score_columns(state, pod, cols, rows).tolist(), ba.score_columns(state, pod, cols, rows).tolist()

    pod = Pod(make_pod().name("p").req(cpu="3", memory="1Gi").obj())
    assert cycle(pod) == ([0, 0], [56, 56], [59, 59])
    placed = make_pod().name("q").req(cpu="3", memory="6Gi").obj()
    placed["spec"]["nodeName"] = "a"
    cache.assume_pod(Pod(placed))
    assert cache.update_snapshot() is snap
    codes, fit_scores, ba_scores = cycle(pod)
    state = CycleState()
    fit.pre_filter(state, pod)
    got = fit.filter_columns(state, pod, cols)[1][codes[0]]
    assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, ["Insufficient cpu"])
    assert codes[1] == 0
    infos = list(snap.list())
    state = CycleState()
    fit.pre_score(state, pod)
    ba.pre_score(state, pod)
    assert fit_scores == [fit.score(state, pod, ni) for ni in infos] == [6, 56]
    assert ba_scores == [ba.score(state, pod, ni) for ni in infos] == [71, 59]
    # a second pod fills node a's pod slots
    second = make_pod().name("r").req(cpu="100m").obj()
    second["spec"]["nodeName"] = "a"
    cache.assume_pod(Pod(second))
    assert cache.update_snapshot() is snap
    codes, _f, _b = cycle(pod)
    state = CycleState()
    fit.pre_filter(state, pod)
    got = fit.filter_columns(state, pod, cols)[1][codes[0]]
    assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, ["Too many pods", "Insufficient cpu"])


@pytest.mark.parametrize("seed", range(3))
def test_matrix_updated_by_row_equals_a_fresh_one(seed: int) -> None:
    # pods assumed, forgotten and removed, nodes updated (a new extended resource, cpu 0): the
    # matrix kept across versions (updated on the rows whose generation changed) equals one
    # built from the columns as they are
    rng = random.Random(seed)
    cache = Cache()

    def node(i: int) -> Node:
        cap = {"pods": "5", "cpu": rng.choice(["0", "2", "8"]) if rng.random() < 0.2 else "8", "memory": "16Gi"}
        if rng.random() < 0.3:
            cap[rng.choice(EXTENDED[:3])] = "2"
        return Node(make_node().name(f"n{i}").capacity(cap).obj())

    for i in range(10):
        cache.add_node(node(i))
    snap = cache.update_snapshot()
    placed: list[Pod] = []
    for step in range(150):
        r = rng.random()
        if r < 0.5 or not placed:
            p = Pod(_pod(f"p{step}", rng, f"n{rng.randrange(10)}", scalars=True))
            (cache.assume_pod if rng.random() < 0.5 else cache.add_pod)(p)
            placed.append(p)
        elif r < 0.85:
            p = placed.pop(rng.randrange(len(placed)))
            if cache.is_assumed(p.uid):
                cache.forget_pod(p.uid)
            else:
                cache.remove_pod(p)
        else:
            cache.add_node(node(rng.randrange(10)))
        assert cache.update_snapshot() is snap
        cols = snap.columns
        got, fresh = matrix(cols), ResourceMatrix(cols)
        assert got.names == fresh.names
        assert got.alloc.tolist() == fresh.alloc.tolist()
        assert got.free.tolist() == fresh.free.tolist()
        want = fresh.cpu_mem()
        assert (got.cpu_mem() is None) == (want is None)
        if want is not None:
            assert got.cpu_mem().tolist() == want.tolist()
