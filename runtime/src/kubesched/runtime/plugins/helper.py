"""Helpers shared by the default plugins (kube-scheduler's ``framework/plugins/helper``)."""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.sdk import MAX_NODE_SCORE, NodeScore, Status

__all__ = ["default_normalize_score"]


def default_normalize_score(max_priority: int, reverse: bool, scores: Sequence[NodeScore]) -> Status | None:
    """Scale scores to ``0..max_priority`` by the highest one; ``reverse`` flips them
    (helper.DefaultNormalizeScore)."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return None
    for s in scores:
        score = s.score
        score = max_priority * score // max_count
        if reverse:
            score = max_priority - score
        s.score = score
    return None


MAX_SCORE = MAX_NODE_SCORE
