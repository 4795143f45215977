"""InterPodAffinity: PreScore's topology scores through the pod index equal the scan's, and the
column forms of Score and NormalizeScore equal the per-node hooks (raw and normalized), on random
clusters with pods placed and removed: required and preferred (anti-)affinity of existing and
incoming pods, namespaces, namespaceSelector, matchLabelKeys/mismatchLabelKeys,
hardPodAffinityWeight and ignorePreferredTermsOfExistingPods."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.plugins.interpodaffinity import InterPodAffinity
from kubesched.runtime.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY
from kubesched.sdk import CycleState, Node, NodeScore, Pod, Status
from kubesched.sdk.columns import rows_of
from kubesched.testing import build_plugin, make_handle

from .test_interpodaffinity_columns import HOST, NAMESPACES, ZONE, st


def rand_node(rng: random.Random, i: int) -> dict[str, Any]:
    labels = {HOST: f"n{i}"} if rng.random() < 0.95 else {}
    if rng.random() < 0.8:
        labels[ZONE] = rng.choice(["z1", "z2", "z3", ""])
    if rng.random() < 0.3:
        labels["rack"] = rng.choice(["r1", "r2"])
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}}


def rand_term(rng: random.Random) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": rng.choice([ZONE, HOST, HOST, "rack"])}
    r = rng.random()
    if r < 0.6:
        t["labelSelector"] = {"matchLabels": {"app": rng.choice(["a", "b", "c"])}}
    elif r < 0.85:
        op = rng.choice(["In", "NotIn", "Exists"])
        t["labelSelector"] = {"matchExpressions": [{"key": "tier", "operator": op, **({} if op == "Exists" else {"values": ["x"]})}]}
    elif r < 0.95:
        t["labelSelector"] = {}
    r = rng.random()
    if r < 0.2:
        t["namespaces"] = [rng.choice(["default", "ns1", "ns2"])]
    elif r < 0.35:
        t["namespaceSelector"] = {"matchLabels": {"team": rng.choice(["a", "b"])}}
    elif r < 0.4:
        t["namespaceSelector"] = {}
    r = rng.random()
    if r < 0.12:
        t["matchLabelKeys"] = ["tier"]
    elif r < 0.2:
        t["mismatchLabelKeys"] = ["tier"]
    return t


def rand_weighted(rng: random.Random) -> dict[str, Any]:
    return {"weight": rng.choice([1, 1, 5, 50, 100]), "podAffinityTerm": rand_term(rng)}


def rand_pod(rng: random.Random, uid: str, node: str | None, p_affinity: float) -> dict[str, Any]:
    labels = {}
    if rng.random() < 0.8:
        labels["app"] = rng.choice(["a", "b", "c"])
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(["x", "y"])
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    aff: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        part: dict[str, Any] = {}
        if rng.random() < p_affinity:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = [rand_term(rng) for _ in range(rng.choice([1, 1, 2]))]
        if rng.random() < p_affinity:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = [rand_weighted(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
        if part:
            aff[kind] = part
    if aff:
        spec["affinity"] = aff
    md = {"name": uid, "uid": uid, "namespace": rng.choice(["default", "default", "ns1", "ns2"]), "labels": labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


ARGS = [None, {"hardPodAffinityWeight": 0}, {"hardPodAffinityWeight": 7}, {"ignorePreferredTermsOfExistingPods": True}]


@pytest.mark.parametrize("seed", range(16))
def test_interpodaffinity_score_columns_equal_per_node(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [rand_node(rng, i) for i in range(rng.randint(1, 30))]
    handle = make_handle(nodes, [], NAMESPACES)
    cache = Cache()
    for n in nodes:
        cache.add_node(Node(n))
    args = ARGS[seed % len(ARGS)]
    ref = build_plugin(InterPodAffinity, args, handle)
    ref.use_index = False
    col = build_plugin(InterPodAffinity, args, handle)
    placed: list[Pod] = []
    scored = skipped = 0
    for step in range(40):
        if placed and rng.random() < 0.3:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        else:
            for k in range(rng.randint(1, 4)):
                p = Pod(rand_pod(rng, f"e{step}-{k}", rng.choice(nodes)["metadata"]["name"], 0.3))
                cache.add_pod(p)
                placed.append(p)
        snap = handle._snapshot = cache.update_snapshot()
        cols = snap.columns
        for k in range(3):
            pod = Pod(rand_pod(rng, f"in{step}-{k}", None, 0.4))
            feasible = [ni for ni in snap.list() if rng.random() < 0.7] or list(snap.list())
            cs_ref, cs_col = CycleState(), CycleState()
            a = ref.pre_score(cs_ref, pod, feasible)
            b = col.pre_score(cs_col, pod, feasible)
            assert st(a) == st(b)
            if a is not None:
                skipped += 1
                continue
            sr, sc = cs_ref.read(PRE_SCORE_STATE_KEY), cs_col.read(PRE_SCORE_STATE_KEY)
            assert sr.topology_score == sc.topology_score
            rows = rows_of(cols, feasible)
            want = [ref.score(cs_ref, pod, ni) for ni in feasible]
            for s in (cs_col, cs_ref):  # the index's state, and the scan's (no tables)
                got = col.score_columns(s, pod, cols, rows)
                assert got.dtype == np.int64
                assert got.tolist() == want
                lst = [NodeScore(ni.name, v) for ni, v in zip(feasible, want)]
                assert ref.normalize_score(cs_ref, pod, lst) is None
                norm = col.normalize_score_columns(s, pod, got)
                assert norm.tolist() == [x.score for x in lst]
            scored += 1
    assert scored > 15 and scored + skipped == 120


def test_normalize_score_columns_go_arithmetic() -> None:
    handle = make_handle([{"metadata": {"name": "n0", "labels": {HOST: "n0"}}}], [{"metadata": {"name": "e", "uid": "e", "labels": {"app": "a"}}, "spec": {"nodeName": "n0"}}])
    pl = build_plugin(InterPodAffinity, None, handle)
    pod = Pod({"metadata": {"name": "p", "uid": "p"}, "spec": {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 3, "podAffinityTerm": {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "a"}}}}]}}}})
    cs = CycleState()
    assert pl.pre_score(cs, pod, handle.snapshot().list()) is None
    assert cs.read(PRE_SCORE_STATE_KEY).topology_score == {HOST: {"n0": 3}}
    scores = np.array([-7, 0, 3, 1, -7, 2**40, 2**40 - 1], np.int64)
    lst = [NodeScore(f"n{i}", v) for i, v in enumerate(scores.tolist())]
    assert pl.normalize_score(cs, pod, lst) is None
    got = pl.normalize_score_columns(cs, pod, scores)
    assert got.tolist() == [x.score for x in lst] == [0, 0, 0, 0, 0, 100, 99]
    assert pl.normalize_score_columns(cs, pod, np.array([4, 4], np.int64)).tolist() == [0, 0]
    missing = pl.normalize_score_columns(CycleState(), pod, scores)
    assert isinstance(missing, Status)
    assert missing.message == 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'
    assert pl.score_columns(CycleState(), pod, handle.snapshot().columns, np.array([0])) is None


def test_pairs_that_sum_to_zero_stay_in_the_map() -> None:
    nodes = [{"metadata": {"name": f"n{i}", "labels": {HOST: f"n{i}", ZONE: "z1"}}} for i in range(3)]
    handle = make_handle(nodes, [{"metadata": {"name": "e", "uid": "e", "labels": {"app": "a"}}, "spec": {"nodeName": "n1"}}])
    term = {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "a"}}}
    pod = Pod({"metadata": {"name": "p", "uid": "p"}, "spec": {"affinity": {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": term}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": term}]}}}})
    ref = build_plugin(InterPodAffinity, None, handle)
    ref.use_index = False
    col = build_plugin(InterPodAffinity, None, handle)
    for pl in (ref, col):
        cs = CycleState()
        assert pl.pre_score(cs, pod, handle.snapshot().list()) is None
        assert cs.read(PRE_SCORE_STATE_KEY).topology_score == {ZONE: {"z1": 0}}
        raw = col.score_columns(cs, pod, handle.snapshot().columns, np.arange(3))
        assert raw.tolist() == [0, 0, 0]
        assert col.normalize_score_columns(cs, pod, raw).tolist() == [0, 0, 0]
