"""What became of each pod: the scheduler's results and, for the test kit, the diagnostics of
each pod's last attempt.

A finite run (simulate, explain, the test kit) keeps every pod it saw. ``kubesched run`` keeps
the newest ``max_pods`` results and drops those of pods deleted from the cluster, so a
long-running scheduler does not grow with every pod it ever saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.sdk import Pod

from ..scheduling import FitError, ScheduleResult

__all__ = ["RUN_MAX_RESULTS", "PodResult", "Results"]

#: how many pod results ``kubesched run`` keeps (the newest)
RUN_MAX_RESULTS = 5000


@dataclass
class PodResult:
    namespace: str
    name: str
    node: str | None = None
    status: str = "Pending"  # Scheduled | Unschedulable | Error | Pending | Deleted
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
        """The cluster says the pod is on a node (our bind, or someone else's)."""
        res = self.pods.get(pod.uid)
        if res is not None and res.status != "Scheduled":
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
