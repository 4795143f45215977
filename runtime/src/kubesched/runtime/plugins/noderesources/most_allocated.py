"""kube-scheduler's ``noderesources/most_allocated.go``: favour nodes with more requested resources
(bin packing).

score = sum((min(requested, capacity) * MaxNodeScore / capacity) * weight) / sum(weight), in int64
arithmetic over the resources the node has.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.sdk import MAX_NODE_SCORE

from .args import ResourceSpec
from .resource_allocation import Scorer

__all__ = ["most_requested_score", "most_resource_scorer"]


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """mostResourceScorer."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for i in range(len(requested)):
            capacity = allocatable[i]
            if capacity == 0:
                continue
            weight = weights[i]
            node_score += most_requested_score(requested[i], capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer


def most_requested_score(requested: int, capacity: int) -> int:
    """The used capacity on a 0..MaxNodeScore scale; a request over capacity (possible because
    pods without requests count default amounts) counts as full."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return (requested * MAX_NODE_SCORE) // capacity
