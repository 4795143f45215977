"""Leader election with a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection does.

A candidate acquires the Lease when it is free or its holder has not renewed it for
``lease_duration`` (measured on the candidate's own clock, from when it last saw the record
change, as client-go does). The leader renews every ``retry_period``; if it cannot renew for
``renew_deadline`` it stops leading at once. On a clean shutdown it releases the Lease
(empty holder), so another replica takes over without waiting for the lease to expire.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .cluster.kubernetes import ApiError, Conflict, KubeClient, NotFound
from .cluster.kubernetes.retry import Backoff, retry
from .timefmt import rfc3339

__all__ = ["LeaderElector"]

log = logging.getLogger("kubesched.leaderelection")


class _NotHeld(Exception):
    """The lease could not be taken or renewed: another candidate holds it, or our write lost a
    race (409)."""


def _words(e: Exception) -> str:
    from kubesched.sdk._text import cut

    from .cluster.kubernetes.problems import describe_connection_error

    if isinstance(e, ApiError):
        msg = e.body.get("message") if isinstance(e.body, dict) else e.body
        return f"{e.status}: {cut(msg, 200)}"
    return describe_connection_error(e) or f"{type(e).__name__}: {cut(e, 200)}"


class _Reporter:
    """A failing lease request, logged at the default verbosity when its error changes and
    every ``every``-th failure in a row after that (the elector tries every ``retryPeriod``,
    without backoff); debug otherwise."""

    def __init__(self, what: str, every: int = 30) -> None:
        self.what = what
        self.every = every
        self._last = ""
        self._count = 0

    def __call__(self, e: Exception, delay: float) -> None:
        if isinstance(e, _NotHeld):
            self._last, self._count = "", 0
            return
        words = _words(e)
        self._count = self._count + 1 if words == self._last else 1
        self._last = words
        if self._count % self.every == 1 or self.every == 1:
            log.error("%s: %s (attempt %d failed; retrying every %.1fs)", self.what, words, self._count, delay)
        else:
            log.debug("%s: %s", self.what, words)


class LeaderElector:
    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._observed: dict[str, Any] | None = None
        self._observed_at = 0.0
        self._path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"

    def _get(self) -> dict[str, Any] | None:
        try:
            return self.client.request("GET", f"{self._path}/{self.name}", timeout=self.renew_deadline, limit=False)
        except NotFound:
            return None

    def _spec(self, transitions: int, acquire_time: str | None) -> dict[str, Any]:
        now = rfc3339(micro=True)
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration),
            "acquireTime": acquire_time or now,
            "renewTime": now,
            "leaseTransitions": transitions,
        }

    def try_acquire_or_renew(self) -> bool:
        lease = self._get()
        if lease is None:
            body: dict[str, Any] = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(0, None),
            }
            try:
                self.client.request("POST", self._path, body=body, timeout=self.renew_deadline, limit=False)
            except Conflict:
                return False
            self._observe(body["spec"])
            return True
        spec = lease.get("spec") or {}
        if self._observed is None or spec != self._observed:
            self._observe(dict(spec))
        holder = spec.get("holderIdentity") or ""
        now = time.monotonic()
        if holder and holder != self.identity and now < self._observed_at + float(spec.get("leaseDurationSeconds") or self.lease_duration):
            return False  # held by someone else and not expired
        transitions = int(spec.get("leaseTransitions") or 0)
        acquire = spec.get("acquireTime")
        if holder != self.identity:
            transitions += 1
            acquire = None
        lease["spec"] = self._spec(transitions, acquire)
        try:
            self.client.request("PUT", f"{self._path}/{self.name}", body=lease, timeout=self.renew_deadline, limit=False)
        except Conflict:
            return False
        self._observe(lease["spec"])
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        self._observed = dict(spec)
        self._observed_at = time.monotonic()

    def _acquire_or_renew(self) -> None:
        if not self.try_acquire_or_renew():
            raise _NotHeld((self._observed or {}).get("holderIdentity") or "")

    def _still_ours(self, e: BaseException) -> bool:
        """Whether to try again: not once another candidate holds the lease."""
        return (self._observed or {}).get("holderIdentity") in (self.identity, None, "")

    def run(self, stop: threading.Event, on_started: Callable[[], None], on_stopped: Callable[[], None], metrics: Any = None) -> None:
        """Block until leading (or stop), call ``on_started`` in a thread, renew until the lease
        is lost (call ``on_stopped``) or ``stop`` is set (release the lease)."""
        every = Backoff(self.retry_period, self.retry_period)
        if not stop.is_set():
            try:
                # every ``retry_period`` until acquired; only a stop ends the retries
                what = f"acquiring lease {self.namespace}/{self.name} at {self.client.server}"
                retry(self._acquire_or_renew, every, retry_on=None, wait=stop.wait, on_retry=_Reporter(what))
            except Exception:
                pass
        if stop.is_set():
            if (self._observed or {}).get("holderIdentity") == self.identity:
                self.release()  # stopped right after acquiring: hand the lease back
            return
        log.info("successfully acquired lease %s/%s as %s", self.namespace, self.name, self.identity)
        if metrics is not None:
            metrics.leader.labels(self.name).set(1)
        threading.Thread(target=on_started, name="leading", daemon=True).start()
        # a renewal that fails is logged at once: renewDeadline ends the leadership soon
        renew_problems = _Reporter(f"renewing lease {self.namespace}/{self.name} at {self.client.server}", every=1)
        while not stop.wait(self.retry_period):
            try:
                # as client-go: renew every ``retry_period``, failing attempts included, for at
                # most ``renew_deadline``; stop at once when another candidate holds the lease
                retry(
                    self._acquire_or_renew,
                    every,
                    retry_on=self._still_ours,
                    deadline=time.monotonic() + self.renew_deadline,
                    wait=stop.wait,
                    on_retry=renew_problems,
                )
            except Exception:
                if stop.is_set():
                    break
                log.error("leader election lost: %s/%s", self.namespace, self.name)
                if metrics is not None:
                    metrics.leader.labels(self.name).set(0)
                on_stopped()
                return
        if metrics is not None:
            metrics.leader.labels(self.name).set(0)
        self.release()

    def release(self) -> None:
        try:
            lease = self._get()
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            spec = lease["spec"]
            spec["holderIdentity"] = ""
            spec["leaseDurationSeconds"] = 1
            spec["renewTime"] = rfc3339(micro=True)
            self.client.request("PUT", f"{self._path}/{self.name}", body=lease, timeout=5, limit=False)
            log.info("released lease %s/%s", self.namespace, self.name)
        except Exception as e:
            log.warning("releasing lease: %s", e)
