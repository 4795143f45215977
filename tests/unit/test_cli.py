"""The ``kubesched`` command line (click's CliRunner). Uses only installed plugins that load:
PrioritySort, DefaultBinder and the third-party PriorityLabel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.runtime import __version__
from kubesched.runtime.cli import main, simulate
from kubesched.runtime.observe.trace import Tracer
from kubesched.sdk import Status, hookimpl

DATA = Path(__file__).parent / "data"
CLUSTER = DATA / "priority_label_cluster.yaml"
CONFIG = DATA / "priority_label_config.yaml"
BAD_KIND = DATA / "bad_kind_cluster.yaml"


@pytest.fixture(autouse=True)
def _all_plugins(monkeypatch):
    monkeypatch.delenv("KUBESCHED_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("KUBESCHED_TRACE", raising=False)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _assert_user_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    err = result.stderr
    assert err.startswith("kubesched: error: "), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in result.output
    for f in fragments:
        assert f in err, err
    return err


def test_version(runner):
    result = runner.invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"kubesched {__version__}"


def test_cli_listing_json(runner):
    result = runner.invoke(main, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, list) and data
    for entry in data:
        assert {"name", "distribution", "version", "extension_points"} <= set(entry)
        assert isinstance(entry["extension_points"], list)
    by_name = {e["name"]: e for e in data}
    assert by_name["PrioritySort"]["distribution"] == "kubesched"
    assert by_name["PrioritySort"]["extension_points"] == ["queueSort"]
    assert by_name["PriorityLabel"]["distribution"] == "kubesched-priority-label"
    assert by_name["PriorityLabel"]["version"] == "0.1.0"
    assert by_name["PriorityLabel"]["extension_points"] == ["filter", "score"]
    assert [e["name"] for e in data] == sorted(e["name"] for e in data)


def test_cli_listing_json_respects_allow_list(runner, monkeypatch):
    monkeypatch.setenv("KUBESCHED_LOAD_PLUGINS", "")
    data = json.loads(runner.invoke(main, ["plugins", "--json"]).stdout)
    names = {e["name"] for e in data}
    assert "PriorityLabel" not in names
    assert "PrioritySort" in names


def test_cli_listing_table(runner):
    result = runner.invoke(main, ["plugins"])
    assert result.exit_code == 0, result.output
    assert "PriorityLabel" in result.stdout
    assert "kubesched-priority-label" in result.stdout


def test_simulate_json(runner):
    result = runner.invoke(
        main, ["simulate", str(CLUSTER), "--config", str(CONFIG), "--output", "json", "--seed", "1"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"pods", "summary", "metrics"}
    keys = ("namespace", "name", "node", "status", "message")
    # every pod of the file: the one already running and the other scheduler's too
    assert [{k: p[k] for k in keys} for p in report["pods"]] == [
        {"namespace": "kube-system", "name": "already-running", "node": "n1", "status": "Running", "message": ""},
        {"namespace": "default", "name": "web", "node": "n2", "status": "Scheduled", "message": ""},
        {"namespace": "team", "name": "api", "node": "n2", "status": "Scheduled", "message": ""},
        {"namespace": "default", "name": "elsewhere", "node": None, "status": "Ignored", "message": 'schedulerName "some-other-scheduler" is not a profile of this scheduler ("default-scheduler")'},
    ]
    assert all(p["profile"] for p in report["pods"])
    s = report["summary"]
    assert (s["nodes"], s["pods"], s["scheduled"], s["unschedulable"], s["errors"], s["running"], s["ignored"]) == (
        3,
        4,
        2,
        0,
        0,
        1,
        1,
    )


def test_simulate_reports_unschedulable_with_message(runner, tmp_path):
    cluster = tmp_path / "c.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n"
    )
    result = runner.invoke(main, ["simulate", str(cluster), "--config", str(CONFIG), "-o", "json"])
    assert result.exit_code == 0, result.output
    (p,) = json.loads(result.stdout)["pods"]
    assert p["status"] == "Unschedulable"
    assert p["node"] is None
    assert p["message"] == "0/1 nodes are available: 1 node(s) didn't have label priority."


def test_simulate_table(runner):
    result = runner.invoke(main, ["simulate", str(CLUSTER), "--config", str(CONFIG)])
    assert result.exit_code == 0, result.output
    assert "default/web" in result.stdout and "team/api" in result.stdout
    assert "2 scheduled" in result.stdout


def test_bad_manifest_exits_2_with_one_line(runner):
    _assert_user_error(
        runner.invoke(main, ["simulate", str(BAD_KIND), "--config", str(CONFIG)]),
        str(BAD_KIND),
        "document 2",
        '"Nod"',
    )


def test_missing_cluster_file_exits_2(runner, tmp_path):
    _assert_user_error(
        runner.invoke(main, ["simulate", str(tmp_path / "nope.yaml"), "--config", str(CONFIG)]),
        "nope.yaml",
    )


def test_bad_profile_file_exits_2_with_one_line(runner, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        CONFIG.read_text().replace(
            "name: PriorityLabel}]}\n    score", "name: PriorityLabl}]}\n    score"
        )
    )
    _assert_user_error(
        runner.invoke(main, ["simulate", str(CLUSTER), "--config", str(cfg)]), "PriorityLabl"
    )


def test_malformed_yaml_exits_2(runner, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: [\n")
    _assert_user_error(
        runner.invoke(main, ["simulate", str(bad), "--config", str(CONFIG)]), "malformed YAML"
    )


def test_debug_shows_the_exception(runner):
    result = runner.invoke(main, ["--debug", "simulate", str(BAD_KIND), "--config", str(CONFIG)])
    assert result.exit_code != 0
    assert result.exception is not None
    assert type(result.exception).__name__ == "ManifestError"


def test_trace_logs_each_extension_point_call_in_order(runner):
    result = runner.invoke(
        main, ["simulate", str(CLUSTER), "--config", str(CONFIG), "-o", "json", "--trace"]
    )
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # the trace does not pollute stdout
    lines = [
        ln.split()
        for ln in result.stderr.splitlines()
        if ln.startswith("trace ") and "pod=default/web" in ln
    ]
    got = [(w[1], w[2], w[3], w[4]) for w in lines]
    assert got == [
        ("Filter", "PriorityLabel", "pod=default/web", "node=n1"),
        ("Filter", "PriorityLabel", "pod=default/web", "node=n2"),
        ("Filter", "PriorityLabel", "pod=default/web", "node=n3"),
        ("Score", "PriorityLabel", "pod=default/web", "node=n1"),
        ("Score", "PriorityLabel", "pod=default/web", "node=n2"),
        ("NormalizeScore", "PriorityLabel", "pod=default/web", "node=-"),
        ("Bind", "DefaultBinder", "pod=default/web", "node=n2"),
    ]
    text = [ln for ln in result.stderr.splitlines() if "pod=default/web" in ln]
    assert "-> Success" in text[0]
    assert "-> UnschedulableAndUnresolvable: node(s) didn't have label priority" in text[2]
    assert "-> score 5" in text[4]
    assert "n1=0, n2=100" in text[5]


def test_trace_env_var(runner, monkeypatch):
    monkeypatch.setenv("KUBESCHED_TRACE", "1")
    result = runner.invoke(main, ["simulate", str(CLUSTER), "--config", str(CONFIG), "-o", "json"])
    assert result.exit_code == 0
    assert "trace Filter" in result.stderr


def test_trace_records_every_point_with_custom_hooks(ks, tmp_path):
    """simulate() with an in-process registry: the tracer sees each call with pod, node, plugin
    and result, in the order the framework makes them."""

    class All:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def pre_filter(self, pod):
            return None

        @hookimpl
        def filter(self, node_info):
            return Status.unschedulable("full") if node_info.name == "n1" else None

        @hookimpl
        def reserve(self, node_name):
            return None

        @hookimpl
        def unreserve(self, node_name):
            return None

        @hookimpl
        def permit(self):
            return None

        @hookimpl
        def pre_bind(self):
            return None

        @hookimpl
        def post_bind(self):
            return None

    reg = ks.registry({"All": All})
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        ks.config_yaml(
            {
                p: ["All"]
                for p in ("preFilter", "filter", "reserve", "permit", "preBind", "postBind")
            },
            name="default-scheduler",
        )
    )
    cluster = tmp_path / "c.yaml"
    import yaml

    cluster.write_text(
        yaml.safe_dump_all(ks.nodes(2) + [ks.pod("p", scheduler="default-scheduler")])
    )
    tracer = Tracer(stream=None, keep=True)
    report = simulate(str(cluster), str(cfg), registry=reg, tracer=tracer, seed=1)
    assert report["pods"][0]["node"] == "n2"
    got = [(r.point, r.plugin, r.pod, r.node, r.result) for r in tracer.records]
    assert got == [
        ("PreFilter", "All", "default/p", "-", "Success"),
        ("Filter", "All", "default/p", "n1", "Unschedulable: full"),
        ("Filter", "All", "default/p", "n2", "Success"),
        ("Reserve", "All", "default/p", "n2", "Success"),
        ("Permit", "All", "default/p", "n2", "Success"),
        ("PreBind", "All", "default/p", "n2", "Success"),
        ("Bind", "DefaultBinder", "default/p", "n2", "Success"),
        ("PostBind", "All", "default/p", "n2", "Success"),
    ]


def test_config_validate_accepts_v1_v1beta3_and_v1beta2_files() -> None:
    """The three versions kube-scheduler still reads, validated end to end (schema, defaults,
    plugin names, every plugin's args)."""
    import pathlib

    from click.testing import CliRunner

    from kubesched.runtime.cli import main

    data = pathlib.Path(__file__).parent / "config" / "data"
    for name, version in (("v1.yaml", "v1"), ("v1beta3.yaml", "v1beta3"), ("v1beta2.yaml", "v1beta2")):
        res = CliRunner().invoke(main, ["config", "validate", str(data / name)])
        assert res.exit_code == 0, res.output
        assert f"valid kubescheduler.config.k8s.io/{version} configuration" in res.output
