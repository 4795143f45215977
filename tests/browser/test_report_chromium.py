"""The HTML report (kubesched.runtime.sim.report) rendered in a real headless Chromium: the DOM
after the page's scripts ran (``--dump-dom``), and a screenshot decoded here (zlib, no Pillow) to
check the charts are drawn."""

from __future__ import annotations

import re
import struct
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from kubesched.runtime.sim.charts import PALETTE
from kubesched.runtime.sim.report import render_report


def measurements(label: str, seed: int, cpu: list[float]) -> dict[str, Any]:
    """Two nodes over 90 s; ``cpu``: requested cores (of 8) at 0, 10, 30 and 90 s."""
    return {
        "version": 1,
        "label": label,
        "workload": "w.yaml",
        "config": f"{label}.yaml",
        "seed": seed,
        "interrupted": False,
        "elapsed": 0.25,
        "start": "2023-11-14T22:13:20Z",
        "end": 90.0,
        "resources": ["cpu", "memory"],
        "units": {"cpu": "cores", "memory": "bytes"},
        "series": {
            "t": [0.0, 10.0, 30.0, 90.0],
            "nodes": [2, 2, 2, 2],
            "pending": [0, 3, 1, 1],
            "running": [0, 1, 3, 2],
            "allocatable": {"cpu": [8.0] * 4, "memory": [16.0] * 4},
            "requested": {"cpu": cpu, "memory": [0.0, 4.0, 8.0, 4.0]},
        },
        "totals": {
            "arrived": 5,
            "scheduled": 4,
            "completed": 1,
            "deleted": 0,
            "pending_at_end": 1,
            "attempts": 1234,
            "preemptions": 0,
            "failures": {"Insufficient cpu": 2},
        },
        "wait": {"count": 4, "mean": 2.5, "p50": 0.0, "p90": 10.0, "p99": 10.0, "max": 90.0},
        "allocation": {
            "final": {"cpu": cpu[-1] / 8, "memory": 0.25},
            "peak": {"cpu": max(cpu) / 8, "memory": 0.5},
            "mean": {"cpu": 0.5, "memory": 0.3},
        },
        "heatmap": {
            "nodes": ["node-a", "node-b"],
            "t": [0.0, 30.0, 60.0],
            "allocation": {
                "cpu": [[0.0, 0.5, 1.0], [0.25, None, 0.75]],
                "memory": [[0.0, 0.5, 0.5], [None, None, 0.5]],
            },
        },
    }


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """width, height and RGB rows (3 bytes a pixel) of an 8-bit RGB or RGBA, non-interlaced PNG
    (what Chromium's --screenshot writes), every row filter undone."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IHDR":
            header = data[pos + 8 : pos + 8 + length]
        elif kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    width, height, depth, color_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color_type in (2, 6) and interlace == 0, (depth, color_type, interlace)
    bpp = 3 if color_type == 2 else 4
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        ftype = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        else:
            assert ftype == 0, ftype
        prev = line
        rows.append(bytes(line) if bpp == 3 else bytes(line[i] for i in range(stride) if i % 4 != 3))
    return width, height, rows


def pixel_colors(rows: list[bytes], top: int, bottom: int) -> Counter[bytes]:
    """How many pixels of each RGB colour rows top..bottom hold."""
    counts: Counter[bytes] = Counter()
    for row in rows[top:bottom]:
        counts.update(row[i : i + 3] for i in range(0, len(row), 3))
    return counts


def hex_rgb(color: str) -> bytes:
    return bytes.fromhex(color.lstrip("#"))


def dump_dom(run_chromium, page: Path) -> str:
    return run_chromium("--dump-dom", page.as_uri()).stdout.decode()


def screenshot(run_chromium, page: Path, tmp_path: Path) -> tuple[int, int, list[bytes]]:
    out = tmp_path / "shot.png"
    run_chromium(f"--screenshot={out}", "--window-size=1280,2000", page.as_uri())
    return decode_png(out.read_bytes())


def chart_block(dom: str, chart: str) -> str:
    m = re.search(rf'<svg [^>]*data-chart="{re.escape(chart)}".*?</svg>', dom, re.S)
    assert m is not None, f"no chart {chart} in the DOM"
    return m.group()


def test_single_run_in_chromium(run_chromium, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_report([measurements("least-allocated", 1, [0.0, 2.0, 6.0, 6.0])]))
    dom = dump_dom(run_chromium, page)
    # the scripts ran: the page marked itself, and the selector hid the other resource's maps
    assert '<html lang="en" data-mode="single" data-runs="1" data-js="ready">' in dom
    assert "<title>kubesched simulation: w.yaml (least-allocated)</title>" in dom
    assert '<td data-run="0" data-metric="attempts" data-value="1234">1,234</td>' in dom
    assert '<td data-run="0" data-metric="wait_max" data-value="90.0">1m30s</td>' in dom
    assert '<td data-run="0" data-metric="alloc_peak_cpu" data-value="0.75">75.0 %</td>' in dom
    assert '<tr data-reason="Insufficient cpu">' in dom
    for chart in ("allocation-cpu", "allocation-memory", "pending", "running", "nodes"):
        block = chart_block(dom, chart)
        assert len(re.findall(r'<path class="series" data-series="least-allocated"', block)) == 1
    assert 'data-points="4"' in chart_block(dom, "allocation-cpu")
    assert '<div class="heat" data-resource="cpu">' in dom
    assert '<div class="heat" data-resource="memory" hidden="">' in dom
    assert len(re.findall(r'<image class="heatmap-image" [^>]*href="data:image/png;base64,', dom)) == 2

    width, height, rows = screenshot(run_chromium, page, tmp_path)
    assert (width, height) == (1280, 2000)
    colors = pixel_colors(rows, 0, height)
    assert len(colors) > 50  # text antialiasing, lines, heat map: not a blank page
    # the series colour is drawn (2 px lines over 5 charts; the legend swatches are 5 x 100 px),
    # as are heat map cells
    assert colors[hex_rgb(PALETTE[0])] > 2000
    assert colors[bytes((253, 231, 37))] > 100  # 100 % cells (node-a's last bucket)


def test_comparison_in_chromium(run_chromium, tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    runs = [
        measurements("least-allocated", 1, [0.0, 2.0, 6.0, 6.0]),
        measurements("most-allocated", 1, [0.0, 4.0, 8.0, 4.0]),
        measurements("most-allocated", 2, [0.0, 3.0, 8.0, 2.0]),
    ]
    page.write_text(render_report(runs))
    dom = dump_dom(run_chromium, page)
    assert '<html lang="en" data-mode="comparison" data-runs="3" data-js="ready">' in dom
    assert "<title>kubesched comparison: w.yaml (3 runs)</title>" in dom
    names = ["least-allocated", "most-allocated (seed 1)", "most-allocated (seed 2)"]
    for chart in ("allocation-cpu", "allocation-memory", "pending", "running", "nodes"):
        block = chart_block(dom, chart)
        assert re.findall(r'<path class="series" data-series="([^"]+)"', block) == names
        assert re.findall(r'<g class="legend" data-legend="([^"]+)"', block) == names
    assert re.findall(r'<th scope="col" data-run="\d">([^<]+)</th>', dom)[:3] == names
    assert '<td data-run="2" data-metric="alloc_final_cpu" data-value="0.25">25.0 %</td>' in dom
    assert re.findall(r'data-heatmap="([^"]+)"', dom) == [
        "cpu/0", "cpu/1", "cpu/2", "memory/0", "memory/1", "memory/2",
    ]  # fmt: skip

    width, height, rows = screenshot(run_chromium, page, tmp_path)
    colors = pixel_colors(rows, 0, height)
    # each run's colour shows beyond its legend swatches (5 x 100 px), though the runs' pending,
    # running and node lines coincide: earlier runs are drawn wider, as bands around later ones
    for color in PALETTE[:3]:
        assert colors[hex_rgb(color)] > 3000, color


# dispatched after the report's own script: a mouse at 20 s over the cpu allocation chart
# (plot x 58..586 of a 600-wide viewBox over 0..90 s); the read-out lands in a body attribute
_HOVER = """<script>
var svg=document.querySelector('svg[data-chart="allocation-cpu"]'),r=svg.getBoundingClientRect();
svg.dispatchEvent(new MouseEvent('mousemove',{clientX:r.left+(58+20/90*528)*r.width/600,
  clientY:r.top+100,bubbles:true}));
var tip=document.getElementById('tip');
document.body.dataset.tip=tip.textContent;document.body.dataset.tipShown=tip.style.display;
</script></body>"""


def test_hover_read_out_in_chromium(run_chromium, tmp_path: Path) -> None:
    page = tmp_path / "hover.html"
    runs = [
        measurements("least-allocated", 1, [0.0, 2.0, 6.0, 6.0]),
        measurements("most-allocated", 1, [0.0, 4.0, 8.0, 4.0]),
    ]
    page.write_text(render_report(runs).replace("</body>", _HOVER))
    dom = dump_dom(run_chromium, page)
    m = re.search(r'<body data-tip="([^"]*)" data-tip-shown="([^"]*)">', dom)
    assert m is not None
    lines = m.group(1).split("\n")
    assert m.group(2) == "block"
    assert lines[1:] == ["least-allocated: 25.0 %", "most-allocated: 50.0 %"]
    assert re.fullmatch(r"t = (19\.\d\d|20\.\d\d) s", lines[0]), lines[0]


def test_report_of_a_simulated_run_in_chromium(run_chromium, tmp_path: Path) -> None:
    from kubesched.runtime.sim import run_experiment

    workload = tmp_path / "tiny.yaml"
    workload.write_text(TINY_WORKLOAD)
    m = run_experiment(str(workload))
    page = tmp_path / "run.html"
    page.write_text(render_report([m]))
    dom = dump_dom(run_chromium, page)
    assert '<html lang="en" data-mode="single" data-runs="1" data-js="ready">' in dom
    # 3 pods arrive; p3 asks for more cpu than any node has and stays pending
    assert '<td data-run="0" data-metric="arrived" data-value="3">3</td>' in dom
    assert '<td data-run="0" data-metric="scheduled" data-value="2">2</td>' in dom
    assert '<td data-run="0" data-metric="pending_at_end" data-value="1">1</td>' in dom
    assert '<td data-run="0" data-metric="completed" data-value="2">2</td>' in dom
    # peak cpu: p1 (2) + p2 (3) of 8 cores
    assert '<td data-run="0" data-metric="alloc_peak_cpu" data-value="0.625">62.5 %</td>' in dom
    assert '<tr data-reason="Insufficient cpu">' in dom
    for chart in ("allocation-cpu", "allocation-memory", "pending", "running", "nodes"):
        assert len(re.findall(r'<path class="series" data-series="default"', chart_block(dom, chart))) == 1
    assert re.search(r'data-heatmap="cpu/0" [^>]*data-nodes="2"', dom)

    _, height, rows = screenshot(run_chromium, page, tmp_path)
    assert pixel_colors(rows, 0, height)[hex_rgb(PALETTE[0])] > 2000


TINY_WORKLOAD = """\
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: p1
  annotations: {sim.kubesched.io/arrive-at: "10s", sim.kubesched.io/run-for: "1m"}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: p2
  annotations: {sim.kubesched.io/arrive-at: "20s", sim.kubesched.io/run-for: "2m"}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "3", memory: 2Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: p3
  annotations: {sim.kubesched.io/arrive-at: "30s"}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "8"}}}]}
"""
