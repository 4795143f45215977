"""PodTopologySpread: the states built through the pod index and the column forms of Filter and
Score equal the scans and the per-node hooks, on random clusters with pods placed and removed."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.plugins.podtopologyspread import PodTopologySpread
from kubesched.runtime.plugins.podtopologyspread.plugin import (
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
)
from kubesched.sdk import CycleState, Node, NodeScore, Pod
from kubesched.sdk.columns import rows_of
from kubesched.testing import build_plugin, make_handle

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"


def rand_node(rng: random.Random, i: int) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": f"n{i}"} if rng.random() < 0.95 else {}
    if rng.random() < 0.8:
        labels[ZONE] = rng.choice(["z1", "z2", "z3", ""])
    if rng.random() < 0.5:
        labels[RACK] = rng.choice(["r1", "r2"])
    if rng.random() < 0.5:
        labels["disk"] = "ssd"
    spec: dict[str, Any] = {}
    if rng.random() < 0.2:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": rng.choice(["NoSchedule", "PreferNoSchedule"])}]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}, "spec": spec}


def rand_labels(rng: random.Random) -> dict[str, str]:
    labels = {}
    if rng.random() < 0.8:
        labels["app"] = rng.choice(["a", "b", "c"])
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(["x", "y"])
    return labels


def rand_pod(rng: random.Random, i: int, node: str | None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": f"p{i}", "uid": f"u{i}", "namespace": rng.choice(["default", "default", "ns1"]), "labels": rand_labels(rng)}
    if rng.random() < 0.05:
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def rand_selector(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.1:
        return {}
    if r < 0.15:
        return None
    if r < 0.6:
        return {"matchLabels": {"app": rng.choice(["a", "b", "c"])}}
    return {"matchExpressions": [{"key": "tier", "operator": rng.choice(["In", "NotIn", "Exists"]), **({"values": ["x"]} if rng.random() < 0.99 else {})}]}


def rand_incoming(rng: random.Random, i: int) -> Pod:
    raw = rand_pod(rng, 10_000 + i, None)
    raw["metadata"]["namespace"] = rng.choice(["default", "ns1"])
    spec = raw["spec"]
    cs = []
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        sel = rand_selector(rng)
        if sel is None:
            sel = {"matchLabels": {"app": "a"}}
        c: dict[str, Any] = {
            "maxSkew": rng.choice([1, 1, 2, 3]),
            "topologyKey": rng.choice([ZONE, HOST, RACK]),
            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
            "labelSelector": sel,
        }
        if rng.random() < 0.3:
            c["minDomains"] = rng.choice([1, 2, 4, 10])
        if rng.random() < 0.3:
            c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.3:
            c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.2:
            c["matchLabelKeys"] = ["tier"]
        cs.append(c)
    if cs:
        spec["topologySpreadConstraints"] = cs
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disk": "ssd"}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if not cs and rng.random() < 0.5:
        raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}]
    return Pod(raw)


def st(s: Any) -> Any:
    return None if s is None else (s.code, s.message)


def compare(ref: PodTopologySpread, col: PodTopologySpread, pod: Pod, rng: random.Random) -> None:
    snap = ref._handle.snapshot()
    nodes = snap.list()
    cs_ref, cs_col = CycleState(), CycleState()
    a = ref.pre_filter(cs_ref, pod, nodes)
    b = col.pre_filter(cs_col, pod, nodes)
    assert st(a) == st(b)
    if a is None:
        sr, sc = cs_ref.read(PRE_FILTER_STATE_KEY), cs_col.read(PRE_FILTER_STATE_KEY)
        assert [list(d.items()) for d in sr.tp_value_to_match_num] == [list(d.items()) for d in sc.tp_value_to_match_num]
        assert [p.as_tuples() for p in sr.critical_paths] == [p.as_tuples() for p in sc.critical_paths]
        assert sr.self_match == sc.self_match
        cols = snap.columns
        codes, statuses = col.filter_columns(cs_col, pod, cols)
        for i, ni in enumerate(cols.infos):
            want = ref.filter(cs_ref, pod, ni)
            got = None if codes[i] == 0 else statuses[codes[i]]
            assert st(want) == st(got), ni.name
    # PreScore over a random subset of nodes, in order
    sub = [ni for ni in nodes if rng.random() < 0.7]
    if not sub:
        return
    a = ref.pre_score(cs_ref, pod, sub)
    b = col.pre_score(cs_col, pod, sub)
    assert st(a) == st(b)
    if a is not None:
        return
    sr, sc = cs_ref.read(PRE_SCORE_STATE_KEY), cs_col.read(PRE_SCORE_STATE_KEY)
    assert sr.ignored_nodes == sc.ignored_nodes
    assert sr.topology_value_to_pod_counts == sc.topology_value_to_pod_counts
    assert sr.topology_normalizing_weight == sc.topology_normalizing_weight
    scores = [NodeScore(ni.name, ref.score(cs_ref, pod, ni)) for ni in sub]
    raw = [s.score for s in scores]
    cols = snap.columns
    got = col.score_columns(cs_col, pod, cols, rows_of(cols, sub))
    assert got.tolist() == raw
    assert ref.normalize_score(cs_ref, pod, scores) is None
    norm = col.normalize_score_columns(cs_col, pod, got)
    assert norm.tolist() == [s.score for s in scores]


@pytest.mark.parametrize("seed", range(12))
def test_spread_columns_equal_per_node(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [rand_node(rng, i) for i in range(rng.randint(1, 25))]
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"}, "spec": {"selector": {"matchLabels": {"app": "a"}}}}
    rs1 = {**rs, "metadata": {"name": "rs", "namespace": "ns1"}}
    handle = make_handle(nodes, [], [rs, rs1])
    cache = Cache()
    for n in nodes:
        cache.add_node(Node(n))
    args = {"defaultingType": rng.choice(["System", "List"])}
    if args["defaultingType"] == "List":
        args["defaultConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]
    ref = build_plugin(PodTopologySpread, args, handle)
    ref.use_index = False
    col = build_plugin(PodTopologySpread, args, handle)
    placed: list[Pod] = []
    for step in range(60):
        if placed and rng.random() < 0.3:
            p = placed.pop(rng.randrange(len(placed)))
            cache.remove_pod(p)
        else:
            for _ in range(rng.randint(1, 4)):
                p = Pod(rand_pod(rng, len(placed) + 1000 * step, rng.choice(nodes)["metadata"]["name"]))
                cache.add_pod(p)
                placed.append(p)
        handle._snapshot = cache.update_snapshot()
        handle._snapshot.columns  # noqa: B018 (the scheduler reads them each cycle)
        for k in range(3):
            compare(ref, col, rand_incoming(rng, step * 10 + k), rng)


def test_spread_column_form_declines_after_add_pod() -> None:
    """pre_filter_add_pod changes the counts: the Filter column form then leaves the nodes to
    the per-node Filter."""
    nodes = [{"metadata": {"name": f"n{i}", "labels": {ZONE: f"z{i}", HOST: f"n{i}"}}} for i in range(2)]
    handle = make_handle(nodes, [])
    pl = build_plugin(PodTopologySpread, {"defaultingType": "List"}, handle)
    pod = Pod({"metadata": {"name": "p", "labels": {"app": "a"}}, "spec": {"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}]}})
    cs = CycleState()
    snap = handle.snapshot()
    assert pl.pre_filter(cs, pod, snap.list()) is None
    codes, statuses = pl.filter_columns(cs, pod, snap.columns)
    assert codes.tolist() == [0, 0]
    other = Pod({"metadata": {"name": "q", "labels": {"app": "a"}}, "spec": {"nodeName": "n0"}})
    assert pl.pre_filter_add_pod(cs, pod, other, snap.get("n0")) is None
    assert pl.filter_columns(cs, pod, snap.columns) is None
    assert pl.filter(cs, pod, snap.get("n0")).message == "node(s) didn't match pod topology spread constraints"
    assert np.asarray(codes).dtype.kind == "i"
