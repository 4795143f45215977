"""bench/bench.py's kube-apiserver figures: the pprof text it reads (``--apiserver-profile``: top
functions, CPU by area), the average number of mutating requests executing, and the report lines."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench  # noqa: E402

TOP = """File: kube-apiserver
Type: cpu
Duration: 28.36s, Total samples = 12660ms (44.64%)
Showing nodes accounting for 1630ms, 12.88% of 12660ms total
Showing top 3 nodes out of 571
      flat  flat%   sum%        cum   cum%
     720ms  5.69%  5.69%      720ms  5.69%  p256MulInternal
     0.50s  3.95%  9.64%      1.2s  9.48%  internal/runtime/syscall/linux.Syscall6
     410ms  3.24% 12.88%      410ms  3.24%  runtime.spanClass.sizeclass (inline)
"""

TRACES = """File: kube-apiserver
Duration: 28.36s, Total samples = 12.66s (44.64%)
-----------+-------------------------------------------------------
      30ms   p256MulInternal
             crypto/x509.(*Certificate).CheckSignatureFrom
             k8s.io/apiserver/pkg/authentication/request/x509.(*Authenticator).AuthenticateRequest
-----------+-------------------------------------------------------
      20ms   encoding/json.(*encodeState).marshal
             k8s.io/apimachinery/pkg/runtime/serializer/json.(*Serializer).Encode
             k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP
-----------+-------------------------------------------------------
     1.5s   runtime.scanObject
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
      10ms   runtime.futex
             runtime.futexsleep
-----------+-------------------------------------------------------
"""


def test_pprof_top_rows_and_total() -> None:
    rows, total = bench.parse_pprof_top(TOP)
    assert total == 12.66
    assert rows == [(0.72, 0.72, "p256MulInternal"), (0.5, 1.2, "internal/runtime/syscall/linux.Syscall6"), (0.41, 0.41, "runtime.spanClass.sizeclass (inline)")]


def test_go_durations() -> None:
    assert [bench._go_seconds(v) for v in ("10ms", "1.5s", "250us", "2min", "7", "xs")] == [0.01, 1.5, 0.00025, 120.0, None, None]


def test_areas_count_a_stack_in_every_area_it_matches() -> None:
    areas = bench.pprof_areas(TRACES)
    assert list(areas) == [label for label, _ in bench.APISERVER_AREAS]
    assert areas["client certificate checks (crypto/x509, per request)"] == 0.03
    assert areas["JSON encode"] == 0.02
    assert areas["watch cache and watchers"] == 0.02
    assert areas["GC background marking"] == 1.5
    assert areas["etcd client (storage/etcd3)"] == 0.0
    assert sum(areas.values()) == 1.57


def test_average_mutating_requests_executing() -> None:
    key = 'apiserver_flowcontrol_read_vs_write_current_requests_{}{{phase="executing",request_kind="mutating"}}'
    text0 = "\n".join([
        "# HELP apiserver_flowcontrol_read_vs_write_current_requests ...",
        key.format("sum") + " 1.0e+09",
        key.format("count") + " 4.0e+10",
        'apiserver_flowcontrol_read_vs_write_current_requests_sum{phase="executing",request_kind="readOnly"} 5',
    ])
    text1 = key.format("sum") + " 1.5e+09\n" + key.format("count") + " 5.0e+10\n"
    e0, e1 = bench.parse_executing(text0), bench.parse_executing(text1)
    assert (e0, e1) == ((1.0e9, 4.0e10), (1.5e9, 5.0e10))
    # 0.5e9 / 1e10 = 0.05 of the limit of 200
    assert bench.average_executing(e0, e1) == 10.0
    assert bench.average_executing(e1, e1) is None
    assert bench.parse_executing("apiserver_request_total{verb=\"GET\"} 3\n") is None


def test_profile_lines_in_the_report() -> None:
    areas = dict.fromkeys((label for label, _ in bench.APISERVER_AREAS), 0.0)
    ks = {"apiserver_profile": {"total_s": 13.4, "areas": {**areas, "client certificate checks (crypto/x509, per request)": 0.85}, "flat": [(0.74, 0.74, "internal/runtime/syscall/linux.Syscall6")]}}
    py = {"apiserver_profile": {"total_s": 12.66, "areas": {**areas, "client certificate checks (crypto/x509, per request)": 1.93}, "flat": [(0.72, 0.72, "p256MulInternal"), (0.5, 0.5, "runtime.memmove")]}}
    lines = bench.apiserver_profile_lines(ks, py)
    assert lines[2:6] == [
        "| area | kube-scheduler | kubesched | difference |",
        "|---|---:|---:|---:|",
        "| all samples | 13.40 | 12.66 | -0.74 |",
        "| client certificate checks (crypto/x509, per request) | 0.85 | 1.93 | 1.08 |",
    ]
    assert lines[-4:] == [
        "|---:|---|---:|---|",
        "| 0.74 | `internal/runtime/syscall/linux.Syscall6` | 0.72 | `p256MulInternal` |",
        "|  |  | 0.50 | `runtime.memmove` |",
        "",
    ]
    assert bench.apiserver_profile_lines({"apiserver_profile": {"error": "no profile"}}, None) == ["- kube-apiserver CPU profile: no profile"]
    assert bench.apiserver_profile_lines(None, None) == []


def test_per_request_and_executing_figures() -> None:
    r = {"requests": {"POST events": 2500, "PATCH pods/status": 2000, "DELETE pods": 500}, "cpu_window_s": {"kube-apiserver": 10.0}, "mutating_executing": 0.76}
    assert bench.live_value(r, ("_apiserver_per_request",), 1) == 2.0
    assert bench.live_value(r, ("mutating_executing",), 1) == 0.76
    assert bench.live_value({"cpu_window_s": {"kube-apiserver": None}, "requests": {"x": 1}}, ("_apiserver_per_request",), 1) is None
