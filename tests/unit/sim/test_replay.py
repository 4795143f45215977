"""The timed replay (sim/replay.py, sim/controllers.py, sim/workload.py): time annotations,
controllers, node events, and plain files unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main, simulate
from kubesched.runtime.cluster.manifests import ManifestError
from kubesched.runtime.sim.workload import parse_time

ROOT = Path(__file__).resolve().parents[3]


def node(name: str, cpu: str = "4", **ann: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if ann:
        md["annotations"] = {f"sim.kubesched.io/{k.replace('_', '-')}": v for k, v in ann.items()}
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str = "1", **ann: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default"}
    if ann:
        md["annotations"] = {f"sim.kubesched.io/{k.replace('_', '-')}": v for k, v in ann.items()}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


def template(cpu: str = "1", run_for: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"labels": {"app": "x"}}
    if run_for:
        md["annotations"] = {"sim.kubesched.io/run-for": run_for}
    return {"metadata": md, "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


def run(tmp_path: Path, objs: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    return simulate(str(f), seed=1, **kw)


def rows(report: dict[str, Any]) -> dict[str, tuple[str, str | None, str]]:
    return {p["name"]: (p["status"], p["node"], p["message"]) for p in report["pods"]}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("90", 90.0), ("1.5", 1.5), (90, 90.0), ("90s", 90.0), ("1h30m", 5400.0), ("0", 0.0), ("250ms", 0.25), (" 12 ", 12.0)],
)
def test_times_are_seconds_or_go_durations(value: object, seconds: float) -> None:
    assert parse_time(value) == seconds


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("soon", 'time: invalid duration "soon"; expected a duration such as "90s" or "1h30m", or a number of seconds'),
        ("5 minutes", 'time: unknown unit " minutes" in duration "5 minutes"; expected a duration such as "90s" or "1h30m", or a number of seconds'),
        ("-5", "must not be negative, got '-5'"),
        ("-1h", "must not be negative, got '-1h'"),
        ("inf", "'inf' is not a finite number of seconds"),
        (True, 'must be a duration such as "90s" or "1h30m", or a number of seconds'),
    ],
)
def test_a_bad_time_says_why(value: object, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_time(value)
    assert str(e.value) == message


def test_a_bad_annotation_names_file_document_and_field(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as e:
        run(tmp_path, [node("n1"), pod("p", arrive_at="soon")])
    assert str(e.value).startswith(f"{tmp_path / 'w.yaml'}: document 2 (Pod default/p): metadata.annotations.sim.kubesched.io/arrive-at: time: invalid duration \"soon\"")
    with pytest.raises(ManifestError) as e:
        run(tmp_path, [node("n1", cordon_at="1h"), pod("p", drain_at="1h")])
    assert str(e.value) == f"{tmp_path / 'w.yaml'}: document 2 (Pod default/p): metadata.annotations.sim.kubesched.io/drain-at: a Pod does not take this annotation (it is for: Node)"


def test_cli_bad_annotation_is_one_line_exit_2(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all([node("n1"), pod("p", run_for="forever")]))
    r = CliRunner().invoke(main, ["simulate", str(f)])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1
    assert "metadata.annotations.sim.kubesched.io/run-for: time: invalid duration \"forever\"" in r.stderr


def test_arrivals_departures_and_run_for(tmp_path: Path) -> None:
    """p1 fills the node until it is deleted at 2h; p2 arrives at 1h and waits for it; p3 runs
    for 30m and completes; the series shows each change at its virtual time."""
    objs = [
        node("n1", cpu="2"),
        pod("p1", cpu="2", delete_at="2h"),
        pod("p2", cpu="2", arrive_at="1h", run_for="30m"),
        pod("p3", cpu="1", arrive_at="4h", run_for="30m"),
    ]
    report = run(tmp_path, objs)
    r = rows(report)
    assert r["p1"] == ("Deleted", "n1", "deleted at 2h0m0s (sim.kubesched.io/delete-at), from node n1")
    assert r["p2"] == ("Completed", "n1", "ran 30m0s on node n1 (sim.kubesched.io/run-for)")
    assert r["p3"] == ("Completed", "n1", "ran 30m0s on node n1 (sim.kubesched.io/run-for)")
    m = report["metrics"]
    s = m["series"]
    points = list(zip(s["t"], s["pending"], s["running"], s["requested"]["cpu"], strict=True))
    assert points == [
        (0.0, 0, 1, 2.0),  # p1 bound at once
        (3600.0, 1, 1, 2.0),  # p2 arrives, no room
        (7200.0, 0, 1, 2.0),  # p1 deleted, p2 bound at the same virtual time
        (9000.0, 0, 0, 0.0),  # p2 completed after 30m
        (14400.0, 0, 1, 1.0),  # p3
        (16200.0, 0, 0, 0.0),
    ]
    assert m["totals"] == {
        "arrived": 3, "scheduled": 3, "completed": 2, "deleted": 1, "pending_at_end": 0,
        "attempts": 4, "preemptions": 0, "failures": {"Insufficient cpu": 1},
    }
    assert m["wait"] == {"count": 3, "mean": 1200.0, "p50": 0.0, "p90": 3600.0, "p99": 3600.0, "max": 3600.0}
    assert m["end"] == 16200.0
    assert report["summary"]["completed"] == 2 and report["summary"]["deleted"] == 1


def test_node_arrival_cordon_drain_and_removal(tmp_path: Path) -> None:
    objs = [
        node("a", cpu="2", drain_at="2h"),
        node("b", cpu="2", arrive_at="1h", cordon_at="3h", delete_at="5h"),
        pod("p1", cpu="2"),
        pod("p2", cpu="2", arrive_at="30m"),
    ]
    report = run(tmp_path, objs)
    r = rows(report)
    # p2 waits for b (1h); p1 is evicted from a at 2h (a is cordoned, b is full); b is
    # cordoned at 3h and removed at 5h: p2 goes with it
    assert r["p1"] == ("Deleted", "a", "evicted: node a drained at 2h0m0s (sim.kubesched.io/drain-at), from node a")
    assert r["p2"] == ("Deleted", "b", "its node b was removed at 5h0m0s, from node b")
    s = report["metrics"]["series"]
    assert list(zip(s["t"], s["nodes"], s["running"], strict=True)) == [(0.0, 1, 1), (1800.0, 1, 1), (3600.0, 2, 2), (7200.0, 2, 1), (10800.0, 2, 1), (18000.0, 1, 0)]
    assert report["summary"]["nodes"] == 1


def test_a_drained_nodes_pods_come_back_through_their_owner(tmp_path: Path) -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "template": template()}}
    report = run(tmp_path, [node("a", drain_at="1h"), node("b"), rs])
    pods = report["pods"]
    assert [p["status"] for p in pods].count("Deleted") == sum(1 for p in pods if p["node"] == "a")
    alive = [p for p in pods if p["status"] == "Scheduled"]
    assert len(alive) == 2 and {p["node"] for p in alive} == {"b"}
    assert all(p["name"].startswith("web-") and len(p["name"]) == len("web-") + 5 for p in pods)


def test_deployment_makes_a_replica_set_and_its_pods(tmp_path: Path) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "x"}}, "template": template()}}
    report = run(tmp_path, [node("a"), dep])
    names = [p["name"] for p in report["pods"]]
    assert len(names) == 3 and len(set(names)) == 3
    rs_name = names[0].rsplit("-", 1)[0]
    assert all(n.rsplit("-", 1)[0] == rs_name for n in names) and rs_name.startswith("web-") and len(rs_name) == len("web-") + 10
    assert report["summary"]["scheduled"] == 3
    again = run(tmp_path, [node("a"), dep])
    assert [p["name"] for p in again["pods"]] == names  # deterministic names


def test_stateful_set_ordered_and_parallel(tmp_path: Path) -> None:
    def sts(policy: str | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"replicas": 3, "selector": {"matchLabels": {"app": "x"}}, "template": template(cpu="2")}
        if policy:
            spec["podManagementPolicy"] = policy
        return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"}, "spec": spec}

    # room for 2 of 3: OrderedReady creates db-2 only once db-1 runs; it waits, pending
    ordered = run(tmp_path, [node("a", cpu="4"), sts(None)])
    assert rows(ordered) == {"db-0": ("Scheduled", "a", ""), "db-1": ("Scheduled", "a", ""), "db-2": ("Unschedulable", None, rows(ordered)["db-2"][2])}
    # a pod that fits nowhere blocks the next ordinals under OrderedReady
    blocked = run(tmp_path, [node("a", cpu="1"), sts(None)])
    assert list(rows(blocked)) == ["db-0"]
    parallel = run(tmp_path, [node("a", cpu="1"), sts("Parallel")])
    assert list(rows(parallel)) == ["db-0", "db-1", "db-2"]


def test_job_runs_parallelism_pods_until_completions(tmp_path: Path) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default", "annotations": {"sim.kubesched.io/arrive-at": "10m"}}, "spec": {"parallelism": 2, "completions": 5, "template": template(run_for="1h")}}
    report = run(tmp_path, [node("a"), job])
    assert [p["status"] for p in report["pods"]] == ["Completed"] * 5
    m = report["metrics"]
    assert m["totals"]["completed"] == 5
    # 2 + 2 + 1 pods, each batch one hour after the previous one
    assert max(m["series"]["running"]) == 2
    assert m["end"] == 600 + 3 * 3600


def test_file_pods_owned_by_a_controller_are_adopted(tmp_path: Path) -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 2, "podManagementPolicy": "Parallel", "selector": {"matchLabels": {"app": "x"}}, "template": template()}}
    web0 = pod("web-0")
    web0["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u", "controller": True}]
    report = run(tmp_path, [node("a"), sts, web0])
    assert [p["name"] for p in report["pods"]] == ["web-0", "web-1"]  # web-0 from the file, web-1 made


def test_a_controller_without_a_template_is_only_stored(tmp_path: Path) -> None:
    """Today's files (the trace tutorial's StatefulSet has no template) keep working."""
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 1}}
    report = run(tmp_path, [node("a"), sts, pod("p")])
    assert [p["name"] for p in report["pods"]] == ["p"]


def test_a_bad_controller_names_its_field(tmp_path: Path) -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": "three", "template": template()}}
    with pytest.raises(ManifestError) as e:
        run(tmp_path, [node("a"), rs])
    assert str(e.value) == f"{tmp_path / 'w.yaml'}: document 2 (ReplicaSet default/web): spec.replicas: must be a non-negative integer, got 'three'"


def test_a_plain_file_replays_as_before(tmp_path: Path) -> None:
    """No annotations, no controllers: the pods are placed in file order 10 ms apart, the
    metrics sample each one."""
    report = run(tmp_path, [node("a", cpu="2"), pod("p1"), pod("p2"), pod("p3")])
    assert [(p["status"], p["node"]) for p in report["pods"]] == [("Scheduled", "a"), ("Scheduled", "a"), ("Unschedulable", None)]
    s = report["metrics"]["series"]
    assert list(zip(s["t"], s["pending"], s["running"], strict=True)) == [(0.0, 0, 1), (0.01, 0, 2), (0.02, 1, 2), (0.03, 1, 2)]
    assert report["metrics"]["totals"]["pending_at_end"] == 1


def test_ctrl_c_keeps_what_was_measured(tmp_path: Path) -> None:
    """A KeyboardInterrupt during the replay ends it: the report and the metrics hold what
    happened so far, and the CLI exits 130 after writing them."""
    objs = [node("a")] + [pod(f"p{i}", cpu="100m", arrive_at=f"{i}h") for i in range(10)]
    calls = []

    def progress(t: float, done: int, total: int) -> None:
        calls.append((t, done, total))
        if t >= 3 * 3600:
            raise KeyboardInterrupt

    report = run(tmp_path, objs, progress=progress)
    m = report["metrics"]
    assert m["interrupted"] is True
    # stopped right after p3 arrived at 3h, before its scheduling cycle
    assert m["totals"]["arrived"] == 4 and m["totals"]["scheduled"] == 3 and m["totals"]["pending_at_end"] == 1
    assert calls[0] == (0.0, 1, 10)
    f = tmp_path / "w.yaml"
    out = tmp_path / "m.json"

    import kubesched.runtime.cli.simulate_cmd as sc

    real = sc.simulate

    def interrupted(*a: Any, **k: Any) -> dict[str, Any]:
        return real(*a, **{**k, "progress": progress})

    sc.simulate = interrupted  # type: ignore[assignment]
    try:
        r = CliRunner().invoke(main, ["simulate", str(f), "--seed", "1", "--metrics", str(out), "-o", "json"])
    finally:
        sc.simulate = real  # type: ignore[assignment]
    assert r.exit_code == 130
    assert "kubesched: interrupted at 3h0m0s of virtual time: the output holds what was measured so far" in r.stderr
    assert json.loads(out.read_text())["interrupted"] is True
    summary = json.loads(r.stdout)["summary"]
    assert (summary["scheduled"], summary["pending"]) == (3, 7)  # p3 waits, p4..p9 never arrived


def test_metrics_file_must_be_json_or_csv(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all([node("a")]))
    r = CliRunner().invoke(main, ["simulate", str(f), "--metrics", str(tmp_path / "m.txt")])
    assert r.exit_code == 2
    assert r.stderr == f"kubesched: error: --metrics {tmp_path / 'm.txt'}: the file name must end in .json or .csv\n"


def test_progress_bar_on_request(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump_all([node("a"), pod("p", arrive_at="1h")]))
    r = CliRunner().invoke(main, ["simulate", str(f), "--progress", "-o", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["summary"]["scheduled"] == 1


# found in review -------------------------------------------------------------------------------


def test_a_template_the_cluster_refuses_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    """(It used to loop forever, making pod after refused pod.)"""
    tmpl = template()
    tmpl["metadata"]["labels"] = {"tier": 1}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default", "annotations": {"sim.kubesched.io/arrive-at": "1h"}}, "spec": {"replicas": 1, "template": tmpl}}
    with pytest.raises(ManifestError) as e:
        run(tmp_path, [node("a"), rs])
    assert str(e.value) == f"{tmp_path / 'w.yaml'}: document 2 (ReplicaSet default/web): spec.template.metadata.labels[tier]: expected a string, got an integer"


def test_a_timed_controller_is_checked_before_the_run(tmp_path: Path) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default", "annotations": {"sim.kubesched.io/arrive-at": "100h"}}, "spec": {"completions": "3", "template": template()}}
    with pytest.raises(ManifestError) as e:
        run(tmp_path, [node("a"), job])
    assert str(e.value) == f"{tmp_path / 'w.yaml'}: document 2 (Job default/j): spec.completions: must be a non-negative integer, got '3'"


def test_a_deletion_at_the_arrival_or_before_the_file_slot_still_deletes(tmp_path: Path) -> None:
    """openb has a pod created and deleted in the same second: it arrives, then leaves."""
    objs = [node("a"), pod("same", arrive_at="10s", delete_at="10s"), pod("zero", delete_at="0s"), pod("stays")]
    r = rows(run(tmp_path, objs))
    assert r["same"] == ("Deleted", None, "deleted at 10s (sim.kubesched.io/delete-at)")
    assert r["zero"] == ("Deleted", None, "deleted at 0s (sim.kubesched.io/delete-at)")
    assert r["stays"] == ("Scheduled", "a", "")


def test_a_deletion_before_the_arrival_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as e:
        run(tmp_path, [node("a"), pod("p", arrive_at="1h", delete_at="30m")])
    assert str(e.value) == f"{tmp_path / 'w.yaml'}: document 2 (Pod default/p): metadata.annotations.sim.kubesched.io/delete-at: 30m is before sim.kubesched.io/arrive-at (1h)"


def test_times_past_the_year_9999_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as e:
        run(tmp_path, [node("a"), pod("p", arrive_at="1e12")])
    assert str(e.value) == f"{tmp_path / 'w.yaml'}: document 2 (Pod default/p): metadata.annotations.sim.kubesched.io/arrive-at: '1e12' is too far: times are at most 250000000000 seconds (about 7,900 years) after the start"


def test_a_timed_controller_adopts_the_files_pods(tmp_path: Path) -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default", "annotations": {"sim.kubesched.io/arrive-at": "10s", "sim.kubesched.io/delete-at": "100s"}}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "template": template()}}
    mine = pod("rs-adopted")
    mine["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]
    report = run(tmp_path, [node("a"), rs, mine])
    r = rows(report)
    assert len(r) == 2  # the adopted pod and one more
    assert all(status == "Deleted" and why.startswith("deleted with its ReplicaSet") for status, _, why in r.values())


def test_a_recreated_stateful_set_pod_does_not_hide_its_first_copy(tmp_path: Path) -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"}, "spec": {"replicas": 2, "podManagementPolicy": "Parallel", "template": template()}}
    report = run(tmp_path, [node("n1", drain_at="1h"), node("n2", arrive_at="2h"), sts])
    got = [(p["name"], p["status"], p["node"]) for p in report["pods"]]
    assert got == [("db-0", "Deleted", "n1"), ("db-1", "Deleted", "n1"), ("db-0", "Scheduled", "n2"), ("db-1", "Scheduled", "n2")]
    assert report["summary"]["deleted"] == report["metrics"]["totals"]["deleted"] == 2


def test_a_file_pod_colliding_with_a_controllers_pod_is_the_only_error(tmp_path: Path) -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss", "namespace": "default"}, "spec": {"replicas": 1, "template": template()}}
    late = pod("ss-0", arrive_at="4h")
    report = run(tmp_path, [node("n1"), sts, late])
    got = [(p["name"], p["status"], p["message"]) for p in report["pods"]]
    assert got == [("ss-0", "Error", f'{tmp_path / "w.yaml"}: document 3 (Pod default/ss-0): Pod "ss-0" already exists'), ("ss-0", "Scheduled", "")]


def test_controllers_make_their_pods_at_the_start_before_plain_pods(tmp_path: Path) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}}, "template": template()}}
    report = run(tmp_path, [node("a", cpu="2"), dep, pod("p1"), pod("p2")])
    assert [(p["name"][:4], p["status"]) for p in report["pods"]] == [("p1", "Scheduled"), ("p2", "Unschedulable"), ("web-", "Scheduled")]
