"""``kubesched compare``: one workload under several configs and seeds, side by side. The
comparison's cells on hand-built Measurements; the command on real runs (local process pool):
LeastAllocated and MostAllocated place the pods differently, and the table, CSV and the HTML
report show it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sim_inputs import WORKLOAD, fit_config

import kubesched.runtime.sim as sim
from kubesched.runtime.cli import main
from kubesched.runtime.cli.compare_cmd import side_by_side


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "w.yaml").write_text(WORKLOAD)
    (tmp_path / "least.yaml").write_text(fit_config("LeastAllocated"))
    (tmp_path / "most.yaml").write_text(fit_config("MostAllocated"))
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "fit.yaml").write_text(fit_config("MostAllocated"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def measured(label: str, seed: int | None, *, scheduled: int, wait: float, cpu: float) -> dict[str, Any]:
    """A hand-built Measurements with the fields the summary row reads."""
    return {
        "version": 1, "label": label, "workload": "w.yaml", "config": f"{label}.yaml", "seed": seed, "interrupted": False,
        "elapsed": 0.5, "resources": ["cpu", "memory"],
        "totals": {"arrived": 3, "scheduled": scheduled, "pending_at_end": 3 - scheduled, "attempts": 3, "preemptions": 0},
        "wait": {"mean": wait, "p99": wait},
        "allocation": {k: {"cpu": cpu, "memory": 0.25} for k in ("mean", "peak", "final")},
    }  # fmt: skip


def test_side_by_side_means_with_the_range_where_seeds_differ() -> None:
    results = [
        measured("least", 1, scheduled=2, wait=1.0, cpu=0.25),
        measured("least", 2, scheduled=2, wait=2.0, cpu=0.5),
        measured("least", 3, scheduled=2, wait=4.5, cpu=0.5),
        measured("most", 1, scheduled=3, wait=0.0, cpu=0.75),
        {"label": "most", "workload": "w.yaml", "config": "most.yaml", "seed": 2, "error": "boom"},
        measured("most", 3, scheduled=3, wait=0.0, cpu=0.75),
    ]
    assert side_by_side(results, ["least", "most", "never"]) == [
        ["metric", "least", "most", "never"],
        ["runs", "3", "2 (1 failed)", "0"],
        ["elapsed", "0.5", "0.5", ""],
        ["arrived", "3", "3", ""],
        ["scheduled", "2", "3", ""],
        ["pending_at_end", "1", "0", ""],
        ["attempts", "3", "3", ""],
        ["preemptions", "0", "0", ""],
        ["wait_mean", "2.5 (1..4.5)", "0", ""],
        ["wait_p99", "2.5 (1..4.5)", "0", ""],
        ["alloc_mean_cpu", "0.4167 (0.25..0.5)", "0.75", ""],
        ["alloc_mean_memory", "0.25", "0.25", ""],
        ["alloc_peak_cpu", "0.4167 (0.25..0.5)", "0.75", ""],
        ["alloc_peak_memory", "0.25", "0.25", ""],
        ["alloc_final_cpu", "0.4167 (0.25..0.5)", "0.75", ""],
        ["alloc_final_memory", "0.25", "0.25", ""],
    ]


def _table_rows(stdout: str) -> dict[str, list[str]]:
    """A rich table's body rows by their first cell."""
    rows = {}
    for line in stdout.splitlines():
        if line.startswith(("│", "┃")):
            cells = [c.strip() for c in line.strip("│┃").replace("┃", "│").split("│")]
            rows[cells[0]] = cells[1:]
    return rows


def test_compare_least_vs_most_allocated_real_runs(files: Path) -> None:
    r = CliRunner().invoke(main, ["compare", "w.yaml", "--config", "least.yaml", "--config", "most.yaml", "--default", "--seeds", "1-2", "-j", "2", "--report", "compare.html"])
    assert r.exit_code == 0, r.output
    rows = _table_rows(r.stdout)
    assert rows["metric"] == ["default", "least", "most"]
    assert rows["runs"] == ["2", "2", "2"]
    assert rows["scheduled"] == ["2", "2", "3"]
    assert rows["pending_at_end"] == ["1", "1", "0"]
    assert rows["alloc_final_cpu"] == ["0.25", "0.25", "0.75"]  # 2 of 8 cores; 6 of 8
    assert r.stdout.splitlines()[0].strip() == "kubesched compare w.yaml"
    assert r.stderr == "kubesched: wrote the report compare.html\n"
    html = (files / "compare.html").read_text()
    assert html.startswith("<!DOCTYPE html>") or html.startswith("<!doctype html>")
    for label in ("default", "least", "most"):
        assert f"{label} (seed 1)" in html and f"{label} (seed 2)" in html


def test_compare_csv_has_one_row_per_experiment(files: Path) -> None:
    r = CliRunner().invoke(main, ["compare", "w.yaml", "--config", "least.yaml", "--config", "most.yaml", "--seed", "3", "-j", "2", "-o", "csv"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("label,workload,config,seed,elapsed,arrived,scheduled,pending_at_end,")
    assert [line.split(",")[:4] + line.split(",")[5:8] for line in lines[1:]] == [
        ["least", "w.yaml", "least.yaml", "3", "3", "2", "1"],
        ["most", "w.yaml", "most.yaml", "3", "3", "3", "0"],
    ]
    assert r.stderr == ""


def test_compare_labels_configs_with_the_same_stem_apart(files: Path) -> None:
    r = CliRunner().invoke(main, ["compare", "w.yaml", "--config", "a/fit.yaml", "--config", "b/fit.yaml", "-j", "1", "-o", "json"])
    assert r.exit_code == 0, r.output
    assert [(row["label"], row["config"]) for row in json.loads(r.stdout)] == [("a/fit", "a/fit.yaml"), ("b/fit", "b/fit.yaml")]


def test_compare_without_a_config_runs_the_default_profile(files: Path) -> None:
    r = CliRunner().invoke(main, ["compare", "w.yaml", "-j", "1", "-o", "csv"])
    assert r.exit_code == 0, r.output
    assert [line.split(",")[:4] for line in r.stdout.splitlines()[1:]] == [["default", "w.yaml", "", ""]]


def test_compare_table_lists_the_failed_runs(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sim.run_experiment

    def fails_for_seed_2(workload: str, config: str | None = None, *, seed: int | None = None, **kw: Any) -> dict[str, Any]:
        if seed == 2 and config == "most.yaml":
            raise ValueError("no luck")
        return real(workload, config, seed=seed, **kw)

    monkeypatch.setattr(sim, "run_experiment", fails_for_seed_2)
    r = CliRunner().invoke(main, ["compare", "w.yaml", "--config", "least.yaml", "--config", "most.yaml", "--seeds", "1,2", "-j", "1"])
    assert r.exit_code == 1
    assert _table_rows(r.stdout)["runs"] == ["2", "1 (1 failed)"]
    assert r.stdout.splitlines()[-1] == "failed most seed 2: ValueError: no luck"
    assert r.stderr == "kubesched: 1 of 4 experiments failed\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.yaml", "--config", "least.yaml"], "kubesched: error: missing.yaml: no such file\n"),
        (["w.yaml", "--config", "nope.yaml"], "kubesched: error: nope.yaml: cannot read configuration file: No such file or directory\n"),
        (["w.yaml", "--seeds", "3-1"], "kubesched: error: --seeds 3-1: the range's start 3 is greater than its end 1\n"),
    ],
)
def test_compare_bad_arguments(files: Path, args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, ["compare", *args])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", message)


def test_compare_config_that_does_not_validate_names_file_and_field(files: Path) -> None:
    (files / "bad.yaml").write_text(fit_config("Bogus"))
    r = CliRunner().invoke(main, ["compare", "w.yaml", "--config", "least.yaml", "--config", "bad.yaml"])
    assert r.exit_code == 2
    assert r.stderr == 'kubesched: error: bad.yaml: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Bogus": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"\n'
