"""The HTML report of one simulated run, or the comparison of several (docs/report.md).

``render_report(ms)`` takes Measurements dicts (docs/simulator.md) and returns one
self-contained page: inline CSS, inline SVG charts and PNG heat maps (``charts``), a few lines of
inline JS for hover read-outs and the heat map's resource selector. Nothing is fetched; every
chart is visible without JS. Every name from the input is escaped (``printable`` then
``html.escape``). Numbers a person reads are also in attributes (``data-metric``/``data-value``
on summary cells, ``data-chart``, ``data-series``/``data-points``, ``data-heatmap``) so tests can
check them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from kubesched.runtime.sim import charts
from kubesched.runtime.timefmt import go_duration
from kubesched.sdk._text import printable

__all__ = ["render_report", "run_names"]

#: counts in the summary table: (key in "totals", label)
TOTALS = (
    ("arrived", "pods arrived"),
    ("scheduled", "pods scheduled"),
    ("pending_at_end", "pending at end"),
    ("completed", "pods completed"),
    ("deleted", "pods deleted"),
    ("attempts", "scheduling attempts"),
    ("preemptions", "preemptions"),
)
#: wait statistics (virtual seconds from arrival to bind): (key in "wait", label)
WAITS = (
    ("mean", "wait mean"),
    ("p50", "wait p50"),
    ("p90", "wait p90"),
    ("p99", "wait p99"),
    ("max", "wait max"),
)


def _t(text: object) -> str:
    """Text from the input, as HTML: control characters escaped, then HTML-escaped."""
    return escape(printable(text))


def run_names(ms: Sequence[Mapping[str, Any]]) -> list[str]:
    """One name per run: its label; ``label (seed N)`` where runs share a label and their seeds
    differ; ``#k`` appended to any name still repeated."""
    labels = [str(m.get("label") or "run") for m in ms]
    names = []
    for m, label in zip(ms, labels):
        seeds = {x.get("seed") for x, other in zip(ms, labels) if other == label}
        names.append(f"{label} (seed {m.get('seed')})" if len(seeds) > 1 else label)
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    counter: dict[str, int] = {}
    out = []
    for n in names:
        if seen[n] > 1:
            counter[n] = counter.get(n, 0) + 1
            out.append(f"{n} #{counter[n]}")
        else:
            out.append(n)
    return out


def _count(x: Any) -> str:
    return "\u2013" if x is None else f"{x:,}" if isinstance(x, int) else f"{x:,.6g}"


def _seconds(x: Any) -> str:
    return "\u2013" if x is None else go_duration(round(float(x), 3))


def _percent(x: Any) -> str:
    return "\u2013" if x is None else f"{float(x) * 100:.1f} %"


def _cell(run: int, metric: str, value: Any, text: str) -> str:
    raw = "" if value is None else escape(repr(value) if isinstance(value, float) else str(value))
    return f'<td data-run="{run}" data-metric="{escape(metric)}" data-value="{raw}">{text}</td>'


def _resources(ms: Sequence[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for m in ms:
        for r in m.get("resources") or []:
            if r not in out:
                out.append(r)
    return out


def _header(ms: Sequence[Mapping[str, Any]], names: list[str]) -> str:
    rows = [
        ("workload", "workload", lambda m: (m.get("workload"), _t(m.get("workload") or "\u2013"))),
        ("config", "config", lambda m: (m.get("config"), _t(m.get("config") or "(default)"))),
        ("seed", "seed", lambda m: (m.get("seed"), _t("\u2013" if m.get("seed") is None else m["seed"]))),
        ("start", "virtual start", lambda m: (m.get("start"), _t(m.get("start") or "\u2013"))),
        ("end", "virtual span", lambda m: (m.get("end"), _seconds(m.get("end")))),
        ("elapsed", "wall time", lambda m: (m.get("elapsed"), _seconds(m.get("elapsed")))),
    ]
    head = "".join(f'<th scope="col" data-run="{i}">{_t(n)}</th>' for i, n in enumerate(names))
    body = []
    for metric, label, get in rows:
        cells = []
        for i, m in enumerate(ms):
            value, text = get(m)
            cells.append(_cell(i, metric, value, text))
        body.append(f'<tr><th scope="row">{label}</th>{"".join(cells)}</tr>')
    return (
        f'<table id="runs"><thead><tr><th scope="col">run</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _warnings(ms: Sequence[Mapping[str, Any]], names: list[str]) -> str:
    return "".join(
        f'<p class="warning" data-interrupted="{i}">\u26a0 Run {_t(names[i])} was interrupted '
        "(Ctrl-C): these are the measurements up to the interruption.</p>"
        for i, m in enumerate(ms)
        if m.get("interrupted")
    )


def _summary(ms: Sequence[Mapping[str, Any]], names: list[str], resources: list[str]) -> str:
    head = "".join(f'<th scope="col" data-run="{i}">{_t(n)}</th>' for i, n in enumerate(names))
    body: list[str] = []

    def row(label: str, metric: str, values: list[Any], fmt: Any, cls: str = "") -> None:
        cells = "".join(_cell(i, metric, v, fmt(v)) for i, v in enumerate(values))
        c = f' class="{cls}"' if cls else ""
        body.append(f'<tr{c}><th scope="row">{label}</th>{cells}</tr>')

    for key, label in TOTALS:
        row(label, key, [(m.get("totals") or {}).get(key) for m in ms], _count)
    for key, label in WAITS:
        row(
            label, f"wait_{key}", [(m.get("wait") or {}).get(key) for m in ms], _seconds,
            "first" if key == "mean" else "",
        )
    for res in resources:
        for key in ("final", "peak", "mean"):
            values = [((m.get("allocation") or {}).get(key) or {}).get(res) for m in ms]
            row(
                f"{_t(res)} allocation {key}", f"alloc_{key}_{res}", values, _percent,
                "first" if key == "final" else "",
            )
    return (
        f'<table id="summary"><thead><tr><th scope="col">measure</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _failures(ms: Sequence[Mapping[str, Any]], names: list[str]) -> str:
    per_run = [dict((m.get("totals") or {}).get("failures") or {}) for m in ms]
    reasons: dict[str, int] = {}
    for f in per_run:
        for reason, n in f.items():
            reasons[reason] = reasons.get(reason, 0) + int(n)
    if not reasons:
        return '<p class="none" id="no-failures">No failed scheduling attempts.</p>'
    order = sorted(reasons, key=lambda r: (-reasons[r], r))
    head = "".join(f'<th scope="col" data-run="{i}">{_t(n)}</th>' for i, n in enumerate(names))
    body = []
    for reason in order:
        cells = "".join(
            f'<td data-run="{i}" data-value="{int(f.get(reason, 0))}">{int(f.get(reason, 0)):,}</td>'
            for i, f in enumerate(per_run)
        )
        body.append(f'<tr data-reason="{_t(reason)}"><th scope="row">{_t(reason)}</th>{cells}</tr>')
    return (
        f'<table id="failures"><thead><tr><th scope="col">reason</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _steps(m: Mapping[str, Any], values: Sequence[float]) -> tuple[list[float], list[float]]:
    """A series' (t, v), held to the run's end when the end is after the last sample."""
    t = list((m.get("series") or {}).get("t") or [])
    v = list(values)[: len(t)]
    t = t[: len(v)]
    end = m.get("end")
    if t and isinstance(end, (int, float)) and end > t[-1]:
        t.append(float(end))
        v.append(v[-1])
    return t, v


def _ratio(requested: Sequence[float], allocatable: Sequence[float]) -> list[float]:
    return [r / a if a else 0.0 for r, a in zip(requested, allocatable)]


def _charts(ms: Sequence[Mapping[str, Any]], names: list[str], resources: list[str]) -> str:
    out = []
    for res in resources:
        lines = []
        for m, name in zip(ms, names):
            s = m.get("series") or {}
            req = (s.get("requested") or {}).get(res)
            alloc = (s.get("allocatable") or {}).get(res)
            if req is None or alloc is None:
                continue
            lines.append((printable(name), *_steps(m, _ratio(req, alloc))))
        out.append(
            charts.step_chart(
                f"allocation-{printable(res)}", f"{printable(res)} allocation (requested / allocatable)", lines,
                percent=True, y_label="allocated",
            )
        )
    for key, title, y_label in (
        ("pending", "pending pods", "pods"),
        ("running", "running pods", "pods"),
        ("nodes", "nodes", "nodes"),
    ):
        lines = [
            (printable(name), *_steps(m, (m.get("series") or {}).get(key) or []))
            for m, name in zip(ms, names)
        ]
        out.append(charts.step_chart(key, title, lines, y_label=y_label))
    return "".join(f'<figure class="chart-box">{c}</figure>' for c in out)


def _heatmaps(ms: Sequence[Mapping[str, Any]], names: list[str], resources: list[str]) -> str:
    options = "".join(f'<option value="{_t(r)}">{_t(r)}</option>' for r in resources)
    parts = [
        '<p class="controls"><label>resource <select id="heat-resource">'
        f"{options}</select></label></p>",
        f'<div class="scale-box">{charts.color_scale_svg()}</div>',
    ]
    for res in resources:
        maps = []
        for i, (m, name) in enumerate(zip(ms, names)):
            h = m.get("heatmap") or {}
            matrix = (h.get("allocation") or {}).get(res)
            if matrix is None:
                continue
            nodes = [printable(n) for n in h.get("nodes") or []]
            svg = charts.heatmap_svg(
                f"{printable(res)}/{i}", nodes, list(h.get("t") or []), float(m.get("end") or 0.0), matrix,
                run=str(i), resource=printable(res),
            )
            caption = f"{_t(name)}: {_t(res)} allocation per node" if len(ms) > 1 else (
                f"{_t(res)} allocation per node"
            )
            maps.append(f"<figure><figcaption>{caption}</figcaption>{svg}</figure>")
        parts.append(f'<div class="heat" data-resource="{_t(res)}">{"".join(maps)}</div>')
    return "".join(parts)


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:4px 0}th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}
th[scope=row]{text-align:left;font-weight:normal;color:#444}thead th{border-bottom:2px solid #999}
#runs td,#failures th[scope=row]{text-align:left}tr.first th,tr.first td{border-top:1px solid #bbb}
.warning{background:#fff3cd;border:1px solid #e0b000;padding:6px 10px;display:inline-block}
.top{display:flex;flex-wrap:wrap;gap:0 48px}.top h2{margin-top:8px}
.charts{display:flex;flex-wrap:wrap;gap:8px}.chart-box,figure{margin:0 0 8px}
svg text{font-size:11px;fill:#333}svg .title{font-size:13px;font-weight:600}
.plot{fill:#fafafa;stroke:#ccc}.grid{stroke:#e4e4e4}.axisline,.tickline{stroke:#888}
.series{fill:none;stroke-width:2;stroke-linejoin:miter}.frame{fill:none;stroke:#ccc}
figcaption{font-weight:600;margin:6px 0}
#tip{position:absolute;pointer-events:none;background:#fff;border:1px solid #888;padding:4px 6px;
font-size:12px;white-space:pre;display:none}
"""

# Hover read-out on the step charts (values read back from the drawn paths), and the heat map's
# resource selector. The page is complete without it.
_JS = """
(function(){
var tip=document.getElementById('tip');
function steps(p){var d=p.getAttribute('d'),re=/([MHV])([-\\d.]+)(?: ([-\\d.]+))?/g,m,x=0,y=0,pts=[];
while((m=re.exec(d))){if(m[1]=='M'){x=+m[2];y=+m[3];}else if(m[1]=='H'){x=+m[2];}else{y=+m[2];}
pts.push([x,y]);}return pts;}
document.querySelectorAll('svg.chart').forEach(function(svg){
var ds=svg.dataset,x0=+ds.x0,x1=+ds.x1,t0=+ds.t0,t1=+ds.t1,y0=+ds.y0,y1=+ds.y1,ymax=+ds.ymax;
var paths=[].slice.call(svg.querySelectorAll('path.series')).map(function(p){return [p.dataset.series,steps(p)];});
svg.addEventListener('mousemove',function(e){var r=svg.getBoundingClientRect();
var x=(e.clientX-r.left)*svg.viewBox.baseVal.width/r.width;if(x<x0||x>x1){tip.style.display='none';return;}
var t=t0+(x-x0)/(x1-x0)*(t1-t0),lines=['t = '+(t/ds.unitSeconds).toFixed(2)+' '+ds.unit];
paths.forEach(function(sp){var y=null;sp[1].forEach(function(q){if(q[0]<=x+0.05)y=q[1];});
if(y===null)return;var v=(y0-y)/(y0-y1)*ymax;
lines.push(sp[0]+': '+(ds.percent=='1'?(v*100).toFixed(1)+' %':Math.round(v)));});
tip.textContent=lines.join('\\n');tip.style.display='block';
tip.style.left=(e.pageX+12)+'px';tip.style.top=(e.pageY+12)+'px';});
svg.addEventListener('mouseleave',function(){tip.style.display='none';});});
var sel=document.getElementById('heat-resource');
function show(){document.querySelectorAll('.heat').forEach(function(h){h.hidden=h.dataset.resource!==sel.value;});}
if(sel){sel.addEventListener('change',show);show();}
document.documentElement.dataset.js='ready';
})();
"""


def render_report(ms: Sequence[Mapping[str, Any]], *, title: str | None = None) -> str:
    """The HTML page of one run's Measurements, or of several side by side (a comparison)."""
    if not ms:
        raise ValueError("render_report: no Measurements to report")
    names = run_names(ms)
    resources = _resources(ms)
    if title is None:
        workloads = {str(m.get("workload")) for m in ms}
        what = next(iter(workloads)) if len(workloads) == 1 else f"{len(workloads)} workloads"
        title = (
            f"kubesched simulation: {what} ({names[0]})"
            if len(ms) == 1
            else f"kubesched comparison: {what} ({len(ms)} runs)"
        )
    mode = "single" if len(ms) == 1 else "comparison"
    return "".join(
        [
            "<!DOCTYPE html>\n",
            f'<html lang="en" data-mode="{mode}" data-runs="{len(ms)}"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_t(title)}</title><style>{_CSS}</style></head><body>",
            f'<h1 id="title">{_t(title)}</h1>',
            _warnings(ms, names),
            '<div class="top"><section><h2 id="runs-title">Runs</h2>',
            _header(ms, names),
            '</section><section><h2 id="summary-title">Summary</h2>',
            _summary(ms, names, resources),
            "</section></div>",
            '<h2 id="charts-title">Over virtual time</h2>',
            f'<div class="charts">{_charts(ms, names, resources)}</div>',
            '<h2 id="heatmap-title">Allocation per node</h2>',
            _heatmaps(ms, names, resources),
            '<h2 id="failures-title">Failed scheduling attempts by reason</h2>',
            _failures(ms, names),
            f'<div id="tip"></div><script>{_JS}</script></body></html>\n',
        ]
    )
