"""NodeResourcesBalancedAllocation: favour nodes whose resource utilizations stay close together.

A port of kube-scheduler's ``noderesources/balanced_allocation.go`` (v1.34; see the package
docstring). For the configured resources (default cpu and memory) it computes each utilization
fraction ``(requested on node + pod's request) / allocatable`` (capped at 1, resources the node
lacks or scalar resources the pod does not request left out) and scores
``int((1 - std) * MaxNodeScore)``, where std is ``|f1 - f2| / 2`` for two resources and the
population standard deviation for more. Requests are the pods' real requests (``useRequested``),
not the 100m/200Mi defaults.

PreScore returns Skip for a pod that requests none of the resources (best-effort pods would all
score alike and pile onto one node; kubernetes#129138). The plugin has no EnqueueExtensions, as in
Go: it never rejects a pod.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

from kubesched.sdk import MAX_NODE_SCORE, CycleState, NodeInfo, Pod, StateData, Status, hookimpl

from .args import NodeResourcesBalancedAllocationArgs
from .features import DEFAULT_FEATURES, Features
from .pod_requests import resources_signature
from .resource_allocation import ResourceAllocationScorer

__all__ = ["NAME", "PRE_SCORE_STATE_KEY", "BalancedAllocation", "balanced_resource_scorer"]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


class _PreScoreState(StateData):
    """balancedAllocationPreScoreState: the pod's requests in the order of the resources."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        return self


def balanced_resource_scorer(requested: list[int], allocatable: list[int]) -> int:
    """balancedResourceScorer: (1 - standard deviation of the utilization fractions) * 100."""
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
        self.resources = list(args.resources)
        self.scorer = ResourceAllocationScorer(
            NAME,
            balanced_resource_scorer,
            self.resources,
            use_requested=True,
            enable_in_place_pod_vertical_scaling=self.features.enable_in_place_pod_vertical_scaling,
            enable_pod_level_resources=self.features.enable_pod_level_resources,
        )

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod) -> Status | None:
        reqs = self.scorer.calculate_pod_resource_request_list(pod)
        if self.scorer.is_best_effort_pod(reqs):
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(reqs))
        return None

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable:
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
    def score_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Any] | Status:
        reqs = self._pod_requests(state, pod)
        return [0] * len(nodes) if reqs is None else self.scorer.score_many(nodes, reqs)
