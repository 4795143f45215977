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

from .cluster.kubernetes import ApiError, KubeClient
from .timefmt import rfc3339

__all__ = ["LeaderElector"]

log = logging.getLogger("kubesched.leaderelection")


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
        self._leading = threading.Event()
        self._path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"

    @property
    def is_leader(self) -> bool:
        return self._leading.is_set()

    def _get(self) -> dict[str, Any] | None:
        try:
            return self.client.request("GET", f"{self._path}/{self.name}", timeout=self.renew_deadline, limit=False)
        except ApiError as e:
            if e.status == 404:
                return None
            raise

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
            except ApiError as e:
                if e.status == 409:
                    return False
                raise
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
        except ApiError as e:
            if e.status == 409:
                return False
            raise
        self._observe(lease["spec"])
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        self._observed = dict(spec)
        self._observed_at = time.monotonic()

    def run(self, stop: threading.Event, on_started: Callable[[], None], on_stopped: Callable[[], None], metrics: Any = None) -> None:
        """Block until leading (or stop), call ``on_started`` in a thread, renew until the lease
        is lost (call ``on_stopped``) or ``stop`` is set (release the lease)."""
        while not stop.is_set():
            try:
                if self.try_acquire_or_renew():
                    break
            except Exception as e:
                log.debug("acquiring lease: %s", e)
            stop.wait(self.retry_period)
        if stop.is_set():
            if (self._observed or {}).get("holderIdentity") == self.identity:
                self.release()  # stopped right after acquiring: hand the lease back
            return
        log.info("successfully acquired lease %s/%s as %s", self.namespace, self.name, self.identity)
        self._leading.set()
        if metrics is not None:
            metrics.leader.labels(self.name).set(1)
        threading.Thread(target=on_started, name="leading", daemon=True).start()
        last_renew = time.monotonic()
        while not stop.is_set():
            stop.wait(self.retry_period)
            if stop.is_set():
                break
            try:
                ok = self.try_acquire_or_renew()
            except Exception as e:
                log.debug("renewing lease: %s", e)
                ok = False
            if ok:
                last_renew = time.monotonic()
            elif time.monotonic() - last_renew > self.renew_deadline or (self._observed or {}).get("holderIdentity") not in (self.identity, None, ""):
                log.error("leader election lost: %s/%s", self.namespace, self.name)
                self._leading.clear()
                if metrics is not None:
                    metrics.leader.labels(self.name).set(0)
                on_stopped()
                return
        self._leading.clear()
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
