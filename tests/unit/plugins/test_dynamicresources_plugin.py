"""kube-scheduler v1.36.3 dynamicresources_test.go TestPlugin, transcribed: each case runs the
plugin's points in Go's order (PreEnqueue, PreFilter, Filter per node, Score/NormalizeScore with
two or more feasible nodes, Reserve, Unreserve or PreBindPreFlight/PreBind, PostFilter when no
node fits) on the simulated cluster's object store as ``handle.objects``, and checks each step's
status (code and message), the stored claims (ignoring UID, resourceVersion, the device picked,
shareID and the allocationTimestamp's value, as Go's test does) and the in-flight claims.

The extended-resource cases (DRAExtendedResource) run on this harness
(``run_case``) in test_dynamicresources_extended_plugin.py. Out of scope:
PodGroup claims with DRAWorkloadResourceClaims on and node-allocatable resources (alpha, off in
1.36), ``DRA-disabled`` (the plugin is always on), ``canceled`` (kubesched's Filter has no
cancellable context) and the binding-conditions metrics."""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the case objects beside this file

from dra_plugin_cases import (
    ALLOCATED_CLAIM,
    ALLOCATED_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS,
    ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY,
    ALLOCATED_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS,
    ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST,
    ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR,
    ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY,
    ALLOCATED_POD_GROUP_CLAIM,
    ALLOCATED_POD_GROUP_CLAIM_WITH_WRONG_TOPOLOGY,
    ALLOCATION_RESULT_WITH_BINDING_CONDITIONS,
    ATTR_NAME,
    BIND_CLAIM,
    BOUND_CLAIM,
    BOUND_CLAIM2,
    CLAIM,
    CLAIM_NAME,
    CLAIM_NAME2,
    CLAIM_WITH_PRIORITIZED_LIST,
    DEVICE_CLASS,
    DRIVER,
    FABRIC_SLICE,
    FABRIC_SLICE2,
    FAILED_BINDING_CLAIM,
    FAILED_BINDING_CLAIM2,
    GROUPED_POD_WITH_CLAIM_NAME,
    LARGE_CLAIM,
    LARGE_WORKER_NODE_SLICE,
    NODE2_NAME,
    NODE3_NAME,
    NODE_NAME,
    OTHER_ALLOCATED_CLAIM,
    OTHER_ALLOCATED_CLAIM_OTHER_DEVICE,
    OTHER_CLAIM,
    PENDING_CLAIM,
    PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS,
    PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS,
    PENDING_CLAIM_WITH_PRIORITIZED_LIST,
    PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR,
    PENDING_POD_GROUP_CLAIM,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    POD_WITH_TWO_CLAIM_NAMES,
    WORKER_NODE,
    WORKER_NODE2,
    WORKER_NODE2_SLICE,
    WORKER_NODE3,
    WORKER_NODE3_SLICE,
    WORKER_NODE_SLICE,
    add_allocation_timestamp,
    admin_access,
    allocated,
    break_cel_in_claim,
    break_cel_in_class,
    dc,
    deallocated,
    device,
    device_status,
    make_slice,
    pod,
    reserve,
    taint_devices,
    update_device_class_name,
    with_device_statuses,
)

from kubesched.runtime.plugins.dynamicresources import (
    DynamicResources,
    DynamicResourcesArgs,
    SchedulerFeatures,
)
from kubesched.runtime.plugins.dynamicresources import binding as binding_mod
from kubesched.runtime.timefmt import rfc3339
from kubesched.sdk import Code, CycleState, Node, NodeInfo, NodeScore, Pod, Status
from kubesched.testing import make_handle

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
E = Code.ERROR
Obj = dict[str, Any]
Change = Callable[[Obj], Obj]


@dataclass
class R:
    """Go's ``result``: the status, the changes to the stored claims, the in-flight claims."""

    status: tuple[Code, str] | None = None
    changes: Change | None = None
    in_flight: list[Obj] = field(default_factory=list)
    #: claims created (``added``) and deleted (``removed``, by name) in this step
    added: list[Obj] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: the stored pod's ``status`` afterwards (kubesched's check; Go's cases here set none)
    pod_status: Obj | None = None


@dataclass
class Case:
    pod: Obj
    claims: list[Obj] = field(default_factory=list)
    classes: list[Obj] = field(default_factory=list)
    objs: list[Obj] = field(default_factory=list)
    nodes: list[Obj] | None = None
    in_flight: list[Obj] = field(default_factory=list)
    args: dict[str, str] | None = None
    prio: bool = False
    taints: bool = False
    disable_admin_access: bool = False
    disable_binding_conditions: bool = False
    disable_filter_timeout: bool = False
    prepare_prebind: Change | None = None
    preenqueue: R = field(default_factory=R)
    prefilter: R = field(default_factory=R)
    filter: dict[str, R] = field(default_factory=dict)
    score_result: dict[str, int] = field(default_factory=dict)
    normalize_result: list[tuple[str, int]] | None = None
    reserve: R = field(default_factory=R)
    prebind_preflight: tuple[Code, str] | None = None
    prebind: R = field(default_factory=R)
    postfilter: R = field(default_factory=R)
    unreserve_after_bind_failure: R | None = None
    unreserve_before_prebind: R | None = None
    #: called with the handle's clock time to build claims that depend on "now"
    patch: Callable[[Case, float], None] | None = None
    #: DRAExtendedResource on (test_dynamicresources_extended_plugin.py)
    extended: bool = False
    #: Go's failPatch: every patch of a Pod fails with "patch error"
    fail_patch: bool = False
    #: Go's reactor on "create resourceclaims": the error text
    fail_create: str | None = None


def _for_claim(name: str, fn: Change) -> Change:
    return lambda c: fn(c) if c["metadata"]["name"] == name else c


def _status_of(status_from: Obj) -> Change:
    """``claim.Finalizers = x.Finalizers; claim.Status = x.Status``, then a timestamp."""
    def f(c: Obj) -> Obj:
        c = dc(c)
        c["metadata"]["finalizers"] = list(status_from["metadata"].get("finalizers") or [])
        c["status"] = dc(status_from["status"])
        return add_allocation_timestamp(c)
    return _for_claim(CLAIM_NAME, f)


def _reserved_for_pod(c: Obj) -> Obj:
    return add_allocation_timestamp(reserve(c))


def _only_reserved(c: Obj) -> Obj:
    if c["metadata"]["name"] != CLAIM_NAME:
        return c
    return _reserved_for_pod(c)


IN_USE = reserve(ALLOCATED_CLAIM)


def _with_finalizer(c: Obj) -> Obj:
    c = dc(c)
    c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    return c


def _without_allocation_timestamp(c: Obj) -> Obj:
    c = dc(c)
    c["status"]["allocation"].pop("allocationTimestamp", None)
    return c


CASES: dict[str, Case] = {
    "empty": Case(
        pod=pod(name="foo", uid="foo"),
        prefilter=R((Code.SKIP, "")),
        postfilter=R((U, "no new claims to deallocate")),
        prebind_preflight=(Code.SKIP, ""),
    ),
    "claim-reference": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[ALLOCATED_CLAIM, OTHER_CLAIM], prebind=R(changes=_only_reserved),
    ),
    "claim-template": Case(
        pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[ALLOCATED_CLAIM, OTHER_CLAIM], prebind=R(changes=_only_reserved),
    ),
    "podgroup-claim-reference-feature-disabled-reserves-for-pod": Case(
        pod=GROUPED_POD_WITH_CLAIM_NAME, claims=[ALLOCATED_POD_GROUP_CLAIM, OTHER_CLAIM], prebind=R(changes=_only_reserved),
    ),
    "missing-claim": Case(
        pod=POD_WITH_CLAIM_TEMPLATE, claims=[ALLOCATED_CLAIM, OTHER_CLAIM],
        preenqueue=R((UU, 'pod "default/my-pod": ResourceClaim not created yet')),
    ),
    "deleted-claim": Case(
        pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
        claims=[{**ALLOCATED_CLAIM, "metadata": {**ALLOCATED_CLAIM["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}],
        preenqueue=R((UU, 'resourceclaim "my-pod-my-resource" is being deleted')),
    ),
    "wrong-claim": Case(
        pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
        claims=[{**ALLOCATED_CLAIM, "metadata": {**ALLOCATED_CLAIM["metadata"], "ownerReferences": [
            {**ALLOCATED_CLAIM["metadata"]["ownerReferences"][0], "uid": POD_UID + "123"}]}}],
        preenqueue=R((UU, "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)")),
    ),
    "no-resources": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS],
        filter={NODE_NAME: R((UU, "cannot allocate all claims"))},
        postfilter=R((U, "still not schedulable")),
    ),
    "with-resources": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "podgroup-with-resources-feature-disabled-reserves-for-pod": Case(
        pod=GROUPED_POD_WITH_CLAIM_NAME, claims=[PENDING_POD_GROUP_CLAIM], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_POD_GROUP_CLAIM]),
        prebind=R(changes=_for_claim(CLAIM_NAME, lambda c: _reserved_for_pod(allocated(c, ALLOCATED_CLAIM["status"]["allocation"])))),
    ),
    "with-resources-has-finalizer": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[_with_finalizer(PENDING_CLAIM)], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "with-resources-finalizer-gets-removed": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[_with_finalizer(PENDING_CLAIM)], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        prepare_prebind=lambda c: {**c, "metadata": {**c["metadata"], "finalizers": []}},
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "with-resources-finalizer-gets-added": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        prepare_prebind=_with_finalizer,
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "skip-bind": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), unreserve_before_prebind=R(),
    ),
    "exhausted-resources-in-informer-cache": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        filter={NODE_NAME: R((UU, "cannot allocate all claims"))}, postfilter=R((U, "still not schedulable")),
    ),
    "exhausted-resources-in-flight-claim": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM, OTHER_CLAIM], in_flight=[OTHER_ALLOCATED_CLAIM],
        classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        preenqueue=R(in_flight=[OTHER_ALLOCATED_CLAIM]), prefilter=R(in_flight=[OTHER_ALLOCATED_CLAIM]),
        filter={NODE_NAME: R((UU, "cannot allocate all claims"), in_flight=[OTHER_ALLOCATED_CLAIM])},
        postfilter=R((U, "still not schedulable"), in_flight=[OTHER_ALLOCATED_CLAIM]),
    ),
    "other-resources-in-flight-claim": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM, OTHER_CLAIM], in_flight=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE],
        classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        preenqueue=R(in_flight=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE]), prefilter=R(in_flight=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE]),
        filter={NODE_NAME: R(in_flight=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE])},
        reserve=R(in_flight=[ALLOCATED_CLAIM, OTHER_ALLOCATED_CLAIM_OTHER_DEVICE]),
        prebind=R(changes=_status_of(IN_USE), in_flight=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE]),
    ),
    "tainted-device-disabled": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[taint_devices(WORKER_NODE_SLICE)],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "tainted-device-enabled": Case(
        taints=True, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[taint_devices(WORKER_NODE_SLICE)],
        filter={NODE_NAME: R((UU, "cannot allocate all claims"))}, postfilter=R((U, "still not schedulable")),
    ),
    "request-admin-access-with-DRAAdminAccess-featuregate": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[admin_access(PENDING_CLAIM), OTHER_ALLOCATED_CLAIM], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[admin_access(ALLOCATED_CLAIM)]), prebind=R(changes=_status_of(admin_access(IN_USE))),
    ),
    "request-admin-access-without-DRAAdminAccess-featuregate": Case(
        disable_admin_access=True,
        pod=POD_WITH_CLAIM_NAME, claims=[admin_access(PENDING_CLAIM), OTHER_ALLOCATED_CLAIM], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE],
        filter={NODE_NAME: R((E, "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature is disabled"))},
    ),
    "structured-ignore-allocated-admin-access": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM, admin_access(OTHER_ALLOCATED_CLAIM)], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "claim-parameters-CEL-runtime-error": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[break_cel_in_claim(PENDING_CLAIM)], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        filter={NODE_NAME: R((E, f"claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: {ATTR_NAME}"))},
    ),
    "class-parameters-CEL-runtime-error": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[break_cel_in_class(DEVICE_CLASS)], objs=[WORKER_NODE_SLICE],
        filter={NODE_NAME: R((E, f"class my-resource-class: selector #0: CEL runtime error: no such key: {ATTR_NAME}"))},
    ),
    "CEL-runtime-error-for-one-of-two-nodes": Case(
        nodes=[WORKER_NODE, WORKER_NODE2],
        pod=POD_WITH_CLAIM_NAME, claims=[break_cel_in_claim(PENDING_CLAIM)], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE, WORKER_NODE2_SLICE],
        filter={NODE_NAME: R((E, f"claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: {ATTR_NAME}"))},
    ),
    "CEL-runtime-error-for-one-of-three-nodes": Case(
        nodes=[WORKER_NODE, WORKER_NODE2, WORKER_NODE3],
        pod=POD_WITH_CLAIM_NAME, claims=[break_cel_in_claim(PENDING_CLAIM)], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE, WORKER_NODE2_SLICE, WORKER_NODE3_SLICE],
        filter={NODE_NAME: R((E, f"claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: {ATTR_NAME}"))},
    ),
    "missing-class": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM],
        prefilter=R((UU, "request req-1: device class my-resource-class does not exist")),
        postfilter=R((U, "no new claims to deallocate")),
    ),
    "wrong-topology": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[ALLOCATED_CLAIM_WITH_WRONG_TOPOLOGY],
        filter={NODE_NAME: R((UU, "resourceclaim not available on the node"))},
        postfilter=R((U, "deallocation of ResourceClaim completed"), changes=lambda c: allocated(c, None)),
    ),
    "good-topology": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY], prebind=R(changes=_reserved_for_pod),
    ),
    "bind-failure": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[ALLOCATED_CLAIM_WITH_GOOD_TOPOLOGY], prebind=R(changes=_reserved_for_pod),
        unreserve_after_bind_failure=R(changes=lambda c: {**c, "status": {**c["status"], "reservedFor": []}}),
    ),
    "postfilter-skip-unreserve-podgroup-feature-disabled": Case(
        pod=GROUPED_POD_WITH_CLAIM_NAME, classes=[DEVICE_CLASS], claims=[ALLOCATED_POD_GROUP_CLAIM_WITH_WRONG_TOPOLOGY],
        filter={NODE_NAME: R((UU, "resourceclaim not available on the node"))},
        postfilter=R((U, "still not schedulable")),
    ),
    "reserved-okay": Case(pod=POD_WITH_CLAIM_NAME, claims=[IN_USE]),
    "claim-with-request-with-unknown-device-class": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[update_device_class_name(CLAIM, "does-not-exist")],
        prefilter=R((UU, "request req-1: device class does-not-exist does not exist")),
        postfilter=R((U, "no new claims to deallocate")),
    ),
    "claim-with-prioritized-list-feature-disabled": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[CLAIM_WITH_PRIORITIZED_LIST], classes=[DEVICE_CLASS],
        prefilter=R((UU, "resource claim default/my-pod-my-resource, request req-1: has subrequests, but the DRAPrioritizedList feature is disabled")),
        postfilter=R((U, "no new claims to deallocate")),
    ),
    "claim-with-prioritized-list-unknown-device-class": Case(
        prio=True, pod=POD_WITH_CLAIM_NAME, claims=[update_device_class_name(CLAIM_WITH_PRIORITIZED_LIST, "does-not-exist")],
        prefilter=R((UU, "request req-1/subreq-1: device class does-not-exist does not exist")),
        postfilter=R((U, "no new claims to deallocate")),
    ),
    "claim-with-prioritized-list": Case(
        prio=True, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM_WITH_PRIORITIZED_LIST], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST]),
        prebind=R(changes=_status_of(reserve(ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST))),
    ),
    "timeout": Case(
        args={"filterTimeout": "1ns"}, pod=POD_WITH_CLAIM_NAME, claims=[LARGE_CLAIM], classes=[DEVICE_CLASS],
        objs=[LARGE_WORKER_NODE_SLICE],
        filter={NODE_NAME: R((E, "node worker: timed out trying to allocate devices"))},
    ),
    "timeout_disabled": Case(
        disable_filter_timeout=True, args={"filterTimeout": "1ns"}, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM],
        classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "timeout_zero": Case(
        args={"filterTimeout": "0s"}, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=_status_of(IN_USE)),
    ),
    "dont-add-allocation-timestamp": Case(
        disable_binding_conditions=True, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS],
        objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=lambda c: reserve(ALLOCATED_CLAIM)),
    ),
    "add-allocation-timestamp": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[WORKER_NODE_SLICE],
        reserve=R(in_flight=[ALLOCATED_CLAIM]), prebind=R(changes=lambda c: add_allocation_timestamp(reserve(ALLOCATED_CLAIM))),
    ),
    "add-allocation-timestamp-failure": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[ALLOCATED_CLAIM],
        prepare_prebind=lambda c: allocated(c, None),
        prebind=R((E, "claim default/my-pod-my-resource got deallocated elsewhere in the meantime")),
    ),
    "bind-claim-with-binding-conditions": Case(
        args={"bindingTimeout": "1s"}, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[FABRIC_SLICE],
        reserve=R(in_flight=[_without_allocation_timestamp(BIND_CLAIM)]),
        prebind=R((E, "device binding timeout: context deadline exceeded"), changes=lambda c: reserve(BIND_CLAIM)),
    ),
    "bind-failure-concurrent-deallocation": Case(
        args={"bindingTimeout": "1s"}, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], objs=[FABRIC_SLICE],
        reserve=R(in_flight=[_without_allocation_timestamp(BIND_CLAIM)]),
        prebind=R((E, "device binding timeout: context deadline exceeded"), changes=lambda c: reserve(BIND_CLAIM)),
    ),
    "bound-claim-with-succeeded-binding-conditions": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[BOUND_CLAIM], prebind=R(changes=reserve),
    ),
    "bound-claim-with-failed-binding": Case(
        pod=POD_WITH_CLAIM_NAME, claims=[FAILED_BINDING_CLAIM], objs=[WORKER_NODE_SLICE],
        filter={NODE_NAME: R((UU, "resourceclaim not available on the node"))},
        postfilter=R((U, "deallocation of ResourceClaim completed"), changes=deallocated),
    ),
    "bound-claim-with-timed-out-binding": Case(
        pod=POD_WITH_CLAIM_NAME,
        patch=lambda tc, now: setattr(tc, "claims", [with_device_statuses(
            allocated(ALLOCATED_CLAIM, {**ALLOCATION_RESULT_WITH_BINDING_CONDITIONS, "allocationTimestamp": rfc3339(now - 601)}),
            device_status(DRIVER, "instance-1"))]),
        filter={NODE_NAME: R((UU, "resourceclaim not available on the node"))},
        postfilter=R((U, "deallocation of ResourceClaim completed"), changes=deallocated),
    ),
    "prebind-fail-with-binding-timeout": Case(
        args={"bindingTimeout": "600s"}, pod=POD_WITH_CLAIM_NAME,
        patch=lambda tc, now: setattr(tc, "claims", [with_device_statuses(
            allocated(ALLOCATED_CLAIM, {**ALLOCATION_RESULT_WITH_BINDING_CONDITIONS, "allocationTimestamp": rfc3339(now - 600 + 10)}),
            device_status(DRIVER, "instance-1"))]),
        prebind=R((E, "device binding timeout: claim=my-pod-my-resource"), changes=reserve),
    ),
    "bound-claim-with-mixed-binding-conditions": Case(
        pod=POD_WITH_CLAIM_NAME,
        patch=lambda tc, now: setattr(tc, "claims", [with_device_statuses(
            allocated(ALLOCATED_CLAIM, {**ALLOCATION_RESULT_WITH_BINDING_CONDITIONS, "allocationTimestamp": rfc3339(now - 601)}),
            device_status(DRIVER, "instance-1", ("condition1", "True"), ("condition2", "False")))]),
        filter={NODE_NAME: R((UU, "resourceclaim not available on the node"))},
        postfilter=R((U, "deallocation of ResourceClaim completed"), changes=deallocated),
    ),
    "bound-claim-without-binding-conditions": Case(
        pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[ALLOCATED_CLAIM, OTHER_CLAIM], prebind=R(changes=_only_reserved),
    ),
    "multi-claims-binding-conditions-all-success": Case(
        pod=POD_WITH_TWO_CLAIM_NAMES, claims=[BOUND_CLAIM, BOUND_CLAIM2], classes=[DEVICE_CLASS], objs=[FABRIC_SLICE, FABRIC_SLICE2],
        prebind=R(changes=reserve),
    ),
    "multi-claims-binding-conditions-one-fail": Case(
        pod=POD_WITH_TWO_CLAIM_NAMES, claims=[BOUND_CLAIM, FAILED_BINDING_CLAIM2], classes=[DEVICE_CLASS],
        objs=[FABRIC_SLICE, FABRIC_SLICE2],
        filter={NODE_NAME: R((UU, "resourceclaim not available on the node"))},
        postfilter=R((U, "deallocation of ResourceClaim completed"), changes=_for_claim(CLAIM_NAME2, deallocated)),
    ),
    "single-claim-prioritized-list-scoring": Case(
        prio=True, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR], classes=[DEVICE_CLASS],
        nodes=[WORKER_NODE, WORKER_NODE2],
        objs=[make_slice(NODE_NAME, DRIVER, device("instance-1", {ATTR_NAME: {"bool": True}})),
              make_slice(NODE2_NAME, DRIVER, device("instance-1", {ATTR_NAME: {"bool": False}}))],
        score_result={NODE_NAME: 8, NODE2_NAME: 7}, normalize_result=[(NODE_NAME, 100), (NODE2_NAME, 87)],
        reserve=R(in_flight=[ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR]),
        prebind=R(changes=_status_of(reserve(ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR))),
    ),
    "multiple-claims-prioritized-list-scoring": Case(
        prio=True, pod=POD_WITH_TWO_CLAIM_NAMES,
        claims=[PENDING_CLAIM_WITH_PRIORITIZED_LIST, PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS],
        classes=[DEVICE_CLASS], nodes=[WORKER_NODE, WORKER_NODE2, WORKER_NODE3],
        objs=[make_slice(NODE_NAME, DRIVER, *(device(f"instance-{i}") for i in range(1, 5))),
              make_slice(NODE2_NAME, DRIVER, device("instance-1"), device("instance-2")),
              make_slice(NODE3_NAME, DRIVER, device("instance-1"))],
        filter={NODE3_NAME: R((UU, "cannot allocate all claims"))},
        score_result={NODE_NAME: 15, NODE2_NAME: 13}, normalize_result=[(NODE_NAME, 100), (NODE2_NAME, 86)],
        reserve=R(in_flight=[ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST, ALLOCATED_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS]),
        prebind=R(changes=lambda c: _reserved_for_pod(
            ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST if c["metadata"]["name"] == CLAIM_NAME
            else ALLOCATED_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS)),
    ),
    "multiple-requests-prioritized-list-scoring": Case(
        prio=True, pod=POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS], classes=[DEVICE_CLASS],
        nodes=[WORKER_NODE, WORKER_NODE2, WORKER_NODE3],
        objs=[make_slice(NODE_NAME, DRIVER, *(device(f"instance-{i}") for i in range(1, 5))),
              make_slice(NODE2_NAME, DRIVER, *(device(f"instance-{i}") for i in range(1, 4))),
              make_slice(NODE3_NAME, DRIVER, device("instance-1"), device("instance-2"))],
        score_result={NODE_NAME: 16, NODE2_NAME: 15, NODE3_NAME: 14},
        normalize_result=[(NODE_NAME, 100), (NODE2_NAME, 93), (NODE3_NAME, 87)],
        reserve=R(in_flight=[ALLOCATED_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS]),
        prebind=R(changes=lambda c: _reserved_for_pod(ALLOCATED_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS)),
    ),
}



# --- the harness (Go's testPlugin/verify) ----------------------------------------------------------


def _norm(o: Any, in_allocation_result: bool = False) -> Any:
    """Drop what Go's comparison ignores, and empty values (nil and empty lists are alike)."""
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if in_allocation_result and k in ("device", "shareID"):
                continue
            if k == "allocationTimestamp":
                v = "T"
            nv = _norm(v, in_allocation_result or k == "results")
            if nv in (None, [], {}):
                continue
            out[k] = nv
        return out
    if isinstance(o, (list, tuple)):
        return [_norm(v, in_allocation_result) for v in o]
    return o


def _claim_view(c: Any) -> Obj:
    c = copy.deepcopy(dict(c))
    md = dict(c.get("metadata") or {})
    for k in ("uid", "resourceVersion", "creationTimestamp"):
        md.pop(k, None)
    base = md.get("generateName")
    if base and md.get("name", "").startswith(base) and len(md["name"]) == len(base) + 5:
        # the object store adds 5 characters to generateName; Go's fake client names the
        # first generated object <generateName>0
        md["name"] = base + "0"
    c["metadata"] = md
    c.pop("apiVersion", None)
    c.pop("kind", None)
    return _norm(c)


class _FailingWrites:
    """handle.objects with Go's failPatch (Pod patches fail) and a create reactor."""

    def __init__(self, store: Any, fail_patch: bool, fail_create: str | None) -> None:
        self._store = store
        self._fail_patch = fail_patch
        self._fail_create = fail_create

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def patch(self, api_version: str, kind: str, *args: Any, **kw: Any) -> Any:
        if self._fail_patch and kind == "Pod":
            raise RuntimeError("patch error")
        return self._store.patch(api_version, kind, *args, **kw)

    def create(self, obj: Any, **kw: Any) -> Any:
        if self._fail_create is not None and obj.get("kind") == "ResourceClaim":
            raise RuntimeError(self._fail_create)
        return self._store.create(obj, **kw)


class Ctx:
    def __init__(self, tc: Case, monkeypatch: pytest.MonkeyPatch) -> None:
        self.handle = make_handle(tc.nodes or [WORKER_NODE], objects=tc.objs)
        self.store = self.handle.objects
        if tc.fail_patch or tc.fail_create is not None:
            self.handle = make_handle(
                tc.nodes or [WORKER_NODE], object_client=_FailingWrites(self.store, tc.fail_patch, tc.fail_create)
            )
        clock = self.handle.clock

        class FakeTime:  # PreBind's wait on the test's clock: no real sleeping
            t = 0.0

            @classmethod
            def monotonic(cls) -> float:
                return cls.t

            @classmethod
            def sleep(cls, d: float) -> None:
                cls.t += d
                clock.advance(d)

        monkeypatch.setattr(binding_mod, "time", FakeTime)
        store = self.store
        for c in tc.claims:
            store.create(dc(c))
        for cls in tc.classes:
            store.create(dc(cls))
        feats = SchedulerFeatures(
            dra_admin_access=not tc.disable_admin_access, dra_prioritized_list=tc.prio, dra_partitionable_devices=False,
            dra_device_taints=tc.taints, dra_device_binding_conditions=not tc.disable_binding_conditions,
            dra_resource_claim_device_status=True, dra_scheduler_filter_timeout=not tc.disable_filter_timeout,
            dra_consumable_capacity=False, dra_extended_resource=tc.extended,
        )
        args = DynamicResourcesArgs(**{{"filterTimeout": "filter_timeout", "bindingTimeout": "binding_timeout"}[k]: v
                                       for k, v in (tc.args or {}).items()})
        self.p = DynamicResources(args, self.handle, feats)
        self.node_infos = [NodeInfo(Node(n)) for n in (tc.nodes or [WORKER_NODE])]
        self.state = CycleState()
        self.pod = tc.pod

    def claims(self) -> list[Obj]:
        return sorted(self.handle.objects.list("resource.k8s.io/v1", "ResourceClaim"), key=lambda c: c["metadata"]["name"])

    def update(self, fn: Change | None) -> None:
        if fn is None:
            return
        for c in self.claims():
            new = fn(dc(c))
            if new != c:
                self.handle.objects.update(new)

    def verify(self, step: str, want: R, initial: list[Obj], status: Status | None) -> None:
        got_status = None if status is None or status.code is Code.SUCCESS else (status.code, status.message)
        assert got_status == want.status, step
        expected = [want.changes(dc(c)) if want.changes else c for c in initial]
        expected = [c for c in expected if _claim_view(c)["metadata"]["name"] not in want.removed] + want.added
        got = sorted((_claim_view(c) for c in self.claims()), key=lambda c: c["metadata"]["name"])
        assert got == sorted((_claim_view(c) for c in expected), key=lambda c: c["metadata"]["name"]), step
        if want.pod_status is not None:
            md = self.pod["metadata"]
            status = dc(self.store.get("v1", "Pod", md["name"], md["namespace"]).get("status") or {})
            ext = status.get("extendedResourceClaimStatus")
            if ext and ext.get("resourceClaimName"):  # the claim's name as _claim_view shows it
                claim = self.store.get("resource.k8s.io/v1", "ResourceClaim", ext["resourceClaimName"], md["namespace"])
                ext["resourceClaimName"] = _claim_view(claim)["metadata"]["name"]
            assert status == want.pod_status, step
        in_flight = sorted(self.p.manager.in_flight_claims(), key=lambda c: c["metadata"]["name"])
        assert [_claim_view(c) for c in in_flight] == [_claim_view(c) for c in want.in_flight], step


def _status(got: Any) -> Status | None:
    if isinstance(got, tuple):
        return got[1]
    return got


@pytest.mark.parametrize("name", list(CASES), ids=[f"GoTestPlugin/{n}" for n in CASES])
def test_plugin(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(CASES[name], monkeypatch)


def run_case(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Go's testPlugin for one case."""
    tc = copy.deepcopy(case)
    if tc.patch is not None:
        tc.patch(tc, make_handle().clock.now())
    ctx = Ctx(tc, monkeypatch)
    for c in tc.in_flight:
        ctx.p.manager.signal_claim_pending_allocation((c.get("metadata") or {}).get("uid") or "", dc(c))
    p = Pod(tc.pod)
    pl = ctx.p

    initial = ctx.claims()
    st = pl.pre_enqueue(p)
    ctx.verify("PreEnqueue", tc.preenqueue, initial, st)
    if st is not None and not st.is_success():
        return

    st = _status(pl.pre_filter(ctx.state, p))
    ctx.verify("PreFilter", tc.prefilter, initial, st)
    unschedulable = st is not None and st.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    potential: list[NodeInfo] = []
    if not unschedulable:
        for ni in ctx.node_infos:
            initial = ctx.claims()
            st = pl.filter(ctx.state, p, ni)
            ctx.verify(f"Filter/{ni.name}", tc.filter.get(ni.name, R()), initial, st)
            if st is None or st.code is Code.SUCCESS:
                potential.append(ni)
            elif st.code is Code.ERROR:
                return  # an error aborts scheduling
        unschedulable = not potential

    scores: list[NodeScore] = []
    if not unschedulable and len(potential) > 1:
        for ni in potential:
            initial = ctx.claims()
            got = pl.score(ctx.state, ni)
            score, st = (got if isinstance(got, tuple) else (got, None))
            assert score == tc.score_result.get(ni.name, 0), f"Score/{ni.name}"
            ctx.verify(f"Score/{ni.name}", R(), initial, st)
            scores.append(NodeScore(ni.name, score))
        pl.normalize_score(ctx.state, scores)
        assert [(s.name, s.score) for s in scores] == (tc.normalize_result or [(s.name, 0) for s in scores])

    selected = ""
    if not unschedulable and potential:
        if scores:
            best = scores[0]
            for s in scores:
                if s.score > best.score:
                    best = s
            selected = best.name
        else:
            selected = potential[0].name
        initial = ctx.claims()
        st = pl.reserve(ctx.state, p, selected)
        ctx.verify("Reserve", tc.reserve, initial, st)
        if st is not None and not st.is_success():
            unschedulable = True

    if selected:
        if unschedulable:
            pl.unreserve(ctx.state, p, selected)
            return
        if tc.unreserve_before_prebind is not None:
            initial = ctx.claims()
            pl.unreserve(ctx.state, p, selected)
            ctx.verify("UnreserveBeforePreBind", tc.unreserve_before_prebind, initial, None)
            return
        ctx.update(tc.prepare_prebind)
        initial = ctx.claims()
        st = pl.pre_bind_pre_flight(ctx.state)
        assert (None if st is None else (st.code, st.message)) == tc.prebind_preflight
        st = pl.pre_bind(ctx.state, p, selected)
        ctx.verify("PreBind", tc.prebind, initial, st)
        if tc.unreserve_after_bind_failure is not None:
            initial = ctx.claims()
            pl.unreserve(ctx.state, p, selected)
            ctx.verify("UnreserveAfterBindFailure", tc.unreserve_after_bind_failure, initial, None)
    elif not potential:
        initial = ctx.claims()
        result, st = pl.post_filter(ctx.state, p)
        assert result is None
        ctx.verify("PostFilter", tc.postfilter, initial, st)
