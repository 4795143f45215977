"""Helpers shared by the default plugins (kube-scheduler's ``framework/plugins/helper``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.sdk import Status, default_normalize_score

__all__ = ["SKIP", "as_views", "default_normalize_score"]

#: the Skip status the default plugins return (PreFilter, PreScore, PreBind): one object, since
#: the framework only reads a Skip's code (a new one per plugin and pod was ~11 allocations a
#: cycle); nothing may change it
SKIP = Status.skip()


def as_views(view: Any, old: Any, new: Any) -> tuple[Any, Any]:
    """kube-scheduler's ``util.As`` for queueing hints: both objects as ``view`` (``Pod``,
    ``Node``; ``None`` stays ``None``); ``TypeError`` for an object of another type.

    The scheduler already passes views for Pod and Node events; this also takes the API
    mappings a hint's test table (ported from kube-scheduler's) passes, in one place."""
    out = []
    for o in (old, new):
        if o is None or isinstance(o, view):
            out.append(o)
        elif isinstance(o, Mapping):
            out.append(view(o))
        else:
            raise TypeError(f"expected {view.__name__}, but got {type(o).__name__}")
    return out[0], out[1]

