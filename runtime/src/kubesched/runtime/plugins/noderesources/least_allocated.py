"""kube-scheduler's ``noderesources/least_allocated.go``: favour nodes with more free resources.

score = sum(((capacity - requested) * MaxNodeScore / capacity) * weight) / sum(weight), in int64
arithmetic over the resources the node has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.sdk import MAX_NODE_SCORE

from .args import ResourceSpec
from .resource_allocation import (
    ColumnScorer,
    PairColumnScorer,
    PairScorer,
    Scorer,
    weighted_column_scorer,
    weighted_pair_column_scorer,
    weighted_pair_scorer,
    weighted_scorer,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["least_column_scorer", "least_pair_column_scorer", "least_pair_scorer", "least_requested_score", "least_resource_scorer"]


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """leastResourceScorer."""
    return weighted_scorer([r.weight for r in resources], least_requested_score)


def least_pair_scorer(resources: Sequence[ResourceSpec]) -> PairScorer:
    """leastResourceScorer for the resources (cpu, memory), on ints."""
    return weighted_pair_scorer([r.weight for r in resources], least_requested_score)


def least_column_scorer(resources: Sequence[ResourceSpec]) -> ColumnScorer:
    """leastResourceScorer over columns."""
    return weighted_column_scorer([r.weight for r in resources], least_requested_score_columns)


def least_pair_column_scorer(resources: Sequence[ResourceSpec]) -> PairColumnScorer:
    """leastResourceScorer over (cpu, memory) columns (every node has both)."""
    return weighted_pair_column_scorer([r.weight for r in resources], least_requested_score_columns)


def least_requested_score_columns(requested: NDArray[np.int64], capacity: NDArray[np.int64]) -> NDArray[np.int64]:
    """:func:`least_requested_score` per entry (capacity > 0)."""
    # over capacity: (capacity - requested) < 0, clipped to 0, scores 0
    return (np.maximum(capacity - requested, 0) * MAX_NODE_SCORE) // capacity


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused capacity on a 0..MaxNodeScore scale; 0 when over capacity."""
    if capacity == 0:
        return 0
    if requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity
