"""Charts for the HTML report, drawn by hand: inline SVG step charts and PNG heat maps.

No charting library (matplotlib is not a dependency; docs/report.md says what was compared).

* ``downsample_steps`` — a step series cut to at most ~``max_points`` samples, keeping its peaks;
* ``step_chart`` — an SVG chart of one or more step series over virtual time (axes, ticks,
  legend), one ``<path data-series=... data-points=...>`` per series;
* ``heatmap_png`` — a nodes x buckets matrix of ratios as a PNG (pure Python: zlib + struct),
  one pixel per cell, transparent where the node did not exist;
* ``heatmap_svg`` — that PNG in an SVG with node and time axes; ``color_scale_svg`` its legend.

Every string drawn comes from the caller already escaped or is escaped here (``html.escape``).
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from collections.abc import Sequence
from html import escape
from itertools import pairwise

__all__ = [
    "PALETTE",
    "color_scale_svg",
    "downsample_steps",
    "heatmap_png",
    "heatmap_svg",
    "ratio_color",
    "step_chart",
    "time_unit",
]

#: distinct series colours (Tableau 10), one per run in a comparison
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip

#: the heat map's colour scale: (ratio, (r, g, b)) stops, viridis-like (dark = empty, yellow = full)
SCALE_STOPS: tuple[tuple[float, tuple[int, int, int]], ...] = (
    (0.0, (68, 1, 84)),
    (0.25, (59, 82, 139)),
    (0.5, (33, 145, 140)),
    (0.75, (94, 201, 98)),
    (1.0, (253, 231, 37)),
)

#: tops of a percent axis zoomed in on low ratios (below 50 %)
PERCENT_ZOOM = (0.01, 0.02, 0.05, 0.1, 0.25, 0.5)

WIDTH = 600
HEIGHT = 280
_MARGIN_LEFT = 58
_MARGIN_RIGHT = 14
_MARGIN_TOP = 40
_MARGIN_BOTTOM = 42


# --- downsampling ---------------------------------------------------------------------------------


def downsample_steps(
    t: Sequence[float], v: Sequence[float], max_points: int = 1000
) -> tuple[list[float], list[float]]:
    """A step series (each value holds until the next sample) with at most ``max_points``
    samples. First, samples that repeat the previous value are dropped (lossless for a step
    function; the last sample stays, it marks where the series ends). If more than ``max_points``
    remain, the time span is cut into ``max_points // 4`` equal buckets and each bucket keeps its
    first, minimum, maximum and last samples, in time order: every peak and trough is drawn at
    its time and value, and each bucket ends on the value the next one starts from."""
    n = len(t)
    if n != len(v):
        raise ValueError(f"series lengths differ: {n} times, {len(v)} values")
    if n <= 2:
        return list(t), list(v)
    keep_t = [t[0]]
    keep_v = [v[0]]
    last = v[0]
    for i in range(1, n - 1):
        x = v[i]
        if x != last:
            keep_t.append(t[i])
            keep_v.append(x)
            last = x
    keep_t.append(t[n - 1])
    keep_v.append(v[n - 1])
    n = len(keep_t)
    if n <= max_points:
        return keep_t, keep_v
    buckets = max(1, max_points // 4)
    t0 = keep_t[0]
    span = keep_t[-1] - t0
    scale = buckets / span if span > 0 else 0.0
    out_t: list[float] = []
    out_v: list[float] = []
    i = 0
    while i < n:
        b = min(int((keep_t[i] - t0) * scale), buckets - 1)
        lo = hi = i
        j = i + 1
        while j < n and min(int((keep_t[j] - t0) * scale), buckets - 1) == b:
            x = keep_v[j]
            if x < keep_v[lo]:
                lo = j
            elif x > keep_v[hi]:
                hi = j
            j += 1
        for k in sorted({i, lo, hi, j - 1}):
            out_t.append(keep_t[k])
            out_v.append(keep_v[k])
        i = j
    return out_t, out_v


# --- axes -----------------------------------------------------------------------------------------


def time_unit(span: float) -> tuple[str, float]:
    """The unit a time axis of ``span`` virtual seconds is labelled in: (name, seconds)."""
    if span <= 180:
        return "s", 1.0
    if span <= 3 * 3600:
        return "min", 60.0
    if span <= 3 * 86400:
        return "h", 3600.0
    return "d", 86400.0


def nice_step(raw: float, *, integer: bool = False) -> float:
    """The smallest round step (1, 2, 2.5 or 5 times a power of ten; whole numbers when
    ``integer``) at least ``raw``."""
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    steps = (1, 2, 5, 10) if integer and mag < 10 else (1, 2, 2.5, 5, 10)
    step = next(m * mag for m in steps if m * mag >= raw)
    return max(step, 1.0) if integer else step


def nice_ticks(lo: float, hi: float, target: int = 6, *, integer: bool = False) -> list[float]:
    """Round tick values (see ``nice_step``) covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    step = nice_step((hi - lo) / target, integer=integer)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    k = 0
    while first + k * step <= hi + step * 1e-9:
        ticks.append(round(first + k * step, 10))
        k += 1
    return ticks


def _num(x: float) -> str:
    """A tick label: integers without a decimal point, others with up to 3 significant digits."""
    if x == int(x):
        return f"{int(x):,}"
    return f"{x:.3g}"


def _f(x: float) -> str:
    """A coordinate, 1 decimal."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


# --- step charts ----------------------------------------------------------------------------------


def step_chart(
    chart_id: str,
    title: str,
    series: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    percent: bool = False,
    y_label: str = "",
    max_points: int = 1000,
) -> str:
    """An SVG chart of step series ``(name, t, v)`` over virtual time, overlaid, one colour each
    (``PALETTE`` in order). ``percent``: values are ratios drawn 0-100 %, or, when every value
    stays below 50 %, 0 to the first of 1, 2, 5, 10, 25, 50 % at least 8 % above the highest
    (the title says so). The ``<svg>`` carries
    ``data-chart=chart_id``; each line is a ``<path data-series=name data-points=N>`` (N: the
    samples drawn after ``downsample_steps``)."""
    drawn = [(name, *downsample_steps(t, v, max_points)) for name, t, v in series]
    t_end = max((t[-1] for _, t, _ in drawn if t), default=0.0)
    t_start = min((t[0] for _, t, _ in drawn if t), default=0.0)
    t_start = min(t_start, 0.0)
    if t_end <= t_start:
        t_end = t_start + 1.0
    unit, unit_s = time_unit(t_end - t_start)
    if percent:
        top = max((max(v) for _, _, v in drawn if v), default=0.0)
        y_hi = next((z for z in PERCENT_ZOOM if z >= top * 1.08), 1.0)
        if y_hi < 1.0:
            title = f"{title}, axis zoomed to 0-{y_hi * 100:g} %"
    else:
        top = max((max(v) for _, _, v in drawn if v), default=0.0)
        # counts: whole-number ticks, the top tick at least 8 % above the highest value
        padded = top * 1.08 if top > 0 else 1.0
        step = nice_step(padded / 5, integer=True)
        y_hi = math.ceil(padded / step - 1e-9) * step
    x0, x1 = _MARGIN_LEFT, WIDTH - _MARGIN_RIGHT
    y0, y1 = HEIGHT - _MARGIN_BOTTOM, _MARGIN_TOP
    sx = (x1 - x0) / (t_end - t_start)
    sy = (y0 - y1) / y_hi

    def px(t: float) -> float:
        return x0 + (t - t_start) * sx

    def py(v: float) -> float:
        return y0 - min(max(v, 0.0), y_hi) * sy

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{escape(chart_id)}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'data-x0="{x0}" data-x1="{x1}" data-t0="{t_start!r}" data-t1="{t_end!r}" '
        f'data-y0="{y0}" data-y1="{y1}" data-ymax="{y_hi!r}" data-percent="{int(percent)}" '
        f'data-unit="{unit}" data-unit-seconds="{unit_s:g}" '
        f'role="img" aria-label="{escape(title)}">',
        f'<text class="title" x="{x0}" y="14">{escape(title)}</text>',
        f'<rect class="plot" x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}"/>',
    ]
    # y axis
    y_ticks = [y_hi * k / 4 for k in range(5)] if percent else nice_ticks(0.0, y_hi, 5, integer=True)
    for v in y_ticks:
        y = _f(py(v))
        label = f"{round(v * 100, 4):g} %" if percent else _num(v)
        out.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{y}" y2="{y}"/>')
        out.append(f'<text class="tick" x="{x0 - 6}" y="{y}" text-anchor="end" dy="0.32em">{label}</text>')
    if y_label:
        out.append(
            f'<text class="axis" transform="translate(13 {(y0 + y1) / 2:.0f}) rotate(-90)" '
            f'text-anchor="middle">{escape(y_label)}</text>'
        )
    # x axis
    for tv in nice_ticks(t_start / unit_s, t_end / unit_s):
        x = _f(px(tv * unit_s))
        out.append(f'<line class="tickline" x1="{x}" x2="{x}" y1="{y0}" y2="{y0 + 5}"/>')
        out.append(f'<text class="tick" x="{x}" y="{y0 + 17}" text-anchor="middle">{_num(tv)}</text>')
    out.append(
        f'<text class="axis" x="{(x0 + x1) / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">'
        f"virtual time ({unit})</text>"
    )
    out.append(f'<line class="axisline" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>')
    # series
    for k, (name, ts, vs) in enumerate(drawn):
        color = PALETTE[k % len(PALETTE)]
        if not ts:
            out.append(f'<path class="series" data-series="{escape(name)}" data-points="0" d=""/>')
            continue
        # overlaid runs: earlier lines drawn wider, so a run equal to a later one shows as a band
        # around it instead of disappearing under it
        wider = min(len(drawn) - 1 - k, 3)
        width = f' style="stroke-width:{2 + 3 * wider:g}px"' if wider else ""
        parts = [f"M{_f(px(ts[0]))} {_f(py(vs[0]))}"]
        for i in range(1, len(ts)):
            parts.append(f"H{_f(px(ts[i]))}V{_f(py(vs[i]))}")
        out.append(
            f'<path class="series" data-series="{escape(name)}" data-points="{len(ts)}" '
            f'data-max="{max(vs)!r}" stroke="{color}"{width} d="{"".join(parts)}">'
            f"<title>{escape(name)}</title></path>"
        )
    # legend
    lx = x0 + 4
    for k, (name, _, _) in enumerate(drawn):
        color = PALETTE[k % len(PALETTE)]
        out.append(
            f'<g class="legend" data-legend="{escape(name)}" transform="translate({lx} 30)">'
            f'<rect width="10" height="10" y="-9" fill="{color}"/>'
            f'<text x="14">{escape(name)}</text></g>'
        )
        lx += 24 + 7 * len(name)
    out.append("</svg>")
    return "\n".join(out)


# --- heat maps ------------------------------------------------------------------------------------


def ratio_color(ratio: float) -> tuple[int, int, int]:
    """The colour of an allocation ratio on the heat map's scale (clamped to 0..1)."""
    r = min(max(ratio, 0.0), 1.0)
    for (a, ca), (b, cb) in pairwise(SCALE_STOPS):
        if r <= b:
            f = (r - a) / (b - a)
            return (
                round(ca[0] + (cb[0] - ca[0]) * f),
                round(ca[1] + (cb[1] - ca[1]) * f),
                round(ca[2] + (cb[2] - ca[2]) * f),
            )
    return SCALE_STOPS[-1][1]


def _color_table() -> list[bytes]:
    return [bytes((*ratio_color(i / 255), 255)) for i in range(256)]


_COLORS = _color_table()
_BLANK = b"\x00\x00\x00\x00"


def heatmap_png(matrix: Sequence[Sequence[float | None]]) -> bytes:
    """A PNG (8-bit RGBA) of ``matrix[row][column]`` ratios, one pixel per cell: the colour of
    the ratio (quantised to 256 steps of ``ratio_color``), fully transparent where None."""
    height = len(matrix)
    width = max((len(row) for row in matrix), default=0)
    if height == 0 or width == 0:
        height = width = 1
        matrix = [[None]]
    colors = _COLORS
    raw = bytearray()
    for row in matrix:
        raw.append(0)  # filter: None
        line = [
            _BLANK if x is None else colors[min(max(round(x * 255), 0), 255)] for x in row
        ]
        line.extend([_BLANK] * (width - len(row)))
        raw += b"".join(line)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + chunk(b"IEND", b"")
    )


def heatmap_svg(
    heat_id: str,
    nodes: Sequence[str],
    t: Sequence[float],
    end: float,
    matrix: Sequence[Sequence[float | None]],
    *,
    run: str = "",
    resource: str = "",
) -> str:
    """The heat map of ``matrix`` (``nodes`` x buckets starting at ``t``; the last ends at
    ``end``) as an SVG: the PNG stretched over the plot (one row per node, at least 1 px), node
    names on the left (every one when they fit, else every k-th), the time axis below."""
    rows = max(len(nodes), 1)
    row_px = max(1, min(16, 320 // rows))
    plot_h = rows * row_px
    left, right, top, bottom = 150, 14, 8, 42
    plot_w = WIDTH + 200 - left - right
    width, height = WIDTH + 200, top + plot_h + bottom
    png = base64.b64encode(heatmap_png(matrix)).decode("ascii")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" data-heatmap="{escape(heat_id)}" '
        f'data-run="{escape(run)}" data-resource="{escape(resource)}" '
        f'data-nodes="{len(nodes)}" data-buckets="{len(t)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
        f'<image class="heatmap-image" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" '
        f'preserveAspectRatio="none" style="image-rendering:pixelated" '
        f'href="data:image/png;base64,{png}"/>',
        f'<rect class="frame" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/>',
    ]
    every = max(1, math.ceil(12 / row_px))
    for i in range(0, len(nodes), every):
        name = nodes[i]
        shown = name if len(name) <= 22 else name[:21] + "\u2026"
        out.append(
            f'<text class="tick node" x="{left - 4}" y="{top + (i + 0.5) * row_px:.1f}" '
            f'text-anchor="end" dy="0.32em">{escape(shown)}<title>{escape(name)}</title></text>'
        )
    t0 = t[0] if t else 0.0
    t1 = end if t and end > t0 else t0 + 1.0
    unit, unit_s = time_unit(t1 - t0)
    y = top + plot_h
    for tv in nice_ticks(t0 / unit_s, t1 / unit_s):
        x = _f(left + (tv * unit_s - t0) / (t1 - t0) * plot_w)
        out.append(f'<line class="tickline" x1="{x}" x2="{x}" y1="{y}" y2="{y + 5}"/>')
        out.append(f'<text class="tick" x="{x}" y="{y + 17}" text-anchor="middle">{_num(tv)}</text>')
    out.append(
        f'<text class="axis" x="{left + plot_w / 2:.0f}" y="{height - 6}" text-anchor="middle">'
        f"virtual time ({unit})</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def color_scale_svg() -> str:
    """The heat map's colour scale: a 0-100 % gradient bar and a swatch for "no node"."""
    stops = "".join(
        f'<stop offset="{round(r * 100)}%" stop-color="rgb{c}"/>' for r, c in SCALE_STOPS
    )
    ticks = "".join(
        f'<text class="tick" x="{10 + r * 300:.0f}" y="36" text-anchor="middle">{round(r * 100)} %</text>'
        for r in (0.0, 0.25, 0.5, 0.75, 1.0)
    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" class="scale" data-scale="allocation" '
        'viewBox="0 0 480 44" width="480" height="44">'
        f'<defs><linearGradient id="heat-scale">{stops}</linearGradient></defs>'
        '<rect x="10" y="6" width="300" height="16" fill="url(#heat-scale)"/>'
        f"{ticks}"
        '<rect x="340" y="6" width="16" height="16" fill="none" stroke="#999" stroke-dasharray="2 2"/>'
        '<text class="tick" x="362" y="18">no node</text></svg>'
    )
