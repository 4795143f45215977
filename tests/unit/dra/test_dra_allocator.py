"""The allocator's own tests: Go's TestConsumableCapacity (consumable_capacity_test.go,
incubating v0.36.3; ids ``GoTestConsumableCapacity/<subtest>``) and kubesched's additions
(why_not, the deadline, the allocated state from claims, the written quantities)."""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

import pytest
from dra_builders import (
    capacity0,
    capacity1,
    claimWithRequest,
    claimWithRequests,
    class_,
    classA,
    device,
    driverA,
    node,
    node1,
    pool1,
    region1,
    req0,
    request,
    slice1,
    sliceWithDevices,
    sliceWithOneDevice,
)

from kubesched.runtime.dra.allocator import (
    DEFAULT_FEATURES,
    AllocatedState,
    Allocator,
    AllocatorError,
    AllocatorTimeout,
    FailedOnNode,
    Features,
    add_allocated_claim,
)
from kubesched.runtime.dra.allocator.capacity import _calculate, _violates, consumed_capacity
from kubesched.runtime.dra.allocator.pools import Capacity, CapacityPolicy
from kubesched.runtime.dra.allocator.quantity import (
    BINARY_SI,
    DECIMAL_SI,
    Quantity,
    format_quantity,
)
from kubesched.runtime.dra.allocator.state import (
    add_capacity,
    capacity_empty,
    insert_capacity,
    remove_capacity,
    sub_capacity,
)
from kubesched.runtime.dra.cel import Cache

ONE, TWO, THREE = Fraction(1), Fraction(2), Fraction(3)
DEVICE_ID = ("driver-a", "pool-1", "device-1")


# --- GoTestConsumableCapacity -------------------------------------------------------------


def test_go_consumable_capacity_add_sub_allocating_consumed_capacity() -> None:
    """GoTestConsumableCapacity/add-sub-allocating-consumed-capacity"""
    allocated: dict[str, Fraction] = {}
    assert capacity_empty(allocated)
    add_capacity(allocated, {capacity0: ONE})
    assert not capacity_empty(allocated)
    sub_capacity(allocated, {capacity0: ONE})
    assert capacity_empty(allocated)


def test_go_consumable_capacity_insert_remove_allocating_consumed_capacity_collection() -> None:
    """GoTestConsumableCapacity/insert-remove-allocating-consumed-capacity-collection"""
    aggregated: dict[Any, dict[str, Fraction]] = {}
    insert_capacity(aggregated, DEVICE_ID, {capacity0: ONE})
    insert_capacity(aggregated, DEVICE_ID, {capacity0: ONE})
    allocated = aggregated[DEVICE_ID]
    assert allocated[capacity0] == TWO
    remove_capacity(aggregated, DEVICE_ID, {capacity0: ONE})
    assert allocated[capacity0] == ONE
    remove_capacity(aggregated, DEVICE_ID, {capacity0: ONE})
    assert DEVICE_ID not in aggregated


def test_go_consumable_capacity_get_consumed_capacity_from_request() -> None:
    """GoTestConsumableCapacity/get-consumed-capacity-from-request"""
    requested = {capacity0: Quantity.parse("1"), "dummy": Quantity.parse("1")}
    capacity = {
        capacity0: Capacity({"value": "2", "requestPolicy": {"default": "2", "validRange": {"min": "1"}}}),
        capacity1: Capacity({"value": "2", "requestPolicy": {"default": "1", "validRange": {"min": "1"}}}),
        "dummy": Capacity({"value": "1"}),
    }
    consumed = consumed_capacity(requested, capacity)
    assert sorted(consumed) == sorted([capacity0, capacity1, "dummy"])
    assert all(q.value == ONE for q in consumed.values())


@pytest.mark.parametrize(
    ("requested", "policy", "violates"),
    [
        pytest.param("1", None, False, id="no constraint"),
        pytest.param("1", {"default": "1", "validRange": {"min": "1", "max": "2"}}, False, id="less than maximum"),
        pytest.param("2", {"default": "1", "validRange": {"min": "1", "max": "1"}}, True, id="more than maximum"),
        pytest.param("1", {"default": "1", "validValues": ["1"]}, False, id="in set"),
        pytest.param("2", {"default": "1", "validValues": ["1"]}, True, id="not in set"),
    ],
)
def test_go_consumable_capacity_violate_capacity_sharing(requested: str, policy: dict[str, Any] | None, violates: bool) -> None:
    """GoTestConsumableCapacity/violate-capacity-sharing/<case>"""
    assert _violates(Quantity.parse(requested), CapacityPolicy(policy) if policy is not None else None) is violates


@pytest.mark.parametrize(
    ("requested", "value", "policy", "want"),
    [
        pytest.param(None, "1", {}, "1", id="empty"),
        pytest.param(None, "2", {"default": "1", "validRange": {"min": "1"}}, "1", id="min in range"),
        pytest.param(None, "2", {"default": "1", "validValues": ["1"]}, "1", id="default in set"),
        pytest.param("2", "2", {"default": "1", "validRange": {"min": "1"}}, "2", id="more than min in range"),
        pytest.param("1", "2", {"default": "1", "validRange": {"min": "2"}}, "2", id="less than min in range"),
        pytest.param("2", "3", {"default": "1", "validRange": {"min": "1", "step": "2"}}, "3", id="with step (round up)"),
        pytest.param("2", "2", {"default": "1", "validRange": {"min": "1", "step": "1"}}, "2", id="with step (no remaining)"),
        pytest.param("2", "3", {"default": "1", "validValues": ["1", "2", "3"]}, "2", id="valid value in set"),
        pytest.param("2", "3", {"default": "1", "validValues": ["1", "3"]}, "3", id="set (round up)"),
        pytest.param("3", "3", {"default": "1", "validValues": ["1", "2"]}, "3", id="larger than set"),
    ],
)
def test_go_consumable_capacity_calculate_consumed_capacity(requested: str | None, value: str, policy: dict[str, Any], want: str) -> None:
    """GoTestConsumableCapacity/calculate-consumed-capacity/<case>"""
    got = _calculate(Quantity.parse(requested) if requested is not None else None, Capacity({"value": value, "requestPolicy": policy}))
    assert got.value == Fraction(want)


# --- kubesched's additions ----------------------------------------------------------------


def _allocator(slices: list[dict[str, Any]], state: AllocatedState | None = None) -> Allocator:
    classes = {classA: class_(classA, driverA)}
    return Allocator(DEFAULT_FEATURES, state or AllocatedState(), classes.get, slices, Cache())


def _claim(name: str, count: int) -> dict[str, Any]:
    out = claimWithRequests(name, None, request(req0, classA, count))
    out["metadata"]["namespace"] = "default"
    return out


def test_why_not_names_the_claim_request_and_allocated_devices() -> None:
    slices = [sliceWithDevices(slice1, node1, pool1, driverA, device("device-1", None, None), device("device-2", None, None))]
    alloc = _allocator(slices, AllocatedState({(driverA, pool1, "device-1")}))
    assert alloc.allocate(node(node1, region1), [_claim("gpu-claim", 2)]) is None
    assert alloc.why_not == "claim default/gpu-claim, request req-0: needs 2 devices, 2 match, 1 of them already allocated"


def test_why_not_when_no_device_matches() -> None:
    slices = [sliceWithDevices(slice1, node1, pool1, "driver-b", device("device-1", None, None))]
    alloc = _allocator(slices)
    assert alloc.allocate(node(node1, region1), [_claim("gpu-claim", 1)]) is None
    assert alloc.why_not == "claim default/gpu-claim, request req-0: no device matches the selectors (1 device on the node)"


def test_why_not_when_devices_are_free_but_a_constraint_fails() -> None:
    slices = [sliceWithDevices(slice1, node1, pool1, driverA, device("device-1", None, None), device("device-2", None, None))]
    claim = claimWithRequest("c", req0, classA, {"matchAttribute": driverA + "/numa"})
    alloc = _allocator(slices)
    assert alloc.allocate(node(node1, region1), [claim]) is None
    assert (
        alloc.why_not
        == "claim c, request req-0: needs 1 device, 2 match, 0 of them already allocated; constraints, shared counters or capacity rule out the rest"
    )


def test_why_not_is_cleared_by_a_successful_allocation() -> None:
    alloc = _allocator([sliceWithOneDevice(slice1, node1, pool1, driverA)])
    assert alloc.allocate(node(node1, region1), [_claim("c", 2)]) is None
    assert alloc.why_not is not None
    assert alloc.allocate(node(node1, region1), [_claim("c", 1)]) is not None
    assert alloc.why_not is None


def test_deadline_passed_stops_the_search() -> None:
    """Go's TestAllocator/interrupt/deadline: 6 devices wanted of 5, the search is long."""
    devices = [device(f"device-{i}", None, None) for i in range(1, 6)]
    alloc = _allocator([sliceWithDevices(slice1, node1, pool1, driverA, *devices)])
    with pytest.raises(AllocatorTimeout) as info:
        alloc.allocate(node(node1, region1), [_claim("c", 6)], deadline=time.monotonic() - 1)
    assert str(info.value) == "filter operation aborted: context deadline exceeded"
    assert alloc.allocate(node(node1, region1), [_claim("c", 6)]) is None  # "off": no error


def test_invalid_pool_is_failed_on_node() -> None:
    slices = [sliceWithDevices(slice1, node1, pool1, driverA, device("device-1", None, None), device("device-1", None, None))]
    alloc = _allocator(slices)
    with pytest.raises(FailedOnNode) as info:
        alloc.allocate(node(node1, region1), [_claim("c", 1)])
    assert str(info.value) == "invalid resource pools were encountered"


def test_missing_class_error_names_the_class_as_the_lister_does() -> None:
    alloc = Allocator(DEFAULT_FEATURES, AllocatedState(), {}.get, [sliceWithOneDevice(slice1, node1, pool1, driverA)], Cache())
    with pytest.raises(AllocatorError) as info:
        alloc.allocate(node(node1, region1), [_claim("c", 1)])
    assert (
        str(info.value)
        == 'claim default/c, request req-0: could not retrieve device class class-a: deviceclass.resource.k8s.io "class-a" not found'
    )


def test_add_allocated_claim_as_foreach_allocated_device() -> None:
    state = AllocatedState()
    claim = {
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "a", "driver": "d", "pool": "p", "device": "x"},
                        {"request": "b", "driver": "d", "pool": "p", "device": "y", "adminAccess": True},
                        {"request": "c", "driver": "d", "pool": "p", "device": "z", "shareID": "s1", "consumedCapacity": {"mem": "1Gi"}},
                    ]
                }
            }
        }
    }
    add_allocated_claim(state, claim)
    add_allocated_claim(state, {"status": {}})
    assert state.allocated_devices == {("d", "p", "x")}
    assert state.allocated_shared_device_ids == {("d", "p", "z", "s1")}
    assert state.aggregated_capacity == {("d", "p", "z"): {"mem": Fraction(1 << 30)}}
    legacy = AllocatedState()
    add_allocated_claim(legacy, claim, consumable_capacity=False)
    assert legacy.allocated_devices == {("d", "p", "x"), ("d", "p", "z")}


def test_consumed_capacity_is_written_as_quantities() -> None:
    dev = device("device-1", {capacity0: "4Gi"}, None).withAllowMultipleAllocations()
    alloc = _allocator([sliceWithDevices(slice1, node1, pool1, driverA, dev)])
    claim = _claim("c", 1)
    claim["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {capacity0: "1536Mi"}}
    results = alloc.allocate(node(node1, region1), [claim])
    assert results is not None
    got = results[0]["devices"]["results"][0]
    assert got["consumedCapacity"] == {capacity0: "1536Mi"}
    assert len(got["shareID"]) == 36


@pytest.mark.parametrize(
    ("value", "format", "text"),
    [
        (Fraction(1 << 30), BINARY_SI, "1Gi"),
        (Fraction(1536 << 20), BINARY_SI, "1536Mi"),
        (Fraction(2), BINARY_SI, "2"),
        (Fraction(2000), DECIMAL_SI, "2k"),
        (Fraction(1, 2), DECIMAL_SI, "500m"),
        (Fraction(1500), BINARY_SI, "1500"),
        (Fraction(-3), DECIMAL_SI, "-3"),
    ],
)
def test_format_quantity(value: Fraction, format: str, text: str) -> None:
    assert format_quantity(value, format) == text


@pytest.mark.parametrize(
    ("exactly", "want"),
    [
        pytest.param({}, ["device-1"], id="no allocationMode, no count: ExactCount 1"),
        pytest.param({"allocationMode": "ExactCount", "count": 0}, ["device-1"], id="count 0 is 1"),
        pytest.param({"allocationMode": "ExactCount", "count": None}, ["device-1"], id="count null is 1"),
        pytest.param({"count": 2}, ["device-1", "device-2"], id="no allocationMode: ExactCount"),
        pytest.param({"allocationMode": "All"}, ["device-1", "device-2", "device-3"], id="All keeps no count"),
    ],
)
def test_requests_get_the_api_servers_defaults(exactly: dict[str, Any], want: list[str]) -> None:
    """An undefaulted request (a simulated manifest) is read as the API server would default it."""
    devices = [device(f"device-{i}", None, None) for i in range(1, 4)]
    alloc = _allocator([sliceWithDevices(slice1, node1, pool1, driverA, *devices)])
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": [{"name": req0, "exactly": {"deviceClassName": classA, **exactly}}]}}}
    results = alloc.allocate(node(node1, region1), [claim])
    assert results is not None
    assert [r["device"] for r in results[0]["devices"]["results"]] == want


def test_first_available_subrequests_get_the_api_servers_defaults() -> None:
    devices = [device(f"device-{i}", None, None) for i in range(1, 4)]
    alloc = _allocator([sliceWithDevices(slice1, node1, pool1, driverA, *devices)])
    sub = {"name": "sub-0", "deviceClassName": classA, "count": 0}
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": [{"name": req0, "firstAvailable": [sub]}]}}}
    results = alloc.allocate(node(node1, region1), [claim])
    assert results is not None
    assert [(r["request"], r["device"]) for r in results[0]["devices"]["results"]] == [(f"{req0}/sub-0", "device-1")]


@pytest.mark.parametrize(("partitionable", "fits"), [(False, False), (True, True)])
def test_per_device_node_selection_false_is_set(partitionable: bool, fits: bool) -> None:
    """Go skips a slice whose perDeviceNodeSelection is set at all (even false) when
    PartitionableDevices is off (pools_incubating.go: ``PerDeviceNodeSelection != nil``); the
    real Go allocator gives the same on this input."""
    slc = sliceWithDevices(slice1, node1, pool1, driverA, device("device-1", None, None))
    slc["spec"]["perDeviceNodeSelection"] = False
    alloc = Allocator(Features(partitionable_devices=partitionable), AllocatedState(), {classA: class_(classA, driverA)}.get, [slc], Cache())
    assert (alloc.allocate(node(node1, region1), [_claim("c", 1)]) is not None) is fits


_GO_SELECTOR_ERRORS = [
    pytest.param(
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Bad", "values": ["x"]}]}]},
        "&NodeSelector{NodeSelectorTerms:[]NodeSelectorTerm{NodeSelectorTerm{MatchExpressions:[]NodeSelectorRequirement{NodeSelectorRequirement{Key:a,Operator:Bad,Values:[x],},},"
        'MatchFields:[]NodeSelectorRequirement{},},},}: nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Bad": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        id="operator",
    ),
    pytest.param(
        {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["x", "y"]}]}]},
        "&NodeSelector{NodeSelectorTerms:[]NodeSelectorTerm{NodeSelectorTerm{MatchExpressions:[]NodeSelectorRequirement{},MatchFields:[]NodeSelectorRequirement{NodeSelectorRequirement{Key:metadata.name,Operator:In,Values:[x y],},},},},}: "
        'nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["x","y"]: must have one element',
        id="field values",
    ),
    pytest.param(
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "-bad key", "operator": "In", "values": ["x"]}]}]},
        "&NodeSelector{NodeSelectorTerms:[]NodeSelectorTerm{NodeSelectorTerm{MatchExpressions:[]NodeSelectorRequirement{NodeSelectorRequirement{Key:-bad key,Operator:In,Values:[x],},},MatchFields:[]NodeSelectorRequirement{},},},}: "
        "nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: \"-bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        id="label key",
    ),
    pytest.param(
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}, {"key": "b", "operator": "Exists", "values": ["x"]}], "matchFields": [{"key": "foo", "operator": "Exists"}]},
                {},
                {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            ]
        },
        "&NodeSelector{NodeSelectorTerms:[]NodeSelectorTerm{NodeSelectorTerm{MatchExpressions:[]NodeSelectorRequirement{NodeSelectorRequirement{Key:a,Operator:Gt,Values:[x],},"
        "NodeSelectorRequirement{Key:b,Operator:Exists,Values:[x],},},MatchFields:[]NodeSelectorRequirement{NodeSelectorRequirement{Key:foo,Operator:Exists,Values:[],},},},"
        "NodeSelectorTerm{MatchExpressions:[]NodeSelectorRequirement{},MatchFields:[]NodeSelectorRequirement{},},NodeSelectorTerm{MatchExpressions:[]NodeSelectorRequirement{"
        "NodeSelectorRequirement{Key:a,Operator:In,Values:[],},},MatchFields:[]NodeSelectorRequirement{},},},}: "
        "[nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer, "
        'nodeSelectorTerms[0].matchExpressions[1].values: Invalid value: ["x"]: values set must be empty for exists and does not exist, '
        'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn", '
        "nodeSelectorTerms[2].matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty]",
        id="several",
    ),
]


@pytest.mark.parametrize(("selector", "text"), _GO_SELECTOR_ERRORS)
def test_slice_node_selector_errors_are_gos(selector: dict[str, Any], text: str) -> None:
    """The real Go allocator's error for a slice whose node selector does not parse."""
    slc = sliceWithDevices(slice1, node1, pool1, driverA, device("device-1", None, None))
    del slc["spec"]["nodeName"]
    slc["spec"]["nodeSelector"] = selector
    with pytest.raises(AllocatorError) as info:
        _allocator([slc]).allocate(node(node1, region1), [_claim("c", 1)])
    assert str(info.value) == f"gather pool information: failed to perform node selection for slice {slice1}: failed to parse node selector {text}"


def test_device_node_selector_error_names_the_device() -> None:
    """Go prints the whole Device here (Device.String()); kubesched names it (pools.py's doc)."""
    dev = device("device-1", None, None)
    dev["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Bad", "values": ["x"]}]}]}
    slc = sliceWithDevices(slice1, node1, pool1, driverA, dev)
    del slc["spec"]["nodeName"]
    slc["spec"]["perDeviceNodeSelection"] = True
    with pytest.raises(AllocatorError) as info:
        _allocator([slc]).allocate(node(node1, region1), [_claim("c", 1)])
    assert str(info.value).startswith(f"gather pool information: failed to perform node selection for device device-1 in slice {slice1}: failed to parse node selector &NodeSelector{{")


@pytest.mark.parametrize(
    ("selector", "fits"),
    [
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "In", "values": [node1]}]}]}, False, id="other field matches nothing"),
        pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-2"]}]}]}, True, id="NotIn name"),
        pytest.param({"nodeSelectorTerms": []}, False, id="no terms"),
    ],
)
def test_slice_node_selector_matches_as_go(selector: dict[str, Any], fits: bool) -> None:
    slc = sliceWithDevices(slice1, node1, pool1, driverA, device("device-1", None, None))
    del slc["spec"]["nodeName"]
    slc["spec"]["nodeSelector"] = selector
    assert (_allocator([slc]).allocate(node(node1, region1), [_claim("c", 1)]) is not None) is fits
