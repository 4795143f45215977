"""``kubesched sweep`` and the engine under it (kubesched.runtime.sim.sweep): the experiment
grid, labels, seeds, the table / CSV / JSON outputs (on hand-built Measurements, with
``run_experiment`` replaced: only the grid and the table logic), error rows, Ctrl-C, the
command's one-line errors; and real runs on the local process pool."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sim_inputs import WORKLOAD, fit_config

import kubesched.runtime.sim as sim
from kubesched.runtime.cli import main
from kubesched.runtime.cli.sweep_cmd import cell, rows_csv
from kubesched.runtime.sim.sweep import (
    Experiment,
    SweepError,
    config_labels,
    experiment_grid,
    parse_seeds,
    run_experiments,
)


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """w.yaml, least.yaml, most.yaml, bad.yaml (an unsupported strategy) and noplugin.yaml
    (a plugin nobody installed) in the working directory."""
    (tmp_path / "w.yaml").write_text(WORKLOAD)
    (tmp_path / "least.yaml").write_text(fit_config("LeastAllocated"))
    (tmp_path / "most.yaml").write_text(fit_config("MostAllocated"))
    (tmp_path / "bad.yaml").write_text(fit_config("Bogus"))
    (tmp_path / "noplugin.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


BAD_MESSAGE = 'bad.yaml: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Bogus": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'


# -- hand-built Measurements ----------------------------------------------------------------------


def measurements(exp: Experiment, *, scheduled: int = 3, pending: int = 0, cpu: float = 0.5, gpu: bool = False) -> dict[str, Any]:
    resources = ["cpu", "memory", *(["nvidia.com/gpu"] if gpu else [])]
    ratio = {"cpu": cpu, "memory": 0.25, "nvidia.com/gpu": 1.0}
    return {
        "version": 1,
        "label": exp.label,
        "workload": exp.workload,
        "config": exp.config,
        "seed": exp.seed,
        "interrupted": False,
        "elapsed": 0.125,
        "start": "2023-11-14T22:13:20Z",
        "end": 60.0,
        "resources": resources,
        "units": {"cpu": "cores", "memory": "bytes", "nvidia.com/gpu": ""},
        "series": {},
        "totals": {"arrived": scheduled + pending, "scheduled": scheduled, "completed": 0, "deleted": 0, "pending_at_end": pending, "attempts": scheduled + 2 * pending, "preemptions": 0, "failures": {}},
        "wait": {"count": scheduled, "mean": 1.5, "p50": 1.0, "p90": 2.0, "p99": 2.5, "max": 3.0},
        "allocation": {k: {r: ratio[r] for r in resources} for k in ("final", "peak", "mean")},
        "heatmap": {"nodes": [], "t": [], "allocation": {}},
    }


@pytest.fixture
def fake_runs(monkeypatch: pytest.MonkeyPatch) -> list[Experiment]:
    """run_experiment replaced by hand-built Measurements: a config named most* schedules 3,
    others 2 with 1 pending; seed 2 has cpu 0.75 (else 0.5); a workload named gpu* has a GPU
    resource; a workload named crash* raises. Returns the experiments it was called with."""
    calls: list[Experiment] = []

    def fake(workload: str, config: str | None = None, *, seed: int | None = None, label: str | None = None, **_: Any) -> dict[str, Any]:
        exp = Experiment(workload, config, seed, label)
        calls.append(exp)
        if workload.startswith("crash"):
            raise RuntimeError("boom\nsecond line")
        most = config is not None and Path(config).stem.startswith("most")
        return measurements(exp, scheduled=3 if most else 2, pending=0 if most else 1, cpu=0.75 if seed == 2 else 0.5, gpu=workload.startswith("gpu"))

    monkeypatch.setattr(sim, "run_experiment", fake)
    return calls


# -- the grid -------------------------------------------------------------------------------------


def test_parse_seeds_repeats_ranges_and_lists_in_order_without_duplicates() -> None:
    assert parse_seeds([4, 1], ["1-3", "7,2", " 9 "]) == [4, 1, 2, 3, 7, 9]
    assert parse_seeds() == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("5-1", "--seeds 5-1: the range's start 5 is greater than its end 1"),
        ("a-b", "--seeds a-b: expected a seed (3), a range (1-5) or a list (1,3,5)"),
        ("1-", "--seeds 1-: expected a seed (3), a range (1-5) or a list (1,3,5)"),
    ],
)
def test_parse_seeds_refuses(spec: str, message: str) -> None:
    with pytest.raises(SweepError) as e:
        parse_seeds([], [spec])
    assert str(e.value) == message


def test_config_labels_are_stems_told_apart_by_directory_and_numbered_when_repeated(tmp_path: Path) -> None:
    assert config_labels(["least.yaml", "most.yaml", None]) == ["least", "most", "default"]
    assert config_labels([str(tmp_path / "a" / "fit.yaml"), str(tmp_path / "b" / "fit.yaml"), "other.yml"]) == ["a/fit", "b/fit", "other"]
    assert config_labels([None, str(tmp_path / "x" / "default.yaml")]) == ["default", "x/default"]
    assert config_labels(["fit.yaml", "fit.yaml", "fit.yaml"]) == ["fit", "fit#2", "fit#3"]


def test_grid_is_workload_by_config_by_seed() -> None:
    assert experiment_grid(["w1.yaml", "w2.yaml"], [None, "a.yaml"], [1, 2]) == [
        Experiment("w1.yaml", None, 1, "default"),
        Experiment("w1.yaml", None, 2, "default"),
        Experiment("w1.yaml", "a.yaml", 1, "a"),
        Experiment("w1.yaml", "a.yaml", 2, "a"),
        Experiment("w2.yaml", None, 1, "default"),
        Experiment("w2.yaml", None, 2, "default"),
        Experiment("w2.yaml", "a.yaml", 1, "a"),
        Experiment("w2.yaml", "a.yaml", 2, "a"),
    ]
    assert experiment_grid(["w.yaml"], ["a.yaml"], []) == [Experiment("w.yaml", "a.yaml", None, "a")]


# -- outputs on hand-built Measurements -----------------------------------------------------------

HEADER = "label,workload,config,seed,elapsed,arrived,scheduled,pending_at_end,attempts,preemptions,wait_mean,wait_p99,alloc_mean_cpu,alloc_mean_memory,alloc_peak_cpu,alloc_peak_memory,alloc_final_cpu,alloc_final_memory"


def test_sweep_csv_is_one_row_per_experiment_in_grid_order(files: Path, fake_runs: list[Experiment]) -> None:
    r = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--config", "least.yaml", "--config", "most.yaml", "--seeds", "1-2", "-j", "1", "-o", "csv"])
    assert r.exit_code == 0, r.output
    assert r.stdout == "\n".join(
        [
            HEADER,
            "least,w.yaml,least.yaml,1,0.125,3,2,1,4,0,1.5,2.5,0.5,0.25,0.5,0.25,0.5,0.25",
            "least,w.yaml,least.yaml,2,0.125,3,2,1,4,0,1.5,2.5,0.75,0.25,0.75,0.25,0.75,0.25",
            "most,w.yaml,most.yaml,1,0.125,3,3,0,3,0,1.5,2.5,0.5,0.25,0.5,0.25,0.5,0.25",
            "most,w.yaml,most.yaml,2,0.125,3,3,0,3,0,1.5,2.5,0.75,0.25,0.75,0.25,0.75,0.25",
            "",
        ]
    )
    assert r.stderr == ""
    assert fake_runs == experiment_grid(["w.yaml"], ["least.yaml", "most.yaml"], [1, 2])


def test_sweep_columns_are_every_resource_any_row_has(files: Path, fake_runs: list[Experiment]) -> None:
    (files / "gpu.yaml").write_text(WORKLOAD)
    r = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--workload", "gpu.yaml", "-j", "1", "-o", "csv"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        "label,workload,config,seed,elapsed,arrived,scheduled,pending_at_end,attempts,preemptions,wait_mean,wait_p99,"
        "alloc_mean_cpu,alloc_mean_memory,alloc_peak_cpu,alloc_peak_memory,alloc_final_cpu,alloc_final_memory,"
        "alloc_mean_nvidia.com/gpu,alloc_peak_nvidia.com/gpu,alloc_final_nvidia.com/gpu",
        "default,w.yaml,,,0.125,3,2,1,4,0,1.5,2.5,0.5,0.25,0.5,0.25,0.5,0.25,,,",
        "default,gpu.yaml,,,0.125,3,2,1,4,0,1.5,2.5,0.5,0.25,0.5,0.25,0.5,0.25,1.0,1.0,1.0",
    ]


def test_sweep_json_rows_and_full_measurements(files: Path, fake_runs: list[Experiment]) -> None:
    r = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--config", "most.yaml", "--seed", "7", "-j", "1", "-o", "json"])
    assert r.exit_code == 0, r.output
    row = {
        "label": "most", "workload": "w.yaml", "config": "most.yaml", "seed": 7, "elapsed": 0.125,
        "arrived": 3, "scheduled": 3, "pending_at_end": 0, "attempts": 3, "preemptions": 0, "wait_mean": 1.5, "wait_p99": 2.5,
        "alloc_mean_cpu": 0.5, "alloc_mean_memory": 0.25, "alloc_peak_cpu": 0.5, "alloc_peak_memory": 0.25, "alloc_final_cpu": 0.5, "alloc_final_memory": 0.25,
    }  # fmt: skip
    assert json.loads(r.stdout) == [row]
    full = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--config", "most.yaml", "--seed", "7", "-j", "1", "-o", "json", "--full"])
    (got,) = json.loads(full.stdout)
    m = measurements(Experiment("w.yaml", "most.yaml", 7, "most"), scheduled=3, pending=0)
    assert got == {**row, "measurements": {**m, "worker": got["measurements"]["worker"]}}
    assert got["measurements"]["worker"].endswith(f":{os.getpid()}")  # -j 1: in this process


def test_sweep_table(files: Path, fake_runs: list[Experiment]) -> None:
    r = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--config", "most.yaml", "--seed", "2", "-j", "1"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].strip() == "kubesched sweep"
    assert [c.strip() for c in lines[2].strip("┃").split("┃")] == HEADER.split(",")
    assert [c.strip() for c in lines[4].strip("│").split("│")] == ["most", "w.yaml", "most.yaml", "2", "0.125", "3", "3", "0", "3", "0", "1.5", "2.5", "0.75", "0.25", "0.75", "0.25", "0.75", "0.25"]


def test_cells_round_to_four_decimals() -> None:
    assert [cell(v) for v in (None, 2, 2.0, 1 / 3, 12902960.123456, 0.00012, True, "a\x1bb")] == ["", "2", "2", "0.3333", "12902960.1235", "0.0001", "true", "a\\x1bb"]


def test_csv_of_an_error_row_and_an_unusual_label() -> None:
    rows = [
        {"label": "a,b", "workload": "w.yaml", "config": None, "seed": 1, "elapsed": 0.5},
        {"label": "c", "workload": "w.yaml", "config": "c.yaml", "seed": None, "error": 'he said "no"'},
    ]
    assert rows_csv(rows) == 'label,workload,config,seed,elapsed,error\n"a,b",w.yaml,,1,0.5,\nc,w.yaml,c.yaml,,,"he said ""no"""\n'


# -- errors: one row each, the others go on -------------------------------------------------------


def test_a_raising_experiment_is_one_error_row(files: Path, fake_runs: list[Experiment]) -> None:
    (files / "crash.yaml").write_text(WORKLOAD)
    r = CliRunner().invoke(main, ["sweep", "--workload", "crash.yaml", "--workload", "w.yaml", "-j", "1", "-o", "csv"])
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        HEADER + ",error",
        "default,crash.yaml,,,,,,,,,,,,,,,,,RuntimeError: boom second line",
        "default,w.yaml,,,0.125,3,2,1,4,0,1.5,2.5,0.5,0.25,0.5,0.25,0.5,0.25,",
    ]
    assert r.stderr == "kubesched: 1 of 2 experiments failed\n"


@pytest.mark.parametrize("jobs", [1, 2])
def test_bad_config_and_missing_plugin_are_error_rows_real_runs(files: Path, jobs: int) -> None:
    exps = experiment_grid(["w.yaml"], ["bad.yaml", "most.yaml", "noplugin.yaml"], [1])
    res = run_experiments(exps, jobs=jobs)
    assert [r.get("error") for r in res] == [
        BAD_MESSAGE,
        None,
        res[2]["error"],
    ]
    assert res[2]["error"].startswith('noplugin.yaml: profiles[0].plugins.score.enabled[0].name: unknown plugin "NoSuchPlugin"'), res[2]["error"]
    assert res[1]["totals"]["scheduled"] == 3
    assert res.cancelled == []


def test_a_process_that_dies_is_an_error_row(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sim.run_experiment

    def dies(workload: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if workload == "dies.yaml":
            os._exit(3)
        return real(workload, *args, **kwargs)

    monkeypatch.setattr(sim, "run_experiment", dies)
    res = run_experiments([Experiment("dies.yaml", label="x"), Experiment("w.yaml", label="y")], jobs=2)
    assert res[0] == {"label": "x", "workload": "dies.yaml", "config": None, "seed": None, "error": "the experiment's process exited with code 3 before it finished"}
    assert res[1]["totals"]["scheduled"] == 2


# -- Ctrl-C ---------------------------------------------------------------------------------------


def test_ctrl_c_in_the_pool_keeps_what_finished_and_stops_the_rest(files: Path) -> None:
    """A real SIGINT to this process once the first experiment finished: the running one is
    stopped, the others never start."""
    seen: list[int | None] = []

    def progress(exp: Experiment, res: dict[str, Any]) -> None:
        seen.append(exp.seed)
        os.kill(os.getpid(), signal.SIGINT)

    exps = experiment_grid(["w.yaml"], ["most.yaml"], [1, 2, 3, 4])
    # Python's own SIGINT handler, also when the test runs under a shell that started it in
    # the background with SIGINT ignored (then the signal would never arrive)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        res = run_experiments(exps, jobs=2, progress=progress)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(seen) == 1
    assert [r["seed"] for r in res] == seen
    assert res[0]["totals"]["scheduled"] == 3
    assert sorted(e.seed for e in res.cancelled if e.seed is not None) == sorted({1, 2, 3, 4} - set(seen))
    assert res.interrupted


def test_ctrl_c_in_process_writes_what_finished_and_says_how_many_were_cancelled(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sim.run_experiment

    def interrupted_at_seed_2(workload: str, *args: Any, seed: int | None = None, **kwargs: Any) -> dict[str, Any]:
        if seed == 2:
            raise KeyboardInterrupt
        return real(workload, *args, seed=seed, **kwargs)

    monkeypatch.setattr(sim, "run_experiment", interrupted_at_seed_2)
    r = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--seeds", "1-3", "-j", "1", "-o", "csv", "--out", "out.csv"])
    assert r.exit_code == 130
    assert r.stderr == "kubesched: interrupted: 1 of 3 experiments finished, 2 cancelled\n"
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith("default,w.yaml,,1,")
    assert (files / "out.csv").read_text() == r.stdout


# -- the command's one-line errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workload", "w.yaml", "--seeds", "5-1"], "kubesched: error: --seeds 5-1: the range's start 5 is greater than its end 1\n"),
        (["--workload", "missing.yaml"], "kubesched: error: missing.yaml: no such file\n"),
        (["--workload", "w.yaml", "--config", "bad.yaml"], f"kubesched: error: {BAD_MESSAGE}\n"),
        (["--workload", "w.yaml", "-j", "0"], "kubesched: error: -j 0: expected at least 1 job\n"),
        (["--workload", "w.yaml", "--address", "tcp://127.0.0.1:1"], None),
    ],
)
def test_sweep_bad_arguments(files: Path, args: list[str], message: str | None) -> None:
    import dask.config

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        r = CliRunner().invoke(main, ["sweep", *args])
    assert r.exit_code == 2
    assert r.stdout == ""
    if message is None:  # nothing listens on port 1
        assert r.stderr == 'kubesched: error: --address "tcp://127.0.0.1:1": cannot connect to the Dask scheduler: OSError: Timed out trying to connect to tcp://127.0.0.1:1 after 1 s\n'
    else:
        assert r.stderr == message


def test_a_run_ctrl_c_stopped_in_process_is_kept_and_the_rest_cancelled(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With -j 1 a Ctrl-C reaches the run itself, which returns what it measured, marked
    ``interrupted`` (as ``simulate`` does): the sweep keeps it and starts nothing more."""
    real = sim.run_experiment

    def stopped_at_seed_2(workload: str, *args: Any, seed: int | None = None, **kwargs: Any) -> dict[str, Any]:
        m = real(workload, *args, seed=seed, **kwargs)
        return {**m, "interrupted": True} if seed == 2 else m

    monkeypatch.setattr(sim, "run_experiment", stopped_at_seed_2)
    r = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--seeds", "1-3", "-j", "1", "-o", "json", "--full"])
    assert r.exit_code == 130
    assert r.stderr == "kubesched: interrupted: 2 of 3 experiments finished (1 stopped early: what it measured so far), 1 cancelled\n"
    assert [(row["seed"], row["measurements"]["interrupted"]) for row in json.loads(r.stdout)] == [(1, False), (2, True)]
