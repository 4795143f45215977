"""Pods held at Permit (kube-scheduler's ``waiting_pods_map.go``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from kubesched.sdk import Code, Pod, Status

from ..timefmt import go_duration

__all__ = ["MAX_PERMIT_TIMEOUT", "WaitingPodImpl"]

#: Permit Wait timeouts are capped at 15 minutes, as in kube-scheduler.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class WaitingPodImpl:
    """A pod held at Permit: the plugins still to allow it and a timer per plugin."""

    def __init__(
        self,
        pod: Pod,
        plugin_timeouts: Mapping[str, float],
        now: float,
        on_done: Callable[[WaitingPodImpl, Status], None],
    ) -> None:
        self._pod = pod
        self._lock = threading.Lock()
        self._pending: dict[str, float] = {p: t for p, t in plugin_timeouts.items()}
        self.deadlines: dict[str, float] = {p: now + t for p, t in plugin_timeouts.items()}
        self._on_done = on_done
        self.done = False
        self.status: Status | None = None

    @property
    def pod(self) -> Pod:
        return self._pod

    def pending_plugins(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def allow(self, plugin: str) -> None:
        with self._lock:
            if self.done:
                return
            self._pending.pop(plugin, None)
            if self._pending:
                return
            self.done = True
            self.status = Status()
        self._on_done(self, self.status)

    def reject(self, plugin: str, message: str) -> None:
        with self._lock:
            if self.done:
                return
            self.done = True
            self.status = Status(Code.UNSCHEDULABLE, message, plugin=plugin)
        self._on_done(self, self.status)

    def preempt(self, plugin: str, message: str) -> bool:
        """Stop waiting with an Error (kube-scheduler 1.36's ``waitingPod.Preempt``): unlike
        :meth:`reject` the pod is not marked unschedulable; its binding cycle fails and it goes
        back to the queue through backoff. False when the pod was no longer waiting."""
        with self._lock:
            if self.done:
                return False
            self.done = True
            self.status = Status(Code.ERROR, message, plugin=plugin)
        self._on_done(self, self.status)
        return True

    def timeout(self, plugin: str) -> None:
        with self._lock:
            wait = self._pending.get(plugin)
        if wait is None:
            return
        self.reject(plugin, f"rejected due to timeout after waiting {go_duration(wait)} at plugin {plugin}")
