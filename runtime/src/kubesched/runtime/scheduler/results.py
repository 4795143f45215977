"""What became of each pod: the scheduler's results and, for the test kit, the diagnostics of
each pod's last attempt.

A finite run (simulate, explain, the test kit) keeps every pod it saw. ``kubesched run`` keeps
the newest ``max_pods`` results and drops those of pods deleted from the cluster, so a
long-running scheduler does not grow with every pod it ever saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.sdk import Pod
from kubesched.sdk._describe import suggest
from kubesched.sdk._text import cut, quote

from ..diagnosis import FitError
from ..scheduling import ScheduleResult

__all__ = ["RUN_MAX_RESULTS", "STATUSES", "PodResult", "Results", "gated_message", "status_before_scheduling"]

#: every status a pod of the input ends a finite run with (``kubesched simulate``, ``explain``):
#: a scheduling outcome (Scheduled, Unschedulable, Error), or why no scheduling cycle decided
#: it: Running (``spec.nodeName`` of a node in the input), NodeNotFound (of a node that is
#: not), Ignored (a ``schedulerName`` no profile has), Gated (``spec.schedulingGates``),
#: Completed (ran for its ``sim.kubesched.io/run-for``), Deleted (removed during the run: a
#: preemption victim, a ``delete-at``, a drained or removed node), Pending (none of these)
STATUSES = ("Scheduled", "Unschedulable", "Error", "Running", "Gated", "Ignored", "NodeNotFound", "Completed", "Deleted", "Pending")

#: how many pod results ``kubesched run`` keeps (the newest)
RUN_MAX_RESULTS = 5000


@dataclass
class PodResult:
    namespace: str
    name: str
    node: str | None = None
    status: str = "Pending"  # one of STATUSES
    message: str = ""
    attempts: int = 0
    profile: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "status": self.status,
            "message": self.message,
            "profile": self.profile,
        }


class Results:
    """The observer of the scheduler's outcomes, by pod uid (owned by the scheduler's loop).

    ``max_pods``: None keeps every result (and marks a deleted pending pod "Deleted"); a number
    keeps the newest that many (by when the pod was first seen) and forgets deleted pods.
    ``diagnostics``: also keep, per pod, its last attempt's filter verdicts and scores as
    ``{"filter": {node: Status}, "scores": {node: {plugin: PluginScore}}, "totals": {node:
    int}}`` (the test kit reads them)."""

    def __init__(self, max_pods: int | None = None, *, diagnostics: bool = False) -> None:
        if max_pods is not None and max_pods < 1:
            raise ValueError(f"max_pods must be at least 1, got {max_pods}")
        self.max_pods = max_pods
        self.keep_diagnostics = diagnostics
        self.pods: dict[str, PodResult] = {}
        self.diagnostics: dict[str, dict[str, Any]] = {}

    def _add(self, uid: str, res: PodResult) -> PodResult:
        pods = self.pods
        pods[uid] = res
        if self.max_pods is not None and len(pods) > self.max_pods:
            oldest = next(iter(pods))
            del pods[oldest]
            self.diagnostics.pop(oldest, None)
        return res

    def seen(self, pod: Pod) -> PodResult:
        """The result of a pending pod this scheduler is responsible for (created Pending)."""
        res = self.pods.get(pod.uid)
        if res is None:
            res = self._add(pod.uid, PodResult(pod.namespace, pod.name, profile=pod.scheduler_name))
        return res

    def _get(self, uid: str, namespace: str, name: str) -> PodResult:
        res = self.pods.get(uid)
        if res is None:
            res = self._add(uid, PodResult(namespace, name))
        return res

    def failed(self, pod: Pod, rejected: bool, message: str) -> None:
        res = self._get(pod.uid, pod.namespace, pod.name)
        res.status = "Unschedulable" if rejected else "Error"
        res.message = message
        res.node = None

    def bound(self, pod: Pod, host: str) -> None:
        res = self._get(pod.uid, pod.namespace, pod.name)
        res.status, res.node, res.message = "Scheduled", host, ""

    def assigned(self, pod: Pod) -> None:
        """The cluster says the pod is on a node (our bind, or someone else's). A pod whose
        last attempt ended in an Error (its binding cycle failed after the binding was
        stored, say) stays an Error, with the node: only a binding cycle that succeeded
        (:meth:`bound`) makes it Scheduled."""
        res = self.pods.get(pod.uid)
        if res is None or res.status == "Scheduled":
            return
        if res.status == "Error":
            if res.node is None:
                res.node = pod.node_name
                res.message += f" (yet the pod is bound to node {pod.node_name})"
            return
        res.status, res.node, res.message = "Scheduled", pod.node_name, ""

    def deleted(self, uid: str, *, assigned: bool) -> None:
        if self.max_pods is not None:
            self.pods.pop(uid, None)
            self.diagnostics.pop(uid, None)
            return
        res = self.pods.get(uid)
        if not assigned and res is not None and res.status != "Scheduled":
            res.status = "Deleted"

    def fit_failure(self, uid: str, fe: FitError) -> None:
        if self.keep_diagnostics:
            self.diagnostics[uid] = {"filter": dict(fe.diagnosis.node_to_status), "scores": {}, "totals": {}}

    def scheduled(self, uid: str, result: ScheduleResult) -> None:
        if self.keep_diagnostics:
            self.diagnostics[uid] = {
                "filter": dict(result.diagnosis.node_to_status) if result.diagnosis else {},
                "scores": {s.name: {ps.name: ps for ps in s.scores} for s in result.scores},
                "totals": {s.name: s.total_score for s in result.scores},
            }


def status_before_scheduling(spec: Any, profiles: Sequence[str], has_node: Callable[[str], bool]) -> tuple[str, str, str | None] | None:
    """``(status, message, node)`` of a pod no scheduling cycle decides, from its spec: Running
    or NodeNotFound (``spec.nodeName`` set: of a node the cluster has, or not), Ignored (its
    ``schedulerName`` is no profile's, with a did-you-mean when one is close). None for a pod
    of one of ``profiles`` that waits for a node."""
    node = spec.get("nodeName")
    if node:
        if has_node(node):
            return "Running", "", node
        return "NodeNotFound", f"spec.nodeName: node {quote(node)} is not in the cluster", node
    name = spec.get("schedulerName") or "default-scheduler"
    if name in profiles:
        return None
    close = suggest(str(name), profiles, cutoff=0.8)
    hint = f'; did you mean "{close}"?' if close else ""
    known = ", ".join(f'"{p}"' for p in profiles)
    return "Ignored", f"schedulerName {quote(name)} is not a profile of this scheduler ({known}){hint}", None


def gated_message(spec: Any) -> str | None:
    """kube-scheduler's PodScheduled condition message for a pod with scheduling gates (and
    the gates' names), or None when the pod has none."""
    gates = spec.get("schedulingGates")
    if not gates:
        return None
    names = ", ".join(cut(g.get("name") if isinstance(g, dict) else g) for g in gates) if isinstance(gates, list) else cut(gates)
    return f"Scheduling is blocked due to non-empty scheduling gates: {names}"
