"""Prometheus metrics with kube-scheduler's names and labels, and the health/metrics server."""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

__all__ = ["AddressError", "HealthServer", "Metrics", "parse_address"]

_BUCKETS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384)
_PLUGIN_BUCKETS = (0.00001, 0.000015, 0.0000225, 0.00003375, 0.0000506, 0.0000759, 0.000114, 0.000171, 0.000256, 0.000384, 0.000577, 0.000865, 0.0013, 0.00195, 0.00292, 0.00438, 0.00657, 0.00985, 0.0148, 0.0222)


class _ScrapedGauge:
    """A gauge by one label, read from ``source()`` ({label value: count}) at scrape time:
    ``keys`` are always exported (0 when absent), else the source's keys, sorted."""

    def __init__(self, name: str, doc: str, label: str, source: Callable[[], dict[str, int]], keys: tuple[str, ...] = ()) -> None:
        self.name, self.doc, self.label, self.source, self.keys = name, doc, label, source, keys

    def collect(self) -> Any:
        g = GaugeMetricFamily(self.name, self.doc, labels=[self.label])
        try:
            counts = self.source()
        except Exception:
            counts = {}
        for key in self.keys or sorted(counts):
            g.add_metric([key], float(counts.get(key, 0)))
        yield g


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None, *, plugin_sample_rate: float = 0.1) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts", "Number of attempts to schedule pods, by the result.", ["result", "profile"], registry=r
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds", "Scheduling attempt latency in seconds.", ["result", "profile"], buckets=_BUCKETS, registry=r
        )
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds", "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"], buckets=(0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032, 0.0064, 0.0128, 0.0256, 0.0512, 0.1024, 0.2048), registry=r,
        )
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds", "Duration for running a plugin at a specific extension point (sampled).",
            ["plugin", "extension_point", "status"], buckets=_PLUGIN_BUCKETS, registry=r,
        )
        self.preemption_attempts = Counter("scheduler_preemption_attempts", "Total preemption attempts in the cluster till now", registry=r)
        self.preemption_victims = Histogram("scheduler_preemption_victims", "Number of selected preemption victims", buckets=(1, 2, 4, 8, 16, 32, 64), registry=r)
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.", buckets=(1, 2, 4, 8, 16), registry=r
        )
        self.pod_scheduling_sli = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds", "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue.",
            ["attempts"], buckets=_BUCKETS, registry=r,
        )
        self.queue_incoming = Counter(
            "scheduler_queue_incoming_pods", "Number of pods added to scheduling queues by event and queue type.", ["queue", "event"], registry=r
        )
        self.leader = Gauge("leader_election_master_status", "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.", ["name"], registry=r)
        self.plugin_sample_rate = plugin_sample_rate
        self._clock: Callable[[], float] | None = None
        # labelled children, looked up once (prometheus_client's labels() is costly per call)
        self._children: dict[tuple[Any, ...], Any] = {}

    def _child(self, metric: Any, *labels: str) -> Any:
        key = (id(metric), *labels)
        c = self._children.get(key)
        if c is None:
            c = metric.labels(*labels)
            self._children[key] = c
        return c

    def watch_queue(self, source: Callable[[], dict[str, int]]) -> None:
        """Export ``source()`` ({queue: pending pods}) as ``scheduler_pending_pods``."""
        self.registry.register(_ScrapedGauge(
            "scheduler_pending_pods", "Number of pending pods, by the queue type.", "queue", source,
            keys=("active", "backoff", "unschedulable", "gated"),
        ))

    def watch_stores(self, source: Callable[[], dict[str, int]]) -> None:
        """Export ``source()`` ({kind: objects held}) as ``kubesched_informer_objects``."""
        self.registry.register(_ScrapedGauge(
            "kubesched_informer_objects", "Number of objects in each informer's store, by resource kind.", "resource", source,
        ))

    # called by the scheduler --------------------------------------------------------------------
    def attempt(self, profile: str, result: str, seconds: float) -> None:
        self._child(self.schedule_attempts, result, profile).inc()
        self._child(self.attempt_duration, result, profile).observe(seconds)

    def incoming(self, pod: Any, queue: str, event: str) -> None:
        self._child(self.queue_incoming, queue, event).inc()

    def bound(self, profile: str, qpi: Any) -> None:
        self.pod_scheduling_attempts.observe(qpi.attempts)
        if self._clock is not None and qpi.initial_attempt_timestamp is not None:
            self.pod_scheduling_sli.labels(str(min(qpi.attempts, 15))).observe(max(0.0, self._clock() - qpi.initial_attempt_timestamp))

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        self._child(self.extension_point_duration, point, status, profile).observe(seconds)

    def sample_plugins(self) -> bool:
        return random.random() < self.plugin_sample_rate

    def plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self._child(self.plugin_duration, plugin, point, status).observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class AddressError(ValueError):
    """The health server's address cannot be used: not HOST:PORT, or the bind failed (port in
    use, an address of no local interface). A setup error: ``run`` reports it in one line."""


def parse_address(address: str) -> tuple[str, int]:
    """(host, port) of ``HOST:PORT`` (``[::1]:10251`` for IPv6; an empty host is every
    interface); AddressError when it is not one."""
    from kubesched.sdk._text import quote

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not port.isascii():
        raise AddressError(f"{quote(address)}: expected HOST:PORT, such as 0.0.0.0:10251")
    n = int(port)
    if n > 65535:
        raise AddressError(f"{quote(address)}: port {n} is out of range (0-65535)")
    return host.strip("[]") or "0.0.0.0", n


class _ThreadingHTTPServer6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class HealthServer:
    """``/healthz``, ``/livez``, ``/readyz`` (ready only after the caches synced) and ``/metrics``.

    ``/readyz?verbose`` lists the checks as kube-apiserver does (``[+]informer-sync ok``, or
    ``[-]informer-sync failed: reason: ...`` with ``reason()``'s words); plain ``/readyz`` answers
    ``ok`` or ``caches not synced``. Raises AddressError when ``address`` cannot be served."""

    def __init__(
        self,
        address: str,
        metrics: Metrics | None,
        ready: Callable[[], bool],
        alive: Callable[[], bool] = lambda: True,
        reason: Callable[[], str] | None = None,
    ) -> None:
        import errno

        from kubesched.sdk._text import printable, quote

        self.host, self.port = parse_address(address)
        outer = self

        def readyz(verbose: bool) -> tuple[int, bytes]:
            ok = ready()
            if not verbose:
                return (200, b"ok") if ok else (503, b"caches not synced")
            if ok:
                return 200, b"[+]ping ok\n[+]informer-sync ok\nreadyz check passed\n"
            why = ""
            if reason is not None:
                try:
                    why = reason()
                except Exception as e:  # a check that fails must not take /readyz down
                    why = f"{type(e).__name__}: {e}"
            line = f"[-]informer-sync failed: reason: {printable(why or 'caches not synced')}"
            return 503, f"[+]ping ok\n{line}\nreadyz check failed\n".encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                if path in ("/healthz", "/livez"):
                    ok = alive()
                    self._send(200 if ok else 500, b"ok" if ok else b"unhealthy")
                elif path == "/readyz":
                    verbose = any(p.split("=", 1)[0] == "verbose" and p.split("=", 1)[-1] not in ("0", "false") for p in query.split("&") if p)
                    self._send(*readyz(verbose))
                elif path == "/metrics" and metrics is not None:
                    self._send(200, metrics.exposition(), "text/plain; version=0.0.4; charset=utf-8")
                else:
                    self._send(404, b"not found")

        server_cls = _ThreadingHTTPServer6 if ":" in self.host else ThreadingHTTPServer
        try:
            self.httpd = server_cls((self.host, self.port), Handler)
        except OSError as e:
            if isinstance(e, socket.gaierror):
                why = "the host name does not resolve"
            elif e.errno == errno.EADDRINUSE:
                why = "address already in use (another process listens on this port)"
            else:
                why = printable(e.strerror or e).lower()
            raise AddressError(f"{quote(address)}: {why}") from None
        except OverflowError:  # the port beyond 65535 is caught above; kept for odd hosts
            raise AddressError(f"{quote(address)}: port out of range") from None
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="health", daemon=True)
        outer.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
