"""DefaultPreemption: the PostFilter plugin that preempts lower-priority pods.

Port of kube-scheduler v1.36.3's ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``,
the generic evaluator ``pkg/scheduler/framework/preemption/preemption.go`` and the victims'
eviction in ``pkg/scheduler/framework/preemption/executor.go`` (``Executor``, new in 1.36), with
v1.36's default feature gates: the pod-group paths (``WorkloadAwarePreemption``,
``TopologyAwareWorkloadScheduling``, ``podgrouppreemption.go``, ``types.go``) are alpha and off,
so a pod with ``spec.schedulingGroup`` preempts like any other pod.

What is ported:

* ``PodEligibleToPreemptOthers``: ``preemptionPolicy: Never`` is not eligible; a pod whose
  nominated node still has a lower-priority pod terminating because of scheduler preemption is
  not eligible, unless the nominated node is UnschedulableAndUnresolvable.
* ``findCandidates``/``DryRunPreemption``: only nodes whose filter status is Unschedulable are
  tried, starting at an offset, until ``calculateNumCandidates`` candidates (and at least one that
  violates no PDB) are found. Nodes are tried one after another here (Go runs them in parallel
  and cancels); the candidates found are the same as Go's when Go's workers finish in order.
* ``SelectVictimsOnNode`` on a cloned NodeInfo and a cloned CycleState: remove all lower-priority
  pods (collected first, then removed, as v1.36 does), check the pod fits
  (``RunFilterPluginsWithNominatedPods``), reprieve PDB-violating victims first and then the
  others, from the most important down (``util.MoreImportantPod``).
* ``pickOneNodeForPreemption`` with Go's criteria and order.
* ``Executor.PreemptPod``: a victim waiting at Permit is *preempted* in memory
  (``waitingPod.Preempt``: its binding cycle ends with an Error, so it goes back to the queue
  through backoff rather than as unschedulable) and not deleted; its ``Preempted`` event says
  ``(in kube-scheduler memory).``. A victim that was no longer waiting, and any other victim, gets
  the ``DisruptionTarget`` condition and is deleted (a victim already gone is skipped without an
  event). A ``Preempted`` event is recorded on each victim.
* Lower-priority pods nominated to the node have their nomination cleared; this happens first,
  then the victims are evicted, and nothing is done when every victim is already being deleted:
  the order and the early return of ``prepareCandidateAsync``, the path v1.36 takes by default.

Differences, and why:

* The random offset of ``GetOffsetAndNumCandidates`` (``rand.Int31n``) comes from a plugin-local
  ``random.Random`` seeded with 0 (the Handle has no RNG), so simulations are reproducible; tests
  may replace :attr:`DefaultPreemption.get_offset_rand` as Go's tests replace ``getOffsetRand``.
* Asynchronous preemption (``SchedulerAsyncPreemption``, beta and on by default since 1.33) only
  changes when the evictions happen: victims are evicted within the PostFilter call, so the
  preemptor needs no PreEnqueue hold (Go's PreEnqueue ``waiting for the preemption for this pod
  to be finished``) and no requeue events of its own (EventsToRegister returns nothing, as Go
  with the gate off). The victims, the nominated node, the events and the messages are the same.
  One consequence differs: an eviction that fails with an API error fails this PostFilter (an
  Error, no nomination), where Go's goroutine logs it and moves the preemptor to the active queue.
* A victim in its PreBind phase is deleted through the API: v1.36 cancels such a victim's binding
  cycle in memory (``GetPodInPreBind``), which needs a cancellable binding cycle kubesched's
  scheduler does not have.
* Scheduler extenders do not exist in kubesched, so ``callExtenders`` is the identity.
* ``IsEligiblePod``/``MoreImportantPod`` are overridable attributes, as in Go.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.sdk import (
    ArgsError,
    Code,
    CycleState,
    LabelSelector,
    NodeInfo,
    ObjectNotFound,
    Pod,
    PostFilterResult,
    Status,
    hookimpl,
)
from kubesched.sdk.objects import parse_time

__all__ = [
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "filter_pods_with_pdb_violation",
    "more_important_pod",
    "pick_one_node_for_preemption",
]

log = logging.getLogger(__name__)

NAME = "DefaultPreemption"

_MAX_INT32 = 2**31 - 1
_MIN_INT64 = -(2**63)

#: The DisruptionTarget condition reason (v1.PodReasonPreemptionByScheduler).
POD_REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
DISRUPTION_TARGET = "DisruptionTarget"

NO_VICTIMS_MSG = "No preemption victims found for incoming pod"
NOT_HELPFUL_MSG = "Preemption is not helpful for scheduling"


# --- args --------------------------------------------------------------------------------------


@dataclass
class DefaultPreemptionArgs:
    """DefaultPreemptionArgs (kubescheduler.config.k8s.io/v1); defaults from v1/defaults.go."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    def validate(self) -> None:
        """ValidateDefaultPreemptionArgs (field.ErrorList.ToAggregate())."""
        errs: list[tuple[str, str]] = []
        p = self.min_candidate_nodes_percentage
        a = self.min_candidate_nodes_absolute
        if p < 0 or p > 100:
            errs.append(("minCandidateNodesPercentage", f"Invalid value: {p}: not in valid range [0, 100]"))
        if a < 0:
            errs.append(("minCandidateNodesAbsolute", f"Invalid value: {a}: not in valid range [0, inf)"))
        if p == 0 and a == 0:
            errs.append(
                ("minCandidateNodesPercentage",
                 f"Invalid value: {p}: cannot be zero at the same time as minCandidateNodesAbsolute")
            )
            errs.append(
                ("minCandidateNodesAbsolute",
                 f"Invalid value: {a}: cannot be zero at the same time as minCandidateNodesPercentage")
            )
        if len(errs) == 1:
            raise ArgsError(*errs[0])
        if errs:
            raise ArgsError("", "[" + ", ".join(f"{f}: {m}" for f, m in errs) + "]")


# --- helpers -----------------------------------------------------------------------------------


@dataclass
class Candidate:
    """A node the preemptor can be nominated to, with the victims to evict there."""

    name: str
    victims: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


def pod_start_time(pod: Pod, now: float) -> float:
    """util.GetPodStartTime: ``status.startTime``, or now for pods that have not started."""
    t = parse_time(pod.status.get("startTime"))
    return now if t is None else t


def more_important_pod(p1: Pod, p2: Pod, now: float) -> bool:
    """util.MoreImportantPod: higher priority, then earlier start time."""
    if p1.priority != p2.priority:
        return p1.priority > p2.priority
    return pod_start_time(p1, now) < pod_start_time(p2, now)


def _earliest_start_time_of_highest_priority(victims: Sequence[Pod], now: float) -> float | None:
    """util.GetEarliestPodStartTime."""
    if not victims:
        return None
    earliest = pod_start_time(victims[0], now)
    max_priority = victims[0].priority
    for p in victims:
        prio = p.priority
        if prio == max_priority:
            t = pod_start_time(p, now)
            if t < earliest:
                earliest = t
        elif prio > max_priority:
            max_priority = prio
            earliest = pod_start_time(p, now)
    return earliest


def pod_terminating_by_preemption(p: Pod) -> bool:
    if p.deletion_timestamp is None:
        return False
    for c in p.status.get("conditions") or ():
        if c.get("type") == DISRUPTION_TARGET:
            return c.get("status") == "True" and c.get("reason") == POD_REASON_PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation: (violating, non-violating), order preserved."""
    allowed: list[int] = []
    selectors: list[LabelSelector | None] = []
    for pdb in pdbs:
        allowed.append(int((pdb.get("status") or {}).get("disruptionsAllowed") or 0))
        try:
            selectors.append(LabelSelector.parse((pdb.get("spec") or {}).get("selector")))
        except Exception:  # an invalid selector matches nothing
            selectors.append(None)
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        labels = pod.labels
        if labels:
            for i, pdb in enumerate(pdbs):
                meta = pdb.get("metadata") or {}
                if (meta.get("namespace") or "default") != pod.namespace:
                    continue
                sel = selectors[i]
                # a PDB with a nil or empty selector matches nothing
                if sel is None or sel.is_nothing() or sel.is_empty() or not sel.matches(labels):
                    continue
                disrupted = (pdb.get("status") or {}).get("disruptedPods") or {}
                if pod.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Candidate],
    now: float,
    score_funcs: Sequence[Callable[[str], int]] | None = None,
) -> str:
    """pickOneNodeForPreemption: victims of each candidate are ordered by decreasing importance."""
    if not nodes_to_victims:
        return ""
    all_candidates = list(nodes_to_victims)
    if not score_funcs:

        def min_num_pdb_violating(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -nodes_to_victims[node].victims[0].priority

        def min_sum_priorities(node: str) -> int:
            # MaxInt32+1 is added so that a node with fewer negative-priority pods is not beaten
            return -sum(p.priority + _MAX_INT32 + 1 for p in nodes_to_victims[node].victims)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].victims)

        def latest_start_time(node: str) -> int:
            t = _earliest_start_time_of_highest_priority(nodes_to_victims[node].victims, now)
            if t is None:
                log.error("Unexpected nil earliestStartTime for node %s", node)
                return _MIN_INT64
            return round(t * 1e9)

        score_funcs = [min_num_pdb_violating, min_highest_priority, min_sum_priorities, min_num_pods, latest_start_time]

    for f in score_funcs:
        selected: list[str] = []
        max_score = _MIN_INT64
        for node in all_candidates:
            s = f(node)
            if s > max_score:
                max_score = s
                selected = []
            if s == max_score:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        all_candidates = selected
    return all_candidates[0]


def _fit_error_message(num_all_nodes: int, node_to_status: Mapping[str, Status], absent: Status) -> str:
    """framework.FitError.Error() for the preemption diagnosis (no PreFilter/PostFilter message)."""
    reasons: dict[str, int] = {}
    for st in node_to_status.values():
        for r in st.reasons:
            reasons[r] = reasons.get(r, 0) + 1
    if len(node_to_status) < num_all_nodes:
        for r in absent.reasons:
            reasons[r] = reasons.get(r, 0) + num_all_nodes - len(node_to_status)
    msg = f"0/{num_all_nodes} nodes are available:"
    hist = sorted(f"{v} {k}" for k, v in reasons.items())
    if hist:
        msg += f" {', '.join(hist)}."
    return msg


# --- the plugin --------------------------------------------------------------------------------


class DefaultPreemption:
    """PostFilter: preempt lower-priority pods so that the pod fits on one node."""

    name = NAME
    Args = DefaultPreemptionArgs
    #: read through handle.objects (victims that violate the fewest PDBs)
    watches = (("policy/v1", "PodDisruptionBudget"),)
    args_kind = "DefaultPreemptionArgs"

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Any) -> None:
        self.args = args if args is not None else DefaultPreemptionArgs()
        self.handle = handle
        self._rng = random.Random(0)
        #: rand.Int31n(n): the offset of the first node to try; replaceable in tests.
        self.get_offset_rand: Callable[[int], int] = self._rng.randrange
        #: IsEligiblePod: extra filtering of victims beyond "lower priority" (default: none).
        self.is_eligible_pod: Callable[[NodeInfo, Pod, Pod], bool] = lambda node_info, victim, preemptor: True
        #: MoreImportantPod: the victims' order, most important first.
        self.more_important_pod: Callable[[Pod, Pod], bool] = lambda a, b: more_important_pod(a, b, self._now())

    # -- hooks ----------------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[Any]:
        # Go registers events only with SchedulerAsyncPreemption, which is not ported (see above).
        return []

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
        all_nodes = list(h.snapshot().list())
        try:
            candidates, node_to_status = self.find_candidates(state, all_nodes, pod, m)
        except Exception as e:
            return None, Status.from_exception(e)
        if not candidates:
            msg = _fit_error_message(len(all_nodes), node_to_status, Status.unresolvable(NOT_HELPFUL_MSG))
            return PostFilterResult("", mode="clear"), Status.unschedulable(msg)

        # 3) extenders: none in kubesched
        # 4) the best candidate
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status.unschedulable("no candidate node for preemption")

        # 5) preparation
        st = self.prepare_candidate(best, pod)
        if not st.is_success():
            return None, st
        return PostFilterResult(best.name), Status.success()

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod, m: Mapping[str, Status]
    ) -> tuple[list[Candidate], dict[str, Status]]:
        if not all_nodes:
            raise RuntimeError("no nodes available")
        potential = [ni for ni in all_nodes if (st := m.get(ni.name)) is not None and st.code is Code.UNSCHEDULABLE]
        if not potential:
            log.debug("Preemption will not help schedule pod %s on any node", pod.key)
            return [], {}
        pdbs = self.get_pod_disruption_budgets()
        offset, num = self.get_offset_and_num_candidates(len(potential))
        candidates, statuses, errs = self.dry_run_preemption(state, pod, potential, pdbs, offset, num)
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
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errs: list[str] = []
        n = len(potential_nodes)
        for i in range(n):
            node_info = potential_nodes[(offset + i) % n].clone()
            state_copy = state.clone()
            victims, num_violations, status = self.select_victims_on_node(state_copy, pod, node_info, pdbs)
            if status.is_success() and victims:
                c = Candidate(node_info.name, victims, num_violations)
                target = non_violating if num_violations == 0 else violating
                if len(target) < candidates_num:
                    target.append(c)
                if non_violating and len(non_violating) + len(violating) >= candidates_num:
                    break
                continue
            if status.is_success() and not victims:
                status = Status.failed(f'expected at least one victim pod on node "{node_info.name}"')
            if status.code is Code.ERROR:
                errs.append(status.message)
            statuses[node_info.name] = status
        return non_violating + violating, statuses, errs

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

        more = self.more_important_pod
        potential = _sorted(potential, more)
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
            victims = _sorted(victims, more)
        return victims, num_violating, Status.success()

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

    def preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod) -> None:
        """Executor.PreemptPod: preempt a waiting victim in memory, otherwise mark and delete it."""
        h = self.handle
        event_message = f"Preempted by pod {preemptor.uid} on node {c.name}"
        wp = h.get_waiting_pod(victim.uid)
        if wp is not None and wp.preempt(self.name, "preempted"):
            event_message += " (in kube-scheduler memory)."
        else:
            conditions = [dict(x) for x in victim.status.get("conditions") or ()]
            cond = {
                "type": DISRUPTION_TARGET,
                "status": "True",
                "reason": POD_REASON_PREEMPTION_BY_SCHEDULER,
                "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
            }
            updated = True
            for i, x in enumerate(conditions):
                if x.get("type") == DISRUPTION_TARGET:
                    if all(x.get(k) == v for k, v in cond.items()):
                        updated = False
                    else:
                        conditions[i] = {**x, **cond}
                    break
            else:
                conditions.append(cond)
            try:
                if updated:
                    h.objects.patch("v1", "Pod", victim.name, {"status": {"conditions": conditions}}, victim.namespace, subresource="status")
                h.objects.delete("v1", "Pod", victim.name, victim.namespace)
            except ObjectNotFound:
                log.info("Victim Pod %s is already deleted", victim.key)
                return
        h.event_recorder.event(victim.raw, "Normal", "Preempted", "Preempting", event_message, preemptor.raw)

    def prepare_candidate(self, c: Candidate, pod: Pod) -> Status:
        """Executor.prepareCandidateAsync's work, done before PostFilter returns: clear the
        nomination of lower-priority pods nominated to the node, then evict the victims; nothing
        when every victim is already being deleted (graceful deletion started)."""
        h = self.handle
        victims = [v for v in c.victims if v.deletion_timestamp is None]
        if not victims:
            return Status.success()
        # lower-priority pods nominated to this node may no longer fit: clear their nomination
        for np in h.nominated_pods_for_node(c.name) or ():
            if np.priority >= pod.priority or not np.nominated_node_name:
                continue
            try:
                h.objects.patch("v1", "Pod", np.name, {"status": {"nominatedNodeName": None}}, np.namespace, subresource="status")
            except Exception as e:  # not critical, as in Go
                log.warning("Cannot clear 'NominatedNodeName' field of %s: %s", np.key, e)
        for victim in victims:
            try:
                self.preempt_pod(c, pod, victim)
            except Exception as e:
                log.error("Tried to preempt pod %s for %s: %s", victim.key, pod.key, e)
                return Status.from_exception(e)
        return Status.success()


class _DryRunError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def _sorted(pods: Sequence[Pod], less: Callable[[Pod, Pod], bool]) -> list[Pod]:
    import functools

    def cmp(a: Pod, b: Pod) -> int:
        return -1 if less(a, b) else (1 if less(b, a) else 0)

    return sorted(pods, key=functools.cmp_to_key(cmp))
