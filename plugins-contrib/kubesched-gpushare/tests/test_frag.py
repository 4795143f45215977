"""Fragmentation (pkg/utils/frag.go of the paper's simulator): the quadrants, the amounts, and the
numpy form equal to the per-node form bit for bit."""

from __future__ import annotations

import random

import numpy as np
import pytest
from kubesched_gpushare.frag import (
    NO_ACCESS,
    Q1_LACK_BOTH,
    Q2_LACK_GPU,
    Q3_SATISFIED,
    Q4_LACK_CPU,
    XL_SATISFIED,
    XR_LACK_CPU,
    TypicalSet,
    accessible,
    node_frag_amount,
    node_frag_score,
    node_pod_frag,
)
from kubesched_gpushare.typical import PodResource, TypicalPod

# a node with 8 cores left and four V100s: one free, one half used, one full, one with 200 left
CPU, LEFT, MODEL = 8000, (1000, 500, 0, 200), "V100"


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        (PodResource(4000, 0, 0, ""), XL_SATISFIED),  # no GPU, 4000 <= 8000
        (PodResource(9000, 0, 0, ""), XR_LACK_CPU),  # no GPU, 9000 > 8000
        (PodResource(9000, 0, 0, "T4"), XR_LACK_CPU),  # no GPU: the model is not looked at
        (PodResource(1000, 500, 1, "T4"), NO_ACCESS),  # T4 only, the node is a V100
        (PodResource(1000, 600, 1, "T4|V100"), Q3_SATISFIED),  # V100 allowed; device 0 has 1000 >= 600
        (PodResource(1000, 600, 1, ""), Q3_SATISFIED),
        (PodResource(9000, 600, 1, ""), Q4_LACK_CPU),  # fits on device 0, CPU short
        (PodResource(1000, 1000, 2, ""), Q2_LACK_GPU),  # one device has 1000, two needed
        (PodResource(9000, 1000, 2, ""), Q1_LACK_BOTH),
        (PodResource(1000, 1000, 1, ""), Q3_SATISFIED),
        (PodResource(1000, 200, 1, ""), Q3_SATISFIED),  # 200 >= 200 counts
        (PodResource(8000, 1000, 1, ""), Q3_SATISFIED),  # 8000 >= 8000 counts
    ],
)
def test_quadrants(pod: PodResource, want: str) -> None:
    assert node_pod_frag(CPU, LEFT, MODEL, pod) == want


def test_access_by_model() -> None:
    assert accessible("V100", "") and accessible("", "")
    assert not accessible("", "V100")  # a node without a model never takes a pod naming one
    assert accessible("V100", "A100|V100") and not accessible("V100", "A100|T4")
    assert accessible("V100", "|")  # only empty names: any model


def test_amounts_hand_computed() -> None:
    typical = [
        TypicalPod(1000, 600, 1, "", 0.5),  # Q3: frag milli = 500 + 0 + 200 = 700 (devices < 600)
        TypicalPod(1000, 1000, 2, "", 0.25),  # Q2: all 1700 left is a fragment
        TypicalPod(4000, 0, 0, "", 0.25),  # XL: all 1700
    ]
    # Q2 = 0.5 * 700 + 0.25 * 1700 = 350 + 425 = 775; Q3 = 0.5 * (1700 - 700) = 500; XL = 0.25 * 1700 = 425
    assert node_frag_amount(CPU, LEFT, MODEL, typical) == [0.0, 775.0, 500.0, 0.0, 425.0, 0.0, 0.0]
    # the score: every quadrant but Q3: 775 + 425
    assert node_frag_score(CPU, LEFT, MODEL, typical) == 1200.0


def test_amounts_no_access_and_lack_cpu() -> None:
    typical = [
        TypicalPod(1000, 500, 1, "T4", 0.4),  # no access: 0.4 * 1700 = 680
        TypicalPod(9000, 600, 1, "", 0.6),  # Q4: 0.6 * 1700 = 1020
    ]
    assert node_frag_amount(CPU, LEFT, MODEL, typical) == [0.0, 0.0, 0.0, 1020.0, 0.0, 0.0, 680.0]
    assert node_frag_score(CPU, LEFT, MODEL, typical) == 1700.0


def test_shares_outside_0_1_are_ignored() -> None:
    bad = TypicalPod.__new__(TypicalPod)
    object.__setattr__(bad, "cpu_milli", 0)
    for name, v in (("gpu_milli", 0), ("gpu_count", 0), ("gpu_model", ""), ("percentage", 1.5)):
        object.__setattr__(bad, name, v)
    assert node_frag_score(CPU, LEFT, MODEL, [bad]) == 0.0
    assert len(TypicalSet([bad])) == 0


def test_full_node_has_no_fragment() -> None:
    typical = [TypicalPod(1000, 500, 1, "", 1.0)]
    assert node_frag_score(CPU, (0, 0, 0, 0), MODEL, typical) == 0.0  # nothing left: nothing stranded
    assert node_frag_score(CPU, (), "", typical) == 0.0  # a CPU node


def _rand_typical(rng: random.Random, k: int) -> list[TypicalPod]:
    out = []
    weights = [rng.random() for _ in range(k)]
    s = sum(weights)
    for w in weights:
        kind = rng.random()
        cpu = rng.choice([0, 100, 1000, 4000, 8000, 16000, 64000])
        if kind < 0.2:
            out.append(TypicalPod(cpu, 0, 0, "", w / s))
        elif kind < 0.6:
            out.append(TypicalPod(cpu, rng.choice([50, 100, 250, 333, 500, 700, 999]), 1, rng.choice(["", "", "A", "A|B", "C"]), w / s))
        else:
            out.append(TypicalPod(cpu, 1000, rng.choice([1, 2, 4, 8]), rng.choice(["", "", "B", "A|B"]), w / s))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_numpy_form_equals_per_node_form(seed: int) -> None:
    rng = random.Random(seed)
    typical = _rand_typical(rng, rng.choice([1, 3, 12, 40]))
    ts = TypicalSet(typical)
    models = ["A", "B", "C"]
    w = 8
    states = []
    for _ in range(300):
        count = rng.choice([0, 1, 2, 4, 8])
        left = [rng.choice([0, 0, 100, 250, 500, 667, 1000, 1000]) for _ in range(count)]
        code = rng.choice([-1, 0, 1, 2]) if count else -1
        states.append((rng.choice([-500, 0, 100, 1000, 4000, 8000, 16000, 64000, 96000]), left, code))
    cpu = np.array([s[0] for s in states], np.int64)
    left = np.zeros((len(states), w), np.int64)
    for i, s in enumerate(states):
        left[i, : len(s[1])] = s[1]
    codes = np.array([s[2] for s in states], np.int64)
    acc = ts.access(models)[codes]
    got = ts.frag_scores(cpu, left, acc, chunk=64)
    for i, (c, lf, code) in enumerate(states):
        model = models[code] if code >= 0 else ""
        assert got[i] == node_frag_score(c, lf, model, typical), (c, lf, model)
