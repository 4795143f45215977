"""GpuShare's hooks called directly (kubesched.testing's make_handle / build_plugin): args,
PreFilter, Filter and its column form (agreeing on random clusters), Reserve with and without a
Score policy's device hint, PreBind, and the queueing hints."""

from __future__ import annotations

import random
from typing import Any

import pytest
from gpushare_support import gpod
from kubesched_gpushare import (
    DEVICE_HINT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_MODEL,
    GPU_RESOURCE,
    GpuShare,
    Ledger,
)
from kubesched_gpushare.plugin import (
    NO_FREE_GPUS,
    NO_FREE_SHARE,
    NO_GPU,
    RESERVED,
    TOO_FEW_GPUS,
    WRONG_MODEL,
)

from kubesched.sdk import ArgsError, Code, CycleState, NodeColumns, Pod, QueueingHint, Status
from kubesched.testing import build_plugin, make_handle, make_node, make_pod


def gpu_node(name: str, gpus: int, model_name: str = "V100", label: str = GPU_MODEL) -> dict[str, Any]:
    w = make_node().name(name).capacity(cpu="32", memory="64Gi", **{GPU_RESOURCE: str(gpus), GPU_MILLI: str(gpus * 1000)})
    if model_name:
        w = w.label(label, model_name)
    return w.obj()


def cpu_node(name: str) -> dict[str, Any]:
    return make_node().name(name).capacity(cpu="32", memory="64Gi").obj()


def share(name: str, milli: int, **kw: Any) -> dict[str, Any]:
    return gpod(name, **kw, **{GPU_MILLI: str(milli)})


def whole(name: str, n: int, **kw: Any) -> dict[str, Any]:
    return gpod(name, **kw, **{GPU_RESOURCE: str(n)})


def plugin_for(nodes: list[dict[str, Any]], pods: list[dict[str, Any]] = (), args: dict[str, Any] | None = None) -> tuple[GpuShare, Any]:  # type: ignore[assignment]
    handle = make_handle(nodes=nodes, pods=list(pods))
    return build_plugin(GpuShare, args, handle), handle


def reasons(st: Status | None) -> tuple[str, list[str]] | None:
    return None if st is None else (st.code.name, list(st.reasons))


# args --------------------------------------------------------------------------------------------

def test_args() -> None:
    assert build_plugin(GpuShare).model_label == "alibabacloud.com/gpu-card-model"
    assert build_plugin(GpuShare, {"modelLabel": "nvidia.com/gpu.product"}).model_label == "nvidia.com/gpu.product"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"modelLabel": "gpu model"},
            'args.modelLabel: Invalid value: "gpu model": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        ({"modelLabel": "/model"}, 'args.modelLabel: Invalid value: "/model": prefix part must be non-empty'),
        ({"modelLabel": 5}, "args.modelLabel: Invalid type: expected string, got int"),
        ({"modelLabl": "x"}, 'args.modelLabl: unknown field "modelLabl" (known fields: modelLabel)'),
    ],
)
def test_invalid_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgsError) as e:
        build_plugin(GpuShare, args)
    assert str(e.value) == message


# PreFilter ---------------------------------------------------------------------------------------

def test_pre_filter() -> None:
    pl, _ = plugin_for([gpu_node("n", 2)])
    state = CycleState()
    assert pl.pre_filter(state, Pod(share("s", 500))) is None
    assert reasons(pl.pre_filter(state, Pod(gpod("cpu")))) == ("SKIP", [])
    assert reasons(pl.pre_filter(state, Pod(share("bad", 1500)))) == (
        "UNSCHEDULABLE_AND_UNRESOLVABLE",
        [
            "invalid GPU request: alibabacloud.com/gpu-milli is 1500; it must be below 1000 (a share of one GPU) "
            "or a multiple of 1000 (whole GPUs)"
        ],
    )


# Filter ------------------------------------------------------------------------------------------

NODES = [
    gpu_node("v100", 2),
    gpu_node("t4", 4, "T4"),
    cpu_node("cpu"),
    gpu_node("nomodel", 1, ""),
]
RUNNING = [
    share("r1", 800, node="v100", index="0"),
    whole("r2", 1, node="v100", index="1"),
    whole("r3", 3, node="t4", index="0-1-3"),
]


@pytest.mark.parametrize(
    ("p", "want"),
    [
        (
            share("s", 200),
            {"v100": None, "t4": None, "cpu": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [NO_GPU]), "nomodel": None},
        ),
        (
            share("s", 300),
            {"v100": ("UNSCHEDULABLE", [NO_FREE_SHARE]), "t4": None, "cpu": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [NO_GPU]), "nomodel": None},
        ),
        (
            whole("w", 1),
            {"v100": ("UNSCHEDULABLE", [NO_FREE_GPUS]), "t4": None, "cpu": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [NO_GPU]), "nomodel": None},
        ),
        (
            whole("w", 2),
            {
                "v100": ("UNSCHEDULABLE", [NO_FREE_GPUS]),
                "t4": ("UNSCHEDULABLE", [NO_FREE_GPUS]),
                "cpu": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [NO_GPU]),
                "nomodel": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [TOO_FEW_GPUS]),
            },
        ),
        (
            share("s", 100, models="T4|A100"),
            {
                "v100": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [WRONG_MODEL]),
                "t4": None,
                "cpu": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [NO_GPU]),
                "nomodel": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [WRONG_MODEL]),
            },
        ),
        (
            whole("w", 3, models="V100"),
            {
                "v100": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [TOO_FEW_GPUS]),
                "t4": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [WRONG_MODEL]),
                "cpu": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [NO_GPU]),
                "nomodel": ("UNSCHEDULABLE_AND_UNRESOLVABLE", [WRONG_MODEL]),
            },
        ),
    ],
)
def test_filter_reasons(p: dict[str, Any], want: dict[str, Any]) -> None:
    pl, handle = plugin_for(NODES, RUNNING)
    pod = Pod(p)
    state = CycleState()
    got = {ni.name: reasons(pl.filter(pod, ni)) for ni in handle.snapshot().list()}
    assert got == want
    codes, statuses = pl.filter_columns(pod, handle.snapshot().columns)
    assert {n: reasons(statuses[int(c)]) for n, c in zip(handle.snapshot().columns.names, codes)} == want
    assert pl.pre_filter(state, pod) is None


def test_reason_texts() -> None:
    assert [NO_GPU, WRONG_MODEL, TOO_FEW_GPUS, NO_FREE_SHARE, NO_FREE_GPUS] == [
        "node(s) had no GPU",
        "node(s) had a different GPU model",
        "node(s) had fewer GPUs than the pod requests",
        "node(s) did not have a GPU with enough free share",
        "node(s) did not have enough free GPUs",
    ]


def _random_cluster(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 12)):
        name = f"n{i}"
        gpus = rng.choice([0, 0, 1, 2, 4, 8])
        nodes.append(gpu_node(name, gpus, rng.choice(["V100", "T4", "", "A100"])) if gpus else cpu_node(name))
        left = [1000] * gpus
        for j in range(rng.randint(0, 6)):
            if not gpus:
                break
            pname = f"{name}-p{j}"
            annotate = rng.random() < 0.7
            if rng.random() < 0.6:
                milli = rng.choice([100, 250, 300, 500, 700, 900])
                devs = [d for d in range(gpus) if left[d] >= milli]
                if not devs:
                    continue
                d = rng.choice(devs)
                left[d] -= milli
                pods.append(share(pname, milli, node=name, index=str(d) if annotate else None))
            else:
                free = [d for d in range(gpus) if left[d] == 1000]
                if not free:
                    continue
                k = rng.randint(1, len(free))
                devs = rng.sample(free, k)
                for d in devs:
                    left[d] = 0
                pods.append(whole(pname, k, node=name, index="-".join(map(str, devs)) if annotate else None))
    return nodes, pods


def _random_pod(rng: random.Random) -> dict[str, Any]:
    models = rng.choice([None, None, "V100", "T4|A100", "P100"])
    if rng.random() < 0.5:
        return share("new", rng.choice([50, 300, 500, 800, 1000]), models=models)
    if rng.random() < 0.5:
        return whole("new", rng.choice([1, 2, 3, 4, 8]), models=models)
    return gpod("new", models=models, **{GPU_MILLI: str(1000 * rng.choice([1, 2, 5]))})


@pytest.mark.parametrize("seed", range(40))
def test_filter_columns_agree_with_filter(seed: int) -> None:
    rng = random.Random(seed)
    nodes, pods = _random_cluster(rng)
    pl, handle = plugin_for(nodes, pods)
    snap = handle.snapshot()
    for _ in range(5):
        pod = Pod(_random_pod(rng))
        per_node = [reasons(pl.filter(pod, ni)) for ni in snap.list()]
        codes, statuses = pl.filter_columns(pod, snap.columns)
        assert len(codes) == len(per_node)
        assert [reasons(statuses[int(c)]) for c in codes] == per_node
        # a fresh column set (no reuse) says the same
        codes2, _ = pl.filter_columns(pod, NodeColumns(snap.list()))
        assert codes2.tolist() == codes.tolist()


def test_sign_pod() -> None:
    pl = build_plugin(GpuShare)
    # a GPU pod's Filter reads the Ledger, which Unreserve changes without a new NodeInfo
    # generation: no reuse for it; a pod without a GPU passes every node
    assert pl.sign_pod(Pod(share("a", 500, models="T4"))) is None
    assert pl.sign_pod(Pod(share("bad", 1500))) is None
    assert pl.sign_pod(Pod(make_pod().name("cpu").req(cpu="1").obj())) == ("GpuShare", None)


# Reserve / Unreserve -------------------------------------------------------------------------------

def test_reserve_best_fit_and_unreserve() -> None:
    pl, _ = plugin_for([gpu_node("n", 3)], [share("r1", 600, node="n", index="1"), share("r2", 300, node="n", index="2")])
    state = CycleState()
    p = Pod(share("s", 300))
    assert pl.reserve(state, p, "n") is None
    assert state.read(RESERVED) == (1,)  # 400 left on device 1: the least that holds 300
    assert pl.ledger.get("s") == ("n", (1,))
    pl.unreserve(state, p, "n")
    assert pl.ledger.get("s") is None and RESERVED not in state


def test_reserve_uses_a_fitting_hint() -> None:
    pl, _ = plugin_for([gpu_node("n", 4), gpu_node("m", 4)], [whole("r", 1, node="n", index="0")])
    state = CycleState()
    state.write(DEVICE_HINT, {"n": (2, 3), "m": (0, 1)})
    assert pl.reserve(state, Pod(whole("w", 2)), "n") is None
    assert state.read(RESERVED) == (2, 3)


@pytest.mark.parametrize("hint", [(0, 1), (1,), (1, 1), (2, 9), ("2", "3"), None, "23"])
def test_reserve_ignores_a_hint_that_does_not_fit(hint: Any) -> None:
    pl, _ = plugin_for([gpu_node("n", 4)], [whole("r", 1, node="n", index="0")])
    state = CycleState()
    state.write(DEVICE_HINT, {"n": hint})
    assert pl.reserve(state, Pod(whole("w", 2)), "n") is None
    assert state.read(RESERVED) == (1, 2)  # choose_devices: the lowest-index free ones


def test_reserve_when_the_snapshot_holds_the_pod_already() -> None:
    """The pod being reserved is not counted against itself (the runtime may have assumed it
    into the NodeInfo Reserve reads)."""
    assumed = share("s", 700, node="n")
    pl, _ = plugin_for([gpu_node("n", 2)], [share("r", 200, node="n", index="0"), assumed])
    state = CycleState()
    assert pl.reserve(state, Pod(assumed), "n") is None
    assert state.read(RESERVED) == (0,)


def test_reserve_does_not_fit() -> None:
    pl, _ = plugin_for([gpu_node("n", 1)], [share("r", 600, node="n", index="0")])
    state = CycleState()
    assert reasons(pl.reserve(state, Pod(share("s", 500)), "n")) == ("UNSCHEDULABLE", [NO_FREE_SHARE])
    assert reasons(pl.reserve(state, Pod(whole("w", 1)), "n")) == ("UNSCHEDULABLE", [NO_FREE_GPUS])
    assert len(pl.ledger) == 0


def test_reserve_of_a_pod_without_gpu() -> None:
    pl, _ = plugin_for([gpu_node("n", 1)])
    state = CycleState()
    assert pl.reserve(state, Pod(gpod("cpu")), "n") is None
    assert RESERVED not in state
    assert reasons(pl.pre_bind_pre_flight(state)) == ("SKIP", [])
    assert pl.pre_bind(state, Pod(gpod("cpu")), "n") is None


# PreBind -----------------------------------------------------------------------------------------

def test_pre_bind_writes_the_annotation() -> None:
    p = whole("w", 2)
    pl, handle = plugin_for([gpu_node("n", 4)])
    handle.objects.create({"apiVersion": "v1", "kind": "Pod", **p}, notify=False)
    state = CycleState()
    assert pl.reserve(state, Pod(p), "n") is None
    assert pl.pre_bind_pre_flight(state) is None
    assert pl.pre_bind(state, Pod(p), "n") is None
    assert handle.objects.get("v1", "Pod", "w", "default")["metadata"]["annotations"] == {GPU_INDEX: "0-1"}


def test_pre_bind_pod_gone() -> None:
    pl, _ = plugin_for([gpu_node("n", 1)])
    state = CycleState()
    p = Pod(share("gone", 100))
    assert pl.reserve(state, p, "n") is None
    st = pl.pre_bind(state, p, "n")
    assert st is not None and st.code is Code.ERROR
    assert st.message.startswith("writing alibabacloud.com/gpu-index=0 on pod default/gone: the pod is gone: ")


def test_the_ledger_is_the_handles() -> None:
    pl, handle = plugin_for([gpu_node("n", 1)])
    assert pl.ledger is Ledger.of(handle)
    assert build_plugin(GpuShare, None, handle).ledger is pl.ledger


# queueing hints ------------------------------------------------------------------------------------

def _hints(pl: GpuShare) -> dict[str, Any]:
    return {e.event.resource: e.hint for e in pl.events_to_register()}


def test_events_registered() -> None:
    pl = build_plugin(GpuShare)
    got = {(e.event.resource, int(e.event.action)) for e in pl.events_to_register()}
    assert got == {("Pod", 2), ("Node", 1 | 4 | 8)}


@pytest.mark.parametrize(
    ("deleted", "hint"),
    [
        (share("d", 300, node="n", index="0"), QueueingHint.QUEUE),
        (whole("d", 1, node="n"), QueueingHint.QUEUE),
        (gpod("d", node="n"), QueueingHint.SKIP),  # held no GPU
        (share("d", 300), QueueingHint.SKIP),  # was not assigned
        (share("d", 1500, node="n"), QueueingHint.SKIP),  # invalid: held none
    ],
)
def test_pod_deleted_hint(deleted: dict[str, Any], hint: QueueingHint) -> None:
    fn = _hints(build_plugin(GpuShare))["Pod"]
    assert fn(Pod(share("waiting", 500)), Pod(deleted), None) is hint
    assert fn(Pod(share("waiting", 500)), deleted, None) is hint  # an API dict works too


@pytest.mark.parametrize(
    ("waiting", "old", "new", "hint"),
    [
        (share("p", 500), None, gpu_node("x", 1), QueueingHint.QUEUE),
        (share("p", 500), None, cpu_node("x"), QueueingHint.SKIP),
        (whole("p", 4), None, gpu_node("x", 2), QueueingHint.SKIP),
        (whole("p", 2), None, gpu_node("x", 2), QueueingHint.QUEUE),
        (share("p", 500, models="T4"), None, gpu_node("x", 2), QueueingHint.SKIP),
        (share("p", 500, models="T4"), None, gpu_node("x", 2, "T4"), QueueingHint.QUEUE),
        (share("p", 500, models="T4"), gpu_node("x", 2), gpu_node("x", 2, "T4"), QueueingHint.QUEUE),  # relabelled
        (whole("p", 2), gpu_node("x", 1), gpu_node("x", 2), QueueingHint.QUEUE),  # more GPUs
        (share("p", 500), gpu_node("x", 2), gpu_node("x", 2), QueueingHint.SKIP),  # no GPU change
        (gpod("p"), None, cpu_node("x"), QueueingHint.QUEUE),  # not ours to judge
    ],
)
def test_node_hint(waiting: dict[str, Any], old: Any, new: Any, hint: QueueingHint) -> None:
    fn = _hints(build_plugin(GpuShare))["Node"]
    assert fn(Pod(waiting), old, new) is hint


def test_node_hint_with_the_model_label_arg() -> None:
    fn = _hints(build_plugin(GpuShare, {"modelLabel": "nvidia.com/gpu.product"}))["Node"]
    node = gpu_node("x", 1, "Tesla-T4", label="nvidia.com/gpu.product")
    assert fn(Pod(share("p", 500, models="Tesla-T4")), None, node) is QueueingHint.QUEUE
    assert fn(Pod(share("p", 500, models="T4")), None, node) is QueueingHint.SKIP
