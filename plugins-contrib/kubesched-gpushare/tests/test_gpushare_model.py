"""The per-device GPU model (kubesched_gpushare.model): requests, a node's devices and their use,
best-fit device choice, the Ledger, and the GPU columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gpushare_support import gpod
from kubesched_gpushare import model
from kubesched_gpushare.model import (
    GPU_MILLI,
    GPU_MODEL,
    GPU_RESOURCE,
    GpuRequest,
    GpuSpecError,
    Ledger,
    choose_devices,
    fits,
    format_devices,
    gpu_columns,
    gpu_request,
    node_gpus,
    parse_devices,
)

from kubesched.sdk import NodeColumns, NodeInfo, Pod
from kubesched.testing import make_node, make_pod


def pod(name: str = "p", *, node: str = "", index: str | None = None, models: str | None = None, phase: str = "", **res: str) -> Pod:
    return Pod(gpod(name, node=node, index=index, models=models, phase=phase, **res))


def gpu_node(name: str = "n", gpus: int = 2, model_name: str = "V100", *, milli_only: bool = False, label: str = GPU_MODEL) -> Any:
    res = {GPU_MILLI: str(gpus * 1000)} if milli_only else {GPU_RESOURCE: str(gpus), GPU_MILLI: str(gpus * 1000)}
    w = make_node().name(name).capacity(cpu="32", memory="64Gi", **res)
    if model_name:
        w = w.label(label, model_name)
    return w.node()


def info(node: Any, *pods: Pod) -> NodeInfo:
    return NodeInfo(node, pods)


# requests --------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("res", "models", "want"),
    [
        ({GPU_MILLI: "500"}, None, GpuRequest(1, 500)),
        ({GPU_MILLI: "1"}, None, GpuRequest(1, 1)),
        ({GPU_MILLI: "999"}, None, GpuRequest(1, 999)),
        ({GPU_MILLI: "1000"}, None, GpuRequest(1, 1000)),
        ({GPU_MILLI: "3000"}, None, GpuRequest(3, 1000)),
        ({GPU_RESOURCE: "1"}, None, GpuRequest(1, 1000)),
        ({GPU_RESOURCE: "4"}, None, GpuRequest(4, 1000)),
        ({GPU_MILLI: "250"}, "V100|P100", GpuRequest(1, 250, frozenset({"V100", "P100"}))),
        ({GPU_MILLI: "250"}, " V100 | T4 ", GpuRequest(1, 250, frozenset({"V100", "T4"}))),
        ({GPU_MILLI: "250"}, "", GpuRequest(1, 250)),
        ({GPU_MILLI: "250"}, "  ", GpuRequest(1, 250)),
        ({}, None, None),
        ({}, "V100", None),  # models alone ask for no GPU
    ],
)
def test_gpu_request(res: dict[str, str], models: str | None, want: GpuRequest | None) -> None:
    assert gpu_request(pod(models=models, **res)) == want


def test_request_shape() -> None:
    share, whole = GpuRequest(1, 300), GpuRequest(2, 1000)
    assert (share.share, share.total) == (True, 300)
    assert (whole.share, whole.total) == (False, 2000)


def test_request_from_limits_only() -> None:
    """A container with only limits asks what its limits say (as requests default to limits)."""
    raw = make_pod().name("l").obj()
    raw["spec"]["containers"] = [{"name": "c", "image": "x", "resources": {"limits": {GPU_RESOURCE: "2"}}}]
    assert gpu_request(Pod(raw)) == GpuRequest(2, 1000)


@pytest.mark.parametrize(
    ("res", "models", "message"),
    [
        (
            {GPU_MILLI: "1500"},
            None,
            "invalid GPU request: alibabacloud.com/gpu-milli is 1500; it must be below 1000 (a share of one GPU) "
            "or a multiple of 1000 (whole GPUs)",
        ),
        (
            {GPU_MILLI: "2001"},
            None,
            "invalid GPU request: alibabacloud.com/gpu-milli is 2001; it must be below 1000 (a share of one GPU) "
            "or a multiple of 1000 (whole GPUs)",
        ),
        (
            {GPU_MILLI: "500", GPU_RESOURCE: "1"},
            None,
            "invalid GPU request: the pod asks for both nvidia.com/gpu and alibabacloud.com/gpu-milli; ask for one of them",
        ),
        (
            {GPU_MILLI: "1.5"},
            None,
            'invalid GPU request: alibabacloud.com/gpu-milli is "1.5"; it must be a whole number',
        ),
        (
            {GPU_MILLI: "500m"},
            None,
            'invalid GPU request: alibabacloud.com/gpu-milli is "500m"; it must be a whole number',
        ),
        (
            {GPU_RESOURCE: "1.5"},
            None,
            'invalid GPU request: nvidia.com/gpu is "1.5"; it must be a whole number',
        ),
        (
            {GPU_MILLI: "500"},
            "V100||T4",
            'invalid GPU request: annotation alibabacloud.com/gpu-card-model "V100||T4": a GPU model between "|" is empty',
        ),
        (
            {GPU_RESOURCE: "1"},
            "V100|",
            'invalid GPU request: annotation alibabacloud.com/gpu-card-model "V100|": a GPU model between "|" is empty',
        ),
        (
            {GPU_RESOURCE: "1"},
            "A\x1b[2J|",
            'invalid GPU request: annotation alibabacloud.com/gpu-card-model "A\\x1b[2J|": a GPU model between "|" is empty',
        ),
    ],
)
def test_invalid_request(res: dict[str, str], models: str | None, message: str) -> None:
    p = pod(models=models, **res)
    with pytest.raises(GpuSpecError) as e:
        gpu_request(p)
    assert str(e.value) == message
    with pytest.raises(GpuSpecError) as again:  # the error is kept with the pod, too
        gpu_request(p)
    assert again.value is e.value


def test_request_parsed_once_per_pod() -> None:
    p = pod(**{GPU_MILLI: "300"})
    assert gpu_request(p) is gpu_request(p)


# device choice -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("left", "req", "want"),
    [
        # a share: the device with the least left that holds it; the lowest index on ties
        ((1000, 300, 300, 500), GpuRequest(1, 200), (1,)),
        ((1000, 300, 300, 500), GpuRequest(1, 300), (1,)),
        ((1000, 300, 300, 500), GpuRequest(1, 400), (3,)),
        ((1000, 300, 300, 500), GpuRequest(1, 600), (0,)),
        ((500, 1000, 500), GpuRequest(1, 500), (0,)),
        ((100, 200, 0), GpuRequest(1, 300), None),
        ((), GpuRequest(1, 1), None),
        # whole GPUs: the lowest-index fully free devices
        ((1000, 500, 1000, 1000), GpuRequest(1, 1000), (0,)),
        ((500, 1000, 999, 1000, 1000), GpuRequest(2, 1000), (1, 3)),
        ((1000, 500, 1000, 1000), GpuRequest(3, 1000), (0, 2, 3)),
        ((1000, 500, 1000, 1000), GpuRequest(4, 1000), None),
        ((999,), GpuRequest(1, 1000), None),
    ],
)
def test_choose_devices_and_fits(left: tuple[int, ...], req: GpuRequest, want: tuple[int, ...] | None) -> None:
    assert choose_devices(left, req) == want
    assert fits(left, req) is (want is not None)


@pytest.mark.parametrize(
    ("value", "count", "want", "devices"),
    [
        ("0", 2, 1, (0,)),
        ("1-3-0", 4, 3, (1, 3, 0)),
        ("2", 2, 1, None),  # past the node's GPUs
        ("0-0", 2, 2, None),  # twice the same device
        ("0-1", 2, 1, None),  # more devices than the pod asks
        ("0", 2, 2, None),  # fewer
        ("x", 2, 1, None),
        ("-1", 2, 1, None),
        ("0,1", 2, 2, None),
        ("", 2, 1, None),
        (None, 2, 1, None),
    ],
)
def test_parse_devices(value: str | None, count: int, want: int, devices: tuple[int, ...] | None) -> None:
    assert parse_devices(value, count, want) == devices


def test_format_devices() -> None:
    assert format_devices((0,)) == "0"
    assert format_devices((0, 1, 3)) == "0-1-3"


# a node's GPUs -------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("node", "count", "model_name"),
    [
        (gpu_node(gpus=4), 4, "V100"),
        (gpu_node(gpus=2, milli_only=True), 2, "V100"),  # gpu-milli / 1000 without nvidia.com/gpu
        (gpu_node(gpus=8, model_name=""), 8, ""),
        (make_node().name("n").capacity(cpu="4").node(), 0, ""),
        (make_node().name("n").capacity(cpu="4", **{GPU_MILLI: "1500"}).node(), 1, ""),
    ],
)
def test_node_count_and_model(node: Any, count: int, model_name: str) -> None:
    ng = node_gpus(info(node), Ledger())
    assert (ng.count, ng.model, ng.left, dict(ng.devices)) == (count, model_name, (1000,) * count, {})


def test_nvidia_gpu_count_wins_over_gpu_milli() -> None:
    node = make_node().name("n").capacity(cpu="4", **{GPU_RESOURCE: "2", GPU_MILLI: "8000"}).node()
    assert node_gpus(info(node), Ledger()).count == 2


def test_model_from_the_model_label_arg() -> None:
    node = gpu_node(model_name="NVIDIA-A100-SXM4-80GB", label="nvidia.com/gpu.product")
    assert node_gpus(info(node), Ledger(), "nvidia.com/gpu.product").model == "NVIDIA-A100-SXM4-80GB"
    assert node_gpus(info(node), Ledger()).model == ""


def test_devices_from_annotations() -> None:
    ni = info(
        gpu_node(gpus=3),
        pod("a", node="n", index="1", **{GPU_MILLI: "500"}),
        pod("b", node="n", index="1", **{GPU_MILLI: "200"}),
        pod("c", node="n", index="0-2", **{GPU_RESOURCE: "2"}),
        pod("cpu", node="n"),
    )
    ng = node_gpus(ni, Ledger())
    assert ng.left == (0, 300, 0)
    assert dict(ng.devices) == {"a": (1,), "b": (1,), "c": (0, 2)}


def test_devices_from_the_ledger() -> None:
    ledger = Ledger()
    ledger.record("a", "n", (1,))
    ledger.record("b", "other", (0,))  # recorded for another node: not this one's
    ni = info(gpu_node(gpus=2), pod("a", node="n", **{GPU_MILLI: "500"}), pod("b", node="n", **{GPU_MILLI: "300"}))
    ng = node_gpus(ni, ledger)
    # a from the Ledger on device 1; b assigned by best fit after it: device 1 (500 left)
    assert dict(ng.devices) == {"a": (1,), "b": (1,)}
    assert ng.left == (1000, 200)


def test_devices_assigned_in_pod_order_after_known_ones() -> None:
    """Pods bound without annotation (by someone else) get devices by best fit, in pod order,
    after the pods whose devices are known are counted."""
    ni = info(
        gpu_node(gpus=3),
        pod("p1", node="n", **{GPU_MILLI: "600"}),
        pod("p2", node="n", **{GPU_MILLI: "300"}),
        pod("p3", node="n", **{GPU_RESOURCE: "1"}),
        pod("known", node="n", index="0", **{GPU_MILLI: "500"}),
    )
    ng = node_gpus(ni, Ledger())
    # known takes 500 of device 0; p1 (600): devices 1 and 2 tie at 1000 -> the lower, 1;
    # p2 (300): device 0 has 500 left, device 1 400 -> the least, 1; p3 (whole) -> device 2
    assert dict(ng.devices) == {"known": (0,), "p1": (1,), "p2": (1,), "p3": (2,)}
    assert ng.left == (500, 100, 0)


@pytest.mark.parametrize("bad", ["2", "0-1", "x", "", "0-"])
def test_invalid_annotation_is_ignored(bad: str) -> None:
    """An annotation that is not valid for the pod on this node counts as absent: the pod's
    devices come from the Ledger, else best fit in pod order."""
    ni = info(gpu_node(gpus=2), pod("a", node="n", index="1", **{GPU_MILLI: "700"}), pod("b", node="n", index=bad, **{GPU_MILLI: "200"}))
    ng = node_gpus(ni, Ledger())
    assert dict(ng.devices) == {"a": (1,), "b": (1,)}
    ledger = Ledger()
    ledger.record("b", "n", (0,))
    assert dict(node_gpus(ni, ledger).devices) == {"a": (1,), "b": (0,)}


def test_pods_that_take_no_gpu() -> None:
    """Succeeded/Failed pods, pods with an invalid GPU spec and pods that do not fit (an
    overcommitted node) take no device; an overcommitted device has 0 left, not less."""
    ni = info(
        gpu_node(gpus=1),
        pod("done", node="n", index="0", phase="Succeeded", **{GPU_RESOURCE: "1"}),
        pod("failed", node="n", index="0", phase="Failed", **{GPU_RESOURCE: "1"}),
        pod("bad", node="n", index="0", **{GPU_MILLI: "1500"}),
        pod("x", node="n", index="0", **{GPU_MILLI: "600"}),
        pod("y", node="n", index="0", **{GPU_MILLI: "600"}),
        pod("z", node="n", **{GPU_MILLI: "100"}),
    )
    ng = node_gpus(ni, Ledger())
    assert ng.left == (0,)
    assert dict(ng.devices) == {"x": (0,), "y": (0,)}


def test_annotation_seen_drops_the_ledger_entry() -> None:
    ledger = Ledger()
    ledger.record("a", "n", (1,))
    node_gpus(info(gpu_node(), pod("a", node="n", **{GPU_MILLI: "500"})), ledger)
    assert "a" in ledger
    ng = node_gpus(info(gpu_node(), pod("a", node="n", index="1", **{GPU_MILLI: "500"})), ledger)
    assert ng.devices["a"] == (1,)
    assert "a" not in ledger and len(ledger) == 0


def test_a_stale_annotation_does_not_override_the_reservation() -> None:
    # a pending pod carrying gpu-index "0" (PreBind wrote it, then its bind failed) is reserved
    # again on device 1: until the annotation of the new reservation is seen, the Ledger governs
    ledger = Ledger()
    ledger.record("x", "n", (1,))
    e = pod("e", node="n", index="1", **{GPU_MILLI: "600"})
    x = pod("x", node="n", index="0", **{GPU_MILLI: "300"})
    ng = node_gpus(info(gpu_node(), e, x), ledger)
    assert ng.devices["x"] == (1,) and ng.left == (1000, 100)
    assert "x" in ledger
    x_bound = pod("x", node="n", index="1", **{GPU_MILLI: "300"})
    assert node_gpus(info(gpu_node(), e, x_bound), ledger).left == (1000, 100)
    assert "x" not in ledger


def test_ledger() -> None:
    ledger = Ledger()
    ledger.record("a", "n1", (0, 1))
    assert ledger.get("a") == ("n1", (0, 1))
    ledger.record("a", "n2", (3,))
    assert ledger.get("a") == ("n2", (3,))
    ledger.forget("a")
    ledger.forget("a")  # twice is fine
    assert ledger.get("a") is None and len(ledger) == 0


def test_ledger_of_a_handle() -> None:
    class H:
        pass

    h1, h2 = H(), H()
    assert Ledger.of(h1) is Ledger.of(h1)
    assert Ledger.of(h1) is not Ledger.of(h2)


def test_node_gpus_cached_by_generation_and_ledger() -> None:
    ledger = Ledger()
    ni = info(gpu_node(), pod("a", node="n", **{GPU_MILLI: "500"}))
    first = node_gpus(ni, ledger)
    assert node_gpus(ni, ledger) is first
    ledger.record("a", "n", (1,))  # the node's entries changed
    second = node_gpus(ni, ledger)
    assert second is not first and second.devices["a"] == (1,)
    ni.add_pod(pod("b", node="n", index="0", **{GPU_RESOURCE: "1"}))  # a new generation
    assert node_gpus(ni, ledger).left == (0, 500)
    assert node_gpus(ni, ledger, "other/label").model == ""  # another label: computed again


# columns -----------------------------------------------------------------------------------------

def _cluster() -> list[NodeInfo]:
    return [
        info(gpu_node("a", 2), pod("a1", node="a", index="0", **{GPU_MILLI: "300"})),
        info(gpu_node("b", 4, "T4"), pod("b1", node="b", index="1-2", **{GPU_RESOURCE: "2"})),
        info(make_node().name("c").capacity(cpu="8").node(), pod("c1", node="c")),
        info(gpu_node("d", 1, "")),
    ]


def test_gpu_columns() -> None:
    infos = _cluster()
    gc = gpu_columns(NodeColumns(infos), Ledger())
    assert gc.left.tolist() == [[700, 1000, 0, 0], [1000, 0, 0, 1000], [0, 0, 0, 0], [1000, 0, 0, 0]]
    assert gc.count.tolist() == [2, 4, 0, 1]
    assert [gc.models[c] for c in gc.codes] == ["V100", "T4", "", ""]
    assert gc.cpu_capacity.tolist() == [32000, 32000, 8000, 32000]
    assert gc.cpu_left.tolist() == [31000, 31000, 7000, 32000]
    assert gc.allowed(frozenset()).tolist() == [True] * 4
    assert gc.allowed(frozenset({"T4", "A100"})).tolist() == [False, True, False, False]
    assert not gc.left.flags.writeable


def test_gpu_columns_rebuild_only_changed_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    computed: list[str] = []
    real = model._compute

    def counting(node_info: NodeInfo, ledger: Ledger, label: str) -> Any:
        computed.append(node_info.name)
        return real(node_info, ledger, label)

    monkeypatch.setattr(model, "_compute", counting)
    infos = _cluster()
    columns = NodeColumns(infos)
    ledger = Ledger()
    gc = gpu_columns(columns, ledger)
    assert computed == ["a", "b", "c", "d"]
    rows = list(gc.rows)
    computed.clear()
    assert gpu_columns(columns, ledger) is gc and computed == []  # nothing changed

    infos[1].add_pod(pod("b2", node="b", **{GPU_MILLI: "400"}))  # node b changed
    columns.refresh()
    assert gpu_columns(columns, ledger) is gc
    assert computed == ["b"]
    assert gc.rows[0] is rows[0] and gc.rows[2] is rows[2] and gc.rows[3] is rows[3]
    assert gc.left[1].tolist() == [600, 0, 0, 1000]
    assert gc.cpu_left.tolist() == [31000, 30000, 7000, 32000]

    computed.clear()
    ledger.record("d-pod", "d", (0,))  # a Ledger change marks its node's row
    gpu_columns(columns, ledger)
    assert computed == ["d"]

    computed.clear()
    infos[3].add_pod(pod("d1", node="d", index="0", **{GPU_MILLI: "100"}))
    infos[3].set_node(gpu_node("d", 6, "A100"))  # more GPUs than any node had: wider columns
    columns.refresh()
    gc = gpu_columns(columns, ledger)
    assert computed == ["d"]
    assert gc.left.shape == (4, 6)
    assert gc.left[3].tolist() == [900, 1000, 1000, 1000, 1000, 1000]
    assert gc.left[0].tolist() == [700, 1000, 0, 0, 0, 0]
    assert [gc.models[c] for c in gc.codes] == ["V100", "T4", "", "A100"]
    assert np.array_equal(gc.count, [2, 4, 0, 6])
