"""The parallel admin client of bench/bench.py: creates Nodes and Pods and posts bare Bindings as
fast as the API server takes them.

    python bench/loadgen.py nodes --server 127.0.0.1:PORT --certs DIR --count 500
    python bench/loadgen.py pods  --server ... --certs DIR --count 1000 --namespace bench
    python bench/loadgen.py bind  --server ... --certs DIR --count 1000 --namespace bench --nodes 500
    python bench/loadgen.py bind-event --server ... --certs DIR --count 1000 --namespace bench --nodes 500 --watch

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

``bind-event``: what the API server does for each pod a scheduler places: the Binding, then the
``events.k8s.io/v1`` Event kube-scheduler writes for it (reason ``Scheduled``, action ``Binding``,
note ``Successfully assigned NS/POD to NODE``, ``regarding`` the pod with its uid and
resourceVersion, read by one list before the clock starts); ``rate`` is then pairs per second.
``--watch`` keeps one watch open on all pods during the run, with kube-scheduler's field selector
(``status.phase!=Succeeded,status.phase!=Failed``; JSON, where kube-scheduler asks for protobuf),
read and discarded by a process of its own, as a scheduler's pod informer is fed; the run then
ends when the watch has delivered every bind's event (``watch_events``, ``watch_last``), or
after ``--watch-quiet`` seconds without one.
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
import urllib.parse
from pathlib import Path
from typing import Any

from workloads import node_body, node_status, pod_body

__all__ = ["Client", "event_body", "node_body", "node_status", "pod_body", "run"]

#: kube-scheduler's pod informer: every pod that has not finished (scheduler.go, NewInformerFactory)
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"

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


def event_body(namespace: str, pod: str, uid: str, resource_version: str, node: str, now: float) -> dict[str, Any]:
    """The Event kube-scheduler writes for a pod it bound (events.k8s.io/v1, its event recorder's
    naming: ``POD.<unix nanoseconds in hex>``)."""
    micro = int(now * 1e6) % 1_000_000
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.{int(now * 1e9):x}", "namespace": namespace},
        "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{micro:06d}Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-bench",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "note": f"Successfully assigned {namespace}/{pod} to {node}",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": namespace, "uid": uid, "resourceVersion": resource_version},
    }


def _binding(namespace: str, name: str, node: str) -> bytes:
    return json.dumps({
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }).encode()


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
    if kind in ("bind", "bind-event"):
        name = f"pod-{a.offset + i}"
        node = f"node-{i % a.nodes}"
        ops = [("POST", f"/api/v1/namespaces/{a.namespace}/pods/{name}/binding", _binding(a.namespace, name, node), "application/json", (201,))]
        if kind == "bind-event":
            uid, rv = a.pod_refs.get(name, ("", ""))
            ev = json.dumps(event_body(a.namespace, name, uid, rv, node, time.time())).encode()
            ops.append(("POST", f"/apis/events.k8s.io/v1/namespaces/{a.namespace}/events", ev, "application/json", (201,)))
        return ops
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


def _pod_refs(a: argparse.Namespace) -> dict[str, tuple[str, str]]:
    """name -> (uid, resourceVersion) of the namespace's pods: what an Event's ``regarding`` holds."""
    c = Client(a.server, Path(a.certs))
    refs: dict[str, tuple[str, str]] = {}
    cont = ""
    while True:
        q = urllib.parse.urlencode({"limit": 500, **({"continue": cont} if cont else {})})
        status, data = c.request("GET", f"/api/v1/namespaces/{a.namespace}/pods?{q}")
        if status != 200:
            raise RuntimeError(f"listing pods: {status} {data[:200]!r}")
        d = json.loads(data)
        for p in d.get("items") or []:
            md = p["metadata"]
            refs[md["name"]] = (md.get("uid", ""), md.get("resourceVersion", ""))
        cont = (d.get("metadata") or {}).get("continue") or ""
        if not cont:
            return refs


def _watch_main(a: argparse.Namespace, ready: Any, seen: Any, last: Any) -> None:
    """One watch on all unfinished pods from now on; counts the events it delivers (one JSON
    object per line, read and discarded) into ``seen``, the time of the latest into ``last``."""
    c = Client(a.server, Path(a.certs))
    sel = urllib.parse.quote(POD_FIELD_SELECTOR)
    status, data = c.request("GET", f"/api/v1/pods?limit=1&fieldSelector={sel}")
    if status != 200:
        raise RuntimeError(f"listing pods: {status} {data[:200]!r}")
    rv = json.loads(data)["metadata"]["resourceVersion"]
    conn = http.client.HTTPSConnection(c.host, c.port, context=c.ctx, timeout=a.timeout)
    conn.request("GET", f"/api/v1/pods?watch=1&fieldSelector={sel}&resourceVersion={rv}&timeoutSeconds={int(a.timeout)}", headers={"Accept": "application/json", "User-Agent": "kubesched-bench-loadgen"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"watch: {resp.status} {resp.read()[:200]!r}")
    ready.set()
    while True:
        chunk = resp.read1(1 << 16)
        if not chunk:
            return
        n = chunk.count(b"\n")
        if n:
            now = time.time()
            with seen.get_lock():
                seen.value += n
            last.value = now


def run(kind: str, a: argparse.Namespace) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    if kind == "bind-event":
        a.pod_refs = _pod_refs(a)
    watcher = None
    if getattr(a, "watch", False):
        ready, seen, last = ctx.Event(), ctx.Value("q", 0), ctx.Value("d", 0.0)
        watcher = ctx.Process(target=_watch_main, args=(a, ready, seen, last), daemon=True)
        watcher.start()
        if not ready.wait(60):
            watcher.terminate()
            raise RuntimeError("the pod watch did not start")
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
    requests_per_item = 2 if kind in ("nodes", "bind-event") else 1
    watched: dict[str, Any] = {}
    if watcher is not None:
        # the run ends when the watch has delivered every bind (one MODIFIED event each)
        want, prev, quiet_since = ok // requests_per_item, -1, time.time()
        while seen.value < want and time.time() - quiet_since < a.watch_quiet:
            if seen.value != prev:
                prev, quiet_since = seen.value, time.time()
            time.sleep(0.05)
        watched = {"watch_events": seen.value, "watch_last": last.value}
        end = max(end, last.value)
        watcher.terminate()
        watcher.join(10)
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
        **watched,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=["nodes", "pods", "bind", "bind-event"])
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
    ap.add_argument("--watch", action="store_true", help="keep one watch open on all unfinished pods (as a scheduler's pod informer)")
    ap.add_argument("--watch-quiet", type=float, default=10.0, help="--watch: stop waiting for the bind events after this many seconds without one")
    a = ap.parse_args(argv)
    print(json.dumps(run(a.kind, a)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
