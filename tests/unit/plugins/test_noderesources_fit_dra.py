"""NodeResourcesFit under DRAExtendedResource (beta, on in v1.36): the DRA cases of kube-scheduler
v1.36.3's ``noderesources/fit_test.go`` (TestEnoughRequests, TestEventsToRegister,
Test_isSchedulableAfterDeviceClassChange, TestHaveAnyRequestedResourcesIncreased, TestFitSignPod;
ids ``Go<TestName>/<case>``), the column form of Filter against the per-node one, and the
DeviceClass resolver (Go's ExtendedResourceCache) fed from the object store.

Go's test DRA manager holds one DeviceClass, ``device-class-name`` with
``extendedResourceName: extended.resource.dra.io/something``; here it is an object of the
handle's store. Go's "nil draManager" is a Fit without a handle."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from kubesched.runtime.dra.deviceclasses import ExtendedResourceCache, resolver_for
from kubesched.runtime.objectstore import ObjectStore
from kubesched.runtime.plugins.noderesources import Fit, InsufficientResource, NodeResourcesFitArgs
from kubesched.runtime.plugins.noderesources.features import ALL_OFF
from kubesched.runtime.plugins.noderesources.fit import (
    ERR_SIGNATURE_DRA,
    fits_request,
    have_any_requested_resources_increased,
)
from kubesched.runtime.plugins.noderesources.pod_requests import (
    compute_pod_resource_request,
    resources_signature,
)
from kubesched.sdk import ActionType, Code, CycleState, Node, NodeInfo, Pod, QueueingHint, Status
from kubesched.testing import make_handle

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
HUGE_A = "hugepages-2Mi"
EXT_DRA = "extended.resource.dra.io/something"
CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "device-class-name"},
    "spec": {"extendedResourceName": EXT_DRA},
}


def R(milli_cpu: int = 0, memory: int = 0, scalar: dict[str, int] | None = None) -> dict[str, Any]:
    return {"milli_cpu": milli_cpu, "memory": memory, "scalar": scalar or {}}


def new_resource_pod(*usage: dict[str, Any]) -> dict[str, Any]:
    """newResourcePod: one container per usage, requesting exactly that."""
    containers = []
    for i, u in enumerate(usage):
        rl = {"cpu": f"{u['milli_cpu']}m", "memory": str(u["memory"]), "pods": "0", "ephemeral-storage": "0"}
        rl.update({k: str(v) for k, v in u["scalar"].items()})
        containers.append({"name": f"c{i}", "resources": {"requests": rl}})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "p"}, "spec": {"containers": containers}}


def make_resources(milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_a: int) -> dict[str, str]:
    return {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        "pods": str(pods),
        EXT_A: str(ext_a),
        "ephemeral-storage": str(storage),
        HUGE_A: str(huge_a),
    }


def raw_node(capacity: dict[str, str], name: str = "") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"capacity": capacity, "allocatable": capacity}}


def new_fit(*, dra: bool, with_manager: bool = True) -> Fit:
    handle = make_handle(objects=[CLASS]) if with_manager else None
    args = NodeResourcesFitArgs()
    return Fit(args, handle, features=replace(ALL_OFF, enable_dra_extended_resource=dra))


# TestEnoughRequests (the DRA cases) -------------------------------------------------------------
ENOUGH = [
    # name, dra enabled, nil manager, pod usage, existing pod usage, want status, want insufficient
    ("extended resource backed by device plugin", True, False, R(scalar={EXT_A: 1}), R(), None, []),
    ("extended resource backed by DRA", True, False, R(1, 1, {EXT_DRA: 1}), R(), None, []),
    ("extended resource backed by DRA, nil draManager", True, True, R(1, 1, {EXT_A: 1}), R(), None, []),
    (
        "extended resource backed by DRA not enabled",
        False,
        False,
        R(1, 1, {EXT_DRA: 1}),
        R(),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Insufficient " + EXT_DRA),
        [InsufficientResource(EXT_DRA, "Insufficient " + EXT_DRA, 1, 0, 0, True)],
    ),
    (
        "extended resource NOT backed by DRA",
        True,
        False,
        R(1, 1, {EXT_B: 1}),
        R(),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Insufficient " + EXT_B),
        [InsufficientResource(EXT_B, "Insufficient " + EXT_B, 1, 0, 0, True)],
    ),
    (
        "extended resource was backed by Device Plugin (Allocatable: 0)",
        True,
        False,
        R(scalar={EXT_DRA: 1}),
        R(scalar={EXT_DRA: 0}),
        None,
        [],
    ),
    (
        "extended resource was backed by Device Plugin (Allocatable: 0), global cache",
        True,
        False,
        R(scalar={EXT_A: 1}),
        R(scalar={EXT_A: 0}),
        None,
        [],
    ),
]


@pytest.mark.parametrize(
    ("dra", "nil_manager", "usage", "existing", "want_status", "want"),
    [pytest.param(*c[1:], id=f"GoTestEnoughRequests/{c[0]}") for c in ENOUGH],
)
def test_enough_requests_dra(dra, nil_manager, usage, existing, want_status, want):
    node = raw_node(make_resources(10, 20, 32, 5, 20, 5))
    ni = NodeInfo(None, [Pod(new_resource_pod(existing))])
    ni.set_node(Node(node))
    p = new_fit(dra=dra, with_manager=not nil_manager)
    state = CycleState()
    pod = Pod(new_resource_pod(usage))
    assert p.pre_filter(state, pod) is None
    got = p.filter(state, pod, ni)
    if want_status is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.reasons) == (want_status.code, want_status.reasons)
    # Go passes the test's DRA manager (none when the feature is off) to fitsRequest
    resolver = p.resolver if dra and not nil_manager else None
    assert fits_request(compute_pod_resource_request(pod), ni, resolver=resolver) == want
    # the batch and column forms agree with Filter
    assert [s if s is None else (s.code, s.reasons) for s in p.filter_batch(state, pod, [ni])] == [
        None if got is None else (got.code, got.reasons)
    ]


def test_filter_columns_delegate_per_node():
    """The column form leaves the resource to DRA on exactly the nodes that do not list it."""
    nodes = [
        raw_node({"cpu": "4", "memory": "4Gi", "pods": "10"}, "no-gpu"),  # DRA serves it
        raw_node({"cpu": "4", "memory": "4Gi", "pods": "10", EXT_DRA: "1"}, "plugin-1"),  # too few
        raw_node({"cpu": "4", "memory": "4Gi", "pods": "10", EXT_DRA: "4"}, "plugin-4"),
    ]
    handle = make_handle(nodes, objects=[CLASS])
    p = Fit(NodeResourcesFitArgs(), handle, features=replace(ALL_OFF, enable_dra_extended_resource=True))
    snapshot = handle.snapshot()
    infos = snapshot.list()
    pod = Pod(new_resource_pod(R(100, 0, {EXT_DRA: 2})))
    state = CycleState()
    p.pre_filter(state, pod)
    per_node = {ni.node.name: p.filter(state, pod, ni) for ni in infos}
    assert {k: s if s is None else (s.code, s.reasons) for k, s in per_node.items()} == {
        "no-gpu": None,
        "plugin-1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Insufficient " + EXT_DRA]),
        "plugin-4": None,
    }
    codes, table = p.filter_columns(state, pod, snapshot.columns)
    got = [None if c == 0 else (table[c].code, table[c].reasons) for c in np.asarray(codes).tolist()]
    assert got == [None if per_node[ni.node.name] is None else (per_node[ni.node.name].code, per_node[ni.node.name].reasons) for ni in infos]


# TestEventsToRegister ---------------------------------------------------------------------------
def test_events_to_register_dra_enabled():
    p = Fit(None, None, features=replace(ALL_OFF, enable_dra_extended_resource=True))
    events = p.events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        ("Pod", ActionType.DELETE),
        ("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL),
        ("DeviceClass", ActionType.ADD | ActionType.UPDATE),
    ]
    assert events[2].hint == p.is_schedulable_after_device_class_event


# Test_isSchedulableAfterDeviceClassChange -------------------------------------------------------
def _class(name: str = "", ern: str | None = None) -> dict[str, Any]:
    spec = {} if ern is None else {"extendedResourceName": ern}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


GPU_POD = new_resource_pod(R(scalar={"example.com/gpu": 1}))
IMPLICIT_POD = new_resource_pod(R(scalar={"deviceclass.resource.kubernetes.io/gpuclass": 1}))
HINTS = [
    ("backoff-wrong-new-object", {}, None, "not-a-class", QueueingHint.QUEUE),
    ("backoff-wrong-old-object", {}, "not-a-class", _class(), QueueingHint.QUEUE),
    ("skip-queue-on-class-nil-extended-resource-name-pointer", new_resource_pod(R(memory=2)), _class(), _class(), QueueingHint.SKIP),
    (
        "skip-queue-on-class-same-extended-resource-name-pointer",
        new_resource_pod(R(memory=2)),
        _class(ern="example.com/gpu"),
        _class(ern="example.com/gpu"),
        QueueingHint.SKIP,
    ),
    (
        "skip-queue-on-class-same-extended-resource-name",
        new_resource_pod(R(memory=2)),
        _class(ern="example.com/gpu"),
        _class(ern="example.com/gpu"),
        QueueingHint.SKIP,
    ),
    ("queue-on-class-add-with-implicit-extended-resource-name", IMPLICIT_POD, None, _class("gpuclass", "example.com/gpu"), QueueingHint.QUEUE),
    (
        "skip-on-class-add-with-implicit-extended-resource-name-not-matching",
        IMPLICIT_POD,
        None,
        _class("myclass", "example.com/gpu"),
        QueueingHint.SKIP,
    ),
    (
        "skip-on-class-add-with-explicit-extended-resource-name-not-matching",
        new_resource_pod(R(scalar={"example.com/othergpu": 1})),
        None,
        _class("myclass", "example.com/gpu"),
        QueueingHint.SKIP,
    ),
    (
        "skip-on-class-update-with-implicit-extended-resource-name",
        IMPLICIT_POD,
        _class("gpuclass"),
        _class("gpuclass", "example.com/gpu"),
        QueueingHint.SKIP,
    ),
    ("queue-on-class-add-with-extended-resource-name", GPU_POD, None, _class(ern="example.com/gpu"), QueueingHint.QUEUE),
    (
        "queue-on-class-update-with-extended-resource-name",
        GPU_POD,
        _class(ern="example.com/gpu1"),
        _class(ern="example.com/gpu"),
        QueueingHint.QUEUE,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [pytest.param(*c[1:], id=f"GoTest_isSchedulableAfterDeviceClassChange/{c[0]}") for c in HINTS],
)
def test_is_schedulable_after_device_class_change(pod, old, new, want):
    p = Fit(None, None, features=ALL_OFF)
    assert p.is_schedulable_after_device_class_event(Pod(pod), old, new) is want


# TestHaveAnyRequestedResourcesIncreased (the DRA cases) -----------------------------------------
def _node(capacity: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": capacity}}


INCREASED = [
    (
        "requested-resources-dra-in-node",
        R(2, 2, {EXT_DRA: 2}),
        {"cpu": "1", "memory": "2", "ephemeral-storage": "3", EXT_DRA: "4"},
        {"cpu": "1", "memory": "2", "ephemeral-storage": "1", EXT_DRA: "1"},
        False,
    ),
    (
        "requested-resources-dra-not-in-node",
        R(2, 2, {EXT_DRA: 2}),
        {"cpu": "1", "memory": "2", "ephemeral-storage": "3"},
        {"cpu": "1", "memory": "2", "ephemeral-storage": "1"},
        True,
    ),
    ("requested-resources-dra-zero-capacity", R(scalar={EXT_DRA: 1}), {EXT_DRA: "0"}, {EXT_DRA: "0"}, True),
]


@pytest.mark.parametrize(
    ("usage", "original", "modified", "want"),
    [pytest.param(*c[1:], id=f"GoTestHaveAnyRequestedResourcesIncreased/{c[0]}") for c in INCREASED],
)
def test_have_any_requested_resources_increased_dra(usage, original, modified, want):
    pod = new_resource_pod(usage)
    pod["spec"]["containers"][0]["resources"]["requests"]["ephemeral-storage"] = "2" if usage["milli_cpu"] else "0"
    fit = new_fit(dra=True)  # holds the handle whose objects feed the resolver
    resolver = fit.resolver
    assert resolver is not None
    resolver.refresh()
    got = have_any_requested_resources_increased(Pod(pod), _node(original), _node(modified), resolver=resolver)
    assert got is want


def test_node_change_hint_with_dra():
    """isSchedulableAfterNodeChange passes the manager on: a node added without the resource
    fits a pod whose resource a DeviceClass serves."""
    pod = Pod(new_resource_pod(R(100, 0, {EXT_DRA: 1})))
    node = raw_node({"cpu": "1", "memory": "1Gi", "pods": "10"}, "n")
    assert new_fit(dra=True).is_schedulable_after_node_change(pod, None, node) is QueueingHint.QUEUE
    assert new_fit(dra=False).is_schedulable_after_node_change(pod, None, node) is QueueingHint.SKIP


# TestFitSignPod ---------------------------------------------------------------------------------
def _req_pod(requests: dict[str, str]) -> Pod:
    return Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}})


SIGN = [
    ("pod with CPU and memory requests", {"cpu": "1000m", "memory": "2000"}, False, None),
    ("best-effort pod with no requests", {}, False, None),
    ("DRA extended resource enabled - returns unschedulable", {"cpu": "1000m", "memory": "2000", EXT_DRA: "1"}, True, ERR_SIGNATURE_DRA),
    ("DRA extended resource disabled", {"cpu": "1000m", "memory": "2000", EXT_DRA: "1"}, False, None),
]


@pytest.mark.parametrize(("requests", "dra", "refusal"), [pytest.param(*c[1:], id=f"GoTestFitSignPod/{c[0]}") for c in SIGN])
def test_fit_sign_pod(requests, dra, refusal):
    p = new_fit(dra=dra, with_manager=dra)
    pod = _req_pod(requests)
    status = p.dra_signature_refusal(pod)
    if refusal is None:
        assert status is None
        assert p.sign_pod(pod) == resources_signature(pod)
    else:
        assert status is not None and (status.code, status.message) == (Code.UNSCHEDULABLE, refusal)
        assert p.sign_pod(pod) is None  # kubesched: not signable


def test_fit_sign_pod_multiple_containers():
    """GoTestFitSignPod/pod with multiple containers: signed as before, the feature on."""
    pod = Pod(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {"name": "container1", "resources": {"requests": {"cpu": "500m", "memory": "1000"}}},
                    {"name": "container2", "resources": {"requests": {"cpu": "1500m", "memory": "3000"}}},
                ]
            },
        }
    )
    p = new_fit(dra=True)
    assert p.dra_signature_refusal(pod) is None and p.sign_pod(pod) == resources_signature(pod)


# the resolver (Go's ExtendedResourceCache) -------------------------------------------------------
def _dc(name: str, ern: str | None = None, created: str | None = None) -> dict[str, Any]:
    o = _class(name, ern)
    if created:
        o["metadata"]["creationTimestamp"] = created
    return o


def _names(cache: ExtendedResourceCache, *resources: str) -> list[str | None]:
    out = []
    for r in resources:
        c = cache.get_device_class(r)
        out.append(None if c is None else c["metadata"]["name"])
    return out


def test_cache_explicit_and_implicit_names_and_clashes():
    c = ExtendedResourceCache()
    c.on_add(_dc("old", "example.com/gpu", "2025-01-01T00:00:00Z"))
    assert _names(c, "example.com/gpu", "deviceclass.resource.kubernetes.io/old") == ["old", "old"]
    assert c.get_extended_resource("old") == "example.com/gpu"
    # a newer class with the same name wins
    c.on_add(_dc("new", "example.com/gpu", "2025-02-01T00:00:00Z"))
    assert _names(c, "example.com/gpu") == ["new"]
    # an older one does not, and (as in Go) not even its implicit name is added
    c.on_add(_dc("older", "example.com/gpu", "2024-01-01T00:00:00Z"))
    assert _names(c, "example.com/gpu", "deviceclass.resource.kubernetes.io/older") == ["new", None]
    # same time: the lower name wins
    c.on_add(_dc("a-same", "example.com/gpu", "2025-02-01T00:00:00Z"))
    assert _names(c, "example.com/gpu") == ["a-same"]
    # an update that drops the explicit name removes it
    c.on_update(_dc("a-same", "example.com/gpu", "2025-02-01T00:00:00Z"), _dc("a-same", None, "2025-02-01T00:00:00Z"))
    assert _names(c, "example.com/gpu", "deviceclass.resource.kubernetes.io/a-same") == [None, "a-same"]
    assert c.get_extended_resource("a-same") == ""
    c.on_delete(_dc("old", "example.com/gpu"))
    assert _names(c, "deviceclass.resource.kubernetes.io/old") == [None]


def test_resolver_follows_the_store():
    s = ObjectStore()
    r = resolver_for(s)
    assert resolver_for(s) is r  # one per client
    r.refresh()
    assert not r and r.get_device_class("example.com/gpu") is None
    s.create(_dc("gpu", "example.com/gpu"))
    r.refresh()
    assert _names(r, "example.com/gpu", "deviceclass.resource.kubernetes.io/gpu") == ["gpu", "gpu"]
    s.patch("resource.k8s.io/v1", "DeviceClass", "gpu", {"spec": {"extendedResourceName": "example.com/gpu2"}})
    r.refresh()
    assert _names(r, "example.com/gpu", "example.com/gpu2") == [None, "gpu"]
    s.delete("resource.k8s.io/v1", "DeviceClass", "gpu")
    r.refresh()
    assert _names(r, "example.com/gpu2", "deviceclass.resource.kubernetes.io/gpu") == [None, None]


def test_balanced_allocation_sign_pod_dra():
    """TestBalancedAllocationSignPod's DRA case: BalancedAllocation refuses too."""
    from kubesched.runtime.plugins.noderesources import BalancedAllocation
    from kubesched.runtime.plugins.noderesources.fit import dra_signature_refusal

    handle = make_handle(objects=[CLASS])
    p = BalancedAllocation(None, handle, features=replace(ALL_OFF, enable_dra_extended_resource=True))
    pod = _req_pod({"cpu": "1000m", "memory": "2000", EXT_DRA: "1"})
    status = dra_signature_refusal(p.resolver, pod)
    assert status is not None and (status.code, status.message) == (Code.UNSCHEDULABLE, ERR_SIGNATURE_DRA)
    assert p.sign_pod(pod) is None
    off = BalancedAllocation(None, handle, features=ALL_OFF)
    assert off.sign_pod(pod) == resources_signature(pod)
