"""Building a framework from a profile: where a plugin's failure is reported, the hooks collected
from the SDK's table, and closing the plugins."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.runtime.config import ConfigError
from kubesched.runtime.framework import Framework, FrameworkImpl, FrameworkServices, build_framework
from kubesched.runtime.objectstore import ObjectStore
from kubesched.sdk import hookimpl
from kubesched.sdk.points import EXTENSION_POINTS


def _services() -> FrameworkServices:
    return FrameworkServices(snapshot=lambda: None, objects=ObjectStore(), clock=None, event_recorder=None, bind_pod=lambda p, n: None)


def _build(ks: Any, plugins: dict[str, Any], points: dict[str, list[str]], **kw: Any) -> FrameworkImpl:
    reg = ks.registry(plugins)
    cfg = ks.load_cfg(points, reg, **kw)
    return build_framework(cfg.profiles[0], reg, _services(), source="cfg.yaml")


class Boom:
    def __init__(self, args: Any, handle: Any) -> None:
        raise RuntimeError("no GPU on this node pool")

    @hookimpl
    def filter(self) -> None:
        return None


@dataclass
class BoomArgs:
    size: int = 1


class BoomWithArgs(Boom):
    Args = BoomArgs


def test_init_failure_without_plugin_config_is_reported_where_the_plugin_is_named(ks: Any) -> None:
    with pytest.raises(ConfigError) as ei:
        _build(ks, {"Boom": Boom}, {"filter": ["Boom"]})
    dist = ks.registry({"Boom": Boom}).get("Boom").distribution
    assert ei.value.field_path == "profiles[0].plugins"
    assert ei.value.message == f'initializing plugin "Boom" ({dist}): RuntimeError: no GPU on this node pool'
    assert str(ei.value) == f'cfg.yaml: profiles[0].plugins: initializing plugin "Boom" ({dist}): RuntimeError: no GPU on this node pool'


def test_init_failure_with_plugin_config_is_reported_at_its_args(ks: Any) -> None:
    extra = {"profiles": [{
        **ks.config_dict({"filter": ["Boom"]})["profiles"][0],
        "pluginConfig": [
            {"name": "DefaultBinder", "args": {}},
            {"name": "Boom", "args": {"size": 2}},
        ],
    }]}
    with pytest.raises(ConfigError) as ei:
        _build(ks, {"Boom": BoomWithArgs}, {"filter": ["Boom"]}, extra=extra)
    assert ei.value.field_path == "profiles[0].pluginConfig[1].args"
    assert ei.value.message.endswith("RuntimeError: no GPU on this node pool")


def test_events_to_register_returning_garbage_is_a_config_error(ks: Any) -> None:
    class Odd:
        @hookimpl
        def filter(self) -> None:
            return None

        @hookimpl
        def events_to_register(self) -> list[str]:
            return ["Node/Add"]

    with pytest.raises(ConfigError) as ei:
        _build(ks, {"Odd": Odd}, {"filter": ["Odd"]})
    assert ei.value.field_path == "profiles[0].plugins"
    assert ei.value.message == (
        "plugin \"Odd\" hook events_to_register returned an item 'Node/Add'; "
        "expected a sequence of ClusterEvent or ClusterEventWithHint"
    )


def test_every_hook_of_the_sdk_table_is_collected(ks: Any) -> None:
    fw = _build(ks, {}, {"filter": ["NodeName"]})
    assert set(fw.entries) == {h.name for p in EXTENSION_POINTS for h in p.hooks}
    assert [n for n, _ in fw.entries["filter"]] == ["NodeName"]
    assert [n for n, _ in fw.entries["queue_sort_less"]] == ["PrioritySort"]
    assert [n for n, _ in fw.entries["bind"]] == ["DefaultBinder"]


def test_framework_build_is_build_framework(ks: Any) -> None:
    reg = ks.registry({})
    cfg = ks.load_cfg({"filter": ["NodeName"]}, reg)
    fw = Framework.build(cfg.profiles[0], reg, _services(), source="cfg.yaml")
    assert type(fw) is FrameworkImpl
    assert fw.points["filter"] == ["NodeName"]


# close ----------------------------------------------------------------------------------------


def _closer(tag: str, closed: list[str], fail: bool = False) -> type:
    class C:
        def __init__(self, args: Any, handle: Any) -> None:
            pass

        @hookimpl
        def filter(self) -> None:
            return None

        def close(self) -> None:
            closed.append(tag)
            if fail:
                raise OSError(f"{tag} could not let go")

    return C


def test_close_calls_each_plugin_once_in_reverse_construction_order(ks: Any) -> None:
    closed: list[str] = []
    fw = _build(ks, {"A": _closer("A", closed), "B": _closer("B", closed), "C": _closer("C", closed)}, {"filter": ["A", "B", "C"]})
    assert [n for n in fw.plugins if n in "ABC"] == ["A", "B", "C"]  # construction order
    fw.close()
    assert closed == ["C", "B", "A"]
    fw.close()
    assert closed == ["C", "B", "A"]


def test_close_logs_a_failing_close_and_goes_on(ks: Any, caplog: pytest.LogCaptureFixture) -> None:
    closed: list[str] = []
    fw = _build(ks, {"A": _closer("A", closed), "B": _closer("B", closed, fail=True)}, {"filter": ["A", "B"]})
    with caplog.at_level(logging.ERROR, logger="kubesched.framework"):
        fw.close()
    assert closed == ["B", "A"]
    (rec,) = [r for r in caplog.records if r.name == "kubesched.framework"]
    assert rec.getMessage() == 'close() of plugin "B" (profile test) failed'
    assert rec.exc_info is not None and str(rec.exc_info[1]) == "B could not let go"


def test_plugins_built_before_a_failing_init_are_closed_once_in_reverse_order(ks: Any, caplog: pytest.LogCaptureFixture) -> None:
    closed: list[str] = []
    plugins = {"A": _closer("A", closed), "B": _closer("B", closed, fail=True), "Boom": Boom}
    with caplog.at_level(logging.ERROR, logger="kubesched.framework"), pytest.raises(ConfigError) as ei:
        _build(ks, plugins, {"filter": ["A", "B", "Boom"]})
    assert ei.value.message.endswith("RuntimeError: no GPU on this node pool")
    assert closed == ["B", "A"]  # B's failing close is logged and A is still closed
    (rec,) = [r for r in caplog.records if r.name == "kubesched.framework"]
    assert rec.getMessage() == 'close() of plugin "B" (profile test) failed'


def test_plugins_are_closed_when_the_profile_fails_after_they_were_built(ks: Any) -> None:
    closed: list[str] = []

    class Garbage:
        def __init__(self, args: Any, handle: Any) -> None:
            pass

        @hookimpl
        def filter(self) -> None:
            return None

        @hookimpl
        def events_to_register(self) -> list[Any]:
            return ["Node/Add"]

    with pytest.raises(ConfigError) as ei:
        _build(ks, {"A": _closer("A", closed), "G": Garbage}, {"filter": ["A", "G"]})
    assert ei.value.message == (
        "plugin \"G\" hook events_to_register returned an item 'Node/Add'; "
        "expected a sequence of ClusterEvent or ClusterEventWithHint"
    )
    assert closed == ["A"]
