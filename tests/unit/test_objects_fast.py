"""The SDK object layer's fast paths (issue 14) give what the exact paths give.

- A pod's requests summed as integers (``simple_requests``) against ``pod_requests``' exact
  fractions, on random pods, and the pods it leaves to the exact path.
- ``Pod.validate()`` keeping the empty parts of a pod without parsing them.
- ``Pod.with_node_name`` sharing the view's parts.
- ``read_only`` and the deep copy of a read-only object.
- The per-view caches (status resources) of a pod whose status changes: a new view.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
from typing import Any

import pytest

from kubesched.sdk import InvalidObjectError, Pod
from kubesched.sdk.objects.nodeinfo import NodeInfo
from kubesched.sdk.objects.requests import pod_requests, quantity_value, simple_requests
from kubesched.sdk.objects.resource import Resource
from kubesched.sdk.readonly import (
    EMPTY_DICT,
    EMPTY_LIST,
    READ_ONLY_MESSAGE,
    ReadOnlyDict,
    ReadOnlyList,
    read_only,
)

QUANTITIES: list[Any] = ["100m", "1", "0.5", "1.5Gi", "1Ki", "2e3", "1m", "0.0001", "3", "500m", "1e-3", 7, 0, "0",
                         "1e400", "10Ei", "1.1", "+2", "1.0005", " 2", 0.25]
NAMES = ["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi", "foo", "nvidia.com/gpu"]


def _exact(raw: dict[str, Any]) -> tuple[Resource, tuple[int, int], Resource, tuple[int, int]]:
    """requests, non_zero_requests, node_requests, node_non_zero_requests by the exact path."""
    p = Pod(raw)
    r = Resource()
    for k, v in pod_requests(p).items():
        r.add_quantity(k, v)
    f = pod_requests(p, non_missing=True)
    nr = Resource()
    for k, v in pod_requests(p, use_status=True, pod_level_status=True).items():
        nr.add_quantity(k, v)
    nf = pod_requests(p, non_missing=True, use_status=True, pod_level_status=True)
    return r, (quantity_value(f, "cpu"), quantity_value(f, "memory")), nr, (quantity_value(nf, "cpu"), quantity_value(nf, "memory"))


def _random_pod(rng: random.Random) -> dict[str, Any]:
    cs = []
    for j in range(rng.randint(0, 3)):
        c: dict[str, Any] = {"name": f"c{j}"}
        if rng.random() < 0.9:
            res = {}
            for part in ("requests", "limits"):
                if rng.random() < 0.7:
                    res[part] = {rng.choice(NAMES): rng.choice(QUANTITIES) for _ in range(rng.randint(0, 4))}
            c["resources"] = res
        cs.append(c)
    spec: dict[str, Any] = {"containers": cs}
    status: dict[str, Any] = {}
    if cs and rng.random() < 0.1:  # an in-place resize: the node counts the status too
        status["containerStatuses"] = [{"name": "c0", "resources": {"requests": {"cpu": rng.choice(["2", "300m"])}}}]
    return {"metadata": {"name": "p"}, "spec": spec, "status": status}


def test_integer_requests_equal_the_exact_ones_on_random_pods() -> None:
    rng = random.Random(14)
    fast = 0
    for _ in range(4000):
        raw = _random_pod(rng)
        p = Pod(raw)
        got = (p.requests, p.non_zero_requests, p.node_requests, p.node_non_zero_requests)
        fast += "_pod_requests" not in p.__dict__  # the exact path keeps its fractions on the view
        want = _exact(raw)
        assert got == want, raw
        assert list(got[0].scalar.items()) == list(want[0].scalar.items()), raw  # same names, same order
        assert got[0].is_read_only and got[2].is_read_only
    assert 1000 < fast < 4000  # both paths were taken


@pytest.mark.parametrize(
    ("containers", "cpu", "memory"),
    [
        # not a whole milli-CPU / byte each, a whole one summed: Go sums exactly, then rounds up
        ([{"cpu": "0.0005", "memory": "0.5"}, {"cpu": "0.0005", "memory": "0.5"}], 1, 1),
        ([{"cpu": "0.0001"}], 1, 0),
        ([{"cpu": 0.25}], 250, 0),
    ],
)
def test_quantities_that_are_not_whole_take_the_exact_path(containers: list[dict[str, Any]], cpu: int, memory: int) -> None:
    p = Pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(containers)]}})
    assert simple_requests(p) is None
    assert (p.requests.milli_cpu, p.requests.memory) == (cpu, memory)


def test_integer_requests_of_a_simple_pod() -> None:
    p = Pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "12000m", "memory": "16384Mi", "nvidia.com/gpu": "1"},
                                    "limits": {"nvidia.com/gpu": "1", "foo": "3"}}},
        {"name": "b"},
        {"name": "c", "resources": {"limits": {"cpu": 2, "memory": "1Gi"}}},
    ]}})
    total, cpu, memory = simple_requests(p)  # type: ignore[misc]
    assert total == {"nvidia.com/gpu": 1, "foo": 3, "cpu": 14000, "memory": 16384 * 2**20 + 2**30}
    assert (cpu, memory) == (14100, 16384 * 2**20 + 2**30 + 200 * 2**20)
    assert p.requests == Resource(14000, 16384 * 2**20 + 2**30, scalar={"nvidia.com/gpu": 1})
    assert p.non_zero_requests == (14100, 16384 * 2**20 + 2**30 + 200 * 2**20)
    assert p.node_requests is p.requests
    with pytest.raises(TypeError, match="read-only view"):
        p.requests.milli_cpu = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    "spec",
    [
        {"containers": [{"name": "c"}], "initContainers": [{"name": "i"}]},
        {"containers": [{"name": "c"}], "overhead": {"cpu": "1"}},
        {"containers": [{"name": "c"}], "resources": {"requests": {"cpu": "1"}}},
        {"containers": [{"name": "c", "resources": {"requests": {"cpu": "12x"}}}]},
        {"containers": [{"name": "c", "resources": {"requests": {1: "1"}}}]},
        {"containers": [{"name": "c", "resources": {"requests": {"cpu": True}}}]},
    ],
)
def test_pods_left_to_the_exact_path(spec: dict[str, Any]) -> None:
    assert simple_requests(Pod({"metadata": {"name": "p"}, "spec": spec})) is None


def test_a_malformed_quantity_is_named_as_before() -> None:
    p = Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "12x"}}}]}})
    with pytest.raises(InvalidObjectError) as ei:
        p.validate()
    assert str(ei.value) == ("spec.containers[0].resources.requests.memory: \"12x\": quantities must match the regular "
                             "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


@pytest.mark.parametrize(
    ("limits", "requests", "message"),
    [
        ({"cpu": "1x"}, {"cpu": "1"}, "spec.containers[0].resources.limits.cpu: \"1x\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        ({"memory": "1.2.3"}, {"memory": "1Gi"}, "spec.containers[0].resources.limits.memory: \"1.2.3\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        ({"cpu": "1K"}, {"cpu": "500m"}, "spec.containers[0].resources.limits.cpu: \"1K\": unable to parse quantity's suffix"),
    ],
)
def test_a_malformed_limit_a_request_overrides_is_still_named(limits: dict[str, str], requests: dict[str, str], message: str) -> None:
    """The request replaces the limit in the sum, but the limit must parse: the pod goes to the
    exact path, and validate() names the limit as before the integer path."""
    p = Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"limits": limits, "requests": requests}}]}})
    assert simple_requests(p) is None
    with pytest.raises(InvalidObjectError) as ei:
        p.validate()
    assert str(ei.value) == message


def test_a_resized_pod_is_a_new_view_whose_node_requests_read_the_status() -> None:
    pending = {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    before = Pod(pending)
    before.validate()
    assert before.node_requests.milli_cpu == 1000
    resized = {**pending, "spec": {**pending["spec"], "nodeName": "n"},
               "status": {"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}}
    after = Pod(resized)
    after.adopt_requests(before)  # the status holds resources: nothing is taken
    assert after.requests.milli_cpu == 1000
    assert after.node_requests.milli_cpu == 3000
    assert after.node_non_zero_requests == (3000, 200 * 2**20)
    ni = NodeInfo()
    ni.add_pod(after)
    assert ni.requested.milli_cpu == 3000
    ni.remove_pod(after)
    assert ni.requested.milli_cpu == 0


def _props(p: Pod) -> dict[str, Any]:
    names = ["creation_timestamp", "owner_references", "init_containers", "tolerations", "node_selector", "affinity",
             "required_node_affinity", "required_affinity_terms", "required_anti_affinity_terms", "preferred_affinity_terms",
             "preferred_anti_affinity_terms", "has_pod_affinity", "has_required_anti_affinity", "topology_spread_constraints",
             "volumes", "pvc_names", "host_ports", "images", "requests", "non_zero_requests", "node_requests",
             "node_non_zero_requests"]
    return {n: repr(getattr(p, n)) for n in names}  # a LabelSelector compares by identity: by repr


@pytest.mark.parametrize(
    "spec",
    [
        {"containers": [{"name": "c", "image": "i"}]},
        {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}], "initContainers": None,
         "tolerations": [{"key": "k", "operator": "Exists"}], "nodeSelector": {"a": "b"},
         "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {"matchLabels": {"x": "y"}}, "topologyKey": "zone"}]}},
         "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "pvc"}}],
         "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
    ],
)
def test_validate_keeps_what_the_properties_read(spec: dict[str, Any]) -> None:
    raw = {"metadata": {"name": "p", "creationTimestamp": None}, "spec": spec}
    validated = Pod(raw)
    validated.validate()
    assert _props(validated) == _props(Pod(raw))


def test_validate_still_names_a_malformed_part_after_the_empty_ones() -> None:
    p = Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], "tolerations": "x"}})
    with pytest.raises(InvalidObjectError) as ei:
        p.validate()
    assert str(ei.value) == "spec.tolerations: must be a list of objects"


def test_with_node_name_shares_the_parts_and_stays_read_only() -> None:
    raw = {"metadata": {"name": "p", "uid": "u", "labels": {"a": "b"}},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}, "status": {"phase": "Pending"}}
    p = Pod(raw)
    p.validate()
    q = p.with_node_name("n1")
    assert q.node_name == "n1" and q.spec["nodeName"] == "n1" and q.raw["spec"]["nodeName"] == "n1"
    assert p.node_name == "" and "nodeName" not in p.spec and "nodeName" not in p.raw["spec"]
    assert q.raw["metadata"] is p.raw["metadata"] and q.spec["containers"] is p.spec["containers"]
    assert type(q.raw) is ReadOnlyDict and type(q.spec) is ReadOnlyDict
    fresh = Pod({**raw, "spec": {**raw["spec"], "nodeName": "n1"}})
    assert _props(q) == _props(fresh) and q.key == fresh.key and q.uid == fresh.uid
    with pytest.raises(TypeError, match="Pod views are read-only"):
        q.x = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="read-only"):
        q.spec["nodeName"] = "other"  # type: ignore[index]
    assert "node_name" not in p.__dict__ or p.node_name == ""


def test_read_only_copies_every_container_and_shares_the_rest() -> None:
    shared = read_only({"k": [1]})
    when = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
    src = {"a": {"b": [1, {"c": (2, 3)}, {4}]}, "d": shared, "e": "x", "f": when, "g": None}
    out = read_only(src)
    assert out == {"a": {"b": [1, {"c": [2, 3]}, frozenset({4})]}, "d": {"k": [1]}, "e": "x", "f": when, "g": None}
    assert type(out) is ReadOnlyDict and type(out["a"]) is ReadOnlyDict and type(out["a"]["b"]) is ReadOnlyList
    assert type(out["a"]["b"][1]["c"]) is ReadOnlyList
    assert out["d"] is shared and out["f"] is when
    assert type(src["a"]) is dict and type(src["a"]["b"]) is list  # the input is not changed
    src["a"]["b"].append(9)
    assert out["a"]["b"] == [1, {"c": [2, 3]}, frozenset({4})]
    with pytest.raises(TypeError) as ei:
        out["a"]["b"][0] = 5
    assert str(ei.value) == READ_ONLY_MESSAGE
    assert read_only([{"a": 1}, 2]) == [{"a": 1}, 2] and type(read_only([{"a": 1}])[0]) is ReadOnlyDict


def test_a_deep_copy_of_a_read_only_object_is_plain_and_mutable() -> None:
    when = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
    ro = read_only({"a": [{"b": 1, "t": when}], "c": "x"})
    c = copy.deepcopy(ro)
    assert c == ro and type(c) is dict and type(c["a"]) is list and type(c["a"][0]) is dict
    c["a"][0]["b"] = 2
    assert ro["a"][0]["b"] == 1
    assert EMPTY_DICT == {} and EMPTY_LIST == []


def test_columns_given_out_are_read_only_views_that_follow_each_refresh() -> None:
    from kubesched.sdk import Node
    from kubesched.sdk.columns import NodeColumns

    node = Node({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "memory": "1Gi", "pods": "10"}}})
    ni = NodeInfo(node)
    cols = NodeColumns([ni])
    cpu, pods, gens = cols.requested("cpu"), cols.pod_count, cols.generations
    assert (cpu.tolist(), pods.tolist()) == ([0], [0])
    ni.add_pod(Pod({"metadata": {"name": "p", "uid": "u"}, "spec": {"nodeName": "n", "containers": [
        {"name": "c", "resources": {"requests": {"cpu": "1500m", "example.com/gpu": "2"}}}]}}))
    cols.refresh([0])
    assert (cpu.tolist(), pods.tolist(), gens.tolist()) == ([1500], [1], [ni.generation])  # the same arrays, updated
    gpu = cols.requested("example.com/gpu")
    assert gpu.tolist() == [2] and cols.allocatable("example.com/gpu").tolist() == [0]
    for a in (cpu, pods, gens, gpu, cols.allocatable("cpu"), cols.non_zero_requested("memory")):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 7
    assert cpu.tolist() == [1500]


def test_adopt_takes_the_parts_of_the_same_spec_and_never_those_of_a_changed_one() -> None:
    spec = {"nodeName": "n", "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}],
                                             "resources": {"requests": {"cpu": "1"}}}],
            "tolerations": [{"key": "a", "operator": "Exists"}]}
    assumed = Pod({"metadata": {"name": "p", "uid": "u"}, "spec": spec})
    assumed.validate()
    bound = Pod({"metadata": {"name": "p", "uid": "u", "resourceVersion": "2"}, "spec": dict(spec), "status": {"phase": "Pending"}})
    bound.adopt_requests(assumed)
    assert bound.host_ports is assumed.host_ports and bound.tolerations is assumed.tolerations
    assert bound.requests is assumed.requests
    assert bound.phase == "Pending" and bound.resource_version == "2"  # read from its own object
    changed = Pod({"metadata": {"name": "p", "uid": "u"}, "spec": {**spec, "tolerations": [{"key": "b", "operator": "Exists"}],
                                                                 "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}})
    changed.adopt_requests(assumed)
    assert [t.key for t in changed.tolerations] == ["b"]
    assert changed.host_ports == () and changed.requests.milli_cpu == 2000
    renamed = Pod({"metadata": {"name": "q", "uid": "u"}, "spec": {**spec, "volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {}}}]}})
    with_volume = Pod({"metadata": {"name": "p", "uid": "u"}, "spec": {**spec, "volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {}}}]}})
    with_volume.validate()
    renamed.adopt_requests(with_volume)
    assert list(renamed.pvc_names) == ["q-v"] and list(with_volume.pvc_names) == ["p-v"]
