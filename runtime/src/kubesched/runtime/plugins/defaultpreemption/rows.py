"""The dry run's per-node reads over the snapshot's columns (row ``i`` is ``snapshot.list()[i]``):
which nodes PostFilter's statuses make potential candidates, and the lowest priority of each
node's pods, as vectors instead of a Python pass over every node per preemptor.

:class:`NodeRows` keeps the lowest pod priority of every row with the NodeInfo ``generation``
of the row it was read at (as :mod:`kubesched.runtime.podindex` does): a read compares the
generations with the columns' and rereads only the rows whose NodeInfo changed (a pod placed
or removed bumps it); new columns (a node added or removed) are read whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import repeat
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import Code, NodeColumns, NodeInfo, Status

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["NO_PODS", "NodeRows", "lowest_priority", "potential_rows"]

#: the lowest priority of a node without pods: above every pod priority (int32)
NO_PODS = 2**62

_code = attrgetter("code")


class _Absent:
    """What ``m.get`` gives for a node missing from the statuses: a code that is not
    Unschedulable (NodeToStatus.Get: UnschedulableAndUnresolvable)."""

    __slots__ = ()
    code = None


_ABSENT = _Absent()


def lowest_priority(ni: NodeInfo) -> int:
    """The lowest priority of the node's pods (:data:`NO_PODS` without pods)."""
    return min([p.priority for p in ni.pods], default=NO_PODS)


def potential_rows(m: Mapping[str, Status], columns: NodeColumns) -> NDArray[np.intp] | None:
    """The rows whose status in ``m`` is Unschedulable, ascending (the nodes preemption may
    help, in the snapshot's order); None when a value of ``m`` is not a status."""
    try:
        mask = np.fromiter(
            map(is_, map(_code, map(m.get, columns.names, repeat(_ABSENT))), repeat(Code.UNSCHEDULABLE)),
            bool,
            columns.n,
        )
    except AttributeError:
        return None
    return np.flatnonzero(mask)


class NodeRows:
    """Per row of one snapshot's columns: the NodeInfos and names as object arrays and the
    lowest priority of the node's pods, kept by NodeInfo generation (see the module)."""

    __slots__ = ("_gens", "_lowest", "columns", "infos", "names")

    def __init__(self) -> None:
        self.columns: NodeColumns | None = None
        self.infos: NDArray[Any] = np.empty(0, object)
        self.names: NDArray[Any] = np.empty(0, object)
        self._gens: NDArray[np.int64] = np.zeros(0, np.int64)
        self._lowest: NDArray[np.int64] = np.zeros(0, np.int64)

    def lowest(self, columns: NodeColumns) -> NDArray[np.int64]:
        """Per row, the lowest priority of the node's pods (:data:`NO_PODS` without pods), up
        to date with ``columns``' generations. Read-only."""
        if columns is not self.columns:
            n = columns.n
            infos = columns.infos
            self.infos = np.fromiter(infos, object, n)
            self.names = np.fromiter(columns.names, object, n)
            self._lowest = np.fromiter(map(lowest_priority, infos), np.int64, n)
            self._gens = columns.generations.copy()
            self.columns = columns
        else:
            gens = columns.generations
            changed = np.flatnonzero(gens != self._gens)
            if len(changed):
                infos = columns.infos
                low = self._lowest
                for r in changed.tolist():
                    low[r] = lowest_priority(infos[r])
                self._gens[changed] = gens[changed]
        return self._lowest
