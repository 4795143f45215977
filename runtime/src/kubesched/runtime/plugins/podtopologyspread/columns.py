"""PodTopologySpread over the snapshot's columns: PreFilter and PreScore from per-node pod counts
kept by a :class:`~kubesched.runtime.podindex.PodIndex` (bincounts over the topology label
codes instead of a scan of every pod), and the column forms of Filter and Score.

The states built here are the same ``PreFilterState``/``PreScoreState`` the per-node hooks read
(same domains, counts, critical paths and dict order), with the arrays the column forms use
attached; an update by ``pre_filter_add_pod``/``pre_filter_remove_pod`` drops the arrays (the
column form then declines). Only the v1.36 feature gates (node inclusion policies on) take this
path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import NodeColumns, Pod, find_untolerated_taint
from kubesched.sdk.signature import freeze

from ...podindex import PodIndex, selector_key
from .common import (
    DO_NOT_SCHEDULE_TAINT_EFFECTS,
    HONOR,
    LABEL_HOSTNAME,
    TopologySpreadConstraint,
    node_affinity_matcher,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "FilterColumns",
    "ScoreColumns",
    "column_masks",
    "critical_paths",
    "domain_counts",
    "filter_codes",
    "first_seen_order",
    "go_round_array",
    "normalize_rows",
    "pre_filter_counts",
    "pre_score_counts",
    "score_rows",
    "spread_counts",
]

_I64 = np.int64
_MAX_INT32 = 2**31 - 1


class FilterColumns:
    """What the Filter column form reads: per constraint the label codes, the matching pods per
    domain (0 for domains without an eligible node) and the global minimum."""

    __slots__ = ("codes", "columns", "dom", "min_match")

    def __init__(self, columns: NodeColumns) -> None:
        self.columns = columns
        self.codes: list[NDArray[np.int32]] = []
        self.dom: list[NDArray[np.int64]] = []
        self.min_match: list[int] = []


class ScoreColumns:
    """What the Score column form reads: per constraint ``(codes, per_code)`` (a domain's
    count by label code) or ``(None, per_row)`` (hostname: the node's own count), the weights,
    and which rows PreScore ignored; ``ignored`` of the last scored rows for NormalizeScore."""

    __slots__ = ("columns", "ignored_rows", "last_ignored", "parts")

    def __init__(self, columns: NodeColumns, ignored_rows: NDArray[np.bool_]) -> None:
        self.columns = columns
        self.ignored_rows = ignored_rows
        self.parts: list[tuple[NDArray[np.int32] | None, NDArray[np.int64]]] = []
        self.last_ignored: NDArray[np.bool_] | None = None


def spread_counts(index: PodIndex, columns: NodeColumns, c: TopologySpreadConstraint, ns: str) -> NDArray[np.int64]:
    """countPodsMatchSelector per row (an empty selector counts nothing)."""
    sel = c.selector
    if sel.is_empty():
        return np.zeros(columns.n, _I64)

    def pred(p: Pod) -> bool:
        return p.namespace == ns and p.deletion_timestamp is None and sel.matches(p.labels)

    return index.counts(columns, ("PodTopologySpread", ns, selector_key(sel)), pred)


def column_masks(columns: NodeColumns, pod: Pod, constraints: Sequence[TopologySpreadConstraint]) -> list[NDArray[np.bool_] | None]:
    """matchNodeInclusionPolicies per constraint, as a mask over rows (None: every node)."""
    aff: NDArray[np.bool_] | None = None
    taint_ok: NDArray[np.bool_] | None = None
    out: list[NDArray[np.bool_] | None] = []
    for c in constraints:
        m: NDArray[np.bool_] | None = None
        if c.node_affinity_policy == HONOR:
            if aff is None:
                aff = _affinity_mask(columns, pod)
            m = aff
        if c.node_taints_policy == HONOR:
            if taint_ok is None:
                tcodes, sets = columns.taint_sets()
                tols = pod.tolerations
                ok = np.array([find_untolerated_taint(s, tols, DO_NOT_SCHEDULE_TAINT_EFFECTS) is None for s in sets], bool)
                taint_ok = ok[tcodes] if len(sets) else np.ones(columns.n, bool)
            m = taint_ok if m is None else (m & taint_ok)
        out.append(m)
    return out


def _affinity_mask(columns: NodeColumns, pod: Pod) -> NDArray[np.bool_]:
    spec = pod.spec
    ns = spec.get("nodeSelector")
    req = (pod.affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not ns and req is None:
        return np.ones(columns.n, bool)
    match = node_affinity_matcher(pod)
    return columns.by_node(("PodTopologySpread.nodeAffinity", freeze(ns), freeze(req)), match, bool)


def domain_counts(
    codes: NDArray[np.int32], nvalues: int, eligible: NDArray[np.bool_], counts: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Per label code: the sum of ``counts`` over eligible rows, and whether some eligible row
    has the code."""
    c = codes[eligible]
    present = np.bincount(c, minlength=nvalues)[:nvalues] > 0
    dom = np.bincount(c, weights=counts[eligible], minlength=nvalues)[:nvalues].astype(_I64)
    if not nvalues:  # no node has the label: one slot, so that code 0 can be looked up
        return np.zeros(1, _I64), np.zeros(1, bool)
    return dom, present


def first_seen_order(codes: NDArray[np.int32], eligible: NDArray[np.bool_]) -> NDArray[np.intp]:
    """The codes of eligible rows in the order of their first row."""
    c = codes[eligible]
    if not len(c):
        return np.zeros(0, np.intp)
    uniq, first = np.unique(c, return_index=True)
    return uniq[np.argsort(first, kind="stable")]  # type: ignore[return-value]


def critical_paths(values: list[str], order: NDArray[np.intp], dom: NDArray[np.int64]) -> list[list[Any]]:
    """criticalPaths after updating with each domain in ``order`` (the first two of a stable
    sort by count)."""
    paths: list[list[Any]] = [["", _MAX_INT32], ["", _MAX_INT32]]
    if not len(order):
        return paths
    nums = dom[order]
    best = np.argsort(nums, kind="stable")[:2].tolist()
    for j, k in enumerate(best):
        paths[j] = [values[int(order[k])], int(nums[k])]
    return paths


def go_round_array(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """math.Round (half away from zero) elementwise."""
    t = np.trunc(x)
    frac = x - t
    t = t + np.where(np.abs(frac) >= 0.5, np.where(x > 0, 1.0, -1.0), 0.0)
    return t.astype(_I64)


def pre_filter_counts(
    index: PodIndex, columns: NodeColumns, pod: Pod, constraints: Sequence[TopologySpreadConstraint]
) -> tuple[list[dict[str, int]], list[list[list[Any]]], FilterColumns]:
    """calPreFilterState's domains (in the order of their first node), counts and critical paths
    (node inclusion policies on), and the Filter column form's arrays."""
    labels = [columns.label(c.topology_key) for c in constraints]
    has_all = np.ones(columns.n, bool)
    for codes, _values in labels:
        has_all &= codes >= 0
    masks = column_masks(columns, pod, constraints)
    ns = pod.namespace
    fc = FilterColumns(columns)
    matched: list[dict[str, int]] = []
    paths: list[list[list[Any]]] = []
    for c, (codes, values), m in zip(constraints, labels, masks):
        eligible = has_all if m is None else (has_all & m)
        dom, present = domain_counts(codes, len(values), eligible, spread_counts(index, columns, c, ns))
        order = first_seen_order(codes, eligible)
        matched.append(dict(zip([values[k] for k in order.tolist()], dom[order].tolist())))
        p = critical_paths(values, order, dom)
        paths.append(p)
        fc.codes.append(codes)
        fc.dom.append(np.where(present, dom, 0))
        fc.min_match.append(0 if len(order) < c.min_domains else p[0][1])
    return matched, paths, fc


def filter_codes(fc: FilterColumns, constraints: Sequence[TopologySpreadConstraint], self_match: Sequence[int]) -> NDArray[np.int32]:
    """Per row: 0 passes, 1 lacks a topology key, 2 the skew is too large (the first failing
    constraint in order decides)."""
    out = np.zeros(fc.columns.n, np.int32)
    for i, c in enumerate(constraints):
        codes = fc.codes[i]
        missing = codes < 0
        out[missing & (out == 0)] = 1
        skew = fc.dom[i][np.where(missing, 0, codes)] + self_match[i] - fc.min_match[i]
        out[(skew > c.max_skew) & ~missing & (out == 0)] = 2
    return out


def _codes_or_empty(columns: NodeColumns, key: str) -> tuple[NDArray[np.int32], int]:
    """The label's codes with a missing label coded as the value "" (``labels.get(key, "")``),
    and the number of codes."""
    codes, values = columns.label(key)
    if not (codes < 0).any():
        return codes, len(values)
    try:
        empty = values.index("")
        nvalues = len(values)
    except ValueError:
        empty = nvalues = len(values)
        nvalues += 1
    return np.where(codes < 0, empty, codes).astype(np.int32), nvalues


def pre_score_counts(
    index: PodIndex,
    columns: NodeColumns,
    pod: Pod,
    constraints: Sequence[TopologySpreadConstraint],
    rows: NDArray[np.intp],
    require_all: bool,
) -> tuple[set[str], list[dict[str, int]], list[float], ScoreColumns]:
    """initPreScoreState and PreScore's counting over the filtered nodes ``rows`` (node inclusion
    policies on): the ignored nodes, the domain counts, the normalizing weights, and the Score
    column form's arrays."""
    import math

    n = columns.n
    names = columns.names
    if require_all:
        has_all = np.ones(n, bool)
        for c in constraints:
            has_all &= columns.label(c.topology_key)[0] >= 0
        ign = rows[~has_all[rows]]
    else:
        has_all = np.ones(n, bool)
        ign = rows[:0]
    ignored = {names[r] for r in ign.tolist()}
    ignored_rows = np.zeros(n, bool)
    ignored_rows[ign] = True
    kept = np.zeros(n, bool)
    kept[rows] = True
    kept &= ~ignored_rows
    masks = column_masks(columns, pod, constraints)
    ns = pod.namespace
    sc = ScoreColumns(columns, ignored_rows)
    matched: list[dict[str, int]] = []
    weights: list[float] = []
    for c, m in zip(constraints, masks):
        per_row = spread_counts(index, columns, c, ns)
        if c.topology_key == LABEL_HOSTNAME:
            matched.append({})
            weights.append(math.log(len(rows) - len(ignored) + 2))
            sc.parts.append((None, per_row))
            continue
        codes, nvalues = _codes_or_empty(columns, c.topology_key)
        present = np.bincount(codes[kept], minlength=nvalues)[:nvalues] > 0
        eligible = has_all if m is None else (has_all & m)
        dom, _ = domain_counts(codes, nvalues, eligible, per_row)
        dom = np.where(present, dom, 0)
        _, values = columns.label(c.topology_key)
        ext = [*values, ""] if nvalues > len(values) else values
        ks = np.flatnonzero(present).tolist()
        matched.append(dict(zip([ext[k] for k in ks], dom[ks].tolist())))
        weights.append(math.log(len(ks) + 2))
        # Score looks the node's own value up (a node without the label is skipped)
        raw_codes, _ = columns.label(c.topology_key)
        sc.parts.append((raw_codes, dom))
    return ignored, matched, weights, sc


def score_rows(sc: ScoreColumns, constraints: Sequence[TopologySpreadConstraint], weights: Sequence[float], rows: NDArray[np.intp]) -> NDArray[np.int64]:
    """Score for ``rows``: ``round(sum(count * weight + maxSkew - 1))`` over the constraints whose
    key the node has; 0 for ignored nodes."""
    score = np.zeros(len(rows), np.float64)
    for (codes, arr), c, w in zip(sc.parts, constraints, weights):
        if codes is None:  # hostname: the node's own pods
            cnt = arr[rows]
            has = sc.columns.label(LABEL_HOSTNAME)[0][rows] >= 0
        else:
            cr = codes[rows]
            has = cr >= 0
            cnt = arr[np.where(has, cr, 0)]
        term = cnt.astype(np.float64) * w + float(c.max_skew - 1)
        score = np.where(has, score + term, score)
    ignored = sc.ignored_rows[rows]
    sc.last_ignored = ignored
    out = go_round_array(score)
    out[ignored] = 0
    return out


def normalize_rows(scores: NDArray[np.int64], ignored: NDArray[np.bool_], max_node_score: int) -> NDArray[np.int64]:
    """PodTopologySpread's NormalizeScore on a column."""
    s = np.where(ignored, -1, scores)
    valid = s[~ignored]
    min_score = int(valid.min()) if len(valid) else 2**63 - 1
    max_score = max(0, int(valid.max())) if len(valid) else 0
    if max_score == 0:
        out = np.full(len(s), max_node_score, _I64)
    else:
        out = max_node_score * (max_score + min_score - s) // max_score
    out[s == -1] = 0
    return out.astype(_I64)
