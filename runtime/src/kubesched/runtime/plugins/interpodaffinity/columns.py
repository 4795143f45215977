"""InterPodAffinity over the snapshot's columns: PreFilter's counts per topology pair and
PreScore's topology scores from per-node pod counts kept by a
:class:`~kubesched.runtime.podindex.PodIndex` (a bincount over the topology label codes instead of
a scan of every pod), the column form of Filter, which reads the same ``PreFilterState`` as the
per-node Filter (so it stays exact after ``pre_filter_add_pod``/``pre_filter_remove_pod``), and
the column forms of Score and NormalizeScore over the same ``PreScoreState``."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import AffinityTerm, NodeColumns, Pod

from ...podindex import PodIndex, selector_key
from .filtering import CountTables, PreFilterState, Tables, TopologyCounts
from .scoring import PreScoreState, ScoreMap
from .terms import match_all_terms, pod_terms

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["filter_codes", "normalize_rows", "pre_filter_counts", "pre_score_map", "score_rows"]

_I64 = np.int64
_NO_LABELS: Mapping[str, str] = {}
_TERM_KEYS = "_kubesched_interpodaffinity_anti_keys"
_SCORE_TERM_KEYS = "_kubesched_interpodaffinity_score_keys"
#: kinds of an existing pod's scoring terms: required affinity (weighed by
#: hardPodAffinityWeight), preferred affinity (+weight), preferred anti-affinity (-weight)
_REQ, _PREF, _PREF_ANTI = 0, 1, 2


def match_key(t: AffinityTerm) -> tuple[Hashable, ...]:
    """Equal for terms that select the same pods."""
    return (t.namespaces, selector_key(t.selector), selector_key(t.namespace_selector))


def term_key(t: AffinityTerm) -> tuple[Hashable, ...]:
    """Equal for terms that select the same pods over the same topology key."""
    return (*match_key(t), t.topology_key)


def _req_anti_terms(p: Pod) -> Iterable[tuple[Hashable, Any]]:
    d = p.__dict__
    got = d.get(_TERM_KEYS)
    if got is None:
        got = d[_TERM_KEYS] = tuple((term_key(t), t) for t in pod_terms(p).req_anti_affinity)
    return got  # type: ignore[no-any-return]


def _add_table(out: Tables, columns: NodeColumns, tk: str, per_row: NDArray[np.int64]) -> None:
    """out[tk][code] += the sum of ``per_row`` over the nodes whose ``tk`` label has that code."""
    codes, values = columns.label(tk)
    has = (codes >= 0) & (per_row != 0)
    if not has.any():
        return
    dom = np.bincount(codes[has], weights=per_row[has], minlength=len(values)).astype(_I64)
    got = out.get(tk)
    if got is None:
        out[tk] = (codes, values, dom)
    else:
        got[2][:] += dom


def pre_filter_counts(
    index: PodIndex,
    columns: NodeColumns,
    pod: Pod,
    ns_labels: Mapping[str, str],
    req_aff: Sequence[AffinityTerm],
    req_anti: Sequence[AffinityTerm],
) -> CountTables:
    """getExistingAntiAffinityCounts and getIncomingAffinityAntiAffinityCounts through the
    index, as tables per topology key (the state makes the pairs when they are read)."""
    existing: Tables = {}
    counts, items = index.inventory(columns, "InterPodAffinity.requiredAntiAffinity", _req_anti_terms)
    for k, per_row in counts.items():
        t = items[k]
        if t.matches(pod, ns_labels):
            _add_table(existing, columns, t.topology_key, per_row)
    affinity: Tables = {}
    anti: Tables = {}
    if req_aff:
        terms = tuple(req_aff)
        key: Hashable = ("InterPodAffinity.all", tuple(match_key(t) for t in terms))
        per_row = index.counts(columns, key, lambda p: match_all_terms(terms, p, _NO_LABELS))
        for t in terms:
            _add_table(affinity, columns, t.topology_key, per_row)
    for t in req_anti:
        key = ("InterPodAffinity.one", match_key(t))
        per_row = index.counts(columns, key, lambda p, t=t: t.matches(p, _NO_LABELS))  # type: ignore[misc]
        _add_table(anti, columns, t.topology_key, per_row)
    return CountTables(columns, existing, affinity, anti)


def _per_node(columns: NodeColumns, tk: str, counts: TopologyCounts, tables: Tables | None) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """(has the label, the count of the node's pair) per row."""
    codes, values = columns.label(tk)
    has = codes >= 0
    if tables is not None:
        got = tables.get(tk)
        dom = got[2] if got is not None else np.zeros(0, _I64)
    else:
        dom = np.fromiter((counts.get((tk, v), 0) for v in values), _I64, len(values))
    if not len(dom):
        return has, np.zeros(columns.n, _I64)
    return has, dom[np.where(has, codes, 0)] * has


def filter_codes(s: PreFilterState, columns: NodeColumns) -> NDArray[np.int32]:
    """Per row: 0 passes, 1 affinity, 2 anti-affinity, 3 existing pods' anti-affinity (the
    per-node Filter's order)."""
    n = columns.n
    out = np.zeros(n, np.int32)
    t = s.tables if s.tables is not None and s.tables.valid_for(columns) else None
    if t is not None:
        aff_t: Tables | None = t.affinity
        anti_t: Tables | None = t.anti
        ex_t: Tables | None = t.existing
        has_aff, has_anti = CountTables.any(t.affinity), CountTables.any(t.anti)
        ex_keys = [tk for tk, (_c, _v, tab) in t.existing.items() if tab.any()]
        empty: TopologyCounts = {}
        aff_c = anti_c = ex_c = empty
    else:
        aff_t = anti_t = ex_t = None
        aff_c, anti_c, ex_c = s.affinity_counts, s.anti_affinity_counts, s.existing_anti_affinity_counts
        has_aff, has_anti = bool(aff_c), bool(anti_c)
        ex_keys = list(dict.fromkeys(k for (k, _v), c in ex_c.items() if c > 0))
    if s.affinity_keys:
        missing = np.zeros(n, bool)
        exist = np.ones(n, bool)
        for tk in s.affinity_keys:
            has, cnt = _per_node(columns, tk, aff_c, aff_t)
            missing |= ~has
            exist &= cnt > 0
        first_of_series = not has_aff and s.self_match
        out[missing | (~exist if not first_of_series else np.zeros(n, bool))] = 1
    if has_anti:
        bad = np.zeros(n, bool)
        for tk in s.anti_affinity_keys:
            has, cnt = _per_node(columns, tk, anti_c, anti_t)
            bad |= cnt > 0
        out[bad & (out == 0)] = 2
    if ex_keys:
        bad = np.zeros(n, bool)
        for tk in ex_keys:
            has, cnt = _per_node(columns, tk, ex_c, ex_t)
            bad |= cnt > 0
        out[bad & (out == 0)] = 3
    return out


# --- PreScore / Score / NormalizeScore ----------------------------------------------------------


def _score_terms(p: Pod) -> Iterable[tuple[Hashable, Any]]:
    """An existing pod's terms that score the incoming pod, as ``((kind, weight, term key),
    (kind, term))``."""
    d = p.__dict__
    got = d.get(_SCORE_TERM_KEYS)
    if got is None:
        et = pod_terms(p)
        got = d[_SCORE_TERM_KEYS] = (
            *(((_REQ, 0, term_key(t)), (_REQ, t)) for t in et.req_affinity),
            *(((_PREF, t.weight, term_key(t)), (_PREF, t)) for t in et.pref_affinity),
            *(((_PREF_ANTI, t.weight, term_key(t)), (_PREF_ANTI, t)) for t in et.pref_anti_affinity),
        )
    return got  # type: ignore[no-any-return]


def pre_score_map(
    index: PodIndex,
    columns: NodeColumns,
    pod: Pod,
    pref_aff: Sequence[AffinityTerm],
    pref_anti: Sequence[AffinityTerm],
    ns_labels: Mapping[str, str],
    hard_pod_affinity_weight: int,
) -> tuple[ScoreMap, dict[str, NDArray[np.int64]]]:
    """PreScore's topology scores (processExistingPod over every pod of every node) through the
    index: ``(topology key -> value -> score, topology key -> score per label code)``. A pair is
    in the map when some term matched a pod on a node with that value (its score may be 0), as
    in the scan. ``pref_aff``/``pref_anti`` are the incoming pod's preferred terms with their
    namespaceSelector merged."""
    n = columns.n
    #: topology key -> (score per row, some term matched a pod of the row)
    acc: dict[str, tuple[NDArray[np.int64], NDArray[np.bool_]]] = {}

    def add(tk: str, per_row: NDArray[np.int64], w: int) -> None:
        got = acc.get(tk)
        if got is None:
            got = acc[tk] = (np.zeros(n, _I64), np.zeros(n, bool))
        score, matched = got
        if w:
            score += per_row * w
        matched |= per_row > 0

    # the incoming pod's preferred terms, matched against the existing pods (no namespace labels)
    for terms, sign in ((pref_aff, 1), (pref_anti, -1)):
        for t in terms:
            key: Hashable = ("InterPodAffinity.one", match_key(t))
            per_row = index.counts(columns, key, lambda p, t=t: t.matches(p, _NO_LABELS))  # type: ignore[misc]
            add(t.topology_key, per_row, sign * t.weight)
    # the existing pods' terms, matched against the incoming pod (its namespace's labels)
    counts, items = index.inventory(columns, "InterPodAffinity.scoreTerms", _score_terms)
    for k, per_row in counts.items():
        kind, t = items[k]
        if kind == _REQ:
            if hard_pod_affinity_weight <= 0:
                continue
            w = hard_pod_affinity_weight
        else:
            w = t.weight if kind == _PREF else -t.weight
        if t.matches(pod, ns_labels):
            add(t.topology_key, per_row, w)
    out: ScoreMap = {}
    tables: dict[str, NDArray[np.int64]] = {}
    for tk, (score, matched) in acc.items():
        codes, values = columns.label(tk)
        has = (codes >= 0) & matched
        if not has.any():
            continue
        c = codes[has]
        present = np.bincount(c, minlength=len(values)) > 0
        table = np.zeros(len(values), _I64)
        np.add.at(table, c, score[has])
        ks = np.flatnonzero(present).tolist()
        out[tk] = dict(zip([values[k] for k in ks], table[ks].tolist()))
        tables[tk] = table
    return out, tables


def score_rows(s: PreScoreState, columns: NodeColumns, rows: NDArray[np.intp]) -> NDArray[np.int64]:
    """Score for ``rows``: the sum over the topology keys of the score of the node's value."""
    tables = s.tables if s.columns is columns else None
    total = np.zeros(len(rows), _I64)
    for tk, values in s.items:
        codes, names = columns.label(tk)
        table = tables.get(tk) if tables is not None else None
        if table is None:
            table = np.fromiter((values.get(v, 0) for v in names), _I64, len(names))
        if not len(table):
            continue
        cr = codes[rows]
        has = cr >= 0
        total += np.where(has, table[np.where(has, cr, 0)], 0)
    return total


def normalize_rows(scores: NDArray[np.int64], max_node_score: int) -> NDArray[np.int64]:
    """NormalizeScore: min-max scaling to 0..max_node_score with Go's float64 arithmetic and
    int64 truncation."""
    if not len(scores):
        return scores.copy()
    lo = int(scores.min())
    diff = int(scores.max()) - lo
    if diff <= 0:
        return np.zeros(len(scores), _I64)
    f = float(max_node_score) * ((scores - lo).astype(np.float64) / float(diff))
    return f.astype(_I64)
