"""Plugin discovery: broken entry points, the allow-list, and the listing."""

from __future__ import annotations

import pytest

from kubesched.runtime.config import ConfigError
from kubesched.runtime.registry import PluginSpec, Registry, UnknownPluginError, implemented_points
from kubesched.sdk import Status, hookimpl

RUNTIME_PLUGINS = {"PrioritySort", "DefaultBinder", "SchedulingGates"}


def _broken_registry(ks) -> Registry:
    reg = ks.registry()

    def loader():
        raise ImportError("No module named 'kubesched_broken.missing'")

    spec = PluginSpec("Broken", "kubesched-broken", "1.2.3", "kubesched_broken.missing:Broken")
    reg._load(spec, loader)
    reg._specs[spec.name] = spec
    return reg


def test_broken_entry_point_is_recorded_with_distribution_and_error(ks):
    reg = _broken_registry(ks)
    spec = reg.get("Broken")
    assert spec.broken
    assert spec.error == "ImportError: No module named 'kubesched_broken.missing'"
    assert spec.factory is None
    msg = spec.describe_error()
    assert "kubesched-broken" in msg and "1.2.3" in msg and "ImportError" in msg


def test_broken_entry_point_is_listed(ks):
    reg = _broken_registry(ks)
    listing = {d["name"]: d for d in (s.as_dict() for s in reg.specs())}
    d = listing["Broken"]
    assert d["distribution"] == "kubesched-broken"
    assert d["version"] == "1.2.3"
    assert "ImportError" in d["error"]
    assert d["extension_points"] == []
    assert "error" not in listing["PrioritySort"]


def _scheduler(ks, reg, points):
    from kubesched.runtime.cluster.simulated import SimulatedCluster
    from kubesched.runtime.config import load_config_data
    from kubesched.runtime.scheduler import Scheduler

    cfg = load_config_data(ks.config_yaml(points), installed_plugins=reg.names())
    return Scheduler(cfg, reg, SimulatedCluster([]), simulated=True)


class F:
    @hookimpl
    def filter(self):
        return None


def test_broken_plugin_fails_only_a_profile_that_uses_it(ks):
    reg = _broken_registry(ks)
    reg.register("F", F)
    _scheduler(ks, reg, {"filter": ["F"]})  # a profile without it builds fine
    with pytest.raises(ConfigError) as ei:
        _scheduler(ks, reg, {"filter": ["F", "Broken"]})
    assert "Broken" in str(ei.value)


def test_broken_plugin_error_names_distribution_and_load_error(ks):
    reg = _broken_registry(ks)
    reg.register("F", F)
    with pytest.raises(ConfigError) as ei:
        _scheduler(ks, reg, {"filter": ["F", "Broken"]})
    msg = str(ei.value)
    assert "kubesched-broken" in msg
    assert "ImportError" in msg


def test_broken_plugin_named_in_multipoint_fails_the_profile(ks):
    """Through multiPoint the broken plugin implements no point; the profile must still fail with
    the load error naming the distribution, not start without the plugin."""
    reg = _broken_registry(ks)
    from kubesched.runtime.config import load_config_data

    doc = ks.config_dict({})
    doc["profiles"][0]["plugins"]["multiPoint"]["enabled"] = [{"name": "Broken"}]
    cfg = load_config_data(doc, installed_plugins=reg.names())
    from kubesched.runtime.cluster.simulated import SimulatedCluster
    from kubesched.runtime.scheduler import Scheduler

    with pytest.raises(ConfigError) as ei:
        Scheduler(cfg, reg, SimulatedCluster([]), simulated=True)
    assert "kubesched-broken" in str(ei.value)
    assert "ImportError" in str(ei.value)


def test_loader_may_raise_anything_but_keyboard_interrupt(ks):
    reg = ks.registry()
    spec = PluginSpec("X", "d", "1", "x:X")
    reg._load(spec, lambda: (_ for _ in ()).throw(SyntaxError("bad syntax")))
    assert spec.error is not None and spec.error.startswith("SyntaxError")
    spec2 = PluginSpec("Y", "d", "1", "y:Y")

    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        reg._load(spec2, interrupt)


def test_non_callable_factory_is_broken(ks):
    reg = ks.registry()
    spec = reg.register("NotAFactory", 42, distribution="kubesched-weird", version="0.0.1")
    assert spec.broken
    assert "not a class or factory" in spec.error
    assert "kubesched-weird" in spec.describe_error()
    with pytest.raises(ConfigError) as ei:
        _scheduler(ks, reg, {"filter": ["NotAFactory"]})
    assert "NotAFactory" in str(ei.value)


def test_non_callable_factory_error_names_distribution(ks):
    reg = ks.registry()
    reg.register("NotAFactory", 42, distribution="kubesched-weird", version="0.0.1")
    with pytest.raises(ConfigError) as ei:
        _scheduler(ks, reg, {"filter": ["NotAFactory"]})
    assert "kubesched-weird" in str(ei.value)


def test_factory_raising_at_build_fails_the_profile(ks):
    class Explodes:
        def __init__(self):
            raise RuntimeError("cannot start")

        @hookimpl
        def filter(self):
            return None

    with pytest.raises(ConfigError) as ei:
        ks.build({"Explodes": Explodes}, {"filter": ["Explodes"]}, [])
    assert "cannot start" in str(ei.value)
    assert "Explodes" in str(ei.value)


def test_factory_receives_args_and_handle(ks):
    got = {}

    class P:
        def __init__(self, args, handle):
            got["args"] = args
            got["handle"] = handle

        @hookimpl
        def filter(self):
            return None

    r = ks.build({"P": P}, {"filter": ["P"]}, [])
    assert got["handle"] is r.framework.handle
    assert got["handle"].profile_name == "test"


def test_allow_list_empty_keeps_runtime_ones_only():
    full = Registry.discover(allow=None)
    assert "PriorityLabel" in full
    assert full.get("PriorityLabel").distribution == "kubesched-priority-label"
    none = Registry.discover(allow="")
    assert RUNTIME_PLUGINS <= set(none.names())
    assert "PriorityLabel" not in none
    assert all(s.distribution == "kubesched" for s in none.specs())


def test_allow_list_by_distribution_or_plugin_name():
    assert "PriorityLabel" in Registry.discover(allow="kubesched-priority-label")
    assert "PriorityLabel" in Registry.discover(allow="PriorityLabel")
    assert "PriorityLabel" not in Registry.discover(allow="kubesched-something-else")


def test_allow_list_from_environment(monkeypatch):
    monkeypatch.setenv("KUBESCHED_LOAD_PLUGINS", "")
    reg = Registry.discover()
    assert "PriorityLabel" not in reg
    assert "PrioritySort" in reg
    monkeypatch.setenv("KUBESCHED_LOAD_PLUGINS", "kubesched-priority-label")
    assert "PriorityLabel" in Registry.discover()
    monkeypatch.delenv("KUBESCHED_LOAD_PLUGINS")
    assert "PriorityLabel" in Registry.discover()


def test_listing_fields_and_extension_points():
    reg = Registry.discover(allow=None)
    d = reg.get("PriorityLabel").as_dict()
    assert d["name"] == "PriorityLabel"
    assert d["distribution"] == "kubesched-priority-label"
    assert d["version"]
    assert d["extension_points"] == ["filter", "score"]
    assert d["args_kind"] == "PriorityLabelArgs"
    assert reg.get("PrioritySort").as_dict()["extension_points"] == ["queueSort"]
    assert reg.get("DefaultBinder").as_dict()["extension_points"] == ["bind"]


def test_implemented_points_in_kube_scheduler_order():
    class P:
        @hookimpl
        def post_bind(self):
            pass

        @hookimpl
        def filter(self):
            pass

        @hookimpl
        def unreserve(self):
            pass

        @hookimpl
        def normalize_score(self):
            pass

    assert implemented_points(P) == ["filter", "reserve", "postBind"]


def test_unmarked_hook_methods_are_warned_about(ks):
    class Forgot:
        def filter(self, node_info):
            return Status.unschedulable("never called")

        @hookimpl
        def score(self):
            return 1

    spec = ks.registry().register("Forgot", Forgot)
    assert spec.warnings and "filter" in spec.warnings[0]
    assert spec.extension_points == ["score"]


def test_batch_form_without_the_per_node_form_is_warned_about(ks):
    class OnlyBatch:
        @hookimpl
        def filter_batch(self, nodes):
            return [None] * len(nodes)

        @hookimpl
        def score(self):
            return 1

    spec = ks.registry().register("OnlyBatch", OnlyBatch)
    assert spec.warnings == ["filter_batch is used only beside filter (the reference form); implement filter too"]
    assert spec.extension_points == ["score"]


def test_unknown_plugin_suggests_a_name(ks):
    reg = ks.registry()
    with pytest.raises(UnknownPluginError) as ei:
        reg.get("PrioritySrot")
    assert 'did you mean "PrioritySort"' in str(ei.value)
