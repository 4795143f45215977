"""The per-pod shortcuts of the replay's hot path give what the long way gives: the views'
cached parts, the sign check of quantities, the object store's merge patch, the score range
check of the column forms, the hook adapters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.runtime.framework.columns import _out_of_range
from kubesched.runtime.framework.wiring import _adapt
from kubesched.runtime.objectstore import ObjectStore, merge_patch
from kubesched.sdk import InvalidObjectError, Pod, Resource
from kubesched.sdk.objects.requests import pod_requests, quantity_value
from kubesched.sdk.points import hook_params

NEG = "must be greater than or equal to 0"


def _pod(requests: Any = None, limits: Any = None, *, init: bool = False, status: Any = None, level: Any = None) -> Pod:
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    c = {"name": "c", "image": "i", "resources": res}
    spec: dict[str, Any] = {"initContainers": [c], "containers": [{"name": "m", "image": "i"}]} if init else {"containers": [c]}
    if level is not None:
        spec["resources"] = {"requests": level}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    if status is not None:
        obj["status"] = status
    return Pod(obj)


# the views' cached parts -------------------------------------------------------------------------
def test_a_cached_part_is_computed_once_and_kept_on_the_view() -> None:
    p = _pod({"cpu": "1"})
    assert "requests" not in p.__dict__
    r = p.requests
    assert p.__dict__["requests"] is r
    assert p.requests is r
    assert Pod.requests.__doc__ is not None and Pod.requests.__doc__.startswith("Effective requests")


def test_a_part_that_raises_is_not_kept_and_raises_again() -> None:
    p = _pod({"cpu": "1x"})
    for _ in range(2):
        with pytest.raises(InvalidObjectError) as ei:
            _ = p.requests
        assert str(ei.value) == 'spec.containers[0].resources.requests.cpu: "1x": quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\''
    assert "requests" not in p.__dict__


def test_node_requests_are_the_requests_when_the_status_holds_no_resources() -> None:
    p = _pod({"cpu": "250m", "memory": "1Gi"})
    assert p.node_requests is p.requests
    assert p.node_non_zero_requests == p.non_zero_requests == (250, 1 << 30)
    # an in-place resize in the status: read from there, where larger
    q = _pod({"cpu": "250m"}, status={"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]})
    assert q.requests.milli_cpu == 250
    assert q.node_requests.milli_cpu == 500
    assert q.node_non_zero_requests == (500, 200 * 1024 * 1024)
    # pod-level requests: the node counts them for cpu and memory, scoring's defaults elsewhere
    lv = _pod({"cpu": "100m"}, level={"cpu": "2", "memory": "1Gi"})
    assert lv.non_zero_requests == (2000, 1 << 30)
    assert lv.node_non_zero_requests == (2000, 1 << 30)
    assert lv.node_requests is lv.requests


@pytest.mark.parametrize(
    ("q", "milli"),
    [("1", 1000), ("0.1m", 1), ("1.0001m", 2), ("1500u", 2), ("999n", 1), ("0", 0), ("1e-9", 1), (3, 3000), ("1Ki", 1024000)],
)
def test_milli_cpu_rounds_up(q: Any, milli: int) -> None:
    p = _pod({"cpu": q})
    assert p.requests.milli_cpu == milli
    assert quantity_value(pod_requests(p), "cpu") == milli
    r = Resource()
    r.add_quantity("cpu", pod_requests(p)["cpu"])
    assert r.milli_cpu == milli


# the sign check of quantities --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("part", "value", "shown"),
    [
        ("requests", "-4", '"-4"'),
        ("requests", " -4", '" -4"'),
        ("limits", "\t-1Gi", '"\\t-1Gi"'),
        ("limits", -1, '"-1"'),
        ("requests", -0.5, '"-0.5"'),
    ],
)
@pytest.mark.parametrize("init", [False, True])
def test_a_negative_quantity_is_named(part: str, value: Any, shown: str, init: bool) -> None:
    p = _pod(**{part: {"memory": value}}, init=init)
    with pytest.raises(InvalidObjectError) as ei:
        p.validate()
    field = "spec.initContainers[0]" if init else "spec.containers[0]"
    assert str(ei.value) == f"{field}.resources.{part}.memory: Invalid value: {shown}: {NEG}"


@pytest.mark.parametrize("value", ["+4", "0", "-0", ".5", "1e-3", 0, 2.5, " 4"])
def test_a_quantity_that_is_not_negative_passes(value: Any) -> None:
    _pod({"memory": value}, {"memory": value}).validate()


# the store's merge patch ------------------------------------------------------------------------
def test_merge_patch_replaces_scalars_removes_nulls_merges_maps_and_copies_lists() -> None:
    target = {"a": 1, "b": {"c": "x", "d": [1]}, "e": True}
    cond = [{"type": "PodScheduled"}]
    out = merge_patch(target, {"a": "2", "b": {"c": None, "d": cond, "f": 0.5}, "e": False, "g": {"h": None}})
    assert out == {"a": "2", "b": {"d": [{"type": "PodScheduled"}], "f": 0.5}, "e": False, "g": {}}
    cond[0]["type"] = "changed"
    assert out["b"]["d"] == [{"type": "PodScheduled"}]
    assert target == {"a": 1, "b": {"c": "x", "d": [1]}, "e": True}
    assert merge_patch({"a": 1}, "s") == "s"
    assert merge_patch({"a": 1}, 7) == 7


def test_a_bind_patch_leaves_the_stored_object_read_only_and_shares_what_it_did_not_change() -> None:
    store = ObjectStore()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    old = store.create(pod)
    new = store.apply_patch("v1", "Pod", "p", {"spec": {"nodeName": "n1"}, "status": {"phase": "Running", "nominatedNodeName": None}})
    assert new["spec"] == {"containers": [{"name": "c"}], "nodeName": "n1"}
    assert new["status"] == {"phase": "Running"}
    assert new["spec"]["containers"] is old["spec"]["containers"]
    with pytest.raises(TypeError):
        new["spec"]["nodeName"] = "n2"


# the score range check of the column forms --------------------------------------------------------
@pytest.mark.parametrize(
    ("vals", "bad"),
    [
        (np.array([0, 50, 100], np.int64), False),
        (np.array([0, 101], np.int64), True),
        (np.array([-1, 0], np.int64), True),
        (np.array([np.iinfo(np.int64).min], np.int64), True),
        (np.array([0, 100], np.int32), False),
        (np.array([-1], np.int32), True),
        (np.array([101], np.uint8), True),
        (np.array([100], np.uint64), False),
        (np.array([0, 50, 100, -5], np.int64)[::2], False),
    ],
)
def test_scores_out_of_range(vals: Any, bad: bool) -> None:
    assert _out_of_range(vals) is bad


# the hook adapters -------------------------------------------------------------------------------
@pytest.mark.parametrize("hook", ["filter", "score", "pre_filter", "reserve", "permit", "score_columns", "filter_columns"])
def test_an_adapter_passes_the_arguments_the_implementation_declares(hook: str) -> None:
    spec = hook_params(hook)
    args = tuple(f"<{a}>" for a in spec)
    # every subset of the spec's arguments, in the spec's order
    for mask in range(1 << len(spec)):
        names = [a for i, a in enumerate(spec) if mask >> i & 1]
        got: list[tuple[Any, ...]] = []
        fn = _adapt(lambda *a, _got=got: _got.append(a), names, hook)
        fn(*args)
        assert got == [tuple(f"<{a}>" for a in names)]


# the parsed quantities kept across pods ----------------------------------------------------------
def test_a_quantity_string_parsed_once_gives_the_same_value_to_every_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubesched.sdk.objects import requests as rq

    monkeypatch.setattr(rq, "_PARSED", {})
    monkeypatch.setattr(rq, "_PARSED_MAX", 3)
    for q, milli in [("1500m", 1500), ("1500m", 1500), ("2", 2000), ("0.5", 500), ("1500m", 1500), ("7", 7000)]:
        assert _pod({"cpu": q}).requests.milli_cpu == milli
        assert len(rq._PARSED) <= 3
    # a bad one is named each time, for each pod's own field
    for _ in range(2):
        with pytest.raises(InvalidObjectError) as ei:
            _pod(None, {"memory": "12x"}, init=True).validate()
        assert str(ei.value).startswith('spec.initContainers[0].resources.limits.memory: "12x": quantities must match')
    assert "12x" not in rq._PARSED
