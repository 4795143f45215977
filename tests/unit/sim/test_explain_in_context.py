"""``kubesched explain POD --cluster FILE`` in context: the pod's last scheduling cycle in the run
``simulate`` makes of the file. For every pod of several files, explain reports simulate's
status and node (same seed), and the explained cycle selects that node; ``--alone`` keeps the
old answer (the other pods first); explaining never changes the run."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import explain_simulated, main, simulate
from kubesched.testing import make_node, make_pod

ROOT = pathlib.Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "unit" / "data"
EXAMPLES = ROOT / "examples" / "demo"

# files ----------------------------------------------------------------------------------------

#: file order matters: "first" lands on a node before "second" and "third" fill both nodes;
#: alone (the others first), "first" finds no room
ORDER = [
    make_node().name("a").capacity(cpu="2", memory="4Gi").obj(),
    make_node().name("b").capacity(cpu="2", memory="4Gi").obj(),
    make_pod().name("first").req(cpu="1").obj(),
    make_pod().name("second").req(cpu="2").obj(),
    make_pod().name("third").req(cpu="2").obj(),
]

#: preemption: "low" is scheduled, then "urgent" evicts it (two attempts: the second on its
#: nominated node), "late" arrives after; a bound pod of the file is preempted too
PREEMPTION = [
    make_node().name("n1").capacity(cpu="4", memory="8Gi").obj(),
    make_node().name("n2").capacity(cpu="2", memory="8Gi").obj(),
    make_pod().name("placed").priority(0).req(cpu="2").node("n2").obj(),
    make_pod().name("low").priority(0).req(cpu="3").obj(),
    make_pod().name("urgent").priority(100).req(cpu="3").obj(),
    make_pod().name("high2").priority(100).req(cpu="2").obj(),
    make_pod().name("late").priority(50).req(cpu="1").obj(),
]

#: a score tie: two equal nodes; --seed decides
TIE = [
    make_node().name("x").capacity(cpu="4", memory="8Gi").obj(),
    make_node().name("y").capacity(cpu="4", memory="8Gi").obj(),
    make_pod().name("t1").req(cpu="1").obj(),
    make_pod().name("t2").req(cpu="1").obj(),
    make_pod().name("t3").req(cpu="1").obj(),
]

#: a gang (Coscheduling, with a group backoff: plugin state a dry run must not touch)
GANG_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "gang-scheduler",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]},
        },
        "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 30}}],
    }],
}


def _gang(nodes: int, members: int, *, created: bool = True) -> list[dict[str, Any]]:
    ts = {"creationTimestamp": "2024-05-01T12:00:00Z"} if created else {}
    objs: list[dict[str, Any]] = [make_node().name(f"node-{i}").capacity(cpu="4", memory="16Gi").obj() for i in range(nodes)]
    objs.append({
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
        "metadata": {"name": "trainer", "namespace": "default", "creationTimestamp": "2024-05-01T12:00:00Z"},
        "spec": {"minMember": 3, "scheduleTimeoutSeconds": 30},
    })
    for i in range(members):
        objs.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"trainer-{i}", "labels": {"scheduling.x-k8s.io/pod-group": "trainer"}, **ts},
            "spec": {"schedulerName": "gang-scheduler", "containers": [{"name": "w", "image": "t", "resources": {"requests": {"cpu": "3"}}}]},
        })
    return objs


def _write(d: pathlib.Path, name: str, objs: list[dict[str, Any]]) -> pathlib.Path:
    f = d / name
    f.write_text(yaml.safe_dump_all(objs))
    return f


def _files(d: pathlib.Path) -> dict[str, tuple[pathlib.Path, pathlib.Path | None]]:
    cfg = d / "gang-config.yaml"
    cfg.write_text(yaml.safe_dump(GANG_CONFIG))
    return {
        "demo": (EXAMPLES / "cluster.yaml", EXAMPLES / "config.yaml"),
        "explain-data": (DATA / "explain_cluster.yaml", None),
        "priority-label": (DATA / "priority_label_cluster.yaml", DATA / "priority_label_config.yaml"),
        "order": (_write(d, "order.yaml", ORDER), None),
        "preemption": (_write(d, "preemption.yaml", PREEMPTION), None),
        "tie": (_write(d, "tie.yaml", TIE), None),
        # room for two of three: every member is tried several times, none is bound
        "gang-no-room": (_write(d, "gang2.yaml", _gang(2, 3)), cfg),
        # room for three: the first members wait at Permit for the last
        "gang-fits": (_write(d, "gang3.yaml", _gang(3, 3)), cfg),
        # members created one by one: the first ones find too few siblings, then are retried
        "gang-in-file-order": (_write(d, "gang-order.yaml", _gang(3, 3, created=False)), cfg),
    }


CASES = ["demo", "explain-data", "priority-label", "order", "preemption", "tie", "gang-no-room", "gang-fits", "gang-in-file-order"]


def _pod_names(path: pathlib.Path) -> list[str]:
    return [f"{d['metadata'].get('namespace') or 'default'}/{d['metadata']['name']}" for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "Pod"]


# every pod says what simulate says ---------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [1, 7])
def test_every_pod_in_context_reports_simulates_status_and_node(tmp_path: pathlib.Path, case: str, seed: int) -> None:
    cluster, config = _files(tmp_path)[case]
    cfg = str(config) if config else None
    report = {f"{r['namespace']}/{r['name']}": r for r in simulate(str(cluster), cfg, seed=seed)["pods"]}
    names = _pod_names(cluster)
    assert sorted(report) == sorted(names)
    for pod in names:
        ex = explain_simulated(str(cluster), pod, cfg, seed=seed)
        row = report[pod]
        assert (ex.status, ex.node, ex.mode) == (row["status"], row["node"], "in-context"), pod
        if row["message"]:
            assert ex.message == row["message"], pod
        if ex.attempts:  # a cycle was explained: it chose what simulate reports
            assert ex.nodes, pod
            if row["status"] in ("Scheduled", "Deleted"):
                assert ex.selected == row["node"], pod
            elif row["status"] == "Unschedulable":
                # no node fit; or one was chosen, then the pod was rejected (a gang at Permit)
                assert not ex.error, pod
                assert ex.selected is None or ex.message != "", pod


def test_the_cases_cover_what_they_claim(tmp_path: pathlib.Path) -> None:
    """The files above hold what they are there for: an order that matters, a preemption
    victim that had a cycle, several attempts, a tie decided by the seed."""
    files = _files(tmp_path)
    order = str(files["order"][0])
    ex = explain_simulated(order, "first", seed=1)
    assert (ex.status, ex.attempts, ex.time) == ("Scheduled", 1, 0.0)
    alone = explain_simulated(order, "first", seed=1, alone=True)
    assert (alone.status, alone.mode, alone.attempts) == ("Unschedulable", "alone", None)
    assert alone.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")

    pre = str(files["preemption"][0])
    low = explain_simulated(pre, "low", seed=1)
    assert (low.status, low.node, low.selected, low.attempts, low.time) == ("Deleted", "n1", "n1", 1, 0.0)
    assert low.message.startswith("deleted during the run, from node n1: Preempted by pod uid-pod-default-urgent-")
    urgent = explain_simulated(pre, "urgent", seed=1)
    assert (urgent.status, urgent.selected, urgent.attempts) == ("Scheduled", "n1", 2)
    assert urgent.notes == ["the pod's nominated node n1 passes every Filter: the scheduling cycle takes it, without scoring"]
    assert urgent.time == 0.01  # the second pending pod of the file: 10 ms after the first
    placed = explain_simulated(pre, "placed", seed=1)
    assert (placed.status, placed.node, placed.attempts) == ("Deleted", "n2", 0)

    gang = str(files["gang-no-room"][0])
    cfg = str(files["gang-no-room"][1])
    ex = explain_simulated(gang, "trainer-2", cfg, seed=1)
    assert ex.status == "Unschedulable" and ex.attempts is not None and ex.attempts > 1
    assert ex.message.startswith("0/2 nodes are available") or "PodGroup default/trainer" in ex.message
    ex = explain_simulated(str(files["gang-in-file-order"][0]), "trainer-0", cfg, seed=1)
    # tried as trainer-0, -1 and -2 arrive (too few siblings twice), placed on the third
    assert (ex.status, ex.attempts) == ("Scheduled", 3)

    tie = str(files["tie"][0])
    picked = {explain_simulated(tie, "t1", seed=s).selected for s in range(1, 9)}
    assert picked == {"x", "y"}
    ex = explain_simulated(tie, "t1", seed=1)
    assert ex.notes == ["a tie between x, y: broken by the draw the scheduling cycle makes (--seed)"]


def test_running_and_never_scheduled_pods(tmp_path: pathlib.Path) -> None:
    f = _write(tmp_path, "c.yaml", [
        make_node().name("n1").capacity(cpu="4", memory="8Gi").obj(),
        make_pod().name("bound").req(cpu="1").node("n1").obj(),
        {**make_pod().name("other").obj(), "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "i"}]}},
    ])
    ex = explain_simulated(str(f), "bound")
    assert (ex.status, ex.node, ex.attempts, ex.nodes) == ("Running", "n1", 0, [])
    res = CliRunner().invoke(main, ["explain", "bound", "--cluster", str(f)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        "default/bound (profile default-scheduler)",
        "Running on node n1: no scheduling cycle (spec.nodeName is set in the file)",
    ]
    res = CliRunner().invoke(main, ["explain", "other", "--cluster", str(f)], env={"COLUMNS": "200"})
    assert res.stdout.splitlines()[-1] == 'Ignored: schedulerName "nobody" is not a profile of this scheduler ("default-scheduler")'


# the CLI ---------------------------------------------------------------------------------------


def test_cli_in_context_table_and_json(tmp_path: pathlib.Path) -> None:
    pre = _files(tmp_path)["preemption"][0]
    runner = CliRunner()
    res = runner.invoke(main, ["explain", "low", "--cluster", str(pre), "--seed", "1"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[1].startswith("in context: attempt 1 (the pod's last scheduling cycle), at 0s of virtual time; simulate reports Deleted on node n1: deleted during the run, from node n1: Preempted by pod uid-pod-default-urgent-")
    assert "selected node: n1" in lines
    assert lines[-1].startswith("after this cycle: Deleted on node n1: deleted during the run, from node n1: Preempted by pod ")
    res = runner.invoke(main, ["explain", "urgent", "--cluster", str(pre), "--seed", "1", "-o", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert {k: data[k] for k in ("status", "node", "selected", "mode", "attempts", "time", "message")} == {
        "status": "Scheduled", "node": "n1", "selected": "n1", "mode": "in-context", "attempts": 2, "time": 0.01, "message": "",
    }
    report = json.loads(runner.invoke(main, ["simulate", str(pre), "--seed", "1", "-o", "json"]).output)
    assert {r["name"]: (r["status"], r["node"]) for r in report["pods"]}["urgent"] == (data["status"], data["node"])


def test_cli_alone_gives_the_old_answer(tmp_path: pathlib.Path) -> None:
    order = _files(tmp_path)["order"][0]
    runner = CliRunner()
    res = runner.invoke(main, ["explain", "first", "--cluster", str(order), "--alone", "--seed", "1", "-o", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert (data["status"], data["mode"], data["attempts"], data["node"]) == ("Unschedulable", "alone", None, None)
    res = runner.invoke(main, ["explain", "first", "--cluster", str(order), "--seed", "1", "-o", "json"])
    assert json.loads(res.output)["status"] == "Scheduled"


def test_cli_alone_needs_cluster() -> None:
    res = CliRunner().invoke(main, ["explain", "p", "--alone"])
    assert res.exit_code == 2
    assert "Error: --alone needs --cluster" in res.output


def test_help_says_which_is_which() -> None:
    out = " ".join(CliRunner().invoke(main, ["explain", "--help"]).output.split())
    assert "With --cluster, in context (the default): the file is simulated as `kubesched simulate` runs it" in out
    assert "With --cluster --alone: the other pods of the file are scheduled first, and POD is explained alone against the result" in out


# explaining does not change the run --------------------------------------------------------------


def _run(cluster: pathlib.Path, config: pathlib.Path | None, seed: int, hook: Any = None) -> tuple[Any, Any]:
    from kubesched.runtime.cli import app
    from kubesched.runtime.cluster.simulated import SimulatedCluster, load_manifests
    from kubesched.runtime.scheduler import Scheduler

    reg = app.registry()
    cfg = app.load_config_file(str(config) if config else None, reg)
    sim = SimulatedCluster(load_manifests(str(cluster)), source=str(cluster))
    sched = Scheduler(cfg, reg, sim, seed=seed, simulated=True)
    if hook is not None:
        sched.before_cycle = hook(sched)
    try:
        sim.run(sched)
    finally:
        sched.shutdown()
    results = sorted((r.namespace, r.name, r.status, r.node, r.message, r.attempts) for r in sched.results.values())
    return (results, sim.binds, [(e.regarding, e.reason, e.note) for e in sim.events], sched.clock.now()), sched


@pytest.mark.parametrize("case", ["demo", "explain-data", "order", "preemption", "tie"])
def test_explaining_every_cycle_in_the_run_changes_nothing(tmp_path: pathlib.Path, case: str) -> None:
    """explain_pod with the scheduler's Scheduling, run before every cycle of a run with the
    default plugins (stateless), leaves the run as it was (the RNG is not drawn from), and
    each pod's last explanation selects the node simulate reports."""
    from kubesched.runtime.observe.explain import explain_pod

    cluster, config = _files(tmp_path)[case]
    last: dict[str, Any] = {}

    def hook(sched: Any) -> Any:
        def explain_each(qpi: Any) -> None:
            fw = sched.frameworks.get(qpi.pod.scheduler_name)
            if fw is not None and not sched.cache.has_pod(qpi.pod.uid):
                last[qpi.pod.key] = explain_pod(fw, sched.cache.update_snapshot(), qpi.pod, cycle=sched.algo)

        return explain_each

    for seed in (1, 2, 3):
        last.clear()
        plain, _ = _run(cluster, config, seed)
        explained, _ = _run(cluster, config, seed, hook)
        assert explained == plain
        report = simulate(str(cluster), str(config) if config else None, seed=seed)["pods"]
        for row in report:
            key = f"{row['namespace']}/{row['name']}"
            if row["status"] == "Scheduled":
                assert last[key].selected == row["node"], key


def test_the_counting_run_is_simulates_run(tmp_path: pathlib.Path) -> None:
    """In context, explain's first run (the one whose outcome it reports) has only a counting
    hook: with or without it, the run is the same; the gang's backoff (plugin state) is why the
    explained cycle is replayed in a second run instead of dry-run inside the first."""
    from kubesched.runtime.cli.explain_cmd import _target_cycles

    cluster, config = _files(tmp_path)["gang-no-room"]
    seen: list[tuple[int, int]] = []
    plain, _ = _run(cluster, config, 1)
    counted, _ = _run(cluster, config, 1, lambda s: _target_cycles(s, "default", "trainer-2", lambda n, q: seen.append((n, q.attempts))))
    assert counted == plain
    assert [a for _, a in seen] == list(range(1, len(seen) + 1)) and len(seen) > 1
