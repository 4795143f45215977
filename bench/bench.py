"""kubesched side by side with kube-scheduler on a real control plane, scheduler_perf's way.

    python bench/bench.py --sizes quick --qps 50,5000            # 500 nodes x 1,000 pods
    python bench/bench.py --sizes all --qps 50,5000              # + 1,000 x 3,000 and 5,000 x 10,000
    python bench/bench.py --sizes 200x400 --qps 5000 --no-simulate --no-memory   # any NxM
    python bench/bench.py --workload openb,anti-affinity --sizes 500x400 --qps 5000 --rounds 2 --no-ceiling

``--workload`` (comma-separated, default ``basic``) picks what is created: ``basic``
(SchedulingBasic as below), ``openb`` (the trace, ``--openb-nodes``/``--openb-pods``, pods created
before the scheduler starts), and scheduler_perf's ``anti-affinity``, ``topology-spreading``,
``preferred-topology-spreading``, ``node-affinity`` and ``preemption`` (bench/workloads.py: their
nodes, init pods created bound, measured pods). ``--rounds`` repeats the alternation.

For every size and client setting (``qps`` or ``qps/burst``; a bare 50 means 50/100, kube-scheduler's
default, any other bare Q means Q/Q) and for each scheduler (kube-scheduler, then kubesched):

1. a fresh control plane (etcd + kube-apiserver, tests/e2e/controlplane) — nothing carries over;
2. N Nodes created by the parallel admin client (bench/loadgen.py): 4 CPU, 16Gi, 110 pods, Ready
   condition set through the status subresource, 3 zones (topology.kubernetes.io/zone);
3. the scheduler started with the default profile, leader election off and
   ``clientConnection: {qps, burst}``; the bench waits for its /readyz (caches synced);
4. a watch on the namespace's pods starts, then M pods (SchedulingBasic shape, 100m/128Mi) are
   created by the admin client *while the scheduler runs* (as scheduler_perf's createPods
   with collectMetrics; ``--create before`` creates them before the scheduler starts instead);
5. the run ends when the watch has seen all M pods bound (or at ``--run-timeout``).

Figures (see bench/README.md): SchedulingThroughput as scheduler_perf's throughputCollector
computes it (pods scheduled per 1 s interval; the first non-empty interval skipped, empty intervals
merged into the next; Average/Perc50/Perc90/Perc99 with its percentile rule), the overall rate from
the first bind to the last, creation-to-bound latency per pod (local watch times), CPU seconds and
peak RSS of the scheduler process from /proc, and kubesched / kube-scheduler ratios.

Also, per size: the API server's ceiling with no scheduler (bare ``POST pods/binding`` from the
admin client; then each pod's Binding and the Event kube-scheduler writes for it, with one pod
watch open: the most any scheduler can reach here, printed next to the results) and the admin
client's own creation rate with nothing else running; then
``kubesched simulate`` throughput (bench/simulate.py) and memory per node / pod (bench/memory.py).

Results: ``bench/results/<date>-<machine id>.md`` (and a .json next to it; runs of the same day and
machine are merged, a rerun of the same figure replaces the old one).
"""

# ruff: noqa: RUF001  (the report uses the multiplication sign and the en dash)
from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import http.client
import itertools
import json
import math
import os
import platform
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "controlplane"))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from controlplane import ControlPlane, _set_pdeathsig, ensure_assets, free_port  # noqa: E402
from workloads import WORKLOADS, Workload, init_pods  # noqa: E402
from workloads import workload as get_workload  # noqa: E402

try:
    import orjson

    _loads = orjson.loads
except ImportError:  # pragma: no cover
    _loads = json.loads


def watch_events(resp: Any, stop_evt: threading.Event) -> Iterator[dict[str, Any]]:
    """The events of a watch response (one JSON object per line) until the stream ends or
    ``stop_evt`` is set."""
    buf = b""
    while not stop_evt.is_set():
        chunk = resp.read1(1 << 16)
        if not chunk:
            return
        buf += chunk
        if b"\n" not in chunk:
            continue
        lines = buf.split(b"\n")
        buf = lines.pop()
        for line in lines:
            if line.strip():
                yield _loads(line)

OPENB = Path("/work/shared/traces/openb")
SIZES = {"quick": (500, 1000), "medium": (1000, 3000), "large": (5000, 10000)}
SIZE_SETS = {"quick": ["quick"], "medium": ["medium"], "large": ["large"], "all": ["quick", "medium", "large"]}
SCHEDULERS = ("kube-scheduler", "kubesched")
NAMESPACE = "bench"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------
# /proc


def proc_cpu(pid: int) -> float | None:
    """utime + stime of ``pid`` (all its threads), in seconds."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    f = stat[stat.rfind(")") + 2 :].split()
    return (int(f[11]) + int(f[12])) / CLK_TCK


def proc_status(pid: int, key: str) -> int | None:
    """A kB field of /proc/<pid>/status (VmHWM, VmRSS), in bytes."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = proc_meminfo_total()
    mid = ""
    with contextlib.suppress(OSError):
        mid = Path("/etc/machine-id").read_text().strip()[:8]
    return {"cores": os.cpu_count(), "memory_gib": round(mem / 2**30, 1), "cpu_model": model, "machine_id": mid or platform.node()[:8], "kernel": platform.release()}


def proc_meminfo_total() -> int:
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def versions(assets: Path) -> dict[str, str]:
    out = {"python": platform.python_version()}
    try:
        import kubesched.runtime as kr

        out["kubesched"] = getattr(kr, "__version__", "?")
    except ImportError:
        out["kubesched"] = "not installed"
    for b in ("kube-scheduler", "kube-apiserver"):
        try:
            out[b] = subprocess.run([str(assets / b), "--version"], capture_output=True, text=True, timeout=30).stdout.strip().replace("Kubernetes ", "")
        except (OSError, subprocess.SubprocessError):
            out[b] = "?"
    with contextlib.suppress(OSError):
        gomod = (ROOT / "tests" / "e2e" / "controlplane" / "go.mod").read_text()
        for line in gomod.splitlines():
            if "go.etcd.io/etcd/server/v3" in line:
                out["etcd"] = line.split()[-1]
                break
    with contextlib.suppress(Exception):
        import kubernetes

        out["kubernetes (python client)"] = kubernetes.__version__
    return out


def code_version() -> str:
    """The kubesched code a run used: short HEAD, plus '+dirty:<hash>' when runtime/ or sdk/
    differ from it (the tree is edited while benchmarks run)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
        diff = subprocess.run(["git", "diff", "HEAD", "--", "runtime", "sdk"], cwd=ROOT, capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    if diff:
        import hashlib

        return f"{head}+dirty:{hashlib.sha1(diff).hexdigest()[:7]}"
    return head or "?"


# ------------------------------------------------------------------------------------------------
# statistics


def perc_sched_perf(sorted_vals: list[float], p: float) -> float:
    """scheduler_perf's percentile: sorted[ceil(len*p/100) - 1]."""
    if not sorted_vals:
        return float("nan")
    return sorted_vals[max(0, math.ceil(len(sorted_vals) * p / 100) - 1)]


def throughput_samples(bound_times: list[float], start: float, interval: float = 1.0) -> list[float]:
    """scheduler_perf's throughputCollector, replayed on the recorded bind times with a perfect
    1 s ticker from ``start``: samples are taken only once a pod is scheduled; the first non-empty
    sample is skipped (sampling and creation start independently); an interval with no new pod
    is merged into the next non-empty one and that rate is recorded once per merged interval."""
    ts = sorted(bound_times)
    if not ts:
        return []
    out: list[float] = []
    started = False
    last_count = 0
    last_time = start
    skipped = 0
    k = 1
    idx = 0
    while True:
        now = start + k * interval
        while idx < len(ts) and ts[idx] <= now:
            idx += 1
        scheduled = idx
        k += 1
        if scheduled == 0:
            continue
        if not started:
            started = True
            last_count, last_time = scheduled, now
            if idx >= len(ts):
                break
            continue
        new = scheduled - last_count
        if new == 0:
            skipped += 1
            continue
        rate = new / (now - last_time)
        out.extend([rate] * (skipped + 1))
        skipped = 0
        last_count, last_time = scheduled, now
        if idx >= len(ts):
            break
    return out


def summarize_throughput(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    if not s:
        return {"avg": float("nan"), "p50": float("nan"), "p90": float("nan"), "p99": float("nan"), "samples": 0}
    return {"avg": sum(s) / len(s), "p50": perc_sched_perf(s, 50), "p90": perc_sched_perf(s, 90), "p99": perc_sched_perf(s, 99), "samples": len(s)}


def quantile(vals: list[float], q: float) -> float:
    """Nearest-rank quantile (same rule as perc_sched_perf)."""
    s = sorted(vals)
    return perc_sched_perf(s, q * 100)


# ------------------------------------------------------------------------------------------------
# API access


class Api:
    """Small admin client (urllib, for setup and read-back; the load is bench/loadgen.py)."""

    def __init__(self, cp: ControlPlane) -> None:
        self.cp = cp
        self.ctx = cp._ssl_context()
        self.host = "127.0.0.1"
        self.port = int(cp.apiserver_port or 0)

    def request(self, method: str, path: str, body: Any = None, ctype: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.cp.url + path, data=data, method=method, headers={"Content-Type": ctype, "Accept": "application/json"})
        with urllib.request.urlopen(req, context=self.ctx, timeout=120) as r:
            return _loads(r.read())

    def list_all(self, path: str) -> tuple[list[dict[str, Any]], str]:
        items: list[dict[str, Any]] = []
        cont = ""
        rv = ""
        while True:
            q = "?limit=500" + (f"&continue={cont}" if cont else "")
            d = self.request("GET", path + q)
            items.extend(d.get("items") or [])
            rv = (d.get("metadata") or {}).get("resourceVersion", rv)
            cont = (d.get("metadata") or {}).get("continue", "")
            if not cont:
                return items, rv


class Observer(threading.Thread):
    """Watches the pods of one namespace; records the local time each pod is first seen and the
    local time its spec.nodeName first appears (one clock, one watch, millisecond resolution)."""

    def __init__(self, cp: ControlPlane, namespace: str, target: int) -> None:
        super().__init__(name="observer", daemon=True)
        self.cp = cp
        self.namespace = namespace
        self.target = target
        self.added: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.nodes: dict[str, str] = {}
        self.ready = threading.Event()
        self.done = threading.Event()
        self.stop_evt = threading.Event()
        self.error: str = ""
        self.events = 0
        self.last_bind = 0.0

    def run(self) -> None:
        api = Api(self.cp)
        rv = ""
        try:
            items, rv = api.list_all(f"/api/v1/namespaces/{self.namespace}/pods")
            now = time.time()
            for it in items:
                self._see(it, now)
        except Exception as e:
            self.error = f"list: {e}"
        while not self.stop_evt.is_set() and not self.done.is_set():
            conn = http.client.HTTPSConnection("127.0.0.1", api.port, context=api.ctx, timeout=3600)
            try:
                conn.request("GET", f"/api/v1/namespaces/{self.namespace}/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=3600&resourceVersion={rv}", headers={"Accept": "application/json"})
                resp = conn.getresponse()
                if resp.status != 200:
                    self.error = f"watch: {resp.status} {resp.read()[:200]!r}"
                    time.sleep(0.5)
                    rv = ""
                    continue
                self.ready.set()
                for ev in watch_events(resp, self.stop_evt):
                    obj = ev.get("object") or {}
                    if ev.get("type") == "ERROR":
                        rv = ""
                        break
                    rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                    if ev.get("type") in ("ADDED", "MODIFIED"):
                        self._see(obj, time.time())
                    if self.done.is_set():
                        break
            except Exception as e:
                self.error = f"watch: {e}"
                time.sleep(0.2)
            finally:
                conn.close()

    def _see(self, obj: dict[str, Any], now: float) -> None:
        self.events += 1
        name = (obj.get("metadata") or {}).get("name")
        if name not in self.added:
            self.added[name] = now
        node = (obj.get("spec") or {}).get("nodeName")
        if node and name not in self.bound:
            self.bound[name] = now
            self.last_bind = now
            self.nodes[name] = node
            if len(self.bound) >= self.target:
                self.done.set()


# ------------------------------------------------------------------------------------------------
# processes


class Run:
    """One fresh control plane with the workload's N nodes (and its namespaces); everything it
    starts is stopped by ``close``."""

    def __init__(self, assets: Path, workdir: Path, nodes: int, a: argparse.Namespace, w: Workload | None = None, files: dict[str, Path] | None = None) -> None:
        self.assets = assets
        self.workdir = workdir
        self.nodes = nodes
        self.a = a
        self.w = w or WORKLOADS["basic"]
        self.files = files or {}
        self.cp: ControlPlane | None = None
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> dict[str, Any]:
        shutil.rmtree(self.workdir, ignore_errors=True)
        t0 = time.time()
        self.cp = ControlPlane(self.assets, self.workdir, start_timeout=180, extra_apiserver_args=self.w.apiserver_args).start()
        log(f"control plane up in {time.time() - t0:.1f}s at {self.cp.url}")
        api = Api(self.cp)
        for ns in dict.fromkeys((NAMESPACE, *self.w.namespaces)):
            if ns != "default":
                api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        if self.w.node_shape == "openb":
            r = self.loadgen("nodes", self.nodes, file=self.files["nodes"])
        else:
            r = self.loadgen("nodes", self.nodes, node_shape=self.w.node_shape, zones=",".join(self.w.zones))
        log(f"{self.nodes} nodes in {r['seconds']:.1f}s ({r['rate']:.0f} nodes/s, {r['requests_per_s']:.0f} req/s, errors {r['errors']})")
        if r["errors"]:
            raise RuntimeError(f"node creation failed: {r['first_error']}")
        return r

    def pid(self, name: str) -> int | None:
        assert self.cp is not None
        return self.cp.pids.get(name)

    def loadgen_cmd(self, kind: str, count: int, **kw: Any) -> list[str]:
        assert self.cp is not None
        kw.setdefault("namespace", NAMESPACE)
        cmd = [sys.executable, str(HERE / "loadgen.py"), kind, "--server", f"127.0.0.1:{self.cp.apiserver_port}", "--certs", str(self.cp.certs_dir), "--count", str(count), "--procs", str(self.a.creator_procs), "--threads", str(self.a.creator_threads)]
        for k, v in kw.items():
            if v is True:
                cmd.append(f"--{k.replace('_', '-')}")
            elif v is not False:
                cmd += [f"--{k.replace('_', '-')}", str(v)]
        return cmd

    def loadgen(self, kind: str, count: int, **kw: Any) -> dict[str, Any]:
        p = subprocess.run(self.loadgen_cmd(kind, count, **kw), capture_output=True, text=True, timeout=self.a.run_timeout, preexec_fn=_set_pdeathsig)
        if p.returncode != 0:
            raise RuntimeError(f"loadgen {kind} failed: {p.stderr[-2000:]}")
        return json.loads(p.stdout)

    def spawn(self, args: list[str], logname: str) -> subprocess.Popen[bytes]:
        logf = open(self.workdir / "logs" / logname, "ab")
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, cwd=self.workdir, start_new_session=True, preexec_fn=_set_pdeathsig)
        logf.close()
        self.procs.append(p)
        return p

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)
        self.procs.clear()
        if self.cp is not None:
            self.cp.stop()
            self.cp = None


def scheduler_config(path: Path, qps: float, burst: int, kubeconfig: Path) -> Path:
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": qps, "burst": burst},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "default-scheduler"}],
    }
    path.write_text(json.dumps(cfg, indent=2) + "\n")
    return path


def wait_url_ok(url: str, timeout: float, proc: subprocess.Popen[bytes] | None = None, insecure: bool = True) -> None:
    ctx = ssl.create_default_context()
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"scheduler exited with {proc.returncode} before {url} was ok")
        try:
            with urllib.request.urlopen(url, timeout=5, context=ctx if url.startswith("https") else None) as r:
                if r.status == 200:
                    return
        except Exception as e:
            last = str(e)
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ok after {timeout:.0f}s: {last}")


def start_scheduler(run: Run, which: str, qps: float, burst: int) -> tuple[subprocess.Popen[bytes], int]:
    assert run.cp is not None
    cfg = scheduler_config(run.workdir / f"{which}-config.json", qps, burst, run.cp.kubeconfig)
    t0 = time.time()
    if which == "kube-scheduler":
        proc = run.cp.start_kube_scheduler(cfg, wait_healthy=True, timeout=120)
        port = next(a.split("=", 1)[1] for a in proc.args if str(a).startswith("--secure-port="))  # type: ignore[union-attr]
        wait_url_ok(f"https://127.0.0.1:{port}/readyz", 120, proc)
    else:
        port = free_port()
        code = "import sys; from kubesched.runtime.cli import main; sys.argv[0] = 'kubesched'; main()"
        args = [sys.executable, "-c", code, "run", "--config", str(cfg), "--kubeconfig", str(run.cp.kubeconfig), "--address", f"127.0.0.1:{port}"]
        if run.a.kubesched_v is not None:
            args += ["-v", str(run.a.kubesched_v)]
        proc = run.spawn(args, "kubesched.log")
        try:
            wait_url_ok(f"http://127.0.0.1:{port}/readyz", 120, proc)
        except RuntimeError as e:
            tail = (run.workdir / "logs" / "kubesched.log").read_text(errors="replace")[-1500:]
            raise RuntimeError(f"{e}; its log ends:\n{tail}") from None
    log(f"{which} ready in {time.time() - t0:.1f}s (pid {proc.pid})")
    return proc, int(port)


class PySpy:
    """Two py-spy recorders on one process: samples of the thread holding the GIL (``--gil``:
    where the Python CPU time goes) and wall-clock
    samples with ``--idle`` (kept only for the scheduling loop's thread: where its time goes,
    waiting on the network included)."""

    LOOP_FRAMES = ("Scheduler.run (", "Scheduler.step (")

    def __init__(self, pid: int, out: Path, rate: int) -> None:
        self.out = out
        exe = shutil.which("py-spy")
        self.procs: list[subprocess.Popen[bytes]] = []
        if exe is None:
            log("py-spy not found (pip install py-spy): no profile")
            return
        for suffix, extra in ((".cpu.txt", ["--gil"]), (".wall.txt", ["--idle"])):
            self.procs.append(subprocess.Popen([exe, "record", "--pid", str(pid), "--rate", str(rate), "--format", "raw", "--nonblocking", "--function", *extra, "-o", str(out.with_suffix(suffix))], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_set_pdeathsig))

    def stop(self) -> dict[str, Any] | None:
        if not self.procs:
            return None
        for p in self.procs:
            p.send_signal(signal.SIGINT)
        for p in self.procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
        out: dict[str, Any] = {}
        cpu, wall = self.out.with_suffix(".cpu.txt"), self.out.with_suffix(".wall.txt")
        if cpu.exists():
            out["cpu"] = summarize_pyspy(cpu)
        if wall.exists():
            out["wall_loop"] = summarize_pyspy(wall, only=self.LOOP_FRAMES)
        return out or None


def summarize_pyspy(path: Path, top: int = 20, only: tuple[str, ...] = ()) -> dict[str, Any]:
    """Self and inclusive sample shares per function from py-spy's collapsed stacks; with
    ``only``, just the stacks that hold one of those frames."""
    self_c: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        raw_frames = [f for f in stack.split(";") if f and not f.startswith(("process ", "thread "))]
        if only and not any(f.startswith(only) for f in raw_frames):
            continue
        cnt = int(n)
        total += cnt
        frames = [_short_frame(f) for f in raw_frames]
        if not frames:
            continue
        self_c[frames[-1]] += cnt
        for f in set(frames):
            incl[f] += cnt
    return {
        "samples": total,
        "self": [(f, c / total) for f, c in self_c.most_common(top)] if total else [],
        # callers common to (nearly) every sample, and start-up wrappers, say nothing
        "inclusive": [(f, c / total) for f, c in incl.most_common() if c / total < 0.97 and not _wrapper(f)][:top] if total else [],
    }


def _wrapper(frame: str) -> bool:
    name, _, path = frame.partition(" (")
    return path.startswith(("click/", "threading.py", "concurrent/futures/thread.py")) or name in ("<module>", "run_cmd", "run_scheduler", "run_scheduler.<locals>.lead", "Scheduler.run")


def _short_frame(frame: str) -> str:
    """'func (path/to/kubesched/runtime/x.py:12)' -> 'func (kubesched/runtime/x.py)'."""
    name, _, loc = frame.partition(" (")
    loc = loc.rstrip(")")
    path = loc.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/src/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{name} ({path})" if path else name


class ServerProfile(threading.Thread):
    """kube-apiserver's CPU profile over a run's window: back-to-back
    ``/debug/pprof/profile?seconds=CHUNK`` fetches with the admin client (profiling is on by
    default), the chunks begun before the window's end merged by ``go tool pprof -proto``; the
    top functions (flat and cumulative) from ``go tool pprof -top``."""

    def __init__(self, cp: ControlPlane, out: Path, chunk: int = 2) -> None:
        super().__init__(name="apiserver-profile", daemon=True)
        self.url = f"{cp.url}/debug/pprof/profile?seconds={chunk}"
        self.ctx = cp._ssl_context()
        self.out = out
        self.chunk = chunk
        self.chunks: list[tuple[float, Path]] = []
        self.error = ""
        self.stop_evt = threading.Event()

    def run(self) -> None:
        while not self.stop_evt.is_set():
            t0 = time.time()
            try:
                with urllib.request.urlopen(self.url, context=self.ctx, timeout=self.chunk + 60) as r:
                    data = r.read()
            except Exception as e:
                self.error = str(e)
                return
            path = self.out.with_name(f"{self.out.name}.{len(self.chunks):03d}")
            path.write_bytes(data)
            self.chunks.append((t0, path))

    def stop(self, t_end: float, top: int = 25) -> dict[str, Any]:
        self.stop_evt.set()
        self.join(self.chunk + 60)
        keep = [str(p) for t, p in self.chunks if t < t_end]
        res: dict[str, Any] = {"file": str(self.out), "chunks": len(keep), "chunk_s": self.chunk, "error": self.error}
        go = shutil.which("go")
        if not keep or go is None:
            res["error"] = res["error"] or ("go not found: chunks kept, not merged" if keep else "no profile")
            return res
        with open(self.out, "wb") as f:
            p = subprocess.run([go, "tool", "pprof", "-proto", *keep], stdout=f, stderr=subprocess.PIPE, text=False, timeout=300)
        if p.returncode != 0:
            res["error"] = p.stderr.decode(errors="replace")[-500:]
            return res
        p2 = subprocess.run([go, "tool", "pprof", "-top", f"-nodecount={top}", str(self.out)], capture_output=True, text=True, timeout=300)
        res["flat"], res["total_s"] = parse_pprof_top(p2.stdout)
        p3 = subprocess.run([go, "tool", "pprof", "-traces", str(self.out)], capture_output=True, text=True, timeout=300)
        res["areas"] = pprof_areas(p3.stdout)
        return res


#: Where kube-apiserver's CPU goes, by a frame anywhere in the stack (areas overlap; a sample
#: counts in every area it matches).
APISERVER_AREAS: list[tuple[str, str]] = [
    ("client certificate checks (crypto/x509, per request)", r"^crypto/x509\."),
    ("TLS handshakes", r"^crypto/tls\..*[hH]andshake"),
    ("TLS reads and writes", r"^crypto/tls\.\(\*Conn\)\.(Read|Write)$"),
    ("JSON encode", r"serializer/json\.\(\*Serializer\)\.(Encode|doEncode)$"),
    ("JSON decode", r"serializer/json\.\(\*Serializer\)\.Decode$"),
    ("protobuf encode", r"serializer/protobuf\.\(\*Serializer\)\.(Encode|doEncode)$"),
    ("protobuf decode", r"serializer/protobuf\.\(\*Serializer\)\.Decode$"),
    ("watch cache and watchers", r"storage/cacher\.\(\*(cacheWatcher|watchCache|Cacher)\)|endpoints/handlers\.\(\*WatchServer\)"),
    ("etcd client (storage/etcd3)", r"apiserver/pkg/storage/etcd3\."),
    ("managed fields", r"util/managedfields"),
    ("admission", r"apiserver/pkg/admission"),
    ("audit", r"apiserver/pkg/audit"),
    ("GC background marking", r"^runtime\.gcBgMarkWorker$"),
]


def pprof_areas(traces: str) -> dict[str, float]:
    """Seconds per APISERVER_AREAS row from ``go tool pprof -traces`` output (one block per
    stack: its value on the first line, then one frame a line)."""
    import re

    pats = [(label, re.compile(rx)) for label, rx in APISERVER_AREAS]
    out = dict.fromkeys((label for label, _ in APISERVER_AREAS), 0.0)
    value: float | None = None
    frames: list[str] = []

    def flush() -> None:
        if value:
            for label, rx in pats:
                if any(rx.search(f) for f in frames):
                    out[label] += value

    for line in traces.splitlines():
        if line.startswith("-----------+"):
            flush()
            value, frames = None, []
            continue
        f = line.split()
        if value is None and len(f) >= 2 and _go_seconds(f[0]) is not None and line[:1] == " ":
            value = _go_seconds(f[0])
            frames.append(" ".join(f[1:]))
        elif value is not None and f:
            frames.append(" ".join(f))
    flush()
    return {k: round(v, 3) for k, v in out.items()}


def parse_pprof_top(text: str) -> tuple[list[tuple[float, float, str]], float | None]:
    """``go tool pprof -top`` output -> [(flat s, cum s, function)], total sampled seconds."""
    total = None
    rows: list[tuple[float, float, str]] = []
    for line in text.splitlines():
        if "Total samples =" in line:
            total = _go_seconds(line.split("Total samples =", 1)[1].split()[0])
            continue
        f = line.split()
        if len(f) >= 6 and f[1].endswith("%") and f[4].endswith("%"):
            flat, cum = _go_seconds(f[0]), _go_seconds(f[3])
            if flat is not None and cum is not None:
                rows.append((flat, cum, " ".join(f[5:])))
    return rows, total


def _go_seconds(v: str) -> float | None:
    for unit, per_s in (("ms", 1e3), ("us", 1e6), ("µs", 1e6), ("min", 1 / 60), ("s", 1.0)):
        if v.endswith(unit):
            try:
                return float(v[: -len(unit)]) / per_s
            except ValueError:
                return None
    return None


class CpuSampler(threading.Thread):
    """CPU seconds of some processes every ``interval`` s, so that a run that ends on a quiet
    period (no bind for ``--quiet`` s) can be counted up to its last bind."""

    def __init__(self, pids: dict[str, int | None], interval: float = 0.25) -> None:
        super().__init__(name="cpu-sampler", daemon=True)
        self.pids = pids
        self.interval = interval
        self.samples: list[tuple[float, dict[str, float | None]]] = []
        self.stop_evt = threading.Event()

    def sample(self) -> dict[str, float | None]:
        return {k: proc_cpu(v) if v else None for k, v in self.pids.items()}

    def run(self) -> None:
        while not self.stop_evt.wait(self.interval):
            self.samples.append((time.time(), self.sample()))

    def at(self, t: float) -> dict[str, float | None] | None:
        """The first sample taken at or after ``t``."""
        return next((c for ts, c in self.samples if ts >= t), None)


def wait_bound(obs: Observer, timeout: float, quiet: float) -> str:
    """'done' (all bound), 'quiet' (some bound, then none for ``quiet`` s) or 'timeout'."""
    deadline = time.time() + timeout
    while not obs.done.wait(0.2):
        now = time.time()
        if now >= deadline:
            return "timeout"
        if quiet > 0 and obs.last_bind and now - obs.last_bind >= quiet:
            return "quiet"
    return "done"


def openb_files(a: argparse.Namespace) -> tuple[dict[str, Path], tuple[int, int]]:
    """The trace converted by bench/openb.py, one JSON object per line: the files (nodes, pods)
    and the counts (nodes, pods)."""
    import openb

    objs = openb.convert(a.openb_nodes, a.openb_pods)
    out: dict[str, Path] = {}
    counts: list[int] = []
    for kind, key in (("Node", "nodes"), ("Pod", "pods")):
        path = Path(a.workdir) / f"openb-{key}.jsonl"
        items = [o for o in objs if o["kind"] == kind]
        path.write_text("".join(json.dumps(o) + "\n" for o in items))
        out[key] = path
        counts.append(len(items))
    return out, (counts[0], counts[1])


def live_run(assets: Path, size: tuple[int, int], qps: float, burst: int, which: str, a: argparse.Namespace, profile: bool = False, w: Workload | None = None, files: dict[str, Path] | None = None, rnd: int = 1) -> dict[str, Any]:
    w = w or WORKLOADS["basic"]
    n, m = size
    create = w.create or a.create
    tag = f"{w.name}-{which}-{n}x{m}-q{int(qps)}-r{rnd}"
    run = Run(assets, Path(a.workdir) / tag, n, a, w, files)
    inits = init_pods(w, n)
    rec: dict[str, Any] = {"type": "live", "workload": w.name, "round": rnd, "scheduler": which, "nodes": n, "pods": m, "init_pods": sum(c for _, _, c, _ in inits), "qps": qps, "burst": burst, "create": create, "cores": os.cpu_count(), "when": dt.datetime.now().isoformat(timespec="seconds"), "loadavg_start": loadavg(), "code": code_version()}
    pods_kw: dict[str, Any] = {"file": files["pods"]} if w.shape == "openb" and files else {"shape": w.shape, "namespace": w.namespace}
    try:
        rec["node_creation"] = run.start()
        assert run.cp is not None
        for shape, ns, count, first in inits:
            r = run.loadgen("pods", count, shape=shape, namespace=ns, offset=first, bind_nodes=n)
            log(f"{count} init pods ({shape}, {ns}) created bound in {r['seconds']:.1f}s (errors {r['errors']})")
            if r["errors"]:
                raise RuntimeError(f"init pod creation failed: {r['first_error']}")
        obs = Observer(run.cp, w.namespace, m)
        req0: collections.Counter[str] = collections.Counter()
        exec0: tuple[float, float] | None = None
        if create == "before":
            # pods first; the window (and the CPU count) starts when the scheduler is started
            rec["creator"] = run.loadgen("pods", m, **pods_kw)
            if rec["creator"]["errors"]:
                raise RuntimeError(f"pod creation failed: {rec['creator']['first_error']}")
            obs.start()
            if not obs.ready.wait(60):
                raise RuntimeError(f"pod watch did not start: {obs.error}")
            with contextlib.suppress(Exception):
                req0 = request_counts(Api(run.cp))
            with contextlib.suppress(Exception):
                exec0 = mutating_executing(Api(run.cp))
            t_start = time.time()
            srv = {"kube-apiserver": run.pid("kube-apiserver"), "etcd": run.pid("etcd")}
            srv_cpu0 = {k: proc_cpu(v) if v else None for k, v in srv.items()}
            proc, _port = start_scheduler(run, which, qps, burst)
            pids = {"scheduler": proc.pid, **srv}
            cpu0 = {"scheduler": 0.0, **srv_cpu0}
            spy = PySpy(proc.pid, run.workdir / "logs" / "py-spy", a.py_spy_rate) if profile else None
        else:
            proc, _port = start_scheduler(run, which, qps, burst)
            obs.start()
            if not obs.ready.wait(60):
                raise RuntimeError(f"pod watch did not start: {obs.error}")
            time.sleep(1.0)
            with contextlib.suppress(Exception):
                req0 = request_counts(Api(run.cp))
            with contextlib.suppress(Exception):
                exec0 = mutating_executing(Api(run.cp))
            pids = {"scheduler": proc.pid, "kube-apiserver": run.pid("kube-apiserver"), "etcd": run.pid("etcd")}
            cpu0 = {k: proc_cpu(v) if v else None for k, v in pids.items()}
            spy = PySpy(proc.pid, run.workdir / "logs" / "py-spy", a.py_spy_rate) if profile else None
            t_start = time.time()
        sampler = CpuSampler(pids)
        sampler.start()
        srv_prof = ServerProfile(run.cp, run.workdir / "logs" / "apiserver.cpu.pb.gz") if getattr(a, "apiserver_profile", False) else None
        if srv_prof is not None:
            with contextlib.suppress(Exception):
                (run.workdir / "logs" / "metrics-start.txt").write_text(metrics_text(Api(run.cp)))
            srv_prof.start()
        creator: subprocess.Popen[str] | None = None
        if create == "during":
            creator = subprocess.Popen(run.loadgen_cmd("pods", m, **pods_kw), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_set_pdeathsig)
        ended = wait_bound(obs, a.run_timeout, a.quiet)
        timed_out = ended == "timeout"
        t_end = time.time()
        cpu1 = sampler.sample()
        sampler.stop_evt.set()
        if ended != "done" and obs.last_bind:
            # count up to the last bind, not the quiet period after it
            t_end = obs.last_bind
            cpu1 = sampler.at(t_end) or cpu1
        rec["ended"] = ended
        with contextlib.suppress(Exception):
            rec["mutating_executing"] = average_executing(exec0, mutating_executing(Api(run.cp)))
        if srv_prof is not None:
            with contextlib.suppress(Exception):
                (run.workdir / "logs" / "metrics-end.txt").write_text(metrics_text(Api(run.cp)))
            rec["apiserver_profile"] = srv_prof.stop(t_end)
        with contextlib.suppress(Exception):
            d = request_counts(Api(run.cp))
            d.subtract(req0)
            rec["requests"] = {k: v for k, v in d.most_common() if v > 0}
        rec["peak_rss"] = proc_status(proc.pid, "VmHWM")
        rec["rss_end"] = proc_status(proc.pid, "VmRSS")
        rec["profile"] = spy.stop() if spy else None
        if creator is not None:
            try:
                out, err = creator.communicate(timeout=max(10.0, a.run_timeout - (t_end - t_start)))
                rec["creator"] = json.loads(out) if creator.returncode == 0 else {"error": err[-1000:]}
            except subprocess.TimeoutExpired:
                creator.kill()
                creator.communicate()
                rec["creator"] = {"error": "timed out"}
        # Work a scheduler queues for after the bind (events are written by background
        # workers) still costs CPU: wait until its event writes stop growing, then read its CPU.
        rec["cpu_settled_s"] = None
        if req0 is not None and "requests" in rec:
            last, still, t_settle = -1, 0, time.time()
            while time.time() - t_settle < 60 and still < 3:
                with contextlib.suppress(Exception):
                    d = request_counts(Api(run.cp))
                    d.subtract(req0)
                    n_ev = d.get("POST events", 0)
                    still = still + 1 if n_ev == last else 0
                    last = n_ev
                time.sleep(0.5)
            rec["events_total"] = max(last, 0)
            c2 = proc_cpu(pids["scheduler"])
            if c2 is not None and cpu0["scheduler"] is not None:
                rec["cpu_settled_s"] = c2 - cpu0["scheduler"]
        obs.stop_evt.set()
        rec["timed_out"] = timed_out
        rec["bound"] = len(obs.bound)
        rec["cpu_window_s"] = {k: (cpu1[k] - cpu0[k]) if cpu0[k] is not None and cpu1[k] is not None else None for k in pids}
        rec["cpu_total_s"] = cpu1["scheduler"]
        rec["window_s"] = t_end - t_start
        bound_t = sorted(obs.bound.values())
        if bound_t:
            rec["first_bind"] = bound_t[0] - t_start
            rec["last_bind"] = bound_t[-1] - t_start
            # 95 % of the pods this run bound (a trace leaves some pods unschedulable)
            rec["t95_bound"] = bound_t[max(0, math.ceil(0.95 * len(bound_t)) - 1)] - t_start
            rec["overall_rate"] = (len(bound_t) - 1) / (bound_t[-1] - bound_t[0]) if len(bound_t) > 1 and bound_t[-1] > bound_t[0] else float("nan")
            # scheduler_perf starts its collector with the createPods op; with --create before,
            # the pods exist already and the grid starts when the scheduler is ready.
            rec["throughput"] = summarize_throughput(throughput_samples(bound_t, t_start))
        if create == "during":
            lat = [obs.bound[k] - obs.added[k] for k in obs.bound if k in obs.added]
            if lat:
                rec["latency"] = {"p50": quantile(lat, 0.50), "p90": quantile(lat, 0.90), "p99": quantile(lat, 0.99), "max": max(lat), "n": len(lat)}
            # backlog: pods created (seen) but not bound yet, at its peak
            evs = sorted([(t, 1) for t in obs.added.values()] + [(t, -1) for t in obs.bound.values()])
            cur = peak = 0
            for _t, d_ in evs:
                cur += d_
                peak = max(peak, cur)
            rec["peak_backlog"] = peak
            rec["server_latency"] = server_latency(Api(run.cp), w.namespace)
        if inits:
            # pods left in the init namespaces (Preemption: the init pods not evicted)
            with contextlib.suppress(Exception):
                api = Api(run.cp)
                rec["init_remaining"] = sum(len(api.list_all(f"/api/v1/namespaces/{ns}/pods")[0]) for ns in dict.fromkeys(ns for _, ns, _, _ in inits))
        per_node = collections.Counter(obs.nodes.values())
        rec["spread"] = {"nodes_used": len(per_node), "max_per_node": max(per_node.values()) if per_node else 0}
        rec["loadavg_end"] = loadavg()
        if obs.error:
            rec["observer_error"] = obs.error
        rec["observer_events"] = obs.events
        log(f"{w.name} {which} {n}x{m} qps {qps:g}/{burst}: bound {rec['bound']}/{m} ({ended}) in {rec['window_s']:.1f}s, overall {rec.get('overall_rate', float('nan')):.1f} pods/s, throughput avg {rec.get('throughput', {}).get('avg', float('nan')):.1f}, 95 % bound at {rec.get('t95_bound', float('nan')):.1f}s, cpu {rec['cpu_window_s']['scheduler']}, peak rss {(rec['peak_rss'] or 0) / 2**20:.0f} MiB{' TIMED OUT' if timed_out else ''}")
    finally:
        if a.keep_logs:
            with contextlib.suppress(Exception):
                dst = Path(a.workdir) / "logs" / tag
                shutil.copytree(run.workdir / "logs", dst, dirs_exist_ok=True)
        run.close()
    return rec


def metrics_text(api: Api) -> str:
    req = urllib.request.Request(api.cp.url + "/metrics", headers={"Accept": "text/plain"})
    with urllib.request.urlopen(req, context=api.ctx, timeout=60) as r:
        return str(r.read().decode(errors="replace"))


_EXECUTING = 'apiserver_flowcontrol_read_vs_write_current_requests_{}{{phase="executing",request_kind="mutating"}}'


def mutating_executing(api: Api) -> tuple[float, float] | None:
    """(sum, count) of API Priority and Fairness' sampled histogram of mutating requests
    executing, as a fraction of the server's limit (one observation per nanosecond): the
    difference of two readings over their count difference is the average fraction between them."""
    return parse_executing(metrics_text(api))


def parse_executing(text: str) -> tuple[float, float] | None:
    """``mutating_executing``'s (sum, count) from a /metrics text; None when it is not there."""
    vals: dict[str, float] = {}
    for raw in text.splitlines():
        for part in ("sum", "count"):
            key = _EXECUTING.format(part)
            if raw.startswith(key + " "):
                vals[part] = float(raw[len(key) + 1 :])
    return (vals["sum"], vals["count"]) if len(vals) == 2 else None


def average_executing(e0: tuple[float, float] | None, e1: tuple[float, float] | None, limit: int = 200) -> float | None:
    """Mutating requests executing on average between two ``mutating_executing`` readings
    (``limit``: kube-apiserver's --max-mutating-requests-inflight, 200 by default)."""
    if e0 is None or e1 is None or e1[1] <= e0[1]:
        return None
    return limit * (e1[0] - e0[0]) / (e1[1] - e0[1])


def request_counts(api: Api) -> collections.Counter[str]:
    """apiserver_request_total from the API server's /metrics, summed by 'VERB resource[/sub]'."""
    req = urllib.request.Request(api.cp.url + "/metrics", headers={"Accept": "text/plain"})
    out: collections.Counter[str] = collections.Counter()
    with urllib.request.urlopen(req, context=api.ctx, timeout=60) as r:
        for raw in r.read().decode(errors="replace").splitlines():
            if not raw.startswith("apiserver_request_total{"):
                continue
            labels_s, _, val = raw.rpartition(" ")
            labels = dict(kv.split("=", 1) for kv in labels_s[len("apiserver_request_total{") : -1].split(",") if "=" in kv)
            lab = {k: v.strip('"') for k, v in labels.items()}
            res = lab.get("resource", "") + ("/" + lab["subresource"] if lab.get("subresource") else "")
            out[f"{lab.get('verb', '?')} {res}"] += int(float(val))
    return out


def server_latency(api: Api, namespace: str = NAMESPACE) -> dict[str, Any] | None:
    """creationTimestamp -> PodScheduled.lastTransitionTime (both 1 s resolution, server clock)."""
    items, _ = api.list_all(f"/api/v1/namespaces/{namespace}/pods")
    lat = []
    for p in items:
        md = p.get("metadata") or {}
        for c in (p.get("status") or {}).get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("status") == "True" and c.get("lastTransitionTime"):
                t0 = dt.datetime.fromisoformat(md["creationTimestamp"].replace("Z", "+00:00"))
                t1 = dt.datetime.fromisoformat(c["lastTransitionTime"].replace("Z", "+00:00"))
                lat.append((t1 - t0).total_seconds())
    if not lat:
        return None
    return {"p50": quantile(lat, 0.5), "p99": quantile(lat, 0.99), "n": len(lat)}


def ceiling_run(assets: Path, size: tuple[int, int], a: argparse.Namespace) -> dict[str, Any]:
    """What the API server and etcd can do with no scheduler running, on a fresh control plane
    with the N nodes: create M pods; bind them (bare ``POST pods/binding``); create M more and
    post, for each, its Binding and the Event kube-scheduler writes for it, with one pod watch
    open as a scheduler's informer has (loadgen ``bind-event --watch``). Each scheduled pod costs
    the server at least that pair, so the pair rate bounds any scheduler's throughput here
    (one that writes its Events later can bind faster for a while, up to the bind rate)."""
    n, m = size
    run = Run(assets, Path(a.workdir) / f"ceiling-{n}x{m}", n, a)
    rec: dict[str, Any] = {"type": "ceiling", "nodes": n, "pods": m, "cores": os.cpu_count(), "when": dt.datetime.now().isoformat(timespec="seconds"), "loadavg_start": loadavg()}
    try:
        rec["node_creation"] = run.start()
        pids = {"kube-apiserver": run.pid("kube-apiserver"), "etcd": run.pid("etcd")}

        def cpu() -> dict[str, float | None]:
            return {k: proc_cpu(v) if v else None for k, v in pids.items()}

        def spent(c0: dict[str, float | None], c1: dict[str, float | None]) -> dict[str, float]:
            return {k: (c1[k] or 0) - (c0[k] or 0) for k in pids}

        c0 = cpu()
        rec["pod_creation"] = run.loadgen("pods", m, scheduler_name="bench-nobody")
        c1 = cpu()
        rec["bind"] = run.loadgen("bind", m, nodes=n)
        c2 = cpu()
        rec["server_cpu_create_s"] = spent(c0, c1)
        rec["server_cpu_bind_s"] = spent(c1, c2)
        more = run.loadgen("pods", m, scheduler_name="bench-nobody", offset=m)
        if more["errors"]:
            raise RuntimeError(f"pod creation failed: {more['first_error']}")
        c3 = cpu()
        rec["bind_event"] = run.loadgen("bind-event", m, nodes=n, offset=m, watch=True)
        c4 = cpu()
        rec["server_cpu_bind_event_s"] = spent(c3, c4)
        rec["loadavg_end"] = loadavg()
        be = rec["bind_event"]
        log(f"ceiling {n}x{m}: create {rec['pod_creation']['rate']:.0f} pods/s, bind {rec['bind']['rate']:.0f} binds/s (errors {rec['bind']['errors']}), "
            f"bind + Event {be['rate']:.0f} pairs/s with a pod watch (errors {be['errors']}, watch events {be.get('watch_events')}; "
            f"apiserver {rec['server_cpu_bind_event_s']['kube-apiserver']:.1f} s, etcd {rec['server_cpu_bind_event_s']['etcd']:.1f} s CPU in {be['seconds']:.1f} s)")
    finally:
        run.close()
    return rec


def simulate_run(nodes: int, pods: int, timeout: float) -> dict[str, Any]:
    p = subprocess.run([sys.executable, str(HERE / "simulate.py"), "--nodes", str(nodes), "--pods", str(pods), "--profile", "default", "--json"], capture_output=True, text=True, timeout=timeout, preexec_fn=_set_pdeathsig)
    if p.returncode != 0:
        return {"type": "simulate", "nodes": nodes, "pods": pods, "error": p.stderr[-1000:]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["type"] = "simulate"
    r["code"] = code_version()
    r["loadavg"] = loadavg()
    log(f"simulate {nodes}x{pods}: {r['pods_per_s']:.1f} pods/s wall, {r['pods_per_cpu_s']:.1f} pods/cpu-s")
    return r


def memory_run(nodes: int, pods: int, method: str, timeout: float, drop_mf: bool = False) -> dict[str, Any]:
    cmd = [sys.executable, str(HERE / "memory.py"), "--nodes", str(nodes), "--pods", str(pods), "--method", method, "--json"]
    if drop_mf:
        cmd.append("--drop-managed-fields")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, preexec_fn=_set_pdeathsig)
    if p.returncode != 0:
        return {"type": "memory", "nodes": nodes, "pods": pods, "method": method, "drop_managed_fields": drop_mf, "error": p.stderr[-1000:]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["type"] = "memory"
    r["code"] = code_version()
    log(f"memory {nodes}x{pods} ({method}): {r['bytes_per_node'] / 1024:.1f} KiB/node, {r['bytes_per_bound_pod'] / 1024:.1f} KiB/bound pod")
    return r


# ------------------------------------------------------------------------------------------------
# report


def rec_key(r: dict[str, Any]) -> tuple[Any, ...]:
    t = r["type"]
    if t == "live":
        return (t, r.get("workload", "basic"), r["nodes"], r["pods"], r["qps"], r["burst"], r["scheduler"], r.get("create", "during"), r.get("round", 1))
    if t == "profile":
        return (t, r.get("workload", "basic"), r["nodes"], r["pods"], r["qps"], r["burst"], r.get("create", "during"))
    if t in ("ceiling",):
        return (t, r["nodes"], r["pods"])
    if t in ("simulate",):
        return (t, r["nodes"], r["pods"])
    if t == "memory":
        return (t, r["nodes"], r["pods"], r["method"], bool(r.get("drop_managed_fields")))
    return (t,)


def fmt(v: Any, nd: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:,.{nd}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def ratio(a: Any, b: Any) -> str:
    if a is None or b is None or not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or b == 0 or math.isnan(a) or math.isnan(b):
        return "–"
    return f"{a / b:.2f}×"


def _g(r: dict[str, Any] | None, *path: str) -> Any:
    cur: Any = r
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


LIVE_FIGURES: list[tuple[str, tuple[str, ...], int, float]] = [
    # label, path in record, decimals, scale
    ("throughput avg (pods/s)", ("throughput", "avg"), 1, 1),
    ("throughput p50 (pods/s)", ("throughput", "p50"), 1, 1),
    ("throughput p90 (pods/s)", ("throughput", "p90"), 1, 1),
    ("throughput p99 (pods/s)", ("throughput", "p99"), 1, 1),
    ("first → last bind (pods/s)", ("overall_rate",), 1, 1),
    ("time to 95 % bound (s)", ("t95_bound",), 1, 1),
    ("latency p50 (s)", ("latency", "p50"), 2, 1),
    ("latency p99 (s)", ("latency", "p99"), 2, 1),
    ("latency p50 / p99, server clock (s, 1 s res.)", ("server_latency",), 0, 1),
    ("scheduler CPU in window (s)", ("cpu_window_s", "scheduler"), 2, 1),
    ("API requests per pod, other than pod creation", ("_req_per_pod",), 2, 1),
    ("scheduler CPU ms per pod", ("_cpu_per_pod",), 2, 1),
    ("scheduler CPU ms per pod, incl. event writes after the last bind", ("_cpu_per_pod_settled",), 2, 1),
    ("events written by the scheduler: in window / in all", ("_events",), 0, 1),
    ("scheduler CPU total incl. start/sync (s)", ("cpu_total_s",), 2, 1),
    ("scheduler peak RSS (MiB)", ("peak_rss",), 0, 1 / 2**20),
    ("apiserver CPU in window (s)", ("cpu_window_s", "kube-apiserver"), 2, 1),
    ("etcd CPU in window (s)", ("cpu_window_s", "etcd"), 2, 1),
    ("apiserver CPU ms per API request (all clients)", ("_apiserver_per_request",), 2, 1),
    ("mutating requests executing in the API server, average (all clients)", ("mutating_executing",), 2, 1),
    ("scheduler + apiserver + etcd CPU ms per pod", ("_machine_per_pod",), 2, 1),
    ("the most pods/s the machine's cores carry at that CPU per pod", ("_cores_bound",), 0, 1),
    ("pods bound / created", ("_bound",), 0, 1),
    ("run ended: done (all bound) / quiet (no bind for --quiet s) / timeout", ("ended",), 0, 1),
    ("init pods left at the end (created bound; Preemption: not evicted)", ("init_remaining",), 0, 1),
    ("pod creator rate (pods/s)", ("creator", "rate"), 0, 1),
    ("peak backlog (created, not bound)", ("peak_backlog",), 0, 1),
    ("window: start → last bind (s)", ("window_s",), 1, 1),
    ("load average 1 min (start → end)", ("_load",), 1, 1),
    ("run started at / kubesched code (git)", ("_when",), 0, 1),
]


def live_value(r: dict[str, Any] | None, path: tuple[str, ...], scale: float) -> Any:
    if r is None:
        return None
    if path in (("_cpu_per_pod",), ("_cpu_per_pod_settled",)):
        c = _g(r, "cpu_window_s", "scheduler") if path == ("_cpu_per_pod",) else r.get("cpu_settled_s")
        return c * 1000 / r["bound"] if c is not None and r.get("bound") else None
    if path in (("_machine_per_pod",), ("_cores_bound",)):
        cpu = r.get("cpu_window_s") or {}
        if not r.get("bound") or any(cpu.get(k) is None for k in ("scheduler", "kube-apiserver", "etcd")):
            return None
        ms = 1000 * sum(cpu[k] for k in ("scheduler", "kube-apiserver", "etcd")) / r["bound"]
        if path == ("_machine_per_pod",):
            return ms
        return 1000 * r["cores"] / ms if r.get("cores") and ms > 0 else None
    if path == ("_events",):
        if r.get("events_total") is None:
            return None
        return f"{(r.get('requests') or {}).get('POST events', 0)} / {r['events_total']}"
    if path == ("_apiserver_per_request",):
        reqs, c = r.get("requests"), _g(r, "cpu_window_s", "kube-apiserver")
        return 1000 * c / sum(reqs.values()) if reqs and c is not None else None
    if path == ("_req_per_pod",):
        reqs = r.get("requests")
        if not reqs or not r.get("bound"):
            return None
        return (sum(reqs.values()) - reqs.get("POST pods", 0)) / r["bound"]
    if path == ("_bound",):
        return f"{r.get('bound')}/{r['pods']}" + (" (timed out)" if r.get("timed_out") else "")
    if path == ("_when",):
        when = str(r.get("when", ""))[11:16]
        return f"{when} / {r.get('code', '?')}" if r["scheduler"] == "kubesched" else when
    if path == ("_load",):
        return f"{r.get('loadavg_start', 0):.1f} → {r.get('loadavg_end', 0):.1f}"
    if path == ("server_latency",):
        s = r.get("server_latency")
        return f"{s['p50']:.0f} / {s['p99']:.0f}" if s else None
    v = _g(r, *path)
    if isinstance(v, (int, float)) and scale != 1:
        v = v * scale
    return v


def _workload_order(r: dict[str, Any]) -> int:
    names = list(WORKLOADS)
    w = r.get("workload", "basic")
    return names.index(w) if w in names else len(names)


def _workload_title(name: str) -> str:
    w = WORKLOADS.get(name)
    return f"{name}: {w.title.split(' (')[0]}" if w else name


SUMMARY: list[tuple[str, tuple[str, ...], int, float]] = [
    ("throughput avg", ("throughput", "avg"), 1, 1),
    ("p50", ("throughput", "p50"), 1, 1),
    ("p90", ("throughput", "p90"), 1, 1),
    ("p99", ("throughput", "p99"), 1, 1),
    ("first → last bind", ("overall_rate",), 1, 1),
    ("95 % bound (s)", ("t95_bound",), 1, 1),
    ("CPU ms / bound pod", ("_cpu_per_pod",), 2, 1),
    ("peak RSS MiB", ("peak_rss",), 0, 1 / 2**20),
    ("bound", ("bound",), 0, 1),
]


def pair_ceiling(c: dict[str, Any] | None) -> float | None:
    """The bind + Event pairs per second of a ceiling record (None before it was measured)."""
    return _g(c, "bind_event", "rate")


def ceiling_lines(c: dict[str, Any]) -> list[str]:
    """The ceiling record of one size, as the report prints it."""
    b = c["bind"]
    pc = c["pod_creation"]
    L = [f"**API server ceiling** (no scheduler; bench/loadgen.py, {b['procs']} processes × {b['threads']} threads, no client-side limit): "
         f"**{b['rate']:,.0f} binds/s** (bare `POST pods/binding`, {b['ok']:,} ok, {b['errors']} errors; apiserver CPU {c['server_cpu_bind_s'].get('kube-apiserver', 0):.1f} s, etcd {c['server_cpu_bind_s'].get('etcd', 0):.1f} s, client CPU {b['cpu_s']:.1f} s). "
         f"Pod creation with nothing else running: **{pc['rate']:,.0f} pods/s** (client CPU {pc['cpu_s']:.1f} s). "
         f"Node creation (POST + status PATCH): {c['node_creation']['rate']:,.0f} nodes/s. Load average {c.get('loadavg_start', 0):.1f} → {c.get('loadavg_end', 0):.1f}."]
    be = c.get("bind_event")
    if be:
        cpu = c.get("server_cpu_bind_event_s") or {}
        pairs = be["ok"] / 2
        api_s, etcd_s = cpu.get("kube-apiserver", 0), cpu.get("etcd", 0)
        per = f"{1000 * api_s / pairs:.2f} + {1000 * etcd_s / pairs:.2f} ms" if pairs else "–"
        cores = c.get("cores")
        bound = f"; at that CPU per pair, the machine's {cores} cores given to the server alone would carry at most **{cores * pairs / (api_s + etcd_s):,.0f} pairs/s**" if cores and pairs and api_s + etcd_s > 0 else ""
        L += ["", f"**What each scheduled pod costs the server**: its Binding and the Event kube-scheduler writes for it (`events.k8s.io/v1`, reason Scheduled), "
              f"with one watch on all pods open (a scheduler's informer; `loadgen.py bind-event --watch`): **{be['rate']:,.0f} pairs/s** ({pairs:,.0f} pairs, {be['errors']} errors, "
              f"the watch delivered {be.get('watch_events', '–')} events; apiserver {api_s:.1f} s + etcd {etcd_s:.1f} s CPU in {be['seconds']:.1f} s, {per} per pair, "
              f"{(api_s + etcd_s) / be['seconds']:.2f} cores; client CPU {be['cpu_s']:.1f} s{bound}). With the machine as loaded as it was then (load average above), no scheduler that binds each pod and writes its Event in the run "
              "can schedule faster than this (one that writes its Events later can bind faster for a while, up to the bind rate); a scheduler running beside the server takes cores from it."]
    return L


def apiserver_profile_lines(ks: dict[str, Any] | None, py: dict[str, Any] | None) -> list[str]:
    """With --apiserver-profile: kube-apiserver's sampled CPU by area and its top functions."""
    pa, pb = _g(ks, "apiserver_profile") or {}, _g(py, "apiserver_profile") or {}
    if not pa.get("areas") and not pb.get("areas"):
        return [f"- kube-apiserver CPU profile: {p.get('error')}" for p in (pa, pb) if p.get("error")]
    L = ["kube-apiserver's CPU profile over the window (pprof, `--apiserver-profile`; seconds of CPU whose stack holds a frame of that area; areas overlap):", ""]
    L.append("| area | kube-scheduler | kubesched | difference |")
    L.append("|---|---:|---:|---:|")
    va, vb = pa.get("total_s"), pb.get("total_s")
    L.append(f"| all samples | {fmt(va, 2)} | {fmt(vb, 2)} | {fmt(vb - va, 2) if va is not None and vb is not None else ''} |")
    for label, _ in APISERVER_AREAS:
        va, vb = (pa.get("areas") or {}).get(label), (pb.get("areas") or {}).get(label)
        L.append(f"| {label} | {fmt(va, 2)} | {fmt(vb, 2)} | {fmt(vb - va, 2) if va is not None and vb is not None else ''} |")
    L.append("")
    L.append("| kube-scheduler run: flat s | function | kubesched run: flat s | function |")
    L.append("|---:|---|---:|---|")
    for ra, rb in itertools.zip_longest((pa.get("flat") or [])[:12], (pb.get("flat") or [])[:12]):
        L.append(f"| {fmt(ra[0], 2) if ra else ''} | {'`' + ra[2] + '`' if ra else ''} | {fmt(rb[0], 2) if rb else ''} | {'`' + rb[2] + '`' if rb else ''} |")
    L.append("")
    return L


def summary_table(groups: dict[tuple[Any, ...], dict[str, dict[str, Any]]], ceilings: dict[tuple[int, int], dict[str, Any]] | None = None) -> list[str]:
    """One row per (workload, size, qps, create, round, scheduler), then the ratio row, and the
    server's bind + Event ceiling at that size when it was measured."""
    L = ["## Summary: one row per workload, size, client setting and scheduler", "",
         "Throughput columns are pods/s (scheduler_perf's sampled throughput: average and percentiles of 1 s samples; first → last bind: bound − 1 over the time between them). "
         "95 % bound: seconds from the start of the window until 95 % of the pods this run bound were bound. CPU: the scheduler process (user + system) from the start of the window to its last bind, per bound pod. "
         "The ratio rows are kubesched / kube-scheduler (above 1 is kubesched faster for throughput; below 1 is kubesched cheaper for time, CPU and RSS). "
         "The ceiling rows are the API server's rate of Binding + Event pairs at that size with no scheduler running (see each size's section): the most any scheduler can reach on this machine at the load of that run (compare the load averages), and its ratio to kube-scheduler's throughput.", "",
         "| workload | nodes × pods (+ init) | qps/burst, pods created | round | scheduler | " + " | ".join(s[0] for s in SUMMARY) + " |",
         "|---|---|---|---:|---|" + "---:|" * len(SUMMARY)]
    for key, by in sorted(groups.items(), key=lambda kv: (_workload_order({"workload": kv[0][5]}), kv[0])):
        n, m, qps, burst, create, wname, rnd = key
        init = next((r.get("init_pods") or 0 for r in by.values()), 0)
        size = f"{n:,} × {m:,}" + (f" (+ {init:,})" if init else "")
        lead = f"| {wname} | {size} | {qps:g}/{burst}, {create} | {rnd} |"
        for name in SCHEDULERS:
            r = by.get(name)
            if r is None:
                continue
            cells = [fmt(live_value(r, path, scale), nd) for _, path, nd, scale in SUMMARY]
            if r.get("timed_out"):
                cells[-1] += " (timed out)"
            L.append(f"{lead} {name} | " + " | ".join(cells) + " |")
        ks, py = by.get("kube-scheduler"), by.get("kubesched")
        if ks and py:
            L.append(f"{lead} **ratio** | " + " | ".join(ratio(live_value(py, path, scale), live_value(ks, path, scale)) for _, path, _nd, scale in SUMMARY) + " |")
        cl = pair_ceiling((ceilings or {}).get((n, m)))
        if cl:
            most = ratio(cl, _g(ks, "throughput", "avg")) if ks else "–"
            L.append(f"{lead} ceiling: bind + Event, no scheduler | {cl:,.1f} (kube-scheduler × {most.rstrip('×')}) |" + " |" * (len(SUMMARY) - 1))
    L.append("")
    return L


def render(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    L: list[str] = []
    mach = meta["machine"]
    L.append(f"# kubesched vs kube-scheduler — {meta['date']} on {mach['machine_id']}")
    L.append("")
    L.append("Generated by `bench/bench.py` (see bench/README.md for the method and how to read it). Figures, not tests.")
    L.append("")
    L.append("| machine | |")
    L.append("|---|---|")
    L.append(f"| CPU | {mach['cpu_model']} — {mach['cores']} cores |")
    L.append(f"| memory | {mach['memory_gib']} GiB |")
    L.append(f"| kernel | {mach['kernel']} |")
    for k, v in meta["versions"].items():
        L.append(f"| {k} | {v} |")
    L.append(f"| commands | {'<br>'.join('`' + c + '`' for c in meta.get('commands', []))} |")
    L.append("")
    L.append("The machine was shared with other work during these runs: the 1-minute load average at the start and end of each run is in the tables. Throughput and latency move with it; CPU seconds and RSS of the scheduler process much less.")
    L.append("")

    ceilings = {(r["nodes"], r["pods"]): r for r in results if r["type"] == "ceiling"}
    lives = [r for r in results if r["type"] == "live"]
    groups: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = collections.OrderedDict()
    for r in sorted(lives, key=lambda r: (r["nodes"], r["pods"], _workload_order(r), r.get("create", "during") != "during", r["qps"], r.get("round", 1))):
        groups.setdefault((r["nodes"], r["pods"], r["qps"], r["burst"], r.get("create", "during"), r.get("workload", "basic"), r.get("round", 1)), {})[r["scheduler"]] = r
    if groups:
        L.extend(summary_table(groups, ceilings))
    sizes = sorted({(k[0], k[1]) for k in groups} | set(ceilings))
    for n, m in sizes:
        L.append(f"## {n:,} nodes × {m:,} pods")
        L.append("")
        c = ceilings.get((n, m))
        if c:
            L.extend(ceiling_lines(c))
            L.append("")
        for key, by in groups.items():
            if (key[0], key[1]) != (n, m):
                continue
            _, _, qps, burst, create, wname, rnd = key
            ks, py = by.get("kube-scheduler"), by.get("kubesched")
            init = (ks or py or {}).get("init_pods") or 0
            L.append(f"### {_workload_title(wname)}{f' ({init:,} init pods created bound)' if init else ''} — clientConnection qps {qps:g} / burst {burst} — pods created {'while the scheduler runs' if create == 'during' else 'before the scheduler starts'}{f' — round {rnd}' if rnd != 1 else ''}")
            L.append("")
            L.append("| figure | kube-scheduler | kubesched | kubesched / kube-scheduler |")
            L.append("|---|---:|---:|---:|")
            for label, path, nd, scale in LIVE_FIGURES:
                if create == "before" and path[0] in ("latency", "server_latency", "peak_backlog"):
                    continue
                va, vb = live_value(ks, path, scale), live_value(py, path, scale)
                r_ = ratio(vb, va) if path[0] not in ("_bound", "_load", "_when", "server_latency", "creator", "window_s", "ended", "init_remaining") else ""
                L.append(f"| {label} | {fmt(va, nd)} | {fmt(vb, nd)} | {r_} |")
            if c:
                for what, cl in (("the bind ceiling", c["bind"]["rate"]), ("the bind + Event ceiling", pair_ceiling(c))):
                    parts = []
                    for name, r in (("kube-scheduler", ks), ("kubesched", py)):
                        t = _g(r, "throughput", "avg")
                        if t and cl:
                            parts.append(f"{name} {100 * t / cl:.0f}%")
                    if parts:
                        L.append(f"| throughput avg as % of {what} | | | {', '.join(parts)} |")
            L.append("")
            if create == "before":
                L.append("The window starts when the scheduler process is started (pods exist already): its CPU includes start-up and the initial list of all pods.")
                L.append("")
            for name, r in (("kube-scheduler", ks), ("kubesched", py)):
                reqs = (r or {}).get("requests") or {}
                if reqs:
                    top = ", ".join(f"{k} {v:,}" for k, v in list(reqs.items())[:8])
                    L.append(f"- API requests during the {name} run (all clients, from apiserver_request_total): {top}")
            L.append("")
            L.extend(apiserver_profile_lines(ks, py))
            for name, r in (("kube-scheduler", ks), ("kubesched", py)):
                if r and (r.get("timed_out") or r.get("observer_error") or _g(r, "creator", "errors")):
                    L.append(f"- {name}: timed out={r.get('timed_out')}, observer: {r.get('observer_error') or 'ok'}, creator errors: {_g(r, 'creator', 'errors')} {_g(r, 'creator', 'first_error') or ''}")
            L.append("")

    prof = [r for r in results if r["type"] == "profile"]
    for pr in prof:
        p = pr.get("profile") or {}
        if not p:
            continue
        L.append(f"## Profile of kubesched ({pr['nodes']:,} × {pr['pods']:,}, qps {pr['qps']:g}/{pr['burst']}, pods created {pr.get('create', 'during')}, py-spy {pr.get('rate', '')} Hz, code {pr.get('code', '?')}, {str(pr.get('when', ''))[11:16]})")
        L.append("")
        L.append(f"A separate run with py-spy attached (its figures are not in the tables above; it ran at {fmt(_g(pr, 'throughput', 'avg'))} pods/s, scheduler CPU {fmt(_g(pr, 'cpu_window_s', 'scheduler'), 2)} s). "
                 "**Holding the GIL**: samples of whichever thread held the GIL (Python CPU time; start-up wrappers and callers present in ≥97% of samples are left out of the inclusive column). **Scheduling loop, wall clock**: samples of the loop's thread only, waiting included (`--idle`): where a pod's turn in the loop goes.")
        L.append("")
        for title, key in (("Holding the GIL", "cpu"), ("Scheduling loop, wall clock", "wall_loop")):
            q = p.get(key)
            if not q or not q.get("samples"):
                continue
            L.append(f"**{title}** ({q['samples']:,} samples)")
            L.append("")
            L.append("| self % | function | inclusive % | function |")
            L.append("|---:|---|---:|---|")
            for (fs, ps), (fi, pi) in zip(q["self"][:15], q["inclusive"][:15]):
                L.append(f"| {100 * ps:.1f} | `{fs}` | {100 * pi:.1f} | `{fi}` |")
            L.append("")

    sims = sorted((r for r in results if r["type"] == "simulate"), key=lambda r: (r["nodes"], r["pods"]))
    if sims:
        L.append("## `kubesched simulate` (no API server, default profile)")
        L.append("")
        L.append("bench/simulate.py: pods arrive one after another, each scheduled before the next. pods/cpu-s divides by the CPU time of the process (less disturbed by other load than wall time).")
        L.append("")
        L.append("| nodes | pods | pods/s (wall) | pods/cpu-s | ms CPU per pod | peak RSS (MiB) | load avg | kubesched code |")
        L.append("|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in sims:
            if r.get("error"):
                L.append(f"| {r['nodes']:,} | {r['pods']:,} | error | | | | |")
                continue
            L.append(f"| {r['nodes']:,} | {r['pods']:,} | {r['pods_per_s']:.1f} | {r['pods_per_cpu_s']:.1f} | {1000 / r['pods_per_cpu_s']:.1f} | {r['peak_rss_mib']:.0f} | {r.get('loadavg', 0):.1f} | {r.get('code', '?')} |")
        L.append("")
    ok_sims = [r for r in sims if not r.get("error")]
    growth = []
    by_nodes: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in ok_sims:
        by_nodes[r["nodes"]].append(r)
    for n_, rs in sorted(by_nodes.items()):
        rs.sort(key=lambda r: r["pods"])
        for r1, r2 in itertools.pairwise(rs):
            dc = r2["schedule_cpu_s"] - r1["schedule_cpu_s"]
            growth.append(f"| {n_:,} | {r1['pods']:,} → {r2['pods']:,} | {1000 * dc / (r2['pods'] - r1['pods']):.1f} |")
    if growth:
        L.append("How it grows. With pods (CPU of the extra pods / their number, so start-up and file loading drop out):")
        L.append("")
        L.append("| nodes | pods | marginal ms CPU per pod |")
        L.append("|---:|---:|---:|")
        L.extend(growth)
        L.append("")
    common = sorted({r["pods"] for r in ok_sims if sum(1 for x in ok_sims if x["pods"] == r["pods"]) > 1})
    if common:
        m0 = common[0]
        row = sorted((r for r in ok_sims if r["pods"] == m0), key=lambda r: r["nodes"])
        base_ms = 1000 / row[0]["pods_per_cpu_s"]
        L.append(f"With nodes ({m0:,} pods each; kube-scheduler's adaptive percentageOfNodesToScore filters/scores max(100, N·max(5, 50 − N/125)%) nodes, i.e. 420 of 1,000, 500 of 5,000, 750 of 15,000; PreScore plugins still walk every node):")
        L.append("")
        L.append("| nodes | ms CPU per pod | × the smallest |")
        L.append("|---:|---:|---:|")
        for r in row:
            ms = 1000 / r["pods_per_cpu_s"]
            L.append(f"| {r['nodes']:,} | {ms:.1f} | {ms / base_ms:.2f}× |")
        L.append("")
    mems = sorted((r for r in results if r["type"] == "memory"), key=lambda r: (bool(r.get("drop_managed_fields")), r["method"], r["nodes"], r["pods"]))
    if mems:
        L.append("## Memory per node and per pod (kubesched scheduler state; bench/memory.py)")
        L.append("")
        L.append("Growth of the Scheduler (cache + queue) fed N Nodes, then M pods bound to them, then M pending pods, as the informers would; the decoded API objects are included (the informer store shares them). \"raw dict\" is one decoded object alone.")
        L.append("")
        L.append("| method | managedFields | nodes | pods | KiB / node | KiB / bound pod | KiB / pending pod | raw Node dict KiB | raw Pod dict KiB | kubesched code |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in mems:
            if r.get("error"):
                L.append(f"| {r['method']} | | {r['nodes']:,} | {r['pods']:,} | error | | | | |")
                continue
            mf = "dropped" if r.get("drop_managed_fields") else "kept"
            L.append(f"| {r['method']} | {mf} | {r['nodes']:,} | {r['pods']:,} | {r['bytes_per_node'] / 1024:.1f} | {r['bytes_per_bound_pod'] / 1024:.1f} | {r['bytes_per_pending_pod'] / 1024:.1f} | {r['raw_node_dict_bytes'] / 1024:.1f} | {r['raw_pod_dict_bytes'] / 1024:.1f} | {r.get('code', '?')} |")
        L.append("")
    notes = meta.get("notes") or []
    if notes:
        L.append("## Notes")
        L.append("")
        for n_ in notes:
            L.append(f"- {n_}")
        L.append("")
    return "\n".join(L)


def parse_sizes(spec: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for part in spec.split(","):
        part = part.strip()
        if part in SIZE_SETS:
            out.extend(SIZES[s] for s in SIZE_SETS[part])
        elif "x" in part:
            n, m = part.split("x", 1)
            out.append((int(n), int(m)))
        else:
            raise SystemExit(f"unknown size {part!r}: quick, medium, large, all or NxM")
    return list(dict.fromkeys(out))


def parse_qps(spec: str) -> list[tuple[float, int]]:
    out = []
    for part in spec.split(","):
        if "/" in part:
            q, b = part.split("/", 1)
            out.append((float(q), int(b)))
        else:
            q_ = float(part)
            out.append((q_, 100 if q_ == 50 else int(q_)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--workload", default="basic", help=f"comma-separated: {', '.join(WORKLOADS)} (bench/README.md says what each creates)")
    ap.add_argument("--openb-nodes", default=str(OPENB / "openb_node_list_all_node.csv"), help="openb workload: the trace's node list CSV")
    ap.add_argument("--openb-pods", default=str(OPENB / "openb_pod_list_default.csv"), help="openb workload: the trace's pod list CSV")
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds: each round runs every scheduler once")
    ap.add_argument("--quiet", type=float, default=30.0, help="end a run when some pods are bound and none was for this many seconds (a trace leaves pods unschedulable); 0 = wait for all or the timeout")
    ap.add_argument("--sizes", default="quick", help="quick (500x1000), medium (1000x3000), large (5000x10000), all, or NxM; comma-separated")
    ap.add_argument("--qps", default="50,5000", help="clientConnection settings: Q or Q/BURST, comma-separated (bare 50 = 50/100, bare Q = Q/Q)")
    ap.add_argument("--schedulers", default=",".join(SCHEDULERS), help="kube-scheduler,kubesched (order of the runs)")
    ap.add_argument("--create", choices=["during", "before"], default="during", help="create pods while the scheduler runs (scheduler_perf) or before it starts")
    ap.add_argument("--creator-procs", type=int, default=2)
    ap.add_argument("--creator-threads", type=int, default=16)
    ap.add_argument("--run-timeout", type=float, default=None, help="seconds per scheduler run (default: max(300, 0.3 s per pod))")
    ap.add_argument("--no-ceiling", action="store_true")
    ap.add_argument("--no-live", action="store_true", help="skip the control-plane runs")
    ap.add_argument("--no-simulate", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--simulate-grid", default="1000x300,1000x1000,1000x3000,5000x300,5000x1000,15000x300", help="NxM list for kubesched simulate")
    ap.add_argument("--memory-grid", default="1000x3000,5000x10000", help="NxM list for bench/memory.py")
    ap.add_argument("--py-spy", action="store_true", help="one extra kubesched run per size (last qps setting) with py-spy attached; top functions in the report")
    ap.add_argument("--py-spy-rate", type=int, default=100)
    ap.add_argument("--profile-only", action="store_true", help="with --py-spy: only the profiling run (no ceiling, no measured runs)")
    ap.add_argument("--apiserver-profile", action="store_true", help="record kube-apiserver's CPU profile over each run's window (pprof, 2 s chunks; `go` on PATH merges them): top functions in the report, the profile in the run's logs (--keep-logs)")
    ap.add_argument("--kubesched-v", type=int, default=None, help="kubesched -v (default: its own default)")
    ap.add_argument("--workdir", default=None, help="scratch dir (default: a temp dir, removed at the end)")
    ap.add_argument("--keep-logs", action="store_true", help="copy each run's logs into WORKDIR/logs/")
    ap.add_argument("--out-dir", default=str(HERE / "results"))
    ap.add_argument("--note", action="append", default=[], help="a line for the report's Notes")
    ap.add_argument("--render-only", action="store_true", help="rewrite today's report from its JSON and exit")
    a = ap.parse_args(argv)

    sizes = parse_sizes(a.sizes)
    qpss = parse_qps(a.qps)
    scheds = [s.strip() for s in a.schedulers.split(",") if s.strip()]
    for s in scheds:
        if s not in SCHEDULERS:
            raise SystemExit(f"unknown scheduler {s!r}")
    tmp = None
    if a.workdir is None:
        tmp = tempfile.mkdtemp(prefix="kubesched-bench-")
        a.workdir = tmp
    Path(a.workdir).mkdir(parents=True, exist_ok=True)

    def on_term(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)

    assets = ensure_assets(quiet=True)
    mach = machine()
    date = time.strftime("%Y-%m-%d")
    out_dir = Path(a.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    base = out_dir / f"{date}-{mach['machine_id']}"
    json_path, md_path = base.with_suffix(".json"), base.with_suffix(".md")
    store: dict[str, Any] = {"results": [], "commands": [], "notes": []}
    if json_path.exists():
        with contextlib.suppress(ValueError):
            store = json.loads(json_path.read_text())
    cmdline = "python bench/bench.py " + " ".join(x for x in (argv if argv is not None else sys.argv[1:]) if not x.startswith("--note") )
    if not a.render_only and cmdline not in store.setdefault("commands", []):
        store["commands"].append(cmdline)
    for n_ in a.note:
        if n_ not in store.setdefault("notes", []):
            store["notes"].append(n_)
    meta = {"date": date, "machine": mach, "versions": versions(assets)}

    def save(new: dict[str, Any]) -> None:
        new = {k: v for k, v in new.items() if k not in ("sample_pod", "sample_node")}
        res = [r for r in store["results"] if rec_key(r) != rec_key(new)]
        res.append(new)
        store["results"] = res
        store.update(meta)
        json_path.write_text(json.dumps(store, indent=1, default=str) + "\n")
        md_path.write_text(render(res, {**meta, "commands": store["commands"], "notes": store.get("notes", [])}) + "\n")

    log(f"machine {mach}; results -> {md_path}")
    if a.render_only:
        store.update(meta)
        json_path.write_text(json.dumps(store, indent=1, default=str) + "\n")
        md_path.write_text(render(store["results"], {**meta, "commands": store["commands"], "notes": store.get("notes", [])}) + "\n")
        print(md_path)
        return 0
    user_timeout = a.run_timeout
    wls = [get_workload(x) for x in a.workload.split(",") if x.strip()]
    try:
        ceilings_done: set[tuple[int, int]] = set()
        for w in wls:
            files: dict[str, Path] | None = None
            w_sizes = sizes
            if w.name == "openb":
                files, counts = openb_files(a)
                w_sizes = [counts]
                log(f"openb: {w_sizes[0][0]} nodes, {w_sizes[0][1]} pods from {a.openb_nodes}, {a.openb_pods}")
            for size in w_sizes:
                n, m = size
                a.run_timeout = user_timeout or max(300.0, 0.3 * m)
                cap = w.max_measured(n)
                if cap is not None and m > cap:
                    log(f"warning: {w.name} at {n}x{m}: at most {cap} of the {m} measured pods can be bound ({w.sizes}); the run ends {a.quiet:g} s after the last bind")
                if w.name != "openb" and size not in ceilings_done and not a.no_live and not a.no_ceiling and not a.profile_only:
                    ceilings_done.add(size)
                    save(ceiling_run(assets, size, a))
                if a.no_live:
                    continue
                for qps, burst in [] if a.profile_only else qpss:
                    for rnd in range(1, a.rounds + 1):
                        for which in scheds:
                            save(live_run(assets, size, qps, burst, which, a, w=w, files=files, rnd=rnd))
                if a.py_spy and "kubesched" in scheds:
                    qps, burst = qpss[-1]
                    rec = live_run(assets, size, qps, burst, "kubesched", a, profile=True, w=w, files=files)
                    save({"type": "profile", "workload": w.name, "nodes": n, "pods": m, "qps": qps, "burst": burst, "create": rec["create"], "rate": a.py_spy_rate, "profile": rec.get("profile"), "throughput": rec.get("throughput"), "cpu_window_s": rec.get("cpu_window_s"), "code": rec.get("code"), "when": rec.get("when")})
        if not a.no_simulate:
            for part in a.simulate_grid.split(","):
                n_s, m_s = (int(x) for x in part.split("x"))
                save(simulate_run(n_s, m_s, timeout=1800))
        if not a.no_memory:
            for part in a.memory_grid.split(","):
                n_s, m_s = (int(x) for x in part.split("x"))
                for method, drop in (("tracemalloc", False), ("rss", False), ("tracemalloc", True)):
                    save(memory_run(n_s, m_s, method, timeout=1800, drop_mf=drop))
    finally:
        if tmp is not None and not a.keep_logs:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"wrote {md_path}")
    print(md_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
