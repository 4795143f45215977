"""The six policies' per-node scores on hand-computed cases (the arithmetic in each comment), the
device each chooses, and BestFit's min-max NormalizeScore."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from kubesched_gpushare.model import DEVICE_HINT, GPU_INDEX, GPU_MILLI, GPU_MODEL
from kubesched_gpushare.policies import (
    BestFitScore,
    DotProductScore,
    FGDScore,
    GpuClusteringScore,
    GpuPackingScore,
    RandomScore,
)

from kubesched.sdk import CycleState, NodeScore
from kubesched.testing import build_plugin, make_handle, make_node, make_pod


def gnode(name: str, cpu: int, gpus: int, model: str = "") -> dict[str, Any]:
    cap: dict[str, str] = {"cpu": f"{cpu}m", "memory": "256Gi", "pods": "110"}
    if gpus:
        cap[GPU_MILLI] = str(gpus * 1000)
    b = make_node().name(name).capacity(cap)
    if model:
        b = b.label(GPU_MODEL, model)
    return b.obj()


def running(name: str, node: str, cpu: int, milli: int, devices: str) -> dict[str, Any]:
    return make_pod().name(name).req(cpu=f"{cpu}m", **{GPU_MILLI: str(milli)}).annotation(GPU_INDEX, devices).node(node).obj()


def pod(cpu: int | None, milli: int = 0, models: str = "") -> Any:
    req: dict[str, str] = {}
    if cpu is not None:
        req["cpu"] = f"{cpu}m"
    if milli:
        req[GPU_MILLI] = str(milli)
    b = make_pod().name("p")
    b = b.req(**req) if req else b.container("c")
    if models:
        b = b.annotation(GPU_MODEL, models)
    return b.pod()


# n1: 32 cores, 4 V100s: a (4 cores, half of GPU 0), b (8 cores, all of GPU 1)
#     -> cpu_left 32000 - 12000 = 20000, left [500, 0, 1000, 1000] (total 2500)
# n2: 8 cores, 1 T4, empty -> cpu_left 8000, left [1000]
# n4: 16 cores, 2 V100s: c (1 core, 250 on GPU 0) -> cpu_left 15000, left [750, 1000]
# n5: 16 cores, 2 V100s: d (2 cores, all of GPU 0) -> cpu_left 14000, left [0, 1000]
# n6: 4 cores, no GPU
# n7: 128 cores, 8 GPUs free; n8: 256 cores, 12 GPUs free (beyond the MaxSpec)
NODES = [
    gnode("n1", 32000, 4, "V100"),
    gnode("n2", 8000, 1, "T4"),
    gnode("n4", 16000, 2, "V100"),
    gnode("n5", 16000, 2, "V100"),
    gnode("n6", 4000, 0),
    gnode("n7", 128000, 8, "A100"),
    gnode("n8", 256000, 12, "A100"),
]
PODS = [
    running("a", "n1", 4000, 500, "0"),
    running("b", "n1", 8000, 1000, "1"),
    running("c", "n4", 1000, 250, "0"),
    running("d", "n5", 2000, 1000, "0"),
]


def _scores(cls: Any, p: Any, args: dict[str, Any] | None = None) -> dict[str, int]:
    handle = make_handle(NODES, PODS)
    plugin = build_plugin(cls, args, handle)
    state = CycleState()
    nodes = handle.snapshot().list()
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, p)
    if hasattr(plugin, "pre_score"):
        plugin.pre_score(state, p, nodes) if cls is RandomScore else plugin.pre_score(state, p)
    return {ni.name: plugin.score(state, p, ni) for ni in nodes}


def test_dot_product() -> None:
    got = _scores(DotProductScore, pod(2000, 300))
    # n1: node (20000/128000, 2500/8000) = (0.15625, 0.3125), pod (2000/128000, 300/8000) = (0.015625, 0.0375)
    #     dot = 0.00244140625 + 0.01171875 = 0.01416015625; 1 - dot/2 = 0.992919921875 -> int(99.29) = 99
    assert got["n1"] == 99
    # n6: no GPU left: dot = 4000/128000 * 0.015625 = 0.00048828125 -> 1 - 0.000244140625 -> 99
    assert got["n6"] == 99
    big = _scores(DotProductScore, pod(64000, 4000))
    # n7: node (1, 1), pod (0.5, 0.5): dot 1 -> 1 - 0.5 = 0.5 -> 50
    assert big["n7"] == 50
    # n1: cpu_left 20000 < 64000: no match group -> 0
    assert big["n1"] == 0
    # n8: node (2, 1.5), pod (0.5, 0.5): dot 1.75 -> 1 - 0.875 = 0.125 -> 12
    assert big["n8"] == 12


def test_dot_product_beyond_the_max_spec_is_clamped() -> None:
    huge = _scores(DotProductScore, pod(256000, 12000))
    # n8: node (2, 1.5), pod (2, 1.5): dot 4 + 2.25 = 6.25 -> 1 - 3.125 = -2.125 <= -1: no group -> 0
    assert huge["n8"] == 0
    mid = _scores(DotProductScore, pod(192000, 8000))
    # n8: node (2, 1.5), pod (1.5, 1): dot 3 + 1.5 = 4.5 -> 1 - 2.25 = -1.25: 0; nothing above 100 or below 0
    assert mid["n8"] == 0


def test_gpu_clustering() -> None:
    got = _scores(GpuClusteringScore, pod(2000, 300))  # kind share-gpu
    # n1: kinds {share-gpu, 1-gpu}: g = 25 * (8000 - 2500) / 8000 = 137500 / 8000 = 17; + 50 = 67
    assert got["n1"] == 67
    # n4: kinds {share-gpu} only: g = 25 * 6250 / 8000 = 19; + 75 = 94
    assert got["n4"] == 94
    # n2: no GPU pods: g = 25 * 7000 / 8000 = 21; + 25 = 46 (the T4 is accessible: the pod names no model)
    assert got["n2"] == 46
    # n5: kinds {1-gpu}: g = 21; + 0 = 21
    assert got["n5"] == 21
    # n8: 12 GPUs free: 25 * (8000 - 12000) / 8000 = -100000 / 8000 = -12.5, truncated to -12 (Go); + 25 = 13
    assert got["n8"] == 13
    assert _scores(GpuClusteringScore, pod(2000))["n1"] == 0  # no GPU asked
    # a V100-only pod: n2 (T4) is not accessible -> 0 (the reference: an Error)
    assert _scores(GpuClusteringScore, pod(2000, 300, "V100"))["n2"] == 0


def test_gpu_packing() -> None:
    got = _scores(GpuPackingScore, pod(2000, 300))
    # n1: 2 of 4 free; smallest left >= 300 is GPU 0 (500), used: 500 * 100 / 1000 = 50 -> 100 - 50 / 10 = 95
    assert got["n1"] == 95
    # n2: every GPU free (1): max(33 - 1, 1) = 32
    assert got["n2"] == 32
    # n4: smallest left >= 300 is GPU 0 (750): 75 -> 100 - 7 = 93
    assert got["n4"] == 93
    # n5: GPU 1 (1000) is the only fit, fully free: max(50 - 1, 33) = 49
    assert got["n5"] == 49
    # n7: 8 of 8 free: max(33 - 8, 8) = 25
    assert got["n7"] == 25
    whole = _scores(GpuPackingScore, pod(2000, 2000))
    # n1: two GPUs, both free ones taken: max(50 - 2, 33) = 48; n5: one free GPU for two: does not fit -> 0
    assert whole["n1"] == 48 and whole["n5"] == 0
    assert _scores(GpuPackingScore, pod(2000, 600))["n1"] == 49  # 500 < 600: GPU 2 (free) -> max(50 - 1, 33)
    assert _scores(GpuPackingScore, pod(2000))["n1"] == 0  # no GPU asked


def test_best_fit_and_its_normalization() -> None:
    got = _scores(BestFitScore, pod(2000, 300))
    # n1: (20000 - 2000) / 128000 * 0.5 + (2500 - 300) / 8000 * 0.5 = 0.0703125 + 0.1375 = 0.2078125
    #     -> (1 - 0.2078125) * 100 = 79.21875 -> 79
    assert got["n1"] == 79
    # n2: 6000 / 128000 * 0.5 + 700 / 8000 * 0.5 = 0.0234375 + 0.04375 = 0.0671875 -> 93.28125 -> 93
    assert got["n2"] == 93
    # n8: 254000 / 128000 * 0.5 + 11700 / 8000 * 0.5 = 0.9921875 + 0.73125 = 1.7234375 -> -72.34375 -> -72
    assert got["n8"] == -72
    # n6: no GPU left for 300: the reference's Error -> 0
    assert got["n6"] == 0
    plugin = build_plugin(BestFitScore, None, make_handle(NODES, PODS))
    scores = [NodeScore("n1", 79), NodeScore("n2", 93), NodeScore("n8", -72)]
    plugin.normalize_score(scores)
    # lowest -72, range 165: (79 + 72) * 100 / 165 = 15100 / 165 = 91; 93 -> 100; -72 -> 0
    assert [s.score for s in scores] == [91, 100, 0]
    same = [NodeScore("a", 40), NodeScore("b", 40)]
    plugin.normalize_score(same)
    assert [s.score for s in same] == [0, 0]


def test_random_picks_one_feasible_node_and_a_fitting_device() -> None:
    handle = make_handle(NODES, PODS)
    plugin = build_plugin(RandomScore, {"seed": 7}, handle)
    nodes = handle.snapshot().list()
    draws = random.Random(7)
    picked = set()
    for _ in range(40):
        state = CycleState()
        p = pod(2000, 300)
        plugin.pre_score(state, p, nodes)
        want = nodes[draws.randrange(len(nodes))]
        scores = {ni.name: plugin.score(state, p, ni) for ni in nodes}
        assert scores == {ni.name: 100 if ni.name == want.name else 0 for ni in nodes}
        picked.add(want.name)
        # the device: reservoir sampling over the devices with left >= 300, drawn after the node
        left = {"n1": [500, 0, 1000, 1000], "n2": [1000], "n4": [750, 1000], "n5": [0, 1000], "n7": [1000] * 8, "n8": [1000] * 12}.get(want.name, [])
        chosen, seen = -1, 0
        for i, v in enumerate(left):
            if v >= 300:
                seen += 1
                if draws.randrange(seen) == 0:
                    chosen = i
        hint = state.get(DEVICE_HINT)
        assert (hint or {}).get(want.name) == ((chosen,) if chosen >= 0 else None)
    assert len(picked) > 3


# FGD: one typical pod, half a GPU with 1 core, 100 % of the workload
TYPICAL = {"typicalPods": [{"cpuMilli": 1000, "gpuMilli": 500, "gpuCount": 1, "percentage": 1.0}]}


def _sig(x: float) -> int:
    return int(1.0 / (1.0 + math.exp(-x)) * 100.0)


def _fgd(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], p: Any) -> tuple[dict[str, int], Any]:
    handle = make_handle(nodes, pods)
    plugin = build_plugin(FGDScore, TYPICAL, handle)
    state = CycleState()
    plugin.pre_filter(state, p)
    plugin.pre_score(state, p)
    return {ni.name: plugin.score(state, p, ni) for ni in handle.snapshot().list()}, state.get(DEVICE_HINT)


def test_fgd_hand_computed() -> None:
    nodes = [gnode("f1", 8000, 2), gnode("f2", 8000, 1), gnode("f3", 8000, 2)]
    pods = [running("x", "f1", 0, 300, "1"), running("y", "f2", 0, 400, "0"), running("z", "f3", 0, 700, "0")]
    # f1: left [1000, 700]; f2: [600]; f3: [300, 1000]; cpu_left 8000 each (the running pods request 0m)
    got, hint = _fgd(nodes, pods, pod(1000, 300))
    # f1 before: both GPUs >= 500 (Q3), fragment = milli on GPUs < 500 = 0 -> F 0
    #    GPU 0 -> [700, 700]: F 0, delta 0 -> sigmoid(0) = 0.5 -> 50
    #    GPU 1 -> [1000, 400]: Q3, fragment 400 -> F 400, delta -400 -> sigmoid(-0.4) -> 40
    #    best 50 on GPU 0 (best fit would take GPU 1 and strand 400)
    assert _sig(-0.4) == 40 and got["f1"] == 50
    # f2 before: [600] Q3, F 0; after [300]: no GPU >= 500 (Q2): F 300 -> sigmoid(-0.3) = 0.4256 -> 42
    assert got["f2"] == _sig(-0.3) == 42
    # f3 before: [300, 1000] Q3, fragment 300 -> F 300; GPU 0 -> [0, 1000]: F 0, delta +300 -> 57;
    #    GPU 1 -> [300, 700]: F 300, delta 0 -> 50; best 57 on GPU 0
    assert got["f3"] == _sig(0.3) == 57
    assert dict(hint) == {"f1": (0,), "f2": (0,), "f3": (0,)}


def test_fgd_whole_gpus_cpu_pods_and_no_requests() -> None:
    nodes = [gnode("f1", 8000, 2)]
    pods = [running("x", "f1", 0, 300, "1")]  # left [1000, 700]
    # one whole GPU: Sub takes the least left >= 1000: GPU 0 -> [0, 700]: Q3, fragment 0 -> F 0; delta 0 -> 50
    got, hint = _fgd(nodes, pods, pod(1000, 1000))
    assert got == {"f1": 50} and hint is None
    # a CPU pod of 8 cores: cpu_left 8000 -> 0 < 1000: the typical pod lacks cpu (Q4): all 1700 is a fragment
    # -> delta -1700 -> sigmoid(-1.7) = 0.1545 -> 15
    assert _fgd(nodes, pods, pod(8000))[0] == {"f1": _sig(-1.7)} == {"f1": 15}
    # 9 cores: Sub falls short, nothing subtracted: delta 0 -> 50
    assert _fgd(nodes, pods, pod(9000))[0] == {"f1": 50}
    # no request at all -> 100
    assert _fgd(nodes, pods, pod(None))[0] == {"f1": 100}
    # a T4-only pod on a node without a model: 0 (the reference: an Error)
    assert _fgd(nodes, pods, pod(1000, 300, "T4"))[0] == {"f1": 0}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"typicalPods": [{"gpuMilli": 1001}]}, "args.typicalPods[0].gpuMilli: must be in 0..1000"),
        ({"relearnEvery": 0}, "args.relearnEvery: must be >= 1"),
        ({"modelLabel": ""}, "args.modelLabel: must not be empty"),
    ],
)
def test_fgd_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as e:
        build_plugin(FGDScore, args, make_handle())
    assert str(e.value) == message


# tieBreak: name (the paper's simulator's selectHost: the smallest name among equal scores) -------
def _tie_plugin(cls: Any, args: dict[str, Any] | None) -> Any:
    return build_plugin(cls, args, make_handle(NODES, PODS))


@pytest.mark.parametrize("cls", [GpuPackingScore, GpuClusteringScore, FGDScore, DotProductScore], ids=lambda c: c.__name__)
def test_tie_break_by_name_lifts_the_first_name_of_the_top(cls: Any) -> None:
    plugin = _tie_plugin(cls, {"tieBreak": "name"})
    scores = [NodeScore("n5", 33), NodeScore("n2", 33), NodeScore("n4", 20), NodeScore("n1", 33)]
    plugin.normalize_score(scores)
    # top 33 on n5, n2, n1: n1 is the smallest name -> 34, the others unchanged
    assert [(s.name, s.score) for s in scores] == [("n5", 33), ("n2", 33), ("n4", 20), ("n1", 34)]


def test_tie_break_by_name_at_100_lowers_the_others() -> None:
    plugin = _tie_plugin(GpuPackingScore, {"tieBreak": "name"})
    scores = [NodeScore("n7", 100), NodeScore("n2", 100), NodeScore("n4", 7)]
    plugin.normalize_score(scores)
    assert [(s.name, s.score) for s in scores] == [("n7", 99), ("n2", 100), ("n4", 7)]


def test_tie_break_random_and_a_single_top_leave_the_scores() -> None:
    plugin = _tie_plugin(GpuPackingScore, None)
    scores = [NodeScore("n5", 33), NodeScore("n2", 33)]
    plugin.normalize_score(scores)
    assert [s.score for s in scores] == [33, 33]
    plugin = _tie_plugin(GpuPackingScore, {"tieBreak": "name"})
    scores = [NodeScore("n5", 40), NodeScore("n2", 33)]
    plugin.normalize_score(scores)
    assert [s.score for s in scores] == [40, 33]


def test_tie_break_seeded_order() -> None:
    import hashlib

    # with tieBreakSeed 7 the order is by blake2b("7/<name>", 8 bytes), then the name
    names = ["n1", "n2", "n4", "n5"]
    first = min(names, key=lambda n: (hashlib.blake2b(f"7/{n}".encode(), digest_size=8).digest(), n))
    plugin = _tie_plugin(GpuPackingScore, {"tieBreak": "name", "tieBreakSeed": 7})
    scores = [NodeScore(n, 50) for n in names]
    plugin.normalize_score(scores)
    assert {s.name: s.score for s in scores} == {n: 51 if n == first else 50 for n in names}


def test_best_fit_normalizes_then_breaks_ties() -> None:
    plugin = _tie_plugin(BestFitScore, {"tieBreak": "name"})
    scores = [NodeScore("n5", 90), NodeScore("n2", 90), NodeScore("n4", 80)]
    plugin.normalize_score(scores)
    # min-max: 90 -> 100, 80 -> 0; the tie at 100: n2 stays 100, n5 -> 99
    assert [(s.name, s.score) for s in scores] == [("n5", 99), ("n2", 100), ("n4", 0)]


def test_tie_break_args_error() -> None:
    with pytest.raises(ValueError) as e:
        build_plugin(GpuPackingScore, {"tieBreak": "first"}, make_handle())
    assert str(e.value) == "args.tieBreak: Unsupported value: 'first': supported values: 'random', 'name'"
