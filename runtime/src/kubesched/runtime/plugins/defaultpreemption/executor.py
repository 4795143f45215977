"""Executor (``pkg/scheduler/framework/preemption/executor.go``, new in 1.36): the eviction of
the chosen candidate's victims.

With v1.36's default ``SchedulerAsyncPreemption`` the eviction runs off the scheduling loop
(:meth:`Executor.prepare_candidate_async`, Go's ``prepareCandidateAsync``): PostFilter returns
the nomination at once, the API calls go to ``handle.run_async`` (the binding workers on a real
cluster; at once, in the caller, on the simulated cluster), and the preemptor is held at
PreEnqueue until they are done (:meth:`Executor.is_pod_running_preemption`). The synchronous
``prepareCandidate`` (the gate off) is :meth:`Executor.prepare_candidate`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    ObjectNotFound,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

from .victims import DISRUPTION_TARGET, POD_REASON_PREEMPTION_BY_SCHEDULER, Candidate

__all__ = ["Executor"]

log = logging.getLogger("kubesched.runtime.plugins.defaultpreemption")


class Executor:
    """PreemptPod, prepareCandidate(Async), IsPodRunningPreemption and the PreEnqueue hold with
    its EventsToRegister, mixed into the plugin
    (which gives ``handle`` and ``name`` and calls :meth:`_init_executor`)."""

    handle: Any
    name: str
    #: Private switch (Go's ``SchedulerAsyncPreemption``, on by default): False evicts within
    #: PostFilter (Go's ``prepareCandidate``), whose failure is PostFilter's Error.
    _async_preemption = True

    def _init_executor(self) -> None:
        self._mu = threading.Lock()
        #: preemptors whose eviction runs (Go's ``preempting``)
        self._preempting: set[str] = set()
        #: preemptor uid -> (namespace, name, uid) of its last victim while that one is evicted
        #: (Go's ``lastVictimsPendingPreemption``; the uid tells a recreated pod of the same
        #: name, a StatefulSet's, from the victim)
        self._last_victims: dict[str, tuple[str, str, str]] = {}
        #: preemptor uid -> the token of its current eviction: an older eviction that ends
        #: late leaves a newer one's state alone
        self._tokens: dict[str, object] = {}

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Hold a preemptor while its victims are evicted (asynchronous preemption)."""
        if self.is_pod_running_preemption(pod.uid):
            return Status.unresolvable("waiting for the preemption for this pod to be finished")
        return None

    @hookimpl
    def events_to_register(self) -> list[Any]:
        if not self._async_preemption:
            return []  # PreEnqueue never holds a pod
        # a held preemptor may be let in after some pods' deletion; whether it is, is for the
        # plugins that rejected it to say (they are among its rejectors), hence Skip here
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), _skip)]

    def preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod) -> bool:
        """Executor.PreemptPod: preempt a waiting victim in memory, otherwise mark and delete it;
        True when the victim was deleted through the API by this call."""
        h = self.handle
        event_message = f"Preempted by pod {preemptor.uid} on node {c.name}"
        wp = h.get_waiting_pod(victim.uid)
        deleted = False
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
                return False
            deleted = True
        h.event_recorder.event(victim.raw, "Normal", "Preempted", "Preempting", event_message, preemptor.raw)
        return deleted

    def actuate_pod_preemption(self, c: Candidate, pod: Pod) -> Status:
        """actuatePodPreemption: evict ``c``'s victims for ``pod``, off the loop by default;
        within this call when the profile does not run this plugin's PreEnqueue (a v1beta2
        file's defaults list it at PostFilter only), which must hold the preemptor meanwhile."""
        if self._async_preemption and self._holds_at_pre_enqueue():
            self.prepare_candidate_async(c, pod)
            return Status.success()
        return self.prepare_candidate(c, pod)

    def _holds_at_pre_enqueue(self) -> bool:
        plugins_at = getattr(self.handle, "plugins_at", None)
        return plugins_at is None or self.name in plugins_at("preEnqueue")

    def _observe_victims(self, c: Candidate) -> None:
        metrics = getattr(self.handle, "metrics", None)
        if metrics is not None:
            metrics.preemption_victims.observe(len(c.victims))

    def _lower_priority_nominated(self, node_name: str, pod: Pod) -> list[Pod]:
        """getLowerPriorityNominatedPods: pods of lower priority than ``pod`` nominated to the
        node (a pod whose nomination is already cleared needs no write)."""
        return [np for np in self.handle.nominated_pods_for_node(node_name) or () if np.priority < pod.priority and np.nominated_node_name]

    def _clear_nominations(self, pods: Sequence[Pod]) -> bool:
        """clearNominatedNodeName; False when a write failed (logged: not critical, as in Go)."""
        ok = True
        for np in pods:
            try:
                self.handle.objects.patch("v1", "Pod", np.name, {"status": {"nominatedNodeName": None}}, np.namespace, subresource="status")
            except Exception as e:
                log.warning("Cannot clear 'NominatedNodeName' field of %s: %s", np.key, e)
                ok = False
        return ok

    def prepare_candidate(self, c: Candidate, pod: Pod) -> Status:
        """prepareCandidate (``SchedulerAsyncPreemption`` off): evict the victims not already
        being deleted (Go in parallel, here in order, stopping at the first error, which is
        the returned status), then clear the nomination of lower-priority pods nominated to
        the node."""
        self._observe_victims(c)
        for victim in c.victims:
            if victim.deletion_timestamp is not None:
                continue
            try:
                self.preempt_pod(c, pod, victim)
            except Exception as e:
                log.error("Tried to preempt pod %s for %s: %s", victim.key, pod.key, e)
                return Status.from_exception(e)
        self._clear_nominations(self._lower_priority_nominated(c.name, pod))
        return Status.success()

    def prepare_candidate_async(self, c: Candidate, pod: Pod) -> None:
        """prepareCandidateAsync: nothing when every victim is already being deleted; else the
        preemptor is marked as preempting (held at PreEnqueue) and ``handle.run_async`` runs
        :meth:`_evict`. The lower-priority pods nominated to the node are read here, on the
        scheduling loop (the queue's nominator belongs to it), where Go's goroutine reads them
        first thing."""
        victims = [v for v in c.victims if v.deletion_timestamp is None]
        if not victims:
            return
        self._observe_victims(c)
        nominated = self._lower_priority_nominated(c.name, pod)
        token = object()
        with self._mu:
            self._preempting.add(pod.uid)
            self._last_victims.pop(pod.uid, None)
            self._tokens[pod.uid] = token
            if len(self._last_victims) > 256:
                self._forget_settled()
        run_async = getattr(self.handle, "run_async", None)
        if run_async is None:  # a handle without workers: at once
            self._evict(c, pod, victims, nominated, token)
        else:
            run_async(lambda: self._evict(c, pod, victims, nominated, token))

    def _evict(self, c: Candidate, pod: Pod, victims: list[Pod], nominated: list[Pod], token: object) -> None:
        """The goroutine of prepareCandidateAsync: clear the nominations, evict every victim but
        the last (stopping at the first error), then the last one while it is registered as
        pending; after any error the preemptor is activated (it may sit in the unschedulable
        pods with every event ignored).

        kubesched holds the preemptor a little longer than Go: while the last victim this call
        deleted through the API is still in the informer's cache, it stays pending (and the
        preemptor held) until its delete event is seen, which also moves the preemptor (Go lets
        it in once the call returned: popped before the watch caught up, its cycle still sees
        the victims and it preempts again); the watch delivers deletions in order, so the
        earlier victims are gone by then. When it is gone already, a preemptor held meanwhile is
        looked at again now: Go waits for the next pod deletion, which never comes when the
        victims' deletions were seen while it was held (victims another preemptor had already
        evicted, "Victim Pod is already deleted") and no pod is deleted after."""
        ok = True
        settle_on: tuple[str, str, str] | None = None  # the last victim deleted by this call
        try:
            ok = self._clear_nominations(nominated)
            preempt_last = True
            for victim in victims[:-1]:
                try:
                    if self.preempt_pod(c, pod, victim):
                        settle_on = (victim.namespace, victim.name, victim.uid)
                except Exception as e:
                    log.error("Error occurred during async preemption of %s for %s: %s", victim.key, pod.key, e)
                    ok = preempt_last = False
                    break
            if preempt_last:
                last = victims[-1]
                with self._mu:
                    if self._tokens.get(pod.uid) is token:
                        self._last_victims[pod.uid] = (last.namespace, last.name, last.uid)
                try:
                    if self.preempt_pod(c, pod, last):
                        settle_on = (last.namespace, last.name, last.uid)
                except Exception as e:
                    log.error("Error occurred during async preemption of the last victim %s for %s: %s", last.key, pod.key, e)
                    ok = False
        finally:
            self._end_eviction(pod, token, ok, settle_on)

    def _end_eviction(self, pod: Pod, token: object, ok: bool, settle_on: tuple[str, str, str] | None) -> None:
        """After the eviction: keep holding while ``settle_on`` is cached, else let go of the
        preemptor (activated after an error, rechecked otherwise); nothing when a newer
        eviction of the same preemptor owns its state."""
        try:
            settle = ok and settle_on is not None and not self._victim_gone(*settle_on)
        except Exception:  # the cache cannot be read: do not hold on to the preemptor
            settle = False
        with self._mu:
            if self._tokens.get(pod.uid) is not token:
                return
            if settle:
                assert settle_on is not None
                self._last_victims[pod.uid] = settle_on
            else:
                self._preempting.discard(pod.uid)
                self._last_victims.pop(pod.uid, None)
                del self._tokens[pod.uid]
        h = self.handle
        if not ok:
            activate = getattr(h, "activate", None)
            if activate is not None:
                activate([pod])
        elif not settle:
            recheck = getattr(h, "recheck_gated", None)
            if recheck is not None:
                recheck([pod], self.name)

    def is_pod_running_preemption(self, uid: str) -> bool:
        """IsPodRunningPreemption: the preemptor's eviction runs, unless only its last victim
        is left and that one is gone or being deleted (its delete event may reach the queue
        before the eviction returns)."""
        if uid not in self._preempting:  # the usual case, without the lock
            return False
        with self._mu:
            if uid not in self._preempting:
                return False
            last = self._last_victims.get(uid)
        if last is None:
            return True
        if not self._victim_gone(*last):
            return True
        with self._mu:  # the eviction may be over: then nobody else clears it
            if self._last_victims.get(uid) == last:
                self._preempting.discard(uid)
                del self._last_victims[uid]
                self._tokens.pop(uid, None)
        return False

    def _forget_settled(self) -> None:
        """Drop the pending last victims that are gone (under the lock): a preemptor deleted
        while held never asks PreEnqueue again, which is where an entry is dropped otherwise."""
        for uid, last in list(self._last_victims.items()):
            if self._victim_gone(*last):
                self._preempting.discard(uid)
                del self._last_victims[uid]
                self._tokens.pop(uid, None)

    def _victim_gone(self, namespace: str, name: str, uid: str = "") -> bool:
        """The victim is out of the pod lister (a pod of its name with another uid is a new
        one), or being deleted."""
        objects = self.handle.objects
        peek = getattr(objects, "peek", None)  # the cached object, without a copy
        if peek is not None:
            victim = peek("v1", "Pod", name, namespace)
            if victim is None:
                return True
        else:
            try:
                victim = objects.get("v1", "Pod", name, namespace)
            except ObjectNotFound:
                return True
        md = victim.get("metadata") or {}
        return bool(md.get("deletionTimestamp")) or bool(uid and md.get("uid") and md.get("uid") != uid)

def _skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    """isPodSchedulableAfterPodDeletion: always Skip."""
    return QueueingHint.SKIP
