"""The scheduling cycle and the binding cycle of one pod, and the one place their failures go
(kube-scheduler's ``schedule_one.go``).

``scheduling_cycle`` and ``binding_cycle`` each return ``(result, status)``; a status that is
not a success goes to :meth:`Cycles.handle_failure` (handleSchedulingFailure), which requeues
the pod, records the result, logs it (with the plugin's traceback at ``-v 4``), and writes the
FailedScheduling event and the PodScheduled=False condition. A FitError travels as the
status's ``error``, as kube-scheduler carries it in its Status.

The scheduling cycle and the failure handler run on the loop thread. The binding cycle runs on
the executor and reports back through the loop's inbox.

Before Permit's wait and PreBind, the binding cycle asks the PreBind plugins whether they have
work to do for the pod (PreBindPreFlight); when one has, or the pod waits at Permit, it sets the
pod's ``status.nominatedNodeName`` to the node (v1.36 NominatedNodeNameForExpectation, beta and
on since 1.35), so that other components (the cluster autoscaler) see where the pod is about to
be bound. A pod held at Permit runs this step on the executor as its wait begins, as
kube-scheduler's binding cycle does before WaitOnPermit; its binding cycle, once Permit
releases it, waits for that step to end.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any, NamedTuple

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    InvalidObjectError,
    Pod,
    QueuedPodInfo,
    Status,
)

from ..cache import Cache
from ..diagnosis import Diagnosis, FitError
from ..framework import Framework, WaitingPodImpl
from ..queue import SchedulingQueue
from ..scheduling import Scheduling, SchedulingError
from .messages import BINDING_DONE, Activate, BindingContext, BindingFailed, Bound
from .results import Results

__all__ = ["CountingObjects", "CycleResult", "Cycles", "nominate"]

log = logging.getLogger("kubesched")
#: one line per scheduling decision (kube-scheduler logs these at -v 2)
decisions = logging.getLogger("kubesched.scheduler")

_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD.value, ActionType.DELETE, label="AssignedPodDelete")


class CycleResult(NamedTuple):
    """What a scheduling cycle decided: the node (empty when it failed), the assumed pod (the
    one object the cache, Reserve, Permit and the binding cycle share; None when it failed)
    and, after a failure, what becomes of the pod's nomination (kube-scheduler's
    NominatingInfo): a node name when PostFilter nominated one, None when PostFilter ran and
    returned no nomination (leave it as it is), and "" for every other failure (clear it:
    v1.36 schedule_one.go's clearNominatedNode)."""

    host: str = ""
    nominated: str | None = ""
    assumed: Pod | None = None


_NO_RESULT = CycleResult()


class _PreFlight:
    """The PreBindPreFlight step of a pod held at Permit: its status once ``done`` is set."""

    __slots__ = ("done", "status")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.status: Status = Status(Code.SKIP)


class CountingObjects:
    """The cluster's object client, counting pod deletions (preemption victims)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.pod_deletions = 0
        self._count_lock = threading.Lock()  # evictions run on worker threads
        # reads and writes go straight to the cluster's client (no per-call indirection)
        self.get = inner.get
        self.list = inner.list
        self.patch = inner.patch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        self._inner.delete(api_version, kind, name, namespace)
        if kind == "Pod":
            with self._count_lock:
                self.pod_deletions += 1


class Cycles:
    """Both cycles of a pod and their failure handler, over the scheduler's cache and queue."""

    def __init__(
        self,
        *,
        frameworks: Mapping[str, Framework],
        cache: Cache,
        queue: SchedulingQueue,
        algo: Scheduling,
        cluster: Any,
        objects: CountingObjects,
        results: Results,
        waiting_pods: dict[str, WaitingPodImpl],
        executor: Executor,
        post: Callable[[Any], None],
        metrics: Any = None,
        recorder: Any = None,
    ) -> None:
        self.frameworks = frameworks
        self.cache = cache
        self.queue = queue
        self.algo = algo
        self.cluster = cluster
        self.objects = objects
        self.results = results
        #: the framework's pods held at Permit (shared with the frameworks' Handle)
        self.waiting_pods = waiting_pods
        self.executor = executor
        self.post = post
        self.metrics = metrics
        self.recorder = recorder
        #: pods held at Permit: uid -> what their binding cycle needs when they are released
        self.waiting: dict[str, BindingContext] = {}
        #: pods held at Permit: uid -> their PreBindPreFlight step (run as the wait begins)
        self.pre_flights: dict[str, _PreFlight] = {}
        #: binding cycles started and not yet done (the loop counts them down)
        self.inflight = 0

    # scheduling cycle ---------------------------------------------------------------------------
    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """ScheduleOne: the scheduling cycle of a popped pod, then its binding cycle (at once, or
        when Permit releases it), or its failure."""
        pod = qpi.pod
        fw = self.frameworks.get(pod.scheduler_name)
        self.results.seen(pod).attempts = qpi.attempts
        if fw is None or pod.deletion_timestamp is not None or self.cache.has_pod(pod.uid):
            self.queue.done(pod.uid)
            return
        start = time.perf_counter()
        state = CycleState()
        if self.metrics is not None:
            state.record_plugin_metrics = self.metrics.sample_plugins()
        result, st = self.scheduling_cycle(fw, state, qpi)
        if not st.is_success() and not st.is_wait():
            self.handle_failure(fw, qpi, st, start, result.nominated)
            return
        host, assumed = result.host, result.assumed
        assert assumed is not None  # a successful (or waiting) cycle assumed the pod
        if state.pods_to_activate:
            self.queue.activate(list(state.pods_to_activate.values()))
            state.pods_to_activate = {}
        self.queue.nominator.delete(pod)
        if self.metrics is not None:
            self.metrics.attempt(fw.profile_name, "scheduled", time.perf_counter() - start)
        if self.recorder is not None:
            self.recorder.finish_cycle(pod, host, fw.score_weights)
        ctx = BindingContext(fw, state, qpi, assumed, host)
        if st.is_wait():
            # the binding cycle starts when the waiting pod is allowed, rejected or timed out;
            # its PreBindPreFlight and nomination run now, on the executor
            if fw.will_wait_on_permit(assumed):
                self.waiting[pod.uid] = ctx
                pf = self.pre_flights[pod.uid] = _PreFlight()
                self.executor.submit(self._pre_flight_while_waiting, ctx, pf)
            return
        self.start_binding(ctx, None)

    def scheduling_cycle(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo) -> tuple[CycleResult, Status]:
        """schedulingCycle: filter, score, PostFilter on no fit; assume the pod on the chosen
        node, Reserve and Permit. Success (or Wait at Permit) leaves the pod assumed; any other
        status has undone everything."""
        pod = qpi.pod
        try:
            pod.validate()
        except InvalidObjectError as e:
            return _NO_RESULT, Status(Code.ERROR, f"invalid pod spec: {e}")
        snapshot = self.cache.update_snapshot()
        try:
            result = self.algo.schedule_pod(fw, state, pod, snapshot, keep_scores=self.results.keep_diagnostics)
        except FitError as fe:
            if self.recorder is not None:
                self.recorder.finish_cycle(pod, None, fw.score_weights)
                self.recorder.forget(pod)
            self.results.fit_failure(pod.uid, fe)
            return self._post_filter(fw, state, pod, fe)
        except SchedulingError as se:
            return _NO_RESULT, se.status
        except Exception as e:  # a plugin that returned something that is not a Status, ...
            log.exception("scheduling cycle of %s failed", pod.key)
            return _NO_RESULT, internal_error(e)
        host = result.suggested_host
        self.results.scheduled(pod.uid, result)
        assumed = pod.with_node_name(host)
        self.cache.assume_pod(assumed)
        try:
            st = fw.run_reserve(state, assumed, host)
            if st.is_success():
                st = fw.run_permit(state, assumed, host)
        except Exception as e:  # nothing escapes a cycle: undo it and report the pod
            log.exception("reserving %s on %s failed", pod.key, host)
            self.waiting_pods.pop(pod.uid, None)
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(pod.uid)
            return CycleResult(host), internal_error(e)
        if not st.is_success() and not st.is_wait():
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(pod.uid)
            return CycleResult(host), _rejected_on(pod, host, st)
        return CycleResult(host, assumed=assumed), st

    def _post_filter(self, fw: Framework, state: CycleState, pod: Pod, fe: FitError) -> tuple[CycleResult, Status]:
        """No node fits: PostFilter (preemption) may nominate a node for the pod; its status's
        message, whatever the code, ends the FitError's message. Without PostFilter plugins the
        nomination is cleared; with them it is PostFilter's result (schedulingAlgorithm)."""
        nominated: str | None = ""
        if fw.has_post_filter_plugins():
            # the node names matter only for nodes absent from the diagnosis
            all_nodes = self.cache.update_snapshot().list()
            statuses = fe.diagnosis.post_filter_statuses([ni.name for ni in all_nodes] if fe.diagnosis.absent_status is not None else ())
            r, st = fw.run_post_filter(state, pod, statuses)
            if self.metrics is not None and "DefaultPreemption" in fw.points.get("postFilter", []):
                self.metrics.preemption_attempts.inc()  # the victims: DefaultPreemption's executor
            if st.code is Code.ERROR:
                log.error("PostFilter of %s failed: %s", pod.key, st.message)
            fe.diagnosis.ran_post_filter(st)
            if r is None or r.mode == "noop":
                nominated = None
            elif r.mode == "override":
                nominated = r.nominated_node_name
        return CycleResult(nominated=nominated), Status(Code.UNSCHEDULABLE, fe.message(), error=fe)

    # the failure handler ------------------------------------------------------------------------
    def handle_failure(self, fw: Framework, qpi: QueuedPodInfo, status: Status, start: float | None, nominated: str | None = "") -> None:
        """handleSchedulingFailure, the one place a failed pod goes: requeue, result, log,
        FailedScheduling event, PodScheduled=False condition. ``nominated`` is the pod's
        nomination from now on, in the queue's nominator and in ``status.nominatedNodeName``:
        a node, "" to clear it (the default: binding failures clear it too) or None to leave
        it (CycleResult.nominated). A pod that left the queue during its attempt (deleted, or
        bound by someone else) is not requeued nor reported: nothing is left to retry
        (kube-scheduler checks that the pod still exists in the informer)."""
        pod = qpi.pod
        fit = status.error if isinstance(status.error, FitError) else None
        msg = fit.message() if fit is not None else status.message
        if not self.queue.in_flight(pod.uid):
            if decisions.isEnabledFor(logging.INFO):
                decisions.info('Pod is gone; not requeued pod="%s" err="%s"', pod.key, msg)
            return
        rejected = fit is not None or status.is_rejected()
        if nominated:
            self.queue.nominator.add(Pod({**pod.raw, "status": {**pod.status, "nominatedNodeName": nominated}}), nominated)
        elif nominated is not None:
            self.queue.nominator.delete(pod)
        if fit is not None:
            requeue_status = status if status.is_rejected() else Status(Code.UNSCHEDULABLE, msg)
            self.queue.requeue_failed(qpi, requeue_status, fit.diagnosis.unschedulable_plugins, fit.diagnosis.pending_plugins)
        else:
            self.queue.requeue_failed(qpi, status if rejected or status.code is Code.ERROR else Status(Code.ERROR, msg))
        if decisions.isEnabledFor(logging.INFO):
            decisions.info('Unable to schedule pod; no fit; waiting pod="%s" err="%s"' if rejected else 'Error scheduling pod; retrying pod="%s" err="%s"', pod.key, msg)
        err = status.error
        if not rejected and err is not None and log.isEnabledFor(logging.DEBUG):
            log.debug('pod="%s" failed with an error: %s', pod.key, msg, exc_info=(type(err), err, err.__traceback__))
        self.results.failed(pod, rejected, msg)
        if self.metrics is not None and start is not None:
            self.metrics.attempt(fw.profile_name, "unschedulable" if rejected else "error", time.perf_counter() - start)
        reason = "Unschedulable" if rejected else "SchedulerError"
        try:
            self.cluster.event(pod.raw, "Warning", "FailedScheduling", "Scheduling", _truncate(msg))
            self.cluster.update_pod_condition(
                pod,
                {"type": "PodScheduled", "status": "False", "reason": reason, "message": msg},
                nominated,
            )
        except Exception:
            log.exception("reporting the failure of %s", pod.key)

    # binding cycle ------------------------------------------------------------------------------
    def permit_done(self, uid: str, status: Status) -> None:
        """On the loop: a pod held at Permit was released; its binding cycle starts (and fails
        at once when Permit rejected it)."""
        self.waiting_pods.pop(uid, None)
        ctx = self.waiting.pop(uid, None)
        if ctx is not None:
            self.start_binding(ctx, status)

    def start_binding(self, ctx: BindingContext, permit_status: Status | None) -> None:
        self.inflight += 1
        self.executor.submit(self._run_binding, ctx, permit_status)

    def _run_binding(self, ctx: BindingContext, permit_status: Status | None) -> None:
        """On the executor: the binding cycle; its outcome goes back to the loop."""
        post = self.post
        bound = False
        try:
            st = self.binding_cycle(ctx, permit_status)
            if not st.is_success():
                self._binding_failed(ctx, st)
                return
            post(Bound(ctx))
            bound = True
            state = ctx.state
            if state.pods_to_activate:
                pods = list(state.pods_to_activate.values())
                state.pods_to_activate = {}
                post(Activate(pods))
            assumed, host = ctx.assumed, ctx.host
            if self.recorder is not None:
                self.recorder.finish_binding(assumed)
            try:
                self.cluster.event(assumed.raw, "Normal", "Scheduled", "Binding", f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}")
            except Exception:
                log.exception("recording the Scheduled event of %s", assumed.key)
            ctx.fw.run_post_bind(state, assumed, host)
        except Exception as e:  # nothing escapes a binding cycle: the pod is never lost
            log.exception("binding cycle of %s on %s failed", ctx.assumed.key, ctx.host)
            if not bound:
                self._binding_failed(ctx, internal_error(e))
        finally:
            post(BINDING_DONE)

    def binding_cycle(self, ctx: BindingContext, permit_status: Status | None) -> Status:
        """bindingCycle: PreBindPreFlight and the nomination, the Permit outcome, PreBind,
        Bind. Success, or the failure. ``permit_status`` is None for a pod that did not wait
        at Permit."""
        if permit_status is None:
            pre = self.pre_bind_pre_flight(ctx, will_wait=False)
        else:
            pf = self.pre_flights.pop(ctx.assumed.uid, None)
            if pf is None:
                pre = self.pre_bind_pre_flight(ctx, will_wait=True)
            else:
                pf.done.wait()
                pre = pf.status
        if pre.code is Code.ERROR:
            return pre
        if permit_status is not None and not permit_status.is_success():
            if permit_status.is_rejected():
                return permit_status
            return Status(Code.ERROR, f"waiting on permit for pod: {permit_status.message}", plugin=permit_status.plugin)
        fw, state, _qpi, assumed, host = ctx
        st = fw.run_pre_bind(state, assumed, host)
        if not st.is_success():
            return st
        st = fw.run_bind(state, assumed, host)
        if st.code is Code.SKIP:
            return Status(Code.ERROR, "no bind plugin bound the pod (all returned Skip)")
        return st

    def pre_bind_pre_flight(self, ctx: BindingContext, *, will_wait: bool) -> Status:
        """RunPreBindPreFlights; when a PreBind plugin will work, or the pod waits at Permit,
        the pod's ``status.nominatedNodeName`` becomes the node. Error when a plugin failed
        (the pod is then not nominated); Success or Skip otherwise."""
        fw, state, _qpi, assumed, host = ctx
        pre = fw.run_pre_bind_pre_flights(state, assumed, host)
        if pre.code is not Code.ERROR and (pre.code is Code.SUCCESS or will_wait):
            nominate(self.objects, assumed, host)
        return pre

    def _pre_flight_while_waiting(self, ctx: BindingContext, pf: _PreFlight) -> None:
        """On the executor, as a pod's wait at Permit begins: its PreBindPreFlight step. An
        Error ends the wait at once (the binding cycle then fails with that Error)."""
        try:
            pf.status = self.pre_bind_pre_flight(ctx, will_wait=True)
        except Exception as e:
            log.exception("PreBindPreFlight of %s on %s failed", ctx.assumed.key, ctx.host)
            pf.status = internal_error(e)
        finally:
            pf.done.set()
        if pf.status.code is Code.ERROR:
            wp = self.waiting_pods.get(ctx.assumed.uid)
            if wp is not None:
                wp.preempt("", pf.status.message)

    def _binding_failed(self, ctx: BindingContext, st: Status) -> None:
        """handleBindingCycleError, on the executor: Unreserve, then the rest on the loop."""
        ctx.fw.run_unreserve(ctx.state, ctx.assumed, ctx.host)
        self.post(BindingFailed(ctx, st))

    def binding_failed(self, ctx: BindingContext, st: Status) -> None:
        """On the loop: forget the assumed pod. A bind conflict (the pod is bound, by us earlier
        or by someone else, or gone) is never retried, so the pod is never bound twice; any
        other failure frees the node for the pods waiting on it and goes to the failure handler."""
        uid = ctx.assumed.uid
        self.cache.forget_pod(uid)
        if st.is_bind_conflict():
            self.queue.done(uid)
            log.warning("binding %s to %s: %s; not retried (the pod is bound or gone)", ctx.assumed.key, ctx.host, st.message)
            return
        if st.is_rejected():
            # handleBindingCycleError: "Avoid moving the assumed Pod itself as it's always
            # Unschedulable": the node freed by a rejected pod is announced after its failure is
            # handled (not an in-flight event of its own) and to the other pods only
            self.handle_failure(ctx.fw, ctx.qpi, _rejected_on(ctx.qpi.pod, ctx.host, st), None)
            self.queue.move_all_to_active_or_backoff(
                _ASSIGNED_POD_DELETE, ctx.assumed, None, precheck=lambda p: p.uid != uid
            )
            return
        self.queue.move_all_to_active_or_backoff(_ASSIGNED_POD_DELETE, ctx.assumed, None)
        self.handle_failure(ctx.fw, ctx.qpi, _rejected_on(ctx.qpi.pod, ctx.host, st), None)

    def bound(self, ctx: BindingContext) -> None:
        """On the loop: the pod is bound."""
        fw, _state, qpi, assumed, host = ctx
        if decisions.isEnabledFor(logging.INFO):
            decisions.info('Successfully bound pod to node pod="%s" node="%s" profile="%s" attempts=%d', assumed.key, host, fw.profile_name, qpi.attempts)
        if self.queue.in_flight(assumed.uid):
            self.results.bound(assumed, host)  # (a pod deleted meanwhile keeps its result as the delete left it)
        self.queue.done(assumed.uid)
        if self.metrics is not None:
            self.metrics.bound(fw.profile_name, qpi)


def _rejected_on(pod: Pod, host: str, st: Status) -> Status:
    """A rejection by Reserve, Permit, PreBind or Bind: a FitError on that one node, as
    kube-scheduler reports it ("0/1 nodes are available: ..."); other failures as they are."""
    if not st.is_rejected():
        return st
    d = Diagnosis(node_to_status={host: st})
    if st.plugin:
        d.unschedulable_plugins.add(st.plugin)
    fe = FitError(pod, 1, d)
    return Status(st.code, fe.message(), plugin=st.plugin, error=fe)


def nominate(objects: Any, pod: Pod, host: str) -> None:
    """Set the pod's ``status.nominatedNodeName`` to ``host`` through the cluster's object
    client (kube-scheduler's updatePod with ModeOverride, uid as precondition): written at
    once, so it lands before the bind; nothing when it is already ``host``. A failed write is
    logged and the binding goes on."""
    if pod.status.get("nominatedNodeName") == host:
        return
    try:
        objects.patch(
            "v1",
            "Pod",
            pod.name,
            {"metadata": {"uid": pod.uid}, "status": {"nominatedNodeName": host}},
            pod.namespace,
            subresource="status",
        )
    except Exception as e:
        log.error('Failed to update the nominated node name in the binding cycle pod="%s" nominatedNodeName="%s": %s', pod.key, host, e)


def internal_error(e: BaseException) -> Status:
    """An exception that escaped the framework (e.g. a plugin returned something that is not a
    Status): Error for that pod, which is requeued, as when a plugin raises."""
    return Status(Code.ERROR, f"internal error: {type(e).__name__}: {e}", error=e)


def _truncate(msg: str, limit: int = 1024) -> str:
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."
