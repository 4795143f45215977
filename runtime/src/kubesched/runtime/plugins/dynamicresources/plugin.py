"""DynamicResources: dynamic resource allocation (DRA) as kube-scheduler v1.36.3 runs it with
its default feature gates (``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``).

A pod's ``spec.resourceClaims`` name ResourceClaims (directly, or through a template the
resourceclaim controller instantiated and recorded in ``status.resourceClaimStatuses``).
PreEnqueue keeps the pod out of the queue until its claims exist. PreFilter reads the claims,
checks their device classes and builds the structured allocator once per pod
(``kubesched.runtime.dra.allocator``) with the devices in use (allocated claims plus the
allocations in flight). Filter asks it for an allocation on each node and keeps the result;
Score prefers nodes where the earlier ``firstAvailable`` subrequests fit; Reserve records the
chosen node's allocation as in flight; PreBind writes allocation and reservation into each claim
and waits for the devices' binding conditions; Unreserve undoes it. PostFilter deallocates an
allocated claim that made every node fail, so that the next attempt can allocate it elsewhere.

DRAExtendedResource (beta, on): extended resources a DeviceClass serves get one special claim
per pod (``extended.py``): built in PreFilter, given the node's requests in Filter, created in
PreBind; an earlier cycle's claim is deleted by PostFilter, a created one by Unreserve.

Pods without claims and without such extended resources cost what they cost before: PreFilter
writes a shared empty state and returns Skip, Score and NormalizeScore are the zero columns
(with no DeviceClass naming a resource, the resolver answers at once).

This module holds the extension points; ``hints.py`` the events and queueing hints,
``allocation.py`` the request checks and the allocator calls, ``scoring.py`` computeScore,
``binding.py`` PreBind's and Unreserve's writes.

Left out (alpha and off in 1.36): PodGroup claims (DRAWorkloadResourceClaims), node-allocatable
resources (DRANodeAllocatableResources).
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.sdk import (
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeColumns,
    NodeInfo,
    NodeScore,
    Pod,
    QueueingHint,
    Status,
    default_normalize_columns,
    default_normalize_score,
    hookimpl,
)

from ...config._duration import parse_go_duration
from ...dra.deviceclasses import DeviceClassResolver, resolver_for
from ..helper import SKIP
from . import hints
from .allocation import allocate_on_node, check_claims
from .args import DynamicResourcesArgs
from .binding import (
    BindError,
    bind_claim,
    has_binding_conditions,
    is_claim_ready_for_binding,
    is_claim_timeout,
    remove_reservation,
    wait_for_binding_conditions,
)
from .claims import ClaimStore, DraState, NodeAllocation
from .common import NAME, STATE_KEY, allocation_of, error, name_of, uid_of, unschedulable
from .extended import (
    ExtendedResources,
    NodeExtendedClaim,
    delete_claim,
    filter_extended_resources,
    is_special_claim_name,
    pre_filter_extended_resources,
    unreserve_extended_resource_claim,
)
from .features import DEFAULT_FEATURES, SchedulerFeatures
from .manager import DraManager, manager_for
from .resourceclaim import (
    API_VERSION,
    FINALIZER,
    ClaimError,
    is_for_pod,
    is_reserved_for_pod,
    name,
)
from .scoring import compute_score

__all__ = ["NO_NEW_CLAIMS_MSG", "STATE_NOT_FOUND_MSG", "DynamicResources"]


#: PostFilter's answer when the cycle state holds no claim (dynamicresources.go PostFilter).
NO_NEW_CLAIMS_MSG = "no new claims to deallocate"
#: fwk.ErrNotFound's text: PostFilter without the state PreFilter writes.
STATE_NOT_FOUND_MSG = "not found"

Claim = Mapping[str, Any]

#: the state of every pod without claims (nothing in it ever changes)
_EMPTY_STATE = DraState()


def _node_by_node(state: CycleState, *, filtering: bool = False) -> bool:
    """The column forms' decision, PreFilter's own (Go reads the state too): a pod with claims,
    or with extended resources a DeviceClass served at PreFilter, is filtered and scored node by
    node; one PreFilter found neither (the shared empty state) gets the columns of zeros. No
    state (PreFilter did not run): Filter node by node (where Go's error is); Score zeros, as the
    per-node score without a state."""
    s = state.get(STATE_KEY)
    if s is None:
        return filtering
    return s is not _EMPTY_STATE


class DynamicResources:
    name = NAME
    Args = DynamicResourcesArgs
    args_kind = "DynamicResourcesArgs"
    watches = ((API_VERSION, "ResourceClaim"), (API_VERSION, "DeviceClass"), (API_VERSION, "ResourceSlice"))

    def __init__(self, args: DynamicResourcesArgs | None = None, handle: Any = None, features: SchedulerFeatures | None = None) -> None:
        self.args = args if args is not None else DynamicResourcesArgs()
        self.handle = handle
        self.features = features if features is not None else DEFAULT_FEATURES
        self.filter_timeout = parse_go_duration(self.args.filter_timeout)
        self.binding_timeout = parse_go_duration(self.args.binding_timeout)
        self._manager: DraManager | None = None
        self._cel_cache: Any = None
        self._resolver: DeviceClassResolver | None = None

    @property
    def manager(self) -> DraManager:
        """The shared DRA manager of ``handle.objects`` (built on first use)."""
        if self._manager is None:
            if self.handle is None:  # built without a handle (tests): an empty object store
                from ...objectstore import ObjectStore

                self._manager = DraManager(ObjectStore())
            else:
                self._manager = manager_for(self.handle.objects)
        return self._manager

    @property
    def resolver(self) -> DeviceClassResolver:
        """The DeviceClass resolver of ``handle.objects`` (Go's draManager.DeviceClassResolver()),
        shared with NodeResourcesFit."""
        if self._resolver is None:
            self._resolver = resolver_for(self.manager.objects)
        return self._resolver

    def now(self) -> float:
        return float(self.handle.clock.now()) if self.handle is not None else time.time()

    # --- claims of a pod -----------------------------------------------------------------------
    def foreach_pod_resource_claim(self, pod: Pod, cb: Callable[[str, dict[str, Any]], None] | None) -> None:
        """foreachPodResourceClaim: each claim of the pod must exist, not be being deleted and,
        when generated from a template, belong to the pod. Raises :class:`ClaimError`."""
        ns, pname = pod.namespace, pod.name
        for resource in pod.spec.get("resourceClaims") or ():
            claim_name, must_check_owner = name(ns, pname, pod.status, resource)
            if claim_name is None:
                continue
            claim = self.manager.get_claim(ns, claim_name)
            if (claim.get("metadata") or {}).get("deletionTimestamp"):
                raise ClaimError(f'resourceclaim "{(claim.get("metadata") or {}).get("name")}" is being deleted')
            if must_check_owner:
                is_for_pod(ns, pname, pod.uid, claim)
            if cb is not None:
                cb(resource.get("name") or "", claim)

    def pod_resource_claims(self, pod: Pod) -> list[dict[str, Any]]:
        claims: list[dict[str, Any]] = []
        self.foreach_pod_resource_claim(pod, lambda _n, c: claims.append(c))
        return claims

    # --- events --------------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return hints.events_to_register(self)

    def is_schedulable_after_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        return hints.is_schedulable_after_claim_change(self, pod, old_obj, new_obj)

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        return hints.is_schedulable_after_pod_change(self, pod, old_obj, new_obj)

    # --- PreEnqueue ----------------------------------------------------------------------------
    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.get("resourceClaims"):
            return None
        try:
            self.foreach_pod_resource_claim(pod, None)
        except ClaimError as e:
            return unschedulable(str(e))
        return None

    # --- PreFilter -----------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        # "We just initialize an empty state to record that observation for the other functions."
        if not pod.spec.get("resourceClaims"):
            # no claims: only extended resources a DeviceClass serves can give the pod one
            ext, st = self._pre_filter_extended_resources(pod)
            if ext is None and st is None:
                state.write(STATE_KEY, _EMPTY_STATE)
                return SKIP
            s = DraState()
            state.write(STATE_KEY, s)
            if st is not None:
                return st
            user_claims: list[dict[str, Any]] = []
        else:
            s = DraState()
            state.write(STATE_KEY, s)
            try:
                user_claims = self.pod_resource_claims(pod)
            except ClaimError as e:
                return unschedulable(str(e))
            ext, st = self._pre_filter_extended_resources(pod)
            if st is not None:
                return st
        s.dra_extended_resource = ext
        claims = ClaimStore(user_claims, ext.claim if ext is not None else None)
        if claims.empty():
            return SKIP

        st = check_claims(self, s, pod, claims)
        if st is not None:
            return st
        s.claims = claims
        return None

    def _pre_filter_extended_resources(self, pod: Pod) -> tuple[ExtendedResources | None, Status | None]:
        """preFilterExtendedResources (DRAExtendedResource): the pod's special claim when one of
        its extended resources is served by a DeviceClass. ``(None, None)`` at once when the
        gate is off, the pod requests no scalar resource, or no DeviceClass names any (the
        resolver is empty): pods without claims cost one refresh of the resolver, as in
        NodeResourcesFit."""
        if not self.features.dra_extended_resource or not pod.requests.scalar:
            return None, None
        resolver = self.resolver
        resolver.refresh()
        if not resolver:
            return None, None
        return pre_filter_extended_resources(pod, resolver, self.manager.list_claims)

    # --- Filter --------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return error(STATE_NOT_FOUND_MSG)
        if s.claims.empty():
            return None
        node = node_info.node
        node_name = node.name
        # DRAExtendedResource: the node's variant of the special claim (None: nothing to
        # allocate through DRA here)
        node_claim: NodeExtendedClaim | None = None
        if s.dra_extended_resource is not None:
            node_claim, st = filter_extended_resources(
                s.dra_extended_resource, s.claims.no_user_claim(), pod, node_info.allocatable.scalar, self.resolver
            )
            if st is not None:
                return st
            # no user claim, and the extended resources are a device plugin's on this node
            if node_claim is None and s.claims.no_user_claim():
                return None

        unavailable: list[int] = []
        for index, claim in s.claims.all():
            selector = s.informations_for_claim[index].available_on_nodes
            if selector is not None and not selector.matches(node.labels, node_name):
                unavailable.append(index)
                continue
            if allocation_of(claim) is None:
                continue
            if self.features.binding_conditions:
                try:
                    ready = is_claim_ready_for_binding(claim)
                except BindError:
                    unavailable.append(index)  # binding failed: PostFilter may deallocate it
                else:
                    if not ready and is_claim_timeout(self, claim):
                        unavailable.append(index)

        allocations: list[Mapping[str, Any]] = []
        if s.allocator is not None:
            got = allocate_on_node(self, s, node.raw, node_name, node_claim)
            if isinstance(got, Status):
                return got
            allocations = got

        with s.lock:
            if unavailable:
                s.unavailable_claims.update(unavailable)
                return unschedulable("resourceclaim not available on the node")
            if s.allocator is not None:
                s.node_allocations[node_name] = NodeAllocation(
                    allocations,
                    node_claim.claim if node_claim is not None else None,
                    node_claim.mappings if node_claim is not None else [],
                )
        return None

    @hookimpl
    def filter_columns(self, state: CycleState, columns: NodeColumns) -> tuple[Any, list[Status | None]] | None:
        if _node_by_node(state, filtering=True):
            return None  # claims: Filter node by node
        return np.zeros(columns.n, np.int8), [None]

    # --- PostFilter ----------------------------------------------------------------------------
    @hookimpl
    def post_filter(self, state: CycleState, pod: Pod) -> tuple[Any, Status]:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return None, Status(Code.ERROR, STATE_NOT_FOUND_MSG)
        if s.claims.empty():
            return None, Status.unschedulable(NO_NEW_CLAIMS_MSG)
        extended = s.claims.extended_resource_claim()
        # Go picks one at random (map order); kubesched takes the lowest index, so that runs
        # on the simulated cluster repeat
        # the special claim from an earlier cycle (it has a real name) is deleted below
        stale_extended = extended is not None and not is_special_claim_name(name_of(extended))
        for index in sorted(s.unavailable_claims):
            claim = s.claims.get(index)
            if claim is extended:
                if stale_extended:
                    break
                continue
            reserved = (claim.get("status") or {}).get("reservedFor") or []
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                meta = claim.get("metadata") or {}
                try:
                    self.manager.objects.patch(
                        API_VERSION, "ResourceClaim", meta.get("name") or "",
                        {"status": {"reservedFor": None, "allocation": None, "devices": None}},
                        meta.get("namespace"), resource_version=meta.get("resourceVersion"), subresource="status",
                    )
                except Exception as e:
                    return None, error(e)
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        if stale_extended:
            assert extended is not None
            try:
                delete_claim(self.manager.objects, extended)
            except Exception as e:
                return None, error(e)
            return None, Status.unschedulable("deletion of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    # --- Score ---------------------------------------------------------------------------------
    @hookimpl
    def score(self, state: CycleState, node_info: NodeInfo) -> Any:
        if not self.features.dra_prioritized_list:
            return 0
        s = state.get(STATE_KEY)
        if s is None or s is _EMPTY_STATE:
            return 0  # no claims: Go's Score returns 0 before reading any node
        if not isinstance(s, DraState):
            return 0, error("unable to convert state into stateData")
        if s.claims.empty():
            return 0
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0
        try:
            return compute_score((c for _, c in s.claims.all()), allocations)
        except ValueError as e:
            return 0, error(e)

    @hookimpl
    def score_batch(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int] | Status:
        s = state.get(STATE_KEY)
        if s is None or s is _EMPTY_STATE or not self.features.dra_prioritized_list:
            return [0] * len(nodes)
        out: list[int] = []
        for n in nodes:
            r = self.score(state, n)
            if isinstance(r, tuple):
                return r[1]
            out.append(r)
        return out

    @hookimpl
    def normalize_score(self, state: CycleState, scores: list[NodeScore]) -> None:
        s = state.get(STATE_KEY)
        if s is None or s is _EMPTY_STATE:
            return None  # DefaultNormalizeScore of zeros: zeros
        default_normalize_score(100, False, scores)
        return None

    @hookimpl
    def score_columns(self, state: CycleState, rows: Any) -> Any:
        if _node_by_node(state):
            return None  # claims: Score node by node
        return np.zeros(len(rows), np.int64)

    @hookimpl
    def normalize_score_columns(self, state: CycleState, scores: Any) -> Any:
        if not _node_by_node(state):
            return np.array(scores, np.int64)  # as normalize_score: zeros stay zeros
        return default_normalize_columns(100, False, np.array(scores, np.int64))

    # --- Reserve / Unreserve -------------------------------------------------------------------
    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return error(STATE_NOT_FOUND_MSG)
        if s.claims.empty():
            return None
        # allocated claims are reserved for real in PreBind
        num_with_allocator = sum(1 for _, c in s.claims.all() if allocation_of(c) is None)
        if num_with_allocator == 0:
            return None
        extended = s.claims.extended_resource_claim()
        to_allocate = list(s.claims.to_allocate())
        need_user_claims = any(c is not extended for _, c in to_allocate)
        if s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if allocations is None or not allocations.allocation_results:
            if not need_user_claims:
                return None  # only the extended-resource claim, served by a device plugin
            return error("claim allocation not found for node")
        results = allocations.allocation_results
        if len(results) != len(to_allocate) or len(results) != num_with_allocator:
            return error(
                f"internal error, have {len(results)} allocations, {len(to_allocate)} claims to allocate, "
                f"want {num_with_allocator} claims"
            )
        for alloc_index, (index, claim) in enumerate(to_allocate):
            allocation = results[alloc_index]
            s.informations_for_claim[index].allocation = allocation
            if claim is extended:
                claim = allocations.extended_resource_claim or claim
            c = copy.deepcopy(dict(claim))
            meta = c.setdefault("metadata", {})
            if FINALIZER not in (meta.get("finalizers") or ()):
                meta["finalizers"] = [*(meta.get("finalizers") or ()), FINALIZER]
            c.setdefault("status", {})["allocation"] = allocation
            self.manager.signal_claim_pending_allocation(uid_of(c), c)
        return None

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState) or s.claims.empty():
            return
        for _, claim in s.claims.all_user_claims():
            # the in-flight allocation goes once no pod shares it; the store never held it
            self.manager.maybe_remove_claim_pending_allocation(uid_of(claim), False)
            if allocation_of(claim) is not None and is_reserved_for_pod(pod.uid, claim):
                remove_reservation(self, claim, pod.uid)
        # unreserveExtendedResourceClaim: the in-flight allocation was signalled under the
        # claim's initial (temporary) UID. Go then restores its assume cache; Reserve wrote
        # nothing to handle.objects, so there is nothing to restore here.
        extended = s.claims.extended_resource_claim()
        if extended is not None:
            initial_uid = s.claims.initial_extended_resource_claim_uid
            unreserve_extended_resource_claim(
                self.manager.objects, extended,
                lambda: self.manager.maybe_remove_claim_pending_allocation(initial_uid, False),
                lambda: None,
            )

    # --- PreBind -------------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState) -> Status | None:
        # "It just checks state.claims to determine whether there are any claims"
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return Status(Code.ERROR, STATE_NOT_FOUND_MSG)
        if s.claims.empty():
            return SKIP
        return None

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return Status(Code.ERROR, STATE_NOT_FOUND_MSG)
        if s.claims.empty():
            return None
        try:
            for index, claim in s.claims.all():
                if not is_reserved_for_pod(pod.uid, claim):
                    # updated here so that Unreserve works with the stored claim
                    s.claims.set(index, bind_claim(self, s, index, pod, node_name))
            if not self.features.binding_conditions or not has_binding_conditions(s):
                return None
            wait_for_binding_conditions(self, s, pod, node_name)
        except BindError as e:
            return error(e)
        return None

    # --- SignPod -------------------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[()] | None:
        # dynamicresources.go SignPod: "pods with dra resource claims are not signable"
        return None if pod.spec.get("resourceClaims") else ()
