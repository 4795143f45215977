"""Pods counted per node, kept up to date by node: what InterPodAffinity and PodTopologySpread
would otherwise recount by scanning every pod of every node in each cycle.

A :class:`PodIndex` answers two questions over a snapshot's :class:`~kubesched.sdk.NodeColumns`
(row ``i`` is ``columns.infos[i]``):

* :meth:`PodIndex.counts`: per row, how many of the node's pods satisfy a predicate registered
  under a hashable key (e.g. "in namespace ``ns`` and matched by selector ``S``");
* :meth:`PodIndex.inventory`: per row, how many times each distinct item (e.g. a required
  anti-affinity term) occurs among the node's pods.

Each answer is kept with the NodeInfo ``generation`` of every row it was computed at; a query
recounts only the rows whose NodeInfo changed since (a pod placed or removed bumps it), and
everything after the snapshot's node list is rebuilt (a node added or removed). So a cycle costs
a comparison of two integer vectors plus the pods of the nodes that changed, not a scan of every
pod. Keys are bounded (least recently used dropped first). The index reads the NodeInfos only: it
needs no feed from the cache and is exact for any snapshot.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import LabelSelector, NodeColumns, NodeInfo, Pod

from .snapshot import Snapshot

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["PodIndex", "selector_key", "snapshot_columns"]

_I64 = np.int64


def snapshot_columns(handle: Any, nodes: Sequence[NodeInfo] | None) -> NodeColumns | None:
    """The columns of ``handle``'s snapshot when a plugin may count through an index: the
    snapshot is the runtime's, and ``nodes`` (a PreFilter's; None: not given) are its own list.
    None otherwise (the plugin scans)."""
    try:
        snap = handle.snapshot()
    except Exception:
        return None
    if not isinstance(snap, Snapshot) or (nodes is not None and nodes is not snap.list()):
        return None
    return snap.columns


def selector_key(sel: LabelSelector) -> Hashable:
    """A hashable value equal for selectors that select the same pods (the same requirements)."""
    return (sel.is_nothing(), tuple((r.key, r.op, r.values) for r in sel.requirements))


class _Counts:
    __slots__ = ("columns", "counts", "gens", "pred")

    def __init__(self, pred: Callable[[Pod], bool]) -> None:
        self.pred = pred
        self.columns: NodeColumns | None = None
        self.gens: NDArray[np.int64] = np.zeros(0, _I64)
        self.counts: NDArray[np.int64] = np.zeros(0, _I64)


class _Inventory:
    __slots__ = ("columns", "counts", "gens", "items", "row_items", "what")

    def __init__(self, what: Callable[[Pod], Iterable[tuple[Hashable, Any]]]) -> None:
        self.what = what
        self.columns: NodeColumns | None = None
        self.gens: NDArray[np.int64] = np.zeros(0, _I64)
        #: item key -> count per row
        self.counts: dict[Hashable, NDArray[np.int64]] = {}
        #: item key -> the item (a representative)
        self.items: dict[Hashable, Any] = {}
        #: per row, the item keys it counts
        self.row_items: list[tuple[Hashable, ...]] = []


class PodIndex:
    """Per-row pod counts over a snapshot's columns (see the module docstring)."""

    def __init__(self, capacity: int = 128) -> None:
        self.capacity = capacity
        self._counts: OrderedDict[Hashable, _Counts] = OrderedDict()
        self._inventories: dict[Hashable, _Inventory] = {}
        self._gen_of: tuple[NodeColumns | None, int, NDArray[np.int64]] = (None, -1, np.zeros(0, _I64))

    def _generations(self, columns: NodeColumns) -> NDArray[np.int64]:
        cols, version, gens = self._gen_of
        if cols is not columns or version != columns.version:
            # a copy: the columns rewrite their generations in place
            gens = columns.generations.copy()
            self._gen_of = (columns, columns.version, gens)
        return gens

    def _stale(self, e: _Counts | _Inventory, columns: NodeColumns) -> tuple[NDArray[np.int64], list[int] | None]:
        """The current generations, and the rows to recount (None: all of them)."""
        gens = self._generations(columns)
        if e.columns is not columns:
            return gens, None
        return gens, np.flatnonzero(e.gens != gens).tolist()

    def counts(self, columns: NodeColumns, key: Hashable, pred: Callable[[Pod], bool]) -> NDArray[np.int64]:
        """Per row, the number of the node's pods for which ``pred`` holds. ``pred`` must depend
        on the pod only, and be the same for the same ``key``. Read-only."""
        e = self._counts.get(key)
        if e is None:
            e = self._counts[key] = _Counts(pred)
            if len(self._counts) > self.capacity:
                self._counts.popitem(last=False)
        else:
            self._counts.move_to_end(key)
        gens, rows = self._stale(e, columns)
        infos = columns.infos
        if rows is None:
            e.counts = np.fromiter((sum(1 for p in ni.pods if pred(p)) for ni in infos), _I64, columns.n)
            e.columns = columns
        elif rows:
            c = e.counts
            c.flags.writeable = True
            for r in rows:
                c[r] = sum(1 for p in infos[r].pods if pred(p))
        else:
            return e.counts
        e.gens = gens
        e.counts.flags.writeable = False
        return e.counts

    def inventory(
        self, columns: NodeColumns, key: Hashable, what: Callable[[Pod], Iterable[tuple[Hashable, Any]]]
    ) -> tuple[dict[Hashable, NDArray[np.int64]], dict[Hashable, Any]]:
        """``(counts, items)``: for each item key ``k`` that ``what(pod)`` yields (as ``(k,
        item)`` pairs, a pod may yield a key more than once) for a pod of some node,
        ``counts[k][row]`` is how many times the node's pods yield it and ``items[k]`` one such
        item. Keys whose count fell to zero everywhere may stay (with zeros). Read-only."""
        e = self._inventories.get(key)
        if e is None:
            e = self._inventories[key] = _Inventory(what)
        gens, rows = self._stale(e, columns)
        infos = columns.infos
        n = columns.n
        if rows is None:
            e.counts = {}
            e.items = {}
            e.row_items = [()] * n
            rows = range(n)  # type: ignore[assignment]
            e.columns = columns
        elif not rows:
            return e.counts, e.items
        counts = e.counts
        items = e.items
        row_items = e.row_items
        for r in rows:  # type: ignore[union-attr]
            for k in row_items[r]:
                counts[k][r] = 0
            seen: dict[Hashable, None] = {}
            for p in infos[r].pods:
                for k, item in e.what(p):
                    a = counts.get(k)
                    if a is None:
                        a = counts[k] = np.zeros(n, _I64)
                        items[k] = item
                    a[r] += 1
                    seen[k] = None
            row_items[r] = tuple(seen)
        e.gens = gens
        if len(counts) > self.capacity:
            for k in [k for k, a in counts.items() if not a.any()]:
                del counts[k]
                del items[k]
        return counts, items
