"""The one table of extension points and hooks.

Everything else reads it: the hook specifications (:mod:`kubesched.sdk.hookspecs`), the
configuration (which points a profile may list), the registry (which points a plugin implements,
which method names are hooks), the framework's wiring, the tracer's labels, the metrics' labels
and the docs generator. Adding an extension point means adding a row here and a spec in
``hookspecs.py`` (a test checks that the two agree).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache

__all__ = [
    "EXTENSION_POINTS",
    "HOOKS",
    "OTHER_HOOKS",
    "ExtensionPoint",
    "HookInfo",
    "hook_info",
    "hook_params",
]


@dataclass(frozen=True)
class HookInfo:
    """One hook of the SDK."""

    #: the hook's (and the implementing method's) name, e.g. ``"pre_filter_add_pod"``
    name: str
    #: what traces and contract messages call it, e.g. ``"PreFilterAddPod"``
    label: str
    #: the configuration extension point that enables it (camelCase), or ``""`` for the hooks
    #: outside the table (``events_to_register``, ``sign_pod``)
    point: str = ""
    #: implementing this hook makes a plugin implement ``point``
    primary: bool = False
    #: what the hook may return, in words (used in the messages of contract violations)
    returns: str = "None or a Status"


@dataclass(frozen=True)
class ExtensionPoint:
    """One extension point, as written in KubeSchedulerConfiguration."""

    #: camelCase config name, e.g. ``"preFilter"``
    name: str
    #: kube-scheduler's name, e.g. ``"PreFilter"`` (the ``extension_point`` metric label)
    label: str
    hooks: tuple[HookInfo, ...]

    @property
    def hook_names(self) -> tuple[str, ...]:
        return tuple(h.name for h in self.hooks)

    @property
    def primary_hooks(self) -> tuple[str, ...]:
        return tuple(h.name for h in self.hooks if h.primary)


def _point(name: str, label: str, *hooks: tuple[str, str, bool, str]) -> ExtensionPoint:
    return ExtensionPoint(name, label, tuple(HookInfo(h, lbl, name, primary, ret) for h, lbl, primary, ret in hooks))


_STATUS = "None or a Status"
_STATUSES = "a sequence of None or Status, one per node"

#: Extension points in kube-scheduler's order, each with the hooks it runs.
EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    _point("preEnqueue", "PreEnqueue", ("pre_enqueue", "PreEnqueue", True, _STATUS)),
    _point("queueSort", "QueueSort", ("queue_sort_less", "QueueSort", True, "a bool")),
    _point(
        "preFilter",
        "PreFilter",
        ("pre_filter", "PreFilter", True, "None, a Status, a PreFilterResult or a (PreFilterResult | None, Status | None) tuple"),
        ("pre_filter_add_pod", "PreFilterAddPod", False, _STATUS),
        ("pre_filter_remove_pod", "PreFilterRemovePod", False, _STATUS),
    ),
    _point(
        "filter",
        "Filter",
        ("filter", "Filter", True, _STATUS),
        ("filter_batch", "FilterBatch", False, _STATUSES),
        ("filter_columns", "FilterColumns", False, "None or a (codes array, statuses) tuple"),
    ),
    _point(
        "postFilter",
        "PostFilter",
        ("post_filter", "PostFilter", True, "None, a Status, a PostFilterResult or a (PostFilterResult | None, Status | None) tuple"),
    ),
    _point("preScore", "PreScore", ("pre_score", "PreScore", True, _STATUS)),
    _point(
        "score",
        "Score",
        ("score", "Score", True, "an int (or an (int, Status) tuple)"),
        ("score_batch", "ScoreBatch", False, "a sequence of int, one per node, or a Status"),
        ("score_columns", "ScoreColumns", False, "None, an int64 array, one per row, or a Status"),
        ("normalize_score", "NormalizeScore", False, _STATUS),
        ("normalize_score_columns", "NormalizeScoreColumns", False, "an int64 array, one per score, or a Status"),
    ),
    _point(
        "reserve",
        "Reserve",
        ("reserve", "Reserve", True, _STATUS),
        ("unreserve", "Unreserve", True, "None"),
    ),
    _point("permit", "Permit", ("permit", "Permit", True, "None, a Status, or a (Status, timeout seconds) tuple")),
    _point(
        "preBind",
        "PreBind",
        ("pre_bind", "PreBind", True, _STATUS),
        ("pre_bind_pre_flight", "PreBindPreFlight", False, "None or a Status (Success, Skip or Error)"),
    ),
    _point("bind", "Bind", ("bind", "Bind", True, _STATUS)),
    _point("postBind", "PostBind", ("post_bind", "PostBind", True, "None")),
)

#: Hooks outside the extension point table: any plugin may implement ``events_to_register``;
#: ``sign_pod`` is asked of the plugins enabled at filter and score.
OTHER_HOOKS: tuple[HookInfo, ...] = (
    HookInfo("events_to_register", "EnqueueExtensions", returns="a sequence of ClusterEvent or ClusterEventWithHint"),
    HookInfo("sign_pod", "SignPod", returns="a hashable value or None"),
)

#: Every hook by name.
HOOKS: dict[str, HookInfo] = {h.name: h for p in EXTENSION_POINTS for h in p.hooks} | {h.name: h for h in OTHER_HOOKS}

_POINTS: dict[str, ExtensionPoint] = {p.name: p for p in EXTENSION_POINTS}


def hook_info(name: str) -> HookInfo:
    """The row of hook ``name``; ``KeyError`` for a name that is not a hook."""
    return HOOKS[name]


@cache
def hook_params(name: str) -> tuple[str, ...]:
    """The arguments of hook ``name``'s specification (:mod:`kubesched.sdk.hookspecs`), in
    order, e.g. ``("state", "pod", "node_name")``; ``KeyError`` for a name that is not a hook."""
    from . import hookspecs  # it reads this table

    hook_info(name)
    return tuple(inspect.signature(getattr(hookspecs, name)).parameters)


def extension_point(name: str) -> ExtensionPoint:
    """The extension point named ``name`` (camelCase); ``KeyError`` otherwise."""
    return _POINTS[name]


__all__ += ["extension_point"]
