"""kube-scheduler's ``noderesources/most_allocated.go``: favour nodes with more requested resources
(bin packing).

score = sum((min(requested, capacity) * MaxNodeScore / capacity) * weight) / sum(weight), in int64
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

__all__ = ["most_column_scorer", "most_pair_column_scorer", "most_pair_scorer", "most_requested_score", "most_resource_scorer"]


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """mostResourceScorer."""
    return weighted_scorer([r.weight for r in resources], most_requested_score)


def most_pair_scorer(resources: Sequence[ResourceSpec]) -> PairScorer:
    """mostResourceScorer for the resources (cpu, memory), on ints."""
    return weighted_pair_scorer([r.weight for r in resources], most_requested_score)


def most_column_scorer(resources: Sequence[ResourceSpec]) -> ColumnScorer:
    """mostResourceScorer over columns."""
    return weighted_column_scorer([r.weight for r in resources], most_requested_score_columns)


def most_pair_column_scorer(resources: Sequence[ResourceSpec]) -> PairColumnScorer:
    """mostResourceScorer over (cpu, memory) columns (every node has both)."""
    return weighted_pair_column_scorer([r.weight for r in resources], most_requested_score_columns)


def most_requested_score_columns(requested: NDArray[np.int64], capacity: NDArray[np.int64]) -> NDArray[np.int64]:
    """:func:`most_requested_score` per entry (capacity > 0)."""
    return (np.minimum(requested, capacity) * MAX_NODE_SCORE) // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """The used capacity on a 0..MaxNodeScore scale; a request over capacity (possible because
    pods without requests count default amounts) counts as full."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return (requested * MAX_NODE_SCORE) // capacity
