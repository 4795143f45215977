"""A plugin author's mistakes are reported by name: the plugin, its distribution, the hook and
what was expected. A plugin that breaks the contract is broken (listed as such; it fails only a
profile that uses it). Entry points in a misspelt group are reported, never silently ignored.

The group checks use a real distribution: a dist-info directory in a temporary site directory
put on ``sys.path``, read by importlib.metadata as any installed distribution."""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main
from kubesched.runtime.config import ConfigError, load_config_data
from kubesched.runtime.registry import Registry, UnknownPluginError
from kubesched.sdk import HOOKS, build_args, hookimpl

# in-process plugins: the contract checks -------------------------------------------------------


def _plugin(methods: dict, name: str = "Foo", **attrs) -> type:
    return type(name, (), {**methods, **attrs})


def _register(cls: type, name: str = "Foo"):
    reg = Registry.discover(allow="")
    return reg, reg.register(name, cls, distribution="dist-name", version="1.0")


def _profile(reg: Registry, plugin: str, point: str = "multiPoint"):
    from kubesched.runtime.cluster.simulated import SimulatedCluster
    from kubesched.runtime.scheduler import Scheduler

    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {point: {"enabled": [{"name": plugin}]}}}],
    }
    cfg = load_config_data(doc, installed_plugins=reg.names())
    return Scheduler(cfg, reg, SimulatedCluster([]), simulated=True)


@pytest.mark.parametrize(
    ("method", "hook"),
    [("scores", "score"), ("filters", "filter"), ("prefilter", "pre_filter"), ("preFilter", "pre_filter"), ("normalize", "normalize_score")],
)
def test_marked_method_that_is_not_a_hook_breaks_the_plugin(method: str, hook: str) -> None:
    cls = _plugin({method: hookimpl(lambda self: None)})
    reg, spec = _register(cls)
    assert spec.broken
    msg = f'plugin "Foo" (dist-name 1.0): method "{method}" is marked @hookimpl but is not a hook; did you mean "{hook}"?'
    assert spec.describe_error() == msg
    assert spec.as_dict()["broken"] is True
    with pytest.raises(ConfigError) as ei:
        _profile(reg, "Foo")
    assert str(ei.value) == f"profiles[0].plugins: {msg}"


def test_not_a_hook_without_a_close_name_lists_the_hooks() -> None:
    _, spec = _register(_plugin({"frobnicate": hookimpl(lambda self: None)}))
    assert spec.error == f'method "frobnicate" is marked @hookimpl but is not a hook; the hooks are: {", ".join(HOOKS)}'


def test_not_a_hook_through_specname_names_the_method_and_the_specname() -> None:
    _, spec = _register(_plugin({"my_filter": hookimpl(specname="filters")(lambda self: None)}))
    assert spec.error == 'method "my_filter" (specname "filters") is marked @hookimpl but is not a hook; did you mean "filter"?'


def test_broken_plugin_fails_only_the_profile_that_uses_it() -> None:
    class Fine:
        @hookimpl
        def filter(self, node_info):
            return None

    reg, _ = _register(_plugin({"scores": hookimpl(lambda self: None)}))
    reg.register("Fine", Fine)
    assert _profile(reg, "Fine", "filter").frameworks  # builds: Foo is not used


def test_hook_with_an_argument_the_spec_does_not_have() -> None:
    class Foo:
        @hookimpl
        def filter(self, state, pod, node):
            return None

    reg, spec = _register(Foo)
    assert spec.describe_error() == (
        'plugin "Foo" (dist-name 1.0): hook filter has argument "node", which the spec does not have; '
        "expected filter(state, pod, node_info)"
    )
    with pytest.raises(ConfigError) as ei:
        _profile(reg, "Foo", "filter")
    assert str(ei.value) == f"profiles[0].plugins: {spec.describe_error()}"


def test_hook_with_two_unknown_arguments() -> None:
    class Foo:
        @hookimpl
        def score(self, st, node):
            return 0

    _, spec = _register(Foo)
    assert spec.error == (
        'hook score has arguments "st", "node", which the spec does not have; expected score(state, pod, node_info)'
    )


def test_hook_may_declare_any_subset_of_the_spec_arguments_in_any_order() -> None:
    class Subset:
        @hookimpl
        def filter(self, node_info, state):
            return None

        @hookimpl
        def score(self):
            return 0

        @hookimpl
        def permit(self, node_name, extra=1):  # an argument with a default is not passed
            return None

        @staticmethod
        @hookimpl
        def pre_filter(pod):
            return None

    _, spec = _register(Subset)
    assert not spec.broken, spec.error
    assert spec.extension_points == ["preFilter", "filter", "score", "permit"]


def test_args_that_is_not_a_dataclass_breaks_the_plugin() -> None:
    class FooArgs:
        label = "priority"

    class Foo:
        Args = FooArgs

        @hookimpl
        def filter(self, node_info):
            return None

    reg, spec = _register(Foo)
    assert spec.describe_error() == 'plugin "Foo" (dist-name 1.0): Args must be a dataclass, got class FooArgs'
    assert spec.as_dict()["args"] == {}
    with pytest.raises(ConfigError) as ei:
        _profile(reg, "Foo", "filter")
    assert str(ei.value) == f"profiles[0].plugins: {spec.describe_error()}"
    with pytest.raises(TypeError) as te:
        build_args(FooArgs, {"label": "x"})
    assert str(te.value) == "Args must be a dataclass, got class FooArgs"


def test_args_that_is_a_dataclass_instance_breaks_the_plugin() -> None:
    @dataclass
    class FooArgs:
        label: str = "priority"

    _, spec = _register(_plugin({"filter": hookimpl(lambda self: None)}, Args=FooArgs()))
    assert spec.error == "Args must be a dataclass, got an instance of FooArgs (name the class, not an instance)"


def test_every_problem_of_a_plugin_is_reported_at_once() -> None:
    class FooArgs:
        pass

    class Foo:
        Args = FooArgs

        @hookimpl
        def scores(self):
            return 0

        @hookimpl
        def filter(self, node):
            return None

    _, spec = _register(Foo)
    assert spec.error == (
        'hook filter has argument "node", which the spec does not have; expected filter(state, pod, node_info); '
        'method "scores" is marked @hookimpl but is not a hook; did you mean "score"?; '
        "Args must be a dataclass, got class FooArgs"
    )


def test_installed_plugins_keep_the_contract() -> None:
    reg = Registry.discover(allow=None)
    assert [s.describe_error() for s in reg.specs() if s.broken] == []


# a real installed distribution ---------------------------------------------------------------------

DEMO_MODULE = """
from kubesched.sdk import hookimpl


class Scores:
    @hookimpl
    def scores(self, pod):
        return 1


class WrongArgument:
    @hookimpl
    def filter(self, state, pod, node):
        return None


class NotADataclass:
    label = "x"


class BadArgs:
    Args = NotADataclass

    @hookimpl
    def filter(self, pod):
        return None


class Fine:
    @hookimpl
    def filter(self, pod):
        return None
"""

DEMO_ENTRY_POINTS = """
[kubesched.plugins]
DemoScores = kubesched_contract_demo:Scores
DemoWrongArgument = kubesched_contract_demo:WrongArgument
DemoBadArgs = kubesched_contract_demo:BadArgs
DemoFine = kubesched_contract_demo:Fine

[kubesched.plugin]
Typo1 = kubesched_contract_demo:Fine

[kubesched-plugins]
Typo2 = kubesched_contract_demo:Fine

[kubesched_plugins]
Typo3 = kubesched_contract_demo:Fine

[kubesched.Plugins]
Typo4 = kubesched_contract_demo:Fine

[console_scripts]
kubesched-demo = kubesched.runtime.cli:main

[pytest11]
kubesched_demo = kubesched_contract_demo
"""

DEMO = "kubesched-contract-demo"
TYPOS = [("Typo1", "kubesched.plugin"), ("Typo2", "kubesched-plugins"), ("Typo3", "kubesched_plugins"), ("Typo4", "kubesched.Plugins")]


@pytest.fixture
def demo_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Install distribution kubesched-contract-demo 1.0 into a site directory on sys.path."""
    site = tmp_path / "site"
    info = site / "kubesched_contract_demo-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DEMO}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(DEMO_ENTRY_POINTS).lstrip())
    (site / "kubesched_contract_demo.py").write_text(textwrap.dedent(DEMO_MODULE))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("KUBESCHED_LOAD_PLUGINS", raising=False)
    yield site
    sys.modules.pop("kubesched_contract_demo", None)


def test_installed_distribution_with_contract_mistakes_is_listed_broken(demo_dist: Path) -> None:
    reg = Registry.discover()
    errors = {s.name: s.describe_error() for s in reg.specs() if s.broken and s.distribution == DEMO}
    assert errors == {
        "DemoBadArgs": f'plugin "DemoBadArgs" ({DEMO} 1.0): Args must be a dataclass, got class NotADataclass',
        "DemoScores": f'plugin "DemoScores" ({DEMO} 1.0): method "scores" is marked @hookimpl but is not a hook; did you mean "score"?',
        "DemoWrongArgument": (
            f'plugin "DemoWrongArgument" ({DEMO} 1.0): hook filter has argument "node", which the spec does not have; '
            "expected filter(state, pod, node_info)"
        ),
    }
    assert reg.get("DemoFine").extension_points == ["filter"]


def test_misspelt_groups_are_warnings_of_the_registry(demo_dist: Path) -> None:
    reg = Registry.discover()
    assert reg.warnings() == [
        f'distribution "{DEMO}" 1.0 registers "{name}" in entry-point group "{group}", which kubesched does not read'
        ' — the group is "kubesched.plugins"'
        for name, group in TYPOS
    ]
    assert all(name not in reg for name, _ in TYPOS)
    assert reg.copy().warnings() == reg.warnings()


@pytest.mark.parametrize(("name", "group"), TYPOS)
def test_unknown_plugin_in_a_misspelt_group_names_the_group(demo_dist: Path, name: str, group: str) -> None:
    reg = Registry.discover()
    msg = f'unknown plugin "{name}"; distribution "{DEMO}" registers it in entry-point group "{group}" — the group is "kubesched.plugins"'
    with pytest.raises(UnknownPluginError) as ei:
        reg.get(name)
    assert str(ei.value) == msg
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": name}]}}}],
    }
    with pytest.raises(ConfigError) as ce:
        load_config_data(doc, installed_plugins=reg.names(), unknown_plugin_hints=reg.unknown_plugin_hints())
    assert str(ce.value) == f"profiles[0].plugins.filter.enabled[0].name: {msg}"


def test_cli_plugins_marks_broken_plugins_and_warns_about_groups(demo_dist: Path) -> None:
    res = CliRunner().invoke(main, ["plugins"])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.stdout.splitlines() if "DemoScores" in line)
    assert f"{DEMO}" in row and "BROKEN: method" in row
    err = res.stderr.splitlines()
    assert f'broken: plugin "DemoScores" ({DEMO} 1.0): method "scores" is marked @hookimpl but is not a hook; did you mean "score"?' in err
    assert f'broken: plugin "DemoBadArgs" ({DEMO} 1.0): Args must be a dataclass, got class NotADataclass' in err
    assert (
        f'warning: distribution "{DEMO}" 1.0 registers "Typo1" in entry-point group "kubesched.plugin", which kubesched'
        ' does not read — the group is "kubesched.plugins"'
    ) in err


def test_cli_plugins_json_marks_broken_plugins(demo_dist: Path) -> None:
    res = CliRunner().invoke(main, ["plugins", "--json"])
    assert res.exit_code == 0, res.output
    by_name = {d["name"]: d for d in json.loads(res.stdout)}
    assert by_name["DemoWrongArgument"]["broken"] is True
    assert by_name["DemoWrongArgument"]["error"] == (
        'hook filter has argument "node", which the spec does not have; expected filter(state, pod, node_info)'
    )
    assert by_name["DemoFine"]["broken"] is False and "error" not in by_name["DemoFine"]
    assert len([line for line in res.stderr.splitlines() if line.startswith("warning: distribution")]) == 4


def _config_file(tmp_path: Path, plugin: str) -> Path:
    f = tmp_path / "config.yaml"
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": plugin}]}}}],
    }
    f.write_text(yaml.safe_dump(doc))
    return f


def test_config_validate_fails_with_the_broken_plugins_message(demo_dist: Path, tmp_path: Path) -> None:
    f = _config_file(tmp_path, "DemoScores")
    res = CliRunner().invoke(main, ["config", "validate", str(f)])
    assert res.exit_code == 2, res.output
    assert res.stderr == (
        f'kubesched: error: {f}: profiles[0].plugins: plugin "DemoScores" ({DEMO} 1.0): method "scores" is marked'
        ' @hookimpl but is not a hook; did you mean "score"?\n'
    )
    ok = _config_file(tmp_path, "DemoFine")
    assert CliRunner().invoke(main, ["config", "validate", str(ok)]).exit_code == 0


def test_config_validate_names_the_misspelt_group(demo_dist: Path, tmp_path: Path) -> None:
    f = _config_file(tmp_path, "Typo1")
    res = CliRunner().invoke(main, ["config", "validate", str(f)])
    assert res.exit_code == 2, res.output
    assert res.stderr == (
        f'kubesched: error: {f}: profiles[0].plugins.multiPoint.enabled[0].name: unknown plugin "Typo1"; distribution'
        f' "{DEMO}" registers it in entry-point group "kubesched.plugin" — the group is "kubesched.plugins"\n'
    )
