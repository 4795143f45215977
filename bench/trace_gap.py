"""Why kubesched and kube-scheduler bind different numbers of pods on a trace (issue 12, item 4).

    python bench/openb.py --nodes N.csv --pods P.csv -o /tmp/openb/cluster.yaml
    python bench/trace_gap.py live kube-scheduler /tmp/openb/cluster.yaml -o ks.json
    python bench/trace_gap.py live kube-scheduler /tmp/openb/cluster.yaml -o ks-nobatch.json --feature-gates OpportunisticBatching=false
    python bench/trace_gap.py live kube-scheduler /tmp/openb/cluster.yaml -o ks-100.json --percentage 100
    python bench/trace_gap.py live kubesched /tmp/openb/cluster.yaml -o kubesched.json
    python bench/trace_gap.py simulate /tmp/openb/cluster.yaml --seeds 1,2,3 -o sim.json
    python bench/trace_gap.py replay /tmp/openb/cluster.yaml ks.json -o replay.json
    python bench/trace_gap.py replay /tmp/openb/cluster.yaml ks.json --own-order --seeds 1,2 -o own.json
    python bench/trace_gap.py replay /tmp/openb/cluster.yaml - --own-order --shuffle 1 -o shuffled.json

``live``: a fresh control plane (tests/e2e/controlplane); the cluster file's Nodes (status set
through the status subresource) and then all its Pods are created by parallel clients; then the
scheduler is started (default profile, leader election off, client qps/burst 5000). kube-scheduler
runs at ``-v=3``: its log gives the order of its scheduling attempts ("Attempting to schedule
pod"), each attempt's outcome ("Successfully bound pod to node" with evaluatedNodes /
feasibleNodes, "Unable to schedule pod; no fit; waiting") and the OpportunisticBatching hints
("OpportunisticBatch provided node hint"). The run ends when no attempt was logged (or no pod
was bound, for kubesched) for ``--quiet`` seconds. The JSON holds the bound count, every
placement and the attempts in order.

``simulate``: ``kubesched simulate`` (in process, the CLI's function) per seed.

``replay``: kube-scheduler's attempts, in its order, in kubesched's framework on the simulated
cluster: before each attempt the cluster holds exactly the pods kube-scheduler had bound before
it; kubesched filters every node and scores every feasible node (percentageOfNodesToScore 100,
so that kube-scheduler's window is a subset), and the attempt is classified:

* ``unschedulable-agree`` / ``feasibility-differs``: kube-scheduler found no node; kubesched
  neither / some;
* ``ks-node-infeasible``: kube-scheduler bound the pod to a node kubesched's Filter rejects;
* ``batched``: kube-scheduler took an OpportunisticBatching hint (evaluatedNodes 1);
* ``top-tie-global`` / ``top-tie-window``: kube-scheduler's node has the highest total of all
  feasible nodes / of the nodes in kube-scheduler's window (the first ``numFeasibleNodesToFind``
  feasible nodes from its rotating start index, rebuilt from the evaluatedNodes it logged);
* ``below-top``: a node of that window has a higher total in kubesched than kube-scheduler's node
  (a score difference, or a window that parallel filtering made different): dumped with the
  per-plugin scores of both nodes.

Then kube-scheduler's placement is applied (assume + bind in the simulated cluster). ``replay
--own-order`` instead lets kubesched choose every node (its own Scheduler, the pods in
kube-scheduler's attempt order): the bound count then differs from kubesched's own run by
ordering alone.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "controlplane"))

QPS = 5000.0

# ------------------------------------------------------------------------------------------------
# live runs


def _load_cluster(path: str) -> list[dict[str, Any]]:
    import yaml

    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def _create_all(cp: Any, objs: list[dict[str, Any]], threads: int = 16) -> dict[str, int]:
    """Create the objects with ``threads`` keep-alive clients (Nodes first, then their status,
    then Pods); returns counts. Pods are created in file order per thread; the schedulers list
    them sorted by name (etcd key order) anyway."""
    from loadgen import Client

    nodes = [o for o in objs if o["kind"] == "Node"]
    pods = [o for o in objs if o["kind"] == "Pod"]
    server = f"127.0.0.1:{cp.apiserver_port}"
    errors: list[str] = []
    counts = collections.Counter[str]()

    def work(items: list[tuple[str, str, bytes, str, int]]) -> None:
        c = Client(server, Path(cp.certs_dir))
        for method, path, body, ctype, ok in items:
            status, data = c.request(method, path, body, ctype)
            if status != ok:
                errors.append(f"{method} {path}: {status} {data[:300]!r}")
            else:
                counts[method] += 1

    def parallel(ops: list[tuple[str, str, bytes, str, int]]) -> None:
        ths = [threading.Thread(target=work, args=(ops[i::threads],)) for i in range(threads)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        if errors:
            raise RuntimeError(f"{len(errors)} errors, first: {errors[0]}")

    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ops = []
    for n in nodes:
        body = {k: v for k, v in n.items() if k != "status"}
        ops.append(("POST", "/api/v1/nodes", json.dumps(body).encode(), "application/json", 201))
    parallel(ops)
    ops = []
    for n in nodes:
        st = json.loads(json.dumps(n["status"]))
        for c in st.get("conditions") or []:
            c.setdefault("lastHeartbeatTime", now)
            c.setdefault("lastTransitionTime", now)
        ops.append(("PATCH", f"/api/v1/nodes/{n['metadata']['name']}/status", json.dumps({"status": st}).encode(), "application/merge-patch+json", 200))
    parallel(ops)
    ops = []
    for p in pods:
        ns = p["metadata"].get("namespace") or "default"
        ops.append(("POST", f"/api/v1/namespaces/{ns}/pods", json.dumps(p).encode(), "application/json", 201))
    parallel(ops)
    return dict(counts)


_KV = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def _kv(line: str) -> dict[str, str]:
    out = {}
    for k, v in _KV.findall(line):
        out[k] = json.loads(v) if v.startswith('"') else v
    return out


def parse_kube_scheduler_log(text: str) -> dict[str, Any]:
    """Attempts in order: [{"pod", "outcome": bound|unschedulable|none, "node", "evaluated",
    "feasible", "hint"}]. An attempt's outcome is the next outcome line of the same pod."""
    attempts: list[dict[str, Any]] = []
    open_: dict[str, int] = {}
    for line in text.splitlines():
        if '"Attempting to schedule pod"' in line:
            pod = _kv(line)["pod"]
            open_[pod] = len(attempts)
            attempts.append({"pod": pod, "outcome": "none"})
        elif '"OpportunisticBatch provided node hint"' in line:
            kv = _kv(line)
            i = open_.get(kv["pod"])
            if i is not None:
                attempts[i]["hint"] = kv["hint"]
        elif '"Successfully bound pod to node"' in line:
            kv = _kv(line)
            i = open_.pop(kv["pod"], None)
            if i is not None:
                attempts[i].update(outcome="bound", node=kv["node"], evaluated=int(kv["evaluatedNodes"]), feasible=int(kv["feasibleNodes"]))
        elif '"Unable to schedule pod' in line:
            kv = _kv(line)
            i = open_.pop(kv["pod"], None)
            if i is not None:
                attempts[i].update(outcome="unschedulable", err=kv.get("err", ""))
    return {"attempts": attempts}


def _config(path: Path, kubeconfig: Path, percentage: int | None) -> Path:
    """bench.py's scheduler configuration (default profile, leader election off, qps/burst
    5000), plus percentageOfNodesToScore."""
    from bench import scheduler_config

    scheduler_config(path, QPS, int(QPS), kubeconfig)
    if percentage is not None:
        cfg = json.loads(path.read_text())
        cfg["percentageOfNodesToScore"] = percentage
        path.write_text(json.dumps(cfg, indent=2) + "\n")
    return path


def live(which: str, cluster: str, out: str, feature_gates: str | None, quiet: float, workdir: str, timeout: float, percentage: int | None = None) -> dict[str, Any]:
    import shutil

    from controlplane import ControlPlane, ensure_assets

    from bench import Api, wait_url_ok

    objs = _load_cluster(cluster)
    pods = [o for o in objs if o["kind"] == "Pod"]
    wd = Path(workdir)
    shutil.rmtree(wd, ignore_errors=True)
    cp = ControlPlane(ensure_assets(), wd, start_timeout=180).start()
    procs: list[Any] = []
    rec: dict[str, Any] = {"scheduler": which, "cluster": cluster, "feature_gates": feature_gates, "percentage": percentage, "pods": len(pods)}
    try:
        t0 = time.time()
        rec["created"] = _create_all(cp, objs)
        print(f"created {rec['created']} in {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
        api = Api(cp)
        t_start = time.time()
        if which == "kube-scheduler":
            cfg = _config(wd / "ks-config.json", cp.kubeconfig, percentage)
            args = ["-v=3"] + ([f"--feature-gates={feature_gates}"] if feature_gates else [])
            proc = cp.start_kube_scheduler(cfg, extra_args=args, timeout=120)
            logp = cp.log_path(f"kube-scheduler-{cp._scheduler_count}")
        else:
            # as bench.start_scheduler starts kubesched (its config, plus the percentage)
            import subprocess

            from controlplane import _set_pdeathsig, free_port

            cfg = _config(wd / "kubesched-config.json", cp.kubeconfig, percentage)
            port = free_port()
            code = "import sys; from kubesched.runtime.cli import main; sys.argv[0] = 'kubesched'; main()"
            args = [sys.executable, "-c", code, "run", "--config", str(cfg), "--kubeconfig", str(cp.kubeconfig), "--address", f"127.0.0.1:{port}"]
            with open(wd / "logs" / "kubesched.log", "ab") as logf:
                proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, cwd=wd, start_new_session=True, preexec_fn=_set_pdeathsig)
            procs.append(proc)
            wait_url_ok(f"http://127.0.0.1:{port}/readyz", 120, proc)
            logp = wd / "logs" / "kubesched.log"
        last_change, last_sig = time.time(), None
        while time.time() - t_start < timeout:
            time.sleep(3)
            if proc.poll() is not None:
                raise RuntimeError(f"{which} exited with {proc.returncode}")
            if which == "kube-scheduler":
                text = logp.read_text(errors="replace")
                done = text.count('"Successfully bound pod') + text.count('"Unable to schedule pod')
                sig: Any = (text.count('"Attempting to schedule pod"'), done)
            else:
                items, _rv = api.list_all("/api/v1/namespaces/default/pods")
                sig = sum(1 for it in items if (it.get("spec") or {}).get("nodeName"))
            if sig != last_sig:
                last_sig, last_change = sig, time.time()
                print(f"  {time.time() - t_start:.0f}s {sig}", file=sys.stderr, flush=True)
            elif time.time() - last_change > quiet:
                break
        rec["seconds_to_quiet"] = time.time() - t_start
        items, _rv = api.list_all("/api/v1/namespaces/default/pods")
        placed = {f"default/{it['metadata']['name']}": it["spec"]["nodeName"] for it in items if (it.get("spec") or {}).get("nodeName")}
        rec["bound"] = len(placed)
        rec["placements"] = placed
        if which == "kube-scheduler":
            parsed = parse_kube_scheduler_log(logp.read_text(errors="replace"))
            rec.update(parsed)
            att = parsed["attempts"]
            rec["attempt_outcomes"] = dict(collections.Counter(a["outcome"] for a in att))
            rec["hints"] = sum(1 for a in att if "hint" in a)
            rec["hints_used"] = sum(1 for a in att if "hint" in a and a.get("node") == a["hint"])
            shutil.copy(logp, Path(out).with_suffix(".log"))
        print(f"{which} {feature_gates or ''}: bound {rec['bound']}/{len(pods)}", file=sys.stderr, flush=True)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(15)
        cp.stop()
    Path(out).write_text(json.dumps(rec, indent=1) + "\n")
    return rec



# ------------------------------------------------------------------------------------------------
# kubesched in process


def _pod_raw(obj: dict[str, Any]) -> dict[str, Any]:
    raw = json.loads(json.dumps(obj))
    md = raw.setdefault("metadata", {})
    md.setdefault("namespace", "default")
    md.setdefault("uid", f"uid-{md['namespace']}-{md['name']}")
    raw.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
    return raw


def simulate_runs(cluster: str, seeds: list[int], config: str | None = None) -> dict[str, Any]:
    from kubesched.runtime.cli.simulate_cmd import simulate

    out: dict[str, Any] = {}
    for seed in seeds:
        rep = simulate(cluster, config, seed=seed)
        out[str(seed)] = {
            "bound": rep["summary"]["scheduled"],
            "placements": {f"{p['namespace']}/{p['name']}": p.get("node") for p in rep["pods"] if p["status"] == "Scheduled"},
        }
        print(f"simulate seed {seed}: bound {out[str(seed)]['bound']}", file=sys.stderr, flush=True)
    return out


class Replayer:
    """kube-scheduler's placements applied one by one to kubesched's cache; kubesched's verdicts
    before each (every node filtered, every feasible node scored)."""

    def __init__(self, objs: list[dict[str, Any]], seed: int = 1) -> None:
        from kubesched.runtime.cli import app
        from kubesched.runtime.cli.app import load_config_file
        from kubesched.runtime.cluster.simulated import SimulatedCluster
        from kubesched.runtime.scheduler import Scheduler
        from kubesched.runtime.scheduling import Scheduling

        reg = app.registry()
        cfg = load_config_file(None, reg)
        nodes = [o for o in objs if o["kind"] == "Node"]
        self.sim = SimulatedCluster(nodes, source="trace")
        self.sched = Scheduler(cfg, reg, self.sim, seed=seed, simulated=True)
        self.sim.run(self.sched)
        self.fw = self.sched.frameworks["default-scheduler"]
        self.fw.reuse_results = False
        self.algo = Scheduling(seed, 100)
        self.pods = {f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}": _pod_raw(o) for o in objs if o["kind"] == "Pod"}

    def evaluate(self, key: str) -> tuple[Any, list[Any], dict[str, int]]:
        """(pod view, kubesched's feasible NodeInfos in snapshot order, totals by node name)."""
        from kubesched.sdk import CycleState, Pod

        pod = Pod(self.pods[key])
        snap = self.sched.cache.update_snapshot()
        state = CycleState()
        self.algo.next_start_node_index = 0
        feasible, _diag = self.algo.find_nodes_that_fit_pod(self.fw, state, pod, snap)
        totals: dict[str, int] = {}
        if feasible:
            st = self.fw.run_pre_score_plugins(state, pod, feasible)
            assert st.is_success(), st
            tot, st = self.fw.score_totals(state, pod, feasible, reuse=None)
            assert st.is_success(), st
            totals = {ni.name: t for ni, t in zip(feasible, tot)}
        self._state = state
        return pod, feasible, totals

    def details(self, pod: Any, node_names: list[str]) -> dict[str, dict[str, int]]:
        """Per-plugin weighted scores of some nodes (normalized over the given nodes only)."""
        from kubesched.sdk import CycleState

        snap = self.sched.cache.update_snapshot()
        nis = [snap.get(n) for n in node_names]
        state = CycleState()
        self.algo.find_nodes_that_fit_pod(self.fw, state, pod, snap)
        self.fw.run_pre_score_plugins(state, pod, nis)
        scores, _st = self.fw.run_score_plugins(state, pod, nis, details=True)
        return {s.name: {**{p.name: p.weighted for p in s.scores}, "total": s.total_score} for s in scores}

    def place(self, key: str, node: str) -> None:
        from kubesched.sdk import Pod

        raw = json.loads(json.dumps(self.pods[key]))
        raw["spec"]["nodeName"] = node
        self.sched.cache.add_pod(Pod(raw))

    def close(self) -> None:
        self.sched.shutdown()


def num_feasible_nodes_to_find(n: int, percentage: int | None = None) -> int:
    """kube-scheduler's numFeasibleNodesToFind (``percentage`` None or 0: adaptive)."""
    if n < 100:
        return n
    pct = percentage or max(50 - n // 125, 5)
    return max(n * pct // 100, 100)


def replay(cluster: str, ks: dict[str, Any], dump: int = 8) -> dict[str, Any]:
    objs = _load_cluster(cluster)
    r = Replayer(objs)
    order = [ni.name for ni in r.sched.cache.update_snapshot().list()]
    n = len(order)
    to_find = num_feasible_nodes_to_find(n, ks.get("percentage"))
    start = 0
    classes: collections.Counter[str] = collections.Counter()
    window_checks: collections.Counter[str] = collections.Counter()
    cases: list[dict[str, Any]] = []
    infeasible_cases: list[dict[str, Any]] = []
    diff_plugins: collections.Counter[str] = collections.Counter()
    gaps: list[int] = []
    ties_sizes: list[int] = []
    t0 = time.time()
    for k, a in enumerate(ks["attempts"]):
        key = a["pod"]
        if a["outcome"] == "none":
            classes["no-outcome"] += 1
            continue
        pod, feasible, totals = r.evaluate(key)
        if a["outcome"] == "unschedulable":
            classes["unschedulable-agree" if not feasible else "feasibility-differs"] += 1
            if feasible and len(infeasible_cases) < dump:
                infeasible_cases.append({"pod": key, "attempt": k, "kubesched_feasible": len(feasible), "ks_err": a.get("err", "")[:300]})
            continue
        node = a["node"]
        if node not in totals:
            classes["ks-node-infeasible"] += 1
            if len(infeasible_cases) < dump:
                infeasible_cases.append({"pod": key, "attempt": k, "node": node, "kubesched_feasible": len(feasible)})
            r.place(key, node)
            continue
        feas = set(totals)
        if a.get("hint") == node and a.get("evaluated") == 1:
            classes["batched"] += 1
            # kube-scheduler's ranking of the previous pod, not a new one: rank of the node now
            top = max(totals.values())
            classes["batched-at-top" if totals[node] == top else "batched-below-top"] += 1
            r.place(key, node)
            continue
        # kube-scheduler's window: from its rotating start index, sequentially
        ev = a["evaluated"]
        window: list[str] = []
        walked = 0
        for i in range(n):
            name = order[(start + i) % n]
            walked += 1
            if name in feas:
                window.append(name)
                if len(window) >= to_find:
                    break
        window_checks["same-evaluated" if walked == ev else "other-evaluated"] += 1
        window_checks["same-feasible" if len(window) == a["feasible"] else "other-feasible"] += 1
        start = (start + ev) % n
        top = max(totals.values())
        wtop = max(totals[x] for x in window) if window else top
        if totals[node] == top:
            classes["top-tie-global"] += 1
            ties_sizes.append(sum(1 for v in totals.values() if v == top))
        elif node in window and totals[node] == wtop:
            classes["top-tie-window"] += 1
        elif node not in window:
            classes["outside-window"] += 1
        else:
            classes["below-top"] += 1
            lead = max(window, key=lambda x: totals[x])
            gaps.append(wtop - totals[node])
            det = r.details(pod, [node, lead])
            for pl in det[node]:
                if pl != "total" and det[node][pl] != det[lead][pl]:
                    diff_plugins[pl] += 1
            if len(cases) < dump:
                cases.append({"pod": key, "attempt": k, "ks_node": node, "kubesched_lead": lead, "scores": det, "ks_evaluated": ev, "ks_feasible": a["feasible"]})
        r.place(key, node)
        if k % 1000 == 0:
            print(f"  replay {k}/{len(ks['attempts'])} {dict(classes)} {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    r.close()
    return {
        "attempts": len(ks["attempts"]),
        "classes": dict(classes),
        "window_checks": dict(window_checks),
        "num_feasible_nodes_to_find": to_find,
        "below_top_gap": dict(collections.Counter(gaps)),
        "below_top_plugins": dict(diff_plugins),
        "tie_sizes": {"n": len(ties_sizes), "median": sorted(ties_sizes)[len(ties_sizes) // 2] if ties_sizes else 0, "max": max(ties_sizes, default=0)},
        "below_top_cases": cases,
        "infeasible_cases": infeasible_cases,
    }


def own_order(cluster: str, ks: dict[str, Any] | None, seeds: list[int], shuffle: int | None = None) -> dict[str, Any]:
    """kubesched simulate on the cluster with its pods in kube-scheduler's first-attempt order
    (or, with ``shuffle``, in a random order drawn with that seed)."""
    import random
    import tempfile

    import yaml

    from kubesched.runtime.cli.simulate_cmd import simulate

    objs = _load_cluster(cluster)
    first: dict[str, int] = {}
    if ks is not None:
        for i, a in enumerate(ks["attempts"]):
            first.setdefault(a["pod"], i)
    else:
        keys = [f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}" for o in objs if o["kind"] == "Pod"]
        random.Random(shuffle).shuffle(keys)
        first = {k: i for i, k in enumerate(keys)}
    nodes = [o for o in objs if o["kind"] == "Node"]
    pods = [o for o in objs if o["kind"] == "Pod"]
    key = lambda o: first.get(f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}", 1 << 30)  # noqa: E731
    same = [o["metadata"]["name"] for o in pods] == [o["metadata"]["name"] for o in sorted(pods, key=key)]
    out: dict[str, Any] = {"order_equals_file_order": same, "runs": {}}
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump_all(nodes + sorted(pods, key=key), f)
    for seed in seeds:
        rep = simulate(f.name, None, seed=seed)
        out["runs"][str(seed)] = rep["summary"]["scheduled"]
        print(f"own-order seed {seed}: bound {rep['summary']['scheduled']}", file=sys.stderr, flush=True)
    Path(f.name).unlink()
    return out


# ------------------------------------------------------------------------------------------------
# CLI


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lv = sub.add_parser("live", help="run a scheduler on a real control plane")
    lv.add_argument("scheduler", choices=["kube-scheduler", "kubesched"])
    lv.add_argument("cluster")
    lv.add_argument("-o", "--output", required=True)
    lv.add_argument("--feature-gates", default=None, help="kube-scheduler --feature-gates")
    lv.add_argument("--quiet", type=float, default=30.0, help="seconds without progress that end the run")
    lv.add_argument("--timeout", type=float, default=1800.0)
    lv.add_argument("--workdir", default=None)
    lv.add_argument("--percentage", type=int, default=None, help="percentageOfNodesToScore in the scheduler's configuration")
    sm = sub.add_parser("simulate", help="kubesched simulate, per seed")
    sm.add_argument("cluster")
    sm.add_argument("--seeds", default="1,2,3")
    sm.add_argument("--config", default=None, help="KubeSchedulerConfiguration file (default profile if none)")
    sm.add_argument("-o", "--output", required=True)
    rp = sub.add_parser("replay", help="kube-scheduler's attempts in kubesched's framework")
    rp.add_argument("cluster")
    rp.add_argument("ks_json", help="the JSON of `live kube-scheduler` ('-' with --shuffle)")
    rp.add_argument("--shuffle", type=int, default=None, help="with --own-order: a random pod order drawn with this seed instead of kube-scheduler's")
    rp.add_argument("-o", "--output", required=True)
    rp.add_argument("--own-order", action="store_true", help="let kubesched choose, pods in kube-scheduler's order")
    rp.add_argument("--seeds", default="1,2,3")
    rp.add_argument("--dump", type=int, default=8)
    a = ap.parse_args(argv)
    if a.cmd == "simulate":
        res = simulate_runs(a.cluster, [int(x) for x in a.seeds.split(",")], a.config)
        Path(a.output).write_text(json.dumps(res, indent=1) + "\n")
    elif a.cmd == "replay":
        ks = None if a.ks_json == "-" else json.loads(Path(a.ks_json).read_text())
        seeds = [int(x) for x in a.seeds.split(",")]
        if a.own_order:
            res = own_order(a.cluster, ks, seeds, a.shuffle)
        else:
            assert ks is not None, "replay needs the JSON of a kube-scheduler run"
            res = replay(a.cluster, ks, a.dump)
        Path(a.output).write_text(json.dumps(res, indent=1) + "\n")
        print(json.dumps({k: v for k, v in res.items() if not k.endswith("cases")}, indent=1))
    elif a.cmd == "live":
        live(a.scheduler, a.cluster, a.output, a.feature_gates, a.quiet, a.workdir or f"/tmp/trace-gap-{a.scheduler}", a.timeout, a.percentage)
    return 0


if __name__ == "__main__":
    sys.exit(main())
