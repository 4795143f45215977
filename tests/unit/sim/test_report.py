"""The HTML report (kubesched.runtime.sim.report) and its charts (kubesched.runtime.sim.charts),
on small hand-built Measurements whose every number is computed by hand."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from typing import Any

import pytest

from kubesched.runtime.sim import charts
from kubesched.runtime.sim.charts import downsample_steps, heatmap_png, ratio_color, time_unit
from kubesched.runtime.sim.report import render_report, run_names


def measurements(
    label: str = "least-allocated",
    seed: int | None = 1,
    *,
    interrupted: bool = False,
    nodes: tuple[str, str] = ("node-a", "node-b"),
) -> dict[str, Any]:
    """Two nodes (4 cpu each, node-b gone at 90 s), five pods, sampled at 0, 10, 30 and 90 s.
    cpu allocation: 0/8, 2/8, 6/8, 3/4 -> 0, 25 %, 75 %, 75 %."""
    return {
        "version": 1,
        "label": label,
        "workload": "w.yaml",
        "config": f"{label}.yaml",
        "seed": seed,
        "interrupted": interrupted,
        "elapsed": 0.25,
        "start": "2023-11-14T22:13:20Z",
        "end": 90.0,
        "resources": ["cpu", "memory"],
        "units": {"cpu": "cores", "memory": "bytes"},
        "series": {
            "t": [0.0, 10.0, 30.0, 90.0],
            "nodes": [2, 2, 2, 1],
            "pending": [0, 3, 1, 1],
            "running": [0, 1, 3, 2],
            "allocatable": {"cpu": [8.0, 8.0, 8.0, 4.0], "memory": [16.0, 16.0, 16.0, 8.0]},
            "requested": {"cpu": [0.0, 2.0, 6.0, 3.0], "memory": [0.0, 4.0, 8.0, 4.0]},
        },
        "totals": {
            "arrived": 5,
            "scheduled": 4,
            "completed": 1,
            "deleted": 1,
            "pending_at_end": 1,
            "attempts": 1234,
            "preemptions": 0,
            "failures": {
                "node(s) were unschedulable": 1,
                "Insufficient cpu": 2,
                "Error": 0,
            },
        },
        "wait": {"count": 4, "mean": 2.5, "p50": 0.0, "p90": 10.0, "p99": 10.0, "max": 90.0},
        "allocation": {
            "final": {"cpu": 0.75, "memory": 0.5},
            "peak": {"cpu": 0.75, "memory": 0.5},
            "mean": {"cpu": 0.5556, "memory": 0.3889},
        },
        "heatmap": {
            "nodes": list(nodes),
            "t": [0.0, 45.0],
            "allocation": {
                "cpu": [[0.0, 1.0], [0.5, None]],
                "memory": [[0.25, 0.5], [None, None]],
            },
        },
    }


_CELL = re.compile(r'<td data-run="(\d+)" data-metric="([^"]+)" data-value="([^"]*)">([^<]*)</td>')


def cells(page: str) -> dict[tuple[int, str], tuple[str, str]]:
    """(run, metric) -> (data-value, text shown) of every summary/header cell."""
    return {(int(r), m): (v, text) for r, m, v, text in _CELL.findall(page)}


def paths(page: str, chart: str) -> list[dict[str, str]]:
    """The series paths of one chart: their attributes."""
    m = re.search(rf'<svg [^>]*data-chart="{re.escape(chart)}".*?</svg>', page, re.S)
    assert m is not None, f"no chart {chart}"
    return [
        dict(re.findall(r'([\w-]+)="([^"]*)"', p))
        for p in re.findall(r"<path [^>]*>", m.group())
    ]


def decode_png(data: bytes) -> tuple[int, int, list[list[tuple[int, int, int, int]]]]:
    """width, height, rows of RGBA pixels of a PNG as heatmap_png writes it (8-bit RGBA,
    filter None on every row)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body)
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, color_type, interlace) == (8, 6, 0)
    raw = zlib.decompress(idat)
    stride = 1 + 4 * width
    rows = []
    for y in range(height):
        line = raw[y * stride : (y + 1) * stride]
        assert line[0] == 0
        rows.append([tuple(line[1 + 4 * x : 5 + 4 * x]) for x in range(width)])
    return width, height, rows  # type: ignore[return-value]


# --- downsampling ---------------------------------------------------------------------------------


def test_downsample_keeps_short_series() -> None:
    assert downsample_steps([0.0, 1.0, 2.0], [3, 1, 2]) == ([0.0, 1.0, 2.0], [3, 1, 2])
    assert downsample_steps([], []) == ([], [])


def test_downsample_drops_repeated_values_but_keeps_the_end() -> None:
    t = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    v = [1, 1, 2, 2, 2, 2]
    assert downsample_steps(t, v) == ([0.0, 2.0, 5.0], [1, 2, 2])


def test_downsample_buckets_keep_first_min_max_last() -> None:
    # 12 distinct-valued samples, at most 8 points -> 2 buckets: t 0..5 and t 6..11
    t = [float(i) for i in range(12)]
    v = [0, 5, 1, 9, 2, 3, 4, 0, 7, 1, 6, 2]
    assert downsample_steps(t, v, max_points=8) == (
        [0.0, 3.0, 5.0, 6.0, 7.0, 8.0, 11.0],
        [0, 9, 3, 4, 0, 7, 2],
    )


def test_downsample_keeps_a_lone_peak_in_a_long_series() -> None:
    n = 100_000
    t = [i * 0.5 for i in range(n)]
    v = [i % 2 for i in range(n)]  # flips every sample: nothing to drop losslessly
    v[61_234] = 50
    v[77_777] = -3
    out_t, out_v = downsample_steps(t, v)
    assert len(out_t) <= 1000
    assert (out_t[0], out_v[0]) == (0.0, 0)
    assert (out_t[-1], out_v[-1]) == (t[-1], v[-1])
    kept = dict(zip(out_t, out_v))
    assert kept[61_234 * 0.5] == 50
    assert kept[77_777 * 0.5] == -3
    # every kept sample is an original one, in time order: the step shape is the original's
    assert all(v[int(x * 2)] == y for x, y in kept.items())
    assert out_t == sorted(set(out_t))


def test_downsample_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match=r"^series lengths differ: 2 times, 1 values$"):
        downsample_steps([0.0, 1.0], [1])


def test_time_unit_by_span() -> None:
    assert time_unit(90) == ("s", 1.0)
    assert time_unit(3600) == ("min", 60.0)
    assert time_unit(86400) == ("h", 3600.0)
    assert time_unit(12_902_960) == ("d", 86400.0)


# --- heat map PNG ---------------------------------------------------------------------------------


def test_heatmap_png_decodes_to_the_scale_colours() -> None:
    width, height, rows = decode_png(heatmap_png([[0.0, 1.0, 0.5], [None, 0.25, 2.0]]))
    assert (width, height) == (3, 2)
    assert rows[0] == [(68, 1, 84, 255), (253, 231, 37, 255), (33, 145, 140, 255)]
    # None: transparent (blank); 0.25 is a scale stop; above 1 is clamped to full
    assert rows[1] == [(0, 0, 0, 0), (59, 82, 139, 255), (253, 231, 37, 255)]


def test_ratio_color_interpolates_between_stops() -> None:
    assert ratio_color(0.125) == (64, 42, 112)  # halfway between (68,1,84) and (59,82,139)
    assert ratio_color(-1.0) == (68, 1, 84)


def test_report_heatmap_image_has_the_cells_colours() -> None:
    page = render_report([measurements()])
    m = re.search(
        r'<svg [^>]*data-heatmap="cpu/0"[^>]*data-nodes="2" data-buckets="2".*?'
        r'href="data:image/png;base64,([A-Za-z0-9+/=]+)"',
        page,
        re.S,
    )
    assert m is not None
    width, height, rows = decode_png(base64.b64decode(m.group(1)))
    assert (width, height) == (2, 2)
    assert rows == [
        [(68, 1, 84, 255), (253, 231, 37, 255)],  # node-a: 0 %, 100 %
        [(33, 145, 140, 255), (0, 0, 0, 0)],  # node-b: 50 %, gone
    ]
    assert page.count('class="heatmap"') == 2  # cpu and memory
    assert '<option value="cpu">cpu</option><option value="memory">memory</option>' in page


# --- the page -------------------------------------------------------------------------------------


def test_single_run_summary_values() -> None:
    page = render_report([measurements()])
    c = cells(page)
    assert c[(0, "arrived")] == ("5", "5")
    assert c[(0, "scheduled")] == ("4", "4")
    assert c[(0, "pending_at_end")] == ("1", "1")
    assert c[(0, "completed")] == ("1", "1")
    assert c[(0, "deleted")] == ("1", "1")
    assert c[(0, "attempts")] == ("1234", "1,234")
    assert c[(0, "preemptions")] == ("0", "0")
    assert c[(0, "wait_mean")] == ("2.5", "2.5s")
    assert c[(0, "wait_p50")] == ("0.0", "0s")
    assert c[(0, "wait_p99")] == ("10.0", "10s")
    assert c[(0, "wait_max")] == ("90.0", "1m30s")
    assert c[(0, "alloc_final_cpu")] == ("0.75", "75.0 %")
    assert c[(0, "alloc_peak_memory")] == ("0.5", "50.0 %")
    assert c[(0, "alloc_mean_cpu")] == ("0.5556", "55.6 %")
    # header
    assert c[(0, "workload")] == ("w.yaml", "w.yaml")
    assert c[(0, "config")] == ("least-allocated.yaml", "least-allocated.yaml")
    assert c[(0, "seed")] == ("1", "1")
    assert c[(0, "end")] == ("90.0", "1m30s")
    assert c[(0, "elapsed")] == ("0.25", "250ms")
    assert '<html lang="en" data-mode="single" data-runs="1">' in page
    assert "<title>kubesched simulation: w.yaml (least-allocated)</title>" in page
    assert "data-interrupted" not in page


def test_default_config_and_no_seed() -> None:
    m = measurements(label="default", seed=None)
    m["config"] = None
    c = cells(render_report([m]))
    assert c[(0, "config")] == ("", "(default)")
    assert c[(0, "seed")] == ("", "\u2013")


def test_title_is_given() -> None:
    page = render_report([measurements()], title="GPU <week>")
    assert "<title>GPU &lt;week&gt;</title>" in page
    assert '<h1 id="title">GPU &lt;week&gt;</h1>' in page


def test_failures_sorted_by_count() -> None:
    page = render_report([measurements()])
    assert re.findall(r'<tr data-reason="([^"]*)">', page) == [
        "Insufficient cpu",
        "node(s) were unschedulable",
        "Error",
    ]
    assert (
        '<tr data-reason="Insufficient cpu"><th scope="row">Insufficient cpu</th>'
        '<td data-run="0" data-value="2">2</td></tr>'
    ) in page


def test_no_failures() -> None:
    m = measurements()
    m["totals"]["failures"] = {}
    assert '<p class="none" id="no-failures">No failed scheduling attempts.</p>' in render_report([m])


def test_charts_are_step_paths_on_the_time_axis() -> None:
    page = render_report([measurements()])
    for chart in ("allocation-cpu", "allocation-memory", "pending", "running", "nodes"):
        assert f'data-chart="{chart}"' in page
    (cpu,) = paths(page, "allocation-cpu")
    assert cpu["data-series"] == "least-allocated"
    assert cpu["data-points"] == "4"
    # plot x 58..586 over 0..90 s, y 238 (0 %) .. 40 (100 %): 0, 25 %, 75 %, held to 90 s
    assert cpu["d"] == "M58 238H116.7V188.5H234V89.5H586V89.5"
    (pending,) = paths(page, "pending")
    assert pending["data-max"] == "3"
    assert 'virtual time (s)</text>' in page
    assert '>100 %</text>' in page


def test_low_allocation_zooms_the_percent_axis() -> None:
    m = measurements()
    m["series"]["requested"]["cpu"] = [0.0, 0.02, 0.06, 0.03]  # 0, 0.25 %, 0.75 %, 0.75 %
    page = render_report([m])
    block = re.search(r'<svg [^>]*data-chart="allocation-cpu".*?</svg>', page, re.S)
    assert block is not None
    svg = block.group()
    assert 'data-ymax="0.01"' in svg
    assert (
        ">cpu allocation (requested / allocatable), axis zoomed to 0-1 %</text>" in svg
    )
    assert re.findall(r'dy="0.32em">([^<]*)</text>', svg) == ["0 %", "0.25 %", "0.5 %", "0.75 %", "1 %"]
    # the same drawing as 0, 25 %, 75 % on a 0-100 % axis
    (cpu,) = paths(page, "allocation-cpu")
    assert cpu["d"] == "M58 238H116.7V188.5H234V89.5H586V89.5"
    # memory reaches 50 %: 0-100 %, no zoom
    assert ">memory allocation (requested / allocatable)</text>" in page


def test_chart_series_is_downsampled() -> None:
    m = measurements()
    n = 5000
    m["series"]["t"] = [float(i) for i in range(n)]
    m["series"]["pending"] = [i % 7 for i in range(n)]
    m["series"]["pending"][4321] = 99
    m["end"] = float(n - 1)
    (pending,) = paths(render_report([m]), "pending")
    assert int(pending["data-points"]) <= 1000
    assert pending["data-max"] == "99"


def test_interrupted_warning() -> None:
    page = render_report([measurements(interrupted=True)])
    assert (
        '<p class="warning" data-interrupted="0">\u26a0 Run least-allocated was interrupted '
        "(Ctrl-C): these are the measurements up to the interruption.</p>"
    ) in page


def test_hostile_label_and_node_name_are_escaped() -> None:
    label = '<script>alert("x")</script>'
    node = '"><img src=x onerror=alert(1)>\x1b[2J'
    page = render_report([measurements(label=label, nodes=(node, "node-b"))])
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "\x1b" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert 'data-series="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"' in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\\x1b[2J" in page


def test_self_contained() -> None:
    page = render_report([measurements(), measurements("most-allocated")])
    assert re.findall(r"(?:src|href)=\"(?!data:|#)[^\"]*\"", page) == []
    assert "<link" not in page
    assert "url(http" not in page


def test_comparison_has_one_series_per_run_in_each_chart() -> None:
    a, b = measurements("least-allocated"), measurements("most-allocated")
    b["totals"]["arrived"] = 6
    b["series"]["requested"]["cpu"] = [0.0, 4.0, 8.0, 4.0]
    page = render_report([a, b])
    assert '<html lang="en" data-mode="comparison" data-runs="2">' in page
    assert "<title>kubesched comparison: w.yaml (2 runs)</title>" in page
    for chart in ("allocation-cpu", "allocation-memory", "pending", "running", "nodes"):
        ps = paths(page, chart)
        assert [p["data-series"] for p in ps] == ["least-allocated", "most-allocated"]
        assert [p["stroke"] for p in ps] == [charts.PALETTE[0], charts.PALETTE[1]]
        # the earlier run drawn wider: equal runs show as a band instead of hiding each other
        assert [p.get("style") for p in ps] == ["stroke-width:5px", None]
    assert paths(page, "allocation-cpu")[1]["data-max"] == "1.0"
    c = cells(page)
    assert (c[(0, "arrived")], c[(1, "arrived")]) == (("5", "5"), ("6", "6"))
    # one heat map per run and resource
    assert re.findall(r'data-heatmap="([^"]+)"', page) == ["cpu/0", "cpu/1", "memory/0", "memory/1"]
    assert '<figcaption>most-allocated: cpu allocation per node</figcaption>' in page


def test_run_names_with_seeds() -> None:
    ms = [measurements("a", 1), measurements("a", 2), measurements("b", 1), measurements("c", 3),
          measurements("c", 3)]
    assert run_names(ms) == ["a (seed 1)", "a (seed 2)", "b", "c #1", "c #2"]
    page = render_report(ms[:2])
    assert [p["data-series"] for p in paths(page, "pending")] == ["a (seed 1)", "a (seed 2)"]


def test_no_measurements() -> None:
    with pytest.raises(ValueError, match=r"^render_report: no Measurements to report$"):
        render_report([])
