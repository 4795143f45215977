"""The plugin contract at run time: a hook's return value that its contract does not allow is an
Error for that pod, naming the plugin, the hook, what it returned and what was expected (from
the SDK's table, ``hook_info(name).returns``); the run goes on."""

from __future__ import annotations

import enum
from typing import Any

import pytest

from kubesched.sdk import Code, PreFilterResult, Status, hookimpl
from kubesched.sdk.points import hook_info
from kubesched.testing import make_node, make_pod, run_profile


def _nodes(n: int = 2) -> list[dict[str, Any]]:
    return [make_node().name(f"n{i}").obj() for i in range(1, n + 1)]


def _pods() -> list[dict[str, Any]]:
    return [make_pod().name("bad").obj(), make_pod().name("good").obj()]


def _run(hook: str, value: Any, *, points: dict[str, list[str]] | None = None) -> Any:
    """Plugin "Bad" whose ``hook`` returns ``value`` for pod "bad" and None for the others."""

    def impl(self: Any, state: Any, pod: Any, node_info: Any) -> Any:
        return value if pod.name == "bad" else None

    def impl_node_name(self: Any, state: Any, pod: Any, node_name: Any) -> Any:
        return value if pod.name == "bad" else None

    def impl_nodes(self: Any, state: Any, pod: Any, nodes: Any) -> Any:
        return value if pod.name == "bad" else None

    fn = {"filter": impl, "score": impl, "permit": impl_node_name, "reserve": impl_node_name,
          "pre_bind": impl_node_name, "pre_filter": impl_nodes, "pre_score": impl_nodes}[hook]
    if hook == "score":
        def score(self: Any, state: Any, pod: Any, node_info: Any) -> Any:
            return value if pod.name == "bad" else 10
        fn = score
    members = {hook: hookimpl(fn)}
    if hook == "pre_score":  # PreScore runs only in a profile with Score plugins
        members["score"] = hookimpl(lambda self: 10)
    Bad = type("Bad", (), members)
    return run_profile({"Bad": Bad}, nodes=_nodes(), pods=_pods(), points=points)


def _expected(plugin: str, hook: str, got: str) -> str:
    return f'plugin "{plugin}" hook {hook} returned {got}; expected {hook_info(hook).returns}'


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (None, "None"),
        (42.5, "float 42.5"),
        (42.0, "float 42.0"),
        ("42", "str '42'"),
        (True, "bool True"),
        ((Status(), 42), "tuple (Status(Code.SUCCESS), 42)"),
        ((42.5, None), "tuple (42.5, None)"),
        ((42, "ok"), "tuple (42, 'ok')"),
    ],
)
def test_score_wrong_return_is_an_error_naming_plugin_hook_and_types(value: Any, got: str) -> None:
    r = _run("score", value, points={"score": ["Bad"]})
    assert r.status("bad") == "Error"
    assert r.message("bad") == _expected("Bad", "score", got)
    assert r.message("bad") == f'plugin "Bad" hook score returned {got}; expected an int (or an (int, Status) tuple)'
    assert r.status("good") == "Scheduled"


class _Level(enum.IntEnum):
    HIGH = 70


@pytest.mark.parametrize("value", [42, (42, None), (42, Status()), _Level.HIGH])
def test_score_integers_and_int_status_tuples_are_accepted(value: Any) -> None:
    r = _run("score", value, points={"score": ["Bad"]})
    assert r.status("bad") == "Scheduled", r.message("bad")


def test_score_out_of_range_keeps_kube_schedulers_message() -> None:
    r = _run("score", 101, points={"score": ["Bad"]})
    assert r.message("bad") == (
        'applying score defaultWeights on Score plugins: plugin "Bad" returns an invalid score 101, '
        "it should in the range of [0, 100] after normalizing"
    )


def test_score_error_status_in_a_tuple_is_the_plugins_error() -> None:
    r = _run("score", (0, Status(Code.ERROR, "boom")), points={"score": ["Bad"]})
    assert r.message("bad") == 'running Score plugins: plugin "Bad" failed with: boom'


def test_filter_returning_a_bool_is_an_error() -> None:
    r = _run("filter", False, points={"filter": ["Bad"]})
    assert r.status("bad") == "Error"
    assert r.message("bad") == 'plugin "Bad" hook filter returned bool False; expected None or a Status'
    assert r.node("good") is not None


def test_filter_returning_garbage_through_the_batch_runner_is_an_error() -> None:
    class Bad:
        @hookimpl
        def filter(self, pod: Any) -> Any:
            return "nope" if pod.name == "bad" else None

    class Batched:  # a batch form in the profile: the filter loop runs through the batch runner
        @hookimpl
        def filter(self) -> None:
            return None

        @hookimpl
        def filter_batch(self, nodes: Any) -> list[None]:
            return [None] * len(nodes)

    r = run_profile({"Batched": Batched, "Bad": Bad}, nodes=_nodes(), pods=_pods(),
                    points={"filter": ["Batched", "Bad"]}, reuse_results=True)
    assert r.status("bad") == "Error"
    assert r.message("bad") == "plugin \"Bad\" hook filter returned str 'nope'; expected None or a Status"
    assert r.status("good") == "Scheduled"


def test_pre_filter_returning_a_set_is_an_error() -> None:
    r = _run("pre_filter", {"n1"}, points={"preFilter": ["Bad"]})
    assert r.status("bad") == "Error"
    assert r.message("bad") == (
        "plugin \"Bad\" hook pre_filter returned set {'n1'}; expected None, a Status, a PreFilterResult "
        "or a (PreFilterResult | None, Status | None) tuple"
    )
    assert r.status("good") == "Scheduled"


def test_pre_filter_tuple_in_the_wrong_order_is_an_error() -> None:
    value = (Status(), PreFilterResult({"n1"}))
    r = _run("pre_filter", value, points={"preFilter": ["Bad"]})
    assert r.status("bad") == "Error"
    assert r.message("bad").startswith('plugin "Bad" hook pre_filter returned tuple (Status(Code.SUCCESS), ')
    assert r.message("bad").endswith("; expected " + hook_info("pre_filter").returns)


@pytest.mark.parametrize(("hook", "point"), [("pre_score", "preScore"), ("reserve", "reserve"), ("pre_bind", "preBind")])
def test_status_hooks_returning_garbage_are_errors(hook: str, point: str) -> None:
    r = _run(hook, 7, points={point: ["Bad"], **({"score": ["Bad"]} if hook == "pre_score" else {})})
    assert r.status("bad") == "Error"
    assert r.message("bad") == f'plugin "Bad" hook {hook} returned int 7; expected None or a Status'
    assert r.status("good") == "Scheduled"


@pytest.mark.parametrize(
    ("value", "got"),
    [
        ("allow", "str 'allow'"),
        ((Status.wait(), "30s"), "tuple (Status(Code.WAIT), '30s')"),
        ((30, Status.wait()), "tuple (30, Status(Code.WAIT))"),
        ((Status.wait(), True), "tuple (Status(Code.WAIT), True)"),
    ],
)
def test_permit_returning_garbage_is_an_error(value: Any, got: str) -> None:
    r = _run("permit", value, points={"permit": ["Bad"]})
    assert r.status("bad") == "Error"
    assert r.message("bad") == f'plugin "Bad" hook permit returned {got}; expected None, a Status, or a (Status, timeout seconds) tuple'
    assert r.status("good") == "Scheduled"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (Status.wait(), "without a timeout"),
        ((Status.wait(), None), "without a timeout"),
        ((Status.wait(), 0), "with timeout 0"),
        ((Status.wait(), -5.0), "with timeout -5.0"),
    ],
)
def test_permit_wait_without_a_positive_timeout_is_an_error(value: Any, said: str) -> None:
    r = _run("permit", value, points={"permit": ["Bad"]})
    assert r.status("bad") == "Error"
    assert r.message("bad") == (
        f'plugin "Bad" hook permit returned Wait {said}; a Wait needs a timeout above 0 seconds, '
        "as (Status.wait(), seconds) (capped at 15m0s)"
    )
    assert r.node("bad") is None
    assert r.status("good") == "Scheduled"


# batch forms -------------------------------------------------------------------------------


def _batched(hook: str, items: list[Any]) -> Any:
    def batch(self: Any, pod: Any, nodes: Any) -> Any:
        return items if pod.name == "bad" else [None if hook == "filter_batch" else 10] * len(nodes)

    members = {hook: hookimpl(batch)}
    if hook == "filter_batch":
        members["filter"] = hookimpl(lambda self: None)
    else:
        members["score"] = hookimpl(lambda self: 10)
    B = type("B", (), members)
    point = "filter" if hook == "filter_batch" else "score"
    return run_profile({"B": B}, nodes=_nodes(3), pods=_pods(), points={point: ["B"]}, reuse_results=True)


def test_score_batch_item_that_is_not_an_int_is_an_error_naming_its_node() -> None:
    r = _batched("score_batch", [10, 42.0, 10])
    assert r.status("bad") == "Error"
    assert r.message("bad") == (
        'plugin "B" hook score_batch returned float 42.0 for node "n2"; '
        "expected a sequence of int, one per node, or a Status"
    )
    assert r.status("good") == "Scheduled"


def test_score_batch_of_the_wrong_length_is_an_error() -> None:
    r = _batched("score_batch", [10, 10])
    assert r.message("bad") == (
        'plugin "B" hook score_batch returned 2 results for 3 nodes; '
        "expected a sequence of int, one per node, or a Status"
    )


def test_filter_batch_item_that_is_not_a_status_is_an_error_naming_its_node() -> None:
    r = _batched("filter_batch", [None, None, True])
    assert r.status("bad") == "Error"
    assert r.message("bad") == (
        'plugin "B" hook filter_batch returned bool True for node "n3"; '
        "expected a sequence of None or Status, one per node"
    )
    assert r.status("good") == "Scheduled"
