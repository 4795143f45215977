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
(user+system CPU of the client processes). Object shapes: ``node_body`` and ``pod_body`` in
bench/workloads.py (``--node-shape``/``--zones``, ``--shape``; ``--bind-nodes K`` creates pod ``i``
bound to ``node-<i mod K>``), or ``--file``: one JSON object per line, item ``i`` is line ``i``
(nodes: POST it, then its ``status`` through the status subresource).
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

from workloads import node_body, node_status, pod_body

__all__ = ["Client", "node_body", "node_status", "pod_body", "run"]

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


def _file_lines(a: argparse.Namespace) -> list[bytes]:
    lines = getattr(a, "_lines", None)
    if lines is None:
        lines = [ln for ln in Path(a.file).read_bytes().splitlines() if ln.strip()]
        a._lines = lines
    return lines


def _ops(kind: str, i: int, a: argparse.Namespace) -> list[tuple[str, str, bytes, str, tuple[int, ...]]]:
    """(method, path, body, content type, accepted statuses) for item ``i``."""
    if kind == "nodes":
        if a.file:
            node = json.loads(_file_lines(a)[i])
            name = node["metadata"]["name"]
            st = node.get("status") or {}
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            for c in st.get("conditions") or []:
                c.setdefault("lastHeartbeatTime", now)
                c.setdefault("lastTransitionTime", now)
            create, status = json.dumps(node).encode(), json.dumps({"status": st}).encode()
        else:
            zones = tuple(z for z in a.zones.split(",") if z)
            body = node_body(i, a.node_shape, zones)
            name = body["metadata"]["name"]
            create, status = json.dumps(body).encode(), json.dumps({"status": node_status(a.node_shape)}).encode()
        return [
            ("POST", "/api/v1/nodes", create, "application/json", (201,)),
            ("PATCH", f"/api/v1/nodes/{name}/status", status, "application/merge-patch+json", (200,)),
        ]
    if kind == "pods":
        if a.file:
            line = _file_lines(a)[a.offset + i]
            ns = json.loads(line)["metadata"].get("namespace") or a.namespace
            return [("POST", f"/api/v1/namespaces/{ns}/pods", line, "application/json", (201,))]
        j = a.offset + i
        node = f"node-{j % a.bind_nodes}" if a.bind_nodes else None
        body = json.dumps(pod_body(j, a.namespace, a.scheduler_name, a.shape, node)).encode()
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
    ap.add_argument("--node-shape", default="basic", help="nodes: basic or perf (bench/workloads.py)")
    ap.add_argument("--zones", default="", help="nodes, perf shape: zone label values, round-robin")
    ap.add_argument("--shape", default="basic", help="pods: a shape of bench/workloads.py POD_SHAPES")
    ap.add_argument("--bind-nodes", type=int, default=0, help="pods: create pod i bound to node-(i %% K)")
    ap.add_argument("--file", default="", help="nodes, pods: one JSON object per line instead of a shape")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args(argv)
    print(json.dumps(run(a.kind, a)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
