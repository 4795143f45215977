"""kube-scheduler's ``noderesources/resource_allocation.go`` (v1.36): the scorer shared by
NodeResourcesFit (its scoring strategies) and NodeResourcesBalancedAllocation.

For each configured resource it takes the node's allocatable amount and the amount already
requested on the node (``allocated``), skipping resources the node does not have (allocatable 0)
and scalar resources the pod does not request, and hands three lists to the strategy's scorer:
``requested`` (allocated plus the pod's request), ``allocated`` and ``allocatable``
(``calculateNodeAllocatableRequest``). Since v1.36 the scorer sees the node without the pod too;
BalancedAllocation uses it, the Fit strategies ignore it.

``useRequested`` picks ``NodeInfo.requested`` (BalancedAllocation) or
``NodeInfo.non_zero_requested`` (Fit: pods without requests count 100m CPU / 200Mi memory) for cpu
and memory; ephemeral-storage and scalar resources always use ``requested``.

The common configuration (exactly cpu and memory) runs a straight-line path: a strategy may give a
:data:`PairScorer`, the same arithmetic on six ints, so no list is built per node.

Not ported: the DRAExtendedResource scoring branch (``draPreScoreState``, beta and on by default
in v1.36: for a scoring resource that a DeviceClass serves and a node does not list, it counts the
class's devices on the node from ResourceSlices and the allocated ones from ResourceClaims; it
applies only when the strategy's resources name such a resource, and with no such DeviceClass Go
takes the same path as here) and
``scorePlacement`` (TopologyAwareWorkloadScheduling, alpha, off).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import Code, NodeColumns, NodeInfo, Pod, Status, is_scalar_resource

if TYPE_CHECKING:
    from numpy.typing import NDArray

from .args import ResourceSpec
from .column_cache import matrix
from .pod_requests import pod_requests, quantity_value

__all__ = [
    "ColumnScorer",
    "PairColumnScorer",
    "PairScorer",
    "ResourceAllocationScorer",
    "Scorer",
    "weighted_column_scorer",
    "weighted_pair_column_scorer",
    "weighted_pair_scorer",
    "weighted_scorer",
]

#: ``scorer(requested, allocated, allocatable) -> score``: lists in the order of the configured
#: resources; ``requested`` includes the pod, ``allocated`` is the node without it.
Scorer = Callable[[list[int], list[int], list[int]], int]
#: The same for the resources (cpu, memory), as ints:
#: ``(requested cpu, requested memory, allocated cpu, allocated memory, allocatable cpu,
#: allocatable memory) -> score``.
PairScorer = Callable[[int, int, int, int, int, int], int]


def weighted_scorer(weights: Sequence[int], resource_score: Callable[[int, int], int]) -> Scorer:
    """The weighted mean of ``resource_score(requested, capacity)`` over the resources the node
    has (capacity > 0), in int64 arithmetic: the shape of leastResourceScorer and
    mostResourceScorer (they ignore ``allocated``)."""
    weights = tuple(weights)

    def scorer(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for i in range(len(requested)):
            capacity = allocatable[i]
            if capacity == 0:
                continue
            weight = weights[i]
            node_score += resource_score(requested[i], capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer


#: The strategy for (cpu, memory) over columns where every node has both:
#: ``(allocatable, allocated, pod)`` with ``allocatable`` and ``allocated`` int64 arrays of shape
#: (2, nodes) (rows cpu, memory; allocatable never 0) and ``pod`` the pod's requests, shape (2, 1)
#: (so ``allocated + pod`` is ``requested``) -> an int64 array of scores.
PairColumnScorer = Callable[["NDArray[np.int64]", "NDArray[np.int64]", "NDArray[np.int64]"], "NDArray[np.int64]"]

#: The scorer over columns: ``(requested, allocated, allocatable)`` as lists (one per configured
#: resource) of int64 arrays (one entry per node) -> an int64 array of scores.
ColumnScorer = Callable[[list["NDArray[np.int64]"], list["NDArray[np.int64]"], list["NDArray[np.int64]"]], "NDArray[np.int64]"]


def weighted_column_scorer(
    weights: Sequence[int], resource_score: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.int64]]
) -> ColumnScorer:
    """:func:`weighted_scorer` over columns; ``resource_score(requested, capacity)`` is given
    capacity 1 where the node lacks the resource (those entries are not counted)."""
    weights = tuple(weights)

    def scorer(requested: list[NDArray[np.int64]], allocated: list[NDArray[np.int64]], allocatable: list[NDArray[np.int64]]) -> NDArray[np.int64]:
        n = len(requested[0]) if requested else 0
        node_score = np.zeros(n, np.int64)
        weight_sum = np.zeros(n, np.int64)
        every = True  # every node has every resource: the weight sum is one number
        total_weight = 0
        for i in range(len(requested)):
            capacity = allocatable[i]
            has = capacity != 0
            weight = weights[i]
            if has.all():
                node_score += resource_score(requested[i], capacity) * weight
                weight_sum += weight
                total_weight += weight
                continue
            every = False
            if not has.any():
                continue
            node_score += np.where(has, resource_score(requested[i], np.where(has, capacity, 1)) * weight, 0)
            weight_sum += np.where(has, weight, 0)
        if every:
            return node_score // total_weight if total_weight else np.zeros(n, np.int64)
        out = np.zeros(n, np.int64)
        nz = weight_sum != 0
        out[nz] = node_score[nz] // weight_sum[nz]
        return out

    return scorer


def weighted_pair_column_scorer(
    weights: Sequence[int], resource_score: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.int64]]
) -> PairColumnScorer:
    """:func:`weighted_column_scorer` as a :data:`PairColumnScorer`: both rows at once."""
    w0, w1 = weights
    total = w0 + w1

    def scorer(allocatable: NDArray[np.int64], allocated: NDArray[np.int64], pod: NDArray[np.int64]) -> NDArray[np.int64]:
        s = resource_score(allocated + pod, allocatable)
        s0 = s[0] if w0 == 1 else s[0] * w0
        s1 = s[1] if w1 == 1 else s[1] * w1
        return (s0 + s1) // total if total else np.zeros(s.shape[1], np.int64)

    return scorer


def weighted_pair_scorer(weights: Sequence[int], resource_score: Callable[[int, int], int]) -> PairScorer:
    """:func:`weighted_scorer` for (cpu, memory) as a :data:`PairScorer`."""
    w0, w1 = weights

    def scorer(r0: int, r1: int, u0: int, u1: int, a0: int, a1: int) -> int:
        node_score = weight_sum = 0
        if a0:
            node_score = resource_score(r0, a0) * w0
            weight_sum = w0
        if a1:
            node_score += resource_score(r1, a1) * w1
            weight_sum += w1
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer

_CPU, _MEMORY, _EPHEMERAL, _SCALAR, _OTHER = range(5)
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_KIND = {"cpu": _CPU, "memory": _MEMORY, "ephemeral-storage": _EPHEMERAL}


def _kind(name: str) -> int:
    k = _KIND.get(name)
    if k is not None:
        return k
    return _SCALAR if is_scalar_resource(name) else _OTHER


def _pair_from(scorer: Scorer) -> PairScorer:
    """A :data:`PairScorer` calling a list scorer (for strategies that give none)."""

    def pair(r0: int, r1: int, u0: int, u1: int, a0: int, a1: int) -> int:
        return scorer([r0, r1], [u0, u1], [a0, a1])

    return pair


class ResourceAllocationScorer:
    """resourceAllocationScorer."""

    __slots__ = (
        "_cpu_mem",
        "_kinds",
        "column_scorer",
        "enable_in_place_pod_level_resources_vertical_scaling",
        "enable_in_place_pod_vertical_scaling",
        "enable_pod_level_resources",
        "name",
        "pair_column_scorer",
        "pair_scorer",
        "resources",
        "scorer",
        "use_requested",
    )

    def __init__(
        self,
        name: str,
        scorer: Scorer,
        resources: Sequence[ResourceSpec],
        *,
        pair_scorer: PairScorer | None = None,
        column_scorer: ColumnScorer | None = None,
        pair_column_scorer: PairColumnScorer | None = None,
        use_requested: bool = False,
        enable_in_place_pod_vertical_scaling: bool = False,
        enable_pod_level_resources: bool = False,
        enable_in_place_pod_level_resources_vertical_scaling: bool = False,
    ) -> None:
        self.name = name
        self.scorer = scorer
        self.resources = list(resources)
        self.use_requested = use_requested
        self.enable_in_place_pod_vertical_scaling = enable_in_place_pod_vertical_scaling
        self.enable_pod_level_resources = enable_pod_level_resources
        self.enable_in_place_pod_level_resources_vertical_scaling = (
            enable_in_place_pod_level_resources_vertical_scaling
        )
        self._kinds = tuple((_kind(r.name), r.name) for r in self.resources)
        #: the common configuration (cpu, memory): a straight-line path, same arithmetic
        self._cpu_mem = self._kinds == ((_CPU, "cpu"), (_MEMORY, "memory"))
        if pair_scorer is None:
            pair_scorer = _pair_from(scorer)
        self.pair_scorer = pair_scorer
        #: the strategy over columns (None: no column form)
        self.column_scorer = column_scorer
        #: the (cpu, memory) form of it, for nodes that all have both (None: the general form)
        self.pair_column_scorer = pair_column_scorer if self._cpu_mem and column_scorer is not None else None

    # score -----------------------------------------------------------------------------------
    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> Any:
        """The node's score, or ``(0, Status)`` with code Error when no resources are set."""
        if self._cpu_mem:
            alloc = node_info.allocatable
            req = node_info.requested if self.use_requested else node_info.non_zero_requested
            a0 = alloc.milli_cpu
            a1 = alloc.memory
            u0 = req.milli_cpu if a0 else 0
            u1 = req.memory if a1 else 0
            return self.pair_scorer(
                u0 + pod_requests[0] if a0 else 0, u1 + pod_requests[1] if a1 else 0, u0, u1, a0, a1
            )
        if not self._kinds:
            return 0, Status(Code.ERROR, "resources not found")
        return self.scorer(*self.calculate_node_allocatable_request(node_info, pod_requests))

    def score_many(self, nodes: Sequence[NodeInfo], pod_requests: Sequence[int]) -> list[Any] | Status:
        """:meth:`score` for each node (the batch form); a Status when no resources are set."""
        if not self._cpu_mem:
            if not self._kinds:
                return Status(Code.ERROR, "resources not found")
            return [self.score(ni, pod_requests) for ni in nodes]
        scorer = self.pair_scorer
        p0, p1 = pod_requests[0], pod_requests[1]
        use_requested = self.use_requested
        out = []
        for ni in nodes:
            alloc = ni.allocatable
            req = ni.requested if use_requested else ni.non_zero_requested
            a0 = alloc.milli_cpu
            a1 = alloc.memory
            u0 = req.milli_cpu if a0 else 0
            u1 = req.memory if a1 else 0
            out.append(scorer(u0 + p0 if a0 else 0, u1 + p1 if a1 else 0, u0, u1, a0, a1))
        return out

    def score_columns(self, columns: NodeColumns, rows: NDArray[np.intp], pod_requests: Sequence[int]) -> NDArray[np.int64] | None:
        """:meth:`score` for the nodes of ``rows`` over the snapshot's columns; None when the
        strategy has no column form (or no resources are set: the per-node form reports it)."""
        if self.column_scorer is None or not self._kinds:
            return None
        if self._cpu_mem:
            p0, p1 = pod_requests[0], pod_requests[1]
            if _I64_MIN <= p0 <= _I64_MAX and _I64_MIN <= p1 <= _I64_MAX:
                # the columns gathered once per cycle (Fit's Score and BalancedAllocation)
                g = matrix(columns).cpu_mem_rows(rows)
                if g is not None:
                    used = g[4:6] if self.use_requested else g[2:4]
                    pod = np.array(((p0,), (p1,)), np.int64)
                    if self.pair_column_scorer is not None:
                        return self.pair_column_scorer(g[0:2], used, pod)
                    req = used + pod
                    return self.column_scorer([req[0], req[1]], [used[0], used[1]], [g[0], g[1]])
        req_l, used_l, alloc_l = self.calculate_node_allocatable_request_columns(columns, rows, pod_requests)
        return self.column_scorer(req_l, used_l, alloc_l)

    def calculate_node_allocatable_request_columns(
        self, columns: NodeColumns, rows: NDArray[np.intp], pod_requests: Sequence[int]
    ) -> tuple[list[NDArray[np.int64]], list[NDArray[np.int64]], list[NDArray[np.int64]]]:
        """:meth:`calculate_node_allocatable_request` for the nodes of ``rows``: per resource,
        int64 arrays of (requested, allocated, allocatable)."""
        n = len(rows)
        req_l = []
        used_l = []
        alloc_l = []
        nz = columns.requested if self.use_requested else columns.non_zero_requested
        for (kind, name), pod_request in zip(self._kinds, pod_requests):
            if kind == _CPU or kind == _MEMORY:
                a = columns.allocatable(name)[rows]
                u = nz(name)[rows]
            elif kind == _EPHEMERAL or (kind == _SCALAR and pod_request != 0):
                a = columns.allocatable(name)[rows]
                u = columns.requested(name)[rows]
            else:
                zero = np.zeros(n, np.int64)
                req_l.append(zero)
                used_l.append(zero)
                alloc_l.append(zero)
                continue
            alloc_l.append(a)
            if a.all():
                used_l.append(u)
                req_l.append(u + pod_request)
                continue
            has = a != 0
            used_l.append(np.where(has, u, 0))
            req_l.append(np.where(has, u + pod_request, 0))
        return req_l, used_l, alloc_l

    def calculate_node_allocatable_request(
        self, node_info: NodeInfo, pod_requests: Sequence[int]
    ) -> tuple[list[int], list[int], list[int]]:
        """calculateNodeAllocatableRequest: ``(requested, allocated, allocatable)`` in the order of
        the resources; an entry stays 0 for a scalar resource the pod does not request or a
        resource the node does not have."""
        kinds = self._kinds
        alloc = node_info.allocatable
        requested_all = node_info.requested
        requested = requested_all if self.use_requested else node_info.non_zero_requested
        n = len(kinds)
        req_list = [0] * n
        used_list = [0] * n
        alloc_list = [0] * n
        for i in range(n):
            kind, name = kinds[i]
            pod_request = pod_requests[i]
            if kind == _CPU:
                a = alloc.milli_cpu
                u = requested.milli_cpu
            elif kind == _MEMORY:
                a = alloc.memory
                u = requested.memory
            elif kind == _EPHEMERAL:
                a = alloc.ephemeral_storage
                u = requested_all.ephemeral_storage
            elif kind == _SCALAR:
                # a scalar resource the pod does not request is bypassed
                if pod_request == 0:
                    continue
                a = alloc.scalar.get(name, 0)
                u = requested_all.scalar.get(name, 0)
            else:
                continue
            # only fill the entry when the node has the resource
            if a == 0:
                continue
            alloc_list[i] = a
            used_list[i] = u
            req_list[i] = u + pod_request
        return req_list, used_list, alloc_list

    def calculate_resource_allocatable_request(self, node_info: NodeInfo, resource: str) -> tuple[int, int]:
        """calculateResourceAllocatableRequest: (allocatable, allocated on the node); (0, 0) for a
        resource the node does not have."""
        requested = node_info.requested if self.use_requested else node_info.non_zero_requested
        kind = _kind(resource)
        alloc = node_info.allocatable
        if kind == _CPU:
            return alloc.milli_cpu, requested.milli_cpu
        if kind == _MEMORY:
            return alloc.memory, requested.memory
        if kind == _EPHEMERAL:
            return alloc.ephemeral_storage, node_info.requested.ephemeral_storage
        if resource in alloc.scalar:
            return alloc.scalar[resource], node_info.requested.scalar.get(resource, 0)
        return 0, 0

    # pod requests ----------------------------------------------------------------------------
    def calculate_pod_resource_request(self, pod: Pod, resource: str) -> int:
        """calculatePodResourceRequest: the pod's request of one resource (overhead included);
        unless ``use_requested``, containers without a cpu/memory request count 100m/200Mi."""
        return quantity_value(self._pod_requests(pod), resource)

    def calculate_pod_resource_request_list(
        self, pod: Pod, resources: Sequence[ResourceSpec] | None = None
    ) -> list[int]:
        """calculatePodResourceRequestList, in the order of ``resources``."""
        if resources is None and self._cpu_mem:
            got = self._cpu_mem_requests(pod)
            if got is not None:
                return got
        reqs = self._pod_requests(pod)
        return [
            quantity_value(reqs, r.name)
            for r in (self.resources if resources is None else resources)
        ]

    def _cpu_mem_requests(self, pod: Pod) -> list[int] | None:
        """[cpu, memory] from the requests the pod view keeps (``Pod.requests``,
        ``Pod.non_zero_requests``: the same ``pod_requests`` with pod-level resources, no
        status) when this scorer's options give the same: the status holds nothing an in-place
        resize reads (or the scorer does not read it) and pod-level resources are on or the pod
        has none. None otherwise."""
        if self.enable_in_place_pod_vertical_scaling:
            st = pod.status
            if st.get("resources") is not None or st.get("containerStatuses") or st.get("initContainerStatuses"):
                return None
        if not self.enable_pod_level_resources and pod.spec.get("resources") is not None:
            return None
        if self.use_requested:
            r = pod.requests
            return [r.milli_cpu, r.memory]
        return list(pod.non_zero_requests)

    def _pod_requests(self, pod: Pod) -> dict[str, Any]:
        return pod_requests(
            pod,
            pod_level=self.enable_pod_level_resources,
            use_status=self.enable_in_place_pod_vertical_scaling,
            non_missing=not self.use_requested,
            pod_level_status=self.enable_in_place_pod_level_resources_vertical_scaling,
        )

    @staticmethod
    def is_best_effort_pod(pod_requests: Sequence[int]) -> bool:
        """isBestEffortPod: the pod requests none of the configured resources."""
        return not any(pod_requests)
