"""Executor (``pkg/scheduler/framework/preemption/executor.go``, new in 1.36): the eviction of
the chosen candidate's victims, done before PostFilter returns (see the package's docstring)."""

from __future__ import annotations

import logging
from typing import Any

from kubesched.sdk import ObjectNotFound, Pod, Status

from .victims import DISRUPTION_TARGET, POD_REASON_PREEMPTION_BY_SCHEDULER, Candidate

__all__ = ["Executor"]

log = logging.getLogger("kubesched.runtime.plugins.defaultpreemption")


class Executor:
    """PreemptPod and prepareCandidate, mixed into the plugin (which gives ``handle`` and
    ``name``)."""

    handle: Any
    name: str

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
