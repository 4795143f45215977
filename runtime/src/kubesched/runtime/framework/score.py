"""Score, NormalizeScore, the range check and the weights (kube-scheduler's RunScorePlugins)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.sdk import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Code,
    CycleState,
    NodeInfo,
    NodeScore,
    Pod,
    Status,
)

from .contract import SUCCESS, contract_error, normalized_out, score_out
from .interface import Entry, NodePluginScores, PluginScore

__all__ = ["ScoreRunners", "normalize_error", "normalize_node_scores"]

#: key of the memo of normalized score columns inside a score reuse table (node names are str)
_NORMALIZED = ("normalized",)


def _score_err(name: str, e: BaseException) -> Status:
    return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {type(e).__name__}: {e}', plugin=name, error=e)


def normalize_error(name: str, detail: str, error: BaseException | None = None) -> Status:
    """The Error of a failing NormalizeScore (either form)."""
    return Status(Code.ERROR, f'running Normalize on Score plugins: plugin "{name}" failed with: {detail}', plugin=name, error=error)


def normalize_node_scores(
    norm: Callable[..., Any], name: str, state: CycleState, pod: Pod, names: Sequence[str], raw: Sequence[int]
) -> list[int] | Status:
    """A plugin's ``normalize_score`` on NodeScore lists: the normalized values (in order) or
    the Error."""
    lst = [NodeScore(n, v) for n, v in zip(names, raw)]
    try:
        st = norm(state, pod, lst)
    except Exception as e:
        return normalize_error(name, f"{type(e).__name__}: {e}", e)
    if st is not None:
        if not isinstance(st, Status):
            return contract_error(name, "normalize_score", st)
        if not st.is_success():
            return normalize_error(name, st.message)
    return normalized_out(name, lst)


class ScoreRunners:
    """The Score point of ``FrameworkImpl``."""

    normalize: dict[str, Callable[..., Any]]
    score_weights: dict[str, int]
    score_batch: dict[str, Callable[..., Any]]
    use_batch: bool
    _last_totals: list[int]

    if TYPE_CHECKING:

        def _entries_for(self, state: CycleState, hook: str) -> list[Entry]: ...
        def _batch_scores(self, name: str, bfn: Callable[..., Any], state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | Status: ...

    def active_scores(self, state: CycleState) -> list[Entry]:
        """The Score entries to run this cycle (those not skipped by their PreScore)."""
        skip = state.skip_score_plugins
        score = self._entries_for(state, "score")
        if not skip:
            return score
        # kept while the entries and the skipped set stay the same (callers do not change it)
        c = self._active_scores
        if c is not None and c[0] is score and c[1] == len(score) and c[2] == skip:
            return c[3]
        active = [(n, fn) for n, fn in score if n not in skip]
        self._active_scores = (score, len(score), frozenset(skip), active)
        return active

    #: active_scores' last (entries, their number, the skipped names, the entries not skipped)
    _active_scores: tuple[list[Entry], int, frozenset[str], list[Entry]] | None = None

    def _raw_scores(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], plugins: list[Entry]) -> list[list[int]] | Status:
        """Raw scores per plugin (in ``plugins`` order), one per node."""
        cols: list[list[int]] = []
        batch = self.score_batch if self.use_batch and not state.record_plugin_metrics else {}
        for name, fn in plugins:
            bfn = batch.get(name)
            if bfn is not None:
                got = self._batch_scores(name, bfn, state, pod, nodes)
                if isinstance(got, Status):
                    return got
                cols.append(got)
                continue
            raw: list[int] = []
            append = raw.append
            for ni in nodes:
                try:
                    out = fn(state, pod, ni)
                except Exception as e:
                    return _score_err(name, e)
                if type(out) is int:
                    append(out)
                    continue
                sc = score_out(name, out)
                if type(sc) is not int:
                    return sc  # type: ignore[return-value]
                append(sc)
            cols.append(raw)
        return cols

    def _reused_rows(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], plugins: list[Entry], reuse: dict[Any, Any]
    ) -> tuple[list[tuple[int, ...]], list[int | None]] | Status:
        """Per node: the raw scores of ``plugins`` and the weighted sum of those without
        NormalizeScore (None if one is out of range), from ``reuse`` (see ``reuse_table``)
        while the node's NodeInfo is unchanged, else computed and stored there."""
        weights = self.score_weights
        fixed = [(j, weights.get(name, 1)) for j, (name, _) in enumerate(plugins) if name not in self.normalize]
        get = reuse.get
        misses = [ni for ni in nodes if (hit := get(ni)) is None or hit[0] != ni.generation]
        if misses:
            cols = self._raw_scores(state, pod, misses, plugins)
            if isinstance(cols, Status):
                return cols
            for k, ni in enumerate(misses):
                row = tuple(c[k] for c in cols)
                partial: int | None = 0
                for j, w in fixed:
                    v = row[j]
                    if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                        partial = None  # the full path reports it
                        break
                    partial += v * w  # type: ignore[operator]
                reuse[ni] = (ni.generation, row, partial)
        rows: list[tuple[int, ...]] = []
        partials: list[int | None] = []
        for ni in nodes:
            hit = reuse[ni]
            rows.append(hit[1])
            partials.append(hit[2])
        return rows, partials

    def _final_scores(self, name: str, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], raw: list[int]) -> list[int] | Status:
        """NormalizeScore (when the plugin has it) and the range check of one plugin's scores."""
        norm = self.normalize.get(name)
        if norm is not None:
            got = normalize_node_scores(norm, name, state, pod, [ni.name for ni in nodes], raw)
            if isinstance(got, Status):
                return got
            vals = got
        else:
            vals = raw
        if vals and (min(vals) < MIN_NODE_SCORE or max(vals) > MAX_NODE_SCORE):
            bad = next(v for v in vals if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE)
            return Status(
                Code.ERROR,
                f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid score {bad}, '
                f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                plugin=name,
            )
        return vals

    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        details: bool = False,
        totals_only: bool = False,
        reuse: dict[Any, Any] | None = None,
    ) -> tuple[list[NodePluginScores], Status]:
        """Score, NormalizeScore, range check and weights. ``details`` keeps each plugin's raw,
        normalized and weighted score per node (explain); otherwise only totals are built.
        ``reuse``: a ``reuse_table`` for the pod's score signature."""
        plugins = self.active_scores(state)
        n = len(nodes)
        weights = self.score_weights
        if reuse is None:
            cols = self._raw_scores(state, pod, nodes, plugins)
            if isinstance(cols, Status):
                return [], cols
        else:
            got = self._reused_rows(state, pod, nodes, plugins, reuse)
            if isinstance(got, Status):
                return [], got
            rows, partials = got
            if totals_only and None not in partials:
                # the plugins without NormalizeScore are summed already, per node
                totals: list[int] = partials  # type: ignore[assignment]
                memo = reuse.get(_NORMALIZED)
                if memo is None:
                    memo = reuse[_NORMALIZED] = {}
                for j, (name, _fn) in enumerate(plugins):
                    if name not in self.normalize:
                        continue
                    # a signing plugin's NormalizeScore depends on the raw values only (the
                    # sign_pod contract): the same column gives the same normalized scores
                    key = (name, tuple([r[j] for r in rows]))
                    vals = memo.get(key)
                    if vals is None:
                        vals = self._final_scores(name, state, pod, nodes, list(key[1]))
                        if isinstance(vals, Status):
                            return [], vals
                        if len(memo) >= 64:
                            memo.clear()
                        memo[key] = vals
                    w = weights.get(name, 1)
                    totals = [t + v * w for t, v in zip(totals, vals)]
                self._last_totals = totals
                return [], SUCCESS
            cols = [list(c) for c in zip(*rows)] if rows else [[] for _ in plugins]
        totals = [0] * n
        per_plugin: list[tuple[str, list[int], list[int], int]] = []
        for (name, _fn), raw in zip(plugins, cols):
            vals = self._final_scores(name, state, pod, nodes, raw)
            if isinstance(vals, Status):
                return [], vals
            w = weights.get(name, 1)
            if w == 1:
                totals = [t + v for t, v in zip(totals, vals)]
            else:
                totals = [t + v * w for t, v in zip(totals, vals)]
            if details:
                per_plugin.append((name, raw, vals, w))
        if totals_only:
            self._last_totals = totals
            return [], SUCCESS
        out_scores = [NodePluginScores(ni.name, [], totals[i]) for i, ni in enumerate(nodes)]
        if details:
            for name, raw, vals, w in per_plugin:
                for i in range(n):
                    out_scores[i].scores.append(PluginScore(name, raw[i], vals[i], vals[i] * w))
        return out_scores, SUCCESS

    def score_totals(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], reuse: dict[Any, Any] | None = None
    ) -> tuple[list[int], Status]:
        """The weighted total score per node (in ``nodes`` order), without per-plugin details
        (one Score extension point: it runs :meth:`run_score_plugins`)."""
        _, st = self.run_score_plugins(state, pod, nodes, totals_only=True, reuse=reuse)
        return (self._last_totals if st.is_success() else []), st
