"""The SDK's one extension-point table agrees with the hook specs, the config and the tracer."""

from __future__ import annotations

import inspect

import pytest

from kubesched.runtime.config import EXTENSION_POINTS as CONFIG_POINTS
from kubesched.runtime.observe import trace
from kubesched.sdk import EXTENSION_POINT_HOOKS, OTHER_HOOKS, PRIMARY_HOOKS, hookspecs
from kubesched.sdk.points import EXTENSION_POINTS, HOOKS, extension_point, hook_info, hook_params


def _specs() -> set[str]:
    return {n for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(f, "kubesched_spec")}


def test_every_spec_has_a_row_and_every_row_a_spec() -> None:
    assert _specs() == set(HOOKS)


def test_derived_views_follow_the_table() -> None:
    assert CONFIG_POINTS == tuple(p.name for p in EXTENSION_POINTS)
    assert list(EXTENSION_POINT_HOOKS) == list(CONFIG_POINTS)
    assert PRIMARY_HOOKS["preFilter"] == ("pre_filter",)
    assert PRIMARY_HOOKS["reserve"] == ("reserve", "unreserve")
    assert OTHER_HOOKS == ("events_to_register", "sign_pod")
    assert trace._POINT_LABEL["pre_filter_add_pod"] == "PreFilterAddPod"


def test_lookups() -> None:
    assert hook_info("normalize_score").point == "score"
    assert hook_info("sign_pod").point == ""
    assert extension_point("preBind").label == "PreBind"
    assert all(h.point == p.name for p in EXTENSION_POINTS for h in p.hooks)


def test_hook_params_are_the_specs_arguments() -> None:
    assert hook_params("bind") == ("state", "pod", "node_name")
    assert hook_params("pre_filter_add_pod") == ("state", "pod_to_schedule", "pod_to_add", "node_info")
    assert hook_params("events_to_register") == ()
    for name in HOOKS:
        assert hook_params(name) == tuple(inspect.signature(getattr(hookspecs, name)).parameters)
    with pytest.raises(KeyError):
        hook_params("filters")
