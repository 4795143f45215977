"""bench/replay.py: the phases of a run from the child's marks, the summary over rounds, the page."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _replay() -> Any:
    spec = importlib.util.spec_from_file_location("bench_replay", ROOT / "bench" / "replay.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: the child's marks: (wall, cpu) at start and end, and per wrapped function when it was first
#: entered (``X_at``) and how long it took (``X``)
TIMING = {
    "t0": [100.0, 1.0],
    "end": [120.0, 15.0],
    "marks": {
        "load_at": [101.0, 1.5],
        "load": [2.0, 1.5],
        "replay_at": [103.5, 3.25],
        "replay": [12.0, 9.0],
        "report_at": [116.0, 12.5],
        "report": [0.5, 0.25],
    },
}


def test_phases_split_the_run_and_add_up_to_it() -> None:
    ph = _replay().phases(TIMING)
    assert ph == {
        "start": {"wall": 1.0, "cpu": 0.5},
        "load": {"wall": 2.0, "cpu": 1.5},
        "setup": {"wall": 0.5, "cpu": 0.25},
        "replay": {"wall": 12.0, "cpu": 9.0},
        "report": {"wall": 0.5, "cpu": 0.25},
        "rest": {"wall": 4.0, "cpu": 2.5},
    }
    assert sum(p["wall"] for p in ph.values()) == 20.0
    assert sum(p["cpu"] for p in ph.values()) == 14.0


def test_a_phase_the_child_never_reached_is_an_error() -> None:
    timing = {**TIMING, "marks": {k: v for k, v in TIMING["marks"].items() if not k.startswith("report")}}
    with pytest.raises(SystemExit, match=r"^the child did not reach report: did simulate change\?$"):
        _replay().phases(timing)


def _round(wall: float, cpu: float, elapsed: float, replay_cpu: float, rss: float) -> dict[str, Any]:
    ph = _replay().phases(TIMING)
    ph["replay"] = {"wall": elapsed, "cpu": replay_cpu}
    return {"wall": wall, "cpu": cpu, "maxrss_mib": rss, "elapsed": elapsed, "phases": ph,
            "loadavg_before": [1.5, 1.0, 0.5]}


def test_summary_is_median_min_max_and_pods_per_cpu_second() -> None:
    rounds = [_round(20.0, 16.0, 12.0, 8.0, 160.0), _round(22.0, 16.3, 13.0, 8.15, 170.0),
              _round(19.0, 16.6, 11.0, 8.3, 150.0)]
    s = _replay().summarize(rounds, 8152)
    assert s["wall"] == {"median": 20.0, "min": 19.0, "max": 22.0}
    assert s["elapsed"] == {"median": 12.0, "min": 11.0, "max": 13.0}
    assert s["cpu"] == {"median": 16.3, "min": 16.0, "max": 16.6}
    assert s["maxrss_mib"] == {"median": 160.0, "min": 150.0, "max": 170.0}
    assert s["pods_per_cpu_s"]["median"] == 8152 / 16.3
    assert s["replay_pods_per_cpu_s"] == {"median": 8152 / 8.15, "min": 8152 / 8.3, "max": 8152 / 8.0}
    assert s["phases"]["load"]["cpu"] == {"median": 1.5, "min": 1.5, "max": 1.5}


def test_markdown_page_has_the_figures_and_one_row_per_round() -> None:
    mod = _replay()
    rounds = [_round(20.0, 16.0, 12.0, 8.0, 160.0), _round(22.0, 16.0, 13.0, 8.0, 170.0)]
    result = {
        "date": "2026-11-24", "commit": "abc1234", "command": "kubesched simulate openb.yaml --seed 1",
        "departures": "delete-at", "nodes": 1523, "pods": 8152, "config": None, "seed": 1,
        "import": {"wall": 3.0, "cpu": 2.25},
        "machine": {"cpus": 2, "platform": "Linux", "python": "3.11.7"},
        "loadavg_before": [1.5, 1.0, 0.5], "loadavg_after": [2.0, 1.25, 0.75],
        "rounds": rounds, "totals": {"arrived": 8152}, "summary": mod.summarize(rounds, 8152),
    }
    md = mod.markdown(result).splitlines()
    assert md[0] == "# openb replay: 2026-11-24 at abc1234"
    assert "| replay wall (Measurements' `elapsed`), s | 12.50 (12.00..13.00) |" in md
    assert "| replay CPU, s | 8.00 |" in md
    assert "| replay pods / CPU-s | 1019 |" in md
    assert "| whole command pods / CPU-s | 510 |" in md
    assert "| peak RSS, MiB | 165 (160..170) |" in md
    assert "| load | 2.00 | 1.50 |" in md
    assert "| 2 | 22.00 | 16.00 | 13.00 | 8.00 | 170 | 1.5 |" in md
    assert any("load average (1, 5, 15 min) before 1.5, 1.0, 0.5, after 2.0, 1.25, 0.75." in ln for ln in md)
    assert any("1523 nodes, 8152 pods; import 3.00 s wall, 2.25 s CPU). Config: default profile" in ln for ln in md)


def test_run_child_measures_the_child_and_names_a_failure() -> None:
    mod = _replay()
    r = mod.run_child([sys.executable, "-c", "x = bytearray(64 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096])"])
    assert r["maxrss_mib"] >= 64 and r["cpu"] == r["user"] + r["sys"] and r["wall"] > 0
    with pytest.raises(SystemExit, match=r"exit code 3\nboom\n$"):
        mod.run_child([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"])
