"""NodeResourcesBalancedAllocation: favour nodes whose resource utilizations the pod brings closer
together.

A port of kube-scheduler's ``noderesources/balanced_allocation.go`` (v1.36; see the package
docstring). For the configured resources (default cpu and memory) it computes each utilization
fraction ``requested / allocatable`` (capped at 1, resources the node lacks or scalar resources the
pod does not request left out) and the balance ``int((1 - std) * MaxNodeScore)``, where std is
``|f1 - f2| / 2`` for two resources and the population standard deviation for more, once with the
pod (requested on the node + the pod's request) and once without it. Since v1.36 the score is the
change the pod makes: ``50 + (50 + with pod - without pod) / 2`` (int64, truncating), in [50, 100].
Requests are the pods' real requests (``useRequested``), not the 100m/200Mi defaults.

PreScore returns Skip for a pod that requests none of the resources (best-effort pods would all
score alike and pile onto one node; kubernetes#129138). The plugin has no EnqueueExtensions, as in
Go: it never rejects a pod. Go's v1.36 SignPod signs the pod's resource requests, and refuses to sign
a pod whose extended resources a DeviceClass serves (DRAExtendedResource); kubesched's sign_pod
returns None for it. Not ported: scoring such resources from ResourceSlice devices (see
``resource_allocation.py``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import (
    MAX_NODE_SCORE,
    CycleState,
    NodeColumns,
    NodeInfo,
    Pod,
    StateData,
    Status,
    hookimpl,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

from ..helper import SKIP
from .args import NodeResourcesBalancedAllocationArgs
from .features import DEFAULT_FEATURES, Features
from .fit import dra_resolver, dra_signature_refusal
from .pod_requests import resources_signature
from .resource_allocation import ResourceAllocationScorer

__all__ = [
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "BalancedAllocation",
    "balanced_pair_column_scorer",
    "balanced_pair_scorer",
    "balanced_resource_score",
    "balanced_resource_scorer",
]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


class _PreScoreState(StateData):
    """balancedAllocationPreScoreState: the pod's requests in the order of the resources."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        return self


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """balancedResourceScore: (1 - standard deviation of the utilization fractions) * 100, in
    [50, 100]."""
    fractions: list[float] = []
    total = 0.0
    for i in range(len(requested)):
        if allocatable[i] == 0:
            continue
        fraction = float(requested[i]) / float(allocatable[i])
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    n = len(fractions)
    if n == 2:
        # the common cpu+memory case: std = |f1 - f2| / 2
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / n
        s = 0.0
        for f in fractions:
            s = s + (f - mean) * (f - mean)
        std = math.sqrt(s / n)
    return int((1 - std) * float(MAX_NODE_SCORE))


def _improvement(score_with_pod: int, score_without_pod: int) -> int:
    """``MaxNodeScore/2 + (MaxNodeScore/2 + with - without) / 2`` in int64 arithmetic (the
    division truncates toward zero)."""
    d = _HALF + score_with_pod - score_without_pod
    return _HALF + (d // 2 if d >= 0 else -(-d // 2))


_HALF = MAX_NODE_SCORE // 2


def balanced_resource_scorer(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
    """balancedResourceScorer (v1.36): the change the pod makes to the node's balance. Both
    balance scores are in [50, 100], their difference in [-50, 50]; the result is in [50, 100]:
    about 75 when the pod changes little, towards 100 when it improves the balance, towards 50
    when it worsens it."""
    return _improvement(
        balanced_resource_score(requested, allocatable), balanced_resource_score(allocated, allocatable)
    )


def _pair_score(f0: float, f1: float) -> int:
    # balancedResourceScore of two fractions (each already capped at 1)
    return int((1 - abs((f0 - f1) / 2)) * float(MAX_NODE_SCORE))


def balanced_pair_scorer(r0: int, r1: int, u0: int, u1: int, a0: int, a1: int) -> int:
    """:func:`balanced_resource_scorer` for (cpu, memory) on ints (the hot path; no lists)."""
    if a0 and a1:
        fa0 = float(a0)
        fa1 = float(a1)
        f0 = float(r0) / fa0
        f1 = float(r1) / fa1
        with_pod = _pair_score(f0 if f0 <= 1 else 1.0, f1 if f1 <= 1 else 1.0)
        f0 = float(u0) / fa0
        f1 = float(u1) / fa1
        without_pod = _pair_score(f0 if f0 <= 1 else 1.0, f1 if f1 <= 1 else 1.0)
        d = _HALF + with_pod - without_pod
        return _HALF + (d // 2 if d >= 0 else -(-d // 2))
    # one fraction or none: std 0 with and without the pod
    return _improvement(MAX_NODE_SCORE, MAX_NODE_SCORE)


def balanced_column_scorer(requested: list[NDArray[np.int64]], allocated: list[NDArray[np.int64]], allocatable: list[NDArray[np.int64]]) -> NDArray[np.int64]:
    """:func:`balanced_resource_scorer` over columns, for two resources (the fractions of the
    resources a node has: both, or fewer than two and so std 0 with and without the pod)."""
    a0, a1 = allocatable
    both = (a0 != 0) & (a1 != 0)
    every = bool(both.all())
    if not every and not both.any():
        return np.full(len(a0), _improvement(MAX_NODE_SCORE, MAX_NODE_SCORE), np.int64)
    fa0 = (a0 if every else np.where(both, a0, 1)).astype(np.float64)
    fa1 = (a1 if every else np.where(both, a1, 1)).astype(np.float64)

    def pair(x0: NDArray[np.int64], x1: NDArray[np.int64]) -> NDArray[np.int64]:
        f0 = np.minimum(x0.astype(np.float64) / fa0, 1.0)
        f1 = np.minimum(x1.astype(np.float64) / fa1, 1.0)
        return np.trunc((1 - np.abs((f0 - f1) / 2)) * float(MAX_NODE_SCORE)).astype(np.int64)

    d = _HALF + pair(requested[0], requested[1]) - pair(allocated[0], allocated[1])
    imp = _HALF + np.where(d >= 0, d // 2, -((-d) // 2))
    if every:
        return imp
    out = np.full(len(a0), _improvement(MAX_NODE_SCORE, MAX_NODE_SCORE), np.int64)
    out[both] = imp[both]
    return out


def balanced_pair_column_scorer(allocatable: NDArray[np.int64], allocated: NDArray[np.int64], pod: NDArray[np.int64]) -> NDArray[np.int64]:
    """:func:`balanced_column_scorer` for (cpu, memory) on nodes that all have both (a
    :data:`~.resource_allocation.PairColumnScorer`): the fractions with and without the pod in
    one array, the same float64 operations in the same order."""
    x = np.empty((2,) + allocated.shape, np.float64)
    x[0] = allocated + pod  # the int64 sum, then float64 (as astype)
    x[1] = allocated
    x /= allocatable.astype(np.float64)
    np.minimum(x, 1.0, out=x)
    std = x[:, 0] - x[:, 1]  # rows: with the pod, without it
    std /= 2
    np.abs(std, out=std)
    # int((1 - std) * MaxNodeScore): the float64 -> int64 cast truncates toward zero
    score = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    # _HALF + d / 2 (Go's int64 division, toward zero) of d = _HALF + score[0] - score[1]: a
    # table by score[0] - score[1] (-MAX..MAX; a negative index wraps to the table's end)
    return _IMPROVEMENT.take(score[0] - score[1], mode="wrap")


def _improvement_table() -> NDArray[np.int64]:
    diff = np.arange(-MAX_NODE_SCORE, MAX_NODE_SCORE + 1)
    d = _HALF + diff
    out = np.empty(len(diff), np.int64)
    out[diff] = _HALF + ((d + (d < 0)) >> 1)  # diff -k at index len - k
    return out


#: balanced_pair_column_scorer's result by score with the pod - score without it
_IMPROVEMENT = _improvement_table()


class BalancedAllocation:
    """The NodeResourcesBalancedAllocation plugin (PreScore, Score)."""

    name = NAME
    Args = NodeResourcesBalancedAllocationArgs
    args_kind = "NodeResourcesBalancedAllocationArgs"

    def __init__(
        self,
        args: NodeResourcesBalancedAllocationArgs | None = None,
        handle: Any = None,
        *,
        features: Features | None = None,
    ) -> None:
        if args is None:
            args = NodeResourcesBalancedAllocationArgs()
        args.validate()  # NewBalancedAllocation validates, whoever built the args
        self.args = args
        self.handle = handle
        self.features = features if features is not None else DEFAULT_FEATURES
        #: DRAExtendedResource: SignPod refuses pods whose extended resources a DeviceClass serves
        self.resolver = dra_resolver(self.features, handle)
        self.resources = list(args.resources)
        self.scorer = ResourceAllocationScorer(
            NAME,
            balanced_resource_scorer,
            self.resources,
            pair_scorer=balanced_pair_scorer,
            column_scorer=balanced_column_scorer if len(self.resources) == 2 else None,
            pair_column_scorer=balanced_pair_column_scorer,
            use_requested=True,
            enable_in_place_pod_vertical_scaling=self.features.enable_in_place_pod_vertical_scaling,
            enable_pod_level_resources=self.features.enable_pod_level_resources,
            enable_in_place_pod_level_resources_vertical_scaling=(
                self.features.enable_in_place_pod_level_resources_vertical_scaling
            ),
        )

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod) -> Status | None:
        reqs = self.scorer.calculate_pod_resource_request_list(pod)
        if self.scorer.is_best_effort_pod(reqs):
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(reqs))
        return None

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable:
        if dra_signature_refusal(self.resolver, pod) is not None:
            return None  # Go: Unschedulable "signature disabled when dra extended resources ..."
        return resources_signature(pod)

    def _pod_requests(self, state: CycleState, pod: Pod) -> list[int] | None:
        """The pod's requests from PreScore, or computed; None for a best-effort pod scored
        without PreScore (its score is 0)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if type(s) is _PreScoreState:
            return s.pod_requests
        reqs = self.scorer.calculate_pod_resource_request_list(pod)
        return None if self.scorer.is_best_effort_pod(reqs) else reqs

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        reqs = self._pod_requests(state, pod)
        return 0 if reqs is None else self.scorer.score(node_info, reqs)

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> Any:
        reqs = self._pod_requests(state, pod)
        return np.zeros(len(rows), np.int64) if reqs is None else self.scorer.score_columns(columns, rows, reqs)

    @hookimpl
    def score_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Any] | Status:
        reqs = self._pod_requests(state, pod)
        return [0] * len(nodes) if reqs is None else self.scorer.score_many(nodes, reqs)
