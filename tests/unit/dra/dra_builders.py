"""Builders for the allocator tests: Python twins of the helper functions of Go's
``structured/internal/allocatortesting/allocator_testing.go`` (dynamic-resource-allocation
v0.36.3), so the transcribed TestAllocator cases read as Go's do. Objects are v1 API dicts
(:class:`Obj`, a dict with Go's ``with...`` methods); quantities are strings or ints."""

from __future__ import annotations

import json
from copy import deepcopy
from typing import Any

from kubesched.runtime.dra.allocator import Features as _Features

region1, region2 = "region-1", "region-2"
node1, node2 = "node-1", "node-2"
classA, classB = "class-a", "class-b"
driverA, driverB = "driver-a", "driver-b"
pool1, pool2, pool3, pool4 = "pool-1", "pool-2", "pool-3", "pool-4"
req0, req1, req2, req3 = "req-0", "req-1", "req-2", "req-3"
subReq0, subReq1 = "subReq-0", "subReq-1"
req0SubReq0, req0SubReq1 = "req-0/subReq-0", "req-0/subReq-1"
req1SubReq0, req1SubReq1 = "req-1/subReq-0", "req-1/subReq-1"
req2SubReq0, req2SubReq1 = "req-2/subReq-0", "req-2/subReq-1"
claim0, claim1 = "claim-0", "claim-1"
slice1, slice2, slice3, slice4 = "slice-1", "slice-2", "slice-3", "slice-4"
device0, device1, device2, device3, device4 = "device-0", "device-1", "device-2", "device-3", "device-4"
counterSet1, counterSet2 = "counter-set-1", "counter-set-2"
capacity0, capacity1 = "capacity-0", "capacity-1"
fixedShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
zero, one, two, three, four = 0, 1, 2, 3, 4
fieldNameKey, regionKey, planetKey, planetValueEarth = "metadata.name", "region", "planet", "earth"
fromCounters = "fromCounters"
nodeSelectionAll, nodeSelectionPerDevice = "nodeSelectionAll", "nodeSelectionPerDevice"

# TestAllocator's local variables
nonExistentAttribute = driverA + "/NonExistentAttribute"
boolAttribute = driverA + "/boolAttribute"
stringAttribute = driverA + "/stringAttribute"
versionAttribute = driverA + "/driverVersion"
intAttribute = driverA + "/numa"
taintKey, taintValue, taintValue2 = "taint-key", "taint-value", "taint-value-2"
taintNone = {"key": taintKey, "value": taintValue, "effect": "None"}
taintNoSchedule = {"key": taintKey, "value": taintValue, "effect": "NoSchedule"}
taintNoExecute = {"key": taintKey, "value": taintValue2, "effect": "NoExecute"}
tolerationNoSchedule = {"operator": "Exists", "key": taintKey, "effect": "NoSchedule"}
tolerationNoExecute = {"operator": "Equal", "key": taintKey, "value": taintValue2, "effect": "NoExecute"}
tolerationNoScheduleKey1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}

_FEATURE_NAMES = {
    "AdminAccess": "admin_access",
    "PrioritizedList": "prioritized_list",
    "PartitionableDevices": "partitionable_devices",
    "DeviceTaints": "device_taints",
    "DeviceBindingAndStatus": "device_binding_and_status",
    "ConsumableCapacity": "consumable_capacity",
}


def Features(**go: bool) -> _Features:
    """Go's ``Features{...}`` by Go's field names (ListTypeAttributes must be off)."""
    assert not go.pop("ListTypeAttributes", False)
    return _Features(**{_FEATURE_NAMES[k]: v for k, v in go.items()})


def sprintf(fmt: str, *args: Any) -> str:
    """fmt.Sprintf for the verbs the cases use (%s, %d, %v, %q)."""
    out = fmt.replace("%s", "{}").replace("%d", "{}").replace("%q", "{!r}")
    return out.replace("%v", "{}").format(*(str(a).lower() if isinstance(a, bool) else a for a in args))


def setp(obj: dict[str, Any], path: str, value: Any) -> None:
    """``obj.A.B[0].C = value`` (path ``a.b.0.c`` in JSON names), creating missing objects."""
    keys = path.split(".")
    cur: Any = obj
    for k in keys[:-1]:
        cur = cur[int(k)] if k.isdigit() else cur.setdefault(k, {})
    cur[keys[-1]] = value


def incp(obj: dict[str, Any], path: str, delta: Any) -> None:
    """``obj.A.B++`` / ``obj.A.B += delta``."""
    keys = path.split(".")
    cur: Any = obj
    for k in keys[:-1]:
        cur = cur[int(k)] if k.isdigit() else cur[k]
    cur[keys[-1]] = cur.get(keys[-1], 0 if not isinstance(delta, str) else "") + delta


def error(substring: str) -> str:
    """gomega.MatchError(gomega.ContainSubstring(s))."""
    return substring


def sharedID(device_id: tuple[str, str, str], share_id: str | None) -> tuple[str, str, str, str]:
    return (*device_id, share_id or "")


class Obj(dict[str, Any]):
    """An API object with the ``with...`` methods of Go's wrappers (each returns a copy)."""

    def _copy(self) -> Obj:
        return deepcopy(self)

    # wrapResourceClaim
    def withTolerations(self, *tolerations: dict[str, Any]) -> Obj:
        out = self._copy()
        for r in out["spec"]["devices"]["requests"]:
            r["exactly"].setdefault("tolerations", []).extend(deepcopy(list(tolerations)))
        return out

    def withRequests(self, *requests: dict[str, Any]) -> Obj:
        out = self._copy()
        out.setdefault("spec", {}).setdefault("devices", {})["requests"] = deepcopy(list(requests))
        return out

    def withConstraints(self, *constraints: dict[str, Any]) -> Obj:
        out = self._copy()
        out.setdefault("spec", {}).setdefault("devices", {})["constraints"] = list(constraints)
        return out

    def withConfigs(self, configs: list[dict[str, Any]]) -> Obj:
        out = self._copy()
        out.setdefault("spec", {}).setdefault("devices", {})["config"] = deepcopy(configs)
        return out

    # wrapDeviceRequest / wrapDeviceSubRequest
    def withCapacityRequest(self, quantity: Any) -> Obj:
        out = self._copy()
        target = out["exactly"] if "exactly" in out else out
        target["capacity"] = capacityRequests(quantity)
        return out

    def withSelectors(self, *selectors: dict[str, Any]) -> Obj:
        out = self._copy()
        out["exactly"]["selectors"] = list(selectors)
        return out

    def withAllocationMode(self, mode: str) -> Obj:
        out = self._copy()
        out["allocationMode"] = mode
        return out

    # wrapDevice
    def withTaints(self, *taints: dict[str, Any]) -> Obj:
        out = self._copy()
        out.pop("_fromCounters", None)
        out.setdefault("taints", []).extend(deepcopy(list(taints)))
        return out

    def withDeviceCounterConsumption(self, *consumption: dict[str, Any]) -> Obj:
        out = self._copy()
        from_counters = out.pop("_fromCounters", False)
        out.setdefault("consumesCounters", []).extend(deepcopy(list(consumption)))
        if from_counters:
            out["capacity"] = {name: {"value": c["value"]} for dcc in out["consumesCounters"] for name, c in dcc["counters"].items()}
        return out

    def withNodeSelection(self, selection: Any) -> Obj:
        out = self._copy()
        out.pop("_fromCounters", None)
        if isinstance(selection, dict):
            out["nodeSelector"] = selection
        elif selection == nodeSelectionAll:
            out["allNodes"] = True
        else:
            assert selection != nodeSelectionPerDevice
            out["nodeName"] = selection
        return out

    def withBindingConditions(self, conditions: list[str] | None, failure_conditions: list[str] | None) -> Obj:
        out = self._copy()
        out.pop("_fromCounters", None)
        out["bindingConditions"] = conditions
        out["bindingFailureConditions"] = failure_conditions
        return out

    def withBindsToNode(self, binds: bool) -> Obj:
        out = self._copy()
        out.pop("_fromCounters", None)
        out["bindsToNode"] = binds
        return out

    def withAllowMultipleAllocations(self) -> Obj:
        out = self._copy()
        out.pop("_fromCounters", None)
        out["allowMultipleAllocations"] = True
        return out

    def withCapacityRequestPolicyRange(self, capacity: dict[str, Any]) -> Obj:
        out = self._copy()
        out.pop("_fromCounters", None)
        caps = out.setdefault("capacity", {})
        for name, q in capacity.items():
            caps[name] = {"value": q, "requestPolicy": {"default": two, "validRange": {"min": two, "step": two, "max": four}}}
        return out

    def withCapacityRequestPolicyValidValues(self, default: Any, capacity: dict[str, Any], additional: list[Any] | None) -> Obj:
        out = self._copy()
        out.pop("_fromCounters", None)
        caps = out.setdefault("capacity", {})
        for name, q in capacity.items():
            caps[name] = {"value": q, "requestPolicy": {"default": default, "validValues": [default, *(additional or [])]}}
        return out

    # wrapDeviceRequestAllocationResult
    def withConsumedCapacity(self, share_id: str | None, consumed: dict[str, Any] | None) -> Obj:
        out = self._copy()
        if share_id is not None:
            out["shareID"] = share_id
        if consumed:
            out["consumedCapacity"] = dict(consumed)
        return out


def node(name: str, region: str) -> Obj:
    return Obj(metadata={"name": name, "labels": {regionKey: region, planetKey: planetValueEarth}})


def class_(name: str, driver: str) -> Obj:
    return Obj(metadata={"name": name}, spec={"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]})


def classWithAllowMultipleAllocations(name: str, driver: str, multi: bool) -> Obj:
    expr = f'device.driver == "{driver}" && device.allowMultipleAllocations == {str(multi).lower()}'
    return Obj(metadata={"name": name}, spec={"selectors": [{"cel": {"expression": expr}}]})


def deviceConfiguration(driver: str, attribute: str) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def classWithConfig(name: str, driver: str, attribute: str) -> Obj:
    out = class_(name, driver)
    out["spec"]["config"] = [deviceConfiguration(driver, attribute)]
    return out


def claimWithRequests(name: str, constraints: list[dict[str, Any]] | None, *requests: dict[str, Any]) -> Obj:
    devices: dict[str, Any] = {"requests": deepcopy(list(requests))}
    if constraints:
        devices["constraints"] = constraints
    return Obj(metadata={"name": name}, spec={"devices": devices})


def request(name: str, cls: str, count: int, *selectors: dict[str, Any]) -> Obj:
    exactly: dict[str, Any] = {"count": count, "allocationMode": "ExactCount", "deviceClassName": cls}
    if selectors:
        exactly["selectors"] = list(selectors)
    return Obj(name=name, exactly=exactly)


def deviceRequest(name: str, cls: str, count: int) -> Obj:
    return request(name, cls, count)


def allDeviceRequest(name: str, cls: str) -> Obj:
    return Obj(name=name, exactly={"allocationMode": "All", "deviceClassName": cls})


def subRequest(name: str, cls: str, count: int, *fields: dict[str, Any]) -> Obj:
    out = Obj(name=name, count=count, allocationMode="ExactCount", deviceClassName=cls)
    for f in fields:
        out.setdefault("selectors" if "cel" in f else "tolerations", []).append(f)
    return out


def requestWithPrioritizedList(name: str, *subs: dict[str, Any]) -> Obj:
    return Obj(name=name, firstAvailable=deepcopy(list(subs)))


def claimWithRequest(name: str, req: str, cls: str, *constraints: dict[str, Any]) -> Obj:
    return claimWithRequests(name, list(constraints), request(req, cls, 1))


def claim(name: str) -> Obj:
    return Obj(metadata={"name": name})


def claimWithDeviceConfig(name: str, req: str, cls: str, driver: str, attribute: str) -> Obj:
    out = claimWithRequest(name, req, cls)
    out["spec"]["devices"]["config"] = [deviceConfiguration(driver, attribute)]
    return out


def deviceClaimConfig(requests: list[str] | None, config: dict[str, Any]) -> dict[str, Any]:
    return {**({"requests": requests} if requests else {}), **config}


def device(name: str, capacity: Any, attributes: dict[str, Any] | None) -> Obj:
    out = Obj(name=name)
    if attributes:
        out["attributes"] = attributes
    if isinstance(capacity, dict):
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    elif capacity == fromCounters:
        out["_fromCounters"] = True
    else:
        assert capacity is None
    return out


def deviceCounterConsumption(counter_set: str, counters: dict[str, Any]) -> dict[str, Any]:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in (counters or {}).items()}}


def resourcePool(name: str, count: int) -> dict[str, Any]:
    return {"name": name, "resourceSliceCount": count, "generation": 1}


def slice(name: str, selection: Any, pool: Any, driver: str) -> Obj:
    spec: dict[str, Any] = {"driver": driver, "pool": deepcopy(pool) if isinstance(pool, dict) else resourcePool(pool, 1)}
    if isinstance(selection, dict):
        spec["nodeSelector"] = selection
    elif selection == nodeSelectionAll:
        spec["allNodes"] = True
    elif selection == nodeSelectionPerDevice:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = selection
    return Obj(metadata={"name": name}, spec=spec)


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "_fromCounters"}


def sliceWithDevices(name: str, selection: Any, pool: Any, driver: str, *devices: dict[str, Any]) -> Obj:
    out = slice(name, selection, pool, driver)
    if devices:
        out["spec"]["devices"] = [_plain(deepcopy(d)) for d in devices]
    return out


def sliceWithCounterSets(name: str, selection: Any, pool: Any, driver: str, *counter_sets: dict[str, Any]) -> Obj:
    out = slice(name, selection, pool, driver)
    out["spec"]["sharedCounters"] = list(counter_sets)
    return out


def sliceWithNoDevices(name: str, selection: Any, pool: Any, driver: str) -> Obj:
    return sliceWithDevices(name, selection, pool, driver)


def sliceWithOneDevice(name: str, selection: Any, pool: Any, driver: str) -> Obj:
    return sliceWithDevices(name, selection, pool, driver, device(device1, None, None))


def sliceWithMultipleDevices(name: str, selection: Any, pool: Any, driver: str, count: int) -> Obj:
    return sliceWithDevices(name, selection, pool, driver, *(device(f"device-{i}", None, None) for i in range(count)))


def counterSet(name: str, counters: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "counters": {k: {"value": v} for k, v in (counters or {}).items()}}


def deviceAllocationResult(req: str, driver: str, pool: str, dev: str, admin: bool, *tolerations: dict[str, Any]) -> Obj:
    out = Obj(request=req, driver=driver, pool=pool, device=dev)
    if tolerations:
        out["tolerations"] = list(tolerations)
    if admin:
        out["adminAccess"] = True
    return out


def deviceRequestAllocationResult(req: str, driver: str, pool: str, dev: str) -> Obj:
    return Obj(request=req, driver=driver, pool=pool, device=dev)


def deviceRequestAllocationResultWithBindingConditions(
    req: str, driver: str, pool: str, dev: str, conditions: list[str] | None, failure_conditions: list[str] | None, *tolerations: dict[str, Any]
) -> Obj:
    out = Obj(request=req, driver=driver, pool=pool, device=dev)
    if conditions:
        out["bindingConditions"] = conditions
    if failure_conditions:
        out["bindingFailureConditions"] = failure_conditions
    if tolerations:
        out["tolerations"] = list(tolerations)
    return out


def capacityRequests(quantity: Any) -> dict[str, Any]:
    return {"requests": requirements(quantity)}


def requirements(quantity: Any) -> dict[str, Any]:
    return {capacity0: quantity} if quantity is not None else {}


def multipleDeviceAllocationResults(req: str, driver: str, pool: str, count: int, start: int) -> list[Obj]:
    return [deviceAllocationResult(req, driver, pool, f"device-{i}", False) for i in range(start, start + count)]


def nodeLabelSelector(key: str, *values: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def localNodeSelector(name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": fieldNameKey, "operator": "In", "values": [name]}]}]}


def allocationResult(selector: dict[str, Any] | None, *results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"devices": {"results": list(results)}}
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def allocationResultWithConfig(selector: dict[str, Any] | None, driver: str, source: str, attribute: str, *results: dict[str, Any]) -> dict[str, Any]:
    """A plain AllocationResult (Go compares it with DeepEqual: order included): marked ``_exact``."""
    out = allocationResult(selector, *results)
    out["devices"]["config"] = [{"source": source, **deviceConfiguration(driver, attribute)}]
    out[EXACT] = True
    return out


def allocationResultWithConfigs(selector: dict[str, Any] | None, results: list[dict[str, Any]], configs: list[dict[str, Any]]) -> dict[str, Any]:
    out = allocationResult(selector, *results)
    if configs:
        out["devices"]["config"] = configs
    out[EXACT] = True
    return out


def case(**fields: Any) -> dict[str, Any]:
    return fields


# --- comparing results as Go's test does -------------------------------------------------

#: marks an expected AllocationResult that Go compares with DeepEqual (allocationResultWithConfig(s))
EXACT = "_exact"


def _norm_selector(sel: dict[str, Any] | None) -> Any:
    if sel is None:
        return None
    terms = []
    for t in sel.get("nodeSelectorTerms") or []:
        terms.append(
            {
                part: sorted(json.dumps({**r, "values": sorted(r.get("values") or [])}, sort_keys=True) for r in t.get(part) or [])
                for part in ("matchExpressions", "matchFields")
            }
        )
    return sorted(json.dumps(t, sort_keys=True) for t in terms)


def _device_result(r: dict[str, Any]) -> str:
    """One device result as Go's Equal sees it: every field, quantities by their text (Go's
    DeepEqual compares a Quantity's representation), the shareID replaced."""
    r = dict(r)
    if r.get("shareID") is not None:
        r["shareID"] = fixedShareID
    if r.get("consumedCapacity"):
        r["consumedCapacity"] = {k: str(v) for k, v in r["consumedCapacity"].items()}
    return json.dumps(r, sort_keys=True)


def result_matches(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Go's matcher for one expected AllocationResult: DeepEqual for allocationResultWithConfig(s)
    (results, config and node selector in order), else allocationResult's gstruct matcher
    (results in any order, no config, node selector terms, requirements and values in any order,
    no allocationTimestamp)."""
    devices = actual.get("devices") or {}
    want_devices = expected.get("devices") or {}
    got_results = [_device_result(r) for r in devices.get("results") or []]
    want_results = [_device_result(r) for r in want_devices.get("results") or []]
    if expected.get(EXACT):
        rest = {k: v for k, v in actual.items() if k != "devices"}
        want_rest = {k: v for k, v in expected.items() if k not in ("devices", EXACT)}
        other = {k: v for k, v in devices.items() if k != "results"}
        want_other = {k: v for k, v in want_devices.items() if k != "results"}
        return got_results == want_results and other == want_other and rest == want_rest
    return (
        sorted(got_results) == sorted(want_results)
        and not devices.get("config")
        and set(devices) <= {"results", "config"}
        and set(actual) <= {"devices", "nodeSelector"}
        and _norm_selector(actual.get("nodeSelector")) == _norm_selector(expected.get("nodeSelector"))
    )


def consist_of(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> bool:
    """gomega.ConsistOf(expected...): each expected matches a different actual, none left over."""
    if len(actual) != len(expected):
        return False

    def assign(i: int, used: frozenset[int]) -> bool:
        if i == len(expected):
            return True
        return any(j not in used and result_matches(actual[j], expected[i]) and assign(i + 1, used | {j}) for j in range(len(actual)))

    return assign(0, frozenset())
