"""The snapshot's nodes as columns: numpy arrays with one row per node, for the column forms of
Filter and Score (``filter_columns``, ``score_columns``, ``normalize_score_columns``).

Row ``i`` is the ``i``-th NodeInfo of the cycle's snapshot (``columns.infos[i]``, named
``columns.names[i]``), in kube-scheduler's node order. The runtime keeps the columns up to date
incrementally: a pod assumed, bound, forgotten or deleted rewrites its node's row before the next
cycle, a node added or removed rebuilds them. Every array is read-only to plugins.

Numbers are kube-scheduler's units in ``int64`` (milli-CPU, bytes, counts): the arithmetic of a
column form is Go's int64 arithmetic (``//`` on non-negative values is Go's ``/``).

What a plugin finds here:

* resources: :meth:`NodeColumns.allocatable`, :meth:`NodeColumns.requested` and
  :meth:`NodeColumns.non_zero_requested` by API name (``cpu``, ``memory``,
  ``ephemeral-storage``, ``pods``, extended resources such as ``nvidia.com/gpu``), and
  :attr:`NodeColumns.pod_count`;
* node properties, by distinct value: :meth:`NodeColumns.label` (codes into the label's values),
  :meth:`NodeColumns.taint_sets` (codes into the distinct taint lists),
  :attr:`NodeColumns.unschedulable`, :meth:`NodeColumns.image` (which nodes have an image);
* :meth:`NodeColumns.by_node`: any per-node value a plugin derives from the Node object alone,
  computed once per distinct node object and kept until the node changes.

A column form that depends on something not here (other pods, volumes, ...) may still read
``columns.infos[i]`` for the rows it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .objects.node import Node
    from .objects.nodeinfo import NodeInfo
    from .objects.taints import Taint

__all__ = ["NodeColumns", "default_normalize_columns"]

_CPU = "cpu"
_MEMORY = "memory"
_EPHEMERAL = "ephemeral-storage"
_PODS = "pods"

_I64 = np.int64


def _ro(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


class NodeColumns:
    """Columns of the snapshot's nodes (see the module docstring)."""

    __slots__ = (
        "_alloc",
        "_by_node",
        "_generations",
        "_images",
        "_labels",
        "_nodes",
        "_nz",
        "_pod_count",
        "_req",
        "_taints",
        "_unschedulable",
        "_w_alloc",
        "_w_nz",
        "_w_req",
        "generations",
        "index",
        "infos",
        "n",
        "names",
        "pod_count",
        "version",
    )

    if TYPE_CHECKING:
        n: int
        infos: list[NodeInfo]
        names: list[str]
        index: dict[str, int]
        pod_count: NDArray[np.int64]
        generations: NDArray[np.int64]
        version: int

    def __init__(self, infos: Iterable[NodeInfo]) -> None:
        self.infos = list(infos)
        self.n = n = len(self.infos)
        self.names = [ni.name for ni in self.infos]
        self.index = {name: i for i, name in enumerate(self.names)}
        #: bumped whenever a row changes (a plugin may key its own caches on it)
        self.version = 0
        # Each column is written in its own array (``_w_*``, ``_generations``, ``_pod_count``)
        # and given out as a read-only view of it: the view sees every write, and a write
        # through it raises.
        self._generations = np.zeros(n, _I64)
        #: each row's NodeInfo generation when it was last written
        self.generations = _ro(self._generations.view())
        self._nodes: list[Node | None] = [None] * n
        self._pod_count = np.zeros(n, _I64)
        self.pod_count = _ro(self._pod_count.view())
        # resource name -> column (written), and its read-only view
        self._w_alloc: dict[str, NDArray[np.int64]] = {}
        self._w_req: dict[str, NDArray[np.int64]] = {}
        self._w_nz: dict[str, NDArray[np.int64]] = {}
        self._alloc: dict[str, NDArray[np.int64]] = {}
        self._req: dict[str, NDArray[np.int64]] = {}
        self._nz: dict[str, NDArray[np.int64]] = {}
        for name in (_CPU, _MEMORY):
            self._column(self._w_nz, self._nz, name)
        for name in (_CPU, _MEMORY, _EPHEMERAL, _PODS):
            self._column(self._w_alloc, self._alloc, name)
            self._column(self._w_req, self._req, name)
        self._node_caches_clear()
        for i in range(n):
            self._write(i)

    # maintenance (the runtime) ------------------------------------------------------------------
    def _node_caches_clear(self) -> None:
        self._labels: dict[str, tuple[NDArray[np.int32], list[str]]] = {}
        self._taints: tuple[NDArray[np.int32], list[tuple[Taint, ...]]] | None = None
        self._unschedulable: NDArray[np.bool_] | None = None
        self._images: dict[str, NDArray[np.int64]] = {}
        self._by_node: dict[Hashable, NDArray[Any]] = {}

    def _column(self, w: dict[str, NDArray[np.int64]], views: dict[str, NDArray[np.int64]], name: str) -> NDArray[np.int64]:
        """The written array of a column (made, with its read-only view, on first use)."""
        a = w.get(name)
        if a is None:
            a = w[name] = np.zeros(self.n, _I64)
            views[name] = _ro(a.view())
        return a

    def _write(self, i: int) -> None:
        try:
            self._write_row(i, self.infos[i])
        except OverflowError:
            # a node's sums beyond int64 (over a thousand pods each at RESOURCE_LIMIT): the row
            # is written from a copy whose totals are bounded, so the columns stay int64
            self._write_row(i, _Bounded(self.infos[i]))

    def _write_row(self, i: int, ni: Any) -> None:
        self._generations[i] = ni.generation
        node = ni.node
        if node is not self._nodes[i]:
            self._nodes[i] = node
            self._node_caches_clear()
        alloc = ni.allocatable
        req = ni.requested
        nz = ni.non_zero_requested
        pods = len(ni.pods)
        self._pod_count[i] = pods
        a = self._w_alloc
        r = self._w_req
        a[_CPU][i] = alloc.milli_cpu
        a[_MEMORY][i] = alloc.memory
        a[_EPHEMERAL][i] = alloc.ephemeral_storage
        a[_PODS][i] = alloc.allowed_pod_number
        r[_CPU][i] = req.milli_cpu
        r[_MEMORY][i] = req.memory
        r[_EPHEMERAL][i] = req.ephemeral_storage
        r[_PODS][i] = pods
        w_nz = self._w_nz
        w_nz[_CPU][i] = nz.milli_cpu
        w_nz[_MEMORY][i] = nz.memory
        if alloc.scalar or req.scalar or len(a) > 4:
            for name in set(alloc.scalar) | set(req.scalar) | (set(a) - {_CPU, _MEMORY, _EPHEMERAL, _PODS}):
                self._column(a, self._alloc, name)[i] = alloc.scalar.get(name, 0)
                self._column(r, self._req, name)[i] = req.scalar.get(name, 0)

    def refresh(self, rows: Iterable[int] | None = None) -> None:
        """Rewrite the given rows (the runtime's cache knows which nodes changed), or every row
        whose NodeInfo's generation changed (``rows=None``: a snapshot without a cache)."""
        if rows is None:
            gens = self.generations.tolist()
            rows = [i for i, ni in enumerate(self.infos) if ni.generation != gens[i]]
        else:
            rows = list(rows)
        if not rows:
            return
        for i in rows:
            self._write(i)
        self.version += 1

    # resources ---------------------------------------------------------------------------------
    def allocatable(self, name: str) -> NDArray[np.int64]:
        """The allocatable amount of resource ``name`` per node (0 where the node has none)."""
        a = self._alloc.get(name)
        return a if a is not None else _ro(np.zeros(self.n, _I64))

    def requested(self, name: str) -> NDArray[np.int64]:
        """The amount of ``name`` requested by the node's pods (``NodeInfo.requested``; for
        ``pods``, the number of pods)."""
        a = self._req.get(name)
        return a if a is not None else _ro(np.zeros(self.n, _I64))

    def non_zero_requested(self, name: str) -> NDArray[np.int64]:
        """``NodeInfo.non_zero_requested`` for ``cpu`` and ``memory`` (pods without a request
        count 100m / 200Mi); ``requested`` for other resources."""
        a = self._nz.get(name)
        return a if a is not None else self.requested(name)

    def resource_names(self) -> list[str]:
        """Every resource some node has or has requested."""
        return list(self._alloc)

    # node properties ---------------------------------------------------------------------------
    def label(self, key: str) -> tuple[NDArray[np.int32], list[str]]:
        """``(codes, values)``: ``values[codes[i]]`` is node ``i``'s value of label ``key``;
        ``codes[i] == -1`` where the node does not have the label."""
        got = self._labels.get(key)
        if got is None:
            values: dict[str, int] = {}
            codes = np.empty(self.n, np.int32)
            for i, ni in enumerate(self.infos):
                v = ni.node.labels.get(key)
                codes[i] = -1 if v is None else values.setdefault(v, len(values))
            got = self._labels[key] = (_ro(codes), list(values))
        return got

    def taint_sets(self) -> tuple[NDArray[np.int32], list[tuple[Taint, ...]]]:
        """``(codes, sets)``: ``sets[codes[i]]`` is node ``i``'s taints (distinct lists)."""
        if self._taints is None:
            sets: dict[tuple[Taint, ...], int] = {}
            codes = np.empty(self.n, np.int32)
            for i, ni in enumerate(self.infos):
                codes[i] = sets.setdefault(tuple(ni.node.taints), len(sets))
            self._taints = (_ro(codes), list(sets))
        return self._taints

    @property
    def unschedulable(self) -> NDArray[np.bool_]:
        """``spec.unschedulable`` per node."""
        if self._unschedulable is None:
            self._unschedulable = _ro(np.array([ni.node.unschedulable for ni in self.infos], dtype=bool))
        return self._unschedulable

    def image(self, name: str) -> NDArray[np.int64]:
        """The size of image ``name`` (as the node reports it, ``ImageStateSummary.size``) on
        each node that has it, -1 on the others."""
        got = self._images.get(name)
        if got is None:
            got = np.full(self.n, -1, _I64)
            for i, ni in enumerate(self.infos):
                st = ni.image_states.get(name)
                if st is not None:
                    got[i] = st.size
            self._images[name] = got = _ro(got)
        return got

    def by_node(self, key: Hashable, fn: Callable[[Node], Any], dtype: Any = _I64) -> NDArray[Any]:
        """``fn(node)`` for every node, as an array of ``dtype``; kept under ``key`` until a node
        changes. ``fn`` must read the Node object only (not pods)."""
        got = self._by_node.get(key)
        if got is None:
            got = self._by_node[key] = _ro(np.array([fn(ni.node) for ni in self.infos], dtype=dtype))
        return got

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"NodeColumns(n={self.n}, resources={sorted(self._alloc)})"


class _Bounded:
    """A NodeInfo's totals, each within ``_INT64_BOUND`` (only for :meth:`NodeColumns._write`)."""

    def __init__(self, ni: Any) -> None:
        self.generation, self.node, self.pods = ni.generation, ni.node, ni.pods
        self.allocatable = _bounded_resource(ni.allocatable)
        self.requested = _bounded_resource(ni.requested)
        self.non_zero_requested = _bounded_resource(ni.non_zero_requested)


_INT64_BOUND = (1 << 62)


def _bounded_resource(r: Any) -> Any:
    r = r.clone()
    b = _INT64_BOUND
    r.milli_cpu, r.memory = min(r.milli_cpu, b), min(r.memory, b)
    r.ephemeral_storage, r.allowed_pod_number = min(r.ephemeral_storage, b), min(r.allowed_pod_number, b)
    r.scalar = {k: min(v, b) for k, v in r.scalar.items()}
    return r


def default_normalize_columns(max_priority: int, reverse: bool, scores: NDArray[np.int64]) -> NDArray[np.int64]:
    """:func:`kubesched.sdk.default_normalize_score` on a column of raw scores: scaled by the
    highest one (integer division), ``reverse`` flips them; all zero: unchanged, or all
    ``max_priority`` when ``reverse``."""
    if not len(scores):
        return scores
    max_count = int(scores.max())
    if max_count <= 0:
        if reverse:
            return np.full(len(scores), max_priority, _I64)
        return scores
    out = (max_priority * scores) // max_count
    if reverse:
        out = max_priority - out
    return out


def rows_of(columns: NodeColumns, infos: Sequence[NodeInfo]) -> NDArray[np.intp]:
    """The rows of ``infos`` (NodeInfos of the columns' snapshot)."""
    index = columns.index
    return np.fromiter((index[ni.name] for ni in infos), np.intp, len(infos))
