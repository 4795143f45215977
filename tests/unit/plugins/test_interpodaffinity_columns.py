"""InterPodAffinity: PreFilter's counts through the pod index equal the scans, and the column
form of Filter equals the per-node Filter, on random clusters with pods placed and removed."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.plugins.interpodaffinity import InterPodAffinity
from kubesched.runtime.plugins.interpodaffinity.filtering import PRE_FILTER_STATE_KEY
from kubesched.sdk import CycleState, Node, Pod
from kubesched.testing import build_plugin, make_handle

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": {"team": "a"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "b"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns2", "labels": {"team": "a"}}},
]


def rand_node(rng: random.Random, i: int) -> dict[str, Any]:
    labels = {HOST: f"n{i}"} if rng.random() < 0.95 else {}
    if rng.random() < 0.8:
        labels[ZONE] = rng.choice(["z1", "z2", "z3"])
    if rng.random() < 0.3:
        labels["rack"] = rng.choice(["r1", "r2"])
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}}


def rand_term(rng: random.Random, labels: dict[str, str]) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": rng.choice([ZONE, HOST, HOST, "rack"])}
    r = rng.random()
    if r < 0.6:
        t["labelSelector"] = {"matchLabels": {"app": rng.choice(["a", "b", "c"])}}
    elif r < 0.9:
        t["labelSelector"] = {"matchExpressions": [{"key": "tier", "operator": rng.choice(["In", "NotIn", "Exists"]), "values": ["x"]}]}
        if t["labelSelector"]["matchExpressions"][0]["operator"] == "Exists":
            del t["labelSelector"]["matchExpressions"][0]["values"]
    else:
        t["labelSelector"] = {}
    r = rng.random()
    if r < 0.2:
        t["namespaces"] = [rng.choice(["default", "ns1", "ns2"])]
    elif r < 0.35:
        t["namespaceSelector"] = {"matchLabels": {"team": rng.choice(["a", "b"])}}
    elif r < 0.4:
        t["namespaceSelector"] = {}
    if rng.random() < 0.15:
        t["matchLabelKeys"] = ["tier"]
    return t


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
    if rng.random() < p_affinity:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [rand_term(rng, labels) for _ in range(rng.choice([1, 1, 2]))]}
    if rng.random() < p_affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [rand_term(rng, labels) for _ in range(rng.choice([1, 1, 2]))]}
    if aff:
        spec["affinity"] = aff
    md = {"name": uid, "uid": uid, "namespace": rng.choice(["default", "default", "ns1", "ns2"]), "labels": labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def st(s: Any) -> Any:
    return None if s is None else (s.code, s.message)


@pytest.mark.parametrize("seed", range(12))
def test_interpodaffinity_columns_equal_per_node(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [rand_node(rng, i) for i in range(rng.randint(1, 25))]
    handle = make_handle(nodes, [], NAMESPACES)
    cache = Cache()
    for n in nodes:
        cache.add_node(Node(n))
    ref = build_plugin(InterPodAffinity, None, handle)
    ref.use_index = False
    col = build_plugin(InterPodAffinity, None, handle)
    placed: list[Pod] = []
    checked = 0
    for step in range(50):
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
            pod = Pod(rand_pod(rng, f"in{step}-{k}", None, 0.5))
            cs_ref, cs_col = CycleState(), CycleState()
            a = ref.pre_filter(cs_ref, pod, snap.list())
            b = col.pre_filter(cs_col, pod, snap.list())
            assert st(a) == st(b)
            if a is not None:
                continue
            sr, sc = cs_ref.read(PRE_FILTER_STATE_KEY), cs_col.read(PRE_FILTER_STATE_KEY)
            assert sr.existing_anti_affinity_counts == sc.existing_anti_affinity_counts
            assert sr.affinity_counts == sc.affinity_counts
            assert sr.anti_affinity_counts == sc.anti_affinity_counts
            codes, statuses = col.filter_columns(cs_col, pod, cols)
            for i, ni in enumerate(cols.infos):
                want = ref.filter(cs_ref, pod, ni)
                got = None if codes[i] == 0 else statuses[codes[i]]
                assert st(want) == st(got), ni.name
            checked += 1
            # after an added pod (preemption's dry run) the column form reads the updated state
            ni = cols.infos[rng.randrange(cols.n)]
            other = Pod(rand_pod(rng, f"add{step}-{k}", ni.name, 0.5))
            assert ref.pre_filter_add_pod(cs_ref, pod, other, ni) is None
            assert col.pre_filter_add_pod(cs_col, pod, other, ni) is None
            codes, statuses = col.filter_columns(cs_col, pod, cols)
            for i, ni in enumerate(cols.infos):
                want = ref.filter(cs_ref, pod, ni)
                got = None if codes[i] == 0 else statuses[codes[i]]
                assert st(want) == st(got), ni.name
    assert checked > 20


def test_filter_columns_messages() -> None:
    nodes = [{"metadata": {"name": f"n{i}", "labels": {ZONE: "z1", HOST: f"n{i}"}}} for i in range(3)]
    existing = [
        {"metadata": {"name": "e0", "uid": "e0", "labels": {"app": "a"}}, "spec": {"nodeName": "n0"}},
        {"metadata": {"name": "e1", "uid": "e1", "labels": {"app": "b"}}, "spec": {"nodeName": "n1", "affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "c"}}}]}}}},
    ]
    handle = make_handle(nodes, existing, NAMESPACES)
    pl = build_plugin(InterPodAffinity, None, handle)
    pod = Pod({"metadata": {"name": "p", "uid": "p", "labels": {"app": "c"}}, "spec": {"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "a"}}}]}}}})
    cs = CycleState()
    snap = handle.snapshot()
    assert pl.pre_filter(cs, pod, snap.list()) is None
    codes, statuses = pl.filter_columns(cs, pod, snap.columns)
    assert [None if c == 0 else statuses[c].message for c in codes.tolist()] == [
        "node(s) didn't match pod anti-affinity rules",
        "node(s) didn't satisfy existing pods anti-affinity rules",
        None,
    ]
