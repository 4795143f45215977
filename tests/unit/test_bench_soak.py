"""bench/soak.py's pure parts: /proc and /metrics parsing, the exactly-once ledger, the
flatness check and the hand-written SVG plot."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import soak  # noqa: E402

STATUS = """Name:\tkubesched
Umask:\t0022
State:\tS (sleeping)
VmPeak:\t 1502736 kB
VmHWM:\t  110200 kB
VmRSS:\t  103920 kB
RssAnon:\t   79296 kB
Threads:\t38
SigQ:\t0/94000
"""

METRICS = """# HELP kubesched_informer_objects Number of objects in each informer's store, by resource kind.
# TYPE kubesched_informer_objects gauge
kubesched_informer_objects{resource="Node"} 500.0
kubesched_informer_objects{resource="Pod"} 2550.0
# HELP scheduler_pending_pods Number of pending pods, by the queue type.
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 12.0
scheduler_pending_pods{queue="backoff"} 0.0
scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 6881.0
scheduler_schedule_attempts_created{profile="default-scheduler",result="scheduled"} 1.7e+09
leader_election_master_status{name="kube-scheduler"} 1.0
process_open_fds 39.0
"""


def test_parse_status_reads_rss_and_threads() -> None:
    assert soak.parse_status(STATUS) == {"rss_kib": 103920, "threads": 38}


def test_parse_metrics_keeps_only_the_asked_families_with_their_labels() -> None:
    got = soak.parse_metrics(METRICS, ["kubesched_informer_objects", "scheduler_pending_pods", "scheduler_schedule_attempts_total", "absent"])
    assert got == {
        "kubesched_informer_objects": {"resource=Node": 500.0, "resource=Pod": 2550.0},
        "scheduler_pending_pods": {"queue=active": 12.0, "queue=backoff": 0.0},
        "scheduler_schedule_attempts_total": {"profile=default-scheduler,result=scheduled": 6881.0},
        "absent": {},
    }
    assert soak.parse_metrics("process_open_fds 39.0\n", ["process_open_fds"]) == {"process_open_fds": {"": 39.0}}


def _pod(uid: str, node: str = "") -> dict[str, object]:
    return {"metadata": {"uid": uid, "name": f"soak-{uid}"}, "spec": {"nodeName": node} if node else {}}


def test_ledger_counts_each_bind_once_and_finds_what_is_missing() -> None:
    led = soak.Ledger()
    for uid in ("a", "b", "c", "d"):
        led.record_created(uid, f"soak-{uid}")
    led.apply("LISTED", _pod("a"))
    led.relisted({"a"})  # the first list is not a relist
    led.apply("MODIFIED", _pod("a", "node-1"))
    led.apply("MODIFIED", _pod("a", "node-1"))  # an update of a bound pod is no second bind
    led.apply("DELETED", _pod("a", "node-1"))
    led.apply("ADDED", _pod("b"))  # never bound
    led.apply("ADDED", _pod("c", "node-2"))  # created bound: one transition
    led.apply("ADDED", _pod("x", "node-3"))  # not one of ours
    assert led.count(["a", "b", "c"], "bound") == 2
    assert led.count(["a", "b", "c"], "deleted") == 1
    s = led.summary()
    assert (s["created"], s["seen"], s["bound_once"], s["bound_twice"], s["never_bound"], s["never_seen"], s["not_ours"]) == (4, 3, 2, 0, 1, 1, 1)
    assert s["never_bound_names"] == ["soak-b"]
    assert s["never_seen_names"] == ["soak-d"]
    assert s["relists"] == 0
    assert s["exactly_once"] is False


def test_ledger_a_pod_unbound_and_bound_again_counts_twice_and_a_relist_marks_the_gone() -> None:
    led = soak.Ledger()
    led.record_created("a", "soak-a")
    led.record_created("b", "soak-b")
    led.relisted(set())
    led.apply("ADDED", _pod("a", "node-1"))
    led.apply("MODIFIED", _pod("a"))
    led.apply("MODIFIED", _pod("a", "node-2"))
    led.apply("ADDED", _pod("b", "node-1"))
    led.relisted({"a"})  # b went while the watch was away
    assert led.count(["b"], "deleted") == 1
    led.apply("MODIFIED", _pod("b", "node-1"))  # a late event of a deleted pod changes nothing
    s = led.summary()
    assert (s["bound_once"], s["bound_twice"], s["bound_twice_names"], s["relists"], s["deleted_seen"]) == (1, 1, ["soak-a"], 1, 1)
    assert s["exactly_once"] is False
    ok = soak.Ledger()
    ok.record_created("a", "soak-a")
    ok.apply("ADDED", _pod("a"))
    ok.apply("MODIFIED", _pod("a", "node-1"))
    assert ok.summary()["exactly_once"] is True


def _samples(values: list[float], key: str = "rss_mib", step: float = 10.0) -> list[dict[str, float]]:
    return [{"t": i * step, key: v} for i, v in enumerate(values)]


def test_flatness_level_is_the_median_after_warm_up_and_deviation_is_relative_to_it() -> None:
    s = _samples([50, 80, 100, 100, 105, 95, 100])  # t = 0..60; warm-up 20 s drops 50 and 80
    f = soak.flatness(s, "rss_mib", 20.0)
    assert (f["samples"], f["level"], f["min"], f["max"]) == (5, 100, 95, 105)
    assert f["max_deviation"] == 0.05
    assert (f["min_ratio"], f["max_ratio"]) == (0.95, 1.05)
    assert f["flat"] is True


def test_flatness_exactly_at_the_tolerance_is_flat_beyond_it_is_not() -> None:
    assert soak.flatness(_samples([100, 100, 110, 90]), "rss_mib", 0.0)["flat"] is True
    growing = soak.flatness(_samples([100, 100, 100, 104, 108, 112]), "rss_mib", 0.0)
    assert growing["level"] == 102
    assert round(growing["max_deviation"], 4) == round(10 / 102, 4)
    assert growing["flat"] is True
    leak = soak.flatness(_samples([100, 104, 108, 112, 116, 120]), "rss_mib", 0.0)
    assert leak["level"] == 110
    assert round(leak["max_deviation"], 4) == round(10 / 110, 4)
    assert soak.flatness(_samples([100, 100, 100, 100, 125]), "rss_mib", 0.0)["flat"] is False
    assert (leak["first_tenth_median"], leak["last_tenth_median"]) == (100, 120)


def test_flatness_without_samples_after_warm_up_is_not_flat() -> None:
    assert soak.flatness(_samples([1, 2]), "rss_mib", 100.0) == {"key": "rss_mib", "samples": 0, "flat": False}
    assert soak.flatness([{"t": 50.0, "threads": None}], "threads", 0.0)["samples"] == 0


def test_svg_plot_is_well_formed_with_four_panels_a_level_band_and_escaped_title() -> None:
    samples = [{"t": i * 10.0, "rss_mib": 100 + (i % 3), "threads": 38, "fds": 39, "pods_in_store": (i * 500) % 4000} for i in range(40)]
    samples[5]["fds"] = None  # a failed read leaves a gap, not a crash
    svg = soak.svg_plot(samples, 60.0, 0.10, "soak <a & b>")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    lines = root.findall(f"{ns}polyline")
    assert len(lines) == 4
    assert len(lines[0].get("points", "").split()) == 40
    assert len(lines[2].get("points", "").split()) == 39
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "soak <a & b>" in texts
    assert {"RSS (MiB)", "threads", "open file descriptors", "pods in the informer's store"} <= set(texts)
    assert "level 101 (median after warm-up), ±10% dashed; max deviation 1.0%" in texts
    assert texts.count("warm-up") == 4
    assert "minutes since kubesched started" in texts


def test_svg_plot_of_no_samples_is_still_an_svg() -> None:
    root = ET.fromstring(soak.svg_plot([], 300.0))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"


def test_pod_manifests_vary_in_requests_and_constraints() -> None:
    pods = [soak.pod_manifest(i) for i in range(20)]
    reqs = {tuple(sorted(p["spec"]["containers"][0]["resources"]["requests"].items())) for p in pods}
    assert len(reqs) == 20
    assert [i for i, p in enumerate(pods) if "affinity" in p["spec"]] == [3, 13]
    assert [i for i, p in enumerate(pods) if "topologySpreadConstraints" in p["spec"]] == [7, 17]
    assert pods[4]["metadata"] == {"name": "soak-4", "namespace": "bench", "labels": {"app": "app-4"}}
    assert all(p["spec"]["terminationGracePeriodSeconds"] == 0 for p in pods)


def test_watch_events_splits_lines_across_chunks_and_stops_at_the_end():
    import io
    import threading

    import bench as bench_mod

    class Resp:
        """A watch body in awkward chunks (a line split in two, blank lines)."""

        def __init__(self, data: bytes, size: int) -> None:
            self.f, self.size = io.BytesIO(data), size

        def read1(self, _n: int) -> bytes:
            return self.f.read(self.size)

    body = b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n\n{"type":"MODIFIED","object":{}}\n{"type":"DELE'
    got = list(bench_mod.watch_events(Resp(body, 7), threading.Event()))
    assert [e["type"] for e in got] == ["ADDED", "MODIFIED"]  # the cut last line is not an event
    stop = threading.Event()
    stop.set()
    assert list(bench_mod.watch_events(Resp(body, 7), stop)) == []
