"""A plugin's life under the CLI: close() once at shutdown, the traceback of what it raised at
--debug, and a plugin that cannot be built reported in one line by `run` as by `config validate`."""

from __future__ import annotations

import json
import logging
import pathlib

import pytest
import yaml

from kubesched.runtime.cli import simulate
from kubesched.runtime.registry import Registry
from kubesched.sdk import hookimpl
from kubesched.testing import make_node, make_pod, run_profile

CLOSED: list[str] = []


class Closing:
    @hookimpl
    def filter(self) -> None:
        return None

    def close(self) -> None:
        CLOSED.append("Closing")


class ClosingToo(Closing):
    def close(self) -> None:
        CLOSED.append("ClosingToo")


def _config(tmp_path: pathlib.Path) -> pathlib.Path:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Closing"}, {"name": "ClosingToo"}]}}}],
    }))
    return config


def test_simulate_closes_every_plugin_once_in_reverse_order(tmp_path: pathlib.Path) -> None:
    CLOSED.clear()
    reg = Registry.discover()
    reg.register("Closing", Closing)
    reg.register("ClosingToo", ClosingToo)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([make_node().name("a").obj(), make_pod().name("p").obj()]))
    report = simulate(str(cluster), str(_config(tmp_path)), registry=reg)
    assert report["summary"]["scheduled"] == 1
    assert CLOSED == ["ClosingToo", "Closing"]


def test_the_kits_run_closes_plugins_on_close() -> None:
    CLOSED.clear()
    result = run_profile({"Closing": Closing}, nodes=[make_node().name("a").obj()], pods=[make_pod().name("p").obj()])
    assert CLOSED == []  # rerun() may still continue the run
    result.close()
    result.close()
    assert CLOSED == ["Closing"]


def test_frameworks_built_only_to_check_or_inspect_a_config_are_closed(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from kubesched.runtime import cli
    from kubesched.runtime.cli import main, required_kinds
    from kubesched.runtime.config import load_config

    reg = Registry.discover()
    reg.register("Closing", Closing)
    reg.register("ClosingToo", ClosingToo)
    config = _config(tmp_path)
    CLOSED.clear()
    required_kinds(load_config(str(config), installed_plugins=reg.names()), reg)
    assert CLOSED == ["ClosingToo", "Closing"]
    CLOSED.clear()
    monkeypatch.setattr(cli.app, "registry", lambda: reg)
    out = CliRunner().invoke(main, ["config", "validate", str(config)])
    assert out.exit_code == 0, out.output
    assert CLOSED == ["ClosingToo", "Closing"]


class _Boom:
    @hookimpl
    def filter(self, node_info):
        raise ValueError("boom on " + node_info.name)


def test_debug_shows_the_traceback_of_a_plugins_exception(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    from click.testing import CliRunner

    from kubesched.runtime import cli
    from kubesched.runtime.cli import main

    reg = Registry.discover()
    reg.register("Boom", _Boom)
    monkeypatch.setattr(cli.app, "registry", lambda: reg)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([make_node().name("a").obj(), make_pod().name("p").obj()]))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Boom"}]}}}],
    }))
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        quiet = CliRunner().invoke(main, ["simulate", str(cluster), "--config", str(config), "-o", "json"])
        assert quiet.exit_code == 0 and "Traceback" not in quiet.stderr
        loud = CliRunner().invoke(main, ["--debug", "simulate", str(cluster), "--config", str(config), "-o", "json"])
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    assert loud.exit_code == 0, loud.output
    assert json.loads(loud.stdout)["pods"][0]["message"] == 'running Filter plugin "Boom": ValueError: boom on a'
    assert "Traceback (most recent call last)" in loud.stderr
    assert 'raise ValueError("boom on " + node_info.name)' in loud.stderr


class _BadInit:
    @hookimpl
    def filter(self) -> None:
        return None

    def __init__(self) -> None:
        raise RuntimeError("no license file")


def test_run_reports_a_plugin_that_cannot_be_built_in_one_line(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from kubesched.runtime import cli
    from kubesched.runtime.cli import main

    reg = Registry.discover()
    reg.register("BadInit", _BadInit, distribution="kubesched-bad", version="1.0")
    monkeypatch.setattr(cli.app, "registry", lambda: reg)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "BadInit"}]}}}],
    }))
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        out = CliRunner().invoke(main, ["run", "--config", str(config), "--kubeconfig", str(kubeconfig), "--address", "127.0.0.1:0"])
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    assert out.exit_code == 2, out.output
    assert out.stderr.strip().splitlines() == [
        f'kubesched: error: {config}: profiles[0].plugins: initializing plugin "BadInit" (kubesched-bad): RuntimeError: no license file'
    ]
