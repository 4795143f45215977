"""The dry run's memo: a node's SelectVictimsOnNode result kept for the next preemptor that
would compute it again from the same inputs.

The result on node N (its victims and number of PDB violations, or its failure status) is a
function of:

* what the Filter plugins and their AddPod/RemovePod extensions read of the preemptor and of its
  PreFilter state: the framework's Filter signature (``sign_pod`` of every Filter plugin not
  skipped by its PreFilter, the rule of the framework's own Filter reuse), required to cover every
  plugin whose extension runs, and equal for the pod the cycle ran PreFilter with and the latest
  pod the dry run uses;
* the preemptor's priority (which pods are victims, which nominated pods Filter adds);
* N's NodeInfo (its ``generation``: global, bumped with every pod and Node change) and the node
  set and images (the snapshot's ``generation``, as for the framework's reuse);
* the pods nominated to N that Filter adds for this preemptor (priority at least the
  preemptor's, not the preemptor itself), compared by identity: an updated pod is a new object;
* the PDBs (compared by value);
* the clock, only through the start time of pods that have not started (``now``) in the victims'
  order: a result is kept only when every started potential victim started before the ``now``
  it was computed with and is reused only while that still holds (then each started pod sorts
  before every pod that has not started at either time, and the order is the same), or when
  every potential victim has started (the order does not read the clock).

:class:`DryRunMemo` holds one table per (signature, priority), node name -> entry, emptied when
the PDBs or the snapshot's generation change; the last :attr:`DryRunMemo.TABLES` tables are
kept, and a table that grows past twice the number of nodes (nodes come and go) is emptied.
Errors are never kept. Which nodes are tried, in which order and when the search stops are the
dry run's, unchanged: only the per-node computation is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.sdk import Pod, Status

__all__ = ["NO_START", "DryRunMemo", "Entry"]

#: the latest start time of a node's potential victims when the order does not read the clock
NO_START = float("-inf")

#: (NodeInfo generation, nominated pods added (objects), latest start time that must be before
#: ``now``, victims, number of PDB violations, status)
Entry = tuple[int, tuple[Pod, ...], float, tuple[Pod, ...], int, Status]


class DryRunMemo:
    """The tables of kept results (see the module's docstring)."""

    #: tables kept, one per (signature, priority)
    TABLES = 8

    __slots__ = ("_epoch", "_pdbs", "_tables")

    def __init__(self) -> None:
        self._tables: dict[tuple[Any, int], dict[str, Entry]] = {}
        self._epoch: Any = None
        self._pdbs: Sequence[Mapping[str, Any]] | None = None

    def table(self, signature: tuple[Any, ...], priority: int, epoch: Any, pdbs: Sequence[Mapping[str, Any]], num_nodes: int) -> dict[str, Entry]:
        """The table of preemptors with this signature and priority, for this snapshot
        generation and these PDBs (every table is emptied when either changed)."""
        if epoch != self._epoch or self._pdbs is None or list(pdbs) != self._pdbs:
            self._tables.clear()
            self._epoch = epoch
            self._pdbs = list(pdbs)
        tables = self._tables
        key = (signature, priority)
        t = tables.pop(key, None)
        if t is None:
            t = {}
            if len(tables) >= self.TABLES:
                del tables[next(iter(tables))]
        elif len(t) > 2 * num_nodes:
            t.clear()
        tables[key] = t
        return t

    def clear(self) -> None:
        self._tables.clear()
        self._epoch = None
        self._pdbs = None

    def __len__(self) -> int:
        return sum(len(t) for t in self._tables.values())
