"""The objects of kube-scheduler v1.36.3's dynamicresources_test.go (its package variables and
the st wrappers it builds them with), as API dicts, for test_dynamicresources_plugin.py."""

from __future__ import annotations

import copy
from typing import Any

NODE_NAME = "worker"
NODE2_NAME = "worker-2"
NODE3_NAME = "worker-3"
DRIVER = "some-driver"
DRIVER2 = "some-driver-2"
POD_NAME = "my-pod"
POD_UID = "1234"
POD_GROUP_NAME = "my-podgroup"
RESOURCE_NAME = "my-resource"
RESOURCE_NAME2 = RESOURCE_NAME + "-2"
CLAIM_NAME = POD_NAME + "-" + RESOURCE_NAME
CLAIM_NAME2 = POD_NAME + "-" + RESOURCE_NAME2
CLASS_NAME = "my-resource-class"
NAMESPACE = "default"
ATTR_NAME = "healthy"
FINALIZER = "resource.kubernetes.io/delete-protection"
API = "resource.k8s.io/v1"

Obj = dict[str, Any]


def dc(o: Any) -> Any:
    return copy.deepcopy(o)


# --- nodes and slices ---------------------------------------------------------------------------


def node(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "pods": "110"}}}


def device(name: str, attributes: dict[str, Any] | None = None) -> Obj:
    d: Obj = {"name": name}
    if attributes is not None:
        d["attributes"] = attributes
    return d


def make_slice(node_name: str, driver: str, *devices: Obj) -> Obj:
    """st.MakeResourceSlice(nodeName, driver).Device(...)."""
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{driver}"},
            "spec": {"nodeName": node_name, "pool": {"name": node_name, "resourceSliceCount": 1, "generation": 0},
                     "driver": driver, "devices": list(devices)}}


WORKER_NODE = node(NODE_NAME)
WORKER_NODE2 = node(NODE2_NAME)
WORKER_NODE3 = node(NODE3_NAME)
WORKER_NODE_SLICE = make_slice(NODE_NAME, DRIVER, device("instance-1"))
LARGE_WORKER_NODE_SLICE = make_slice(NODE_NAME, DRIVER, *(device(f"instance-{i}") for i in range(1, 5)))
WORKER_NODE2_SLICE = make_slice(NODE2_NAME, DRIVER, device("instance-1", {ATTR_NAME: {"bool": True}}))
WORKER_NODE3_SLICE = make_slice(NODE3_NAME, DRIVER, device("instance-1", {ATTR_NAME: {"bool": True}}))
BROKEN_SELECTOR = {"cel": {"expression": f'device.attributes["{DRIVER}"].{ATTR_NAME}'}}

DEVICE_TAINT = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
BINDING_CONDITIONS = ["condition"]
BINDING_FAILURE_CONDITIONS = ["failed"]


def taint_devices(s: Obj) -> Obj:
    s = dc(s)
    for d in s["spec"]["devices"]:
        d.setdefault("taints", []).append(dict(DEVICE_TAINT))
    return s


def _fabric(driver: str, dev: str) -> Obj:
    s = make_slice(NODE_NAME, driver, device(dev))
    d = s["spec"]["devices"][0]
    d["bindsToNode"] = True
    d["bindingConditions"] = list(BINDING_CONDITIONS)
    d["bindingFailureConditions"] = list(BINDING_FAILURE_CONDITIONS)
    s["spec"]["nodeSelector"] = name_selector(NODE_NAME)
    return s


def name_selector(node_name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


FABRIC_SLICE = _fabric(DRIVER, "instance-1")
FABRIC_SLICE2 = _fabric(DRIVER2, "instance-2")

# --- classes --------------------------------------------------------------------------------------

DEVICE_CLASS: Obj = {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": CLASS_NAME}, "spec": {}}


def break_cel_in_class(cls: Obj) -> Obj:
    cls = dc(cls)
    cls["spec"]["selectors"] = [dict(BROKEN_SELECTOR)]
    return cls


# --- pods -----------------------------------------------------------------------------------------


def pod(*claims: Obj, statuses: list[Obj] | None = None, name: str = POD_NAME, uid: str = POD_UID, group: bool = False) -> Obj:
    p: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE, "uid": uid},
              "spec": {"containers": [{"name": "c", "image": "x"}], "resourceClaims": list(claims)}}
    if group:
        p["spec"]["schedulingGroup"] = {"podGroupName": POD_GROUP_NAME}
    if statuses is not None:
        p["status"] = {"resourceClaimStatuses": statuses}
    return p


POD_WITH_CLAIM_NAME = pod({"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME})
POD_WITH_CLAIM_TEMPLATE = pod({"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME})
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = pod(
    {"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME},
    statuses=[{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}],
)
POD_WITH_TWO_CLAIM_TEMPLATES = pod(
    {"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME},
    {"name": RESOURCE_NAME2, "resourceClaimTemplateName": CLAIM_NAME},
)
POD_WITH_TWO_CLAIM_NAMES = pod(
    {"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}, {"name": RESOURCE_NAME2, "resourceClaimName": CLAIM_NAME2}
)
GROUPED_POD_WITH_CLAIM_NAME = pod({"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}, group=True)

# --- claims ---------------------------------------------------------------------------------------


def claim(name: str = CLAIM_NAME, *requests: Obj) -> Obj:
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"devices": {"requests": list(requests) or [request(1)]}}}


def request(n: int, class_name: str = CLASS_NAME) -> Obj:
    """st's Request(className): req-N, ExactCount 1."""
    return {"name": f"req-{n}", "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": class_name}}


def sub_request(name: str, count: int, selector: str | None = None) -> Obj:
    r: Obj = {"name": name, "allocationMode": "ExactCount", "count": count, "deviceClassName": CLASS_NAME}
    if selector is not None:
        r["selectors"] = [{"cel": {"expression": selector}}]
    return r


def prioritized(n: int, *subs: Obj) -> Obj:
    return {"name": f"req-{n}", "firstAvailable": list(subs)}


def owned(c: Obj, owner: str = POD_NAME, uid: str = POD_UID, kind: str = "Pod", api_version: str = "v1") -> Obj:
    c = dc(c)
    c["metadata"]["ownerReferences"] = [{"apiVersion": api_version, "kind": kind, "name": owner, "uid": uid, "controller": True}]
    return c


def allocation_result(*results: Obj, node_name: str = NODE_NAME, selector: Obj | None = None) -> Obj:
    return {"devices": {"results": list(results)}, "nodeSelector": selector if selector is not None else name_selector(node_name)}


def result(request_name: str, dev: str = "instance-1", driver: str = DRIVER, **extra: Any) -> Obj:
    return {"driver": driver, "pool": NODE_NAME, "device": dev, "request": request_name, **extra}


def allocated(c: Obj, allocation: Obj | None) -> Obj:
    """st's Allocation(): the finalizer and the allocation (nil: none)."""
    c = dc(c)
    fin = c["metadata"].setdefault("finalizers", [])
    if FINALIZER not in fin:
        fin.append(FINALIZER)
    status = c.setdefault("status", {})
    if allocation is None:
        status.pop("allocation", None)
    else:
        status["allocation"] = dc(allocation)
    return c


def deallocated(c: Obj) -> Obj:
    c = dc(c)
    c.setdefault("status", {}).pop("allocation", None)
    c["status"].pop("devices", None)
    return c


def reserve(c: Obj, name: str = POD_NAME, uid: str = POD_UID) -> Obj:
    c = dc(c)
    c.setdefault("status", {})["reservedFor"] = [{"resource": "pods", "name": name, "uid": uid}]
    return c


def add_allocation_timestamp(c: Obj) -> Obj:
    c = dc(c)
    c["status"]["allocation"]["allocationTimestamp"] = "T"
    return c


def admin_access(c: Obj) -> Obj:
    c = dc(c)
    for r in c["spec"]["devices"]["requests"]:
        r["exactly"]["adminAccess"] = True
    alloc = (c.get("status") or {}).get("allocation")
    if alloc is not None:
        for r in alloc["devices"]["results"]:
            r["adminAccess"] = True
    return c


def break_cel_in_claim(c: Obj) -> Obj:
    c = dc(c)
    for r in c["spec"]["devices"]["requests"]:
        r["exactly"]["selectors"] = [dict(BROKEN_SELECTOR)]
    return c


def update_device_class_name(c: Obj, class_name: str) -> Obj:
    c = dc(c)
    for r in c["spec"]["devices"]["requests"]:
        if r.get("firstAvailable"):
            for s in r["firstAvailable"]:
                s["deviceClassName"] = class_name
        else:
            r["exactly"]["deviceClassName"] = class_name
    return c


def with_device_statuses(c: Obj, *statuses: Obj) -> Obj:
    c = dc(c)
    c["status"]["devices"] = list(statuses)
    return c


def device_status(driver: str, dev: str, *conditions: tuple[str, str]) -> Obj:
    d: Obj = {"driver": driver, "pool": NODE_NAME, "device": dev}
    if conditions:
        d["conditions"] = [{"type": t, "status": s} for t, s in conditions]
    return d


CLAIM = claim()
LARGE_CLAIM = claim(CLAIM_NAME, *(request(i) for i in range(1, 6)))
CLAIM2 = claim(CLAIM_NAME2)
CLAIM_WITH_PRIORITIZED_LIST = claim(CLAIM_NAME, prioritized(1, sub_request("subreq-1", 1)))
CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR = claim(
    CLAIM_NAME, prioritized(1, sub_request("subreq-1", 1, f'device.attributes["{DRIVER}"].{ATTR_NAME}'), sub_request("subreq-2", 1))
)
CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = claim(
    CLAIM_NAME,
    prioritized(1, sub_request("subreq-1", 2), sub_request("subreq-2", 1)),
    prioritized(2, sub_request("subreq-1", 2), sub_request("subreq-2", 1)),
)
CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = claim(
    CLAIM_NAME2, prioritized(1, *(sub_request(f"subreq-{i}", 5 - i) for i in range(1, 5)))
)

PENDING_CLAIM = owned(CLAIM)
PENDING_CLAIM2 = owned(CLAIM2)
PENDING_POD_GROUP_CLAIM = owned(CLAIM, POD_GROUP_NAME, "5678", "PodGroup", "scheduling.k8s.io/v1alpha2")
PENDING_CLAIM_WITH_PRIORITIZED_LIST = owned(CLAIM_WITH_PRIORITIZED_LIST)
PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR = owned(CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR)
PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = owned(CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS)
PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = owned(CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS)

ALLOCATION_RESULT = allocation_result(result("req-1"))
ALLOCATION_RESULT2 = allocation_result(result("req-2", "instance-2", DRIVER2))
ALLOCATION_RESULT_WITH_PRIORITIZED_LIST = allocation_result(result("req-1/subreq-1"))
ALLOCATION_RESULT_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = allocation_result(
    *(result("req-1/subreq-2", f"instance-{i}") for i in (1, 2, 3))
)
ALLOCATION_RESULT_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = allocation_result(
    result("req-1/subreq-1", "instance-1"), result("req-1/subreq-1", "instance-2"),
    result("req-2/subreq-1", "instance-1"), result("req-2/subreq-1", "instance-2"),
)
ALLOCATION_RESULT_WITH_BINDING_CONDITIONS = {
    **allocation_result(result("req-1", bindingConditions=BINDING_CONDITIONS, bindingFailureConditions=BINDING_FAILURE_CONDITIONS)),
    "allocationTimestamp": "T",
}
ALLOCATION_RESULT_WITH_BINDING_CONDITIONS2 = {
    **allocation_result(result("req-2", "instance-2", DRIVER2, bindingConditions=BINDING_CONDITIONS,
                               bindingFailureConditions=BINDING_FAILURE_CONDITIONS)),
    "allocationTimestamp": "T",
}

IN_USE_CLAIM = reserve(allocated(PENDING_CLAIM, ALLOCATION_RESULT))
IN_USE_CLAIM_WITH_PRIORITIZED_LIST = reserve(allocated(PENDING_CLAIM_WITH_PRIORITIZED_LIST, ALLOCATION_RESULT_WITH_PRIORITIZED_LIST))
ALLOCATED_CLAIM = allocated(PENDING_CLAIM, ALLOCATION_RESULT)
ALLOCATED_CLAIM2 = allocated(PENDING_CLAIM2, ALLOCATION_RESULT2)
ALLOCATED_POD_GROUP_CLAIM = allocated(PENDING_POD_GROUP_CLAIM, ALLOCATION_RESULT)
ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST = allocated(PENDING_CLAIM_WITH_PRIORITIZED_LIST, ALLOCATION_RESULT_WITH_PRIORITIZED_LIST)
ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR = allocated(
    PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR, ALLOCATION_RESULT_WITH_PRIORITIZED_LIST
)
ALLOCATED_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = allocated(
    PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS, ALLOCATION_RESULT_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS
)
ALLOCATED_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = allocated(
    PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS, ALLOCATION_RESULT_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS
)
ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY = allocated(ALLOCATED_CLAIM, {
    "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]},
})
ALLOCATED_POD_GROUP_CLAIM_WITH_WRONG_TOPOLOGY = {
    **allocated(ALLOCATED_POD_GROUP_CLAIM, ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY["status"]["allocation"]),
}
ALLOCATED_POD_GROUP_CLAIM_WITH_WRONG_TOPOLOGY["status"]["reservedFor"] = [
    {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": POD_GROUP_NAME, "uid": "5678"}
]
ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY = allocated(ALLOCATED_CLAIM, {
    "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE_NAME]}]}]},
})
OTHER_CLAIM = claim("not-my-claim")
OTHER_ALLOCATED_CLAIM = allocated(OTHER_CLAIM, ALLOCATION_RESULT)
OTHER_ALLOCATED_CLAIM_OTHER_DEVICE = dc(OTHER_ALLOCATED_CLAIM)
OTHER_ALLOCATED_CLAIM_OTHER_DEVICE["status"]["allocation"]["devices"]["results"][0]["device"] += "-other"

BIND_CLAIM = allocated(ALLOCATED_CLAIM, ALLOCATION_RESULT_WITH_BINDING_CONDITIONS)
BOUND_CLAIM = with_device_statuses(BIND_CLAIM, device_status(DRIVER, "instance-1", ("condition", "True"), ("failed", "False")))
BOUND_CLAIM2 = with_device_statuses(
    allocated(ALLOCATED_CLAIM2, ALLOCATION_RESULT_WITH_BINDING_CONDITIONS2),
    device_status(DRIVER2, "instance-2", ("condition", "True"), ("failed", "False")),
)
FAILED_BINDING_CLAIM = with_device_statuses(BIND_CLAIM, device_status(DRIVER, "instance-1", ("condition", "False"), ("failed", "True")))
FAILED_BINDING_CLAIM2 = with_device_statuses(
    allocated(ALLOCATED_CLAIM2, ALLOCATION_RESULT_WITH_BINDING_CONDITIONS2),
    device_status(DRIVER2, "instance-2", ("condition", "False"), ("failed", "True")),
)
