"""typical_pods: GetTypicalPods of the paper's simulator (pkg/utils/frag.go), on hand-made lists."""

from __future__ import annotations

import pytest
from kubesched_gpushare.typical import PodResource, TypicalPod, typical_pods

from kubesched.sdk import build_args

A = PodResource(1000, 500, 1, "")  # a half GPU
B = PodResource(2000, 1000, 1, "")  # one whole GPU
C = PodResource(1000, 1000, 2, "")  # two whole GPUs
D = PodResource(500, 0, 0, "")  # a CPU pod
E = PodResource(3000, 250, 1, "")  # a quarter GPU
F = PodResource(1000, 500, 1, "X")  # A's resources, model X: same count as A

POOL = [A] * 4 + [B] * 3 + [C] * 2 + [D] * 5 + [E]


def _pairs(out: list[TypicalPod]) -> list[tuple[PodResource, float]]:
    return [(p.resource, p.percentage) for p in out]


def test_all_classes_when_the_first_step_passes_the_threshold() -> None:
    # CPU pods out: total 10 (A4 B3 C2 E1); expected 60 * 10 / 100 = 6; the first step (10)
    # takes all four classes (cum 10 >= 6), so each is count / total, no renormalisation
    assert _pairs(typical_pods(POOL)) == [(A, 4 / 10), (B, 3 / 10), (C, 2 / 10), (E, 1 / 10)]


def test_step_one_stops_at_the_threshold_and_renormalises() -> None:
    # expected 6: A (cum 4 < 6), then B (cum 7 >= 6): stop at 2 classes; each share
    # count / 10, then divided by cum / total = 7 / 10 (the reference's order of operations)
    got = _pairs(typical_pods(POOL, popularity_threshold=60, increase_step=1))
    assert got == [(A, (4 / 10) / (7 / 10)), (B, (3 / 10) / (7 / 10))]
    assert got[0][1] == pytest.approx(4 / 7) and got[1][1] == pytest.approx(3 / 7)


def test_cpu_pods_included() -> None:
    # total 15 (D5 A4 B3 C2 E1), threshold 50: expected 7.5; D (cum 5), A (cum 9 >= 7.5)
    got = _pairs(typical_pods(POOL, popularity_threshold=50, increase_step=1, include_cpu_pods=True))
    assert got == [(D, (5 / 15) / (9 / 15)), (A, (4 / 15) / (9 / 15))]


def test_equal_counts_sorted_by_resources_descending() -> None:
    # A and F both 4: sort.Reverse(TargetPodList) puts the greater PodResource first:
    # (1000, 500, 1, "X") > (1000, 500, 1, "") by model
    got = typical_pods([A] * 4 + [F] * 4 + [E] * 2, popularity_threshold=100, increase_step=1)
    assert [p.resource for p in got] == [F, A, E]
    assert [p.percentage for p in got] == [4 / 10, 4 / 10, 2 / 10]


def test_gpu_res_weight_counts_whole_gpu_pods_more() -> None:
    # weight 0.5: B (1 whole GPU) counts 1 + 1 * 0.5 = 1.5 each -> 4.5; C (2 GPUs) 1 + 2 * 0.5 = 2
    # each -> 4.0; A and E (shares) 1 each: A 4, E 1; total 13.5
    got = _pairs(typical_pods([A] * 4 + [B] * 3 + [C] * 2 + [E], gpu_res_weight=0.5))
    assert got == [(B, 4.5 / 13.5), (C, 4.0 / 13.5), (A, 4.0 / 13.5), (E, 1.0 / 13.5)]


def test_zero_threshold_and_step_mean_the_defaults() -> None:
    assert typical_pods(POOL, popularity_threshold=0, increase_step=0) == typical_pods(POOL, 60, 10)


def test_no_pods() -> None:
    assert typical_pods([]) == []
    assert typical_pods([D, D]) == []  # CPU pods only, left out


def test_threshold_100_takes_every_class() -> None:
    # expected 100 * 3 / 100 = 3: one class per step until cum 3; sorted descending by resources
    got = typical_pods([A, B, E], popularity_threshold=100, increase_step=1)
    assert [p.resource for p in got] == [E, B, A]


def test_pod_views_read_through_the_gpu_model() -> None:
    from kubesched_gpushare import model

    from kubesched.testing import make_pod

    share = make_pod().name("s").req(cpu="2", **{model.GPU_MILLI: "500"}).pod()
    whole = make_pod().name("w").req(cpu="4", **{model.GPU_MILLI: "2000"}).pod()
    nocpu = make_pod().name("n").req(**{model.GPU_MILLI: "250"}).pod()  # no cpu request: 100m
    got = _pairs(typical_pods([share, share, whole, nocpu], popularity_threshold=100))
    assert got == [
        (PodResource(2000, 500, 1, ""), 2 / 4),
        (PodResource(4000, 1000, 2, ""), 1 / 4),
        (PodResource(100, 250, 1, ""), 1 / 4),
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"gpuMilli": 1001}, "args.gpuMilli: must be in 0..1000"),
        ({"gpuMilli": 500, "gpuCount": 2}, "args.gpuCount: a share of a GPU (gpuMilli < 1000) is on one GPU: must be 1"),
        ({"percentage": 1.5}, "args.percentage: must be in 0..1"),
        ({"cpuMilli": -1}, "args.cpuMilli: must be >= 0"),
    ],
)
def test_typical_pod_validation(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as e:
        build_args(TypicalPod, raw)
    assert str(e.value) == message
