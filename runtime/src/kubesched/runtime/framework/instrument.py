"""Metrics of the framework (kube-scheduler's ``instrumented_plugins.go`` and the extension-point
durations of ``framework.go``), chosen once, at build time.

* Each plugin's entry of a timed hook is wrapped once when the framework is built; the runners
  use the wrapped entries only in cycles whose ``state.record_plugin_metrics`` is set (sampled,
  as kube-scheduler does), the bare bound methods otherwise.
* A framework built with metrics is an :class:`InstrumentedFramework`: its runners observe the
  extension point's duration once per call (Score's column path too).
* The column forms (``filter_columns``, ``score_columns``) are wrapped once as well: a sampled
  cycle keeps the column path and observes one call per plugin for all nodes. ``score_totals`` runs ``run_score_plugins``, so a
  cycle's Score is observed once whichever of the two the scheduler calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.sdk import (
    CycleState,
    NodeColumns,
    NodeInfo,
    Pod,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from kubesched.sdk.points import HOOKS, extension_point

from .contract import SUCCESS
from .interface import Entry, NodePluginScores
from .runners import FrameworkImpl

__all__ = ["PLUGIN_TIMED_HOOKS", "InstrumentedFramework", "timed_columns", "timed_entries"]

#: the hooks whose plugin calls are timed (scheduler_plugin_execution_duration_seconds)
PLUGIN_TIMED_HOOKS = ("pre_filter", "filter", "pre_score", "score", "reserve", "permit", "pre_bind_pre_flight", "pre_bind", "bind")

#: hooks that kube-scheduler times under their own ``extension_point`` label, not their point's
_OWN_LABEL = frozenset({"pre_bind_pre_flight"})


def _label(hook: str) -> str:
    """The ``extension_point`` label of ``hook``: its point's (``PreFilter``), or its own
    (``PreBindPreFlight``, which kube-scheduler observes apart from PreBind)."""
    info = HOOKS[hook]
    return info.label if hook in _OWN_LABEL else extension_point(info.point).label


def _status_label(out: Any) -> str:
    if out is None:
        return "Success"
    if isinstance(out, Status):
        return out.code.label
    if isinstance(out, tuple) and out and isinstance(out[0], Status):
        return out[0].code.label
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Status):
        return out[1].code.label
    return "Success"


def _timed_call(fn: Callable[..., Any], metrics: Any, plugin: str, point: str) -> Callable[..., Any]:
    perf = time.perf_counter

    def timed(*args: Any) -> Any:
        t0 = perf()
        try:
            out = fn(*args)
        except Exception:
            metrics.plugin(plugin, point, "Error", perf() - t0)
            raise
        metrics.plugin(plugin, point, _status_label(out), perf() - t0)
        return out

    return timed


def timed_entries(entries: Mapping[str, list[Entry]], metrics: Any) -> dict[str, list[Entry]]:
    """The entries of :data:`PLUGIN_TIMED_HOOKS`, each plugin wrapped once."""
    out: dict[str, list[Entry]] = {}
    for hook in PLUGIN_TIMED_HOOKS:
        point = _label(hook)
        out[hook] = [(name, _timed_call(fn, metrics, name, point)) for name, fn in entries[hook]]
    return out


def timed_columns(
    filter_columns: Mapping[str, Callable[..., Any]], score_columns: Mapping[str, Callable[..., Any]], metrics: Any
) -> dict[str, dict[str, Callable[..., Any]]]:
    """The column forms of Filter and Score, each wrapped once: a sampled cycle that takes the
    column path observes one call per plugin (covering every node), where the per-node path
    observes one per node."""
    return {
        "filter_columns": {name: _timed_call(fn, metrics, name, _label("filter")) for name, fn in filter_columns.items()},
        "score_columns": {name: _timed_call(fn, metrics, name, _label("score")) for name, fn in score_columns.items()},
    }


_PRE_FILTER, _POST_FILTER, _PRE_SCORE, _SCORE = _label("pre_filter"), _label("post_filter"), _label("pre_score"), _label("score")
_RESERVE, _PERMIT, _PRE_BIND, _BIND = _label("reserve"), _label("permit"), _label("pre_bind"), _label("bind")
_PRE_BIND_PRE_FLIGHT = _label("pre_bind_pre_flight")


class InstrumentedFramework(FrameworkImpl):
    """A framework that observes each extension point's duration (and, in sampled cycles, each
    plugin's) in :class:`~kubesched.runtime.observe.metrics.Metrics`."""

    def __init__(self, profile_name: str, percentage_of_nodes_to_score: int | None, metrics: Any) -> None:
        super().__init__(profile_name, percentage_of_nodes_to_score)
        self.metrics = metrics

    def _observe(self, point: str, st: Status, t0: float) -> None:
        self.metrics.extension_point(point, st.code.label, self.profile_name, time.perf_counter() - t0)

    def run_pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status, set[str]]:
        t0 = time.perf_counter()
        out = super().run_pre_filter(state, pod, nodes)
        self._observe(_PRE_FILTER, out[1], t0)
        return out

    def run_post_filter(self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        t0 = time.perf_counter()
        out = super().run_post_filter(state, pod, filtered_node_status)
        self._observe(_POST_FILTER, out[1], t0)
        return out

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        t0 = time.perf_counter()
        st = super().run_pre_score_plugins(state, pod, nodes)
        self._observe(_PRE_SCORE, st, t0)
        return st

    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        details: bool = False,
        totals_only: bool = False,
        reuse: dict[Any, Any] | None = None,
    ) -> tuple[list[NodePluginScores], Status]:
        t0 = time.perf_counter()
        out = super().run_score_plugins(state, pod, nodes, details, totals_only, reuse)
        self._observe(_SCORE, out[1], t0)
        return out

    def run_score_columns(
        self,
        state: CycleState,
        pod: Pod,
        columns: NodeColumns,
        rows: Any,
        centries: Sequence[tuple[str, Callable[..., Any], Callable[..., Any] | None, int]],
        details: list[tuple[str, Any, Any, int]] | None = None,
    ) -> Any:
        t0 = time.perf_counter()
        out = super().run_score_columns(state, pod, columns, rows, centries, details)
        if out is not None:  # None: the per-node Score runs next and is observed there
            self._observe(_SCORE, out if isinstance(out, Status) else SUCCESS, t0)
        return out

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        st = super().run_reserve(state, pod, node_name)
        self._observe(_RESERVE, st, t0)
        return st

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        st = super().run_permit(state, pod, node_name)
        self._observe(_PERMIT, st, t0)
        return st

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        st = super().run_pre_bind_pre_flights(state, pod, node_name)
        self._observe(_PRE_BIND_PRE_FLIGHT, st, t0)
        return st

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        st = super().run_pre_bind(state, pod, node_name)
        self._observe(_PRE_BIND, st, t0)
        return st

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        st = super().run_bind(state, pod, node_name)
        self._observe(_BIND, st, t0)
        return st
