"""kube-scheduler's ``noderesources/resource_allocation.go``: the scorer shared by
NodeResourcesFit (its scoring strategies) and NodeResourcesBalancedAllocation.

For each configured resource it takes the node's allocatable amount and the amount requested on
the node plus the pod's request, skipping resources the node does not have (allocatable 0) and
scalar resources the pod does not request, and hands both lists to the strategy's scorer.

``useRequested`` picks ``NodeInfo.requested`` (BalancedAllocation) or
``NodeInfo.non_zero_requested`` (Fit: pods without requests count 100m CPU / 200Mi memory) for cpu
and memory; ephemeral-storage and scalar resources always use ``requested``.

The v1.34 DRA extended-resource branch (allocatable 0 and DRAExtendedResource on) is not ported:
the gate is alpha and off in v1.34.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubesched.sdk import Code, NodeInfo, Pod, Status, is_scalar_resource

from .args import ResourceSpec
from .pod_requests import pod_requests, quantity_value

__all__ = ["ResourceAllocationScorer", "Scorer", "weighted_scorer"]

#: ``scorer(requested, allocatable) -> score``; lists are in the order of the configured resources.
Scorer = Callable[[list[int], list[int]], int]


def weighted_scorer(weights: Sequence[int], resource_score: Callable[[int, int], int]) -> Scorer:
    """The weighted mean of ``resource_score(requested, capacity)`` over the resources the node
    has (capacity > 0), in int64 arithmetic: the shape of leastResourceScorer and
    mostResourceScorer."""
    weights = tuple(weights)

    def scorer(requested: list[int], allocatable: list[int]) -> int:
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

_CPU, _MEMORY, _EPHEMERAL, _SCALAR, _OTHER = range(5)
_KIND = {"cpu": _CPU, "memory": _MEMORY, "ephemeral-storage": _EPHEMERAL}


def _kind(name: str) -> int:
    k = _KIND.get(name)
    if k is not None:
        return k
    return _SCALAR if is_scalar_resource(name) else _OTHER


class ResourceAllocationScorer:
    """resourceAllocationScorer."""

    __slots__ = (
        "_cpu_mem",
        "_kinds",
        "enable_in_place_pod_vertical_scaling",
        "enable_pod_level_resources",
        "name",
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
        use_requested: bool = False,
        enable_in_place_pod_vertical_scaling: bool = False,
        enable_pod_level_resources: bool = False,
    ) -> None:
        self.name = name
        self.scorer = scorer
        self.resources = list(resources)
        self.use_requested = use_requested
        self.enable_in_place_pod_vertical_scaling = enable_in_place_pod_vertical_scaling
        self.enable_pod_level_resources = enable_pod_level_resources
        self._kinds = tuple((_kind(r.name), r.name) for r in self.resources)
        #: the common configuration (cpu, memory): a straight-line path, same arithmetic
        self._cpu_mem = self._kinds == ((_CPU, "cpu"), (_MEMORY, "memory"))

    # score -----------------------------------------------------------------------------------
    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> Any:
        """The node's score, or ``(0, Status)`` with code Error when no resources are set."""
        if self._cpu_mem:
            alloc = node_info.allocatable
            req = node_info.requested if self.use_requested else node_info.non_zero_requested
            a0 = alloc.milli_cpu
            a1 = alloc.memory
            return self.scorer(
                [req.milli_cpu + pod_requests[0] if a0 else 0, req.memory + pod_requests[1] if a1 else 0],
                [a0, a1],
            )
        kinds = self._kinds
        if not kinds:
            return 0, Status(Code.ERROR, "resources not found")
        alloc = node_info.allocatable
        requested_all = node_info.requested
        requested = requested_all if self.use_requested else node_info.non_zero_requested
        n = len(kinds)
        req_list = [0] * n
        alloc_list = [0] * n
        for i in range(n):
            kind, name = kinds[i]
            pod_request = pod_requests[i]
            if kind == _CPU:
                a = alloc.milli_cpu
                r = requested.milli_cpu + pod_request
            elif kind == _MEMORY:
                a = alloc.memory
                r = requested.memory + pod_request
            elif kind == _EPHEMERAL:
                a = alloc.ephemeral_storage
                r = requested_all.ephemeral_storage + pod_request
            elif kind == _SCALAR:
                # a scalar resource the pod does not request is bypassed
                if pod_request == 0:
                    continue
                a = alloc.scalar.get(name, 0)
                r = requested_all.scalar.get(name, 0) + pod_request
            else:
                continue
            # only fill the entry when the node has the resource
            if a == 0:
                continue
            alloc_list[i] = a
            req_list[i] = r
        return self.scorer(req_list, alloc_list)

    def score_many(self, nodes: Sequence[NodeInfo], pod_requests: Sequence[int]) -> list[Any] | Status:
        """:meth:`score` for each node (the batch form); a Status when no resources are set."""
        if not self._cpu_mem:
            if not self._kinds:
                return Status(Code.ERROR, "resources not found")
            return [self.score(ni, pod_requests) for ni in nodes]
        scorer = self.scorer
        p0, p1 = pod_requests[0], pod_requests[1]
        use_requested = self.use_requested
        out = []
        for ni in nodes:
            alloc = ni.allocatable
            req = ni.requested if use_requested else ni.non_zero_requested
            a0 = alloc.milli_cpu
            a1 = alloc.memory
            out.append(scorer([req.milli_cpu + p0 if a0 else 0, req.memory + p1 if a1 else 0], [a0, a1]))
        return out

    def calculate_resource_allocatable_request(
        self, node_info: NodeInfo, resource: str, pod_request: int
    ) -> tuple[int, int]:
        """calculateResourceAllocatableRequest: (allocatable, requested incl. the pod); (0, 0) for
        a scalar resource the pod does not request or a resource the node does not have."""
        requested = node_info.requested if self.use_requested else node_info.non_zero_requested
        kind = _kind(resource)
        if pod_request == 0 and kind == _SCALAR:
            return 0, 0
        alloc = node_info.allocatable
        if kind == _CPU:
            return alloc.milli_cpu, requested.milli_cpu + pod_request
        if kind == _MEMORY:
            return alloc.memory, requested.memory + pod_request
        if kind == _EPHEMERAL:
            return alloc.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
        if resource in alloc.scalar:
            return alloc.scalar[resource], node_info.requested.scalar.get(resource, 0) + pod_request
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
        reqs = self._pod_requests(pod)
        return [
            quantity_value(reqs, r.name)
            for r in (self.resources if resources is None else resources)
        ]

    def _pod_requests(self, pod: Pod) -> dict[str, Any]:
        return pod_requests(
            pod,
            pod_level=self.enable_pod_level_resources,
            use_status=self.enable_in_place_pod_vertical_scaling,
            non_missing=not self.use_requested,
        )

    @staticmethod
    def is_best_effort_pod(pod_requests: Sequence[int]) -> bool:
        """isBestEffortPod: the pod requests none of the configured resources."""
        return not any(pod_requests)
