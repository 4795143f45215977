"""Framework metrics through real scheduling cycles: every extension point is observed once per
cycle that runs it (kube-scheduler's scheduler_framework_extension_point_duration_seconds), and
sampled cycles time each plugin call."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster
from kubesched.runtime.framework import FrameworkImpl
from kubesched.runtime.framework.instrument import InstrumentedFramework
from kubesched.runtime.observe.metrics import Metrics
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import PreFilterResult, Status, hookimpl

POINT_METRIC = "scheduler_framework_extension_point_duration_seconds"
PLUGIN_METRIC = "scheduler_plugin_execution_duration_seconds"


class Everywhere:
    """A plugin at every extension point of a cycle; pods named "stuck" fit nowhere."""

    @hookimpl
    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> PreFilterResult | None:
        return None

    @hookimpl
    def filter(self, pod: Any) -> Status | None:
        return Status.unschedulable("stuck") if pod.name == "stuck" else None

    @hookimpl
    def post_filter(self) -> Status:
        return Status.unschedulable("no preemption here")

    @hookimpl
    def pre_score(self) -> None:
        return None

    @hookimpl
    def score(self, node_info: Any) -> int:
        return 10 if node_info.name == "n1" else 5

    @hookimpl
    def reserve(self) -> None:
        return None

    @hookimpl
    def unreserve(self) -> None:
        return None

    @hookimpl
    def permit(self) -> None:
        return None

    @hookimpl
    def pre_bind(self) -> None:
        return None


class EverywhereColumns(Everywhere):
    """Everywhere with the column forms of Filter and Score: cycles take the column path."""

    @hookimpl
    def filter_columns(self, pod: Any, columns: Any) -> Any:
        stuck = pod.name == "stuck"
        return np.full(columns.n, 1 if stuck else 0), [None, Status.unschedulable("stuck")]

    @hookimpl
    def score_columns(self, columns: Any, rows: Any) -> Any:
        return np.array([10 if columns.names[r] == "n1" else 5 for r in rows.tolist()], np.int64)


POINTS = {p: ["Everywhere"] for p in ("preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind")}


def _counts(metrics: Metrics, name: str, label: str) -> Counter[str]:
    """Observations per ``label`` value of histogram ``name`` (all other labels summed)."""
    out: Counter[str] = Counter()
    for family in metrics.registry.collect():
        for s in family.samples:
            if s.name == f"{name}_count":
                out[s.labels[label]] += int(s.value)
    return out


def _attempts(metrics: Metrics) -> int:
    return int(sum(s.value for f in metrics.registry.collect() for s in f.samples if s.name == "scheduler_schedule_attempts_total"))


def _schedule(ks: Any, pod: str, *, sample_rate: float, record_diagnostics: bool, plugin: type = Everywhere) -> tuple[Any, Metrics]:
    reg = ks.registry({"Everywhere": plugin})
    cfg = ks.load_cfg(POINTS, reg)
    metrics = Metrics(plugin_sample_rate=sample_rate)
    cluster = SimulatedCluster([*ks.nodes(3), ks.pod(pod)])
    sched = Scheduler(cfg, reg, cluster, simulated=True, seed=1, metrics=metrics, record_diagnostics=record_diagnostics)
    return ks.Run(sched, cluster).start(), metrics


@pytest.mark.parametrize("plugin", [Everywhere, EverywhereColumns], ids=["per_node", "columns"])
@pytest.mark.parametrize("record_diagnostics", [False, True], ids=["score_totals", "run_score_plugins"])
@pytest.mark.parametrize("sample_rate", [0.0, 1.0], ids=["unsampled", "sampled"])
def test_each_extension_point_is_observed_once_per_scheduled_cycle(ks: Any, sample_rate: float, record_diagnostics: bool, plugin: type) -> None:
    run, metrics = _schedule(ks, "p", sample_rate=sample_rate, record_diagnostics=record_diagnostics, plugin=plugin)
    assert run.result("p").node == "n1"
    assert _attempts(metrics) == 1
    assert _counts(metrics, POINT_METRIC, "extension_point") == {
        "PreFilter": 1, "PreScore": 1, "Score": 1, "Reserve": 1, "Permit": 1, "PreBindPreFlight": 1, "PreBind": 1, "Bind": 1,
    }


def test_each_extension_point_is_observed_once_per_unschedulable_cycle(ks: Any) -> None:
    run, metrics = _schedule(ks, "stuck", sample_rate=0.0, record_diagnostics=False)
    assert run.result("stuck").status == "Unschedulable"
    cycles = _attempts(metrics)
    assert cycles >= 1
    assert _counts(metrics, POINT_METRIC, "extension_point") == {"PreFilter": cycles, "PostFilter": cycles}


def test_sampled_cycles_time_each_plugin_call(ks: Any) -> None:
    _, metrics = _schedule(ks, "p", sample_rate=1.0, record_diagnostics=False)
    per_point = _counts(metrics, PLUGIN_METRIC, "extension_point")
    # one call per cycle, Filter and Score once per node (3 nodes)
    assert per_point == {
        "PreFilter": 1, "Filter": 3, "PreScore": 1, "Score": 3, "Reserve": 1, "Permit": 1, "PreBind": 1, "Bind": 1,
    }


def test_sampled_cycles_on_the_column_path_time_one_call_per_plugin(ks: Any) -> None:
    run, metrics = _schedule(ks, "p", sample_rate=1.0, record_diagnostics=False, plugin=EverywhereColumns)
    assert run.result("p").node == "n1"
    # the column forms stay in use in a sampled cycle: Filter and Score once for all nodes
    assert _counts(metrics, PLUGIN_METRIC, "extension_point") == {
        "PreFilter": 1, "Filter": 1, "PreScore": 1, "Score": 1, "Reserve": 1, "Permit": 1, "PreBind": 1, "Bind": 1,
    }


def test_unsampled_cycles_do_not_time_plugin_calls(ks: Any) -> None:
    _, metrics = _schedule(ks, "p", sample_rate=0.0, record_diagnostics=False)
    assert _counts(metrics, PLUGIN_METRIC, "extension_point") == {}


def test_instrumentation_is_chosen_at_build_time(ks: Any) -> None:
    run, _ = _schedule(ks, "p", sample_rate=0.0, record_diagnostics=False)
    fw = run.framework
    assert type(fw) is InstrumentedFramework
    # the runners are the class's: nothing replaced on the instance
    assert not {k for k in vars(fw) if k.startswith("run_") or k == "score_totals"}
    plain = next(iter(Scheduler(ks.load_cfg(POINTS, ks.registry({"Everywhere": Everywhere})),
                                ks.registry({"Everywhere": Everywhere}), SimulatedCluster([]), simulated=True).frameworks.values()))
    assert type(plain) is FrameworkImpl


def test_scrape_time_gauges_read_their_source_at_each_scrape():
    m = Metrics()
    pending = {"active": 2}
    stores = {"Pod": 3, "Node": 1}
    m.watch_queue(lambda: pending)
    m.watch_stores(lambda: stores)
    text = m.exposition().decode()
    assert 'scheduler_pending_pods{queue="active"} 2.0' in text
    assert 'scheduler_pending_pods{queue="gated"} 0.0' in text  # every queue, 0 when absent
    assert 'kubesched_informer_objects{resource="Node"} 1.0' in text
    assert 'kubesched_informer_objects{resource="Pod"} 3.0' in text
    stores["Pod"] = 7
    assert 'kubesched_informer_objects{resource="Pod"} 7.0' in m.exposition().decode()
