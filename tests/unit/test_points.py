"""The SDK's one extension-point table agrees with the hook specs, the config and the tracer."""

from __future__ import annotations

import inspect

from kubesched.runtime.config import EXTENSION_POINTS as CONFIG_POINTS
from kubesched.runtime.observe import trace
from kubesched.sdk import EXTENSION_POINT_HOOKS, OTHER_HOOKS, PRIMARY_HOOKS, hookspecs
from kubesched.sdk.points import EXTENSION_POINTS, HOOKS, extension_point, hook_info


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
