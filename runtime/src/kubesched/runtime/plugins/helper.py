"""Helpers shared by the default plugins (kube-scheduler's ``framework/plugins/helper``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.sdk import MAX_NODE_SCORE, NodeScore, Status

__all__ = ["as_views", "default_normalize_score"]


def as_views(view: Any, old: Any, new: Any) -> tuple[Any, Any]:
    """kube-scheduler's ``util.As`` for queueing hints: both objects as ``view`` (``Pod``,
    ``Node``; ``None`` stays ``None``); ``TypeError`` for an object of another type."""
    out = []
    for o in (old, new):
        if o is None or isinstance(o, view):
            out.append(o)
        elif isinstance(o, Mapping):
            out.append(view(o))
        else:
            raise TypeError(f"expected {view.__name__}, but got {type(o).__name__}")
    return out[0], out[1]


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
