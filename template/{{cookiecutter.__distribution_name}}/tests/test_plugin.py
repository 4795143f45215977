{%- set cls = cookiecutter.__plugin_class -%}
{%- set F = cookiecutter.pre_filter_and_filter -%}
{%- set S = cookiecutter.score -%}
{%- set R = cookiecutter.reserve_and_permit -%}
{%- set B = cookiecutter.post_bind -%}
"""The plugin's behaviour, with the test kit ``kubesched.testing``: hooks called directly
(``build_plugin``) and whole scheduling cycles on the simulated cluster (``run_profile``)."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched.sdk import ArgsError{% if S or R %}, CycleState{% endif %}{% if S %}, NodeScore{% endif %}
from kubesched.testing import build_plugin, {% if R %}make_handle, {% endif %}make_node, make_pod, run_profile

from {{ cookiecutter.__module_name }} import (
{%- if B %}
    EVENT_REASON,
{%- endif %}
    NAME,
    {{ cls }},
{%- if S %}
    name_hash,
{%- endif %}
)

#: Registered in-process: these tests need no install (test_installed.py checks the entry point).
PLUGINS = {NAME: {{ cls }}}
{%- if F %}
LABEL = {{ cls }}.Args().node_label
{%- endif %}


def node(name: str) -> dict[str, Any]:
    """A node this plugin accepts."""
    return make_node().name(name){% if F %}.label(LABEL, "yes"){% endif %}.obj()


def test_defaults_and_unknown_args() -> None:
    plugin = build_plugin({{ cls }}, {})
    assert isinstance(plugin.args, {{ cls }}.Args)
    with pytest.raises(ArgsError) as e:
        build_plugin({{ cls }}, {"noSuchField": 1})
    assert e.value.field == "args.noSuchField"
{%- if F %}


def test_validate_names_the_field() -> None:
    with pytest.raises(ArgsError) as e:
        build_plugin({{ cls }}, {"nodeLabel": " "})
    assert e.value.field == "args.nodeLabel"


def test_filter_keeps_pods_off_nodes_without_the_label() -> None:
    result = run_profile(
        PLUGINS,
        nodes=[node("labelled"), make_node().name("bare").obj()],
        pods=[make_pod().name("p").obj()],
    )
    assert result.node("p") == "labelled"
    assert result.filter_reasons("p") == {"bare": [f"node(s) didn't have label {LABEL}"]}


def test_pod_asks_for_a_label_value() -> None:
    result = run_profile(
        PLUGINS,
        nodes=[node("a"), make_node().name("b").label(LABEL, "no").obj()],
        pods=[make_pod().name("p").label(LABEL, "maybe").obj()],
    )
    assert result.node("p") is None
    assert result.status("p") == "Unschedulable"
    assert f"2 node(s) didn't have label {LABEL}=maybe" in result.message("p")


def test_prefilter_skips_ignored_namespaces() -> None:
    result = run_profile(
        PLUGINS,
        nodes=[make_node().name("bare").obj()],
        pods=[make_pod().name("p").namespace("kube-system").obj()],
    )
    assert result.node("kube-system/p") == "bare"
    assert [c for c in result.calls("kube-system/p", point="Filter") if c[1] == NAME] == []
{%- endif %}
{%- if S %}


def test_score_prefers_the_node_whose_name_hashes_highest() -> None:
    names = ["node-a", "node-b", "node-c", "node-d"]
    best = max(names, key=name_hash)
    result = run_profile(PLUGINS, nodes=[node(n) for n in names], pods=[make_pod().name("p").obj()])
    assert result.node("p") == best
    normalized = {n: scores[NAME].normalized for n, scores in result.scores("p").items()}
    assert normalized[best] == 100
    assert min(normalized.values()) == 0


def test_salt_changes_the_order_but_not_the_range() -> None:
    plain = [name_hash(f"node-{i}") for i in range(20)]
    salted = [name_hash(f"node-{i}", "x") for i in range(20)]
    assert plain != salted
    assert all(0 <= h <= 65535 for h in plain + salted)
    assert name_hash("node-1") == name_hash("node-1")


def test_normalize_score_scales_to_0_100() -> None:
    plugin = build_plugin({{ cls }})
    pod = make_pod().name("p").pod()
    scores = [NodeScore("a", 10), NodeScore("b", 20), NodeScore("c", 30)]
    assert plugin.normalize_score(CycleState(), pod, scores) is None
    assert [s.score for s in scores] == [0, 50, 100]
    same = [NodeScore("a", 7), NodeScore("b", 7)]
    plugin.normalize_score(CycleState(), pod, same)
    assert [s.score for s in same] == [100, 100]
{%- endif %}
{%- if R %}


def test_reserve_and_unreserve_bookkeeping() -> None:
    running = make_pod().name("running").uid("u-running").node("n1").obj()
    handle = make_handle([node("n1")], [running])
    plugin = build_plugin({{ cls }}, {}, handle)
    state = CycleState()
    gone = make_pod().name("gone").uid("u-gone").pod()
    new = make_pod().name("new").uid("u-new").pod()
    assert plugin.reserve(state, gone, "n1") is None
    assert plugin.reserved_pods("n1") == {"u-gone"}
    # "gone" is not on n1 in the snapshot: reserving the next pod forgets it
    assert plugin.reserve(state, new, "n1") is None
    assert plugin.reserved_pods("n1") == {"u-new"}
    plugin.unreserve(state, new, "n1")
    plugin.unreserve(state, new, "n1")  # idempotent
    assert plugin.reserved_pods("n1") == set()
    assert plugin.permit(state, new, "n1") is None


def test_reserve_then_permit_then_bind() -> None:
    result = run_profile(PLUGINS, nodes=[node("n1")], pods=[make_pod().name("p").obj()])
    assert result.node("p") == "n1"
    points = [point for point, _, _, _ in result.calls("p")]
    assert points.index("Reserve") < points.index("Permit") < points.index("Bind")
{%- endif %}
{%- if B %}


def test_post_bind_records_an_event() -> None:
    result = run_profile(PLUGINS, nodes=[node("n1")], pods=[make_pod().name("p").obj()])
    assert result.node("p") == "n1"
    notes = [e.note for e in result.events() if e.reason == EVENT_REASON]
    assert notes == [f"{NAME}: default/p is bound to n1"]


def test_post_bind_events_can_be_turned_off() -> None:
    result = run_profile(
        PLUGINS,
        nodes=[node("n1")],
        pods=[make_pod().name("p").obj()],
        args={NAME: {"recordEvents": False}},
    )
    assert result.node("p") == "n1"
    assert [e for e in result.events() if e.reason == EVENT_REASON] == []
{%- endif %}
