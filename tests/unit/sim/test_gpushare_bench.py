"""bench/gpushare.py: the summary over seeds, the FGD config with typical pods, the page and the
chart, and the whole pipeline on a small trace with the default plugins (a stand-in policy)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_gpushare", ROOT / "bench" / "gpushare.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RUNS = [
    {"label": "A", "seed": 1, "elapsed": 10.0, "curve": {0: 0.0, 99: 90.0, 100: 91.0, 130: 92.0}},
    {"label": "A", "seed": 2, "elapsed": 12.0, "curve": {"0": 0.0, "100": 93.0, "130": 94.0}},  # from JSON: str keys
    {"label": "B", "seed": 1, "elapsed": 5.0, "curve": {0: 0.0, 100: 80.0, 130: None}},
]


def test_summary_over_seeds_by_hand() -> None:
    s = _bench().summarize(RUNS, ["A", "B", "C"])
    assert list(s) == ["A", "B"]  # no run of C
    a = s["A"]
    assert (a["runs"], a["seeds"]) == (2, [1, 2])
    assert a["at_100"] == {"mean": 92.0, "min": 91.0, "max": 93.0}
    assert a["at_130"] == {"mean": 93.0, "min": 92.0, "max": 94.0}
    assert a["seconds"] == {"mean": 11.0, "min": 10.0, "max": 12.0}
    assert a["curve"][0] == 0.0 and a["curve"][99] == 90.0 and a["curve"][100] == 92.0 and 50 not in a["curve"]
    assert s["B"]["at_130"] is None and s["B"]["at_100"] == {"mean": 80.0, "min": 80.0, "max": 80.0}


def test_page_and_chart() -> None:
    b = _bench()
    s = b.summarize(RUNS, ["A", "FGD"])
    info = {
        "date": "2026-11-24",
        "commit": "abc1234",
        "argv": ["--seeds", "1-2"],
        "seeds": [1, 2],
        "ratio": 1.3,
        "jobs": 2,
        "experiments": 2,
        "workloads": [{"nodes": 1213, "gpu_capacity_milli": 6212000, "pods": 10771}, {"pods": 10792}],
        "wall": 30.0,
        "cpu": 44.0,
        "load_before": "0.1 0.1 0.1",
        "load_after": "1.0 0.5 0.2",
        "machine": "2 CPUs",
        "failed": ["FGD seed 1: boom"],
        "notes": ["a note"],
    }
    md = b.page(info, s, "x.svg")
    assert "| A | 92.00 (91.00..93.00) |  | 93.00 (92.00..94.00) |  | 11.00 (10.00..12.00) |" in md
    assert "![allocation against arrived workload](x.svg)" in md and "(x-zoom.svg)" in md
    assert "- Failed experiments: 1: FGD seed 1: boom" in md and "- a note" in md
    svg = b.chart_svg(s, "t <1>")
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "t &lt;1&gt;" in svg
    assert svg.count("<path ") == 1 and 'data-series="A"' in svg
    zoom = b.chart_svg(s, "z", xlo=80, ylo=80, step=5)
    assert ">85 %<" in zoom and ">85<" in zoom


def test_fgd_config_gets_the_typical_pods(tmp_path: Path) -> None:
    b = _bench()
    cfg = tmp_path / "fgd.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "FGDScore", "args": {"x": 1}}]}, {"schedulerName": "b"}],
            }
        )
    )
    typical = [{"cpuMilli": 1000, "gpuMilli": 500, "gpuCount": 1, "gpuModel": "", "percentage": 1.0}]
    out = b.with_typical_pods(cfg, typical, tmp_path / "out.yaml")
    doc = yaml.safe_load(out.read_text())
    assert doc["profiles"][0]["pluginConfig"] == [{"name": "FGDScore", "args": {"x": 1, "typicalPods": typical}}]
    assert doc["profiles"][1]["pluginConfig"] == [{"name": "FGDScore", "args": {"typicalPods": typical}}]


NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
n0,32000,262144,0,
n1,32000,262144,2,T4
n2,32000,262144,1,T4
"""

PODS_CSV = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" + "".join(
    f"p{i},1000,1024,1,{(300, 500, 1000)[i % 3]},,LS,Running,{i},,\n" for i in range(6)
)


def test_the_pipeline_on_a_small_trace(tmp_path: Path) -> None:
    b = _bench()
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "openb_node_list_all_node.csv").write_text(NODES_CSV)
    (trace / "openb_pod_list_default.csv").write_text(PODS_CSV)
    standin = tmp_path / "standin.yaml"
    standin.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 100\n")
    out = tmp_path / "res"
    rc = b.main(["--trace", str(trace), "--seeds", "1-2", "--config", str(standin), "-j", "1", "--out-dir", str(out)])
    assert rc == 0
    files = {p.suffix if not p.name.endswith("-zoom.svg") else "zoom": p for p in out.iterdir()}
    assert sorted(files) == [".json", ".md", ".svg", "zoom"]
    md = files[".md"].read_text()
    assert "| standin |" in md and "2 experiments (1 policies x 2 seeds)" in md and "on the 2 GPU nodes (3 GPUs)" in md
    import json

    data = json.loads(files[".json"].read_text())
    assert [(r["label"], r["seed"]) for r in data["runs"]] == [("standin", 1), ("standin", 2)]
    # 3 GPUs = 3,000 milli; inflated to at most 3,900; the default plugins see the node totals only
    for r in data["runs"]:
        assert r["curve"]["0"] is None or r["curve"]["0"] >= 0
        assert max(int(k) for k in r["curve"]) <= 130


def test_policy_configs_get_the_seeded_tie_break(tmp_path: Path) -> None:
    b = _bench()
    cfg = tmp_path / "gpupacking.yaml"
    cfg.write_text((b.CONFIGS / "gpupacking.yaml").read_text())
    out = b.with_tie_break(cfg, 43, tmp_path / "out.yaml")
    doc = yaml.safe_load(out.read_text())
    assert doc["profiles"][0]["pluginConfig"] == [{"name": "GpuPackingScore", "args": {"tieBreak": "name", "tieBreakSeed": 43}}]
