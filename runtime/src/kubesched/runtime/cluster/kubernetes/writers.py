"""What the scheduler writes: bindings, events, pod conditions and annotations.

* Binding through the ``pods/binding`` subresource, retried with backoff on 429, 5xx and
  timeouts. A 409 (conflict, "already assigned") is never retried into a second bind: the pod is
  read back, and if it is bound to the node we asked for (an earlier attempt that timed out but
  landed), the bind counts as done; otherwise the conflict is raised.
* ``events.k8s.io/v1`` Events, the ``PodScheduled`` condition / ``nominatedNodeName`` and result
  annotations are queued and sent by a small pool of background writers, so the scheduling loop
  never waits on them. A pod's status and annotation writes are taken before events queued
  earlier (kube-scheduler writes the former at once and the latter through a separate
  broadcaster): a nomination never waits behind a burst of events.
* The writes of one pod land in the order they were issued (kube-scheduler v1.36's API
  dispatcher, ``backend/api_dispatcher/call_queue.go``): a pod's status, and its annotations,
  have at most one write in flight; a newer write queued behind it is merged into the one
  already queued (``PodStatusPatchCall.Merge``: the newer condition wins, a nomination of None
  keeps the older one's), so a late retry can never bring back an older condition or a
  nomination a later write cleared. A bind waits until the pod's status writes issued before it
  (in flight and queued) have landed, as kube-scheduler writes a failure's condition and
  nomination before the pod's next attempt; later ones wait for the bind. Different pods'
  writes, and events, go out in parallel.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.sdk import Pod

from ...timefmt import rfc3339
from .codec import dumps
from .errors import Conflict, Invalid, NotFound, retryable
from .retry import Backoff, retry

if TYPE_CHECKING:
    from .api import KubeClient

__all__ = ["Writer"]

log = logging.getLogger("kubesched.kubernetes")

#: a bind that failed on 429, 5xx or a timeout: 0.2 s, doubling up to 5 s
BIND_BACKOFF = Backoff(0.2, 5.0, jitter=0.2)
#: reading a pod back after a bind conflict: every 0.5 s, 5 tries
READ_BACK_BACKOFF = Backoff(0.5, 0.5)
READ_BACK_ATTEMPTS = 5
#: with pod writes and events queued, one write in this many is an event
EVENT_EVERY = 8
#: an event or status write that failed on 429, 5xx or a timeout: 0.5 s, doubling up to 5 s
WRITE_BACKOFF = Backoff(0.5, 5.0, jitter=0.2)

#: what one queued write is for: ("status" or "annotations", the pod's uid)
_Key = tuple[str, str]


def _not_found(e: BaseException) -> bool:
    return not isinstance(e, NotFound)


def _log_write_retry(e: Exception, delay: float) -> None:
    log.debug("status write failed (retrying in %.1fs): %s", delay, e)


class _Write:
    """One queued write. ``key`` None: nothing to order it with (an event, a new object)."""

    key: _Key | None = None

    def __init__(self, client: KubeClient, method: str, path: str, body: Any, **options: Any) -> None:
        self.client, self.method, self.path, self.body, self.options = client, method, path, body, options

    def send(self) -> None:
        self.client.request(self.method, self.path, body=self.body, **self.options)

    def merge(self, older: _Write) -> None:
        """Take the place of ``older`` (same key, still queued): the final state is the one
        of both sent in order."""
        raise TypeError(f"{type(self).__name__} is not merged")


class _StatusPatch(_Write):
    """The ``PodScheduled`` condition and ``nominatedNodeName`` of one pod (PodStatusPatchCall)."""

    def __init__(self, client: KubeClient, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        super().__init__(client, "PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status", None, content_type="application/strategic-merge-patch+json", decode=False)
        self.key = ("status", pod.uid)
        self.uid = pod.uid
        cond = {"lastProbeTime": None, "lastTransitionTime": rfc3339(), **condition}
        self.conditions: dict[Any, dict[str, Any]] = {cond.get("type"): cond}
        self.nominated = nominated_node_name

    def merge(self, older: _Write) -> None:
        assert isinstance(older, _StatusPatch)
        self.conditions = {**older.conditions, **self.conditions}
        if self.nominated is None:  # "leave it" keeps what the older write set or cleared
            self.nominated = older.nominated

    def send(self) -> None:
        status: dict[str, Any] = {"conditions": list(self.conditions.values())}
        if self.nominated is not None:
            # "" clears it: null removes the field in a strategic merge patch
            status["nominatedNodeName"] = self.nominated or None
        self.body = dumps({"metadata": {"uid": self.uid}, "status": status})
        super().send()


class _AnnotationPatch(_Write):
    def __init__(self, client: KubeClient, pod: Pod, annotations: Mapping[str, str]) -> None:
        super().__init__(client, "PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}", None, content_type="application/merge-patch+json", decode=False)
        self.key = ("annotations", pod.uid)
        self.annotations = dict(annotations)

    def merge(self, older: _Write) -> None:
        assert isinstance(older, _AnnotationPatch)
        self.annotations = {**older.annotations, **self.annotations}

    def send(self) -> None:
        self.body = dumps({"metadata": {"annotations": self.annotations}})
        super().send()


class Writer:
    """Binds pods and sends the queued writes of one cluster."""

    #: How long one event / pod status write is retried through API server errors and outages
    #: before it is dropped (client-go's event sink tries 12 times, 10s apart). The pod's next
    #: write waits for it (merged with the ones after it); shutdown waits on them only for
    #: ``flush``'s timeout.
    write_retry_seconds = 120.0

    def __init__(self, client: KubeClient, *, reporting_controller: str, instance: str, bind_attempts: int = 5, writers: int = 4) -> None:
        self.client = client
        self.reporting_controller = reporting_controller
        self.instance = instance
        self.bind_attempts = bind_attempts
        # the call queue (call_queue.go): one lock; workers wait on _work, flush and bind on _done
        lock = threading.Lock()
        self._work = threading.Condition(lock)
        self._done = threading.Condition(lock)
        #: what a worker takes next, oldest first: the key of a queued pod write (status,
        #: annotations), taken before any event (kube-scheduler writes a failure's condition and
        #: nomination at once, in the scheduling goroutine, and its events through a separate
        #: broadcaster: a nomination must not wait behind a burst of events, since preemption
        #: reads it back from the watch and a bind waits for it)
        self._ready: deque[_Key] = deque()
        #: unordered writes (events), oldest first
        self._ready_events: deque[_Write] = deque()
        #: pod writes taken since the last event: every EVENT_EVERY-th write is an event, so a
        #: steady stream of pod writes never starves the events
        self._since_event = 0
        #: the one queued (not yet sent) write of each key (apiCalls)
        self._queued: dict[_Key, _Write] = {}
        #: keys with a write being sent, or their pod being bound (inFlightEntities)
        self._busy: set[_Key] = set()
        self._writes_pending = 0  # queued or being sent (flush waits for 0)
        self._closed = False
        #: events and status writes go through a small pool, off the scheduling loop
        self._writers = [threading.Thread(target=self._write_loop, name=f"status-writer-{i}", daemon=True) for i in range(writers)]
        for t in self._writers:
            t.start()

    # binding ----------------------------------------------------------------------------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        """Raises ObjectConflict (``Conflict``) when the pod is bound elsewhere, ObjectNotFound
        (``NotFound``) when it is gone."""
        body = dumps({
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        })
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"

        def post() -> None:
            try:
                self.client.request("POST", path, body=body, timeout=30, decode=False)  # the answer is a Status
            except Conflict:
                if not self._bound_to(pod, node_name):
                    raise
                # an earlier attempt landed

        key = ("status", pod.uid)
        self._take(key)
        try:
            retry(post, BIND_BACKOFF, attempts=self.bind_attempts)
        finally:
            self._release(key)

    def _bound_to(self, pod: Pod, node_name: str) -> bool:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        try:
            cur = retry(lambda: self.client.request("GET", path), READ_BACK_BACKOFF, retry_on=_not_found, attempts=READ_BACK_ATTEMPTS)
        except Exception:
            return False  # gone, or still unreadable
        md = cur.get("metadata") or {}
        return bool(md.get("uid") == pod.uid and (cur.get("spec") or {}).get("nodeName") == node_name)

    def _take(self, key: _Key) -> None:
        """Hold ``key`` for a bind: the pod's status writes issued before it (queued or in
        flight) land first, later ones wait for the bind. kube-scheduler writes a failure's
        condition and nomination before the pod's next attempt can start (handleSchedulingFailure
        calls updatePod synchronously), so a retried pod's bind never overtakes them."""
        with self._work:
            while key in self._busy or key in self._queued:
                self._done.wait()
            self._busy.add(key)

    def _release(self, key: _Key) -> None:
        with self._work:
            self._busy.discard(key)
            if key in self._queued:
                self._ready.append(key)
                self._work.notify()
            self._done.notify_all()

    # queued writes ----------------------------------------------------------------------------------
    def _queue_write(self, w: _Write) -> None:
        key = w.key
        with self._work:
            if key is None:
                self._ready_events.append(w)
            else:
                older = self._queued.get(key)
                self._queued[key] = w
                if older is not None:  # the newer write takes its place in the queue
                    w.merge(older)
                    return
                if key in self._busy:  # sent once the one in flight is done
                    self._writes_pending += 1
                    return
                self._ready.append(key)
            self._writes_pending += 1
            self._work.notify()

    def _write_loop(self) -> None:
        while True:
            with self._work:
                while True:
                    while not self._ready and not self._ready_events:
                        if self._closed:
                            return
                        self._work.wait()
                    if not self._ready or (self._ready_events and self._since_event >= EVENT_EVERY):
                        w, key = self._ready_events.popleft(), None
                        self._since_event = 0
                        break
                    key = self._ready.popleft()
                    self._since_event += 1
                    queued = self._queued.get(key)
                    if queued is not None and key not in self._busy:  # else dropped, or re-queued by who holds it
                        del self._queued[key]
                        self._busy.add(key)
                        w = queued
                        break
            try:
                self._write_one(w)
            finally:
                with self._work:
                    self._writes_pending -= 1
                    if key is not None:
                        self._busy.discard(key)
                        if key in self._queued:  # a newer write came meanwhile
                            self._ready.append(key)
                            self._work.notify()
                    self._done.notify_all()

    def _write_one(self, w: _Write) -> None:
        try:
            retry(w.send, WRITE_BACKOFF, deadline=time.monotonic() + self.write_retry_seconds, on_retry=_log_write_retry)
        except (NotFound, Conflict, Invalid) as e:  # the pod is gone or changed meanwhile
            log.debug("status write dropped: %s", e)
        except Exception as e:
            if retryable(e):
                log.warning("status write dropped after retrying for %.0fs: %s", self.write_retry_seconds, e)
            else:  # 401/403 (a missing RBAC rule), 400: never silently
                log.warning("status write dropped: %s", e)

    def event(self, regarding: Mapping[str, Any], event_type: str, reason: str, action: str, note: str, related: Mapping[str, Any] | None = None) -> None:
        md = regarding.get("metadata") or {}
        ns = md.get("namespace") or "default"
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{md.get('name')}.{time.time_ns():x}", "namespace": ns},
            "eventTime": rfc3339(micro=True),
            "reportingController": self.reporting_controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "type": event_type,
            "note": note[:1024],
            "regarding": {
                "apiVersion": regarding.get("apiVersion", "v1"),
                "kind": regarding.get("kind", "Pod"),
                "name": md.get("name"),
                "namespace": ns,
                "uid": md.get("uid"),
                "resourceVersion": md.get("resourceVersion"),
            },
        }
        if related is not None:
            rmd = related.get("metadata") or {}
            body["related"] = {"apiVersion": related.get("apiVersion", "v1"), "kind": related.get("kind"), "name": rmd.get("name"), "namespace": rmd.get("namespace"), "uid": rmd.get("uid")}
        # a new object each: nothing to order
        self._queue_write(_Write(self.client, "POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", dumps(body), limit="events", decode=False))

    def update_pod_condition(self, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        """Patch the pod's status: ``condition``, and ``nominated_node_name`` unless None ("" clears it)."""
        self._queue_write(_StatusPatch(self.client, pod, condition, nominated_node_name))

    def annotate_pod(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        self._queue_write(_AnnotationPatch(self.client, pod, annotations))

    def flush(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` seconds) until queued events and status writes are sent."""
        deadline = time.monotonic() + timeout
        with self._done:
            while self._writes_pending and (left := deadline - time.monotonic()) > 0:
                self._done.wait(left)

    def stop(self) -> None:
        """End the writer threads (after ``flush``)."""
        with self._work:
            self._closed = True
            self._work.notify_all()
        for t in self._writers:
            t.join(1.0)
