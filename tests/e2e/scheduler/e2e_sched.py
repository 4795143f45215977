"""Helpers for the kubesched e2e tests: the ``kubesched run`` subprocess, configs, nodes in
per-test groups, waits on binding, events and metrics.

Nodes are cluster-scoped and shared by every test of the session, so each test creates its own
nodes with a unique ``GROUP_LABEL`` value and its pods select them with a nodeSelector.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from controlplane import free_port
from helpers import make_node, make_pod, wait_for
from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

GROUP_LABEL = "e2e.kubesched.io/group"
API_VERSION = "kubescheduler.config.k8s.io/v1"

#: What ``kubesched run`` writes as events.k8s.io/v1 ``reportingController``.
KUBESCHED_CONTROLLER = "kubesched"

#: ``python -c`` body equivalent to the ``kubesched`` console script (kubesched.runtime.cli:main),
#: run with the interpreter running the tests (no PATH or pyenv-shim lookup).
_MAIN = "import sys; from kubesched.runtime.cli import main; sys.argv[0] = 'kubesched'; main()"


# ---------------------------------------------------------------------------------------------
# configuration


def scheduler_config(
    profiles: Sequence[Mapping[str, Any]],
    *,
    leader_election: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A KubeSchedulerConfiguration (v1). Leader election is off unless ``leader_election``
    is given (kubesched, like kube-scheduler, defaults ``leaderElect`` to true)."""
    cfg: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": dict(leader_election) if leader_election else {"leaderElect": False},
        "profiles": [dict(p) for p in profiles],
    }
    cfg.update(extra)
    return cfg


def priority_label_profile(scheduler_name: str) -> dict[str, Any]:
    """The walk-through profile: PriorityLabel is the only filter/score plugin."""
    return {
        "schedulerName": scheduler_name,
        "plugins": {
            "multiPoint": {"enabled": [{"name": "PriorityLabel"}], "disabled": [{"name": "*"}]},
            "queueSort": {"enabled": [{"name": "PrioritySort"}]},
            "bind": {"enabled": [{"name": "DefaultBinder"}]},
        },
    }


# ---------------------------------------------------------------------------------------------
# the kubesched process


@dataclass
class Kubesched:
    """One ``kubesched run`` subprocess."""

    proc: subprocess.Popen[bytes]
    address: str
    log_path: Path
    config_path: Path
    identity: str | None = None
    #: the exit code teardown expects after SIGTERM; None: do not check (the test killed it)
    expected_exit: int | None = 0
    _log: Any = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def get(self, path: str, timeout: float = 5.0) -> tuple[int, str]:
        """(HTTP status, body) of a GET on the health/metrics server; raises OSError when it
        does not answer."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")

    def status_of(self, path: str) -> int | None:
        try:
            return self.get(path)[0]
        except OSError:
            return None

    def ready(self) -> bool:
        return self.status_of("/readyz") == 200

    def wait_ready(self, timeout: float = 60.0) -> None:
        def check() -> bool:
            if not self.alive():
                raise AssertionError(
                    f"kubesched exited with {self.proc.returncode} before it was ready:\n"
                    f"{self.log_tail()}"
                )
            return self.ready()

        deadline = time.monotonic() + timeout
        while True:
            if check():
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"kubesched /readyz not 200 after {timeout}s:\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def metrics(self) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        """Every sample of ``/metrics``: (name, labels) -> value."""
        status, body = self.get("/metrics")
        assert status == 200, f"/metrics answered {status}"
        out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
        for fam in text_string_to_metric_families(body):
            for s in fam.samples:
                out[(s.name, frozenset(s.labels.items()))] = s.value
        return out

    def metric(self, metric_name: str, /, **labels: str) -> float | None:
        """The value of the sample ``name`` with exactly ``labels`` (None when absent)."""
        return self.metrics().get((metric_name, frozenset(labels.items())))

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM and wait; returns the exit code (SIGKILL after ``timeout``)."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(
                f"kubesched did not exit within {timeout}s of SIGTERM:\n{self.log_tail()}"
            ) from None

    def kill(self) -> None:
        """SIGKILL (a crash): teardown no longer checks the exit code."""
        self.expected_exit = None
        if self.alive():
            self.proc.kill()
        self.proc.wait(10)

    def close(self) -> None:
        if self._log is not None:
            with contextlib.suppress(Exception):
                self._log.close()


def start_kubesched(
    config: Mapping[str, Any] | str,
    workdir: Path,
    kubeconfig: str | os.PathLike[str],
    *,
    identity: str | None = None,
    verbosity: int = 4,
    name: str = "kubesched",
    extra_args: Sequence[str] = (),
) -> Kubesched:
    """Write ``config`` to ``workdir`` and start ``kubesched run`` on a free port."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_path = workdir / f"{name}-config.yaml"
    text = config if isinstance(config, str) else yaml.safe_dump(dict(config), sort_keys=False)
    config_path.write_text(text)
    log_path = workdir / f"{name}.log"
    address = f"127.0.0.1:{free_port()}"
    args = [
        sys.executable,
        "-c",
        _MAIN,
        "run",
        "--config",
        str(config_path),
        "--kubeconfig",
        str(kubeconfig),
        "--address",
        address,
        "-v",
        str(verbosity),
    ]
    if identity:
        args += ["--identity", identity]
    args += list(extra_args)
    log = open(log_path, "ab")
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    return Kubesched(proc, address, log_path, config_path, identity=identity, _log=log)


# ---------------------------------------------------------------------------------------------
# nodes and pods


def make_group_nodes(
    api: Any,
    group: str,
    count: int,
    *,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
) -> list[str]:
    """``count`` fresh nodes labelled ``GROUP_LABEL=group``; returns their names."""
    names = [f"{group}-n{i:02d}" for i in range(count)]
    for n in names:
        make_node(
            api, n, cpu=cpu, memory=memory, pods=pods, labels={GROUP_LABEL: group, **(labels or {})}
        )
    return names


def make_pods(
    api: Any,
    names: Iterable[str],
    namespace: str,
    *,
    workers: int = 8,
    **kwargs: Any,
) -> list[str]:
    """Create pods in parallel (``make_pod`` keyword arguments); returns the names."""
    names = list(names)
    with ThreadPoolExecutor(max_workers=workers) as ex:
        list(ex.map(lambda n: make_pod(api, n, namespace, **kwargs), names))
    return names


def create_pod_retrying(
    api: Any, name: str, namespace: str, timeout: float = 120.0, **kwargs: Any
) -> None:
    """``make_pod`` that survives an API server outage: retried on connection errors and 5xx;
    a 409 AlreadyExists after a retry means an earlier attempt landed."""
    deadline = time.monotonic() + timeout
    attempt = 0
    while True:
        attempt += 1
        try:
            make_pod(api, name, namespace, **kwargs)
            return
        except client.ApiException as e:
            if e.status == 409 and attempt > 1:
                return
            if e.status is not None and e.status < 500 and e.status != 429:
                raise
        except Exception:  # connection refused / reset while the API server is down
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"could not create pod {namespace}/{name} within {timeout}s")
        time.sleep(0.2)


def list_pods(api: Any, namespace: str) -> dict[str, Any]:
    return {p.metadata.name: p for p in api.list_namespaced_pod(namespace).items}


def wait_bound(
    api: Any, namespace: str, names: Iterable[str], timeout: float = 60.0
) -> dict[str, str]:
    """Wait until every pod in ``names`` has spec.nodeName; returns name -> node."""
    want = set(names)

    def all_bound() -> dict[str, str] | None:
        pods = list_pods(api, namespace)
        bound = {n: pods[n].spec.node_name for n in want if n in pods and pods[n].spec.node_name}
        return bound if len(bound) == len(want) else None

    try:
        return wait_for(
            all_bound, timeout=timeout, message=f"{len(want)} pods in {namespace} to be bound"
        )
    except TimeoutError:
        pods = list_pods(api, namespace)
        unbound = sorted(n for n in want if not (n in pods and pods[n].spec.node_name))
        raise TimeoutError(
            f"{len(unbound)} of {len(want)} pods still unbound after {timeout}s: {unbound[:10]}"
        ) from None


def pod_condition(pod: Any, ctype: str = "PodScheduled") -> Any:
    for c in pod.status.conditions or []:
        if c.type == ctype:
            return c
    return None


def assert_within_allocatable(api: Any, nodes: Iterable[str]) -> dict[str, int]:
    """Sum the cpu (millicores), memory and pod count of the pods bound to each node and check
    it against the node's allocatable. Returns node -> pod count."""
    from kubesched.sdk.quantity import milli_value, value

    counts: dict[str, int] = {}
    all_pods = api.list_pod_for_all_namespaces().items
    for n in nodes:
        node = api.read_node(n)
        alloc = node.status.allocatable
        on = [p for p in all_pods if p.spec.node_name == n]
        cpu = mem = 0
        for p in on:
            for c in p.spec.containers:
                req = (c.resources.requests or {}) if c.resources else {}
                cpu += milli_value(req.get("cpu", "0"))
                mem += value(req.get("memory", "0"))
        assert cpu <= milli_value(alloc["cpu"]), (
            f"{n}: {cpu}m cpu requested > allocatable {alloc['cpu']}"
        )
        assert mem <= value(alloc["memory"]), (
            f"{n}: {mem} memory requested > allocatable {alloc['memory']}"
        )
        assert len(on) <= int(alloc["pods"]), f"{n}: {len(on)} pods > allocatable {alloc['pods']}"
        counts[n] = len(on)
    return counts


# ---------------------------------------------------------------------------------------------
# events


def events_by_pod(
    events_v1: client.EventsV1Api, namespace: str, reason: str | None = None
) -> dict[str, list[Any]]:
    """events.k8s.io/v1 Events of the namespace's pods, by pod name (optionally one reason)."""
    out: dict[str, list[Any]] = defaultdict(list)
    for e in events_v1.list_namespaced_event(namespace).items:
        if e.regarding is None or e.regarding.kind != "Pod":
            continue
        if reason is not None and e.reason != reason:
            continue
        out[str(e.regarding.name)].append(e)
    return dict(out)


def wait_event(
    events_v1: client.EventsV1Api,
    namespace: str,
    pod: str,
    reason: str,
    predicate: Callable[[Any], bool] = lambda e: True,
    timeout: float = 60.0,
) -> Any:
    def find() -> Any:
        for e in events_by_pod(events_v1, namespace, reason).get(pod, []):
            if predicate(e):
                return e
        return None

    return wait_for(find, timeout=timeout, message=f"a {reason} event of {namespace}/{pod}")


def wait_scheduled_events(
    events_v1: client.EventsV1Api, namespace: str, names: Iterable[str], timeout: float = 60.0
) -> dict[str, list[Any]]:
    """Wait until every pod in ``names`` has at least one Scheduled event (events are written
    asynchronously after the binding); returns name -> its Scheduled events."""
    want = set(names)

    def all_have() -> dict[str, list[Any]] | None:
        evs = events_by_pod(events_v1, namespace, "Scheduled")
        return evs if want <= set(evs) else None

    try:
        return wait_for(all_have, timeout=timeout, message="Scheduled events")
    except TimeoutError:
        evs = events_by_pod(events_v1, namespace, "Scheduled")
        missing = sorted(want - set(evs))
        raise TimeoutError(
            f"{len(missing)} pods have no Scheduled event after {timeout}s: {missing[:10]}"
        ) from None


# ---------------------------------------------------------------------------------------------
# a TCP forwarder that can hold connections (the API server "not reachable yet")


class HoldingProxy:
    """Listens on 127.0.0.1:<port>; while ``held``, accepted connections are closed at once
    (the client sees the API server as unreachable); once :meth:`release` is called, each new
    connection is forwarded byte for byte (TLS passes through) to ``target``."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held = True
        self.refused = 0
        self._closed = False
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept, name="holding-proxy", daemon=True).start()

    def release(self) -> None:
        self.held = False

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.held:
                self.refused += 1
                with contextlib.suppress(OSError):
                    conn.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                conn.close()
                continue
            upstream.settimeout(None)
            self._conns += [conn, upstream]
            threading.Thread(target=self._pipe, args=(conn, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, conn), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self.sock.close()
        for c in self._conns:
            with contextlib.suppress(OSError):
                c.close()


class PodWatchThread:
    """Lists, then watches, the pods of a namespace from a background thread (from the list's
    resourceVersion; relisting on 410 Gone or any error) and hands each listed pod (as ADDED)
    and each change to :meth:`on_pod` with the event type and the V1Pod. A context manager:
    entering waits for the first list."""

    thread_name = "pod-watch"

    def __init__(self, core_v1: client.CoreV1Api, namespace: str) -> None:
        self.core_v1 = core_v1
        self.namespace = namespace
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listed = threading.Event()
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)

    def __enter__(self) -> Any:
        self._thread.start()
        if not self._listed.wait(30):
            raise TimeoutError(f"could not list the pods of {self.namespace}: {self.errors}")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def on_pod(self, etype: str, pod: Any) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        from kubernetes import watch

        rv: str | None = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    lst: Any = self.core_v1.list_namespaced_pod(self.namespace)
                    for p in lst.items:
                        self.on_pod("ADDED", p)
                    rv = lst.metadata.resource_version
                    self._listed.set()
                w = watch.Watch()
                for ev in w.stream(
                    self.core_v1.list_namespaced_pod,
                    self.namespace,
                    resource_version=rv,
                    timeout_seconds=2,
                    allow_watch_bookmarks=True,
                    _request_timeout=10,
                ):
                    if ev.get("type") == "ERROR":
                        rv = None  # 410 Gone: relist
                        break
                    obj = ev["object"]
                    rv = obj.metadata.resource_version or rv
                    if ev["type"] != "BOOKMARK":
                        self.on_pod(ev["type"], obj)
                    if self._stop.is_set():
                        w.stop()
                        break
            except Exception as e:  # keep watching; a relist catches up
                self.errors.append(repr(e))
                rv = None
                self._stop.wait(0.2)
