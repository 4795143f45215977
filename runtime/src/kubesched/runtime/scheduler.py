"""The scheduler: cluster events in, scheduling cycles, binding cycles out.

One loop thread owns the cache and the queue. Cluster watchers (any thread) and finished binding
cycles post into an inbox; the loop drains the inbox, fires due timers, pops the next pod and
runs its scheduling cycle. The binding cycle of an assumed pod runs on an executor (a thread
pool on a real cluster, inline on the simulated one) while the loop goes on with the next pod.
A pod held at Permit holds no thread: its binding cycle starts when it is allowed.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    InvalidObjectError,
    Node,
    ObjectConflict,
    ObjectNotFound,
    Pod,
    QueuedPodInfo,
    Status,
)

from .cache import Cache
from .config import SchedulerConfiguration
from .framework import Framework, FrameworkServices, WaitingPodImpl
from .queue import UNSCHEDULABLE_TIMEOUT, SchedulingQueue
from .registry import Registry
from .scheduling import Diagnosis, FitError, Scheduling, SchedulingError

__all__ = ["InlineExecutor", "PodResult", "RealClock", "Scheduler", "SimClock"]

log = logging.getLogger("kubesched")
#: one line per scheduling decision (kube-scheduler logs these at -v 2)
decisions = logging.getLogger("kubesched.scheduler")


class RealClock:
    def now(self) -> float:
        return time.time()


class SimClock:
    """Virtual time for the simulated cluster: it only moves when the scheduler is idle."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        if t > self._now:
            self._now = t


class InlineExecutor(Executor):
    """Runs submitted work at once, in the caller's thread (the simulated cluster)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        fn(*args, **kwargs)
        return None


class WorkerPool(Executor):
    """``size`` threads taking work from a SimpleQueue (C; no Condition per item as in
    ThreadPoolExecutor): the binding cycles. The threads start with the first submit (only the
    loop thread submits); an exception is logged (the binding cycle handles its own failures);
    work submitted after shutdown runs in the caller's thread."""

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name
        self._q: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self._closed:  # after shutdown (the scheduler's last drain): run it here, lose nothing
            fn(*args, **kwargs)
            return None
        if not self._threads:
            self._threads = [threading.Thread(target=self._work, name=f"{self.name}-{i}", daemon=True) for i in range(self.size)]
            for t in self._threads:
                t.start()
        self._q.put((functools.partial(fn, **kwargs) if kwargs else fn, args))
        return None

    def _work(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, args = item
            try:
                fn(*args)
            except Exception:
                log.exception("%s worker: unexpected error", self.name)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._closed = True
        for _ in self._threads:
            self._q.put(None)
        if wait:
            for t in self._threads:
                t.join()


@dataclass
class PodResult:
    namespace: str
    name: str
    node: str | None = None
    status: str = "Pending"  # Scheduled | Unschedulable | Error | Pending
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


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfiguration,
        registry: Registry,
        cluster: Any,
        *,
        clock: Any = None,
        seed: int | None = None,
        tracer: Any = None,
        simulated: bool = False,
        executor: Executor | None = None,
        metrics: Any = None,
        record_diagnostics: bool = False,
        record_results: bool = False,
        reuse_results: bool = True,
    ) -> None:
        self.config = config
        self.cluster = cluster
        self.simulated = simulated
        self.clock: Any = clock or (SimClock() if simulated else RealClock())
        self.tracer = tracer
        self.metrics = metrics
        self.cache = Cache()
        self.algo = Scheduling(seed, config.percentage_of_nodes_to_score)
        self.results: dict[str, PodResult] = {}
        self.recorder: Any = None
        if record_results:
            from .observe.explain import MultiTracer, ResultRecorder

            self.recorder = ResultRecorder(cluster.annotate_pod)
            tracer = MultiTracer(tracer, self.recorder) if tracer is not None else self.recorder
            self.tracer = tracer
        #: with record_diagnostics: uid -> {"filter": {node: Status}, "scores": {node: {plugin:
        #: PluginScore}}, "totals": {node: int}} of the pod's last attempt (the test kit reads it)
        self.record_diagnostics = record_diagnostics
        self.diagnostics: dict[str, dict[str, Any]] = {}
        self.waiting_pods: dict[str, WaitingPodImpl] = {}
        self._inbox: deque[Any] = deque()
        self._cv = threading.Condition()
        self._sleeping = False
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = itertools.count()
        self._inflight_bindings = 0
        self._stopping = False
        self._executor = executor or (InlineExecutor() if simulated else WorkerPool(16, "binding"))
        self.pod_deletions = 0
        services = FrameworkServices(
            snapshot=self.cache.update_snapshot,
            objects=_CountingObjects(cluster.objects, self),
            clock=self.clock,
            event_recorder=cluster,
            bind_pod=cluster.bind,
            nominated_pods_for_node=self._nominated_for_node,
            has_nominated_pods=lambda: bool(self.queue._nominated) if hasattr(self, "queue") else False,
            waiting_pods=self.waiting_pods,
            on_permit_done=self._on_permit_done,
            add_timer=self._add_timer_threadsafe,
            tracer=tracer,
            metrics=metrics,
        )
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            fw = Framework.build(profile, registry, services, source=config.source)
            fw.reuse_results = fw.reuse_results and reuse_results
            self.frameworks[profile.scheduler_name] = fw
        if self.recorder is not None:
            self.recorder.weights = {n: dict(fw.score_weights) for n, fw in self.frameworks.items()}
        first = next(iter(self.frameworks.values()))
        sort_plugins = {tuple(fw.points.get("queueSort", [])) for fw in self.frameworks.values()}
        if len(sort_plugins) > 1:
            from .config import ConfigError

            raise ConfigError(config.source, "profiles", "all profiles must use the same queue sort plugin")
        events = {name: fw.events for name, fw in self.frameworks.items()}
        self.queue = SchedulingQueue(
            first.queue_sort_func(),
            self.clock,
            initial_backoff=config.pod_initial_backoff_seconds,
            max_backoff=config.pod_max_backoff_seconds,
            pre_enqueue=self._pre_enqueue,
            events=events,
            error_to_backoff=not simulated,
            metrics=metrics,
        )
        self.synced = False

    # plumbing -----------------------------------------------------------------------------------
    def _post(self, item: Any) -> None:
        # deque.append is atomic; the loop is woken only when it sleeps (it sets _sleeping
        # under the lock before it looks at the inbox, so a post is never missed)
        self._inbox.append(item)
        if self._sleeping:
            with self._cv:
                self._cv.notify()

    def _add_timer_threadsafe(self, deadline: float, fn: Callable[[], None]) -> None:
        self._post(("timer", deadline, fn))

    def _add_timer(self, deadline: float, fn: Callable[[], None]) -> None:
        heapq.heappush(self._timers, (deadline, next(self._timer_seq), fn))

    def on_cluster_event(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        """Called by the cluster (any thread): ADDED / MODIFIED / DELETED of an API object."""
        self._post(("event", etype, kind, old, new))

    def _pre_enqueue(self, pod: Pod) -> Status:
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            return Status()
        return fw.run_pre_enqueue(pod)

    def _nominated_for_node(self, node_name: str) -> list[Pod]:
        return self.queue.nominated_pods_for_node(node_name) if hasattr(self, "queue") else []

    def responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.frameworks

    # events -------------------------------------------------------------------------------------
    def _drain(self) -> bool:
        did = False
        popleft = self._inbox.popleft
        while True:
            try:
                item = popleft()
            except IndexError:
                return did
            did = True
            if callable(item):
                item()
            elif item[0] == "event":
                _, etype, kind, old, new = item
                try:
                    self._handle_event(etype, kind, old, new)
                except Exception:  # a bad object must not stop the loop
                    log.exception("handling %s %s failed", etype, kind)
            elif item[0] == "timer":
                self._add_timer(item[1], item[2])

    def _handle_event(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if kind == "Node":
            self._node_event(etype, old, new)
        elif kind == "Pod":
            self._pod_event(etype, old, new)
        else:
            action = {"ADDED": ActionType.ADD, "DELETED": ActionType.DELETE}.get(etype, ActionType.UPDATE_OTHER)
            self.queue.move_all_to_active_or_backoff(ClusterEvent(kind, action), old, new)

    def _node_event(self, etype: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if etype == "DELETED":
            assert old is not None
            node = Node(old)
            self.cache.remove_node(node.name)
            self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE.value, ActionType.DELETE), old, None)
            return
        assert new is not None
        node = Node(new)
        try:
            node.validate()
        except InvalidObjectError as e:
            log.error("ignoring node %s: %s", node.name, e)
            return
        self.cache.add_node(node)
        if etype == "ADDED" or old is None:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE.value, ActionType.ADD), None, new)
            return
        action = node_update_action(Node(old), node)
        if action:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE.value, action), old, new)

    def _pod_event(self, etype: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if etype == "DELETED":
            assert old is not None
            pod = Pod(old)
            if pod.node_name or self.cache.has_pod(pod.uid):
                self.cache.remove_pod(pod)
                self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.ASSIGNED_POD.value, ActionType.DELETE), old, None)
            else:
                self.queue.delete(pod)
                wp = self.waiting_pods.get(pod.uid)
                if wp is not None:
                    wp.reject("", "removed")
                if self.cache.is_assumed(pod.uid):
                    self.cache.forget_pod(pod.uid)
                res = self.results.get(pod.uid)
                if res is not None and res.status != "Scheduled":
                    res.status = "Deleted"
            return
        assert new is not None
        pod = Pod(new)
        if pod.node_name:
            old_pod = Pod(old) if old is not None else None
            was_assigned = old_pod is not None and bool(old_pod.node_name)
            if self.cache.is_assumed(pod.uid):
                self.queue.delete_nominated(pod)  # our own bind: the pod is in flight, not queued
            else:
                self.queue.delete(pod)
            self.cache.add_pod(pod)
            res = self.results.get(pod.uid)
            if res is not None and res.status != "Scheduled":
                res.status, res.node, res.message = "Scheduled", pod.node_name, ""
            if not was_assigned:
                self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.ASSIGNED_POD.value, ActionType.ADD), None, new)
            else:
                action = pod_update_action(old_pod, pod) if old_pod is not None else ActionType.UPDATE_OTHER
                if action:
                    self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.ASSIGNED_POD.value, action), old, new)
            return
        if not self.responsible_for(pod):
            return
        if pod.deletion_timestamp is not None:
            self.queue.delete(pod)
            return
        if pod.uid not in self.results:
            self.results[pod.uid] = PodResult(pod.namespace, pod.name, profile=pod.scheduler_name)
        if self.cache.is_assumed(pod.uid):
            return  # binding in flight; the assigned update will come
        if etype == "ADDED" or old is None:
            self.queue.add(pod)
        else:
            self.queue.update(Pod(old), pod)

    # the loop -----------------------------------------------------------------------------------
    def _fire_timers(self) -> bool:
        now = self.clock.now()
        fired = False
        while self._timers and self._timers[0][0] <= now:
            _, _, fn = heapq.heappop(self._timers)
            fn()
            fired = True
        if self.queue.flush_backoff_completed():
            fired = True
        return fired

    def step(self) -> bool:
        """Drain events, fire due timers, schedule one pod. False when there was nothing to do."""
        did = self._drain()
        did = self._fire_timers() or did
        if self._stopping:
            return did
        qpi = self.queue.pop()
        if qpi is not None:
            self.schedule_one(qpi)
            return True
        return did

    #: simulated time: stop jumping the clock after this long (virtual seconds) without a bind,
    #: so pods that retry forever (e.g. a gang that can never fit) end a run as Unschedulable
    idle_horizon = 3600.0

    def run_until_idle(self, max_steps: int = 10_000_000, *, advance_time: bool = True) -> None:
        """Simulated time: run until nothing can happen without a new cluster event; when only
        timers (backoff, permit waits) remain and ``advance_time`` is set, jump the clock to the
        next one (for at most ``idle_horizon`` virtual seconds without a bind)."""
        steps = 0
        self._last_progress = max(getattr(self, "_last_progress", 0.0), self.clock.now())
        while steps < max_steps:
            steps += 1
            if self.step():
                continue
            with self._cv:
                if self._inbox:
                    continue
            if not advance_time:
                return
            nxt = self._next_deadline()
            if nxt is None or nxt - self._last_progress > self.idle_horizon:
                return
            self.clock.advance_to(nxt)

    def _next_deadline(self) -> float | None:
        cands = []
        if self._timers:
            cands.append(self._timers[0][0])
        b = self.queue.next_backoff_expiry()
        if b is not None:
            cands.append(b)
        return min(cands) if cands else None

    def run(self, stop: threading.Event, *, flush_interval: float = 1.0, leftover_interval: float = 30.0) -> None:
        """Real time: loop until ``stop`` is set; then finish in-flight bindings."""
        next_leftover = time.monotonic() + leftover_interval
        while not stop.is_set():
            if self.step():
                continue
            if time.monotonic() >= next_leftover:
                self.queue.flush_unschedulable_left_over()
                next_leftover = time.monotonic() + leftover_interval
                continue
            timeout = flush_interval
            nxt = self._next_deadline()
            if nxt is not None:
                timeout = max(0.0, min(timeout, nxt - self.clock.now()))
            with self._cv:
                self._sleeping = True
                if not self._inbox and not stop.is_set():
                    self._cv.wait(timeout)
                self._sleeping = False
        self.shutdown()

    def wake(self) -> None:
        with self._cv:
            self._cv.notify_all()

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking pods; let in-flight bindings finish."""
        self._stopping = True
        for wp in list(self.waiting_pods.values()):
            wp.reject("", "scheduler is shutting down")
        self._drain()
        if not isinstance(self._executor, InlineExecutor):
            self._executor.shutdown(wait=wait)
        self._drain()

    # scheduling cycle ---------------------------------------------------------------------------
    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        fw = self.frameworks.get(pod.scheduler_name)
        res = self.results.setdefault(pod.uid, PodResult(pod.namespace, pod.name, profile=pod.scheduler_name))
        res.attempts = qpi.attempts
        if fw is None or pod.deletion_timestamp is not None or self.cache.has_pod(pod.uid):
            self.queue.done(pod.uid)
            return
        start = time.perf_counter()
        try:
            pod.validate()
        except InvalidObjectError as e:
            self._failure(fw, qpi, Status(Code.ERROR, f"invalid pod spec: {e}"), None, start)
            return
        state = CycleState()
        if self.metrics is not None:
            state.record_plugin_metrics = self.metrics.sample_plugins()
        snapshot = self.cache.update_snapshot()
        try:
            result = self.algo.schedule_pod(fw, state, pod, snapshot, keep_scores=self.record_diagnostics)
        except FitError as fe:
            if self.recorder is not None:
                self.recorder.finish_cycle(pod, None, fw.score_weights)
                self.recorder.forget(pod)
            if self.record_diagnostics:
                self.diagnostics[pod.uid] = {"filter": dict(fe.diagnosis.node_to_status), "scores": {}, "totals": {}}
            self._fit_failure(fw, qpi, state, fe, start)
            return
        except SchedulingError as se:
            self._failure(fw, qpi, se.status, None, start)
            return
        except Exception as e:  # a plugin that returned something that is not a Status, ...
            log.exception("scheduling cycle of %s failed", pod.key)
            self._failure(fw, qpi, _internal_error(e), None, start)
            return
        host = result.suggested_host
        if self.record_diagnostics:
            self.diagnostics[pod.uid] = {
                "filter": dict(result.diagnosis.node_to_status) if result.diagnosis else {},
                "scores": {s.name: {ps.name: ps for ps in s.scores} for s in result.scores},
                "totals": {s.name: s.total_score for s in result.scores},
            }
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
            self._failure(fw, qpi, _internal_error(e), None, start)
            return
        if not st.is_success() and not st.is_wait():
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(pod.uid)
            self._cycle_rejected(fw, qpi, st, host, start)
            return
        if state.pods_to_activate:
            self.queue.activate(list(state.pods_to_activate.values()))
            state.pods_to_activate = {}
        self.queue.delete_nominated(pod)
        if self.metrics is not None:
            self.metrics.attempt(fw.profile_name, "scheduled", time.perf_counter() - start)
        if self.recorder is not None:
            self.recorder.finish_cycle(pod, host, fw.score_weights)
        if st.is_wait():
            # the binding cycle starts when the waiting pod is allowed, rejected or timed out
            wp = self.waiting_pods.get(pod.uid)
            if wp is not None:
                wp.ctx = (fw, state, qpi, host)  # type: ignore[attr-defined]
            return
        self._start_binding(fw, state, qpi, assumed, host, None)

    def _cycle_rejected(self, fw: Framework, qpi: QueuedPodInfo, st: Status, host: str, start: float) -> None:
        if st.is_rejected():
            d = Diagnosis(node_to_status={host: st})
            if st.plugin:
                d.unschedulable_plugins.add(st.plugin)
            self._failure(fw, qpi, st, FitError(qpi.pod, 1, d), start)
        else:
            self._failure(fw, qpi, st, None, start)

    def _fit_failure(self, fw: Framework, qpi: QueuedPodInfo, state: CycleState, fe: FitError, start: float) -> None:
        pod = qpi.pod
        nominated = ""
        if fw.has_post_filter_plugins():
            statuses: dict[str, Status] = dict(fe.diagnosis.node_to_status)
            if fe.diagnosis.absent_status is not None:
                for ni in self.cache.update_snapshot().list():
                    statuses.setdefault(ni.name, fe.diagnosis.absent_status)
            deletions = self.pod_deletions
            r, st = fw.run_post_filter(state, pod, statuses)
            if self.metrics is not None and "DefaultPreemption" in fw.points.get("postFilter", []):
                self.metrics.preemption(self.pod_deletions - deletions)
            if st.code is Code.ERROR:
                log.error("PostFilter of %s failed: %s", pod.key, st.message)
            elif not st.is_success():
                if st.is_rejected() and st.message:
                    fe.diagnosis.post_filter_msg = st.message
            if r is not None and r.nominated_node_name and r.mode == "override":
                nominated = r.nominated_node_name
        status = Status(Code.UNSCHEDULABLE, fe.message())
        if nominated:
            nominated_pod = Pod({**pod.raw, "status": {**pod.status, "nominatedNodeName": nominated}})
            self.queue.add_nominated(nominated_pod, nominated)
        self._failure(fw, qpi, status, fe, start, nominated=nominated)

    def _failure(
        self,
        fw: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        fit: FitError | None,
        start: float | None,
        nominated: str = "",
    ) -> None:
        """handleSchedulingFailure: requeue, event, PodScheduled=False condition."""
        pod = qpi.pod
        msg = fit.message() if fit is not None else status.message
        unsched = fit.diagnosis.unschedulable_plugins if fit is not None else set()
        pending = fit.diagnosis.pending_plugins if fit is not None else set()
        rejected = fit is not None or status.is_rejected()
        requeue_status = status if rejected or status.code is Code.ERROR else Status(Code.ERROR, msg)
        if fit is not None and not requeue_status.is_rejected():
            requeue_status = Status(Code.UNSCHEDULABLE, msg)
        self.queue.requeue_failed(qpi, requeue_status, unsched, pending)
        if decisions.isEnabledFor(logging.INFO):
            decisions.info('Unable to schedule pod; no fit; waiting pod="%s" err="%s"' if rejected else 'Error scheduling pod; retrying pod="%s" err="%s"', pod.key, msg)
        res = self.results.setdefault(pod.uid, PodResult(pod.namespace, pod.name))
        res.status = "Unschedulable" if rejected else "Error"
        res.message = msg
        res.node = None
        if self.metrics is not None and start is not None:
            self.metrics.attempt(fw.profile_name, "unschedulable" if rejected else "error", time.perf_counter() - start)
        reason = "Unschedulable" if rejected else "SchedulerError"
        try:
            self.cluster.event(pod.raw, "Warning", "FailedScheduling", "Scheduling", _truncate(msg))
            self.cluster.update_pod_condition(
                pod,
                {"type": "PodScheduled", "status": "False", "reason": reason, "message": msg},
                nominated or None,
            )
        except Exception:
            log.exception("reporting the failure of %s", pod.key)

    # binding cycle ------------------------------------------------------------------------------
    def _on_permit_done(self, wp: WaitingPodImpl, status: Status) -> None:
        # any thread: continue on the loop
        self._post(lambda: self._permit_resolved(wp, status))

    def _permit_resolved(self, wp: WaitingPodImpl, status: Status) -> None:
        ctx = getattr(wp, "ctx", None)
        self.waiting_pods.pop(wp.pod.uid, None)
        if ctx is None:
            return
        fw, state, qpi, host = ctx
        self._start_binding(fw, state, qpi, wp.pod, host, status)
        if not status.is_success():
            return

    def _start_binding(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str, permit_status: Status | None) -> None:
        self._inflight_bindings += 1
        self._executor.submit(self._binding_cycle, fw, state, qpi, assumed, host, permit_status)

    def _binding_cycle(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str, permit_status: Status | None) -> None:
        bound = False
        try:
            if permit_status is not None and not permit_status.is_success():
                st = permit_status
                if not st.is_rejected():
                    st = Status(Code.ERROR, f"waiting on permit for pod: {st.message}", plugin=st.plugin)
                self._binding_failed(fw, state, qpi, assumed, host, st)
                return
            st = fw.run_pre_bind(state, assumed, host)
            if not st.is_success():
                self._binding_failed(fw, state, qpi, assumed, host, st)
                return
            st = fw.run_bind(state, assumed, host)
            if not st.is_success():
                if st.code is Code.SKIP:
                    st = Status(Code.ERROR, "no bind plugin bound the pod (all returned Skip)")
                err = st.error
                if isinstance(err, (ObjectConflict, ObjectNotFound)):
                    # already bound (by us earlier, or someone else) or gone: never bind twice
                    self._post(lambda: self._bind_conflict(fw, state, qpi, assumed, host, st))
                    return
                self._binding_failed(fw, state, qpi, assumed, host, st)
                return
            self._post(lambda: self._bound(fw, qpi, assumed, host))
            bound = True
            if state.pods_to_activate:
                pods = list(state.pods_to_activate.values())
                state.pods_to_activate = {}
                self._post(lambda: self.queue.activate(pods))
            if self.recorder is not None:
                self.recorder.finish_binding(assumed)
            try:
                self.cluster.event(assumed.raw, "Normal", "Scheduled", "Binding", f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}")
            except Exception:
                log.exception("recording the Scheduled event of %s", assumed.key)
            fw.run_post_bind(state, assumed, host)
        except Exception as e:  # nothing escapes a binding cycle: the pod is never lost
            log.exception("binding cycle of %s on %s failed", assumed.key, host)
            if not bound:
                self._binding_failed(fw, state, qpi, assumed, host, _internal_error(e))
        finally:
            self._post(self._binding_done)

    def _binding_done(self) -> None:
        self._inflight_bindings -= 1

    def _bound(self, fw: Framework, qpi: QueuedPodInfo, assumed: Pod, host: str) -> None:
        self._last_progress = self.clock.now()
        if decisions.isEnabledFor(logging.INFO):
            decisions.info('Successfully bound pod to node pod="%s" node="%s" profile="%s" attempts=%d', assumed.key, host, fw.profile_name, qpi.attempts)
        self.cache.finish_binding(assumed.uid)
        self.queue.done(assumed.uid)
        res = self.results.setdefault(assumed.uid, PodResult(assumed.namespace, assumed.name))
        res.status, res.node, res.message = "Scheduled", host, ""
        if self.metrics is not None:
            self.metrics.bound(fw.profile_name, qpi)

    def _bind_conflict(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str, st: Status) -> None:
        fw.run_unreserve(state, assumed, host)
        self.cache.forget_pod(assumed.uid)
        self.queue.done(assumed.uid)
        log.warning("binding %s to %s: %s; not retried (the pod is bound or gone)", assumed.key, host, st.message)

    def _binding_failed(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str, st: Status) -> None:
        fw.run_unreserve(state, assumed, host)

        def on_loop() -> None:
            self.cache.forget_pod(assumed.uid)
            self.queue.move_all_to_active_or_backoff(
                ClusterEvent(EventResource.ASSIGNED_POD.value, ActionType.DELETE, label="AssignedPodDelete"), assumed.raw, None
            )
            if st.is_rejected():
                d = Diagnosis(node_to_status={host: st})
                if st.plugin:
                    d.unschedulable_plugins.add(st.plugin)
                self._failure(fw, qpi, st, FitError(qpi.pod, 1, d), None)
            else:
                self._failure(fw, qpi, st, None, None)

        self._post(on_loop)

    # introspection ------------------------------------------------------------------------------
    def idle(self) -> bool:
        with self._cv:
            inbox = bool(self._inbox)
        return not inbox and not self.queue.has_active() and self._inflight_bindings == 0 and not self.waiting_pods


class _CountingObjects:
    """The cluster's object client, counting pod deletions (preemption victims)."""

    def __init__(self, inner: Any, sched: Scheduler) -> None:
        self._inner = inner
        self._sched = sched
        # reads and writes go straight to the cluster's client (no per-call indirection)
        self.get = inner.get
        self.list = inner.list
        self.patch = inner.patch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        self._inner.delete(api_version, kind, name, namespace)
        if kind == "Pod":
            self._sched.pod_deletions += 1


def _internal_error(e: BaseException) -> Status:
    """An exception that escaped the framework (e.g. a plugin returned something that is not a
    Status): Error for that pod, which is requeued, as when a plugin raises."""
    return Status(Code.ERROR, f"internal error: {type(e).__name__}: {e}", error=e)


def _truncate(msg: str, limit: int = 1024) -> str:
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def node_update_action(old: Node, new: Node) -> ActionType:
    """Which specific node update this is (kube-scheduler's nodeSchedulingPropertiesChange)."""
    a = ActionType(0)
    if old.labels != new.labels:
        a |= ActionType.UPDATE_NODE_LABEL
    if old.raw.get("spec", {}).get("taints") != new.raw.get("spec", {}).get("taints") or old.unschedulable != new.unschedulable:
        a |= ActionType.UPDATE_NODE_TAINT
    if (old.status.get("allocatable") != new.status.get("allocatable")) or (old.status.get("capacity") != new.status.get("capacity")):
        a |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.conditions != new.conditions:
        a |= ActionType.UPDATE_NODE_CONDITION
    if old.annotations != new.annotations:
        a |= ActionType.UPDATE_NODE_ANNOTATION
    return a


def pod_update_action(old: Pod, new: Pod) -> ActionType:
    a = ActionType(0)
    if old.labels != new.labels:
        a |= ActionType.UPDATE_POD_LABEL
    if old.requests.as_dict() != new.requests.as_dict():
        a |= ActionType.UPDATE_POD_SCALE_DOWN
    if old.spec.get("tolerations") != new.spec.get("tolerations"):
        a |= ActionType.UPDATE_POD_TOLERATION
    if not a and old.raw != new.raw:
        a = ActionType.UPDATE_OTHER
    return a


__all__ += ["UNSCHEDULABLE_TIMEOUT", "node_update_action", "pod_update_action"]
