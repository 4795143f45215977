"""The test kit shows a plugin author where their hook raised: every exception of a pod's hook
calls is in the ``RunResult``, with its traceback starting at the plugin's own frame."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kubesched.sdk import NodeInfo, Status, hookimpl
from kubesched.testing import PluginError, build_plugin, make_node, make_pod, run_profile


class Flaky:
    @hookimpl
    def filter(self, node_info: NodeInfo) -> Status | None:
        return self._check(node_info.name)

    def _check(self, name: str) -> None:
        if name == "b":
            raise ValueError(f"no zone label on {name}")


def _nodes() -> list[dict]:
    return [make_node().name("a").obj(), make_node().name("b").obj()]


def test_exception_in_filter_is_in_the_result_with_its_traceback() -> None:
    r = run_profile({"Flaky": Flaky}, nodes=_nodes(), pods=[make_pod().name("p").obj()])
    assert r.status("p") == "Error"
    assert r.message("p") == 'running Filter plugin "Flaky": ValueError: no zone label on b'
    errors = r.errors("p")
    assert len(errors) == r.outcome("p").attempts >= 1
    err = errors[0]
    assert isinstance(err, PluginError)
    assert (err.point, err.plugin, err.node) == ("Filter", "Flaky", "b")
    assert isinstance(err.exception, ValueError)
    lines = err.traceback.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].startswith(f'  File "{__file__}", line ') and lines[1].endswith(", in filter")
    assert lines[2] == "    return self._check(node_info.name)"
    frames = [line for line in lines if line.startswith("  File ")]
    assert len(frames) == 2 and frames[1].endswith(", in _check")  # the plugin's frames only
    assert '    raise ValueError(f"no zone label on {name}")' in lines
    assert lines[-1] == "ValueError: no zone label on b"
    assert r.tracebacks("p") == [e.traceback for e in errors]
    assert str(err) == f"Filter plugin Flaky on node b raised:\n{err.traceback}"


def test_exception_outside_a_node_and_pods_without_errors() -> None:
    class Boom:
        @hookimpl
        def pre_filter(self, pod):
            if pod.name == "bad":
                raise KeyError("zone")

    r = run_profile({"Boom": Boom}, nodes=_nodes(), pods=[make_pod().name("bad").obj(), make_pod().name("good").obj()])
    errors = r.errors("bad")  # every attempt's (the pod is retried with backoff)
    assert len(errors) == r.outcome("bad").attempts >= 1
    err = errors[0]
    assert (err.point, err.plugin, err.node) == ("PreFilter", "Boom", "-")
    assert err.traceback.splitlines()[-1] == "KeyError: 'zone'"
    assert r.errors("good") == [] and r.tracebacks("good") == []
    assert r.status("good") == "Scheduled"


def test_exception_in_reserve_names_the_node() -> None:
    class BadReserve:
        @hookimpl
        def reserve(self, node_name):
            raise RuntimeError("quota service down")

    r = run_profile({"BadReserve": BadReserve}, nodes=_nodes()[:1], pods=[make_pod().name("p").obj()])
    assert r.status("p") == "Error"
    assert {(e.point, e.plugin, e.node) for e in r.errors("p")} == {("Reserve", "BadReserve", "a")}


def test_build_plugin_with_args_that_are_not_a_dataclass() -> None:
    class LabelArgs:
        label = "x"

    class Labelled:
        Args = LabelArgs

    with pytest.raises(TypeError) as ei:
        build_plugin(Labelled, {"label": "y"})
    assert str(ei.value) == "Args must be a dataclass, got class LabelArgs"

    @dataclass
    class GoodArgs:
        label: str = "x"

    class Good:
        Args = GoodArgs

        def __init__(self, args: GoodArgs) -> None:
            self.args = args

    assert build_plugin(Good, {"label": "y"}).args == GoodArgs("y")
