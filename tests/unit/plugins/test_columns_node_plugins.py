"""The column forms (filter_columns, score_columns, normalize_score_columns) of NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity, NodePorts, ImageLocality, DynamicResources and
NodeDeclaredFeatures: on random nodes and pods, each returns for every node exactly what the
per-node hook returns (the reference): same code and reasons, same raw and normalized score.
And a whole simulated run with the column path on and off places every pod the same way with the
same messages.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.plugins.dynamicresources import DynamicResources
from kubesched.runtime.plugins.imagelocality import ImageLocality
from kubesched.runtime.plugins.nodeaffinity import NodeAffinity
from kubesched.runtime.plugins.nodedeclaredfeatures import (
    Feature,
    FeatureFramework,
    NodeDeclaredFeatures,
    parse_version,
)
from kubesched.runtime.plugins.nodename import NodeName
from kubesched.runtime.plugins.nodeports import NodePorts
from kubesched.runtime.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.runtime.plugins.tainttoleration import TaintToleration
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import Code, CycleState, NodeScore, Pod, Status
from kubesched.testing import build_plugin, make_handle

MB = 1024 * 1024
ZONE = "topology.kubernetes.io/zone"
GPU = "gpu-model"
CORES = "cores"
EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")
TAINT_KEYS = ("dedicated", "gpu", "soft", "node.kubernetes.io/unschedulable")
TAINT_VALUES = ("", "x", "y")
IMAGES = {"img-a:1": 40 * MB, "img-b:1": 300 * MB, "img-c:1": 900 * MB, "img-d:1": 2500 * MB, "big:1": 5000 * MB}
CORE_VALUES = ("1", "8", "16", "64", "-5", "x", "99999999999999999999", "007")
F1, F2 = "FeatA", "FeatB"


# random cluster ---------------------------------------------------------------------------------
def _node(i: int, rng: random.Random) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": f"n{i}"}
    if rng.random() < 0.85:
        labels[ZONE] = f"z{rng.randrange(4)}"
    if rng.random() < 0.5:
        labels[GPU] = rng.choice(("A100", "V100", "T4", "P100"))
    if rng.random() < 0.6:
        labels[CORES] = rng.choice(CORE_VALUES)
    spec: dict[str, Any] = {}
    taints = []
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 3))):
        taints.append({"key": rng.choice(TAINT_KEYS), "value": rng.choice(TAINT_VALUES), "effect": rng.choice(EFFECTS)})
    if taints:
        spec["taints"] = taints
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    status: dict[str, Any] = {
        "allocatable": {"cpu": "32", "memory": "64Gi", "pods": "110"},
        "capacity": {"cpu": "32", "memory": "64Gi", "pods": "110"},
    }
    images = [img for img in IMAGES if rng.random() < 0.35]
    if images:
        status["images"] = [{"names": [img, f"alias-{img}"], "sizeBytes": IMAGES[img]} for img in images]
    if rng.random() < 0.7:
        status["declaredFeatures"] = sorted(f for f in (F1, F2, "Other") if rng.random() < 0.5)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}, "spec": spec, "status": status}


def _toleration(rng: random.Random) -> dict[str, Any]:
    op = rng.choice(("Equal", "Exists", "Exists", "Gt", "Lt", ""))
    t: dict[str, Any] = {}
    if rng.random() < 0.85:
        t["key"] = rng.choice(TAINT_KEYS)
    if op:
        t["operator"] = op
    if op in ("Equal", "", "Gt", "Lt"):
        t["value"] = rng.choice(TAINT_VALUES) if op not in ("Gt", "Lt") else "3"
    if rng.random() < 0.7:
        t["effect"] = rng.choice(EFFECTS)
    return t


def _expr(rng: random.Random) -> dict[str, Any]:
    key = rng.choice((ZONE, GPU, CORES, "missing", "kubernetes.io/hostname"))
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
    e: dict[str, Any] = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        pool = {ZONE: ["z0", "z1", "z2", "z3", "z9"], GPU: ["A100", "V100", "T4", "H100"], CORES: list(CORE_VALUES)}.get(
            key, ["n1", "n2", "n3", "v"]
        )
        e["values"] = rng.sample(pool, rng.randint(1, 3))
    elif op in ("Gt", "Lt"):
        e["values"] = [rng.choice(("0", "8", "15", "64", "-10"))]
        if rng.random() < 0.05:
            e["values"] = ["not-a-number"]  # a parse error: the term matches nothing
    return e


def _term(rng: random.Random, nodes: int) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if rng.random() < 0.85:
        t["matchExpressions"] = [_expr(rng) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.25 or not t:
        key = "metadata.name" if rng.random() < 0.85 else "metadata.namespace"
        t["matchFields"] = [{"key": key, "operator": rng.choice(("In", "NotIn")), "values": [f"n{rng.randrange(nodes + 2)}"]}]
    return t


def _pod(name: str, rng: random.Random, nodes: int) -> dict[str, Any]:
    containers = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        c: dict[str, Any] = {"name": f"c{len(containers)}", "image": rng.choice([*IMAGES, "img-a", "other:2"])}
        if rng.random() < 0.15:
            c["ports"] = [{"containerPort": 80, "hostPort": rng.choice((8080, 8081, 9090)), "protocol": rng.choice(("TCP", "UDP"))}]
        containers.append(c)
    spec: dict[str, Any] = {"containers": containers}
    if rng.random() < 0.1:
        spec["initContainers"] = [{"name": "side", "image": "img-c:1", "restartPolicy": "Always", "ports": [{"containerPort": 1, "hostPort": 9090}]}]
    if rng.random() < 0.5:
        spec["tolerations"] = [_toleration(rng) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.25:
        spec["nodeSelector"] = {rng.choice((ZONE, GPU)): rng.choice(("z1", "A100", "T4", "nope"))}
    aff: dict[str, Any] = {}
    if rng.random() < 0.5:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [_term(rng, nodes) for _ in range(rng.randint(1, 3))]}
    if rng.random() < 0.5:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice((1, 7, 50, 100, 0)), "preference": _term(rng, nodes)} for _ in range(rng.randint(1, 4))
        ]
    if aff:
        spec["affinity"] = {"nodeAffinity": aff}
    if rng.random() < 0.1:
        spec["nodeName"] = f"n{rng.randrange(nodes + 2)}"
    if rng.random() < 0.3:
        spec["hostNetwork"] = True
    if rng.random() < 0.3:
        spec["hostPID"] = True
    if rng.random() < 0.05:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "c"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name}, "spec": spec}


def _cluster(seed: int, n: int = 60) -> tuple[Any, list[dict[str, Any]]]:
    """A handle with n random nodes, some of them with pods holding host ports; and the nodes."""
    rng = random.Random(seed)
    nodes = [_node(i, rng) for i in range(n)]
    placed = []
    for i in range(n // 4):
        p = _pod(f"placed{i}", rng, n)
        p["spec"]["nodeName"] = f"n{rng.randrange(n)}"
        placed.append(p)
    return make_handle(nodes, placed), nodes


# calling hooks --------------------------------------------------------------------------------
def _call(fn: Callable[..., Any], **kw: Any) -> Any:
    params = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in kw.items() if k in params})


def _verdict(st: Any) -> tuple[Code, list[str]] | None:
    if st is None or (isinstance(st, Status) and st.code is Code.SUCCESS):
        return None
    return st.code, list(st.reasons)


def _raw_score(got: Any) -> int:
    if isinstance(got, tuple):
        score, st = got
        assert st is None or st.is_success(), st
        return int(score)
    return int(got)


FEATURES = FeatureFramework(
    [Feature(F1, lambda spec: bool(spec.get("hostNetwork")), None), Feature(F2, lambda spec: bool(spec.get("hostPID")), None)]
)


def _plugins(handle: Any) -> list[Any]:
    added = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": ["z3"]}]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchExpressions": [{"key": GPU, "operator": "Exists"}]}}
            ],
        }
    }
    return [
        build_plugin(NodeUnschedulable, None, handle),
        build_plugin(NodeName, None, handle),
        build_plugin(TaintToleration, None, handle),
        build_plugin(NodeAffinity, None, handle),
        build_plugin(NodeAffinity, added, handle),
        build_plugin(NodePorts, None, handle),
        build_plugin(ImageLocality, None, handle),
        DynamicResources(),
        NodeDeclaredFeatures(handle=handle, framework=FEATURES, version=parse_version("1.36.0")),
        NodeDeclaredFeatures(handle=handle, enabled=False),
    ]


def _compare(plugin: Any, pod: Pod, handle: Any, rng: random.Random) -> dict[str, int]:
    """Compare the column forms of ``plugin`` with its per-node hooks for ``pod``; returns what
    was compared (for the coverage asserts)."""
    snapshot = handle.snapshot()
    infos = snapshot.list()
    columns = snapshot.columns
    seen = {"filter": 0, "filter_none": 0, "score": 0, "score_none": 0, "rejected": 0}
    state = CycleState()
    pre = getattr(plugin, "pre_filter", None)
    active = True
    if pre is not None:
        got = _call(pre, state=state, pod=pod, nodes=infos)
        st = got[1] if isinstance(got, tuple) else got
        active = st is None or st.is_success()
    if active and hasattr(plugin, "filter_columns"):
        col = _call(plugin.filter_columns, state=state, pod=pod, columns=columns)
        if col is None:
            seen["filter_none"] += 1
        else:
            codes, statuses = col
            codes = np.asarray(codes)
            assert codes.shape == (len(infos),)
            for i, ni in enumerate(infos):
                want = _verdict(_call(plugin.filter, state=state, pod=pod, node_info=ni))
                c = int(codes[i])
                got_v = None if c == 0 else _verdict(statuses[c])
                assert got_v == want, (plugin.name, pod.name, ni.name)
                seen["rejected"] += want is not None
            seen["filter"] += 1
    if not hasattr(plugin, "score_columns"):
        return seen
    state = CycleState()
    pre_score = getattr(plugin, "pre_score", None)
    if pre_score is not None:
        st = _call(pre_score, state=state, pod=pod, nodes=infos)
        if st is not None and not st.is_success():
            return seen  # Skip: the plugin does not score this pod
    rows = np.array(sorted(rng.sample(range(len(infos)), rng.randint(1, len(infos)))), np.intp)
    raw = _call(plugin.score_columns, state=state, pod=pod, columns=columns, rows=rows)
    if raw is None:
        seen["score_none"] += 1
        return seen
    raw = np.asarray(raw)
    assert raw.dtype == np.int64 and raw.shape == rows.shape
    want = [_raw_score(_call(plugin.score, state=state, pod=pod, node_info=infos[r])) for r in rows.tolist()]
    assert raw.tolist() == want, (plugin.name, pod.name)
    norm = getattr(plugin, "normalize_score", None)
    if norm is not None:
        lst = [NodeScore(infos[r].name, s) for r, s in zip(rows.tolist(), want)]
        assert _call(norm, state=state, pod=pod, scores=lst) is None
        got = _call(plugin.normalize_score_columns, state=state, pod=pod, scores=raw.copy())
        assert np.asarray(got).tolist() == [s.score for s in lst], (plugin.name, pod.name)
    seen["score"] += 1
    return seen


@pytest.mark.parametrize("seed", range(8))
def test_column_forms_equal_the_per_node_hooks(seed: int) -> None:
    handle, _nodes = _cluster(seed)
    rng = random.Random(1000 + seed)
    totals: dict[str, dict[str, int]] = {}
    for k in range(120):
        pod = Pod(_pod(f"p{k}", rng, 60))
        for plugin in _plugins(handle):
            seen = _compare(plugin, pod, handle, rng)
            t = totals.setdefault(f"{plugin.name}/{id(plugin)}", dict.fromkeys(seen, 0))
            for key, v in seen.items():
                t[key] += v
    by_name: dict[str, dict[str, int]] = {}
    for key, t in totals.items():
        b = by_name.setdefault(key.split("/")[0], dict.fromkeys(t, 0))
        for k2, v in t.items():
            b[k2] += v
    # every plugin's column forms were exercised, with rejections, and never declined where
    # they are exact
    for name in ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeDeclaredFeatures"):
        assert by_name[name]["filter"] > 0 and by_name[name]["rejected"] > 0, (name, by_name[name])
        assert by_name[name]["filter_none"] == 0, name
    for name in ("TaintToleration", "NodeAffinity", "ImageLocality", "DynamicResources"):
        assert by_name[name]["score"] > 0, (name, by_name[name])
    assert by_name["ImageLocality"]["score_none"] == 0
    assert by_name["DynamicResources"]["filter_none"] + by_name["DynamicResources"]["score_none"] >= 0


def test_dynamic_resources_declines_pods_with_claims() -> None:
    handle, _ = _cluster(0, n=5)
    columns = handle.snapshot().columns
    plugin = DynamicResources()
    claims = Pod({"metadata": {"name": "c"}, "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "x"}]}})
    plain = Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    rows = np.arange(5)
    with_claims, without = CycleState(), CycleState()
    plugin.pre_filter(with_claims, claims)
    plugin.pre_filter(without, plain)
    assert plugin.filter_columns(state=with_claims, columns=columns) is None
    assert plugin.score_columns(state=with_claims, rows=rows) is None
    codes, _ = plugin.filter_columns(state=without, columns=columns)
    assert codes.tolist() == [0] * 5
    assert plugin.score_columns(state=without, rows=rows).tolist() == [0] * 5


def test_node_ports_follows_pods_placed_after_the_first_call() -> None:
    # the rows holding ports are kept by generation: a pod with a host port added to a node
    # later is seen by the next call
    from kubesched.runtime.snapshot import Snapshot

    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}} for i in range(4)]
    holder = {"metadata": {"name": "h", "namespace": "default", "uid": "h"},
              "spec": {"nodeName": "n2", "containers": [{"name": "c", "ports": [{"containerPort": 1, "hostPort": 8080}]}]}}
    snapshot = Snapshot.from_objects(nodes)
    plugin = NodePorts()
    pod = Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 1, "hostPort": 8080}]}]}})
    state = CycleState()
    assert plugin.pre_filter(state, pod, snapshot.list()) is None
    codes, _ = plugin.filter_columns(state=state, columns=snapshot.columns)
    assert codes.tolist() == [0, 0, 0, 0]
    ni = snapshot.get("n2")
    ni._add_pod(Pod(holder))
    codes, statuses = plugin.filter_columns(state=state, columns=snapshot.columns)
    assert codes.tolist() == [0, 0, 1, 0]
    assert statuses[1].code is Code.UNSCHEDULABLE
    assert statuses[1].reasons == ["node(s) didn't have free ports for the requested pod ports"]


# a whole run, column path on and off ------------------------------------------------------------
def _sim_pod(name: str, rng: random.Random, nodes: int) -> dict[str, Any]:
    p = _pod(name, rng, nodes)
    p["spec"].pop("resourceClaims", None)
    p["spec"].pop("nodeName", None)
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": rng.choice(("100m", "2", "8")), "memory": rng.choice(("128Mi", "4Gi"))}}
    return p


def _run(seed: int, use_columns: bool) -> tuple[list[tuple[Any, ...]], int]:
    rng = random.Random(seed)
    reg = Registry.discover()
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, source="<test>", installed_plugins=reg.names())
    sim = SimulatedCluster([], source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    fw = next(iter(sched.frameworks.values()))
    fw.use_columns = use_columns
    column_calls = 0
    inner = fw.run_filter_columns

    def counting(*a: Any, **kw: Any) -> Any:
        nonlocal column_calls
        got = inner(*a, **kw)
        column_calls += got is not None
        return got

    fw.run_filter_columns = counting  # type: ignore[method-assign]
    inner_score = fw.run_score_columns

    def counting_score(*a: Any, **kw: Any) -> Any:
        nonlocal column_calls
        got = inner_score(*a, **kw)
        column_calls += 1000 * (got is not None)
        return got

    fw.run_score_columns = counting_score  # type: ignore[method-assign]
    sim.start(sched.on_cluster_event)
    n_nodes = 30
    for i in range(n_nodes):
        sim.store.create(apply_defaults(_node(i, rng)))
    sched.run_until_idle()
    pods: list[str] = []
    for step in range(220):
        r = rng.random()
        if r < 0.04:
            sim.store.create(apply_defaults(_node(n_nodes, rng)))
            n_nodes += 1
        elif r < 0.08:
            i = rng.randrange(n_nodes)
            cur = sim.store.get("v1", "Node", f"n{i}")
            new = apply_defaults(_node(i, rng))
            new["metadata"]["resourceVersion"] = cur["metadata"].get("resourceVersion")
            sim.store.update(new)
        elif r < 0.12 and pods:
            name = pods.pop(rng.randrange(len(pods)))
            if sim.store.peek("v1", "Pod", name, "default") is not None:
                sim.store.delete("v1", "Pod", name, "default")
        else:
            name = f"p{step}"
            pods.append(name)
            sim.store.create(apply_defaults(_sim_pod(name, rng, n_nodes)))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + 0.01)
    sched.run_until_idle()
    out = sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values())
    return out, column_calls


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_node_plugins_columns_never_change_a_decision(seed: int) -> None:
    with_columns, calls = _run(seed, True)
    without, none_calls = _run(seed, False)
    assert with_columns == without
    assert none_calls == 0
    statuses = {r[2] for r in without}
    assert "Scheduled" in statuses and "Unschedulable" in statuses
    # the column paths did run (every default Filter and Score plugin of these pods has its
    # column form): Filter counts 1, Score 1000
    assert calls % 1000 > 0 and calls // 1000 > 0, calls
