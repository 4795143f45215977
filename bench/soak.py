"""Soak: ``kubesched run`` on a real control plane for half an hour or more while pods are
created and deleted in waves and nodes come and go; is its memory flat, is every pod bound once?

    python bench/soak.py                                   # >= 30 min and >= 200,000 pods
    python bench/soak.py --min-minutes 3 --min-pods 0      # a short trial: the rate, the sizes
    python bench/soak.py --tracemalloc 300                 # kubesched under tracemalloc: what grows

One fresh control plane (etcd + kube-apiserver, bench.py's ``Run``) with ``--nodes`` Nodes
(bench.py's SchedulingBasic node), then ``kubesched run`` (the console script next to this
Python, default profile, qps 5000) as its own process. Then waves, until both ``--min-minutes``
have passed and ``--min-pods`` pods were created (or ``--max-minutes``):

1. create N pods (N drawn from ``--wave`` MIN,MAX; requests vary per pod, some with a preferred
   zone affinity or a ScheduleAnyway zone spread) from ``--threads`` keep-alive clients;
2. wait until the watch has seen every one bound (``--wave-timeout`` without progress ends the
   soak: something is stuck);
3. delete them (``gracePeriodSeconds=0``; there is no kubelet, so they go at once) and wait for
   the watch to see them go;
4. every ``--churn-every`` waves, delete the ``--churn`` oldest nodes (empty now) and add as
   many new ones.

Every ``--interval`` s (10) a sampler reads kubesched's RSS (``VmRSS``), threads and open file
descriptors from ``/proc/<pid>``, and from its ``/metrics`` the informer store sizes
(``kubesched_informer_objects{resource}``), ``scheduler_pending_pods{queue}`` and
``scheduler_schedule_attempts{result}``.

A separate watch on the namespace's pods (resourceVersion kept from event to event and from
bookmarks; relists on 410 Gone) records per pod UID every change of ``spec.nodeName`` from empty
to set. At the end: pods bound exactly once == pods created, none bound twice, none left
pending, none never seen; bind conflicts (409) are counted from kubesched's log.

Flatness: the samples after the warm-up (``--warmup-minutes``, default 5) have a level (their
median); RSS, threads and descriptors are flat when every such sample is within ``--tolerance``
(10 %) of it.

Writes ``bench/results/soak/<date>-<short sha>.json`` (samples and summary), ``.md`` (figures,
command, machine, verdict) and ``.svg`` (RSS, threads, descriptors and pods in the informer's
store over time).
"""

# ruff: noqa: RUF001  (the report uses the multiplication sign and the en dash)
from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from loadgen import Client  # noqa: E402
from workloads import node_body, node_name, node_status  # noqa: E402

import bench  # noqa: E402

NAMESPACE = bench.NAMESPACE
FLAT_KEYS = ("rss_mib", "threads", "fds")
log = bench.log


# ------------------------------------------------------------------------------------------------
# pure parts: /proc and /metrics parsing, the ledger, flatness, the plot


def parse_status(text: str) -> dict[str, int]:
    """``/proc/<pid>/status`` -> {"rss_kib": VmRSS in kB, "threads": Threads}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, val = line.partition(":")
        if key == "VmRSS":
            out["rss_kib"] = int(val.split()[0])
        elif key == "Threads":
            out["threads"] = int(val.strip())
    return out


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text: str, names: Iterable[str]) -> dict[str, dict[str, float]]:
    """The samples of the metric families ``names`` in a Prometheus text exposition:
    {name: {"label=value,...": value}} (labels in exposition order; "" for none)."""
    wanted = set(names)
    out: dict[str, dict[str, float]] = {n: {} for n in wanted}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None or m.group(1) not in wanted:
            continue
        labels = ",".join(f"{k}={v}" for k, v in _LABEL.findall(m.group(2) or ""))
        try:
            out[m.group(1)][labels] = float(m.group(3))
        except ValueError:
            continue
    return out


class Ledger:
    """Per pod UID, what one watch saw: its name, how many times ``spec.nodeName`` went from
    empty to set, whether it was deleted. ``created`` holds the UIDs the API server returned for
    our POSTs. Thread-safe; ``apply`` is the only writer of the watch side."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.created: dict[str, str] = {}  # uid -> name
        self.node: dict[str, str] = {}  # uid -> last nodeName seen ("" while pending)
        self.binds: dict[str, int] = {}  # uid -> empty->set transitions
        self.deleted: set[str] = set()
        self.events = 0
        self.relists = -1  # the first list is not a relist
        self.bound_total = 0
        self.deleted_total = 0

    def record_created(self, uid: str, name: str) -> None:
        with self.lock:
            self.created[uid] = name

    def apply(self, kind: str, obj: dict[str, Any]) -> None:
        """One watch event (ADDED, MODIFIED, DELETED) or a listed item (kind "LISTED")."""
        md = obj.get("metadata") or {}
        uid = md.get("uid")
        if not uid:
            return
        node = (obj.get("spec") or {}).get("nodeName") or ""
        with self.lock:
            self.events += 1
            before = self.node.get(uid)
            if uid in self.deleted:
                return
            if node and not before:
                self.binds[uid] = self.binds.get(uid, 0) + 1
                self.bound_total += 1
            self.node[uid] = node
            if kind == "DELETED":
                self.deleted.add(uid)
                self.deleted_total += 1

    def relisted(self, uids: set[str]) -> None:
        """After a relist: the pods known and not listed were deleted while we were away."""
        with self.lock:
            self.relists += 1
            for uid in list(self.node):
                if uid not in uids and uid not in self.deleted:
                    self.deleted.add(uid)
                    self.deleted_total += 1

    def count(self, uids: Iterable[str], what: str) -> int:
        with self.lock:
            if what == "bound":
                return sum(1 for u in uids if self.binds.get(u))
            return sum(1 for u in uids if u in self.deleted)

    def summary(self) -> dict[str, Any]:
        with self.lock:
            created = set(self.created)
            seen = created & set(self.node)
            once = sum(1 for u in created if self.binds.get(u) == 1)
            twice = sorted(self.created[u] for u in created if self.binds.get(u, 0) >= 2)
            pending = sorted(self.created[u] for u in seen if not self.binds.get(u))
            never = sorted(self.created[u] for u in created - seen)
            foreign = len(set(self.node) - created)
            return {
                "created": len(created),
                "seen": len(seen),
                "bound_once": once,
                "bound_twice": len(twice),
                "bound_twice_names": twice[:20],
                "never_bound": len(pending),
                "never_bound_names": pending[:20],
                "never_seen": len(never),
                "never_seen_names": never[:20],
                "not_ours": foreign,
                "deleted_seen": len(self.deleted & created),
                "watch_events": self.events,
                "relists": max(0, self.relists),
                "exactly_once": once == len(created) and not twice and not pending and not never,
            }


def flatness(samples: Sequence[dict[str, Any]], key: str, warmup_s: float, tolerance: float = 0.10) -> dict[str, Any]:
    """The level of ``key`` after the warm-up (median of the samples with ``t >= warmup_s``) and
    how far any of those samples strays from it: flat when every one is within ``tolerance``."""
    vals = [s[key] for s in samples if s["t"] >= warmup_s and s.get(key) is not None]
    if not vals:
        return {"key": key, "samples": 0, "flat": False}
    level = statistics.median(vals)
    lo, hi = min(vals), max(vals)
    dev = max(abs(hi - level), abs(level - lo)) / level if level else 0.0
    first = vals[: max(1, len(vals) // 10)]
    last = vals[-max(1, len(vals) // 10):]
    return {
        "key": key,
        "samples": len(vals),
        "level": level,
        "min": lo,
        "max": hi,
        "min_ratio": lo / level if level else 0.0,
        "max_ratio": hi / level if level else 0.0,
        "max_deviation": dev,
        "first_tenth_median": statistics.median(first),
        "last_tenth_median": statistics.median(last),
        "flat": dev <= tolerance + 1e-12,
    }


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = int(lo / step) * step
    out = []
    v = start
    while v <= hi + 1e-9:
        if v >= lo - 1e-9:
            out.append(round(v, 6))
        v += step
    return out


def svg_plot(samples: Sequence[dict[str, Any]], warmup_s: float, tolerance: float = 0.10, title: str = "") -> str:
    """A hand-written SVG: one panel per series (RSS MiB, threads, open fds, pods in the
    informer's store) over minutes; the warm-up shaded, and for the first three the level after
    it with the ±tolerance band."""
    series = [
        ("rss_mib", "RSS (MiB)", "#1f77b4", True),
        ("threads", "threads", "#ff7f0e", True),
        ("fds", "open file descriptors", "#2ca02c", True),
        ("pods_in_store", "pods in the informer's store", "#9467bd", False),
    ]
    width, left, right, panel_h, gap, top = 900, 70, 20, 150, 40, 40
    plot_w = width - left - right
    height = top + len(series) * (panel_h + gap) + 10
    ts = [s["t"] for s in samples] or [0.0]
    t_max = max(ts[-1], 1.0)

    def x(t: float) -> float:
        return left + plot_w * t / t_max

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="14" font-weight="bold">{_esc(title)}</text>',
    ]
    for i, (key, label, color, banded) in enumerate(series):
        y0 = top + i * (panel_h + gap)
        pts = [(s["t"], s[key]) for s in samples if s.get(key) is not None]
        vals = [v for _, v in pts]
        fl = flatness(samples, key, warmup_s, tolerance) if banded else None
        # every axis starts at 0, so that a flat line looks flat and a ±10 % band looks its size
        lo = 0.0
        hi = max([*vals, *([fl["level"] * (1 + tolerance)] if fl and fl.get("level") else [])], default=1.0)
        hi = (hi or 1.0) * 1.05

        def y(v: float, y0: float = y0, lo: float = lo, hi: float = hi) -> float:
            return y0 + panel_h - panel_h * (v - lo) / (hi - lo)

        out.append(f'<text x="{left}" y="{y0 - 6}" font-weight="bold">{_esc(label)}</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{panel_h}" fill="none" stroke="#999"/>')
        if warmup_s > 0:
            out.append(f'<rect x="{left}" y="{y0}" width="{x(min(warmup_s, t_max)) - left:.1f}" height="{panel_h}" fill="#eee"/>')
            out.append(f'<text x="{left + 4}" y="{y0 + 12}" fill="#666">warm-up</text>')
        for tv in _ticks(lo, hi):
            out.append(f'<line x1="{left - 4}" x2="{left}" y1="{y(tv):.1f}" y2="{y(tv):.1f}" stroke="#999"/>')
            out.append(f'<text x="{left - 6}" y="{y(tv) + 4:.1f}" text-anchor="end">{tv:g}</text>')
        for tm in _ticks(0, t_max / 60, 8):
            xt = x(tm * 60)
            out.append(f'<line x1="{xt:.1f}" x2="{xt:.1f}" y1="{y0 + panel_h}" y2="{y0 + panel_h + 4}" stroke="#999"/>')
            out.append(f'<text x="{xt:.1f}" y="{y0 + panel_h + 15}" text-anchor="middle">{tm:g}</text>')
        if fl and fl.get("level"):
            lv = fl["level"]
            for v, dash in ((lv, ""), (lv * (1 - tolerance), ' stroke-dasharray="4 3"'), (lv * (1 + tolerance), ' stroke-dasharray="4 3"')):
                out.append(f'<line x1="{x(warmup_s):.1f}" x2="{left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#d62728" stroke-width="1"{dash}/>')
            out.append(
                f'<text x="{left + plot_w}" y="{y0 - 6}" text-anchor="end" fill="#d62728">level {lv:g} (median after warm-up), '
                f'±{tolerance:.0%} dashed; max deviation {fl["max_deviation"]:.1%}</text>'
            )
        if pts:
            path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle">minutes since kubesched started</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------------
# the load


def pod_manifest(i: int, namespace: str = NAMESPACE) -> dict[str, Any]:
    """Soak pod ``i``: requests vary with ``i`` (so pods differ in signature), a tenth prefer a
    zone, a tenth spread over zones (ScheduleAnyway); grace period 0."""
    cpu = ("50m", "100m", "200m", "250m", "500m")[i % 5]
    mem = ("64Mi", "128Mi", "256Mi", "512Mi")[(i // 5) % 4]
    app = f"app-{i % 7}"
    spec: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"cpu": cpu, "memory": mem}}}],
    }
    if i % 10 == 3:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [f"zone-{i % 3}"]}]}}]}}
    elif i % 10 == 7:
        spec["topologySpreadConstraints"] = [{"maxSkew": 3, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": app}}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"soak-{i}", "namespace": namespace, "labels": {"app": app}}, "spec": spec}


class Clients:
    """``n`` keep-alive admin clients; ``each(items, fn)`` runs ``fn(client, item)`` over the
    items from ``n`` threads and returns the results in order."""

    def __init__(self, server: str, certs: Path, n: int) -> None:
        self.clients = [Client(server, certs) for _ in range(n)]

    def each(self, items: Sequence[Any], fn: Callable[[Client, Any], Any]) -> list[Any]:
        results: list[Any] = [None] * len(items)
        n = len(self.clients)

        def work(k: int) -> None:
            c = self.clients[k]
            for j in range(k, len(items), n):
                try:
                    results[j] = fn(c, items[j])
                except Exception as e:
                    results[j] = e

        threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(n)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return results


def _create_pod(c: Client, i: int) -> tuple[str, str] | str:
    body = json.dumps(pod_manifest(i)).encode()
    status, data = c.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", body)
    if status == 409:  # a retried POST that had gone through
        status, data = c.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/soak-{i}")
    if status not in (200, 201):
        return f"POST pod soak-{i}: {status} {data[:200]!r}"
    md = json.loads(data)["metadata"]
    return md["uid"], md["name"]


def _delete_pod(c: Client, name: str) -> str | None:
    status, data = c.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}?gracePeriodSeconds=0")
    return None if status in (200, 404) else f"DELETE pod {name}: {status} {data[:200]!r}"


def _create_node(c: Client, i: int) -> str | None:
    status, data = c.request("POST", "/api/v1/nodes", json.dumps(node_body(i)).encode())
    if status != 201:
        return f"POST node {node_name(i)}: {status} {data[:200]!r}"
    status, data = c.request("PATCH", f"/api/v1/nodes/{node_name(i)}/status", json.dumps({"status": node_status()}).encode(), "application/merge-patch+json")
    return None if status == 200 else f"PATCH node {node_name(i)}: {status} {data[:200]!r}"


def _delete_node(c: Client, name: str) -> str | None:
    status, data = c.request("DELETE", f"/api/v1/nodes/{name}")
    return None if status in (200, 404) else f"DELETE node {name}: {status} {data[:200]!r}"


class Watcher(threading.Thread):
    """The exactly-once watch: list, then watch from the list's resourceVersion, keeping it from
    every event and bookmark; on 410 Gone (or any broken stream it cannot resume) relist."""

    def __init__(self, cp: Any, ledger: Ledger) -> None:
        super().__init__(name="soak-watch", daemon=True)
        self.cp = cp
        self.ledger = ledger
        self.stop_evt = threading.Event()
        self.ready = threading.Event()
        self.errors: list[str] = []

    def _list(self, api: bench.Api) -> str:
        items, rv = api.list_all(f"/api/v1/namespaces/{NAMESPACE}/pods")
        for it in items:
            self.ledger.apply("LISTED", it)
        self.ledger.relisted({(it.get("metadata") or {}).get("uid", "") for it in items})
        return rv

    def run(self) -> None:
        api = bench.Api(self.cp)
        rv = ""
        while not self.stop_evt.is_set():
            if not rv:
                try:
                    rv = self._list(api)
                except Exception as e:
                    self.errors.append(f"list: {e}")
                    time.sleep(1)
                    continue
            conn = http.client.HTTPSConnection("127.0.0.1", api.port, context=api.ctx, timeout=600)
            try:
                conn.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion={rv}", headers={"Accept": "application/json"})
                resp = conn.getresponse()
                if resp.status != 200:
                    self.errors.append(f"watch: {resp.status} {resp.read()[:200]!r}")
                    rv = ""
                    continue
                self.ready.set()
                for ev in bench.watch_events(resp, self.stop_evt):
                    obj = ev.get("object") or {}
                    if ev.get("type") == "ERROR":
                        self.errors.append(f"watch error event: {obj.get('code')} {obj.get('message', '')[:120]}")
                        rv = ""
                        break
                    rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                    if ev.get("type") != "BOOKMARK":
                        self.ledger.apply(ev.get("type", ""), obj)
            except Exception as e:
                self.errors.append(f"watch: {e}")
                time.sleep(0.2)
            finally:
                conn.close()


class Sampler(threading.Thread):
    """Every ``interval`` s: kubesched's RSS, threads, fds, CPU and its /metrics gauges, the
    API server's and etcd's RSS, and the soak's own counters (``state()``)."""

    METRICS = ("kubesched_informer_objects", "scheduler_pending_pods", "scheduler_schedule_attempts_total")

    def __init__(self, pid: int, port: int, t0: float, interval: float, state: Callable[[], dict[str, Any]], others: dict[str, int | None]) -> None:
        super().__init__(name="soak-sampler", daemon=True)
        self.pid, self.port, self.t0, self.interval, self.state, self.others = pid, port, t0, interval, state, others
        self.samples: list[dict[str, Any]] = []
        self.stop_evt = threading.Event()

    def sample(self) -> dict[str, Any]:
        now = time.time()
        s: dict[str, Any] = {"t": round(now - self.t0, 1)}
        try:
            st = parse_status(Path(f"/proc/{self.pid}/status").read_text())
            s["rss_mib"] = round(st["rss_kib"] / 1024, 2)
            s["threads"] = st["threads"]
            s["fds"] = len(os.listdir(f"/proc/{self.pid}/fd"))
        except OSError as e:
            s["error"] = f"proc: {e}"
        s["cpu_s"] = bench.proc_cpu(self.pid)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as r:
                m = parse_metrics(r.read().decode(), self.METRICS)
            s["stores"] = {k.removeprefix("resource="): int(v) for k, v in m["kubesched_informer_objects"].items()}
            s["pending"] = {k.removeprefix("queue="): int(v) for k, v in m["scheduler_pending_pods"].items()}
            attempts: dict[str, int] = {}
            for k, v in m["scheduler_schedule_attempts_total"].items():
                res = dict(p.split("=", 1) for p in k.split(",") if "=" in p).get("result", "?")
                attempts[res] = attempts.get(res, 0) + int(v)
            s["attempts"] = attempts
            s["pods_in_store"] = s["stores"].get("Pod")
        except Exception as e:
            s["error"] = f"metrics: {e}"
        for name, pid in self.others.items():
            if pid:
                rss = bench.proc_status(pid, "VmRSS")
                s[f"{name}_rss_mib"] = round(rss / 2**20, 1) if rss else None
        s["load1"] = bench.loadavg()
        s.update(self.state())
        return s

    def run(self) -> None:
        nxt = time.time()
        while not self.stop_evt.is_set():
            self.samples.append(self.sample())
            nxt += self.interval
            self.stop_evt.wait(max(0.0, nxt - time.time()))


# tracemalloc inside kubesched (--tracemalloc S): a wrapper starts tracemalloc and a thread that,
# whenever the soak drops a trigger file ``take-K`` (at the end of a wave, no pod in the cluster,
# at most every S seconds), collects garbage and dumps a snapshot; the soak diffs the first
# snapshot after warm-up with the last (diagnosis only: tracemalloc slows kubesched several times).
_TRACEMALLOC_WRAPPER = """
import gc, os, sys, threading, time, tracemalloc
tracemalloc.start(8)
out = os.environ["SOAK_TM_DIR"]
def dump():
    while True:
        time.sleep(0.2)
        for name in sorted(os.listdir(out)):
            if name.startswith("take-"):
                gc.collect()
                tracemalloc.take_snapshot().dump(os.path.join(out, f"tm-{name[5:]}-{int(time.time())}.snap"))
                os.unlink(os.path.join(out, name))
threading.Thread(target=dump, daemon=True, name="soak-tracemalloc").start()
from kubesched.runtime.cli import main
sys.argv[0] = "kubesched"
main()
"""


def tracemalloc_diff(directory: Path, warmup_s: float, t0: float, top: int = 25) -> dict[str, Any] | None:
    import tracemalloc

    snaps = sorted(directory.glob("tm-*.snap"))
    if len(snaps) < 2:
        return None
    stamped = [(int(p.stem.split("-")[2]) - t0, p) for p in snaps]
    after = [p for t, p in stamped if t >= warmup_s] or [snaps[0]]
    first, last = after[0], snaps[-1]
    a, b = tracemalloc.Snapshot.load(str(first)), tracemalloc.Snapshot.load(str(last))
    filt = [tracemalloc.Filter(False, tracemalloc.__file__)]
    a, b = a.filter_traces(filt), b.filter_traces(filt)

    def rows(group: str) -> list[dict[str, Any]]:
        out = []
        for st in b.compare_to(a, group)[:top]:
            out.append({"size_diff_kib": round(st.size_diff / 1024, 1), "count_diff": st.count_diff, "size_kib": round(st.size / 1024, 1),
                        "where": [f"{f.filename.split('/src/')[-1]}:{f.lineno}" for f in st.traceback][-6:]})
        return out

    each = [round(sum(s.size for s in tracemalloc.Snapshot.load(str(p)).filter_traces(filt).statistics("filename")) / 2**20, 2) for p in snaps]
    return {"from": first.name, "to": last.name, "snapshots": len(snaps), "traced_mib_each": each,
            "traced_mib": [each[snaps.index(first)], each[-1]], "by_line": rows("lineno"), "by_traceback": rows("traceback")}


def take_snapshot(directory: Path, k: int, timeout: float = 120) -> bool:
    """Ask the tracemalloc wrapper for snapshot ``k`` and wait until it is written."""
    trigger = directory / f"take-{k:03d}"
    trigger.touch()
    deadline = time.time() + timeout
    while trigger.exists() and time.time() < deadline:
        time.sleep(0.2)
    return not trigger.exists()


# ------------------------------------------------------------------------------------------------
# the run


def kubesched_command(a: argparse.Namespace, cfg: Path, kubeconfig: Path, port: int) -> list[str]:
    if a.tracemalloc:
        prog = [sys.executable, "-c", _TRACEMALLOC_WRAPPER]
    else:
        exe = Path(sys.executable).parent / "kubesched"
        prog = [str(exe if exe.exists() else shutil.which("kubesched") or "kubesched")]
    return [*prog, "run", "--config", str(cfg), "--kubeconfig", str(kubeconfig), "--address", f"127.0.0.1:{port}"]


def snapshot(dest: Path) -> tuple[str, str]:
    """The committed code (``git archive HEAD``) extracted under ``dest``, so that other work in
    the tree does not reach the running scheduler; returns (PYTHONPATH for it, short sha)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=bench.ROOT, capture_output=True, text=True, check=True).stdout.strip()
    archive = subprocess.run(["git", "archive", "HEAD", "sdk/src", "runtime/src", "plugins-contrib"], cwd=bench.ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    paths = [dest / "sdk" / "src", dest / "runtime" / "src", *sorted((dest / "plugins-contrib").glob("*/src"))]
    return os.pathsep.join(str(p) for p in paths), sha


def soak(a: argparse.Namespace) -> dict[str, Any]:
    assets = bench.ensure_assets()
    workdir = Path(a.workdir)
    src_path, src_sha = snapshot(Path(a.workdir + "-src")) if a.snapshot else ("", "")
    ra = argparse.Namespace(creator_procs=2, creator_threads=16, run_timeout=600)
    run = bench.Run(assets, workdir, a.nodes, ra)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    rng = random.Random(a.seed)
    result: dict[str, Any] = {"args": vars(a), "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": bench.machine(),
                              "versions": bench.versions(assets), "code": src_sha or bench.code_version()}
    sampler: Sampler | None = None
    watcher: Watcher | None = None
    ledger = Ledger()
    errors: list[str] = []
    waves: list[dict[str, Any]] = []
    try:
        run.start()
        assert run.cp is not None
        (workdir / "logs").mkdir(exist_ok=True)
        server = f"127.0.0.1:{run.cp.apiserver_port}"
        clients = Clients(server, run.cp.certs_dir, a.threads)
        clients.each(range(a.threads), lambda c, _i: c.request("GET", "/version"))
        watcher = Watcher(run.cp, ledger)
        watcher.start()
        if not watcher.ready.wait(60):
            raise RuntimeError(f"the watch did not start: {watcher.errors[-3:]}")
        cfg = bench.scheduler_config(workdir / "kubesched-config.json", 5000, 5000, run.cp.kubeconfig)
        port = bench.free_port()
        env_extra = {}
        if a.tracemalloc:
            tm_dir = workdir / "tracemalloc"
            tm_dir.mkdir(exist_ok=True)
            env_extra = {"SOAK_TM_DIR": str(tm_dir)}
        if src_path:
            env_extra["PYTHONPATH"] = src_path
        os.environ.update(env_extra)
        cmd = kubesched_command(a, cfg, run.cp.kubeconfig, port)
        result["kubesched_command"] = " ".join(cmd if not a.tracemalloc else ["python -c <tracemalloc wrapper>", *cmd[3:]])
        t0 = time.time()
        proc = run.spawn(cmd, "kubesched.log")
        bench.wait_url_ok(f"http://127.0.0.1:{port}/readyz", 180, proc)
        log(f"kubesched ready in {time.time() - t0:.1f}s (pid {proc.pid})")
        live_nodes = [node_name(i) for i in range(a.nodes)]
        next_node = a.nodes
        state = {"wave": 0, "phase": "idle", "created": 0, "nodes": len(live_nodes)}

        def counters() -> dict[str, Any]:
            return {**state, "bound": ledger.bound_total, "deleted": ledger.deleted_total}

        sampler = Sampler(proc.pid, port, t0, a.interval, counters, {"apiserver": run.pid("kube-apiserver"), "etcd": run.pid("etcd")})
        sampler.start()
        next_pod = 0
        n_snaps, last_snap = 0, 0.0
        wmin, wmax = (int(x) for x in a.wave.split(","))
        while not stop.is_set():
            el = time.time() - t0
            if el >= a.max_minutes * 60 or (el >= a.min_minutes * 60 and state["created"] >= a.min_pods):
                break
            if proc.poll() is not None:
                errors.append(f"kubesched exited with {proc.returncode}")
                break
            n = rng.randint(wmin, wmax)
            w: dict[str, Any] = {"wave": state["wave"] + 1, "pods": n, "start": round(time.time() - t0, 1)}
            state["wave"] += 1
            state["phase"] = "create"
            tc = time.time()
            res = clients.each(range(next_pod, next_pod + n), _create_pod)
            next_pod += n
            uids, names = [], []
            for r in res:
                if isinstance(r, tuple):  # (uid, name)
                    ledger.record_created(*r)
                    uids.append(r[0])
                    names.append(r[1])
                else:
                    errors.append(str(r))
            state["created"] += len(uids)
            w["create_s"] = round(time.time() - tc, 2)
            state["phase"] = "bind"
            last, last_t = -1, time.time()
            while True:
                b = ledger.count(uids, "bound")
                if b == len(uids):
                    break
                if b != last:
                    last, last_t = b, time.time()
                elif time.time() - last_t > a.wave_timeout or proc.poll() is not None:
                    errors.append(f"wave {w['wave']}: {len(uids) - b} of {len(uids)} pods not bound after {a.wave_timeout:.0f}s without progress")
                    stop.set()
                    break
                time.sleep(0.1)
            w["bound_s"] = round(time.time() - tc, 2)
            state["phase"] = "delete"
            td = time.time()
            errors.extend(str(r) for r in clients.each(names, _delete_pod) if r)
            while ledger.count(uids, "deleted") < len(uids) and time.time() - td < 300:
                time.sleep(0.1)
            w["delete_s"] = round(time.time() - td, 2)
            if a.churn and state["wave"] % a.churn_every == 0 and not stop.is_set():
                state["phase"] = "churn"
                gone, live_nodes = live_nodes[: a.churn], live_nodes[a.churn :]
                errors.extend(str(r) for r in clients.each(gone, _delete_node) if r)
                new = list(range(next_node, next_node + a.churn))
                next_node += a.churn
                errors.extend(str(r) for r in clients.each(new, _create_node) if r)
                live_nodes += [node_name(i) for i in new]
                w["nodes_removed"], w["nodes_added"] = len(gone), len(new)
                state["nodes"] = len(live_nodes)
            w["seconds"] = round(time.time() - tc, 2)
            if a.tracemalloc and time.time() - last_snap >= a.tracemalloc:
                state["phase"] = "snapshot"
                w["snapshot"] = take_snapshot(workdir / "tracemalloc", n_snaps)
                n_snaps += 1
                last_snap = time.time()
            waves.append(w)
            state["phase"] = "idle"
            el = time.time() - t0
            log(f"wave {w['wave']}: {n} pods, created {w['create_s']}s, all bound {w['bound_s']}s, deleted {w['delete_s']}s; "
                f"total {state['created']:,} pods in {el / 60:.1f} min ({state['created'] / el:.0f}/s); rss {sampler.samples[-1].get('rss_mib') if sampler.samples else '?'} MiB")
            if len(errors) > 1000:
                break
        time.sleep(a.interval)  # one quiet sample after the last wave
        result["elapsed_s"] = round(time.time() - t0, 1)
        # kubesched's view of conflicts, from its log
        logtext = (workdir / "logs" / "kubesched.log").read_text(errors="replace")
        result["log"] = {
            "lines": logtext.count("\n"),
            "conflict_409_lines": sum(1 for ln in logtext.splitlines() if " 409" in ln or "Conflict" in ln or "conflict" in ln),
            "error_lines": sum(1 for ln in logtext.splitlines() if ln.startswith("E")),
        }
        result["kubesched_exit"] = proc.poll()
    finally:
        if sampler is not None:
            sampler.stop_evt.set()
            sampler.join(15)
        if watcher is not None:
            watcher.stop_evt.set()
        if a.tracemalloc and sampler is not None:
            try:
                result["tracemalloc"] = tracemalloc_diff(workdir / "tracemalloc", a.warmup_minutes * 60, sampler.t0)
            except Exception as e:
                result["tracemalloc"] = {"error": str(e)}
        run.close()
    samples = sampler.samples if sampler else []
    warm = a.warmup_minutes * 60
    result["samples"] = samples
    result["waves"] = waves
    result["ledger"] = ledger.summary()
    result["watch_errors"] = watcher.errors[:50] if watcher else []
    result["errors"] = errors[:50]
    result["error_count"] = len(errors)
    result["flatness"] = {k: flatness(samples, k, warm, a.tolerance) for k in FLAT_KEYS}
    result["pods_created"] = ledger.summary()["created"]
    return result


# ------------------------------------------------------------------------------------------------
# the report


def _n(v: Any, nd: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.{nd}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def verdict(r: dict[str, Any]) -> tuple[bool, list[str]]:
    lines = []
    ok = True
    led = r["ledger"]
    for k, f in r["flatness"].items():
        good = bool(f.get("flat"))
        ok &= good
        lines.append(f"{k}: {'flat' if good else 'NOT flat'} (max deviation {f.get('max_deviation', 0):.1%} of the level {_n(f.get('level'))})")
    ok &= bool(led["exactly_once"])
    lines.append(f"exactly once: {'yes' if led['exactly_once'] else 'NO'} ({led['bound_once']:,} bound once of {led['created']:,} created; "
                 f"{led['bound_twice']} twice, {led['never_bound']} never bound, {led['never_seen']} never seen)")
    long_enough = r.get("elapsed_s", 0) >= r["args"]["min_minutes"] * 60 and led["created"] >= r["args"]["min_pods"]
    ok &= long_enough
    lines.append(f"duration and volume: {r.get('elapsed_s', 0) / 60:.1f} min, {led['created']:,} pods ({'met' if long_enough else 'NOT met'}: "
                 f"≥ {r['args']['min_minutes']} min and ≥ {r['args']['min_pods']:,} pods)")
    return ok, lines


def render(r: dict[str, Any], command: str, svg_name: str) -> str:
    a = r["args"]
    led = r["ledger"]
    s = r["samples"]
    ok, vlines = verdict(r)
    el = r.get("elapsed_s", 0.0)
    waves = r["waves"]
    m = r["machine"]
    out = [
        f"# Soak: `kubesched run` for {el / 60:.0f} minutes, {led['created']:,} pods",
        "",
        f"Started {r['started']}; kubesched at `{r['code']}`. **Verdict: {'PASS' if ok else 'FAIL'}.**",
        "",
        *[f"* {v}" for v in vlines],
        "",
        *(["**A diagnosis run under tracemalloc** (8 frames): kubesched runs several times slower and its RSS includes "
           "tracemalloc's own bookkeeping, so these RSS figures are not kubesched's footprint; the tracemalloc table at the end is the point.", ""]
          if a.get("tracemalloc") else []),
        f"![RSS, threads, descriptors and pods in the store over time]({svg_name})",
        "",
        "## Command",
        "",
        "```sh",
        command,
        "```",
        "",
        f"kubesched: `{r.get('kubesched_command', '')}` (default profile, qps/burst 5000, leader election off)"
        + (f", from the committed code at `{r['code']}` (`git archive HEAD`, so that uncommitted work in the tree does not reach it)." if a.get("snapshot") else "."),
        "",
        "## Flatness (after a warm-up of "
        f"{a['warmup_minutes']} min; level = median of the samples after it; tolerance ±{a['tolerance']:.0%})",
        "",
        "| figure | level | min | max | min / level | max / level | max deviation | first tenth → last tenth (median) | flat |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for k, f in r["flatness"].items():
        if not f.get("samples"):
            out.append(f"| {k} | – | | | | | | | no samples |")
            continue
        out.append(f"| {k} | {_n(f['level'], 2)} | {_n(f['min'], 2)} | {_n(f['max'], 2)} | {f['min_ratio']:.3f} | {f['max_ratio']:.3f} | "
                   f"{f['max_deviation']:.1%} | {_n(f['first_tenth_median'], 2)} → {_n(f['last_tenth_median'], 2)} | {'yes' if f['flat'] else '**no**'} |")
    bound_s = [w["bound_s"] for w in waves]
    created = led["created"]
    cpu = [x.get("cpu_s") for x in s if x.get("cpu_s") is not None]
    peak_store = max((x.get("pods_in_store") or 0 for x in s), default=0)
    stores_end = s[-1].get("stores") if s else {}
    out += [
        "",
        "## Load and accounting",
        "",
        "| figure | value |",
        "|---|---|",
        f"| duration (kubesched ready → end) | {el / 60:.1f} min |",
        f"| waves | {len(waves)} of {a['wave'].replace(',', '–')} pods; every {a['churn_every']} waves {a['churn']} nodes removed and {a['churn']} added |",
        f"| nodes at start / end; node objects created in all | {a['nodes']} / {waves[-1].get('nodes', a['nodes']) if waves else a['nodes']}; "
        f"{a['nodes'] + sum(w.get('nodes_added', 0) for w in waves):,} |",
        f"| pods created | {created:,} ({created / el:.0f}/s over the run) |" if el else f"| pods created | {created:,} |",
        f"| bound exactly once (watch) | {led['bound_once']:,} |",
        f"| bound twice / never bound / never seen | {led['bound_twice']} / {led['never_bound']} / {led['never_seen']} |",
        f"| watch events; relists (410 or broken stream) | {led['watch_events']:,}; {led['relists']} |",
        f"| wave: create → all bound (median, max) | {statistics.median(bound_s):.1f} s, {max(bound_s):.1f} s |" if bound_s else "| waves | none |",
        f"| kubesched CPU | {cpu[-1] - cpu[0]:.0f} s ({(cpu[-1] - cpu[0]) * 1000 / max(created, 1):.2f} ms per pod) |" if len(cpu) > 1 else "| kubesched CPU | – |",
        f"| peak pods in kubesched's Pod store | {peak_store:,} |",
        f"| informer stores at the end | {', '.join(f'{k} {v}' for k, v in sorted((stores_end or {}).items()))} |",
        f"| schedule attempts at the end | {s[-1].get('attempts') if s else '–'} |",
        f"| bind conflicts (409) in kubesched's log | {r.get('log', {}).get('conflict_409_lines', '–')} lines; error lines {r.get('log', {}).get('error_lines', '–')} |",
        f"| client errors | {r['error_count']} |",
        "",
        "## Machine",
        "",
        f"{m['cores']} cores ({m['cpu_model']}), {m['memory_gib']} GiB, kernel {m['kernel']}; shared with etcd, kube-apiserver, the soak's "
        "own client and other engineers' work. Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()) + ".",
        "",
    ]
    if r.get("errors"):
        out += ["## First errors", "", *[f"* `{e}`" for e in r["errors"][:10]], ""]
    tm = r.get("tracemalloc")
    if tm and tm.get("by_line"):
        out += [
            "## tracemalloc: what kubesched holds, snapshot by snapshot",
            "",
            "Snapshots at the end of a wave (every pod deleted, garbage collected), at most every "
            f"{a.get('tracemalloc', 0):g} s. Traced Python heap per snapshot (MiB): {', '.join(str(x) for x in tm.get('traced_mib_each', tm['traced_mib']))}. "
            f"Below: {tm['from']} (the first after warm-up) → {tm['to']}, by line of allocation, the largest changes "
            "(`size_kib` is what that line's allocations hold in the last snapshot).",
            "",
            "| size change KiB | blocks change | size KiB | allocated at |",
            "|---:|---:|---:|---|",
            *[f"| {x['size_diff_kib']:+,.1f} | {x['count_diff']:+,} | {x['size_kib']:,.1f} | `{x['where'][-1]}` |" for x in tm["by_line"][:15]],
            "",
        ]
    elif tm:
        out += ["## tracemalloc", "", f"`{tm}`", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--wave", default="2000,5000", help="MIN,MAX pods per wave")
    ap.add_argument("--churn", type=int, default=50, help="nodes removed and added every --churn-every waves")
    ap.add_argument("--churn-every", type=int, default=3)
    ap.add_argument("--min-minutes", type=float, default=30)
    ap.add_argument("--min-pods", type=int, default=200_000)
    ap.add_argument("--max-minutes", type=float, default=90)
    ap.add_argument("--wave-timeout", type=float, default=120, help="seconds without a bind that end the soak")
    ap.add_argument("--interval", type=float, default=10)
    ap.add_argument("--warmup-minutes", type=float, default=5)
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tracemalloc", type=float, default=0, help="run kubesched under tracemalloc; a snapshot at the end of a wave, at most every S seconds")
    ap.add_argument("--snapshot", action=argparse.BooleanOptionalAction, default=True,
                    help="run kubesched from the committed code (git archive HEAD into WORKDIR-src), not the working tree")
    ap.add_argument("--workdir", default="/tmp/kubesched-soak")
    ap.add_argument("--out-dir", default=str(HERE / "results" / "soak"))
    ap.add_argument("--render", metavar="JSON", help="rewrite the .md and .svg of a recorded run from its JSON (no run)")
    a = ap.parse_args(argv)
    if a.render:
        path = Path(a.render)
        r = json.loads(path.read_text())
        out, stem = path.parent, path.stem
        a = argparse.Namespace(**r["args"])
    else:
        r = soak(a)
        out = Path(a.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        stem = f"{dt.date.today().isoformat()}-{r['code'].split('+')[0]}"
        command = "python bench/soak.py " + " ".join(argv if argv is not None else sys.argv[1:])
        r["command"] = command.strip()
        (out / f"{stem}.json").write_text(json.dumps(r, indent=1) + "\n")
    (out / f"{stem}.svg").write_text(svg_plot(r["samples"], a.warmup_minutes * 60, a.tolerance, f"kubesched run, soak {stem}: {r['pods_created']:,} pods"))
    (out / f"{stem}.md").write_text(render(r, r["command"], f"{stem}.svg"))
    ok, lines = verdict(r)
    for ln in lines:
        log(ln)
    log(f"wrote {out / stem}.{{json,md,svg}}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
