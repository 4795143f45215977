"""kube-scheduler's ``noderesources/least_allocated.go``: favour nodes with more free resources.

score = sum(((capacity - requested) * MaxNodeScore / capacity) * weight) / sum(weight), in int64
arithmetic over the resources the node has.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.sdk import MAX_NODE_SCORE

from .args import ResourceSpec
from .resource_allocation import Scorer

__all__ = ["least_requested_score", "least_resource_scorer"]


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """leastResourceScorer."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for i in range(len(requested)):
            capacity = allocatable[i]
            if capacity == 0:
                continue
            weight = weights[i]
            node_score += least_requested_score(requested[i], capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused capacity on a 0..MaxNodeScore scale; 0 when over capacity."""
    if capacity == 0:
        return 0
    if requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity
