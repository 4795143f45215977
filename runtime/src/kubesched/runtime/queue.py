"""The scheduling queue: activeQ, backoffQ and unschedulable pods (kube-scheduler's
``backend/queue/scheduling_queue.go``).

* activeQ is a heap ordered by the QueueSort plugin.
* backoffQ holds pods until their backoff expires: ``initial × 2^(count−1)``, capped at max,
  where count is the pod's consecutive errors, else its unschedulable attempts; the expiry is
  truncated to a 1-second ordering window and a pod leaves backoff once the clock's window is
  past it (KEP-5142). Pods rejected by plugins are ordered by (expiry window, QueueSort) and,
  when activeQ is empty, popped straight from backoffQ (SchedulerPopFromBackoffQ, on by default
  since v1.33); pods that failed with an error wait in a separate error backoff queue (by expiry)
  and are never popped before their backoff ends.
* unschedulable pods wait for a cluster event that one of their rejecting plugins registered
  (filtered by its queueing hint), or for the periodic flush after 5 minutes.
* pods gated at PreEnqueue wait in the unschedulable set and are checked again on events.

Not thread-safe by design: the scheduler's loop owns it.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Pod,
    QueuedPodInfo,
    Status,
)

__all__ = [
    "BACKOFF_ORDERING_WINDOW",
    "POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "UNSCHEDULABLE_TIMEOUT",
    "SchedulingQueue",
    "backoff_duration",
]

from .nominator import Nominator
from .requeue import QueueingHints

log = logging.getLogger("kubesched")

POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 5 * 60.0
#: the event of the periodic flush of pods unschedulable for too long (a wildcard: every pod
#: it moves goes to activeQ, or to backoffQ while backing off)
UNSCHEDULABLE_TIMEOUT = ClusterEvent("*", label="UnschedulableTimeout")
#: backoffQOrderingWindowDuration: backoff expiries are truncated to whole windows of this many
#: seconds; pods of one window are ordered by QueueSort
BACKOFF_ORDERING_WINDOW = 1.0


def backoff_duration(attempts: int, initial: float, maximum: float) -> float:
    """kube-scheduler's calculateBackoffDuration: initial doubled per count after the first
    (the queue passes the pod's consecutive errors, else its unschedulable count)."""
    d = initial if attempts > 0 else 0.0
    for _ in range(1, max(attempts, 1)):
        if d > maximum - d:
            return maximum
        d += d
    return min(d, maximum)


def _align(t: float) -> float:
    """alignToWindow: ``t`` truncated to the backoff ordering window."""
    return math.floor(t / BACKOFF_ORDERING_WINDOW) * BACKOFF_ORDERING_WINDOW


def _seq(event: tuple[int, Any, Any, Any]) -> int:
    return event[0]


class _HeapItem:
    __slots__ = ("less", "qpi", "removed")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.qpi = qpi
        self.less = less
        self.removed = False

    def __lt__(self, other: _HeapItem) -> bool:
        return self.less(self.qpi, other.qpi)


class _Heap:
    """A heap of queued pods by ``less`` with removal by uid (removed items are skipped)."""

    __slots__ = ("_heap", "_items", "_less")

    def __init__(self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self._less = less
        self._heap: list[_HeapItem] = []
        self._items: dict[str, _HeapItem] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, uid: str) -> bool:
        return uid in self._items

    def get(self, uid: str) -> QueuedPodInfo | None:
        item = self._items.get(uid)
        return None if item is None else item.qpi

    def values(self) -> list[QueuedPodInfo]:
        return [item.qpi for item in self._items.values()]

    def push(self, qpi: QueuedPodInfo) -> None:
        self.remove(qpi.pod.uid)
        item = _HeapItem(qpi, self._less)
        self._items[qpi.pod.uid] = item
        heapq.heappush(self._heap, item)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        item = self._items.pop(uid, None)
        if item is None:
            return None
        item.removed = True
        return item.qpi

    def peek(self) -> QueuedPodInfo | None:
        heap = self._heap
        while heap and heap[0].removed:
            heapq.heappop(heap)
        return heap[0].qpi if heap else None

    def pop(self) -> QueuedPodInfo | None:
        heap = self._heap
        while heap:
            item = heapq.heappop(heap)
            if not item.removed:
                del self._items[item.qpi.pod.uid]
                return item.qpi
        return None


class SchedulingQueue:
    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        clock: Any,
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        pre_enqueue: Callable[[Pod], Status] | None = None,
        still_gated: Callable[[Pod, str], bool] | None = None,
        events: Mapping[str, Mapping[str, list[ClusterEventWithHint] | None]] | None = None,
        error_to_backoff: bool = True,
        metrics: Any = None,
    ) -> None:
        self._less = less
        self._clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._pre_enqueue = pre_enqueue or (lambda _p: Status())
        #: whether the plugin gating a pod still rejects it at PreEnqueue (None: not known)
        self._still_gated = still_gated
        #: which events requeue which pods: the plugins' registrations and queueing hints
        self._hints = QueueingHints(events or {})
        self._error_to_backoff = error_to_backoff
        self._metrics = metrics
        self._active = _Heap(less)
        #: podBackoffQ (pods rejected by plugins): by backoff window, then QueueSort; popped
        #: when activeQ is empty
        self._backoff = _Heap(self._backoff_less)
        #: podErrorBackoffQ (pods that failed with an error): by backoff expiry only
        self._error_backoff = _Heap(_expires_first)
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        #: popped pods, until their attempt (binding cycle included) ends: uid -> (the pod, the
        #: sequence number of the last in-flight event before it was popped)
        self._in_flight: dict[str, tuple[QueuedPodInfo, int]] = {}
        #: kube-scheduler's inFlightEvents: the events seen while pods were in flight (popped,
        #: until their binding cycle ends), replayed against a pod's hints when it fails, so an
        #: event that came while it was held at Permit or binding is not lost
        self._in_flight_events: list[tuple[int, ClusterEvent, Any, Any]] = []
        self._event_seq = 0
        self.nominator = Nominator()

    # sizes ------------------------------------------------------------------------------------
    def pending(self) -> dict[str, int]:
        gated = sum(1 for q in self._unschedulable.values() if q.gating_plugin)
        return {
            "active": len(self._active),
            "backoff": len(self._backoff) + len(self._error_backoff),
            "unschedulable": len(self._unschedulable) - gated,
            "gated": gated,
        }

    def has_active(self) -> bool:
        """A pop would return a pod: activeQ, or the backoffQ of rejected pods, is not empty."""
        return bool(self._active) or bool(self._backoff)

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())

    def contains(self, uid: str) -> bool:
        return uid in self._active or uid in self._backoff or uid in self._error_backoff or uid in self._unschedulable or uid in self._in_flight

    # internals --------------------------------------------------------------------------------
    def _backoff_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """lessBackoffCompletedWithPriority: the earlier backoff window first; within one
        window, as activeQ orders (QueueSort)."""
        ea, eb = a.backoff_expiration, b.backoff_expiration
        if ea != eb:
            return ea < eb
        return self._less(a, b)

    def _push_active(self, qpi: QueuedPodInfo, event: str) -> None:
        """Into activeQ as it is (its timestamp, which QueueSort reads, is kept: it changes only
        when the pod is added or comes back from an attempt)."""
        uid = qpi.pod.uid
        self._remove_everywhere(uid)
        self._active.push(qpi)
        if self._metrics is not None:
            self._metrics.incoming(qpi.pod, "active", event)

    def _push_backoff(self, qpi: QueuedPodInfo, event: str) -> None:
        uid = qpi.pod.uid
        self._remove_everywhere(uid)
        self._backoff_time(qpi)
        if qpi.unschedulable_plugins or qpi.pending_plugins:
            self._backoff.push(qpi)
        else:  # it failed with an error
            self._error_backoff.push(qpi)
        if self._metrics is not None:
            self._metrics.incoming(qpi.pod, "backoff", event)

    def _remove_everywhere(self, uid: str) -> None:
        self._active.remove(uid)
        self._backoff.remove(uid)
        self._error_backoff.remove(uid)
        self._unschedulable.pop(uid, None)

    def _backoff_time(self, qpi: QueuedPodInfo) -> float:
        """getBackoffTime: the (window-aligned) end of the pod's backoff, cached in
        ``backoff_expiration`` until its next attempt fails; 0.0 when it has none (never
        rejected nor failed, or a max backoff of 0)."""
        if self.max_backoff == 0:
            return 0.0
        count = qpi.consecutive_errors or qpi.unschedulable_count
        if count == 0:
            return 0.0
        if not qpi.backoff_expiration:
            qpi.backoff_expiration = _align(qpi.timestamp + backoff_duration(count, self.initial_backoff, self.max_backoff))
        return qpi.backoff_expiration

    def _is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """isPodBackingoff: still backing off while its backoff window is not before the
        clock's window."""
        bt = self._backoff_time(qpi)
        return bool(bt) and bt >= _align(self._clock.now())

    def _gate(self, qpi: QueuedPodInfo) -> bool:
        """Runs PreEnqueue; True when the pod may enter activeQ."""
        st = self._pre_enqueue(qpi.pod)
        if st.is_success():
            qpi.gating_plugin = ""
            return True
        qpi.gating_plugin = st.plugin or "PreEnqueue"
        # runPreEnqueuePlugin: the gating plugin is one of the pod's rejectors from now on
        qpi.unschedulable_plugins.add(qpi.gating_plugin)
        return False

    def _park_gated(self, qpi: QueuedPodInfo, event: str) -> None:
        uid = qpi.pod.uid
        new = uid not in self._unschedulable
        self._remove_everywhere(uid)
        self._unschedulable[uid] = qpi
        if new and self._metrics is not None:
            self._metrics.incoming(qpi.pod, "gated", event)

    def _move_to_active(self, qpi: QueuedPodInfo, event: str, from_backoff: bool = False) -> bool:
        """moveToActiveQ: PreEnqueue (not for a pod coming from backoffQ: it passed PreEnqueue
        on the way in), then activeQ; a gated pod waits with the unschedulable pods."""
        if not from_backoff and not self._gate(qpi):
            self._park_gated(qpi, event)
            return False
        self._push_active(qpi, event)
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo, event: str) -> bool:
        """moveToBackoffQ: with SchedulerPopFromBackoffQ PreEnqueue runs on the way into
        backoffQ (a pod there may be popped at any time); a gated pod waits with the
        unschedulable pods."""
        if not self._gate(qpi):
            self._park_gated(qpi, event)
            return False
        self._push_backoff(qpi, event)
        return True

    def _requeue(self, qpi: QueuedPodInfo, strategy: str, event: str) -> bool:
        """requeuePodWithQueueingStrategy for "immediately" / "after_backoff"; True when the
        pod left the unschedulable pods."""
        if strategy != "immediately" and self._is_backing_off(qpi):
            return self._move_to_backoff(qpi, event)
        return self._move_to_active(qpi, event)

    # pods ---------------------------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        """A new pending pod (kube-scheduler's Add)."""
        uid = pod.uid
        if uid in self._in_flight:
            return
        qpi = QueuedPodInfo(pod, self._clock.now())
        qpi.initial_attempt_timestamp = None
        self._move_to_active(qpi, "PodAdd")
        self.nominator.update(pod)

    def update(self, old: Pod | None, new: Pod) -> None:
        uid = new.uid
        if uid in self._in_flight:
            self._in_flight[uid][0].pod = new
            return
        for heap in (self._active, self._backoff, self._error_backoff):
            queued = heap.get(uid)
            if queued is not None:
                queued.pod = new
                self.nominator.update(new)
                return
        qpi = self._unschedulable.get(uid)
        if qpi is None:
            self.add(new)
            return
        qpi.pod = new
        self.nominator.update(new)
        if old is not None and _spec_and_labels(old) == _spec_and_labels(new):
            if _generated_claims(old) == _generated_claims(new):
                return  # only status changed: nothing that may make it schedulable
            # the claims the resourceclaim controller made for it: kube-scheduler's
            # UpdatePodGeneratedResourceClaim, asked of the queueing hints (Update with QHint)
            event = ClusterEvent(EventResource.POD.value, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
            if qpi.gating_plugin:
                if self._hints.worth(qpi, event, old, new, {qpi.gating_plugin}):
                    self._move_to_active(qpi, str(event))
                return
            strategy = self._hints.strategy(qpi, event, old, new, self._hints.matching_for(event), False)
            if strategy != "skip":
                self._requeue(qpi, strategy, str(event))
            return
        self._requeue(qpi, "after_backoff", "PodUpdate")

    def delete(self, pod: Pod) -> None:
        self._remove_everywhere(pod.uid)
        self._land(pod.uid)
        self.nominator.delete(pod)

    def pop(self) -> QueuedPodInfo | None:
        """The next pod by QueueSort, or None; the pod is in flight until done/requeued. When
        activeQ is empty, the first pod of the backoffQ of rejected pods, backoff or not
        (SchedulerPopFromBackoffQ)."""
        qpi = self._active.pop()
        if qpi is None:
            qpi = self._backoff.pop()
            if qpi is None:
                return None
            if self._metrics is not None:
                self._metrics.incoming(qpi.pod, "active", "PopFromBackoffQ")
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        # kept in the order of their pops (a re-pop goes to the end): the first is the oldest
        self._in_flight.pop(qpi.pod.uid, None)
        self._in_flight[qpi.pod.uid] = (qpi, self._event_seq)
        return qpi

    def in_flight(self, uid: str) -> bool:
        """The pod was popped and its attempt has not ended (nor was it deleted meanwhile)."""
        return uid in self._in_flight

    def done(self, uid: str) -> None:
        self._land(uid)

    def _land(self, uid: str) -> list[tuple[int, ClusterEvent, Any, Any]]:
        """The pod's flight ended: the in-flight events it saw (those after its pop), and no
        event is kept that no pod still in flight could need."""
        entry = self._in_flight.pop(uid, None)
        events = self._in_flight_events  # in the order of their sequence numbers
        seen = events[bisect.bisect_right(events, entry[1], key=_seq) :] if entry is not None and events else []
        if not self._in_flight:
            events.clear()
        elif events:
            oldest = next(iter(self._in_flight.values()))[1]  # pops are in order
            if events[0][0] <= oldest:
                del events[: bisect.bisect_right(events, oldest, key=_seq)]
        return seen

    def requeue_failed(self, qpi: QueuedPodInfo, status: Status, unschedulable_plugins: Iterable[str] = (), pending_plugins: Iterable[str] = ()) -> None:
        """kube-scheduler's AddUnschedulableIfNotPresent, after a failed attempt. The plugins
        that rejected the pod replace the last attempt's (ClearRejectorPlugins). A pod no plugin
        rejected (an error) counts a consecutive error and is retried after its backoff; one
        that plugins rejected counts an unschedulable attempt and waits for an event."""
        uid = qpi.pod.uid
        events = self._land(uid)
        if self.contains(uid):
            return
        qpi.timestamp = self._clock.now()
        qpi.unschedulable_plugins = set(unschedulable_plugins)
        qpi.pending_plugins = set(pending_plugins)
        qpi.gating_plugin = ""
        rejected = bool(qpi.unschedulable_plugins or qpi.pending_plugins)
        if rejected:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors = 0
        else:
            qpi.consecutive_errors += 1
        qpi.backoff_expiration = 0.0  # recomputed from the new counts and timestamp
        if self._error_to_backoff and not rejected:
            self._requeue(qpi, "after_backoff", "ScheduleAttemptFailure")
            return
        # determineSchedulingHintForInFlightPod: an event that came while the pod was in flight
        # and that one of its rejectors' hints says may help requeues it now
        strategy = "skip"
        for _seq, event, old, new in events if rejected else ():
            got = self._hints.strategy(qpi, event, old, new, self._hints.matching_for(event), event.is_wildcard())
            if got != "skip":
                strategy = got
                if got == "immediately":
                    break
        if strategy != "skip":
            self._requeue(qpi, strategy, "ScheduleAttemptFailure")
            return
        self._unschedulable[uid] = qpi
        if self._metrics is not None:
            self._metrics.incoming(qpi.pod, "unschedulable", "ScheduleAttemptFailure")

    def registered_for(self, resource: str, action: ActionType) -> bool:
        """Whether a plugin of some profile registered exactly this resource for this action."""
        return self._hints.registered_for(resource, action)

    def activate(self, pods: Iterable[Pod], *, gated_by: str = "") -> None:
        """Move these pods (if waiting in backoff or unschedulable) to activeQ; with
        ``gated_by``, only those that plugin gates at PreEnqueue, which runs again."""
        for p in pods:
            uid = p.uid
            qpi = self._unschedulable.get(uid)
            if gated_by:
                if qpi is not None and qpi.gating_plugin == gated_by:
                    self._move_to_active(qpi, "ForceActivate")  # as Go's Activate: moveToActiveQ
                continue
            if qpi is not None:
                self._move_to_active(qpi, "ForceActivate")
                continue
            qpi = self._backoff.get(uid) or self._error_backoff.get(uid)
            if qpi is not None:
                self._move_to_active(qpi, "ForceActivate", from_backoff=True)

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
        if self._in_flight:
            self._event_seq += 1
            self._in_flight_events.append((self._event_seq, event, old, new))
        if not self._unschedulable:
            return 0  # the usual case: nothing waits for an event
        moved = 0
        label = str(event)
        matching = self._hints.matching_for(event)
        wildcard = event.is_wildcard()
        deaf = {} if wildcard else self._hints.deaf_to(event)
        for qpi in list(self._unschedulable.values()):
            if precheck is not None and not precheck(qpi.pod):
                continue
            unsched, pending = qpi.unschedulable_plugins, qpi.pending_plugins
            if qpi.gating_plugin:
                # an event its gating plugin does not register never moves a gated pod (nor does
                # a wildcard one); one it does is asked of all its rejectors' hints, as for any
                # other pod
                if not self._hints.registers(qpi, event, matching):
                    continue
                # its gating plugin still holds it: where Go's path (the hints, then PreEnqueue
                # with the gating plugin first) leaves it, in the same state, at a fraction of
                # the cost (every victim's deletion reaches every preemptor held meanwhile)
                if self._still_gated is not None and self._still_gated(qpi.pod, qpi.gating_plugin):
                    continue
            elif unsched or pending:
                d = deaf.get(qpi.pod.scheduler_name)
                if d is not None and unsched <= d and pending <= d:
                    continue  # what QueueingHints.strategy finds: no plugin of the pod's may react ("skip")
            strategy = self._hints.strategy(qpi, event, old, new, matching, wildcard)
            if strategy == "skip":
                continue
            if self._requeue(qpi, strategy, label):
                moved += 1
        return moved

    # timers -------------------------------------------------------------------------------------
    def flush_backoff_completed(self) -> int:
        """flushBackoffQCompleted: pods whose backoff ended move to activeQ (without PreEnqueue:
        they passed it on the way into backoffQ), the rejected ones first, then the errors."""
        moved = 0
        for heap in (self._backoff, self._error_backoff):
            while (qpi := heap.peek()) is not None and not self._is_backing_off(qpi):
                heap.pop()
                self._move_to_active(qpi, "BackoffComplete", from_backoff=True)
                moved += 1
        return moved

    def next_backoff_expiry(self) -> float | None:
        """When the first pod in backoff stops backing off: the window after its backoff's
        window (the flush moves it then), or None."""
        ends = [self._backoff_time(q) + BACKOFF_ORDERING_WINDOW for h in (self._backoff, self._error_backoff) if (q := h.peek()) is not None]
        return min(ends) if ends else None

    def flush_unschedulable_left_over(self, max_duration: float = POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION) -> int:
        """flushUnschedulablePodsLeftover: pods (not gated) unschedulable for longer than
        ``max_duration`` move as on the UnschedulableTimeout event."""
        now = self._clock.now()
        stale = [q for q in self._unschedulable.values() if not q.gating_plugin and now - q.timestamp > max_duration]
        event = str(UNSCHEDULABLE_TIMEOUT)
        return sum(1 for qpi in stale if self._requeue(qpi, "after_backoff", event))


def _expires_first(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """lessBackoffCompleted: the earlier backoff expiry first."""
    return a.backoff_expiration < b.backoff_expiration


_OWN_ANNOTATIONS = "kube-scheduler-simulator.sigs.k8s.io/"


def _generated_claims(pod: Pod) -> tuple[Any, Any]:
    """The status of the claims made for a pod (events.go extractPodGeneratedResourceClaimChange)."""
    return (pod.status.get("resourceClaimStatuses"), pod.status.get("extendedResourceClaimStatus"))


def _spec_and_labels(pod: Pod) -> tuple[Any, Any, Any]:
    """What makes an update of a pending pod worth a retry: its spec, labels and annotations,
    not its status nor the result annotations the scheduler itself writes."""
    ann = {k: v for k, v in pod.annotations.items() if not str(k).startswith(_OWN_ANNOTATIONS)}
    return (pod.spec, pod.metadata.get("labels"), ann)
