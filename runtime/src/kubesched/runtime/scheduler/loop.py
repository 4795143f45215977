"""The scheduler: cluster events in, scheduling cycles, binding cycles out.

One loop thread owns the cache and the queue. Cluster watchers (any thread) and finished binding
cycles post typed messages (``messages.py``) into an inbox; the loop drains the inbox, fires due
timers, pops the next pod and runs its scheduling cycle (``cycles.py``). The binding cycle of an
assumed pod runs on an executor (a thread pool on a real cluster, inline on the simulated one)
while the loop goes on with the next pod. A pod held at Permit holds no thread: its binding
cycle starts when it is allowed.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from typing import Any

from kubesched.sdk import Pod, QueuedPodInfo, Status

from ..cache import Cache
from ..config import ConfigError, SchedulerConfiguration
from ..framework import Framework, FrameworkServices, WaitingPodImpl
from ..queue import SchedulingQueue
from ..registry import Registry
from ..scheduling import Scheduling
from .clock import RealClock, SimClock
from .cycles import CountingObjects, Cycles
from .handlers import EventHandlers
from .messages import (
    Activate,
    AddTimer,
    BindingDone,
    BindingFailed,
    Bound,
    ClusterEventMsg,
    PermitDone,
)
from .results import PodResult, Results
from .workers import InlineExecutor, WorkerPool

__all__ = ["Scheduler"]

log = logging.getLogger("kubesched")


class Scheduler:
    """``max_results``: keep only the newest that many pod results, and none of deleted pods
    (``kubesched run``); None keeps all (finite runs: simulate, explain, the test kit)."""

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
        max_results: int | None = None,
        observer: Results | None = None,
    ) -> None:
        self.config = config
        self.cluster = cluster
        self.simulated = simulated
        self.clock: Any = clock or (SimClock() if simulated else RealClock())
        self.tracer = tracer
        self.metrics = metrics
        self.cache = Cache()
        self.algo = Scheduling(seed, config.percentage_of_nodes_to_score)
        #: what became of each pod (``observer``: a Results of the caller's, e.g. one that also measures)
        self.observer = observer if observer is not None else Results(max_results, diagnostics=record_diagnostics)
        self.recorder: Any = None
        if record_results:
            from ..observe.recorder import MultiTracer, ResultRecorder

            self.recorder = ResultRecorder(cluster.annotate_pod)
            tracer = MultiTracer(tracer, self.recorder) if tracer is not None else self.recorder
            self.tracer = tracer
        self.waiting_pods: dict[str, WaitingPodImpl] = {}
        self._inbox: deque[Any] = deque()
        self._cv = threading.Condition()
        self._sleeping = False
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = itertools.count()
        self._stopping = False
        self._last_progress = 0.0
        self._executor = executor or (InlineExecutor() if simulated else WorkerPool(16, "binding"))
        self.objects = CountingObjects(cluster.objects)
        self.frameworks: dict[str, Framework] = {}
        self._closed = False
        services = FrameworkServices(
            snapshot=self.cache.update_snapshot,
            objects=self.objects,
            clock=self.clock,
            event_recorder=cluster,
            bind_pod=cluster.bind,
            nominated_pods_for_node=self._nominated_for_node,
            has_nominated_pods=self._has_nominated_pods,
            nominated_nodes=self._nominated_nodes,
            waiting_pods=self.waiting_pods,
            on_permit_done=self._on_permit_done,
            add_timer=self._add_timer_threadsafe,
            tracer=tracer,
            metrics=metrics,
            run_async=self._run_async,
            activate=self._activate_threadsafe,
            recheck_gated=self._recheck_gated_threadsafe,
        )
        for profile in config.profiles:
            fw = Framework.build(profile, registry, services, source=config.source)
            fw.reuse_results = fw.reuse_results and reuse_results
            self.frameworks[profile.scheduler_name] = fw
        if self.recorder is not None:
            self.recorder.weights = {n: dict(fw.score_weights) for n, fw in self.frameworks.items()}
        first = next(iter(self.frameworks.values()))
        sort_plugins = {tuple(fw.points.get("queueSort", [])) for fw in self.frameworks.values()}
        if len(sort_plugins) > 1:
            raise ConfigError(config.source, "profiles", "all profiles must use the same queue sort plugin")
        self.queue = SchedulingQueue(
            first.queue_sort_func(),
            self.clock,
            initial_backoff=config.pod_initial_backoff_seconds,
            max_backoff=config.pod_max_backoff_seconds,
            pre_enqueue=self._pre_enqueue,
            still_gated=self._still_gated,
            events={name: fw.events for name, fw in self.frameworks.items()},
            error_to_backoff=not simulated,
            metrics=metrics,
        )
        self.handlers = EventHandlers(self.cache, self.queue, self.observer, self.waiting_pods, self.frameworks)
        self.cycles = Cycles(
            frameworks=self.frameworks,
            cache=self.cache,
            queue=self.queue,
            algo=self.algo,
            cluster=cluster,
            objects=self.objects,
            results=self.observer,
            waiting_pods=self.waiting_pods,
            executor=self._executor,
            post=self._post,
            metrics=metrics,
            recorder=self.recorder,
        )
        #: the loop's handler of each inbox message type
        self._dispatch: dict[type, Callable[[Any], None]] = {
            ClusterEventMsg: self._on_event,
            AddTimer: self._on_add_timer,
            PermitDone: self._on_permit_resolved,
            Bound: self._on_bound,
            BindingFailed: self._on_binding_failed,
            Activate: self._on_activate,
            BindingDone: self._on_binding_done,
        }
        self.synced = False
        #: called with each pod popped from the queue, before its scheduling cycle (the cluster
        #: state the cycle sees is ``cache.update_snapshot()``); ``explain --cluster`` uses it
        self.before_cycle: Callable[[QueuedPodInfo], None] | None = None

    # results ------------------------------------------------------------------------------------
    @property
    def results(self) -> dict[str, PodResult]:
        """uid -> what became of the pod (see ``max_results``)."""
        return self.observer.pods

    @property
    def diagnostics(self) -> dict[str, dict[str, Any]]:
        """With ``record_diagnostics``: uid -> the pod's last attempt's filter verdicts and scores."""
        return self.observer.diagnostics

    @property
    def pod_deletions(self) -> int:
        """Pods deleted through the plugins' object client (preemption victims)."""
        return self.objects.pod_deletions

    # the inbox (any thread) ---------------------------------------------------------------------
    def _post(self, msg: Any) -> None:
        # deque.append is atomic; the loop is woken only when it sleeps (it sets _sleeping
        # under the lock before it looks at the inbox, so a post is never missed)
        self._inbox.append(msg)
        if self._sleeping:
            with self._cv:
                self._cv.notify()

    def on_cluster_event(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        """Called by the cluster (any thread): ADDED / MODIFIED / DELETED of an API object."""
        self._post(ClusterEventMsg(etype, kind, old, new))

    def _add_timer_threadsafe(self, deadline: float, fn: Callable[[], None]) -> None:
        self._post(AddTimer(deadline, fn))

    def _on_permit_done(self, wp: WaitingPodImpl, status: Status) -> None:
        self._post(PermitDone(wp, status))

    def _run_async(self, fn: Callable[[], None]) -> None:
        # the binding workers: a pool of its own for evictions measured slower on the live
        # PreemptionBasic bench (more threads taking the GIL from the loop)
        self._executor.submit(fn)

    def _activate_threadsafe(self, pods: list[Pod]) -> None:
        self._post(Activate(pods))

    def _recheck_gated_threadsafe(self, pods: list[Pod], plugin: str) -> None:
        self._post(Activate(pods, plugin))

    # what the frameworks ask ------------------------------------------------------------------
    def _pre_enqueue(self, pod: Pod) -> Status:
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            return Status()
        return fw.run_pre_enqueue(pod)

    def _still_gated(self, pod: Pod, plugin: str) -> bool:
        fw = self.frameworks.get(pod.scheduler_name)
        return fw is not None and not fw.run_pre_enqueue(pod, only=plugin).is_success()

    def _nominated_for_node(self, node_name: str) -> list[Pod]:
        return self.queue.nominator.pods_for_node(node_name)

    def _has_nominated_pods(self) -> bool:
        return self.queue.nominator.any()

    def _nominated_nodes(self) -> Iterable[str]:
        return self.queue.nominator.nodes()

    # messages (the loop) ------------------------------------------------------------------------
    def drain(self) -> bool:
        """Handle every message in the inbox (cluster events, binding outcomes, timers' work);
        True when there was any."""
        did = False
        popleft = self._inbox.popleft
        dispatch = self._dispatch
        while True:
            try:
                msg = popleft()
            except IndexError:
                return did
            did = True
            dispatch[type(msg)](msg)

    def _on_event(self, msg: ClusterEventMsg) -> None:
        try:
            self.handlers.handle(msg.etype, msg.kind, msg.old, msg.new)
        except Exception:  # a bad object must not stop the loop
            log.exception("handling %s %s failed", msg.etype, msg.kind)

    def _on_add_timer(self, msg: AddTimer) -> None:
        heapq.heappush(self._timers, (msg.deadline, next(self._timer_seq), msg.fn))

    def _on_permit_resolved(self, msg: PermitDone) -> None:
        self.cycles.permit_done(msg.wp.pod.uid, msg.status)

    def _on_bound(self, msg: Bound) -> None:
        self._last_progress = self.clock.now()
        self.cycles.bound(msg.ctx)

    def _on_binding_failed(self, msg: BindingFailed) -> None:
        self.cycles.binding_failed(msg.ctx, msg.status)

    def _on_activate(self, msg: Activate) -> None:
        self.queue.activate(msg.pods, gated_by=msg.gated_by)

    def _on_binding_done(self, _msg: BindingDone) -> None:
        self.cycles.inflight -= 1

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
        did = self.drain()
        did = self._fire_timers() or did
        if self._stopping:
            return did
        qpi = self.queue.pop()
        if qpi is not None:
            self.schedule_one(qpi)
            return True
        return did

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        if self.before_cycle is not None:
            self.before_cycle(qpi)
        self.cycles.schedule_one(qpi)

    #: simulated time: stop jumping the clock after this long (virtual seconds) without a bind,
    #: so pods that retry forever (e.g. a gang that can never fit) end a run as Unschedulable
    idle_horizon = 3600.0

    def run_until_idle(self, max_steps: int = 10_000_000, *, advance_time: bool = True, until: Callable[[], float] | None = None) -> None:
        """Simulated time: run until nothing can happen without a new cluster event; when only
        timers (backoff, permit waits) remain and ``advance_time`` is set, jump the clock to the
        next one (for at most ``idle_horizon`` virtual seconds without a bind, and never past
        ``until()``: the time of the workload's next event, in a replay)."""
        steps = 0
        self._last_progress = max(self._last_progress, self.clock.now())
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
            if until is not None and nxt > until():
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
        self.drain()
        if not isinstance(self._executor, InlineExecutor):
            self._executor.shutdown(wait=wait)
        self.drain()
        if not self._closed:
            self._closed = True
            for fw in self.frameworks.values():
                fw.close()  # plugins' close(), once, after the last binding

    # introspection ------------------------------------------------------------------------------
    def idle(self) -> bool:
        with self._cv:
            inbox = bool(self._inbox)
        return not inbox and not self.queue.has_active() and self.cycles.inflight == 0 and not self.waiting_pods
