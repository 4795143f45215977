"""The pure parts of preemption: candidates, the victims' order, PDB accounting, the choice of
a node (``preemption.go``'s pickOneNodeForPreemption, ``util.MoreImportantPod``,
``filterPodsWithPDBViolation``) and the FitError message of the preemption diagnosis."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from kubesched.sdk import LabelSelector, Pod, Status
from kubesched.sdk.objects import parse_time

__all__ = [
    "DISRUPTION_TARGET",
    "NOT_HELPFUL_MSG",
    "NO_VICTIMS_MSG",
    "POD_REASON_PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "filter_pods_with_pdb_violation",
    "fit_error_message",
    "more_important_pod",
    "parse_pdbs",
    "pick_one_node_for_preemption",
    "pod_start_time",
    "pod_terminating_by_preemption",
    "split_by_pdbs",
]

log = logging.getLogger("kubesched.runtime.plugins.defaultpreemption")

_MAX_INT32 = 2**31 - 1
_MIN_INT64 = -(2**63)

#: The DisruptionTarget condition reason (v1.PodReasonPreemptionByScheduler).
POD_REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
DISRUPTION_TARGET = "DisruptionTarget"

#: SelectVictimsOnNode's status for a node without a pod the preemptor may evict.
NO_VICTIMS_MSG = "No preemption victims found for incoming pod"
#: The status of the nodes preemption does not try (not Unschedulable, or absent).
NOT_HELPFUL_MSG = "Preemption is not helpful for scheduling"


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


#: A PDB as the victims' split reads it: (namespace, disruptionsAllowed, selector, disruptedPods).
ParsedPDB = tuple[str, int, LabelSelector, Mapping[str, Any]]


def parse_pdbs(pdbs: Sequence[Mapping[str, Any]]) -> list[ParsedPDB]:
    """The PDBs that can match a pod, parsed once for every node of a dry run (a PDB with a
    nil, empty or invalid selector matches nothing: it never counts)."""
    out: list[ParsedPDB] = []
    for pdb in pdbs:
        try:
            sel = LabelSelector.parse((pdb.get("spec") or {}).get("selector"))
        except Exception:  # an invalid selector matches nothing
            continue
        if sel is None or sel.is_nothing() or sel.is_empty():
            continue
        status = pdb.get("status") or {}
        namespace = (pdb.get("metadata") or {}).get("namespace") or "default"
        out.append((namespace, int(status.get("disruptionsAllowed") or 0), sel, status.get("disruptedPods") or {}))
    return out


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation: (violating, non-violating), order preserved."""
    return split_by_pdbs(pods, parse_pdbs(pdbs))


def split_by_pdbs(pods: Sequence[Pod], pdbs: Sequence[ParsedPDB]) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation on PDBs from :func:`parse_pdbs`."""
    if not pdbs:
        return [], list(pods)
    allowed = [pdb[1] for pdb in pdbs]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        labels = pod.labels
        if labels:
            for i, (namespace, _, sel, disrupted) in enumerate(pdbs):
                if namespace != pod.namespace or not sel.matches(labels) or pod.name in disrupted:
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


def fit_error_message(num_all_nodes: int, node_to_status: Mapping[str, Status], absent: Status) -> str:
    """framework.FitError.Error() for the preemption diagnosis (no PreFilter/PostFilter message).

    The statuses are counted by identity, in runs: the dry run gives the nodes without victims
    the same Status object, in runs of the visiting order, so a cluster of such nodes costs one
    C-level pass and one pass over the reasons of each run."""
    reasons: dict[str, int] = {}
    for _, run in groupby(node_to_status.values(), key=id):
        same = list(run)
        n = len(same)
        for r in same[0].reasons:
            reasons[r] = reasons.get(r, 0) + n
    if len(node_to_status) < num_all_nodes:
        for r in absent.reasons:
            reasons[r] = reasons.get(r, 0) + num_all_nodes - len(node_to_status)
    msg = f"0/{num_all_nodes} nodes are available:"
    hist = sorted(f"{v} {k}" for k, v in reasons.items())
    if hist:
        msg += f" {', '.join(hist)}."
    return msg
