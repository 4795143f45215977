"""kube-scheduler's ``noderesources/requested_to_capacity_ratio.go``: score each resource by a
user-defined broken linear function of its utilization (0..100), then take the weighted mean.

Shape scores are given on a 0..MaxCustomPriorityScore (10) scale and multiplied by
MaxNodeScore / MaxCustomPriorityScore (10). A resource whose request exceeds its capacity is scored
at 100% utilization; only resources with a positive score count towards the weight sum; the mean is
rounded half away from zero (Go's ``math.Round``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.sdk import MAX_NODE_SCORE

from .args import MAX_CUSTOM_PRIORITY_SCORE, ResourceSpec, UtilizationShapePoint
from .resource_allocation import ColumnScorer, PairScorer, Scorer
from .shape import FunctionShapePoint, build_broken_linear_function

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "MAX_UTILIZATION",
    "build_requested_to_capacity_ratio_scorer_function",
    "requested_to_capacity_ratio_column_scorer",
    "requested_to_capacity_ratio_pair_scorer",
    "requested_to_capacity_ratio_scorer",
]

MAX_UTILIZATION = 100


def _go_round(x: float) -> int:
    """math.Round: the nearest integer, halves away from zero (``round()`` rounds halves to even)."""
    a = abs(x)
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1
    return r if x >= 0 else -r


def _resource_scoring_function(scoring_function_shape: Sequence[FunctionShapePoint]) -> Callable[[int, int], int]:
    raw_scoring_function = build_broken_linear_function(scoring_function_shape)

    def resource_scoring_function(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw_scoring_function(MAX_UTILIZATION)
        # requested >= 0 and capacity > 0 here, so floor division is Go's truncation
        return raw_scoring_function(requested * MAX_UTILIZATION // capacity)

    return resource_scoring_function


def build_requested_to_capacity_ratio_scorer_function(
    scoring_function_shape: Sequence[FunctionShapePoint], resources: Sequence[ResourceSpec]
) -> Scorer:
    """buildRequestedToCapacityRatioScorerFunction (the scorer ignores ``allocated``)."""
    resource_scoring_function = _resource_scoring_function(scoring_function_shape)
    weights = tuple(r.weight for r in resources)

    def scorer(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for i in range(len(requested)):
            if allocatable[i] == 0:
                continue
            weight = weights[i]
            resource_score = resource_scoring_function(requested[i], allocatable[i])
            if resource_score > 0:
                node_score += resource_score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return _go_round(node_score / weight_sum)

    return scorer


def _scaled(shape: Sequence[UtilizationShapePoint]) -> list[FunctionShapePoint]:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return [FunctionShapePoint(int(p.utilization), int(p.score) * scale) for p in shape]


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    """requestedToCapacityRatioScorer: scales the shape's scores to the node score range."""
    return build_requested_to_capacity_ratio_scorer_function(_scaled(shape), resources)


def requested_to_capacity_ratio_pair_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> PairScorer:
    """:func:`requested_to_capacity_ratio_scorer` for the resources (cpu, memory), on ints."""
    resource_scoring_function = _resource_scoring_function(_scaled(shape))
    w0, w1 = (r.weight for r in resources)

    def scorer(r0: int, r1: int, u0: int, u1: int, a0: int, a1: int) -> int:
        node_score = weight_sum = 0
        if a0:
            s = resource_scoring_function(r0, a0)
            if s > 0:
                node_score = s * w0
                weight_sum = w0
        if a1:
            s = resource_scoring_function(r1, a1)
            if s > 0:
                node_score += s * w1
                weight_sum += w1
        if weight_sum == 0:
            return 0
        return _go_round(node_score / weight_sum)

    return scorer


def requested_to_capacity_ratio_column_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> ColumnScorer:
    """The scorer over columns: the broken linear function tabulated on its integer domain
    (utilization 0..100), the weighted mean rounded as Go's math.Round."""
    raw = build_broken_linear_function(_scaled(shape))
    table = np.array([raw(u) for u in range(MAX_UTILIZATION + 1)], np.int64)
    weights = tuple(r.weight for r in resources)

    def scorer(requested: list[NDArray[np.int64]], allocated: list[NDArray[np.int64]], allocatable: list[NDArray[np.int64]]) -> NDArray[np.int64]:
        n = len(requested[0]) if requested else 0
        node_score = np.zeros(n, np.int64)
        weight_sum = np.zeros(n, np.int64)
        for i in range(len(requested)):
            cap = allocatable[i]
            has = cap != 0
            if not has.any():
                continue
            req = requested[i]
            util = np.where(req > cap, MAX_UTILIZATION, (req * MAX_UTILIZATION) // np.where(has, cap, 1))
            rs = table[np.clip(util, 0, MAX_UTILIZATION)]
            use = has & (rs > 0)
            node_score += np.where(use, rs * weights[i], 0)
            weight_sum += np.where(use, weights[i], 0)
        out = np.zeros(n, np.int64)
        nz = weight_sum != 0
        if nz.any():
            x = node_score[nz] / weight_sum[nz]
            r = np.floor(x)
            out[nz] = (r + (x - r >= 0.5)).astype(np.int64)
        return out

    return scorer
