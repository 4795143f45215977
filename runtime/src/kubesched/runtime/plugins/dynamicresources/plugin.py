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

Pods without claims cost what they cost before: PreFilter writes a shared empty state and
returns Skip, Score and NormalizeScore are the zero columns.

Left out (alpha and off in 1.36): PodGroup claims (DRAWorkloadResourceClaims), node-allocatable
resources (DRANodeAllocatableResources). DRAExtendedResource's branches live in ``extended.py``.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeColumns,
    NodeInfo,
    NodeScore,
    NodeSelector,
    ObjectConflict,
    Pod,
    QueueingHint,
    Status,
    default_normalize_columns,
    default_normalize_score,
    hookimpl,
)
from kubesched.sdk.selectors import InvalidObjectError

from ...config._duration import parse_go_duration
from ...dra.deviceclasses import DeviceClassResolver, resolver_for
from .args import DynamicResourcesArgs
from .binding import (
    BindError,
    bind_claim,
    has_binding_conditions,
    is_claim_ready_for_binding,
    is_claim_timeout,
    wait_for_binding_conditions,
)
from .claims import ClaimStore, DraState, InformationForClaim, NodeAllocation
from .extended import (
    ExtendedResources,
    NodeExtendedClaim,
    delete_claim,
    filter_extended_resources,
    has_device_class_mapped_extended_resource,
    is_special_claim_name,
    pre_filter_extended_resources,
    unreserve_extended_resource_claim,
)
from .features import DEFAULT_FEATURES, SchedulerFeatures, allocator_features
from .manager import DraManager, manager_for
from .resourceclaim import (
    API_VERSION,
    FINALIZER,
    ClaimError,
    can_be_reserved,
    create_sub_request_ref,
    is_for_pod,
    is_reserved_for_pod,
    is_sub_request_ref,
    kobj,
    name,
)

__all__ = ["DynamicResources", "DynamicResourcesArgs", "compute_score", "device_unfit_reason"]

log = logging.getLogger(__name__)

NAME = "DynamicResources"
#: stateKey = Name in dynamicresources.go
STATE_KEY = NAME

#: PostFilter's answer when the cycle state holds no claim (dynamicresources.go PostFilter).
NO_NEW_CLAIMS_MSG = "no new claims to deallocate"
#: fwk.ErrNotFound's text: PostFilter without the state PreFilter writes.
STATE_NOT_FOUND_MSG = "not found"
#: resourceapi.FirstAvailableDeviceRequestMaxSize
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8

Claim = Mapping[str, Any]

#: the state of every pod without claims (nothing in it ever changes)
_EMPTY_STATE = DraState()


def _unschedulable(reason: str) -> Status:
    """statusUnschedulable: UnschedulableAndUnresolvable."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def _error(err: BaseException | str) -> Status:
    """statusError: fwk.AsStatus(err)."""
    return Status(Code.ERROR, str(err), error=err if isinstance(err, BaseException) else None)


def _allocation(claim: Claim) -> Any:
    return (claim.get("status") or {}).get("allocation")


def _uid(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("uid") or ""


def _name(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


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
        # QHint on: the UpdateNodeTaint workaround is not needed
        return [
            ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent("ResourceClaim", ActionType.ADD | ActionType.UPDATE), self.is_schedulable_after_claim_change),
            ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM), self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent("DeviceClass", ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent("ResourceSlice", ActionType.ADD | ActionType.UPDATE)),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """isSchedulableAfterClaimChange: a claim was added or updated. Queue on deallocation of
        any claim, and on creation of or a status change in one of the pod's claims. Raises
        (which queues the pod) for an object that is not a claim."""
        for o in (old_obj, new_obj):
            if o is not None and not isinstance(o, Mapping):
                raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: {type(o).__name__}")
        new_uid = _uid(new_obj) if new_obj is not None else None
        uses = False

        def see(_n: str, claim: dict[str, Any]) -> None:
            nonlocal uses
            if _uid(claim) == new_uid:
                uses = True

        try:
            self.foreach_pod_resource_claim(pod, see)
        except ClaimError:
            return QueueingHint.SKIP  # not schedulable yet
        if old_obj is not None and _allocation(old_obj) is not None and new_obj is not None and _allocation(new_obj) is None:
            return QueueingHint.QUEUE  # deallocated: its devices may fit the pod
        if not uses:
            return QueueingHint.SKIP
        if old_obj is None:
            return QueueingHint.QUEUE
        if (old_obj.get("status") or {}) == (new_obj.get("status") or {}):
            return QueueingHint.SKIP  # e.g. a finalizer added
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """isSchedulableAfterPodChange: the pod's own update recorded its generated claims."""
        if not isinstance(new_obj, Pod):
            raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: {type(new_obj).__name__}")
        if pod.uid != new_obj.uid:
            return QueueingHint.SKIP
        try:
            self.foreach_pod_resource_claim(new_obj, None)
        except ClaimError:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    # --- PreEnqueue ----------------------------------------------------------------------------
    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.get("resourceClaims"):
            return None
        try:
            self.foreach_pod_resource_claim(pod, None)
        except ClaimError as e:
            return _unschedulable(str(e))
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
                return Status.skip()
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
                return _unschedulable(str(e))
            ext, st = self._pre_filter_extended_resources(pod)
            if st is not None:
                return st
        s.dra_extended_resource = ext
        claims = ClaimStore(user_claims, ext.claim if ext is not None else None)
        if claims.empty():
            return Status.skip()

        num_to_allocate = 0
        s.informations_for_claim = [InformationForClaim() for _ in range(len(claims))]
        extended = claims.extended_resource_claim()
        for index, claim in claims.all():
            allocation = _allocation(claim)
            if allocation is not None and not can_be_reserved(claim) and not is_reserved_for_pod(pod.uid, claim):
                return _unschedulable("resourceclaim in use")
            if allocation is not None:
                raw_selector = allocation.get("nodeSelector")
                if raw_selector is not None:
                    try:
                        s.informations_for_claim[index].available_on_nodes = NodeSelector.parse(raw_selector)
                    except InvalidObjectError as e:
                        return _error(e)
                continue
            num_to_allocate += 1
            if self.manager.get_pending_allocation(_uid(claim)) is not None:
                return _unschedulable(f"resource claim {kobj(claim)} is in the process of being allocated")
            if claim is extended:
                continue
            st = self._validate_requests(claim)
            if st is not None:
                return st

        if num_to_allocate > 0:
            try:
                s.allocator = self._new_allocator()
            except Exception as e:
                return _error(e)
            s.node_allocations = {}
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

    def _validate_requests(self, claim: Claim) -> Status | None:
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            req_name = request.get("name") or ""
            exactly = request.get("exactly")
            first_available = request.get("firstAvailable")
            if exactly is not None:
                st = self._validate_device_class(exactly.get("deviceClassName") or "", req_name)
            elif first_available:
                if not self.features.dra_prioritized_list:
                    return _unschedulable(
                        f"resource claim {kobj(claim)}, request {req_name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                    )
                st = None
                for sub in first_available:
                    st = self._validate_device_class(sub.get("deviceClassName") or "", f"{req_name}/{sub.get('name') or ''}")
                    if st is not None:
                        break
            else:
                return _unschedulable(f"resource claim {kobj(claim)}, request {req_name}: unknown request type")
            if st is not None:
                return st
        return None

    def _validate_device_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return _error(f"request {request_name}: unsupported request type")
        if self.manager.get_device_class(class_name) is None:
            return _unschedulable(f"request {request_name}: device class {class_name} does not exist")
        return None

    def _new_allocator(self) -> Any:
        """The structured allocator for this pod: allocated and in-flight devices, every slice
        (DRADeviceTaintRules is off: the slices as they are), the classes by name."""
        from kubesched.runtime.dra.allocator import Allocator, Features
        from kubesched.runtime.dra.cel import Cache

        if self.features.dra_consumable_capacity:
            allocated = self.manager.gather_allocated_state(True)
        else:
            allocated = self.manager.gather_allocated_state(False)
        if self._cel_cache is None:
            self._cel_cache = Cache(10)
        return Allocator(
            Features(**allocator_features(self.features)), allocated, self.manager.get_device_class,
            self.manager.list_slices(), self._cel_cache,
        )

    # --- Filter --------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return _error(STATE_NOT_FOUND_MSG)
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
            if _allocation(claim) is None:
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
            from kubesched.runtime.dra.allocator.types import (
                AllocatorError,
                AllocatorTimeout,
                FailedOnNode,
            )

            claims_to_allocate: list[Claim] = []
            pending: list[Mapping[str, Any]] = []
            extended = s.claims.extended_resource_claim()
            for index, claim in s.claims.to_allocate():
                if claim is extended and node_claim is not None:
                    claim = node_claim.claim
                info = s.informations_for_claim[index]
                if info.allocation is not None:
                    pending.append(info.allocation)
                    continue
                claims_to_allocate.append(claim)
            deadline = None
            if self.features.dra_scheduler_filter_timeout and self.filter_timeout > 0:
                deadline = time.monotonic() + self.filter_timeout
            try:
                result = s.allocator.allocate(node.raw, claims_to_allocate, deadline=deadline)
            except AllocatorTimeout:
                # potentially transient: Error, so the pod retries through backoff
                return _error(f"node {node_name}: timed out trying to allocate devices")
            except FailedOnNode as e:
                return _unschedulable(str(e))
            except AllocatorError as e:
                # a broken claim or class (e.g. a CEL error): abort scheduling the pod
                return _error(e)
            if result is None or len(result) != len(claims_to_allocate):
                why = getattr(s.allocator, "why_not", None)
                if why:
                    with s.lock:
                        s.why_not[node_name] = why
                return _unschedulable("cannot allocate all claims")
            allocations = [*result, *pending]

        with s.lock:
            if unavailable:
                s.unavailable_claims.update(unavailable)
                return _unschedulable("resourceclaim not available on the node")
            if s.allocator is not None:
                s.node_allocations[node_name] = NodeAllocation(
                    allocations,
                    node_claim.claim if node_claim is not None else None,
                    node_claim.mappings if node_claim is not None else [],
                )
        return None

    @hookimpl
    def filter_columns(self, pod: Pod, columns: NodeColumns) -> tuple[Any, list[Status | None]] | None:
        if self._has_claims(pod):
            return None  # claims: Filter node by node
        return np.zeros(columns.n, np.int8), [None]

    def _has_claims(self, pod: Pod) -> bool:
        """PreFilter's decision without the cycle state (for the column forms): the pod has
        claims, or extended resources a DeviceClass serves (the resolver PreFilter refreshed).
        With no DeviceClass naming any resource the resolver is empty: no per-pod work."""
        if pod.spec.get("resourceClaims"):
            return True
        if not self.features.dra_extended_resource:
            return False
        resolver = self.resolver
        if not resolver:
            return False
        scalars = pod.requests.scalar
        return bool(scalars) and has_device_class_mapped_extended_resource(scalars, resolver)

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
        stale_extended = extended is not None and not is_special_claim_name(_name(extended))
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
                    return None, _error(e)
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        if stale_extended:
            assert extended is not None
            try:
                delete_claim(self.manager.objects, extended)
            except Exception as e:
                return None, _error(e)
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
            return 0, _error("unable to convert state into stateData")
        if s.claims.empty():
            return 0
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0
        try:
            return compute_score((c for _, c in s.claims.all()), allocations)
        except ValueError as e:
            return 0, _error(e)

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
    def score_columns(self, pod: Pod, rows: Any) -> Any:
        if self._has_claims(pod):
            return None  # claims: Score node by node
        return np.zeros(len(rows), np.int64)

    @hookimpl
    def normalize_score_columns(self, pod: Pod, scores: Any) -> Any:
        if not self._has_claims(pod):
            return np.array(scores, np.int64)  # as normalize_score: zeros stay zeros
        return default_normalize_columns(100, False, np.array(scores, np.int64))

    # --- Reserve / Unreserve -------------------------------------------------------------------
    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return _error(STATE_NOT_FOUND_MSG)
        if s.claims.empty():
            return None
        # allocated claims are reserved for real in PreBind
        num_with_allocator = sum(1 for _, c in s.claims.all() if _allocation(c) is None)
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
            return _error("claim allocation not found for node")
        results = allocations.allocation_results
        if len(results) != len(to_allocate) or len(results) != num_with_allocator:
            return _error(
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
            self.manager.signal_claim_pending_allocation(_uid(c), c)
        return None

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState) or s.claims.empty():
            return
        for _, claim in s.claims.all_user_claims():
            # the in-flight allocation goes once no pod shares it; the store never held it
            self.manager.maybe_remove_claim_pending_allocation(_uid(claim), False)
            if _allocation(claim) is not None and is_reserved_for_pod(pod.uid, claim):
                self._remove_reservation(claim, pod.uid)
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

    def _remove_reservation(self, claim: Claim, pod_uid: str) -> None:
        """Drop the pod from ``status.reservedFor`` (Go: a strategic-merge ``$patch: delete``
        by UID with the claim's UID as precondition; here a merge patch of the whole list with
        the resourceVersion, read again on a conflict). Errors are logged: the next attempt
        gets here again."""
        meta = claim.get("metadata") or {}
        cur: Mapping[str, Any] = claim
        for attempt in range(5):
            try:
                if attempt:
                    cur = self.manager.objects.get(API_VERSION, "ResourceClaim", meta.get("name") or "", meta.get("namespace"))
                if _uid(cur) != _uid(claim):
                    return
                reserved = (cur.get("status") or {}).get("reservedFor") or []
                keep = [r for r in reserved if r.get("uid") != pod_uid]
                if len(keep) == len(reserved):
                    return
                self.manager.objects.patch(
                    API_VERSION, "ResourceClaim", meta.get("name") or "", {"status": {"reservedFor": keep}},
                    meta.get("namespace"), resource_version=(cur.get("metadata") or {}).get("resourceVersion"),
                    subresource="status",
                )
                return
            except ObjectConflict:
                continue
            except Exception as e:
                log.error("unreserve: resourceclaim %s: %s", kobj(claim), e)
                return
        log.error("unreserve: resourceclaim %s: too many conflicts", kobj(claim))

    # --- PreBind -------------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState) -> Status | None:
        # "It just checks state.claims to determine whether there are any claims"
        s = state.get(STATE_KEY)
        if not isinstance(s, DraState):
            return Status(Code.ERROR, STATE_NOT_FOUND_MSG)
        if s.claims.empty():
            return Status.skip()
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
            return _error(e)
        return None

    # --- SignPod -------------------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[()] | None:
        # dynamicresources.go SignPod: "pods with dra resource claims are not signable"
        return None if pod.spec.get("resourceClaims") else ()


def compute_score(claims: Any, allocations: NodeAllocation) -> int:
    """computeScore: for every allocated subrequest of a ``firstAvailable`` request,
    ``8 - its index``. Claims allocated earlier carry their allocation; the others take
    Filter's results in order. Raises ValueError when there are fewer results than claims."""
    score = 0
    unallocated_index = 0
    results = allocations.allocation_results
    for claim in claims:
        allocation = _allocation(claim)
        if allocation is None:
            if unallocated_index >= len(results):
                raise ValueError(
                    f"number of allocations {len(results)} is smaller than number of claims needing allocation"
                )
            allocation = results[unallocated_index]
            unallocated_index += 1
        allocated_sub_requests = {
            r.get("request") or "" for r in (allocation.get("devices") or {}).get("results") or ()
            if is_sub_request_ref(r.get("request") or "")
        }
        for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if req.get("exactly") is not None:
                continue
            for i, sub in enumerate(req.get("firstAvailable") or ()):
                if create_sub_request_ref(req.get("name") or "", sub.get("name") or "") in allocated_sub_requests:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
    return score


def device_unfit_reason(state: CycleState, node_name: str) -> str | None:
    """For ``kubesched explain``: which claim and request could not be satisfied on the node
    in this cycle and why (the allocator's ``why_not``), or None."""
    s = state.get(STATE_KEY)
    if not isinstance(s, DraState):
        return None
    return s.why_not.get(node_name)
