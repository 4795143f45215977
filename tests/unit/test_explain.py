"""kubesched explain: every Filter plugin's verdict on every node, scores, ranking; and
--record-results annotations with kube-scheduler-simulator's keys."""

from __future__ import annotations

import json
import pathlib

import pytest
from click.testing import CliRunner

from kubesched.runtime.cli import explain_simulated, main
from kubesched.sdk import Code, Status, hookimpl
from kubesched.testing import make_node, make_pod, run_profile

DATA = pathlib.Path(__file__).parent / "data" / "explain_cluster.yaml"


def test_pod_rejected_by_two_plugins_names_both_reasons_per_node() -> None:
    ex = explain_simulated(str(DATA), "p", seed=1, alone=True)
    # n1 is tainted AND too small: both plugins' reasons are reported for it
    assert ex.filter["n1"]["TaintToleration"] == "node(s) had untolerated taint(s)"
    assert ex.filter["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    # "other" (3 of 4 cpu) was scheduled first on n2 or n3 (a tie); that node is full now
    full = "n2" if ex.filter["n2"]["NodeResourcesFit"] != "passed" else "n3"
    free = "n3" if full == "n2" else "n2"
    assert ex.filter[full]["NodeResourcesFit"] == "Insufficient cpu"
    assert ex.filter[full]["TaintToleration"] == "passed"
    assert ex.feasible == [free]
    assert ex.selected == free
    raw, normalized, weighted = ex.scores[free]["TaintToleration"]
    assert (normalized, weighted) == (100, 300)  # weight 3 in the default profile
    assert ex.totals[free] == sum(w for _, _, w in ex.scores[free].values())


def test_unschedulable_pod_explains_with_kube_scheduler_message(tmp_path: pathlib.Path) -> None:
    text = DATA.read_text().replace('cpu: "2"}}}]}', 'cpu: "5"}}}]}')
    f = tmp_path / "c.yaml"
    f.write_text(text)
    ex = explain_simulated(str(f), "p", alone=True)
    assert ex.selected is None
    # with the PostFilter (preemption) part, as the scheduler's message
    assert ex.message.startswith("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. ")
    assert ex.message.endswith("preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    from kubesched.runtime.cli.simulate_cmd import simulate

    assert ex.message == {r["name"]: r for r in simulate(str(f))["pods"]}["p"]["message"]


def test_explain_cli_json_and_table() -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["explain", "default/p", "--cluster", str(DATA), "--alone", "-o", "json", "--seed", "1"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["selected"] in ("n2", "n3")
    assert data["ranking"][0] == {"node": data["selected"], "score": data["totals"][data["selected"]]}
    res = runner.invoke(main, ["explain", "p", "--cluster", str(DATA), "--alone", "--seed", "1"])
    assert res.exit_code == 0
    assert "TaintToleration: node(s) had untolerated taint(s)" in res.output
    assert "selected node: n" in res.output


def test_explain_unknown_pod_is_a_clear_error() -> None:
    res = CliRunner().invoke(main, ["explain", "nope", "--cluster", str(DATA)])
    assert res.exit_code == 2
    assert "no Pod default/nope" in res.output


def test_record_results_writes_simulator_annotations() -> None:
    from kubesched.runtime.cluster.simulated import SimulatedCluster
    from kubesched.runtime.config import load_config
    from kubesched.runtime.registry import Registry
    from kubesched.runtime.scheduler import Scheduler

    reg = Registry.discover()
    cfg = load_config(None, installed_plugins=reg.names())
    sim = SimulatedCluster([
        make_node().name("a").capacity(cpu="2", memory="2Gi").obj(),
        make_node().name("b").capacity(cpu="1", memory="2Gi").obj(),
        make_node().name("c").capacity(cpu="2", memory="2Gi").taints([{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]).obj(),
        make_pod().name("p").req(cpu="1500m").obj(),
    ])
    sched = Scheduler(cfg, reg, sim, simulated=True, seed=1, record_results=True)
    sim.run(sched)
    pod = sim.store.get("v1", "Pod", "p", "default")
    ann = pod["metadata"]["annotations"]
    key = "kube-scheduler-simulator.sigs.k8s.io/"
    assert ann[key + "selected-node"] == "a"
    filt = json.loads(ann[key + "filter-result"])
    assert filt["b"]["NodeResourcesFit"] == "Insufficient cpu"
    assert filt["a"]["NodeResourcesFit"] == "passed"
    final = json.loads(ann[key + "finalscore-result"])
    assert final["a"]["TaintToleration"] == "300"  # normalized 100 x weight 3
    assert final["c"]["TaintToleration"] == "0"  # the PreferNoSchedule taint
    assert json.loads(ann[key + "score-result"])["c"]["TaintToleration"] == "1"  # raw: one taint
    assert json.loads(ann[key + "bind-result"]) == {"DefaultBinder": "success"}
    assert pod["spec"]["nodeName"] == "a"


def test_run_profile_matches_explain_for_a_custom_plugin() -> None:
    from kubesched.sdk import NodeInfo, Status, hookimpl

    class OnlyA:
        @hookimpl
        def filter(self, node_info: NodeInfo) -> Status | None:
            return None if node_info.name == "a" else Status.unschedulable("node(s) were not a")

    r = run_profile({"OnlyA": OnlyA}, nodes=[make_node().name("a").obj(), make_node().name("b").obj()], pods=[make_pod().name("p").obj()])
    assert r.node("p") == "a"
    assert r.filter_reasons("p") == {"b": ["node(s) were not a"]}


# a plugin that raises: explain reports an Error with simulate's message ------------------------


class _RaisesInFilter:
    @hookimpl
    def filter(self, node_info):
        if node_info.name == "b":
            raise ValueError(f"cannot read node {node_info.name}")


class _RaisesInPreFilter:
    @hookimpl
    def pre_filter(self, pod):
        raise KeyError("zone")


class _RaisesInPreScore:
    @hookimpl
    def pre_score(self, pod):
        raise RuntimeError("no data")

    @hookimpl
    def score(self):
        return 1


class _RaisesInScore:
    @hookimpl
    def score(self, node_info):
        raise ZeroDivisionError("division by zero")


class _FloatScore:
    @hookimpl
    def score(self):
        return 42.5


class _SetFromPreFilter:
    @hookimpl
    def pre_filter(self):
        return {"a"}


class _ErrorStatusInFilter:
    @hookimpl
    def filter(self, node_info):
        return Status(Code.ERROR, "the cache is cold")


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (_RaisesInFilter, 'running Filter plugin "P": ValueError: cannot read node b'),
        (_RaisesInPreFilter, "running PreFilter plugin \"P\": KeyError: 'zone'"),
        (_RaisesInPreScore, 'running PreScore plugin "P": RuntimeError: no data'),
        (_RaisesInScore, 'running Score plugins: plugin "P" failed with: ZeroDivisionError: division by zero'),
        (_ErrorStatusInFilter, 'running "P" filter plugin: the cache is cold'),
        (_FloatScore, 'plugin "P" hook score returned float 42.5; expected an int (or an (int, Status) tuple)'),
        (
            _SetFromPreFilter,
            "plugin \"P\" hook pre_filter returned set {'a'}; expected None, a Status, a PreFilterResult "
            "or a (PreFilterResult | None, Status | None) tuple",
        ),
    ],
)
def test_plugin_error_is_an_error_as_simulate_reports_it(tmp_path: pathlib.Path, plugin: type, message: str) -> None:
    from kubesched.runtime.cli import simulate
    from kubesched.runtime.registry import Registry

    reg = Registry.discover()
    reg.register("P", plugin)
    cluster, config = _files(tmp_path, ["P"])
    simulated = simulate(str(cluster), str(config), registry=reg, seed=1)["pods"][0]
    assert (simulated["status"], simulated["message"]) == ("Error", message)
    ex = explain_simulated(str(cluster), "p", str(config), registry=reg, seed=1, alone=True)
    assert (ex.status, ex.error, ex.message, ex.selected) == ("Error", message, message, None)
    assert ex.as_dict()["status"] == "Error"


def test_explain_cli_prints_the_error(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    from kubesched.runtime import cli
    from kubesched.runtime.registry import Registry

    reg = Registry.discover()
    reg.register("P", _RaisesInFilter)
    monkeypatch.setattr(cli.app, "registry", lambda: reg)
    cluster, config = _files(tmp_path, ["P"])
    res = CliRunner().invoke(main, ["explain", "p", "--cluster", str(cluster), "--alone", "--config", str(config)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1] == 'Error: running Filter plugin "P": ValueError: cannot read node b'
    assert "unschedulable" not in res.stdout


class _FailsInPreScore:
    @hookimpl
    def pre_score(self):
        return Status(Code.ERROR, "no data")


class _LaterPreScore:
    @hookimpl
    def pre_score(self):
        return None


def test_prescore_plugins_after_an_error_are_not_run() -> None:
    from kubesched.runtime.registry import Registry

    reg = Registry.discover()
    reg.register("A", _FailsInPreScore)
    reg.register("Z", _LaterPreScore)
    ex = _explain_with(reg, ["A", "Z"])
    assert {k: ex.prescore[k] for k in ("A", "Z")} == {"A": 'error: running PreScore plugin "A": no data', "Z": "not run"}
    assert ex.status == "Error" and ex.error == 'running PreScore plugin "A": no data'


def test_explain_logs_the_traceback_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from kubesched.runtime.registry import Registry

    reg = Registry.discover()
    reg.register("P", _RaisesInFilter)
    with caplog.at_level(logging.DEBUG, logger="kubesched.explain"):
        ex = _explain_with(reg, ["P"])
    assert ex.status == "Error"
    [rec] = [r for r in caplog.records if r.name == "kubesched.explain"]
    assert rec.getMessage() == 'explain: pod="default/p" failed with an error: running Filter plugin "P": ValueError: cannot read node b'
    assert rec.exc_info is not None and rec.exc_info[0] is ValueError


def _files(d: pathlib.Path, plugins: list[str]) -> tuple[pathlib.Path, pathlib.Path]:
    """Nodes a and b, pod p, and a profile with ``plugins`` added to the defaults."""
    import yaml

    cluster = d / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([make_node().name("a").obj(), make_node().name("b").obj(), make_pod().name("p").obj()]))
    config = d / "config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": n} for n in plugins]}}}],
    }))
    return cluster, config


def _explain_with(reg, plugins):
    import tempfile

    cluster, config = _files(pathlib.Path(tempfile.mkdtemp()), plugins)
    return explain_simulated(str(cluster), "p", str(config), registry=reg, seed=1, alone=True)


# explain's message is the scheduler's FailedScheduling message -----------------------------------

_TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]


def _equal_cases() -> list[tuple[str, list, dict]]:
    def nodes():
        return [
            make_node().name("a").capacity(cpu="2", memory="4Gi").obj(),
            make_node().name("b").capacity(cpu="2", memory="4Gi").taints(_TAINT).obj(),
            make_node().name("c").capacity(cpu="4", memory="4Gi").obj(),
        ]

    def low(name, node, cpu):
        return make_pod().name(name).priority(0).req(cpu=cpu).node(node).obj()

    return [
        # PreFilter narrows (matchFields metadata.name): the other nodes "didn't satisfy plugin(s)"
        ("narrowed", nodes(), make_pod().name("p").node_affinity_in("metadata.name", ["b"], field=True).obj()),
        ("narrowed-and-too-big", nodes(), make_pod().name("p").req(cpu="3").node_affinity_in("metadata.name", ["a", "b"], field=True).obj()),
        # PreFilter narrows to a node that does not exist: every node is absent
        ("narrowed-to-nothing", nodes(), make_pod().name("p").node_affinity_in("metadata.name", ["ghost"], field=True).obj()),
        # PreFilter rejects
        ("prefilter-rejects", nodes(), make_pod().name("p").pvc("missing").obj()),
        # Filter
        ("filter", nodes(), make_pod().name("p").req(cpu="5").obj()),
        ("filter-selector", nodes(), make_pod().name("p").node_selector({"zone": "nowhere"}).obj()),
        # PostFilter: preemption would help (the message has no PostFilter part) ...
        ("preemption", nodes() + [low("v", "c", "4")], make_pod().name("p").priority(100).req(cpu="3").obj()),
        # ... or cannot (the message ends with PostFilter's)
        ("no-victims", nodes() + [make_pod().name("v").priority(1000).req(cpu="4").node("c").obj()], make_pod().name("p").priority(100).req(cpu="3").obj()),
    ]


@pytest.mark.parametrize(("case", "objs", "pod"), _equal_cases(), ids=[c[0] for c in _equal_cases()])
def test_explain_message_equals_the_schedulers(tmp_path: pathlib.Path, case: str, objs: list, pod: dict) -> None:
    """For each pod, explain's message equals the message of the scheduler's first
    FailedScheduling event for it (and simulate's, for a pod that stays unschedulable)."""
    import yaml

    from kubesched.runtime.cli import app
    from kubesched.runtime.cli.simulate_cmd import simulate
    from kubesched.runtime.cluster.simulated import SimulatedCluster, load_manifests
    from kubesched.runtime.scheduler import Scheduler

    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([*objs, pod]))
    ex = explain_simulated(str(f), "p", seed=1, alone=True)
    reg = app.registry()
    sim = SimulatedCluster(load_manifests(str(f)), source=str(f))
    sched = Scheduler(app.load_config_file(None, reg), reg, sim, seed=1, simulated=True)
    try:
        sim.run(sched)
    finally:
        sched.shutdown()
    failed = [e.note for e in sim.events if e.reason == "FailedScheduling" and e.regarding == "Pod default/p"]
    assert failed, case
    assert ex.message == failed[0]
    report = {r["name"]: r for r in simulate(str(f), seed=1)["pods"]}
    if report["p"]["status"] == "Unschedulable":
        assert ex.message == report["p"]["message"]
    assert ex.status == "Unschedulable"


def test_explain_words_nodes_outside_the_prefilter_result_as_the_scheduler(tmp_path: pathlib.Path) -> None:
    """The issue's example: NodeAffinity's PreFilter keeps b (tainted): a and c "didn't satisfy
    plugin(s) [NodeAffinity]", and so does the table per node."""
    import yaml

    objs = _equal_cases()[0][1]
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([*objs, make_pod().name("p").node_affinity_in("metadata.name", ["b"], field=True).obj()]))
    ex = explain_simulated(str(f), "p", alone=True)
    assert ex.message.startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
    )
    assert ex.filter["a"]["PreFilter"] == "node(s) didn't satisfy plugin(s) [NodeAffinity]"
    assert ex.prefilter_nodes == ["b"]
