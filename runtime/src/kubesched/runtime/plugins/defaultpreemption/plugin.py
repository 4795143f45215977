"""The DefaultPreemption plugin and its evaluator (``default_preemption.go``, ``preemption.go``):
eligibility, the candidates' dry run, the victims on one node, the choice of a candidate."""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.sdk import (
    Code,
    CycleState,
    NodeColumns,
    NodeInfo,
    ObjectNotFound,
    Pod,
    PostFilterResult,
    Status,
    hookimpl,
)
from kubesched.sdk.objects import parse_time as _parse_time

from ...framework.reuse import same_pods
from ...nominator import filter_adds
from ...podindex import snapshot_columns
from .args import DefaultPreemptionArgs
from .executor import Executor
from .reuse import NO_START, DryRunMemo, Entry
from .rows import NodeRows, lowest_priority, potential_rows
from .victims import (
    NO_VICTIMS_MSG,
    NOT_HELPFUL_MSG,
    Candidate,
    ParsedPDB,
    filter_pods_with_pdb_violation,
    fit_error_message,
    more_important_pod,
    parse_pdbs,
    pick_one_node_for_preemption,
    pod_start_time,
    pod_terminating_by_preemption,
    split_by_pdbs,
)

__all__ = ["NAME", "DefaultPreemption"]

log = logging.getLogger("kubesched.runtime.plugins.defaultpreemption")

NAME = "DefaultPreemption"


class DefaultPreemption(Executor):
    """PostFilter: preempt lower-priority pods so that the pod fits on one node."""

    name = NAME
    Args = DefaultPreemptionArgs
    #: read through handle.objects (victims that violate the fewest PDBs)
    watches = (("policy/v1", "PodDisruptionBudget"),)
    args_kind = "DefaultPreemptionArgs"
    #: Private switch: False copies every node tried and runs SelectVictimsOnNode on it, as Go
    #: does, also on nodes without a pod of lower priority than the preemptor (the reference
    #: the tests compare the skip with).
    _skip_nodes_without_victims = True
    #: Private switch: False runs ``select_victims_on_node`` on the copies for every node tried
    #: (the reference the tests compare :meth:`_select_victims_incremental` with).
    _incremental_victims = True
    #: Private switch: False computes every node's victims in every dry run; True (with the
    #: incremental victims and this class's methods) reuses a node's result from an earlier
    #: preemptor when it would be computed from the same inputs (see :mod:`.reuse`).
    _reuse_dry_runs = True

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Any) -> None:
        self.args = args if args is not None else DefaultPreemptionArgs()
        self.handle = handle
        self._rng = random.Random(0)
        #: rand.Int31n(n): the offset of the first node to try; replaceable in tests.
        self.get_offset_rand: Callable[[int], int] = self._rng.randrange
        #: IsEligiblePod: extra filtering of victims beyond "lower priority" (default: none).
        self.is_eligible_pod: Callable[[NodeInfo, Pod, Pod], bool] = lambda node_info, victim, preemptor: True
        self._default_is_eligible_pod = self.is_eligible_pod
        #: MoreImportantPod: the victims' order, most important first.
        self.more_important_pod: Callable[[Pod, Pod], bool] = lambda a, b: more_important_pod(a, b, self._now())
        self._default_more_important_pod = self.more_important_pod
        #: node name -> (NodeInfo.generation, the lowest priority of its pods): a NodeInfo's
        #: generation changes with each pod added or removed, and a clone keeps it
        self._lowest_priority: dict[str, tuple[int, int]] = {}
        #: the same per row of the snapshot's columns (see :mod:`.rows`)
        self._rows = NodeRows()
        #: the nodes' dry-run results kept across preemptors (see :mod:`.reuse`)
        self._memo = DryRunMemo()
        #: the preemptor's Filter signature while :meth:`preempt` runs the dry run (None: no reuse)
        self._dry_run_sig: tuple[Any, ...] | None = None
        #: (state, the pod PreFilter ran with, the latest pod) while :meth:`preempt` runs the
        #: dry run and the signature is not computed yet
        self._dry_run_pods: tuple[CycleState, Pod, Pod] | None = None
        self._init_executor()

    # -- hooks ----------------------------------------------------------------------------------
    @hookimpl
    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]) -> Any:
        result, status = self.preempt(state, pod, filtered_node_status)
        msg = status.message
        if msg:
            return result, Status(status.code, "preemption: " + msg, error=status.error)
        return result, status

    # -- the evaluator --------------------------------------------------------------------------
    def _now(self) -> float:
        try:
            return float(self.handle.clock.now())
        except Exception:  # pragma: no cover - handles without a clock
            import time

            return time.time()

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = (num_nodes * self.args.min_candidate_nodes_percentage) // 100
        if n < self.args.min_candidate_nodes_absolute:
            n = self.args.min_candidate_nodes_absolute
        if n > num_nodes:
            n = num_nodes
        return n

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.get_offset_rand(num_nodes), self.calculate_num_candidates(num_nodes)

    def is_preemption_allowed(self, node_info: NodeInfo, victim: Pod, preemptor: Pod) -> bool:
        return victim.priority < preemptor.priority and self.is_eligible_pod(node_info, victim, preemptor)

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        if pod.preemption_policy == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nom = pod.nominated_node_name
        if nom:
            # the nominated node is UnschedulableAndUnresolvable: consider preempting again
            # (None is Go's nil Status, i.e. Success)
            if nominated_node_status is not None and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            try:
                node_info = self.handle.snapshot().get(nom)
            except KeyError:
                node_info = None
            if node_info is not None:
                for p in node_info.pods:
                    if self.is_preemption_allowed(node_info, p, pod) and pod_terminating_by_preemption(p):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def preempt(
        self, state: CycleState, pod: Pod, m: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        h = self.handle
        cycle_pod = pod
        # 0) the latest version of the pod
        try:
            pod = Pod(h.objects.get("v1", "Pod", pod.name, pod.namespace))
        except ObjectNotFound as e:
            log.error("Could not get the updated preemptor pod object %s: %s", pod.key, e)
            return None, Status.from_exception(e)

        # 1) eligibility
        # NodeToStatus.Get: a node missing from the map has the absent status, UnschedulableAndUnresolvable
        nom_status = m.get(pod.nominated_node_name) or Status.unresolvable()
        ok, msg = self.pod_eligible_to_preempt_others(pod, nom_status)
        if not ok:
            return None, Status.unschedulable(msg)

        # 2) candidates
        all_nodes = h.snapshot().list()
        try:
            # the signature is computed when a node is tried (see _dry_run)
            self._dry_run_pods = (state, cycle_pod, pod)
            candidates, node_to_status = self.find_candidates(state, all_nodes, pod, m)
        except Exception as e:
            return None, Status.from_exception(e)
        finally:
            self._dry_run_sig = None
            self._dry_run_pods = None
        if not candidates:
            msg = fit_error_message(len(all_nodes), node_to_status, Status.unresolvable(NOT_HELPFUL_MSG))
            return PostFilterResult("", mode="clear"), Status.unschedulable(msg)

        # 3) extenders: none in kubesched
        # 4) the best candidate
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status.unschedulable("no candidate node for preemption")

        # 5) preparation
        st = self.actuate_pod_preemption(best, pod)
        if not st.is_success():
            return None, st
        return PostFilterResult(best.name), Status.success()

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod, m: Mapping[str, Status]
    ) -> tuple[list[Candidate], dict[str, Status]]:
        if not all_nodes:
            raise RuntimeError("no nodes available")
        columns = self._columns_of(all_nodes)
        rows = potential_rows(m, columns) if columns is not None else None
        if columns is None or rows is None:
            get, unschedulable = m.get, Code.UNSCHEDULABLE
            potential = [ni for ni in all_nodes if (st := get(ni.name)) is not None and st.code is unschedulable]
            num_potential = len(potential)
        else:
            num_potential = len(rows)
        if not num_potential:
            log.debug("Preemption will not help schedule pod %s on any node", pod.key)
            return [], {}
        pdbs = self.get_pod_disruption_budgets()
        offset, num = self.get_offset_and_num_candidates(num_potential)
        if columns is None or rows is None:
            candidates, statuses, errs = self.dry_run_preemption(state, pod, potential, pdbs, offset, num)
        else:
            candidates, statuses, errs = self._dry_run_rows(state, pod, columns, rows, pdbs, offset, num)
        if errs and not candidates:
            raise RuntimeError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
        return candidates, statuses

    def get_pod_disruption_budgets(self) -> list[Mapping[str, Any]]:
        try:
            return list(self.handle.objects.list("policy/v1", "PodDisruptionBudget"))
        except ObjectNotFound:
            return []

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[Mapping[str, Any]],
        offset: int,
        candidates_num: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        n = len(potential_nodes)
        # the nodes from the offset on, wrapping around
        start = offset % n if n else 0
        order = [*potential_nodes[start:], *potential_nodes[:start]]
        if not self._skips_nodes_without_victims():
            return self._dry_run(state, pod, order, None, n, lambda stop: [], pdbs, candidates_num)
        prio = pod.priority
        lowest = self._lowest_priority
        positions: list[int] = []
        for i, ni in enumerate(order):
            gen = ni.generation
            entry = lowest.get(ni.name)
            if entry is None or entry[0] != gen:
                entry = lowest[ni.name] = (gen, lowest_priority(ni))
            if entry[1] < prio:
                positions.append(i)
        return self._dry_run(
            state,
            pod,
            [order[i] for i in positions],
            positions,
            n,
            lambda stop: [ni.name for ni in order[:stop]],
            pdbs,
            candidates_num,
        )

    def _columns_of(self, all_nodes: Sequence[NodeInfo]) -> NodeColumns | None:
        """The snapshot's columns when ``find_candidates`` may read the nodes as rows: the
        nodes are the runtime snapshot's list, and the dry run is this class's with the skip
        of nodes without victims."""
        if type(self).dry_run_preemption is not DefaultPreemption.dry_run_preemption or not self._skips_nodes_without_victims():
            return None
        return snapshot_columns(self.handle, all_nodes)

    def _dry_run_rows(
        self,
        state: CycleState,
        pod: Pod,
        columns: NodeColumns,
        rows: Any,
        pdbs: Sequence[Mapping[str, Any]],
        offset: int,
        candidates_num: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """``dry_run_preemption`` of the nodes at ``rows`` (ascending) of ``columns``: the
        nodes without a pod of lower priority than the preemptor found by one vector compare."""
        n = len(rows)
        start = offset % n
        order = np.concatenate((rows[start:], rows[:start])) if start else rows
        node_rows = self._rows
        positions = np.flatnonzero(node_rows.lowest(columns)[order] < pod.priority)
        names = node_rows.names
        return self._dry_run(
            state,
            pod,
            node_rows.infos[order[positions]].tolist(),
            positions.tolist(),
            n,
            lambda stop: names[order[:stop]].tolist(),
            pdbs,
            candidates_num,
        )

    def _dry_run(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        positions: Sequence[int] | None,
        total: int,
        names_to: Callable[[int], list[str]],
        pdbs: Sequence[Mapping[str, Any]],
        candidates_num: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """The dry run of the nodes tried in turn: ``nodes``, at ``positions`` of the order of
        the ``total`` potential nodes (None: every node is tried and ``nodes`` is that order); the others
        have no pod of lower priority than the preemptor, and the ones visited before the search
        stops get SelectVictimsOnNode's status for them without a copy. ``names_to(stop)``: the
        names of the first ``stop`` nodes of the order."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        errs: list[str] = []
        skip = positions is not None
        # the victims of a node through the copies' updates in place (same calls, same order)
        parsed = parse_pdbs(pdbs) if skip and self._incremental_victims else None
        prio = pod.priority
        # the results kept from earlier preemptors with this signature and priority
        table = None
        if nodes and parsed is not None:
            if self._dry_run_pods is not None:
                self._dry_run_sig = self._dry_run_signature(*self._dry_run_pods)
                self._dry_run_pods = None
            if self._dry_run_sig is not None:
                table = self._reuse_table(prio, pdbs, total)
        if table is not None:
            nominated_for = self.handle.nominated_pods_for_node
            # the one "now" of this dry run's victims' order (pods that have not started)
            now = self._now()
        #: the nodes tried before the search stops: (name, status; None for a candidate)
        tried: list[tuple[str, Status | None]] = []
        #: the number of nodes visited when the search stopped (None: it did not stop)
        stop: int | None = None
        for k, ni in enumerate(nodes):
            if table is not None and parsed is not None:
                # the nominated pods Filter adds on this node for this preemptor
                added = filter_adds(nominated_for(ni.name), pod)
                hit = table.get(ni.name)
                if hit is not None and hit[0] == ni.generation and hit[2] < now and same_pods(hit[1], added):
                    victims, num_violations, status = list(hit[3]), hit[4], hit[5]
                else:
                    victims, num_violations, status = self._select_victims_incremental(state, pod, ni, parsed, now)
                    if status.code is not Code.ERROR:
                        latest = _latest_start(ni.pods, prio)
                        if latest is not None and latest < now:
                            table[ni.name] = (ni.generation, added, latest, tuple(victims), num_violations, status)
            elif parsed is not None:
                victims, num_violations, status = self._select_victims_incremental(state, pod, ni, parsed)
            else:
                victims, num_violations, status = self.select_victims_on_node(state.clone(), pod, ni.clone(), pdbs)
            if status.is_success() and victims:
                c = Candidate(ni.name, victims, num_violations)
                target = non_violating if num_violations == 0 else violating
                if len(target) < candidates_num:
                    target.append(c)
                tried.append((ni.name, None))
                if non_violating and len(non_violating) + len(violating) >= candidates_num:
                    stop = positions[k] + 1 if positions is not None else k + 1
                    break
                continue
            if status.is_success() and not victims:
                status = Status.failed(f'expected at least one victim pod on node "{ni.name}"')
            if status.code is Code.ERROR:
                errs.append(status.message)
            tried.append((ni.name, status))
        visited = stop if stop is not None else total
        if positions is None or len(tried) == visited:
            # every node visited was tried
            statuses = {name: st for name, st in tried if st is not None}
        else:
            # no pod of lower priority: SelectVictimsOnNode would find no victim on the copy
            # and return this status, the state untouched; in the order the nodes are visited
            statuses = dict.fromkeys(names_to(visited), Status.unresolvable(NO_VICTIMS_MSG))
            for name, st in tried:
                if st is None:
                    del statuses[name]
                else:
                    statuses[name] = st
        return non_violating + violating, statuses, errs

    def _skips_nodes_without_victims(self) -> bool:
        """Whether the dry run may give a node without a pod of lower priority than the
        preemptor its status without copying it: with this class's ``is_preemption_allowed``
        (lower priority first, then ``is_eligible_pod``) and ``select_victims_on_node``."""
        cls = type(self)
        return (
            self._skip_nodes_without_victims
            and cls.is_preemption_allowed is DefaultPreemption.is_preemption_allowed
            and cls.select_victims_on_node is DefaultPreemption.select_victims_on_node
        )

    def _dry_run_signature(self, state: CycleState, cycle_pod: Pod, pod: Pod) -> tuple[Any, ...] | None:
        """The key of the preemptor's dry-run results (see :mod:`.reuse`): its Filter signature
        when the dry run may reuse them (this class's methods and default eligibility and order,
        and the same signature for the pod PreFilter ran with and the latest pod); else None."""
        if not (
            self._reuse_dry_runs
            and self._incremental_victims
            and self._skips_nodes_without_victims()
            and self.is_eligible_pod is self._default_is_eligible_pod
            and self.more_important_pod is self._default_more_important_pod
        ):
            return None
        sign = getattr(self.handle, "filter_signature", None)
        if sign is None:
            return None
        sig: tuple[Any, ...] | None = sign(state, cycle_pod)
        if sig is None or (pod is not cycle_pod and sign(state, pod) != sig):
            return None
        return sig

    def _reuse_table(self, prio: int, pdbs: Sequence[Mapping[str, Any]], num_nodes: int) -> dict[str, Entry] | None:
        """This dry run's table of kept results, for its signature and ``prio``; None when the
        snapshot has no generation."""
        sig = self._dry_run_sig
        epoch = getattr(self.handle.snapshot(), "generation", None)
        if sig is None or epoch is None:
            return None
        return self._memo.table(sig, prio, epoch, pdbs, num_nodes)

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
    ) -> tuple[list[Pod], int, Status]:
        """SelectVictimsOnNode; ``state`` and ``node_info`` are copies and are modified."""
        h = self.handle

        def remove_pod(p: Pod) -> Status:
            node_info.remove_pod(p)
            return h.run_pre_filter_extension_remove_pod(state, pod, p, node_info)

        def add_pod(p: Pod) -> Status:
            node_info.add_pod(p)
            return h.run_pre_filter_extension_add_pod(state, pod, p, node_info)

        potential = [p for p in node_info.pods if self.is_preemption_allowed(node_info, p, pod)]
        for p in potential:
            st = remove_pod(p)
            if not st.is_success():
                return [], 0, Status(Code.ERROR, st.message, error=st.error)
        if not potential:
            return [], 0, Status.unresolvable(NO_VICTIMS_MSG)

        st = h.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not st.is_success():
            return [], 0, st

        potential = self._by_importance(potential)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []

        def reprieve(p: Pod) -> bool:
            s = add_pod(p)
            if not s.is_success():
                raise _DryRunError(s)
            fits = h.run_filter_plugins_with_nominated_pods(state, pod, node_info).is_success()
            if not fits:
                s = remove_pod(p)
                if not s.is_success():
                    raise _DryRunError(s)
                victims.append(p)
            return fits

        num_violating = 0
        try:
            for p in violating:
                if not reprieve(p):
                    num_violating += 1
            for p in non_violating:
                reprieve(p)
        except _DryRunError as e:
            return [], 0, Status(Code.ERROR, e.status.message, error=e.status.error)
        if violating and non_violating:
            victims = self._by_importance(victims)
        return victims, num_violating, Status.success()

    def _select_victims_incremental(
        self, state: CycleState, pod: Pod, ni: NodeInfo, pdbs: Sequence[ParsedPDB], now: float | None = None
    ) -> tuple[list[Pod], int, Status]:
        """``select_victims_on_node(state.clone(), pod, ni.clone(), pdbs)`` for this class's
        methods: the same extension and Filter calls with the same arguments, in the same
        order, on one copy of the NodeInfo and of the state, with the PDBs parsed once per dry
        run and the default eligibility read as a priority comparison. ``now``: the start time
        of the pods that have not started, in the victims' order (None: the clock's)."""
        h = self.handle
        node_info = ni.clone()
        state = state.clone()
        if self.is_eligible_pod is self._default_is_eligible_pod:
            prio = pod.priority
            potential = [p for p in node_info.pods if p.priority < prio]
        else:
            allowed = self.is_preemption_allowed
            potential = [p for p in node_info.pods if allowed(node_info, p, pod)]
        remove = node_info._remove_pod
        add = node_info._add_pod
        remove_ext = h.run_pre_filter_extension_remove_pod
        add_ext = h.run_pre_filter_extension_add_pod
        run_filters = h.run_filter_plugins_with_nominated_pods
        success = Code.SUCCESS
        for p in potential:
            remove(p)
            st = remove_ext(state, pod, p, node_info)
            if st.code is not success:
                return [], 0, Status(Code.ERROR, st.message, error=st.error)
        if not potential:
            return [], 0, Status.unresolvable(NO_VICTIMS_MSG)

        st = run_filters(state, pod, node_info)
        if st.code is not success:
            return [], 0, st

        violating, non_violating = split_by_pdbs(self._by_importance(potential, now), pdbs)
        victims: list[Pod] = []
        num_violating = 0
        for group in (violating, non_violating):
            for p in group:
                # reprieve p: back on the node; a victim when the pod does not fit then
                add(p)
                st = add_ext(state, pod, p, node_info)
                if st.code is not success:
                    return [], 0, Status(Code.ERROR, st.message, error=st.error)
                if run_filters(state, pod, node_info).code is not success:
                    remove(p)
                    st = remove_ext(state, pod, p, node_info)
                    if st.code is not success:
                        return [], 0, Status(Code.ERROR, st.message, error=st.error)
                    victims.append(p)
                    if group is violating:
                        num_violating += 1
        if violating and non_violating:
            victims = self._by_importance(victims, now)
        return victims, num_violating, Status.success()

    def _by_importance(self, pods: Sequence[Pod], now: float | None = None) -> list[Pod]:
        """The pods sorted by ``more_important_pod``, most important first. The default order
        is a key, (-priority, start time): the same comparisons as ``util.MoreImportantPod``,
        with one start time per pod instead of two per comparison (``now`` for pods that have
        not started; None: the clock's)."""
        more = self.more_important_pod
        if more is not self._default_more_important_pod:
            return _sorted(pods, more)
        if now is None:
            now = self._now()
        return sorted(pods, key=lambda p: (-p.priority, pod_start_time(p, now)))

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = {c.name: c for c in candidates}
        node = pick_one_node_for_preemption(victims_map, self._now())
        c = victims_map.get(node)
        if c is not None:
            return c
        log.error("Unexpected case no candidate was selected")
        return candidates[0]


class _DryRunError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def _latest_start(pods: Sequence[Pod], prio: int) -> float | None:
    """The latest start time of the node's pods of lower priority than ``prio`` (the potential
    victims) when one of them has not started (its start time is "now" in their order), else
    NO_START (the order does not read the clock); None when a start time does not parse."""
    latest = NO_START
    unstarted = False
    try:
        for p in pods:
            if p.priority < prio:
                t = _parse_time(p.status.get("startTime"))
                if t is None:
                    unstarted = True
                elif t > latest:
                    latest = t
    except Exception:
        return None
    return latest if unstarted else NO_START


def _sorted(pods: Sequence[Pod], less: Callable[[Pod, Pod], bool]) -> list[Pod]:
    def cmp(a: Pod, b: Pod) -> int:
        return -1 if less(a, b) else (1 if less(b, a) else 0)

    return sorted(pods, key=functools.cmp_to_key(cmp))

