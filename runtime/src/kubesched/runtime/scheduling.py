"""The scheduling algorithm of one cycle (kube-scheduler's ``schedule_one.go``: schedulePod,
findNodesThatFitPod, findNodesThatPassFilters, prioritizeNodes, selectHost); what it found
per node is a :class:`~.diagnosis.Diagnosis`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.sdk import Code, CycleState, NodeInfo, Pod, Status
from kubesched.sdk.columns import rows_of

from .diagnosis import Diagnosis, FitError, object_array
from .framework.interface import Framework, NodePluginScores
from .framework.reuse import same_pods
from .nominator import filter_adds
from .snapshot import Snapshot

__all__ = [
    "ScheduleResult",
    "Scheduling",
    "num_feasible_nodes_to_find",
]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
BASE_PERCENTAGE_OF_NODES_TO_SCORE = 50


def num_feasible_nodes_to_find(percentage_of_nodes_to_score: int | None, num_all_nodes: int) -> int:
    """kube-scheduler's adaptive numFeasibleNodesToFind."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage_of_nodes_to_score or 0
    if pct >= 100:
        return num_all_nodes
    if pct == 0:
        pct = BASE_PERCENTAGE_OF_NODES_TO_SCORE - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * pct // 100
    if num < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num


@dataclass
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    scores: list[NodePluginScores] = field(default_factory=list)
    diagnosis: Diagnosis | None = None


class Scheduling:
    """The per-scheduler state of the algorithm: the rotating start index and the RNG."""

    def __init__(self, seed: int | None = None, global_percentage: int | None = None) -> None:
        self.next_start_node_index = 0
        self.rng = random.Random(seed)
        self.global_percentage = global_percentage

    def schedule_pod(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        snapshot: Snapshot,
        *,
        keep_scores: bool = False,
    ) -> ScheduleResult:
        """Raises FitError when no node fits, or returns the chosen host. A framework Error is
        raised as ``SchedulingError``."""
        all_nodes = snapshot.list()
        if not all_nodes:
            raise SchedulingError(Status(Code.UNSCHEDULABLE, "no nodes available to schedule pods"), no_nodes=True)
        feasible, diagnosis = self.find_nodes_that_fit_pod(fwk, state, pod, snapshot)
        if not feasible:
            raise FitError(pod, len(all_nodes), diagnosis)
        if len(feasible) == 1:
            res = ScheduleResult(feasible[0].name, 1 + diagnosis.rejected_count(), 1, diagnosis=diagnosis)
            if keep_scores:
                scores, st = self.prioritize_nodes(fwk, state, pod, feasible, details=True)
                res.scores = scores
            return res
        if not fwk.has_score_plugins():
            if keep_scores:
                scores, st = self.prioritize_nodes(fwk, state, pod, feasible)
                host = self.select_host(scores)
                return ScheduleResult(host, len(feasible) + diagnosis.rejected_count(), len(feasible), scores, diagnosis)
            # every node scores 1: select_host's draw among all of them
            host = feasible[self.rng.randrange(len(feasible))].name
            return ScheduleResult(host, len(feasible) + diagnosis.rejected_count(), len(feasible), [], diagnosis)
        st = fwk.run_pre_score_plugins(state, pod, feasible)
        if not st.is_success():
            raise SchedulingError(st)
        if not keep_scores:
            centries = fwk.column_scores(state)
            if centries is not None:
                cols = snapshot.columns
                rows = self._feasible_rows
                if rows is None or len(rows) != len(feasible):
                    rows = rows_of(cols, feasible)
                total = fwk.run_score_columns(state, pod, cols, rows, centries)
                if isinstance(total, Status):
                    raise SchedulingError(total)
                if total is not None:
                    tops = (total == _max(total)).nonzero()[0]
                    k = int(tops[0]) if len(tops) == 1 else int(tops[self.rng.randrange(len(tops))])
                    return ScheduleResult(feasible[k].name, len(feasible) + diagnosis.rejected_count(), len(feasible), [], diagnosis)
        reuse = _reuse_table(fwk, "score", fwk.active_scores(state), pod, snapshot.generation)
        if not keep_scores:
            totals, st = fwk.score_totals(state, pod, feasible, reuse=reuse)
            if not st.is_success():
                raise SchedulingError(st)
            top = max(totals)
            best = [i for i, t in enumerate(totals) if t == top]
            host = feasible[best[0] if len(best) == 1 else best[self.rng.randrange(len(best))]].name
            return ScheduleResult(host, len(feasible) + diagnosis.rejected_count(), len(feasible), [], diagnosis)
        scores, st = fwk.run_score_plugins(state, pod, feasible, details=True, reuse=reuse)
        if not st.is_success():
            raise SchedulingError(st)
        host = self.select_host(scores)
        return ScheduleResult(host, len(feasible) + diagnosis.rejected_count(), len(feasible), scores, diagnosis)

    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        self._feasible_rows = None
        all_nodes = snapshot.list()
        pre_res, st, plugins_with_nodes = fwk.run_pre_filter(state, pod, all_nodes)
        diagnosis.unschedulable_plugins = set(plugins_with_nodes)
        if not st.is_success():
            if not st.is_rejected():
                raise SchedulingError(st)
            diagnosis.rejected_at_pre_filter(st)
            return [], diagnosis
        if pod.nominated_node_name:
            ni = _get(snapshot, pod.nominated_node_name)
            if ni is not None:
                feasible = self._pass_filters(fwk, state, pod, diagnosis, [ni], snapshot.generation)
                if feasible:
                    return feasible, diagnosis
        nodes: Sequence[NodeInfo] = all_nodes
        if pre_res is not None and not pre_res.all_nodes():
            nodes = [ni for name in sorted(pre_res.node_names or ()) if (ni := _get(snapshot, name)) is not None]
            diagnosis.narrowed_by_pre_filter(plugins_with_nodes)
            feasible = self._pass_filters(fwk, state, pod, diagnosis, nodes, snapshot.generation)
        else:
            got = self._pass_filters_columns(fwk, state, pod, diagnosis, snapshot)
            feasible = self._pass_filters(fwk, state, pod, diagnosis, nodes, snapshot.generation) if got is None else got
        processed = len(feasible) + diagnosis.rejected_count()
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, diagnosis

    def _pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
        epoch: int,
    ) -> list[NodeInfo]:
        n = len(nodes)
        if n == 0:
            return []
        pct = fwk.percentage_of_nodes_to_score
        if pct is None:
            pct = self.global_percentage
        to_find = num_feasible_nodes_to_find(pct, n)
        start = self.next_start_node_index % n
        if not fwk.has_filter_plugins():
            order = list(nodes[start:]) + list(nodes[:start]) if start else list(nodes)
            return order[:to_find]
        has_nominated = fwk.services is not None and fwk.services.has_nominated_pods()
        table: dict[Any, Any] | None = None
        entries = fwk.active_filters(state)
        batch = False
        if not has_nominated:
            batch = fwk.batch_filters(state, entries)
            # an earlier pod with the same filter signature left each node's status there; it
            # holds while the node's NodeInfo is unchanged
            table = _reuse_table(fwk, "filter", entries, pod, epoch)
        order = list(nodes[start:]) + list(nodes[:start]) if start else list(nodes)
        feasible: list[NodeInfo] = []
        statuses = diagnosis.node_to_status
        success, error = Code.SUCCESS, Code.ERROR
        i = 0
        while i < n and len(feasible) < to_find:
            # As many nodes as could still be needed: node by node, exactly the calls the
            # sequential loop of kube-scheduler (parallelism 1) makes; batch forms get at least
            # MIN_FILTER_CHUNK (their results past the cut are dropped below, never used).
            size = to_find - len(feasible)
            chunk = order[i : i + (max(size, self.MIN_FILTER_CHUNK) if batch else size)]
            i += len(chunk)
            sts: list[Any] = []
            todo: list[int] = []
            if table is None:
                todo = list(range(len(chunk)))
                sts = [None] * len(chunk)
            else:
                get = table.get
                for j, ni in enumerate(chunk):
                    hit = get(ni)
                    if hit is not None and hit[0] == ni.generation:
                        sts.append(hit[1])
                    else:
                        sts.append(None)
                        todo.append(j)
            if todo:
                if has_nominated:
                    got: list[Status] | Status = [fwk.run_filter_plugins_with_nominated_pods(state, pod, chunk[j]) for j in todo]
                else:
                    got = fwk.run_filter_plugins_batch(state, pod, [chunk[j] for j in todo], entries, batch)
                if isinstance(got, Status):
                    raise SchedulingError(got)
                for j, st in zip(todo, got):
                    sts[j] = st
                    if table is not None and st.code is not error:
                        table[chunk[j]] = (chunk[j].generation, st)
            for ni, st in zip(chunk, sts):
                if st.code is success:
                    feasible.append(ni)
                    if len(feasible) >= to_find:
                        break
                elif st.code is error:
                    raise SchedulingError(st)
                else:
                    statuses[ni.name] = st
                    diagnosis.add_plugin_status(st)
        return feasible

    def _pass_filters_columns(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, snapshot: Snapshot
    ) -> list[NodeInfo] | None:
        """Filter over every node through the plugins' column forms, with the semantics of
        :meth:`_pass_filters` (rotating start, the cut after enough feasible nodes, the first
        rejecting plugin's status per node); None when the cycle cannot use them (a plugin
        without a column form or one that declined, nominated pods on nodes not known).

        With pods nominated to some nodes this is RunFilterPluginsWithNominatedPods: a node
        without nominated pods of the pod's priority or higher gets the run without them (the
        column result); on the others the run with them added comes first and, when it fails,
        decides (:meth:`_nominated_verdicts`)."""
        if not fwk.has_filter_plugins():
            return None
        services = fwk.services
        nominated_nodes = None
        if services is not None and services.has_nominated_pods():
            nominated_nodes = services.nominated_nodes
            if nominated_nodes is None:
                return None
        centries = fwk.column_filters(state, fwk.active_filters(state))
        if centries is None:
            return None
        cols = snapshot.columns
        got = fwk.run_filter_columns(state, pod, cols, centries)
        if got is None:
            return None
        if isinstance(got, Status):
            raise SchedulingError(got)
        first, table = got
        n = cols.n
        pct = fwk.percentage_of_nodes_to_score
        if pct is None:
            pct = self.global_percentage
        to_find = num_feasible_nodes_to_find(pct, n)
        start = self.next_start_node_index % n
        order: Any = None  # position -> row (None: the identity)
        if start:
            order = np.arange(start, start + n)
            order[n - start :] -= n
            rot = first[order]
        else:
            rot = first
        pos = (rot == 0).nonzero()[0]
        if nominated_nodes is not None:
            rot, pos = self._nominated_verdicts(fwk, state, pod, cols, nominated_nodes, start, to_find, rot, pos, table, snapshot.generation)
        if len(pos) >= to_find:
            pos = pos[:to_find]
            processed = int(pos[-1]) + 1 if to_find else 0
        else:
            processed = n
        if processed > len(pos):
            seen = rot[:processed]
            rej = seen.nonzero()[0]
            codes = seen[rej]
            if any(st.code is Code.ERROR for st in table[1:]):
                errs = [c for c in np.unique(codes).tolist() if table[c].code is Code.ERROR]
                if errs:
                    # the walk stops at the first node with an Error (in order)
                    k = int(np.flatnonzero(np.isin(codes, errs))[0])
                    raise SchedulingError(table[int(codes[k])])
            diagnosis.rejected_columns(self._objects(cols, "names"), rej if order is None else order[rej], codes, table)
        rows = self._feasible_rows = pos if order is None else order[pos]
        return self._objects(cols, "infos")[rows].tolist()  # type: ignore[no-any-return]

    def _nominated_verdicts(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        cols: Any,
        nominated_nodes: Any,
        start: int,
        to_find: int,
        rot: Any,
        pos: Any,
        table: list[Status],
        epoch: int,
    ) -> tuple[Any, Any]:
        """The column verdicts ``rot`` (by position in the rotated order, ``pos`` the passing
        positions) with the run with nominated pods added on each node that has some of the
        pod's priority or higher, in order, up to where the walk stops (the cut after
        ``to_find`` feasible nodes, which a node it rejects moves on; an Error ends it): where
        that run fails its status replaces the column one (appended to ``table``).

        A node's run is kept (:meth:`_nominated_memo`) and given to a later pod that would run
        it from the same inputs: the same Filter signature and priority, the node's unchanged
        NodeInfo generation and the same nominated pods added there (the objects, in order)."""
        services = fwk.services
        assert services is not None
        index, n = cols.index, cols.n
        nominated_for = services.nominated_pods_for_node
        tried: list[tuple[int, int, str]] = []
        for name in list(nominated_nodes()):
            row = index.get(name)
            if row is None:
                continue  # not in this cycle's snapshot: Filter never sees it
            if filter_adds(nominated_for(name), pod):
                tried.append(((row - start) % n, row, name))
        if not tried:
            return rot, pos
        tried.sort()
        memo = self._nominated_memo(fwk, state, pod, epoch, n)
        infos = cols.infos
        cut = int(pos[to_find - 1]) + 1 if len(pos) >= to_find else n
        dropped: list[int] = []
        copied = False
        error = Code.ERROR
        for p, row, name in tried:
            if p >= cut:
                break
            ni = infos[row]
            if memo is None:
                st = fwk.run_filter_with_nominated_pods_added(state, pod, ni)
            else:
                added = filter_adds(nominated_for(name), pod)
                hit = memo.get(name)
                if hit is not None and hit[0] == ni.generation and same_pods(hit[1], added):
                    st = hit[2]
                else:
                    st = fwk.run_filter_with_nominated_pods_added(state, pod, ni, added)
                    if st is None or st.code is not error:
                        memo[name] = (ni.generation, added, st)
            if st is None:
                continue
            if not copied:
                rot, copied = rot.copy(), True  # the column form's array stays as it gave it
            table.append(st)
            if rot[p] == 0:
                dropped.append(p)
                k = to_find - 1 + len(dropped)
                cut = int(pos[k]) + 1 if len(pos) > k else n
            rot[p] = len(table) - 1
            if st.code is error:
                break  # the walk stops here, if not at an earlier Error
        if dropped:
            pos = pos[~np.isin(pos, dropped)]
        return rot, pos

    #: Private switch: False runs Filter with the nominated pods added on every node the walk
    #: gets to (the reference the tests compare the kept runs with).
    _reuse_nominated = True

    def _nominated_memo(self, fwk: Framework, state: CycleState, pod: Pod, epoch: int, num_nodes: int) -> dict[str, Any] | None:
        """Node name -> (NodeInfo generation, the nominated pods added, the run's status or
        None) for pods with ``pod``'s Filter signature and priority (which nominated pods are
        added depends on it), emptied when the node set or images change (``epoch``, as the
        framework's reuse tables) and when it grows past twice the nodes; None when results
        are not reused (``reuse_results`` off, or the signature's rule does not hold: see
        ``FrameworkHandle.filter_signature``). Errors are never kept."""
        if not self._reuse_nominated or not fwk.reuse_results:
            return None
        handle = fwk.handle
        sig = handle.filter_signature(state, pod) if handle is not None else None
        if sig is None:
            return None
        memo: dict[str, Any] = fwk.reuse_table("nominated", (sig, pod.priority), epoch)
        if len(memo) > 2 * num_nodes:
            memo.clear()
        return memo

    def _objects(self, cols: Any, attr: str) -> Any:
        """``cols.infos`` or ``cols.names`` (lists the columns never change) as a numpy
        object array, made once per list: one fancy index then picks a cycle's rows."""
        lst = getattr(cols, attr)
        cache = self._object_arrays
        if cache is None:
            cache = self._object_arrays = {}
        got = cache.get(attr)
        if got is None or got[0] is not lst or len(got[1]) != len(lst):
            got = cache[attr] = (lst, object_array(lst))
        return got[1]

    #: ``_objects``' arrays by attribute, with the list each was made from
    _object_arrays: dict[str, tuple[Any, Any]] | None = None

    #: the rows (in the snapshot's columns) of the last column-form Filter's feasible nodes
    _feasible_rows: Any = None

    #: the smallest chunk of nodes given to batch Filter forms at once
    MIN_FILTER_CHUNK = 32

    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo], details: bool = False
    ) -> tuple[list[NodePluginScores], Status]:
        if not fwk.has_score_plugins():
            return [NodePluginScores(ni.name, [], 1) for ni in nodes], Status()
        st = fwk.run_pre_score_plugins(state, pod, nodes)
        if not st.is_success():
            return [], st
        return fwk.run_score_plugins(state, pod, nodes, details)

    def select_host(self, scores: list[NodePluginScores]) -> str:
        """Highest total; ties broken uniformly at random (as selectHost's reservoir sampling,
        with one draw)."""
        top = max(s.total_score for s in scores)
        best = [s for s in scores if s.total_score == top]
        if len(best) == 1:
            return best[0].name
        return best[self.rng.randrange(len(best))].name


class SchedulingError(Exception):
    def __init__(self, status: Status, no_nodes: bool = False) -> None:
        super().__init__(status.message)
        self.status = status
        self.no_nodes = no_nodes


def _reuse_table(fwk: Framework, kind: str, entries: Sequence[Any], pod: Pod, epoch: int) -> dict[Any, Any] | None:
    """The framework's reuse table of ``kind`` for ``pod`` as signed by the plugins of
    ``entries``; None when reuse is off or one of them does not sign the pod."""
    if not fwk.reuse_results:
        return None
    sig = fwk.sign([name for name, _ in entries], pod)
    if isinstance(sig, Status):
        raise SchedulingError(sig)
    return None if sig is None else fwk.reuse_table(kind, sig, epoch)


_max = np.maximum.reduce


def _get(snapshot: Snapshot, name: str) -> NodeInfo | None:
    try:
        return snapshot.get(name)
    except KeyError:
        return None


__all__ += ["SchedulingError"]
