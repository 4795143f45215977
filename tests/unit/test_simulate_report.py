"""``kubesched simulate``'s report on many pods: every pod of the file, in file order, with its
profile, node, status and message, in the table and in JSON. The expected outputs in
``data/simulate_report/`` were written by the report as it was before it found each pod's
result through a dict (a scan of every result per pod), then given the rows of the pods it
left out before (already running: Running; another scheduler's: Ignored), then the file and
document named in the message of each pod whose spec does not validate (and pod-000, bound
with an invalid spec, an Error instead of Running), the other rows unchanged; they must not
change."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main

DATA = Path(__file__).parent / "data" / "simulate_report"

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: spreader
  plugins:
    score: {disabled: [{name: ImageLocality}]}
"""


def cluster(nodes: int = 12, pods: int = 160) -> list[dict[str, Any]]:
    """Nodes of three sizes (one tainted, one cordoned); pods of the three profiles, another
    scheduler's, some already running, some too large (Unschedulable), some invalid (Error)."""
    objs: list[dict[str, Any]] = []
    for i in range(nodes):
        cpu = ("2", "4", "8")[i % 3]
        spec: dict[str, Any] = {}
        if i == 5:
            spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
        if i == 7:
            spec["unschedulable"] = True
        objs.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:02d}", "labels": {"kubernetes.io/hostname": f"node-{i:02d}", "zone": f"z{i % 2}"}},
            "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}},
        })
    for i in range(pods):
        sched = ("default-scheduler", "packer", "spreader")[i % 3]
        cpu = f"{100 + (i * 37) % 900}m"
        if i % 17 == 0:
            cpu = "16"  # fits no node
        container: dict[str, Any] = {"name": "c", "image": f"img-{i % 4}", "resources": {"requests": {"cpu": cpu, "memory": f"{64 + i % 5 * 64}Mi"}}}
        if i % 29 == 0:
            container["resources"]["requests"]["memory"] = "12x"  # invalid: Error
        pod: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i:03d}", "namespace": ("default", "team-a")[i % 2]},
            "spec": {"schedulerName": sched, "containers": [container]},
        }
        if i % 41 == 0:
            pod["spec"]["schedulerName"] = "someone-else"  # not ours: Ignored
        if i % 23 == 0:
            pod["spec"]["nodeName"] = f"node-{i % nodes:02d}"  # already running: Running
        if i % 13 == 0:
            pod["spec"]["nodeSelector"] = {"zone": "z9"}  # no such zone
        objs.append(pod)
    return objs


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The files, named relative to the working directory (messages name the cluster file)."""
    monkeypatch.chdir(tmp_path)
    c = Path("cluster.yaml")
    c.write_text(yaml.safe_dump_all(cluster()))
    cfg = Path("config.yaml")
    cfg.write_text(CONFIG)
    return c, cfg


def _run(files: tuple[Path, Path], *extra: str) -> str:
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", str(files[0]), "--config", str(files[1]), "--seed", "7", *extra], env={"COLUMNS": "120", "KUBESCHED_LOAD_PLUGINS": None, "KUBESCHED_TRACE": None})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_json_report_is_unchanged(files: tuple[Path, Path]) -> None:
    report = json.loads(_run(files, "-o", "json"))
    metrics = report.pop("metrics")  # what the run measured (wall time included): tests/unit/sim
    assert json.dumps(report, indent=2) + "\n" == (DATA / "report.json").read_text()
    assert metrics["totals"]["scheduled"] == report["summary"]["scheduled"]  # each bound once, none deleted
    assert metrics["totals"]["pending_at_end"] >= report["summary"]["unschedulable"] + report["summary"]["gated"]
    s = report["summary"]
    assert s["profiles"] == ["default-scheduler", "packer", "spreader"]
    assert s["scheduled"] > 0 and s["unschedulable"] > 0 and s["errors"] > 0
    assert s["running"] > 0 and s["ignored"] > 0
    counts = [s[k] for k in ("scheduled", "unschedulable", "errors", "running", "gated", "ignored", "nodeNotFound", "completed", "deleted", "pending")]
    assert s["pods"] == len(report["pods"]) == sum(counts) == 160


def test_table_report_is_unchanged(files: tuple[Path, Path]) -> None:
    assert _run(files) == (DATA / "report.txt").read_text()


def _random_report(rng: random.Random, n: int) -> dict[str, Any]:
    words = ["node", "0/12", "nodes", "are", "available:", "Insufficient", "cpu.", "preemption:", "x" * 70, "[bold]", "a\\\\b", ":smile:", ":not_an_emoji:", "\u8282\u70b9", "caf\u00e9", "tab\there", "line\nbreak", "", "  ", "y" * 130]
    pods = []
    for i in range(n):
        msg = " ".join(rng.choice(words) for _ in range(rng.choice([0, 0, 1, 3, 8, 25])))
        status = rng.choice(["Scheduled", "Unschedulable", "Error", "Pending", "Deleted"])
        name = rng.choice([f"pod-{i}", f"pod-[{i}]", "p" * rng.randint(1, 90), f"\u540d-{i}"])
        pods.append({"namespace": rng.choice(["default", "team-a", "n" * 40]), "name": name, "node": rng.choice([None, "node-1", "node-" + "9" * 50]), "status": status, "message": msg, "profile": rng.choice(["", "default-scheduler", "packer"])})
    return {"pods": pods, "summary": {"nodes": 3, "pods": n, "scheduled": 1, "unschedulable": 2, "errors": 3, "profiles": []}}


@pytest.mark.parametrize("columns", ["120", "200", "333"])
def test_the_fast_table_writes_what_rich_writes(columns: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from kubesched.runtime.cli import simulate_cmd
    from kubesched.runtime.cli.simulate_cmd import _print_table

    monkeypatch.setenv("COLUMNS", columns)
    laid_out: list[int] = []
    real = simulate_cmd._print_rows
    monkeypatch.setattr(simulate_cmd, "_print_rows", lambda console, table, rows: (laid_out.append(len(rows)), real(console, table, rows)))
    rng = random.Random(int(columns))
    for n in (1, 2, 5, 40, 200):
        report = _random_report(rng, n)
        _print_table(report, fast=False)
        want = capsys.readouterr().out
        _print_table(report)
        assert capsys.readouterr().out == want, n
    plain = {"pods": [{"namespace": "default", "name": f"pod-{i}", "node": "n", "status": "Scheduled", "message": "", "profile": "default-scheduler"} for i in range(30)], "summary": _random_report(rng, 0)["summary"]}
    _print_table(plain, fast=False)
    want = capsys.readouterr().out
    _print_table(plain)
    assert capsys.readouterr().out == want
    assert laid_out == [1, 2, 5, 40, 200, 30]  # the fast layout wrote every table compared


@pytest.mark.parametrize("columns", ["120", "161", "250"])
def test_the_fast_wrap_of_long_messages_is_rich_s(columns: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Long plain messages (a replay's "deleted at ..., from node ..." on every row) are cut
    into lines by rich's line breaker without rendering each: with no cell rendered by rich
    for comparison, the table is still rich's, byte for byte."""
    from kubesched.runtime.cli import simulate_cmd

    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(simulate_cmd, "_WRAP_CHECKS", 0)
    rng = random.Random(int(columns))
    words = ["deleted", "at", "3461h2m5s", "(sim.kubesched.io/delete-at),", "from", "node", "openb-node-0412", "x" * 90, "0/1523", "nodes", "are", "available:", "", " ", "y" * 200]
    pods = [
        {"namespace": "default", "name": f"pod-{i}", "node": "n", "status": "Deleted", "profile": "default-scheduler", "message": " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))}
        for i in range(300)
    ]
    report = {"pods": pods, "summary": _random_report(rng, 0)["summary"]}
    simulate_cmd._print_table(report, fast=False)
    want = capsys.readouterr().out
    simulate_cmd._print_table(report)
    assert capsys.readouterr().out == want


def test_the_run_keeps_its_objects_out_of_the_collector_and_gives_them_back(files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """simulate() freezes what it loaded for the run (as `kubesched run` does after its caches
    synced) and unfreezes it at the end, so a sweep or a test running many simulations in one
    process does not keep every earlier run's objects out of the collector."""
    import gc

    from kubesched.runtime.cli.simulate_cmd import simulate
    from kubesched.runtime.sim.replay import Replay

    frozen_during: list[int] = []
    run = Replay.run

    def spy(self: Replay) -> None:
        frozen_during.append(gc.get_freeze_count())
        run(self)

    monkeypatch.setattr(Replay, "run", spy)
    before = gc.get_freeze_count()
    report = simulate(str(files[0]), str(files[1]), seed=7)
    assert report["summary"]["scheduled"] > 0
    assert frozen_during and frozen_during[0] > before
    assert gc.get_freeze_count() == before
