"""Each policy's score_columns equals its per-node score (the reference) on random clusters, as
pods are placed one after another (FGD's caches by row, the GPU columns kept up to date), and
FGD's device hint equals the per-node choice; FGD learning its typical pods from PreFilter."""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np
import pytest
from kubesched_gpushare.model import (
    DEVICE_HINT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_MODEL,
    Ledger,
    choose_devices,
    format_devices,
    gpu_request,
    node_gpus,
)
from kubesched_gpushare.policies import (
    BestFitScore,
    DotProductScore,
    FGDScore,
    GpuClusteringScore,
    GpuPackingScore,
    RandomScore,
)
from kubesched_gpushare.typical import TypicalPod

from kubesched.runtime.cache import Cache
from kubesched.sdk import CycleState, Node, NodeScore, Pod
from kubesched.testing import build_plugin, make_handle, make_node, make_pod

MODELS = ["A", "B", ""]


def _node(i: int, rng: random.Random) -> Node:
    gpus = rng.choice([0, 1, 2, 4, 8, 8, 12])
    cap = {"cpu": f"{rng.choice([4000, 32000, 96000, 128000, 200000])}m", "memory": "512Gi", "pods": "110"}
    b = make_node().name(f"n{i}")
    if gpus:
        cap[GPU_MILLI] = str(gpus * 1000)
        m = rng.choice(MODELS)
        if m:
            b = b.label(GPU_MODEL, m)
    return b.capacity(cap).node()


def _pod(name: str, rng: random.Random) -> dict[str, Any]:
    req: dict[str, str] = {}
    if rng.random() < 0.9:
        req["cpu"] = f"{rng.choice([0, 500, 1000, 4000, 8000, 24000])}m"
    r = rng.random()
    if r < 0.45:
        req[GPU_MILLI] = str(rng.choice([100, 250, 300, 500, 700, 900]))
    elif r < 0.8:
        req[GPU_MILLI] = str(1000 * rng.choice([1, 1, 2, 4, 8]))
    b = make_pod().name(name)
    b = b.req(**req) if req else b.container("c")
    if rng.random() < 0.2:
        b = b.annotation(GPU_MODEL, rng.choice(["A", "B", "A|B"]))
    return b.obj()


def _typical(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for _ in range(rng.choice([1, 4, 15])):
        if rng.random() < 0.5:
            out.append({"cpuMilli": rng.choice([0, 1000, 8000]), "gpuMilli": rng.choice([250, 500, 800]), "gpuCount": 1})
        elif rng.random() < 0.7:
            out.append({"cpuMilli": rng.choice([1000, 16000]), "gpuMilli": 1000, "gpuCount": rng.choice([1, 2, 8]), "gpuModel": rng.choice(["", "A", "A|B"])})
        else:
            out.append({"cpuMilli": rng.choice([500, 64000])})
    for t in out:
        t["percentage"] = 1.0 / len(out)
    return out


def _pod_raw(p: Pod) -> dict[str, Any]:
    return copy.deepcopy(p.raw)


POLICIES = [RandomScore, DotProductScore, GpuClusteringScore, GpuPackingScore, BestFitScore, FGDScore]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cls", POLICIES, ids=lambda c: c.__name__)
def test_columns_equal_per_node_as_pods_are_placed(cls: Any, seed: int) -> None:
    rng = random.Random(seed)
    nodes = [_node(i, rng) for i in range(30)]
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    handle = make_handle([n.raw for n in nodes])
    args: dict[str, Any] = {"typicalPods": _typical(rng)} if cls is FGDScore else ({"seed": seed} if cls is RandomScore else {})
    if seed >= 2:  # the paper's simulator's tie-break: the normalized columns equal the per-node lists
        args.update({"tieBreak": "name"} if seed == 2 else {"tieBreak": "name", "tieBreakSeed": seed})
    plugin = build_plugin(cls, args or None, handle)
    ledger = Ledger.of(handle)
    for k in range(60):
        snap = cache.update_snapshot()
        cols = snap.columns
        infos = list(snap.list())
        p = Pod(_pod(f"p{k}", rng))
        rows = np.array(sorted(rng.sample(range(len(infos)), rng.randrange(1, len(infos) + 1))), np.intp)
        feasible = [infos[i] for i in rows]
        state = CycleState()
        if hasattr(plugin, "pre_filter"):
            plugin.pre_filter(state, p)
        if cls is RandomScore:
            plugin.pre_score(state, p, feasible)
        elif hasattr(plugin, "pre_score"):
            plugin.pre_score(state, p)
        col_state = state.clone()
        got = plugin.score_columns(col_state, p, cols, rows)
        want = [plugin.score(state, p, ni) for ni in feasible]
        assert got.dtype == np.int64 and got.tolist() == want, (k, p.name)
        if hasattr(plugin, "normalize_score_columns"):
            lst = [NodeScore(ni.name, s) for ni, s in zip(feasible, want, strict=True)]
            plugin.normalize_score(lst)
            assert plugin.normalize_score_columns(got).tolist() == [s.score for s in lst]
        if cls is FGDScore:
            col_hint = col_state.get(DEVICE_HINT)
            node_hint = state.get(DEVICE_HINT)
            assert dict(col_hint or {}) == dict(node_hint or {})
        # place the pod on a random node where its GPUs fit, with its devices annotated
        ni = rng.choice(infos)
        req = gpu_request(p)
        raw = _pod_raw(p)
        raw["spec"]["nodeName"] = ni.name
        if req is not None:
            devs = choose_devices(node_gpus(ni, ledger, GPU_MODEL).left, req)
            if devs is None:
                continue
            if rng.random() < 0.7:
                raw["metadata"].setdefault("annotations", {})[GPU_INDEX] = format_devices(devs)
        cache.add_pod(Pod(raw))


def test_fgd_learns_typical_pods_from_prefilter() -> None:
    handle = make_handle([make_node().name("n").capacity({"cpu": "8", GPU_MILLI: "2000"}).obj()])
    fgd = build_plugin(FGDScore, {"relearnEvery": 3}, handle)
    assert fgd.typical == ()
    share = Pod(make_pod().name("s").uid("s").req(cpu="1", **{GPU_MILLI: "500"}).obj())
    whole = Pod(make_pod().name("w").uid("w").req(cpu="2", **{GPU_MILLI: "1000"}).obj())
    for p in (share, share, whole):  # each uid counted once
        s = CycleState()
        fgd.pre_filter(s, p)
        fgd.pre_score(s, p)
    # learned at the 1st pod (share: 100 %) and the 2nd new one (doubled: share, whole; 50 % each,
    # equal counts sorted by resources, greater first)
    assert fgd.typical == (TypicalPod(2000, 1000, 1, "", 0.5), TypicalPod(1000, 500, 1, "", 0.5))
