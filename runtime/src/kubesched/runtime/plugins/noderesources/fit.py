"""NodeResourcesFit: does the node have room for the pod's requests, and how full is it?

A port of kube-scheduler's ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (v1.36; see
the package docstring for the sources followed and what is left out).

* PreFilter computes the pod's requests once (``computePodResourceRequest``: containers summed,
  init containers as a floor, sidecars, pod-level requests, overhead). A pod with a restartable
  init container is UnschedulableAndUnresolvable when SidecarContainers is off. PreFilter never
  returns Skip: every pod occupies a pod slot, so Filter always has work to do.
* Filter reports every shortage, as Go does: ``Too many pods``, ``Insufficient cpu``,
  ``Insufficient memory``, ``Insufficient ephemeral-storage``, ``Insufficient <scalar>``
  (extended resources such as ``nvidia.com/gpu``, hugepages, ``kubernetes.io/`` resources), in
  that order (scalars sorted by name; Go's map order is random). The status is Unschedulable, or
  UnschedulableAndUnresolvable when a request exceeds the node's whole allocatable amount (no
  preemption can help). ``ignoredResources`` / ``ignoredResourceGroups`` skip extended resources.
* PreScore/Score rank nodes with the configured scoring strategy (``resource_allocation.py``).
* DRAExtendedResource (beta, on in v1.36): an extended resource that a DeviceClass serves
  (``spec.extendedResourceName`` or ``deviceclass.resource.kubernetes.io/<class>``, see
  :mod:`kubesched.runtime.dra.deviceclasses`) is not checked on a node whose allocatable does
  not list it (``shouldDelegateResourceToDRA``): DynamicResources allocates it there. The
  classes are looked up once per pod in PreFilter, so a pod without such a resource costs nothing
  more; SignPod does not sign such a pod (Go: Unschedulable ``signature disabled when dra
  extended resources are used in the cluster``).
* EnqueueExtensions: assigned pod deleted (and scaled down under InPlacePodVerticalScaling), node
  added or its allocatable changed, a DeviceClass added or updated (DRAExtendedResource), with
  Go's queueing hints. A scale-down is read as
  ``resource.PodRequests`` with status resources, pod-level ones included
  (InPlacePodLevelResourcesVerticalScaling, v1.36).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeColumns,
    NodeInfo,
    Pod,
    QueueingHint,
    Resource,
    StateData,
    Status,
    hookimpl,
    is_scalar_resource,
)

from ...dra.deviceclasses import DEVICE_CLASS_PREFIX, DeviceClassResolver, resolver_for
from .args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
)
from .column_cache import matrix
from .features import DEFAULT_FEATURES, Features
from .least_allocated import (
    least_column_scorer,
    least_pair_column_scorer,
    least_pair_scorer,
    least_resource_scorer,
)
from .most_allocated import (
    most_column_scorer,
    most_pair_column_scorer,
    most_pair_scorer,
    most_resource_scorer,
)
from .pod_requests import (
    compute_pod_resource_request,
    is_extended_resource_name,
    pod_requests,
    resources_signature,
)
from .requested_to_capacity_ratio import (
    requested_to_capacity_ratio_column_scorer,
    requested_to_capacity_ratio_pair_scorer,
    requested_to_capacity_ratio_scorer,
)
from .resource_allocation import ResourceAllocationScorer

__all__ = [
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "Fit",
    "InsufficientResource",
    "fits",
    "fits_request",
    "has_restartable_init_container",
    "have_any_requested_resources_increased",
    "is_fit",
]

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_RESTARTABLE_INIT = (
    "Pod has a restartable init container and the SidecarContainers feature is disabled"
)
_TOO_MANY_PODS = "Too many pods"
_INSUFFICIENT_CPU = "Insufficient cpu"
_INSUFFICIENT_MEMORY = "Insufficient memory"
_INSUFFICIENT_EPHEMERAL = "Insufficient ephemeral-storage"
#: SignPod's refusal for a pod with an extended resource served by a DeviceClass
ERR_SIGNATURE_DRA = "signature disabled when dra extended resources are used in the cluster"


@dataclass(slots=True)
class InsufficientResource:
    """What limit was hit: the resource, the Filter reason, the pod's request, the amount already
    requested on the node and the node's allocatable amount. ``unresolvable`` when the request
    exceeds the allocatable amount itself, so evicting pods (preemption) cannot help."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


class _PreFilterState(StateData):
    """preFilterState: the pod's requests, with what Filter checks precomputed."""

    __slots__ = ("dra", "empty", "ephemeral_storage", "memory", "milli_cpu", "resource", "scalars")

    def __init__(
        self,
        resource: Resource,
        ignored: Collection[str] = (),
        ignored_groups: Collection[str] = (),
        resolver: DeviceClassResolver | None = None,
    ) -> None:
        self.resource = resource
        self.milli_cpu = resource.milli_cpu
        self.memory = resource.memory
        self.ephemeral_storage = resource.ephemeral_storage
        # Go returns early when nothing is requested; ScalarResources holds zero entries too
        self.empty = not (
            resource.milli_cpu or resource.memory or resource.ephemeral_storage or resource.scalar
        )
        scalars = []
        for name in sorted(resource.scalar):
            q = resource.scalar[name]
            if q == 0:
                continue
            if is_extended_resource_name(name):
                prefix = name.split("/", 1)[0] if ignored_groups else ""
                if name in ignored or prefix in ignored_groups:
                    continue
            scalars.append((name, q))
        self.scalars = tuple(scalars)
        #: the scalars a DeviceClass serves: left to DynamicResources where the node's
        #: allocatable amount is 0 (shouldDelegateResourceToDRA)
        self.dra: frozenset[str] = _delegated(self.scalars, resolver)

    def clone(self) -> _PreFilterState:
        return self


def dra_resolver(features: Features, handle: Any) -> DeviceClassResolver | None:
    """Go's ``h.SharedDRAManager().DeviceClassResolver()`` for the noderesources plugins: None
    without DRAExtendedResource or without object access (Go's nil draManager)."""
    if not features.enable_dra_extended_resource or handle is None:
        return None
    objects = getattr(handle, "objects", None)
    return resolver_for(objects) if objects is not None else None


def dra_signature_refusal(resolver: DeviceClassResolver | None, pod: Pod) -> Status | None:
    """SignPod's refusal (Fit and BalancedAllocation): Unschedulable ``signature disabled when
    dra extended resources are used in the cluster`` for a pod with a non-zero request of a
    resource a DeviceClass serves."""
    if resolver is None:
        return None
    scalars = pod.requests.scalar
    if not scalars:
        return None
    resolver.refresh()
    if not resolver:
        return None
    for name, q in scalars.items():
        if q != 0 and resolver.get_device_class(name) is not None:
            return Status(Code.UNSCHEDULABLE, ERR_SIGNATURE_DRA)
    return None


def _delegated(scalars: Sequence[tuple[str, int]], resolver: DeviceClassResolver | None) -> frozenset[str]:
    if resolver is None or not scalars:
        return frozenset()
    resolver.refresh()
    if not resolver:
        return frozenset()
    return frozenset(name for name, _q in scalars if resolver.get_device_class(name) is not None)


class _PreScoreState(StateData):
    """preScoreState: the pod's requests in the order of the scoring resources."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        return self


def _check(s: _PreFilterState, node_info: NodeInfo) -> list[InsufficientResource] | None:
    """fitsRequest; ``None`` when the pod fits."""
    alloc = node_info.allocatable
    n_pods = len(node_info.pods)
    out: list[InsufficientResource] | None = None
    if n_pods + 1 > alloc.allowed_pod_number:
        out = [InsufficientResource("pods", _TOO_MANY_PODS, 1, n_pods, alloc.allowed_pod_number)]
    if s.empty:
        return out
    req = node_info.requested
    q = s.milli_cpu
    if q > 0 and q > alloc.milli_cpu - req.milli_cpu:
        out = out or []
        out.append(
            InsufficientResource(
                "cpu", _INSUFFICIENT_CPU, q, req.milli_cpu, alloc.milli_cpu, q > alloc.milli_cpu
            )
        )
    q = s.memory
    if q > 0 and q > alloc.memory - req.memory:
        out = out or []
        out.append(
            InsufficientResource(
                "memory", _INSUFFICIENT_MEMORY, q, req.memory, alloc.memory, q > alloc.memory
            )
        )
    q = s.ephemeral_storage
    if q > 0 and q > alloc.ephemeral_storage - req.ephemeral_storage:
        out = out or []
        out.append(
            InsufficientResource(
                "ephemeral-storage",
                _INSUFFICIENT_EPHEMERAL,
                q,
                req.ephemeral_storage,
                alloc.ephemeral_storage,
                q > alloc.ephemeral_storage,
            )
        )
    if s.scalars:
        alloc_scalar = alloc.scalar
        req_scalar = req.scalar
        for name, q in s.scalars:
            a = alloc_scalar.get(name, 0)
            u = req_scalar.get(name, 0)
            if q > a - u:
                if a <= 0 and name in s.dra:
                    continue  # DynamicResources allocates it on this node
                out = out or []
                out.append(InsufficientResource(name, "Insufficient " + name, q, u, a, q > a))
    return out


def fits_request(
    pod_request: Resource,
    node_info: NodeInfo,
    ignored_extended_resources: Collection[str] | None = None,
    ignored_resource_groups: Collection[str] | None = None,
    resolver: DeviceClassResolver | None = None,
) -> list[InsufficientResource]:
    """fitsRequest: every resource the node lacks for ``pod_request``; empty when it fits.
    With a ``resolver`` (Go's draManager), resources a DeviceClass serves are not checked on a
    node whose allocatable does not list them."""
    s = _PreFilterState(
        pod_request, ignored_extended_resources or (), ignored_resource_groups or (), resolver
    )
    return _check(s, node_info) or []


def fits(
    pod: Pod,
    node_info: NodeInfo,
    *,
    enable_pod_level_resources: bool = True,
    resolver: DeviceClassResolver | None = None,
) -> list[InsufficientResource]:
    """Fits: whether the node has room for the pod (no resources ignored)."""
    return fits_request(
        compute_pod_resource_request(pod, pod_level=enable_pod_level_resources),
        node_info,
        resolver=resolver,
    )


def is_fit(
    pod: Pod,
    node: Node | Mapping[str, Any] | None,
    *,
    enable_pod_level_resources: bool = True,
    resolver: DeviceClassResolver | None = None,
) -> bool:
    """isFit: the pod fits the node when it is empty; False for no node."""
    if node is None:
        return False
    ni = NodeInfo(node if isinstance(node, Node) else Node(node))
    return not fits(pod, ni, enable_pod_level_resources=enable_pod_level_resources, resolver=resolver)


def have_any_requested_resources_increased(
    pod: Pod,
    original_node: Node | Mapping[str, Any],
    modified_node: Node | Mapping[str, Any],
    *,
    enable_pod_level_resources: bool = True,
    resolver: DeviceClassResolver | None = None,
) -> bool:
    """haveAnyRequestedResourcesIncreased: the node's pod count, or the allocatable amount of a
    resource the pod requests, went up; or the pod requests a resource a DeviceClass serves and
    the node does not list (``resolver``: DRAExtendedResource)."""
    pr = compute_pod_resource_request(pod, pod_level=enable_pod_level_resources)
    orig = (original_node if isinstance(original_node, Node) else Node(original_node)).allocatable
    mod = (modified_node if isinstance(modified_node, Node) else Node(modified_node)).allocatable
    if mod.allowed_pod_number > orig.allowed_pod_number:
        return True
    if pr.milli_cpu == 0 and pr.memory == 0 and pr.ephemeral_storage == 0 and not pr.scalar:
        return False
    if (
        (pr.milli_cpu > 0 and mod.milli_cpu > orig.milli_cpu)
        or (pr.memory > 0 and mod.memory > orig.memory)
        or (pr.ephemeral_storage > 0 and mod.ephemeral_storage > orig.ephemeral_storage)
    ):
        return True
    for name, q in pr.scalar.items():
        if q == 0:
            continue
        if mod.scalar.get(name, 0) > orig.scalar.get(name, 0):
            return True
        if resolver is not None and mod.scalar.get(name, 0) <= 0 and resolver.get_device_class(name) is not None:
            return True
    return False


def has_restartable_init_container(pod: Pod) -> bool:
    return any(c.get("restartPolicy") == "Always" for c in pod.init_containers)


def _as(obj: Any, cls: type[Pod] | type[Node]) -> tuple[bool, Any]:
    """schedutil.As: (ok, view or None); not ok when the object is not a ``cls``."""
    if obj is None:
        return True, None
    if isinstance(obj, cls):
        return True, obj
    if isinstance(obj, Mapping) and obj.get("kind", cls.__name__) == cls.__name__:
        return True, cls(obj)
    return False, None


def _to_resource(reqs: Mapping[str, Any]) -> Resource:
    r = Resource()
    for k, v in reqs.items():
        r.add_quantity(k, v)
    return r


def _strategy(args: NodeResourcesFitArgs) -> ResourceAllocationScorer:
    """nodeResourceStrategyTypeMap. As in Go, the scorer is built without the plugin's
    InPlacePodVerticalScaling/PodLevelResources flags (they stay false on the embedded
    resourceAllocationScorer), so Fit's scoring reads container requests only."""
    s = args.scoring_strategy
    if s is None:
        raise ValueError("scoring strategy not specified")
    resources = s.resources
    # the (cpu, memory) form of the strategy, for the straight-line path
    pair = len(resources) == 2
    if s.type == LEAST_ALLOCATED:
        return ResourceAllocationScorer(
            LEAST_ALLOCATED,
            least_resource_scorer(resources),
            resources,
            pair_scorer=least_pair_scorer(resources) if pair else None,
            column_scorer=least_column_scorer(resources),
            pair_column_scorer=least_pair_column_scorer(resources) if pair else None,
        )
    if s.type == MOST_ALLOCATED:
        return ResourceAllocationScorer(
            MOST_ALLOCATED,
            most_resource_scorer(resources),
            resources,
            pair_scorer=most_pair_scorer(resources) if pair else None,
            column_scorer=most_column_scorer(resources),
            pair_column_scorer=most_pair_column_scorer(resources) if pair else None,
        )
    if s.type == REQUESTED_TO_CAPACITY_RATIO:
        shape = (
            s.requested_to_capacity_ratio.shape if s.requested_to_capacity_ratio is not None else []
        )
        return ResourceAllocationScorer(
            REQUESTED_TO_CAPACITY_RATIO,
            requested_to_capacity_ratio_scorer(resources, shape),
            resources,
            pair_scorer=requested_to_capacity_ratio_pair_scorer(resources, shape) if pair else None,
            column_scorer=requested_to_capacity_ratio_column_scorer(resources, shape),
        )
    raise ValueError(f"scoring strategy {s.type} is not supported")


def _filter_columns_general(s: _PreFilterState, columns: NodeColumns) -> tuple[Any, Mapping[int, Status]]:
    """Fit's column Filter one check at a time: for DRA-served scalars (not checked where the
    node lacks them) and scalars no node has."""
    checks: list[tuple[str, Any, Any]] = []  # (reason, insufficient, unresolvable)
    n_pods = columns.pod_count
    checks.append((_TOO_MANY_PODS, n_pods + 1 > columns.allocatable("pods"), None))
    if not s.empty:
        for name, reason, q in (
            ("cpu", _INSUFFICIENT_CPU, s.milli_cpu),
            ("memory", _INSUFFICIENT_MEMORY, s.memory),
            ("ephemeral-storage", _INSUFFICIENT_EPHEMERAL, s.ephemeral_storage),
        ):
            if q > 0:
                a = columns.allocatable(name)
                checks.append((reason, q > a - columns.requested(name), q > a))
        for name, q in s.scalars:
            a = columns.allocatable(name)
            insufficient = q > a - columns.requested(name)
            if name in s.dra:
                insufficient = insufficient & (a > 0)  # left to DynamicResources
            checks.append(("Insufficient " + name, insufficient, q > a))
    codes = np.zeros(columns.n, np.int64)
    unresolvable = None
    for bit, (_reason, insufficient, unres) in enumerate(checks):
        codes |= insufficient.astype(np.int64) << bit
        if unres is not None:
            u = insufficient & unres
            unresolvable = u if unresolvable is None else unresolvable | u
    if unresolvable is not None:
        codes |= unresolvable.astype(np.int64) << len(checks)
    table: dict[int, Status] = {}
    rejected = codes[codes != 0]
    for c in np.unique(rejected).tolist() if rejected.size else ():
        reasons = [r for bit, (r, _i, _u) in enumerate(checks) if c >> bit & 1]
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if c >> len(checks) & 1 else Code.UNSCHEDULABLE
        table[c] = Status(code, *reasons)
    return codes, table


_NEVER = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_FIXED_REASONS = {
    "pods": _TOO_MANY_PODS,
    "cpu": _INSUFFICIENT_CPU,
    "memory": _INSUFFICIENT_MEMORY,
    "ephemeral-storage": _INSUFFICIENT_EPHEMERAL,
}


_CODE_BITS: dict[int, tuple[Any, Any]] = {}


def _code_bits(bits: int) -> tuple[Any, Any]:
    """The unsigned dtype holding ``bits`` bits and the shifts 0..bits-1 (a column) in it."""
    got = _CODE_BITS.get(bits)
    if got is None:
        dtype = np.uint8 if bits <= 8 else np.uint16 if bits <= 16 else np.uint32 if bits <= 32 else np.uint64
        got = _CODE_BITS[bits] = (dtype, np.arange(bits, dtype=dtype)[:, None])
    return got


class _Statuses(dict[int, Status]):
    """The Filter statuses of :meth:`Fit.filter_columns`'s codes, each made when first read
    (a pod meets a few of the possible codes): bit ``j`` is "lacks resource ``names[j]``", bit
    ``len(names)`` "a request exceeds the node's allocatable amount" (unresolvable)."""

    __slots__ = ("names",)

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__()
        self.names = names

    def __missing__(self, c: int) -> Status:
        c = int(c)
        names = self.names
        if c <= 0 or c >> (len(names) + 1):
            raise KeyError(c)
        reasons = [_FIXED_REASONS.get(n) or "Insufficient " + n for j, n in enumerate(names) if c >> j & 1]
        if not reasons:
            raise KeyError(c)
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if c >> len(names) & 1 else Code.UNSCHEDULABLE
        st = self[c] = Status(code, *reasons)
        return st


class Fit:
    """The NodeResourcesFit plugin (PreFilter, Filter, PreScore, Score, EnqueueExtensions)."""

    name = NAME
    Args = NodeResourcesFitArgs
    args_kind = "NodeResourcesFitArgs"

    def __init__(
        self,
        args: NodeResourcesFitArgs | None = None,
        handle: Any = None,
        *,
        features: Features | None = None,
    ) -> None:
        if args is None:
            args = NodeResourcesFitArgs()
        args.validate()  # NewFit validates, whoever built the args
        self.args = args
        self.handle = handle
        self.features = features if features is not None else DEFAULT_FEATURES
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups)
        self.scorer = _strategy(args)
        self.resources = self.scorer.resources
        #: the DeviceClass resolver of handle.objects (Go's draManager.DeviceClassResolver());
        #: None without the feature or without object access (Go's nil draManager)
        self.resolver = dra_resolver(self.features, handle)
        #: filter_columns' statuses by the matrix's resource names: a code's Status is made
        #: once, not once per pod (statuses are shared as the per-node reuse table shares them)
        self._column_statuses: dict[tuple[str, ...], _Statuses] = {}

    # PreFilter / Filter ------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        if not self.features.enable_sidecar_containers and has_restartable_init_container(pod):
            # The scheduler's totals for sidecars match v1.28+ kubelets only: refuse the pod.
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_RESTARTABLE_INIT)
        # Pod.requests is computePodResourceRequest with pod-level resources, kept on the
        # (read-only) view: the state only reads it
        request = (
            pod.requests
            if self.features.enable_pod_level_resources
            else compute_pod_resource_request(pod, pod_level=False)
        )
        state.write(
            PRE_FILTER_STATE_KEY,
            _PreFilterState(request, self.ignored_resources, self.ignored_resource_groups, self.resolver),
        )
        return None

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable:
        if self.dra_signature_refusal(pod) is not None:
            return None  # not signable
        return resources_signature(pod)

    def dra_signature_refusal(self, pod: Pod) -> Status | None:
        """Go's SignPod status for a pod with an extended resource a DeviceClass serves
        (kubesched's sign_pod returns None then: the pod is not signable)."""
        return dra_signature_refusal(self.resolver, pod)

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if type(s) is not _PreFilterState:
            if s is None:
                return Status(
                    Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
                )
            return Status(Code.ERROR, f"{s!r}  convert to NodeResourcesFit.preFilterState error")
        insufficient = _check(s, node_info)
        if insufficient is None:
            return None
        code = Code.UNSCHEDULABLE
        reasons = []
        for r in insufficient:
            reasons.append(r.reason)
            if r.unresolvable:
                code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return Status(code, *reasons)

    @hookimpl
    def filter_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        s = state.get(PRE_FILTER_STATE_KEY)
        if type(s) is not _PreFilterState:
            return [self.filter(state, pod, ni) for ni in nodes]
        out: list[Status | None] = []
        for ni in nodes:
            insufficient = _check(s, ni)
            if insufficient is None:
                out.append(None)
                continue
            code = Code.UNSCHEDULABLE
            for r in insufficient:
                if r.unresolvable:
                    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            out.append(Status(code, *[r.reason for r in insufficient]))
        return out

    @hookimpl
    def filter_columns(self, state: CycleState, pod: Pod, columns: NodeColumns) -> tuple[Any, Mapping[int, Status]] | None:
        """Filter over every node: one bit per resource the node lacks (in Filter's order of
        reasons), plus a bit for "unresolvable"; the Status of a code is made when it is read."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if type(s) is not _PreFilterState:
            return None
        if s.dra:
            return _filter_columns_general(s, columns)
        m = matrix(columns)
        r = len(m.names)
        if r >= 63:
            return _filter_columns_general(s, columns)
        # the pod's request per row of the matrix; _NEVER (no node lacks it) where Filter does
        # not check the resource
        q = [_NEVER] * r
        q[0] = 1  # a pod slot: "Too many pods" when pod count + 1 > allocatable pods
        if not s.empty:
            if s.milli_cpu > 0:
                q[1] = s.milli_cpu
            if s.memory > 0:
                q[2] = s.memory
            if s.ephemeral_storage > 0:
                q[3] = s.ephemeral_storage
            index = m.index
            for name, v in s.scalars:
                i = index.get(name)
                if i is None:  # no node has it nor has it requested: the general form
                    return _filter_columns_general(s, columns)
                if v <= _NEVER:  # _NEVER is "not checked"; below int64: the general form
                    return _filter_columns_general(s, columns)
                q[i] = v
            if max(q) > _INT64_MAX:
                return _filter_columns_general(s, columns)  # beyond int64: the general form
        qa = np.array(q, np.int64)[:, None]
        insufficient = np.greater(qa, m.free)  # (resources, nodes)
        # the code: bit j set where the node lacks resource j (or-reduced over the rows)
        dtype, shifts = _code_bits(r + 1)
        codes = np.bitwise_or.reduce(insufficient.astype(dtype) << shifts[:r], axis=0)
        if not s.empty:
            qa[0] = _NEVER  # "Too many pods" is never unresolvable
            u = np.greater(qa, m.alloc)
            u &= insufficient
            codes |= np.logical_or.reduce(u, axis=0).astype(dtype) << shifts[r]
        table = self._column_statuses.get(m.names)
        if table is None:
            table = self._column_statuses[m.names] = _Statuses(m.names)
        return codes, table

    # PreScore / Score --------------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod) -> Status | None:
        state.write(
            PRE_SCORE_STATE_KEY,
            _PreScoreState(self.scorer.calculate_pod_resource_request_list(pod)),
        )
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if type(s) is _PreScoreState:
            reqs = s.pod_requests
        else:
            reqs = self.scorer.calculate_pod_resource_request_list(pod)
        return self.scorer.score(node_info, reqs)

    @hookimpl
    def score_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Any] | Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        reqs = s.pod_requests if type(s) is _PreScoreState else self.scorer.calculate_pod_resource_request_list(pod)
        return self.scorer.score_many(nodes, reqs)

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        reqs = s.pod_requests if type(s) is _PreScoreState else self.scorer.calculate_pod_resource_request_list(pod)
        return self.scorer.score_columns(columns, rows, reqs)

    # EnqueueExtensions -------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        pod_action = ActionType.DELETE
        if self.features.enable_in_place_pod_vertical_scaling:
            # a pod resized down may free resources
            pod_action |= ActionType.UPDATE_POD_SCALE_DOWN
        # UpdateNodeTaint/UpdateNodeLabel only because a Node/Add may be missed by preCheck,
        # which is not used when queueing hints are on.
        node_action = (
            ActionType.ADD
            | ActionType.UPDATE_NODE_ALLOCATABLE
            | ActionType.UPDATE_NODE_TAINT
            | ActionType.UPDATE_NODE_LABEL
        )
        if self.features.enable_scheduling_queue_hint:
            node_action = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
        events = [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD.value, pod_action),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, node_action),
                self.is_schedulable_after_node_change,
            ),
        ]
        if self.features.enable_dra_extended_resource:
            # a pod may wait for a class that serves its extended resource
            events.append(
                ClusterEventWithHint(
                    ClusterEvent("DeviceClass", ActionType.ADD | ActionType.UPDATE),
                    self.is_schedulable_after_device_class_event,
                )
            )
        return events

    def is_schedulable_after_device_class_event(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        """isSchedulableAfterDeviceClassEvent: a class added whose implicit or explicit extended
        resource name the pod requests, or an update that changed the explicit name to one the
        pod requests."""
        for o in (old_obj, new_obj):
            if o is not None and not (isinstance(o, Mapping) and o.get("kind", "DeviceClass") == "DeviceClass"):
                return QueueingHint.QUEUE  # Go: an error, which requeues
        if new_obj is None:
            return QueueingHint.QUEUE
        explicit = (new_obj.get("spec") or {}).get("extendedResourceName")
        target = pod if isinstance(pod, Pod) else Pod(pod)
        if old_obj is not None:
            if ((old_obj.get("spec") or {}).get("extendedResourceName") or "") == (explicit or ""):
                return QueueingHint.SKIP
        elif DEVICE_CLASS_PREFIX + str((new_obj.get("metadata") or {}).get("name") or "") in pod_requests(target):
            return QueueingHint.QUEUE
        if explicit is not None and explicit in pod_requests(target):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pod_event(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        """isSchedulableAfterPodEvent: a scheduled (or nominated) pod was deleted, or a pod was
        scaled down in a way that frees what this pod requests."""
        ok_old, original = _as(old_obj, Pod)
        ok_new, modified = _as(new_obj, Pod)
        if not (ok_old and ok_new):
            return QueueingHint.QUEUE  # Go: an error, which requeues
        if modified is None:
            if original is None:
                return QueueingHint.QUEUE
            if not original.node_name and not original.nominated_node_name:
                # an unscheduled pod's deletion frees nothing
                return QueueingHint.SKIP
            return QueueingHint.QUEUE
        if not self.features.enable_in_place_pod_vertical_scaling:
            # without in-place resize a pod update cannot free resources
            return QueueingHint.SKIP
        target = pod if isinstance(pod, Pod) else Pod(pod)
        if not self.is_schedulable_after_pod_scale_down(target, original, modified):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_scale_down(
        self, target_pod: Pod, original_pod: Pod | None, modified_pod: Pod
    ) -> bool:
        """isSchedulableAfterPodScaleDown: the target pod itself changed, or a scheduled pod's
        request of a resource the target requests went down."""
        if modified_pod.uid == target_pod.uid:
            return True
        if not modified_pod.node_name:
            return False
        opts = {
            "use_status": self.features.enable_in_place_pod_vertical_scaling,
            "pod_level_status": self.features.enable_in_place_pod_level_resources_vertical_scaling,
        }
        orig = _to_resource(pod_requests(original_pod, **opts)) if original_pod is not None else Resource()
        mod = _to_resource(pod_requests(modified_pod, **opts))
        for name, q in pod_requests(target_pod, **opts).items():
            if q == 0:
                continue
            if name == "cpu":
                if orig.milli_cpu > mod.milli_cpu:
                    return True
            elif name == "memory":
                if orig.memory > mod.memory:
                    return True
            elif name == "ephemeral-storage":
                if orig.ephemeral_storage > mod.ephemeral_storage:
                    return True
            elif is_scalar_resource(name) and orig.scalar.get(name, 0) > mod.scalar.get(name, 0):
                return True
        return False

    def is_schedulable_after_node_change(
        self, pod: Any, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """isSchedulableAfterNodeChange: a node was added that fits the pod, or a node's
        allocatable amount of something the pod requests went up and the pod now fits."""
        ok_old, original = _as(old_obj, Node)
        ok_new, modified = _as(new_obj, Node)
        if not (ok_old and ok_new):
            return QueueingHint.QUEUE
        target = pod if isinstance(pod, Pod) else Pod(pod)
        pod_level = self.features.enable_pod_level_resources
        if self.resolver is not None:
            self.resolver.refresh()
        if not is_fit(target, modified, enable_pod_level_resources=pod_level, resolver=self.resolver):
            return QueueingHint.SKIP
        if original is None:
            return QueueingHint.QUEUE
        if not have_any_requested_resources_increased(
            target, original, modified, enable_pod_level_resources=pod_level, resolver=self.resolver
        ):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
