"""The column forms of Filter and Score (``filter_columns``, ``score_columns``,
``normalize_score_columns``): every node at once over the snapshot's
:class:`~kubesched.sdk.NodeColumns`, with the semantics of the per-node hooks.

A cycle uses them only when every active plugin of the point has its column form (otherwise the
per-node and batch forms run, as before): Filter keeps each node's first rejecting plugin in
configured order; Score keeps the weights, NormalizeScore and the range check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Code,
    CycleState,
    NodeColumns,
    Pod,
    Status,
)

from .contract import SUCCESS, contract_error, filter_verdict, plugin_error
from .score import normalize_error, normalize_node_scores

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .interface import Entry

__all__ = ["ColumnRunners"]


class ColumnRunners:
    """The column forms' part of ``FrameworkImpl``."""

    filter_columns: dict[str, Callable[..., Any]]
    score_columns: dict[str, Callable[..., Any]]
    normalize_columns: dict[str, Callable[..., Any]]
    normalize: dict[str, Callable[..., Any]]
    score_weights: dict[str, int]
    #: use the column forms (settable; off while tracing)
    use_columns: bool
    #: the column forms wrapped for plugin metrics (sampled cycles), by hook and plugin
    _timed_columns: dict[str, dict[str, Callable[..., Any]]]

    if TYPE_CHECKING:

        def active_scores(self, state: CycleState) -> list[Entry]: ...

    # Filter -------------------------------------------------------------------------------------
    def column_filters(self, state: CycleState, entries: list[Entry]) -> list[Entry] | None:
        """The column forms of ``entries`` (the active Filter plugins), or None when one of
        them has none; timed ones in a cycle that samples plugin metrics."""
        if not self.use_columns:
            return None
        fc = self.filter_columns
        if state.record_plugin_metrics and self._timed_columns:
            fc = self._timed_columns["filter_columns"]
        out = []
        for name, _fn in entries:
            f = fc.get(name)
            if f is None:
                return None
            out.append((name, f))
        return out

    def run_filter_columns(
        self, state: CycleState, pod: Pod, columns: NodeColumns, centries: list[Entry]
    ) -> tuple[NDArray[np.int32], list[Status]] | Status | None:
        """Every plugin of ``centries`` over every node: ``(first, table)`` with ``first[i]``
        the index in ``table`` of node ``i``'s status (0: it passes), the status of the first
        plugin in order that rejects it. A Status is an Error for the cycle (a plugin raised or
        broke the contract); None: a plugin declined (its per-node form must run)."""
        n = columns.n
        shape = (n,)
        first: NDArray[np.int32] | None = None
        table: list[Status] = [SUCCESS]
        for name, fn in centries:
            try:
                got = fn(state, pod, columns)
            except Exception as e:
                return plugin_error("Filter", name, e)
            if got is None:
                return None
            try:
                codes, statuses = got
                if codes.__class__ is not _NDARRAY:
                    codes = np.asarray(codes)
                if codes.shape != shape or codes.dtype.kind not in "iu":
                    raise ValueError
            except (TypeError, ValueError):
                return contract_error(name, "filter_columns", got)
            if not _count_nonzero(codes):
                continue  # every node passes (the usual case)
            nz: Any = None  # the nodes this plugin decides (None: every node, code 0 passes)
            sel = codes
            if first is not None:
                nz = codes != 0
                nz &= first == 0
                if not _count_nonzero(nz):
                    continue
                sel = codes[nz]
            # the distinct codes but 0, ascending, and where each node's is: the code itself
            # when they are few (counted with bincount), else its index among them
            used = _used_nonzero_codes(sel, statuses)
            slots: Sequence[int]
            if used is None:  # negative or large codes (0 among them when nz is None)
                uniq, index = np.unique(sel, return_inverse=True)
                index = index.reshape(-1)
                used = uniq.tolist()
                slots = range(len(used))
                mapping = np.zeros(len(used), np.int32)
            else:
                index = sel
                slots = used
                mapping = np.zeros(used[-1] + 1, np.int32)
            for c, k in zip(used, slots):
                if c == 0:
                    continue
                try:
                    st = statuses[c]
                except (IndexError, KeyError, TypeError):
                    return contract_error(name, "filter_columns", got)
                if st is None or (isinstance(st, Status) and st.code is Code.SUCCESS):
                    continue  # "passes": the node stays for the next plugins
                table.append(filter_verdict(name, st))
                mapping[k] = len(table) - 1
            if first is None:  # (nz is None)
                first = mapping[index]  # code 0's slot stays 0: the nodes that pass
            else:
                first[nz] = mapping[index]
        if first is None:
            first = np.zeros(n, np.int32)
        return first, table

    # Score --------------------------------------------------------------------------------------
    def column_scores(self, state: CycleState) -> list[tuple[str, Callable[..., Any], Callable[..., Any] | None, int]] | None:
        """(name, score_columns, its normalize form or None, weight) for each active Score
        plugin, or None when one has no column form."""
        if not self.use_columns:
            return None
        sc = self.score_columns
        if state.record_plugin_metrics and self._timed_columns:
            sc = self._timed_columns["score_columns"]
        out = []
        for name, _fn in self.active_scores(state):
            f = sc.get(name)
            if f is None:
                return None
            out.append((name, f, self.normalize_columns.get(name), self.score_weights.get(name, 1)))
        return out

    def run_score_columns(
        self,
        state: CycleState,
        pod: Pod,
        columns: NodeColumns,
        rows: NDArray[np.intp],
        centries: Sequence[tuple[str, Callable[..., Any], Callable[..., Any] | None, int]],
        details: list[tuple[str, NDArray[np.int64], NDArray[np.int64], int]] | None = None,
    ) -> NDArray[np.int64] | Status | None:
        """The weighted total per row of ``rows``; a Status is an Error; None: a plugin
        declined (the per-node forms must run). ``details`` collects (name, raw, final,
        weight) per plugin."""
        m = len(rows)
        shape = (m,)
        total = np.zeros(m, np.int64)
        for name, fn, nfn, w in centries:
            try:
                raw = fn(state, pod, columns, rows)
            except Exception as e:
                return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {type(e).__name__}: {e}', plugin=name, error=e)
            if raw is None:
                return None
            if isinstance(raw, Status):
                return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {raw.message}', plugin=name)
            if raw.__class__ is not _NDARRAY:
                raw = np.asarray(raw)
            if raw.shape != shape or raw.dtype.kind not in "iu":
                return contract_error(name, "score_columns", raw)
            vals = self._normalize_column(name, nfn, state, pod, columns, rows, raw)
            if isinstance(vals, Status):
                return vals
            if m:
                if _out_of_range(vals):
                    bad = int(next(v for v in vals.tolist() if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE))
                    return Status(
                        Code.ERROR,
                        f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid score {bad}, '
                        f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                        plugin=name,
                    )
            total += vals * w if w != 1 else vals
            if details is not None:
                details.append((name, raw, vals, w))
        return total

    def _normalize_column(
        self,
        name: str,
        nfn: Callable[..., Any] | None,
        state: CycleState,
        pod: Pod,
        columns: NodeColumns,
        rows: NDArray[np.intp],
        raw: NDArray[np.int64],
    ) -> NDArray[np.int64] | Status:
        norm = self.normalize.get(name)
        if norm is None:
            return raw
        if nfn is not None:
            try:
                out = nfn(state, pod, raw)
            except Exception as e:
                return normalize_error(name, f"{type(e).__name__}: {e}", e)
            if isinstance(out, Status):
                return normalize_error(name, out.message)
            out = np.asarray(out)
            if out.shape != raw.shape or out.dtype.kind not in "iu":
                return contract_error(name, "normalize_score_columns", out)
            return out.astype(np.int64, copy=False)
        # the plugin normalizes NodeScore lists only
        names = columns.names
        got = normalize_node_scores(norm, name, state, pod, [names[r] for r in rows.tolist()], raw.tolist())
        if isinstance(got, Status):
            return got
        return np.asarray(got, np.int64)


def _used_nonzero_codes(codes: NDArray[Any], statuses: Any) -> list[int] | None:
    """The distinct codes of ``codes`` but 0, ascending, counted with bincount when they are
    few values (they index a list of statuses, or a mapping's are below ``_BINCOUNT_MAX``, as
    NodeResourcesFit's bit codes); None otherwise (negative codes, large ones, uint64)."""
    top = int(_max(codes))
    if top < (len(statuses) if statuses.__class__ is list else _BINCOUNT_MAX):
        try:
            used: list[int] = _flatnonzero(np.bincount(codes)).tolist()
        except (TypeError, ValueError):  # a negative code, uint64
            return None
        return used[1:] if used[0] == 0 else used
    return None


def _out_of_range(vals: NDArray[Any]) -> bool:
    """Whether a score is outside [MIN_NODE_SCORE, MAX_NODE_SCORE]: one pass over int64
    scores (a negative one is above the maximum as unsigned), two otherwise."""
    dt = vals.dtype
    if MIN_NODE_SCORE == 0 and (dt is _INT64 or dt == _INT64):
        return int(_max(vals.view(np.uint64))) > MAX_NODE_SCORE
    return int(_min(vals)) < MIN_NODE_SCORE or int(_max(vals)) > MAX_NODE_SCORE


# numpy's reductions called directly (``a.any()``, ``a.max()`` go through Python wrappers: a
# few microseconds per plugin and pod)
_count_nonzero = np.count_nonzero
_max = np.maximum.reduce
_min = np.minimum.reduce
_INT64 = np.dtype(np.int64)
#: codes of a mapping of statuses below this are counted with bincount (an array this long)
_BINCOUNT_MAX = 1 << 12
_NDARRAY = np.ndarray


def _flatnonzero(a: NDArray[Any]) -> NDArray[np.intp]:
    return a.nonzero()[0]
