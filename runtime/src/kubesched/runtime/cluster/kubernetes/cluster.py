"""``KubernetesCluster``: the Cluster protocol on a real API server, put together from the
client (``api``), discovery, the informers, the plugins' object client and the writers."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.sdk import Pod

from .api import KubeClient
from .discovery import Discovery
from .informers import Informer
from .objects import KubeObjects
from .problems import ServerProblems
from .writers import Writer

__all__ = ["KubernetesCluster"]

log = logging.getLogger("kubesched.kubernetes")


class KubernetesCluster:
    """The Cluster protocol on a real API server."""

    def __init__(
        self,
        client: KubeClient,
        *,
        kinds: Iterable[str] = (),
        reporting_controller: str = "kubesched",
        instance: str | None = None,
        bind_attempts: int = 5,
        writers: int = 4,
    ) -> None:
        self.client = client
        self.discovery = Discovery(client)
        self.resolve = self.discovery.resolve
        self.objects = KubeObjects(self)
        self.informers: dict[str, Informer] = {}
        self._lazy_lock = threading.Lock()
        self._started = False
        self._sink: Callable[[str, str, Any, Any], None] | None = None
        self._no_informer: set[str] = set()
        #: the informers' failures: logged once per kind of error and backoff step
        self.problems = ServerProblems(client)
        want = ["Node", "Pod", *[k for k in kinds if k not in ("Node", "Pod")]]
        for kind in dict.fromkeys(want):
            try:
                gv, plural, _ns = self.resolve("", kind)
            except KeyError:
                log.warning("no API resource found for kind %s; plugins reading it will see nothing", kind)
                continue
            except Exception as e:  # discovery could not reach the server: look it up on first read
                log.warning("cannot look up the API resource of kind %s: %s", kind, self.problems.describe(kind, e)[1])
                continue
            fs = "status.phase!=Succeeded,status.phase!=Failed" if kind == "Pod" else None
            self.informers[kind] = Informer(client, kind, gv, plural, field_selector=fs, problems=self.problems)
        self.writer = Writer(
            client,
            reporting_controller=reporting_controller,
            instance=instance or f"{reporting_controller}-{socket.gethostname()}",
            bind_attempts=bind_attempts,
            writers=writers,
        )

    # lifecycle --------------------------------------------------------------------------------------
    def start_informers(self) -> None:
        self._started = True
        for inf in self.informers.values():
            inf.start()

    def informer_for(self, kind: str, api_version: str = "", wait: float = 30.0) -> Informer | None:
        """The informer of ``kind``; one is started on first use, so every kind a plugin reads
        through ``handle.objects`` is served from a watched cache instead of an API request per
        call. None when the kind cannot be listed (then reads go to the API server)."""
        inf = self.informers.get(kind)
        if inf is not None or not self._started or kind in self._no_informer:
            return inf
        with self._lazy_lock:
            inf = self.informers.get(kind)
            if inf is None:
                try:
                    gv, plural, _ns = self.resolve(api_version, kind)
                except KeyError:
                    self._no_informer.add(kind)
                    return None
                inf = Informer(self.client, kind, gv, plural, problems=self.problems)
                self.informers[kind] = inf
                inf.start()
                log.info("started an informer for %s (read by a plugin)", kind)
                if self._sink is not None:
                    inf.synced.wait(wait)
                    inf.attach(self._sink)
        inf.synced.wait(wait)
        if inf.forbidden:
            self._no_informer.add(kind)
        return inf

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        for inf in self.informers.values():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not inf.synced.wait(left):
                return False
        return True

    def synced(self) -> bool:
        return all(inf.synced.is_set() for inf in self.informers.values())

    def not_synced(self) -> dict[str, str]:
        """{kind: why} of the informers whose caches have not synced: the last list error in
        words, or that the first list has not answered yet."""
        return {
            kind: inf.error or "waiting for the first list"
            for kind, inf in list(self.informers.items())
            if not inf.synced.is_set()
        }

    def not_ready_reason(self) -> str:
        """Why the caches have not synced, one clause per error: ``Node, Pod: cannot reach the
        API server at URL: connection refused`` (empty once synced)."""
        by_error: dict[str, list[str]] = {}
        for kind, why in self.not_synced().items():
            by_error.setdefault(why, []).append(kind)
        return "; ".join(f"{', '.join(kinds)}: {why}" for why, kinds in by_error.items())

    def store_sizes(self) -> dict[str, int]:
        """{kind: objects its informer holds} (the ``kubesched_informer_objects`` gauge)."""
        return {kind: len(inf.store) for kind, inf in list(self.informers.items())}

    def start(self, sink: Callable[[str, str, Any, Any], None]) -> None:
        """Replay the caches to ``sink`` and stream every change (informers must be running)."""
        self._sink = sink
        for kind in ["Node", *[k for k in self.informers if k not in ("Node", "Pod")], "Pod"]:
            inf = self.informers.get(kind)
            if inf is not None:
                inf.attach(sink)

    def stop(self, flush: float = 10.0) -> None:
        for inf in self.informers.values():
            inf.stop()
        self.writer.flush(flush)
        self.writer.stop()

    # writes -----------------------------------------------------------------------------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        self.writer.bind(pod, node_name)

    def event(self, regarding: Mapping[str, Any], event_type: str, reason: str, action: str, note: str, related: Mapping[str, Any] | None = None) -> None:
        self.writer.event(regarding, event_type, reason, action, note, related)

    def update_pod_condition(self, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        self.writer.update_pod_condition(pod, condition, nominated_node_name)

    def annotate_pod(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        self.writer.annotate_pod(pod, annotations)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` seconds) until queued events and status writes are sent."""
        self.writer.flush(timeout)
