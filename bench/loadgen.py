"""The parallel admin client of bench/bench.py: creates Nodes and Pods and posts bare Bindings as
fast as the API server takes them.

    python bench/loadgen.py nodes --server 127.0.0.1:PORT --certs DIR --count 500
    python bench/loadgen.py pods  --server ... --certs DIR --count 1000 --namespace bench
    python bench/loadgen.py bind  --server ... --certs DIR --count 1000 --namespace bench --nodes 500

Standard library only: ``http.client`` over TLS with the admin client certificate, one keep-alive
connection per thread, ``--procs`` processes × ``--threads`` threads so that neither the GIL nor a
client-side rate limiter is the limit (there is no client-side QPS limit at all). Connections are
opened (TLS handshake and a warm-up GET) before the clock starts; all processes start together.

Prints one JSON object on stdout: ``start``/``end`` (``time.time()`` of the first request and of
the last response), ``ok``, ``errors``, ``retries``, ``rate`` (ok / (end - start)) and ``cpu_s``
(user+system CPU of the client processes). Object shapes: see ``node_body`` and ``pod_body``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import resource
import ssl
import sys
import threading
import time
from pathlib import Path
from typing import Any

ZONES = 3


def node_body(i: int) -> dict[str, Any]:
    """A Node as scheduler_perf's node-default.yaml, plus zone/hostname labels: 4 CPU, 16Gi,
    110 pods, spread over 3 zones."""
    name = f"node-{i}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": f"zone-{i % ZONES}",
            },
        },
        "spec": {},
        "status": node_status(),
    }


def node_status() -> dict[str, Any]:
    res = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "capacity": dict(res),
        "allocatable": dict(res),
        "phase": "Running",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
        ],
    }


def pod_body(i: int, namespace: str, scheduler_name: str = "default-scheduler") -> dict[str, Any]:
    """scheduler_perf's SchedulingBasic pod (config/templates/pod-default.yaml): one pause
    container requesting 100m CPU and 128Mi (limits equal)."""
    res = {"cpu": "100m", "memory": "128Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": namespace},
        "spec": {
            "schedulerName": scheduler_name,
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "ports": [{"containerPort": 80}],
                    "resources": {"requests": dict(res), "limits": dict(res)},
                }
            ],
        },
    }


class Client:
    """One keep-alive HTTPS connection; retries 429/5xx and broken connections."""

    def __init__(self, server: str, certs: Path) -> None:
        self.host, port = server.rsplit(":", 1)
        self.port = int(port)
        ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        ctx.load_cert_chain(str(certs / "admin.crt"), str(certs / "admin.key"))
        self.ctx = ctx
        self.conn: http.client.HTTPSConnection | None = None
        self.retries = 0

    def request(self, method: str, path: str, body: bytes | None = None, ctype: str = "application/json") -> tuple[int, bytes]:
        headers = {"Accept": "application/json", "User-Agent": "kubesched-bench-loadgen"}
        if body is not None:
            headers["Content-Type"] = ctype
        delay = 0.02
        for attempt in range(10):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=120)
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                if (r.status == 429 or r.status >= 500) and attempt < 9:
                    self.retries += 1
                    time.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                return r.status, data
            except (OSError, http.client.HTTPException):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == 9:
                    raise
                self.retries += 1
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
        raise RuntimeError("unreachable")


def _ops(kind: str, i: int, a: argparse.Namespace) -> list[tuple[str, str, bytes, str, tuple[int, ...]]]:
    """(method, path, body, content type, accepted statuses) for item ``i``."""
    if kind == "nodes":
        name = f"node-{i}"
        status = json.dumps({"status": node_status()}).encode()
        return [
            ("POST", "/api/v1/nodes", json.dumps(node_body(i)).encode(), "application/json", (201,)),
            ("PATCH", f"/api/v1/nodes/{name}/status", status, "application/merge-patch+json", (200,)),
        ]
    if kind == "pods":
        body = json.dumps(pod_body(a.offset + i, a.namespace, a.scheduler_name)).encode()
        return [("POST", f"/api/v1/namespaces/{a.namespace}/pods", body, "application/json", (201,))]
    if kind == "bind":
        name = f"pod-{a.offset + i}"
        body = json.dumps({
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": a.namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": f"node-{i % a.nodes}"},
        }).encode()
        return [("POST", f"/api/v1/namespaces/{a.namespace}/pods/{name}/binding", body, "application/json", (201,))]
    raise ValueError(kind)


def _proc_main(kind: str, a: argparse.Namespace, proc_index: int, barrier: Any, out: Any) -> None:
    workers = a.procs * a.threads
    clients = [Client(a.server, Path(a.certs)) for _ in range(a.threads)]
    for c in clients:  # TLS handshake + warm-up before the clock starts
        c.request("GET", "/version")
    results = [{"ok": 0, "errors": 0, "first_error": "", "end": 0.0} for _ in range(a.threads)]
    start_evt = threading.Event()

    def work(t: int) -> None:
        w = proc_index * a.threads + t
        c = clients[t]
        r = results[t]
        start_evt.wait()
        for i in range(w, a.count, workers):
            for method, path, body, ctype, okc in _ops(kind, i, a):
                try:
                    status, data = c.request(method, path, body, ctype)
                except Exception as e:
                    status, data = -1, str(e).encode()
                if status in okc:
                    r["ok"] += 1
                else:
                    r["errors"] += 1
                    if not r["first_error"]:
                        r["first_error"] = f"{method} {path}: {status} {data[:200]!r}"
        r["end"] = time.time()

    threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(a.threads)]
    for th in threads:
        th.start()
    barrier.wait()
    start = time.time()
    start_evt.set()
    for th in threads:
        th.join()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out.put({
        "start": start,
        "end": max(r["end"] for r in results),
        "ok": sum(r["ok"] for r in results),
        "errors": sum(r["errors"] for r in results),
        "first_error": next((r["first_error"] for r in results if r["first_error"]), ""),
        "retries": sum(c.retries for c in clients),
        "cpu_s": ru.ru_utime + ru.ru_stime,
    })


def run(kind: str, a: argparse.Namespace) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(a.procs)
    out = ctx.Queue()
    procs = [ctx.Process(target=_proc_main, args=(kind, a, p, barrier, out), daemon=True) for p in range(a.procs)]
    for p in procs:
        p.start()
    parts = [out.get(timeout=a.timeout) for _ in procs]
    for p in procs:
        p.join(10)
    start = min(p["start"] for p in parts)
    end = max(p["end"] for p in parts)
    ok = sum(p["ok"] for p in parts)
    requests_per_item = 2 if kind == "nodes" else 1
    return {
        "kind": kind,
        "count": a.count,
        "procs": a.procs,
        "threads": a.threads,
        "start": start,
        "end": end,
        "seconds": end - start,
        "ok": ok,
        "errors": sum(p["errors"] for p in parts),
        "first_error": next((p["first_error"] for p in parts if p["first_error"]), ""),
        "retries": sum(p["retries"] for p in parts),
        "requests_per_item": requests_per_item,
        "rate": (ok / requests_per_item) / (end - start) if end > start else 0.0,
        "requests_per_s": ok / (end - start) if end > start else 0.0,
        "cpu_s": sum(p["cpu_s"] for p in parts),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=["nodes", "pods", "bind"])
    ap.add_argument("--server", required=True, help="host:port of kube-apiserver")
    ap.add_argument("--certs", required=True, help="directory with ca.crt, admin.crt, admin.key")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--offset", type=int, default=0, help="first pod index (pods, bind)")
    ap.add_argument("--namespace", default="bench")
    ap.add_argument("--scheduler-name", default="default-scheduler")
    ap.add_argument("--nodes", type=int, default=1, help="bind: pods go to node-(i %% nodes)")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args(argv)
    print(json.dumps(run(a.kind, a)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
