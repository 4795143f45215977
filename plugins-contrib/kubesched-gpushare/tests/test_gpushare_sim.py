"""GpuShare through whole scheduling runs on the embedded simulated cluster (``run_profile``,
on top of kube-scheduler's default profile, so NodeResourcesFit accounts the extended
resources too), with the framework's reuse and column forms off and on."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_gpushare import GPU_INDEX, GPU_MILLI, GPU_MODEL, GPU_RESOURCE, GpuShare

from kubesched.testing import RunResult, make_node, make_pod, run_profile

PLUGINS = {"GpuShare": GpuShare}


def gpu_node(name: str, gpus: int, model_name: str = "V100") -> dict[str, Any]:
    return (
        make_node()
        .name(name)
        .capacity(cpu="32", memory="64Gi", **{GPU_RESOURCE: str(gpus), GPU_MILLI: str(gpus * 1000)})
        .label(GPU_MODEL, model_name)
        .obj()
    )


def share(name: str, milli: int, models: str | None = None) -> dict[str, Any]:
    w = make_pod().name(name).uid(name).req(cpu="1", **{GPU_MILLI: str(milli)})
    return (w.annotation(GPU_MODEL, models) if models is not None else w).obj()


def whole(name: str, n: int) -> dict[str, Any]:
    return make_pod().name(name).uid(name).req(cpu="1", **{GPU_RESOURCE: str(n)}).obj()


def run(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], reuse: bool) -> RunResult:
    return run_profile(PLUGINS, nodes=nodes, pods=pods, defaults=True, reuse_results=reuse)


def devices(result: RunResult) -> dict[str, tuple[str | None, str | None]]:
    """pod name -> (node, gpu-index annotation) as the cluster holds them after the run."""
    out = {}
    for p in result.objects().list("v1", "Pod"):
        md = p["metadata"]
        out[md["name"]] = (p["spec"].get("nodeName"), (md.get("annotations") or {}).get(GPU_INDEX))
    return out


def bound(result: RunResult, *names: str) -> list[dict[str, Any]]:
    """The named pods as the cluster holds them (bound, annotated): a new scheduler's input."""
    by_name = {p["metadata"]["name"]: p for p in result.objects().list("v1", "Pod")}
    return [by_name[n] for n in names]


REUSE = pytest.mark.parametrize("reuse", [False, True], ids=["per-node", "columns+reuse"])


@REUSE
def test_shares_pack_on_one_gpu_up_to_1000(reuse: bool) -> None:
    r = run([gpu_node("n", 2)], [share("a", 300), share("b", 300), share("c", 400), share("d", 200)], reuse)
    assert devices(r) == {"a": ("n", "0"), "b": ("n", "0"), "c": ("n", "0"), "d": ("n", "1")}


@REUSE
def test_whole_gpu_never_on_a_partly_used_gpu(reuse: bool) -> None:
    r = run([gpu_node("n", 2)], [share("s", 100), whole("w1", 1), whole("w2", 1), share("t", 900)], reuse)
    assert devices(r) == {"s": ("n", "0"), "w1": ("n", "1"), "w2": (None, None), "t": ("n", "0")}
    assert r.message("default/w2") == (
        "0/1 nodes are available: 1 node(s) did not have enough free GPUs. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


@REUSE
def test_multi_gpu_pods(reuse: bool) -> None:
    r = run([gpu_node("n", 4)], [whole("w2", 2), share("s", 500), whole("w1", 1), whole("x", 2)], reuse)
    assert devices(r) == {"w2": ("n", "0-1"), "s": ("n", "2"), "w1": ("n", "3"), "x": (None, None)}


@REUSE
def test_gpu_model_constraints(reuse: bool) -> None:
    nodes = [gpu_node("v", 1, "V100"), gpu_node("t", 1, "T4")]
    pods = [share("want-t4", 100, "T4"), share("either", 100, "A100|V100"), share("a100", 100, "A100")]
    r = run(nodes, pods, reuse)
    assert devices(r) == {"want-t4": ("t", "0"), "either": ("v", "0"), "a100": (None, None)}
    assert r.message("default/a100") == (
        "0/2 nodes are available: 2 node(s) had a different GPU model. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


@REUSE
def test_invalid_pod_fails_and_the_others_bind(reuse: bool) -> None:
    pods = [share("ok1", 500), share("bad", 1500), whole("ok2", 1)]
    r = run([gpu_node("n", 2)], pods, reuse)
    assert devices(r) == {"ok1": ("n", "0"), "bad": (None, None), "ok2": ("n", "1")}
    message = (
        "0/1 nodes are available: invalid GPU request: alibabacloud.com/gpu-milli is 1500; it must be "
        "below 1000 (a share of one GPU) or a multiple of 1000 (whole GPUs). no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert r.message("default/bad") == message
    failed = [e for e in r.events() if e.reason == "FailedScheduling"]
    assert [(e.regarding, e.note) for e in failed] == [("Pod default/bad", message)]


@REUSE
def test_a_new_scheduler_rebuilds_the_devices_from_annotations(reuse: bool) -> None:
    """Restart: a new scheduler (a new Ledger) on the objects a previous one left. Its devices
    come from the bound pods' gpu-index annotations, not from a fresh assignment in pod order
    (which would give a different answer here)."""
    first = run([gpu_node("n", 2)], [share("a", 600), share("b", 600)], reuse)
    assert devices(first) == {"a": ("n", "0"), "b": ("n", "1")}
    # a is gone; a new scheduler places c (300) best fit: device 1 has 400 left, device 0 1000
    second = run([gpu_node("n", 2)], [*bound(first, "b"), share("c", 300)], reuse)
    assert devices(second) == {"b": ("n", "1"), "c": ("n", "1")}
    # b and c are on device 1; assigned afresh in pod order they would be on device 0. A third
    # scheduler gives the whole GPU device 0, the one really free.
    third = run([gpu_node("n", 2)], [*bound(second, "b", "c"), whole("w", 1), share("d", 200)], reuse)
    assert devices(third) == {"b": ("n", "1"), "c": ("n", "1"), "w": ("n", "0"), "d": (None, None)}
