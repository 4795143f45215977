"""Plugins' close() (the SDK's Plugin protocol) is called once when the scheduler shuts down."""

from __future__ import annotations

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
