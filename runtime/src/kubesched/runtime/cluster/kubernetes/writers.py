"""What the scheduler writes: bindings, events, pod conditions and annotations.

* Binding through the ``pods/binding`` subresource, retried with backoff on 429, 5xx and
  timeouts. A 409 (conflict, "already assigned") is never retried into a second bind: the pod is
  read back, and if it is bound to the node we asked for (an earlier attempt that timed out but
  landed), the bind counts as done; otherwise the conflict is raised.
* ``events.k8s.io/v1`` Events, the ``PodScheduled`` condition / ``nominatedNodeName`` and result
  annotations are queued and sent by a small pool of background writers, so the scheduling loop
  never waits on them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kubesched.sdk import Pod

from ...timefmt import rfc3339
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
#: an event or status write that failed on 429, 5xx or a timeout: 0.5 s, doubling up to 5 s
WRITE_BACKOFF = Backoff(0.5, 5.0, jitter=0.2)


def _not_found(e: BaseException) -> bool:
    return not isinstance(e, NotFound)


def _log_write_retry(e: Exception, delay: float) -> None:
    log.debug("status write failed (retrying in %.1fs): %s", delay, e)


class Writer:
    """Binds pods and sends the queued writes of one cluster."""

    #: How long one event / pod status write is retried through API server errors and outages
    #: before it is dropped (client-go's event sink tries 12 times, 10s apart). Writes are
    #: sent in order by one worker, so the ones behind wait; shutdown waits on them only for
    #: ``flush``'s timeout.
    write_retry_seconds = 120.0

    def __init__(self, client: KubeClient, *, reporting_controller: str, instance: str, bind_attempts: int = 5, writers: int = 4) -> None:
        self.client = client
        self.reporting_controller = reporting_controller
        self.instance = instance
        self.bind_attempts = bind_attempts
        self._writes: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._writes_pending = 0  # queued or being sent (flush waits for 0)
        self._writes_lock = threading.Lock()
        #: events and status writes go through a small pool, off the scheduling loop
        self._writers = [threading.Thread(target=self._write_loop, name=f"status-writer-{i}", daemon=True) for i in range(writers)]
        for t in self._writers:
            t.start()

    # binding ----------------------------------------------------------------------------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        """Raises ObjectConflict (``Conflict``) when the pod is bound elsewhere, ObjectNotFound
        (``NotFound``) when it is gone."""
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"

        def post() -> None:
            try:
                self.client.request("POST", path, body=body, timeout=30)
            except Conflict:
                if not self._bound_to(pod, node_name):
                    raise
                # an earlier attempt landed

        retry(post, BIND_BACKOFF, attempts=self.bind_attempts)

    def _bound_to(self, pod: Pod, node_name: str) -> bool:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        try:
            cur = retry(lambda: self.client.request("GET", path), READ_BACK_BACKOFF, retry_on=_not_found, attempts=READ_BACK_ATTEMPTS)
        except Exception:
            return False  # gone, or still unreadable
        md = cur.get("metadata") or {}
        return bool(md.get("uid") == pod.uid and (cur.get("spec") or {}).get("nodeName") == node_name)

    # queued writes ----------------------------------------------------------------------------------
    def _queue_write(self, fn: Callable[[], None]) -> None:
        with self._writes_lock:
            self._writes_pending += 1
        self._writes.put(fn)

    def _write_loop(self) -> None:
        while True:
            fn = self._writes.get()
            if fn is None:
                return
            try:
                self._write_one(fn)
            finally:
                with self._writes_lock:
                    self._writes_pending -= 1

    def _write_one(self, fn: Callable[[], None]) -> None:
        try:
            retry(fn, WRITE_BACKOFF, deadline=time.monotonic() + self.write_retry_seconds, on_retry=_log_write_retry)
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
        path = f"/apis/events.k8s.io/v1/namespaces/{ns}/events"

        def write() -> None:
            self.client.request("POST", path, body=body, limit="events", decode=False)

        self._queue_write(write)

    def update_pod_condition(self, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        cond = {"lastProbeTime": None, "lastTransitionTime": rfc3339(), **condition}
        status: dict[str, Any] = {"conditions": [cond]}
        if nominated_node_name is not None:
            # "" clears it: null removes the field in a strategic merge patch
            status["nominatedNodeName"] = nominated_node_name or None
        patch = {"metadata": {"uid": pod.uid}, "status": status}
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"

        def write() -> None:
            self.client.request("PATCH", path, body=patch, content_type="application/strategic-merge-patch+json")

        self._queue_write(write)

    def annotate_pod(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        patch = {"metadata": {"annotations": dict(annotations)}}

        def write() -> None:
            self.client.request("PATCH", path, body=patch, content_type="application/merge-patch+json")

        self._queue_write(write)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` seconds) until queued events and status writes are sent."""
        deadline = time.monotonic() + timeout
        while self._writes_pending and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        """End the writer threads (after ``flush``)."""
        for _ in self._writers:
            self._writes.put(None)
        for t in self._writers:
            t.join(1.0)
