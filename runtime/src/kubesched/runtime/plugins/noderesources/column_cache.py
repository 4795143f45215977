"""The resource columns the noderesources column forms read, gathered once per version of the
snapshot's columns and shared by NodeResourcesFit's Filter, its Score and
NodeResourcesBalancedAllocation's Score.

:class:`NodeColumns` rewrites changed rows in place and bumps ``columns.version`` on every
refresh, so ``(columns, version)`` names the content: a pod assumed on a node between two cycles
bumps it, and the next read updates the matrices on the rows whose NodeInfo generation changed
(a NodeInfo's content changes only with its generation). Within one cycle (Filter, then Score of
two plugins on the same feasible rows) they are read once. The arrays here are private copies,
written only by that update, under a lock, and never handed out: the strategies get gathered
copies.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from kubesched.sdk import NodeColumns

__all__ = ["FIXED", "ResourceMatrix", "matrix"]

#: the resources every node row has, in Filter's order of reasons (scalars follow, by name)
FIXED = ("pods", "cpu", "memory", "ephemeral-storage")


class ResourceMatrix:
    """Per resource (rows: :data:`FIXED`, then the scalar resources some node has or has
    requested, sorted by name; columns: the nodes) the allocatable amount and the free amount
    (allocatable - requested; for ``pods`` the node's pod count is requested), int64."""

    __slots__ = (
        "_cpu_mem",
        "_cpu_mem_built",
        "_gathered",
        "_resources",
        "alloc",
        "columns",
        "free",
        "generations",
        "index",
        "names",
        "version",
    )

    def __init__(self, columns: NodeColumns) -> None:
        self.columns = columns
        self.version = columns.version
        self._resources = columns.resource_names()
        #: each row's NodeInfo generation as read here
        self.generations = columns.generations.copy()
        names = list(FIXED) + sorted(n for n in self._resources if n not in FIXED)
        self.names = tuple(names)
        self.index = {n: i for i, n in enumerate(names)}
        # np.array of a list of rows: one copy (np.stack costs several times more)
        self.alloc: NDArray[np.int64] = np.array([columns.allocatable(n) for n in names], np.int64)
        self.free: NDArray[np.int64] = self.alloc - np.array([columns.requested(n) for n in names], np.int64)
        self._cpu_mem: NDArray[np.int64] | None = None
        self._cpu_mem_built = False
        self._gathered: tuple[Any, NDArray[np.int64]] | None = None

    def update(self) -> bool:
        """Read the rows of the nodes whose generation changed since this matrix was made or
        last updated (a node's content changes only with its generation); False when it cannot
        (other resources, or many rows: the caller builds a new one)."""
        columns = self.columns
        if columns.resource_names() != self._resources:
            return False
        gens = columns.generations
        changed = np.flatnonzero(gens != self.generations).tolist()
        if len(changed) > _MAX_UPDATED_ROWS:
            return False
        self._gathered = None
        self.version = columns.version
        if not changed:
            return True
        # a few rows (one per pod assumed or bound since): scalar reads and writes (numpy's
        # fancy indexing with a list costs more than the loop)
        alloc, free = self.alloc, self.free
        cm = self._cpu_mem
        for j, name in enumerate(self.names):
            a = columns.allocatable(name)
            r = columns.requested(name)
            for i in changed:
                ai = a[i]
                alloc[j, i] = ai
                free[j, i] = ai - r[i]
        if cm is not None:
            if all(alloc[1, i] and alloc[2, i] for i in changed):
                nz_cpu, nz_mem = columns.non_zero_requested("cpu"), columns.non_zero_requested("memory")
                r_cpu, r_mem = columns.requested("cpu"), columns.requested("memory")
                for i in changed:
                    cm[0, i] = alloc[1, i]
                    cm[1, i] = alloc[2, i]
                    cm[2, i] = nz_cpu[i]
                    cm[3, i] = nz_mem[i]
                    cm[4, i] = r_cpu[i]
                    cm[5, i] = r_mem[i]
            else:
                self._cpu_mem = None
        elif self._cpu_mem_built:
            self._cpu_mem_built = False  # maybe every node has cpu and memory now
        mine = self.generations
        for i in changed:
            mine[i] = gens[i]
        return True

    def cpu_mem(self) -> NDArray[np.int64] | None:
        """Rows (allocatable cpu, allocatable memory, non-zero requested cpu, non-zero requested
        memory, requested cpu, requested memory) over every node; None when some node's
        allocatable cpu or memory is 0 (the scorers then leave that resource out per node)."""
        got = self._cpu_mem
        if not self._cpu_mem_built:
            c = self.columns
            a = self.alloc[1:3]
            got = None
            if a.all():
                got = np.array(
                    [
                        a[0],
                        a[1],
                        c.non_zero_requested("cpu"),
                        c.non_zero_requested("memory"),
                        c.requested("cpu"),
                        c.requested("memory"),
                    ],
                    np.int64,
                )
            self._cpu_mem = got
            self._cpu_mem_built = True
        return got

    def cpu_mem_rows(self, rows: NDArray[np.intp]) -> NDArray[np.int64] | None:
        """:meth:`cpu_mem` of the nodes of ``rows`` (the same ``rows`` object as the last call:
        the same gathered array, so Fit's Score and BalancedAllocation's gather once)."""
        g = self._gathered
        if g is not None and g[0] is rows:
            return g[1]
        full = self.cpu_mem()
        if full is None:
            return None
        got = full[:, rows]
        self._gathered = (rows, got)
        return got


#: more changed rows than this: a new matrix (one copy per resource beats a loop per row)
_MAX_UPDATED_ROWS = 16

_last: ResourceMatrix | None = None
_lock = threading.Lock()


def matrix(columns: NodeColumns) -> ResourceMatrix:
    """The :class:`ResourceMatrix` of ``columns`` as they are now: the last one when the
    columns did not change since, updated on the rows of the nodes that changed, or a new one
    (other columns)."""
    global _last
    m = _last
    if m is not None and m.columns is columns and m.version == columns.version:
        return m
    with _lock:
        m = _last
        if m is None or m.columns is not columns or not (m.version == columns.version or m.update()):
            m = _last = ResourceMatrix(columns)
    return m
