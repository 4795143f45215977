"""Helpers for Score plugins (kube-scheduler's ``framework/plugins/helper``)."""

from __future__ import annotations

from collections.abc import Sequence

from .status import NodeScore, Status

__all__ = ["default_normalize_score"]


def default_normalize_score(max_priority: int, reverse: bool, scores: Sequence[NodeScore]) -> Status | None:
    """Scale ``scores`` in place to ``0..max_priority`` by the highest one (integer division);
    ``reverse`` flips them (``max_priority - score``). All zero: unchanged, or all
    ``max_priority`` when ``reverse``. kube-scheduler's ``helper.DefaultNormalizeScore``; use it
    from a ``normalize_score`` hook::

        @hookimpl
        def normalize_score(self, scores):
            return default_normalize_score(MAX_NODE_SCORE, False, scores)
    """
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
        score = max_priority * s.score // max_count
        if reverse:
            score = max_priority - score
        s.score = score
    return None
