"""kube-scheduler v1.36.3 dynamicresources_test.go TestPlugin: the 15 extended-resource cases
(DRAExtendedResource, beta and on in 1.36), ids ``GoTestPlugin/<name>``, on the harness of
test_dynamicresources_plugin.py (``run_case``: each point in Go's order, statuses, stored claims,
in-flight claims).

A pod that requests an extended resource a DeviceClass names (``spec.extendedResourceName``, or
the implicit ``deviceclass.resource.kubernetes.io/<class>``) gets a special claim: in memory
from PreFilter on (``<extended-resources>``), with per-node requests from Filter, in flight from
Reserve, created (``generateName: my-pod-extended-resources-``), allocated and reserved in
PreBind. An earlier cycle's claim makes Filter fail and PostFilter delete it.

Differences from Go's test: Go compares an error status by containment (``ErrorContains``) and
expects ``Unschedulable`` where the plugin returns an Error; here the exact code and message
kubesched returns (Go's statusError: Error, with bindClaim's full text) are asserted. Go's
metrics checks (``scheduler_resourceclaim_creates_total``) have no kubesched counterpart. The
pod's ``status.extendedResourceClaimStatus`` written in PreBind is checked as well (kubesched's
addition)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the case objects and the harness beside this file

from dra_plugin_cases import (
    API,
    CLASS_NAME,
    DEVICE_CLASS,
    FINALIZER,
    LARGE_WORKER_NODE_SLICE,
    NAMESPACE,
    NODE2_NAME,
    NODE_NAME,
    POD_NAME,
    POD_UID,
    WORKER_NODE_SLICE,
    add_allocation_timestamp,
    allocation_result,
    dc,
    reserve,
    result,
)
from test_dynamicresources_plugin import Case, R, run_case

from kubesched.sdk import Code, Status

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
E = Code.ERROR
Obj = dict[str, Any]

EXTENDED_RESOURCE_NAME = "example.com/gpu"
EXTENDED_RESOURCE_NAME2 = "example.com/gpu2"
IMPLICIT_EXTENDED_RESOURCE_NAME = "deviceclass.resource.kubernetes.io/my-resource-class"
SPECIAL = "<extended-resources>"
GENERATED = "my-pod-extended-resources-0"


def _class(name: str, extended_resource_name: str) -> Obj:
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"extendedResourceName": extended_resource_name}}


DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME = _class(CLASS_NAME, EXTENDED_RESOURCE_NAME)
DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME2 = _class(CLASS_NAME + "2", EXTENDED_RESOURCE_NAME2)


def _pod(*containers: dict[str, str], name: str = POD_NAME, uid: str = POD_UID) -> Obj:
    """st.MakePod().Req(...) per container (con0, con1, ...)."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE, "uid": uid},
            "spec": {"containers": [{"name": f"con{i}", "image": "pause", "resources": {"requests": dict(r)}}
                                    for i, r in enumerate(containers)]}}


POD_WITH_EXTENDED_RESOURCE_NAME = _pod({EXTENDED_RESOURCE_NAME: "1"})
POD_WITH_EXTENDED_RESOURCE_NAME2 = _pod({EXTENDED_RESOURCE_NAME: "1", EXTENDED_RESOURCE_NAME2: "1"})
POD_WITH_IMPLICIT_EXTENDED_RESOURCE_NAME = _pod({IMPLICIT_EXTENDED_RESOURCE_NAME: "1", EXTENDED_RESOURCE_NAME: "2"})
POD_WITH_IMPLICIT_EXTENDED_RESOURCE_NAME_TWO_CONTAINERS = _pod(
    {IMPLICIT_EXTENDED_RESOURCE_NAME: "1"}, {EXTENDED_RESOURCE_NAME: "2"}
)


def _node(**extended: str) -> Obj:
    """st.MakeNode().Name(nodeName).Label(hostname).Capacity(...): capacity = allocatable."""
    res = {"pods": "32", **{k.replace("_", "."): v for k, v in extended.items()}}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": NODE_NAME, "labels": {"kubernetes.io/hostname": NODE_NAME}},
            "status": {"capacity": dict(res), "allocatable": dict(res)}}


WORKER_NODE_WITH_EXTENDED_RESOURCE = _node(**{"example_com/gpu": "1"})
WORKER_NODE_WITH_EXTENDED_RESOURCE_ZERO_ALLOCATABLE = _node(**{"example_com/gpu": "0"})


def _extended_claim(name: str, requests: list[tuple[str, str, int]], allocation: Obj) -> Obj:
    """st.MakeResourceClaim() of the extended-resource claims: RequestWithName(Count) per
    request, Allocation (the finalizer too)."""
    return {
        "apiVersion": API, "kind": "ResourceClaim",
        "metadata": {
            "name": name, "generateName": "my-pod-extended-resources-", "namespace": NAMESPACE,
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID, "controller": True}],
            "finalizers": [FINALIZER],
        },
        "spec": {"devices": {"requests": [
            {"name": r, "exactly": {"allocationMode": "ExactCount", "count": n, "deviceClassName": cls}}
            for r, cls, n in requests]}},
        "status": {"allocation": dc(allocation)},
    }


EXTENDED_ALLOCATION = allocation_result(result("container-0-request-0"))
EXTENDED_ALLOCATION2 = allocation_result(result("container-0-request-1"))
IMPLICIT_ALLOCATION = allocation_result(
    result("container-0-request-0"), result("container-0-request-1", "instance-2"),
    result("container-0-request-1", "instance-3"),
)
IMPLICIT_ALLOCATION_TWO_CONTAINERS = allocation_result(
    result("container-0-request-0"), result("container-1-request-0", "instance-2"),
    result("container-1-request-0", "instance-3"),
)
EXTENDED_ALLOCATION_NODE2 = allocation_result(result("container-0-request-0"), node_name=NODE2_NAME)

ONE = [("container-0-request-0", CLASS_NAME, 1)]
EXTENDED_RESOURCE_CLAIM = _extended_claim(GENERATED, ONE, EXTENDED_ALLOCATION)
EXTENDED_RESOURCE_CLAIM_NO_NAME = _extended_claim(SPECIAL, ONE, EXTENDED_ALLOCATION)
TWO = [("container-0-request-1", CLASS_NAME + "2", 1)]
EXTENDED_RESOURCE_CLAIM2 = _extended_claim(GENERATED, TWO, EXTENDED_ALLOCATION2)
EXTENDED_RESOURCE_CLAIM_NO_NAME2 = _extended_claim(SPECIAL, TWO, EXTENDED_ALLOCATION2)
IMPLICIT = [("container-0-request-0", CLASS_NAME, 1), ("container-0-request-1", CLASS_NAME, 2)]
IMPLICIT_EXTENDED_RESOURCE_CLAIM = _extended_claim(GENERATED, IMPLICIT, IMPLICIT_ALLOCATION)
IMPLICIT_EXTENDED_RESOURCE_CLAIM_NO_NAME = _extended_claim(SPECIAL, IMPLICIT, IMPLICIT_ALLOCATION)
IMPLICIT2 = [("container-0-request-0", CLASS_NAME, 1), ("container-1-request-0", CLASS_NAME, 2)]
IMPLICIT_EXTENDED_RESOURCE_CLAIM_TWO_CONTAINERS = _extended_claim(GENERATED, IMPLICIT2, IMPLICIT_ALLOCATION_TWO_CONTAINERS)
IMPLICIT_EXTENDED_RESOURCE_CLAIM_NO_NAME_TWO_CONTAINERS = _extended_claim(SPECIAL, IMPLICIT2, IMPLICIT_ALLOCATION_TWO_CONTAINERS)
EXTENDED_RESOURCE_CLAIM_NODE2 = _extended_claim(GENERATED, ONE, EXTENDED_ALLOCATION_NODE2)


def _bound(claim: Obj) -> Obj:
    """addAllocationTimestamp(reserve(claim, pod))."""
    return add_allocation_timestamp(reserve(claim))


def _pod_status(*mappings: tuple[str, str, str]) -> Obj:
    """The pod's status.extendedResourceClaimStatus after PreBind."""
    return {"extendedResourceClaimStatus": {
        "requestMappings": [{"containerName": c, "resourceName": r, "requestName": q} for c, r, q in mappings],
        "resourceClaimName": GENERATED,
    }}


CASES: dict[str, Case] = {
    "empty-with-extended-resources-enabled": Case(
        extended=True,
        pod={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "namespace": NAMESPACE, "uid": "foo"},
             "spec": {"containers": [{"name": "c", "image": "x"}]}},
        prefilter=R((Code.SKIP, "")),
        postfilter=R((U, "no new claims to deallocate")),
        prebind_preflight=(Code.SKIP, ""),
    ),
    "extended-resource-name-with-node-resource": Case(
        extended=True, nodes=[WORKER_NODE_WITH_EXTENDED_RESOURCE], pod=POD_WITH_EXTENDED_RESOURCE_NAME,
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME],
    ),
    "extended-resource-one-device-plugin-one-dra": Case(
        extended=True, nodes=[WORKER_NODE_WITH_EXTENDED_RESOURCE], pod=POD_WITH_EXTENDED_RESOURCE_NAME2,
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME, DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME2],
        objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME2],
        reserve=R(in_flight=[EXTENDED_RESOURCE_CLAIM_NO_NAME2]),
        prebind=R(added=[_bound(EXTENDED_RESOURCE_CLAIM2)],
                  pod_status=_pod_status(("con0", EXTENDED_RESOURCE_NAME2, "container-0-request-1"))),
    ),
    "extended-resource-name-with-zero-allocatable": Case(
        extended=True, nodes=[WORKER_NODE_WITH_EXTENDED_RESOURCE_ZERO_ALLOCATABLE], pod=POD_WITH_EXTENDED_RESOURCE_NAME,
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME], objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        reserve=R(in_flight=[EXTENDED_RESOURCE_CLAIM_NO_NAME]),
        prebind=R(added=[_bound(EXTENDED_RESOURCE_CLAIM)],
                  pod_status=_pod_status(("con0", EXTENDED_RESOURCE_NAME, "container-0-request-0"))),
    ),
    "non-DRA-extended-resource-name-with-zero-allocatable": Case(
        extended=True, nodes=[WORKER_NODE_WITH_EXTENDED_RESOURCE_ZERO_ALLOCATABLE], pod=POD_WITH_EXTENDED_RESOURCE_NAME,
        classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        prefilter=R((Code.SKIP, "")),
        prebind_preflight=(Code.SKIP, ""),
    ),
    "extended-resource-name-no-resource": Case(
        extended=True, pod=POD_WITH_EXTENDED_RESOURCE_NAME, classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME],
        filter={NODE_NAME: R((UU, "cannot allocate all claims"))},
        postfilter=R((U, "still not schedulable")),
    ),
    "extended-resource-name-with-resources": Case(
        extended=True, pod=POD_WITH_EXTENDED_RESOURCE_NAME, classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME],
        objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        reserve=R(in_flight=[EXTENDED_RESOURCE_CLAIM_NO_NAME]),
        prebind=R(added=[_bound(EXTENDED_RESOURCE_CLAIM)],
                  pod_status=_pod_status(("con0", EXTENDED_RESOURCE_NAME, "container-0-request-0"))),
    ),
    "implicit-extended-resource-name-with-resources": Case(
        extended=True, pod=POD_WITH_IMPLICIT_EXTENDED_RESOURCE_NAME, classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME],
        objs=[LARGE_WORKER_NODE_SLICE, POD_WITH_IMPLICIT_EXTENDED_RESOURCE_NAME],
        reserve=R(in_flight=[IMPLICIT_EXTENDED_RESOURCE_CLAIM_NO_NAME]),
        prebind=R(added=[_bound(IMPLICIT_EXTENDED_RESOURCE_CLAIM)],
                  pod_status=_pod_status(("con0", IMPLICIT_EXTENDED_RESOURCE_NAME, "container-0-request-0"),
                                         ("con0", EXTENDED_RESOURCE_NAME, "container-0-request-1"))),
    ),
    "implicit-extended-resource-name-two-containers-with-resources": Case(
        extended=True, pod=POD_WITH_IMPLICIT_EXTENDED_RESOURCE_NAME_TWO_CONTAINERS,
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME],
        objs=[LARGE_WORKER_NODE_SLICE, POD_WITH_IMPLICIT_EXTENDED_RESOURCE_NAME_TWO_CONTAINERS],
        reserve=R(in_flight=[IMPLICIT_EXTENDED_RESOURCE_CLAIM_NO_NAME_TWO_CONTAINERS]),
        prebind=R(added=[_bound(IMPLICIT_EXTENDED_RESOURCE_CLAIM_TWO_CONTAINERS)],
                  pod_status=_pod_status(("con0", IMPLICIT_EXTENDED_RESOURCE_NAME, "container-0-request-0"),
                                         ("con1", EXTENDED_RESOURCE_NAME, "container-1-request-0"))),
    ),
    "extended-resource-name-with-resources-fail-patch": Case(
        extended=True, fail_patch=True, pod=POD_WITH_EXTENDED_RESOURCE_NAME,
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME], objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        reserve=R(in_flight=[EXTENDED_RESOURCE_CLAIM_NO_NAME]),
        prebind=R((E, "update pod default/my-pod ExtendedResourceClaimStatus: patch error"),
                  added=[_bound(EXTENDED_RESOURCE_CLAIM)], pod_status={}),
    ),
    "extended-resource-name-with-resources-has-claim": Case(
        extended=True, pod=POD_WITH_EXTENDED_RESOURCE_NAME, claims=[EXTENDED_RESOURCE_CLAIM],
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME], objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        filter={NODE_NAME: R((UU, "cannot schedule extended resource claim"))},
        postfilter=R((U, "deletion of ResourceClaim completed"), removed=[GENERATED]),
    ),
    "extended-resource-name-with-resources-delete-claim": Case(
        extended=True, pod=POD_WITH_EXTENDED_RESOURCE_NAME, claims=[EXTENDED_RESOURCE_CLAIM_NODE2],
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME], objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        filter={NODE_NAME: R((UU, "cannot schedule extended resource claim"))},
        postfilter=R((U, "deletion of ResourceClaim completed"), removed=[GENERATED]),
    ),
    "extended-resource-name-bind-failure": Case(
        extended=True, pod=POD_WITH_EXTENDED_RESOURCE_NAME, classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME],
        objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        reserve=R(in_flight=[EXTENDED_RESOURCE_CLAIM_NO_NAME]),
        prebind=R(added=[_bound(EXTENDED_RESOURCE_CLAIM)]),
        unreserve_after_bind_failure=R(removed=[GENERATED]),
    ),
    "extended-resource-name-skip-bind": Case(
        extended=True, pod=POD_WITH_EXTENDED_RESOURCE_NAME, classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME],
        objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        reserve=R(in_flight=[EXTENDED_RESOURCE_CLAIM_NO_NAME]),
        unreserve_before_prebind=R(),
    ),
    "extended-resource-name-claim-creation-failure": Case(
        extended=True, fail_create="claim creation errors", pod=POD_WITH_EXTENDED_RESOURCE_NAME,
        classes=[DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME], objs=[WORKER_NODE_SLICE, POD_WITH_EXTENDED_RESOURCE_NAME],
        reserve=R(in_flight=[EXTENDED_RESOURCE_CLAIM_NO_NAME]),
        prebind=R((E, "create claim for extended resources default/: claim creation errors"), pod_status={}),
        unreserve_after_bind_failure=R(),
    ),
}


@pytest.mark.parametrize("name", list(CASES), ids=[f"GoTestPlugin/{n}" for n in CASES])
def test_plugin_extended_resources(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(CASES[name], monkeypatch)


def test_column_forms_decline_pods_whose_extended_resources_a_device_class_serves() -> None:
    """A pod without claims whose extended resource a DeviceClass names is filtered and scored
    node by node (its special claim); one whose extended resources no class names keeps the
    zero columns, as does every pod when no DeviceClass names any resource."""
    import numpy as np

    from kubesched.runtime.plugins.dynamicresources import DynamicResources
    from kubesched.sdk import CycleState, Pod
    from kubesched.testing import make_handle

    served = Pod(POD_WITH_EXTENDED_RESOURCE_NAME)
    other = Pod(_pod({"example.com/fpga": "1"}))
    handle = make_handle([WORKER_NODE_WITH_EXTENDED_RESOURCE_ZERO_ALLOCATABLE], objects=[DEVICE_CLASS])
    pl = DynamicResources(handle=handle)
    columns = handle.snapshot().columns
    rows = np.arange(1)
    for p in (served, other):
        state = CycleState()
        assert pl.pre_filter(state, p) == Status.skip()
        assert pl.filter_columns(state, columns)[0].tolist() == [0]
        assert pl.score_columns(state, rows).tolist() == [0]
        assert pl.normalize_score_columns(state, np.array([0], np.int64)).tolist() == [0]

    handle.objects.create(dc(DEVICE_CLASS_WITH_EXTENDED_RESOURCE_NAME2))
    handle.objects.create(dc(_class("fast-gpu", EXTENDED_RESOURCE_NAME)))
    state = CycleState()
    assert pl.pre_filter(state, served) is None  # the special claim is in the state
    assert pl.filter_columns(state, columns) is None
    assert pl.score_columns(state, rows) is None
    assert pl.normalize_score_columns(state, np.array([3, 6], np.int64)).tolist() == [50, 100]
    # the decision is PreFilter's: a DeviceClass deleted mid-cycle does not send the pod back to
    # the zero columns while its state holds the special claim (Go reads the state as well)
    for o in handle.objects.list("resource.k8s.io/v1", "DeviceClass"):
        handle.objects.delete("resource.k8s.io/v1", "DeviceClass", o["metadata"]["name"])
    assert pl.filter_columns(state, columns) is None
    other_state = CycleState()
    assert pl.pre_filter(other_state, other) == Status.skip()
    assert pl.filter_columns(other_state, columns)[0].tolist() == [0]
    assert pl.score_columns(other_state, rows).tolist() == [0]
