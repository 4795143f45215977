"""The scheduling queue: activeQ, backoffQ and unschedulable pods (kube-scheduler's
``backend/queue/scheduling_queue.go``).

* activeQ is a heap ordered by the QueueSort plugin.
* backoffQ holds pods until their backoff expires: ``initial × 2^(attempts−1)``, capped at max.
* unschedulable pods wait for a cluster event that one of their rejecting plugins registered
  (filtered by its queueing hint), or for the periodic flush after 5 minutes.
* pods gated at PreEnqueue wait in the unschedulable set and are checked again on events.

Not thread-safe by design: the scheduler's loop owns it.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.sdk import (
    ClusterEvent,
    ClusterEventWithHint,
    Pod,
    QueuedPodInfo,
    QueueingHint,
    Status,
)

__all__ = ["POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION", "UNSCHEDULABLE_TIMEOUT", "SchedulingQueue", "backoff_duration"]

log = logging.getLogger("kubesched")

POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 5 * 60.0
#: the event of the periodic flush of pods unschedulable for too long (a wildcard: every pod
#: it moves goes to activeQ, or to backoffQ while backing off)
UNSCHEDULABLE_TIMEOUT = ClusterEvent("*", label="UnschedulableTimeout")


def backoff_duration(attempts: int, initial: float, maximum: float) -> float:
    """kube-scheduler's calculateBackoffDuration: initial doubled per attempt after the first."""
    d = initial if attempts > 0 else 0.0
    for _ in range(1, max(attempts, 1)):
        if d > maximum - d:
            return maximum
        d += d
    return min(d, maximum)


class _HeapItem:
    __slots__ = ("less", "qpi", "removed")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.qpi = qpi
        self.less = less
        self.removed = False

    def __lt__(self, other: _HeapItem) -> bool:
        return self.less(self.qpi, other.qpi)


class SchedulingQueue:
    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        clock: Any,
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        pre_enqueue: Callable[[Pod], Status] | None = None,
        events: Mapping[str, Mapping[str, list[ClusterEventWithHint] | None]] | None = None,
        error_to_backoff: bool = True,
        metrics: Any = None,
    ) -> None:
        self._less = less
        self._clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._pre_enqueue = pre_enqueue or (lambda _p: Status())
        #: scheduler name -> plugin -> events (None = every event)
        self._events = events or {}
        self._error_to_backoff = error_to_backoff
        self._metrics = metrics
        self._active: list[_HeapItem] = []
        self._active_items: dict[str, _HeapItem] = {}
        self._backoff: list[tuple[float, int, str]] = []
        self._backoff_items: dict[str, QueuedPodInfo] = {}
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._in_flight: dict[str, QueuedPodInfo] = {}
        self._seq = itertools.count()
        #: node name -> nominated pods; uid -> node
        self._nominated: dict[str, dict[str, Pod]] = {}
        self._nominated_node: dict[str, str] = {}
        #: (plugin, exception type) of the queueing hints that raised and were logged
        self._hint_errors: set[tuple[str, type]] = set()

    # sizes ------------------------------------------------------------------------------------
    def pending(self) -> dict[str, int]:
        gated = sum(1 for q in self._unschedulable.values() if q.gating_plugin)
        return {
            "active": len(self._active_items),
            "backoff": len(self._backoff_items),
            "unschedulable": len(self._unschedulable) - gated,
            "gated": gated,
        }

    def has_active(self) -> bool:
        return bool(self._active_items)

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())

    def contains(self, uid: str) -> bool:
        return uid in self._active_items or uid in self._backoff_items or uid in self._unschedulable or uid in self._in_flight

    # internals --------------------------------------------------------------------------------
    def _push_active(self, qpi: QueuedPodInfo, event: str) -> None:
        uid = qpi.pod.uid
        self._remove_everywhere(uid)
        qpi.timestamp = self._clock.now()
        item = _HeapItem(qpi, self._less)
        self._active_items[uid] = item
        heapq.heappush(self._active, item)
        if self._metrics is not None:
            self._metrics.incoming(qpi.pod, "active", event)

    def _push_backoff(self, qpi: QueuedPodInfo, event: str) -> None:
        uid = qpi.pod.uid
        self._remove_everywhere(uid)
        self._backoff_items[uid] = qpi
        heapq.heappush(self._backoff, (qpi.backoff_expiration, next(self._seq), uid))
        if self._metrics is not None:
            self._metrics.incoming(qpi.pod, "backoff", event)

    def _remove_everywhere(self, uid: str) -> None:
        item = self._active_items.pop(uid, None)
        if item is not None:
            item.removed = True
        self._backoff_items.pop(uid, None)
        self._unschedulable.pop(uid, None)

    def _backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return qpi.timestamp + backoff_duration(qpi.attempts, self.initial_backoff, self.max_backoff)

    def _is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        qpi.backoff_expiration = self._backoff_expiry(qpi)
        return qpi.backoff_expiration > self._clock.now()

    def _gate(self, qpi: QueuedPodInfo) -> bool:
        """Runs PreEnqueue; True when the pod may enter activeQ."""
        st = self._pre_enqueue(qpi.pod)
        if st.is_success():
            qpi.gating_plugin = ""
            return True
        qpi.gating_plugin = st.plugin or "PreEnqueue"
        return False

    # pods ---------------------------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        """A new pending pod (kube-scheduler's Add)."""
        uid = pod.uid
        if uid in self._in_flight:
            return
        qpi = QueuedPodInfo(pod, self._clock.now())
        qpi.initial_attempt_timestamp = None
        if self._gate(qpi):
            self._push_active(qpi, "PodAdd")
        else:
            self._remove_everywhere(uid)
            self._unschedulable[uid] = qpi
            if self._metrics is not None:
                self._metrics.incoming(pod, "gated", "PodAdd")
        self._update_nominated(pod)

    def update(self, old: Pod | None, new: Pod) -> None:
        uid = new.uid
        if uid in self._in_flight:
            self._in_flight[uid].pod = new
            return
        item = self._active_items.get(uid)
        if item is not None:
            item.qpi.pod = new
            self._update_nominated(new)
            return
        if uid in self._backoff_items:
            self._backoff_items[uid].pod = new
            self._update_nominated(new)
            return
        qpi = self._unschedulable.get(uid)
        if qpi is None:
            self.add(new)
            return
        qpi.pod = new
        self._update_nominated(new)
        if old is not None and _spec_and_labels(old) == _spec_and_labels(new):
            return  # only status changed: nothing that may make it schedulable
        if not self._gate(qpi):
            return
        if self._is_backing_off(qpi):
            self._push_backoff(qpi, "PodUpdate")
        else:
            self._push_active(qpi, "PodUpdate")

    def delete(self, pod: Pod) -> None:
        self._remove_everywhere(pod.uid)
        self._in_flight.pop(pod.uid, None)
        self.delete_nominated(pod)

    def pop(self) -> QueuedPodInfo | None:
        """The next pod by QueueSort, or None; the pod is in flight until done/requeued."""
        while self._active:
            item = heapq.heappop(self._active)
            if item.removed:
                continue
            qpi = item.qpi
            uid = qpi.pod.uid
            self._active_items.pop(uid, None)
            qpi.attempts += 1
            if qpi.initial_attempt_timestamp is None:
                qpi.initial_attempt_timestamp = self._clock.now()
            self._in_flight[uid] = qpi
            return qpi
        return None

    def in_flight(self, uid: str) -> bool:
        """The pod was popped and its attempt has not ended (nor was it deleted meanwhile)."""
        return uid in self._in_flight

    def done(self, uid: str) -> None:
        self._in_flight.pop(uid, None)

    def requeue_failed(self, qpi: QueuedPodInfo, status: Status, unschedulable_plugins: Iterable[str] = (), pending_plugins: Iterable[str] = ()) -> None:
        """kube-scheduler's AddUnschedulableIfNotPresent, after a failed attempt."""
        uid = qpi.pod.uid
        self._in_flight.pop(uid, None)
        if self.contains(uid):
            return
        qpi.timestamp = self._clock.now()
        qpi.unschedulable_plugins = set(unschedulable_plugins)
        qpi.pending_plugins = set(pending_plugins)
        if status.is_rejected():
            qpi.unschedulable_count += 1
            qpi.consecutive_errors = 0
        else:
            qpi.consecutive_errors += 1
        if not status.is_rejected() and self._error_to_backoff and not qpi.unschedulable_plugins:
            qpi.backoff_expiration = self._backoff_expiry(qpi)
            self._push_backoff(qpi, "ScheduleAttemptFailure")
            return
        self._unschedulable[uid] = qpi
        if self._metrics is not None:
            self._metrics.incoming(qpi.pod, "unschedulable", "ScheduleAttemptFailure")

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move these pods (if waiting in backoff or unschedulable) to activeQ."""
        for p in pods:
            uid = p.uid
            qpi = self._unschedulable.get(uid) or self._backoff_items.get(uid)
            if qpi is None:
                continue
            if qpi.gating_plugin and not self._gate(qpi):
                continue
            self._push_active(qpi, "ForceActivate")

    # events -----------------------------------------------------------------------------------
    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        precheck: Callable[[Pod], bool] | None = None,
    ) -> int:
        """Move unschedulable pods that this event may help (kube-scheduler's
        MoveAllToActiveOrBackoffQueue). Returns how many moved. ``old``/``new`` (None on add /
        delete) reach the queueing hints as they are: ``Pod`` / ``Node`` views for those kinds,
        the API mapping for any other kind."""
        moved = 0
        for qpi in list(self._unschedulable.values()):
            if precheck is not None and not precheck(qpi.pod):
                continue
            if qpi.gating_plugin:
                if not self._worth(qpi, event, old, new, {qpi.gating_plugin}):
                    continue
                if not self._gate(qpi):
                    continue
                self._push_active(qpi, str(event))
                moved += 1
                continue
            strategy = self._strategy(qpi, event, old, new)
            if strategy == "skip":
                continue
            if strategy == "immediately" or not self._is_backing_off(qpi):
                self._push_active(qpi, str(event))
            else:
                self._push_backoff(qpi, str(event))
            moved += 1
        return moved

    def _strategy(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> str:
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors or event.is_wildcard():
            return "after_backoff"
        plugin_events = self._events.get(qpi.pod.scheduler_name, {})
        strategy = "skip"
        for plugin in rejectors:
            evs = plugin_events.get(plugin)
            if evs is None:
                # no EnqueueExtensions (or unknown plugin): any event may help
                if plugin in qpi.pending_plugins:
                    return "immediately"
                strategy = "after_backoff"
                continue
            for ewh in evs:
                if not ewh.event.matches(event):
                    continue
                hint = QueueingHint.QUEUE
                if ewh.hint is not None:
                    try:
                        hint = ewh.hint(qpi.pod, old, new)
                    except Exception as e:
                        self._hint_failed(plugin, event, e)
                        hint = QueueingHint.QUEUE
                if hint == QueueingHint.SKIP:
                    continue
                if plugin in qpi.pending_plugins:
                    return "immediately"
                strategy = "after_backoff"
        return strategy

    def _worth(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any, plugins: set[str]) -> bool:
        if event.is_wildcard():
            return True
        plugin_events = self._events.get(qpi.pod.scheduler_name, {})
        for plugin in plugins:
            evs = plugin_events.get(plugin)
            if evs is None:
                return True
            for ewh in evs:
                if ewh.event.matches(event):
                    if ewh.hint is None:
                        return True
                    try:
                        if ewh.hint(qpi.pod, old, new) != QueueingHint.SKIP:
                            return True
                    except Exception as e:
                        self._hint_failed(plugin, event, e)
                        return True
        return False

    def _hint_failed(self, plugin: str, event: ClusterEvent, e: Exception) -> None:
        """A queueing hint raised: the pod is queued (QUEUE), as kube-scheduler does; logged at
        ERROR once per (plugin, exception type), the traceback at debug level."""
        key = (plugin, type(e))
        if key in self._hint_errors:
            return
        self._hint_errors.add(key)
        log.error(
            'queueing hint of plugin "%s" failed on event %s: %s: %s; the pod is queued (logged once per plugin and exception type)',
            plugin, event, type(e).__name__, e,
        )
        if log.isEnabledFor(logging.DEBUG):
            log.debug('queueing hint of plugin "%s" failed', plugin, exc_info=(type(e), e, e.__traceback__))

    # timers -------------------------------------------------------------------------------------
    def flush_backoff_completed(self) -> int:
        now = self._clock.now()
        moved = 0
        while self._backoff and self._backoff[0][0] <= now:
            _exp, _seq, uid = heapq.heappop(self._backoff)
            qpi = self._backoff_items.get(uid)
            if qpi is None or qpi.backoff_expiration != _exp:
                continue
            self._push_active(qpi, "BackoffComplete")
            moved += 1
        return moved

    def next_backoff_expiry(self) -> float | None:
        while self._backoff:
            exp, _seq, uid = self._backoff[0]
            qpi = self._backoff_items.get(uid)
            if qpi is None or qpi.backoff_expiration != exp:
                heapq.heappop(self._backoff)
                continue
            return exp
        return None

    def flush_unschedulable_left_over(self, max_duration: float = POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION) -> int:
        """flushUnschedulablePodsLeftover: pods (not gated) unschedulable for longer than
        ``max_duration`` move as on the UnschedulableTimeout event."""
        now = self._clock.now()
        stale = [q for q in self._unschedulable.values() if not q.gating_plugin and now - q.timestamp > max_duration]
        event = str(UNSCHEDULABLE_TIMEOUT)
        for qpi in stale:
            if self._is_backing_off(qpi):
                self._push_backoff(qpi, event)
            else:
                self._push_active(qpi, event)
        return len(stale)

    # nominator ----------------------------------------------------------------------------------
    def _update_nominated(self, pod: Pod) -> None:
        # a nomination this scheduler set stays until the pod is bound or deleted
        nn = pod.nominated_node_name
        if nn:
            self.add_nominated(pod, nn)

    def add_nominated(self, pod: Pod, node_name: str) -> None:
        self.delete_nominated(pod)
        self._nominated_node[pod.uid] = node_name
        self._nominated.setdefault(node_name, {})[pod.uid] = pod

    def delete_nominated(self, pod: Pod) -> None:
        node = self._nominated_node.pop(pod.uid, None)
        if node is not None:
            d = self._nominated.get(node)
            if d is not None:
                d.pop(pod.uid, None)
                if not d:
                    del self._nominated[node]

    def has_nominated_pods(self) -> bool:
        return bool(self._nominated)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        d = self._nominated.get(node_name)
        return list(d.values()) if d else []


_OWN_ANNOTATIONS = "kube-scheduler-simulator.sigs.k8s.io/"


def _spec_and_labels(pod: Pod) -> tuple[Any, Any, Any]:
    """What makes an update of a pending pod worth a retry: its spec, labels and annotations,
    not its status nor the result annotations the scheduler itself writes."""
    md = pod.metadata
    ann = {k: v for k, v in (md.get("annotations") or {}).items() if not k.startswith(_OWN_ANNOTATIONS)}
    return (pod.spec, md.get("labels"), ann)
