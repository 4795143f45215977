"""GpuShare: pods get GPUs on actual devices, a share of one GPU or whole GPUs.

The model is :mod:`kubesched_gpushare.model` (names, how a pod's devices are known). Extension
points:

* PreFilter: parse the pod's GPU request once. No GPU asked -> Skip (Filter, Reserve and PreBind
  leave the pod alone). An invalid request -> UnschedulableAndUnresolvable with the
  :class:`~kubesched_gpushare.model.GpuSpecError` text (the pod's FailedScheduling event; the
  other pods go on).
* Filter (per node, and ``filter_columns`` over every node at once, which agree), the first that
  applies:

  ======================================================  =============================  ==========
  reason                                                  when                           code
  ======================================================  =============================  ==========
  ``node(s) had no GPU``                                  the node has no GPU            Unresolvable
  ``node(s) had a different GPU model``                   the pod names models (``A|B``) Unresolvable
                                                          and the node's is none of them
  ``node(s) had fewer GPUs than the pod requests``        whole GPUs: count > node's     Unresolvable
  ``node(s) did not have a GPU with enough free share``   a share: no device has it left Unschedulable
  ``node(s) did not have enough free GPUs``               whole GPUs: too few fully free Unschedulable
  ======================================================  =============================  ==========

  ("Unresolvable" = UnschedulableAndUnresolvable: removing pods would not help.)
* Reserve: the devices, from the :data:`~kubesched_gpushare.model.DEVICE_HINT` a Score policy
  left for this node when they still hold the pod, else
  :func:`~kubesched_gpushare.model.choose_devices` (best fit); recorded in the
  :class:`~kubesched_gpushare.model.Ledger`. Unreserve forgets them.
* PreBind: a JSON merge patch of the pod's ``alibabacloud.com/gpu-index`` annotation
  (``0``, ``0-1``); the pod gone -> Error (``pod default/x is gone: ...``), and a pod without a
  GPU request is skipped by PreBindPreFlight.
* EnqueueExtensions: an assigned GPU pod deleted (frees devices); a node added, or its
  allocatable or labels updated, that has GPUs of an allowed model.

Args: ``modelLabel`` (default ``alibabacloud.com/gpu-card-model``), the node label holding the
GPU model (``nvidia.com/gpu.product`` for NVIDIA's GPU feature discovery).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    Node,
    NodeColumns,
    NodeInfo,
    ObjectConflict,
    ObjectNotFound,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
    qualified_name_errors,
)
from kubesched.sdk._text import cut, quote

from .model import (
    DEFAULT_MODEL_LABEL,
    DEVICE_HINT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_RESOURCE,
    MILLI,
    GpuRequest,
    GpuSpecError,
    Ledger,
    NodeGpus,
    choose_devices,
    format_devices,
    gpu_columns,
    gpu_request,
    node_gpus,
)

__all__ = [
    "NO_FREE_GPUS",
    "NO_FREE_SHARE",
    "NO_GPU",
    "TOO_FEW_GPUS",
    "WRONG_MODEL",
    "GpuShare",
    "GpuShareArgs",
]

NAME = "GpuShare"
#: CycleState key of the devices Reserve chose (a tuple of device indices)
RESERVED = "ReserveGpuShare"

NO_GPU = "node(s) had no GPU"
WRONG_MODEL = "node(s) had a different GPU model"
TOO_FEW_GPUS = "node(s) had fewer GPUs than the pod requests"
NO_FREE_SHARE = "node(s) did not have a GPU with enough free share"
NO_FREE_GPUS = "node(s) did not have enough free GPUs"

_NODE_ACTIONS = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL


@dataclass
class GpuShareArgs:
    #: the node label holding the node's GPU model
    model_label: str = DEFAULT_MODEL_LABEL

    def validate(self) -> None:
        if not isinstance(self.model_label, str):
            raise ValueError(f"modelLabel: Invalid value: {quote(self.model_label)}: must be a string")
        errs = qualified_name_errors(self.model_label)
        if errs:
            raise ValueError(f"modelLabel: Invalid value: {quote(self.model_label)}: {'; '.join(errs)}")


def _as(obj: Any, cls: type[Any]) -> Any:
    if obj is None or isinstance(obj, cls):
        return obj
    if isinstance(obj, Mapping):
        return cls(obj)
    return None


class GpuShare:
    """GPU sharing on actual devices (see the module docstring)."""

    name = NAME
    Args = GpuShareArgs
    args_kind = "GpuShareArgs"

    def __init__(self, args: GpuShareArgs, handle: Handle) -> None:
        self.handle = handle
        self.model_label = args.model_label
        #: the devices this scheduler reserved (shared by the profile's GPU plugins)
        self.ledger = Ledger.of(handle)
        self._statuses: list[Status | None] = [
            None,
            Status.unresolvable(NO_GPU),
            Status.unresolvable(WRONG_MODEL),
            Status.unresolvable(TOO_FEW_GPUS),
            Status.unschedulable(NO_FREE_SHARE),
            Status.unschedulable(NO_FREE_GPUS),
        ]

    # PreFilter ----------------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        try:
            req = gpu_request(pod)
        except GpuSpecError as e:
            return Status.unresolvable(str(e))
        if req is None:
            return Status.skip()
        return None

    @hookimpl
    def sign_pod(self, pod: Pod) -> Any:
        # A pod without a GPU passes every node. A GPU pod's Filter also reads the Ledger, which
        # Unreserve changes without a new NodeInfo generation: no reuse promised for it.
        try:
            return (NAME, None) if gpu_request(pod) is None else None
        except GpuSpecError:
            return None

    # Filter -------------------------------------------------------------------------------------
    def _code(self, ng: NodeGpus, req: GpuRequest) -> int:
        if ng.count == 0:
            return 1
        if req.models and ng.model not in req.models:
            return 2
        if ng.count < req.count:
            return 3
        if req.share:
            m = req.milli
            return 0 if any(x >= m for x in ng.left) else 4
        return 0 if sum(1 for x in ng.left if x >= MILLI) >= req.count else 5

    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        req = gpu_request(pod)
        if req is None:
            return None
        return self._statuses[self._code(node_gpus(node_info, self.ledger, self.model_label), req)]

    @hookimpl
    def filter_columns(self, pod: Pod, columns: NodeColumns) -> tuple[NDArray[np.int64], Sequence[Status | None]] | None:
        req = gpu_request(pod)
        if req is None:
            return np.zeros(len(columns), np.int64), self._statuses
        gc = gpu_columns(columns, self.ledger, self.model_label)
        count = gc.count
        if req.share:
            ok = np.count_nonzero(gc.left >= req.milli, axis=1) > 0
            short = 4
        else:
            ok = np.count_nonzero(gc.left >= MILLI, axis=1) >= req.count
            short = 5
        codes = np.where(ok, 0, short)
        codes = np.where(count < req.count, 3, codes)
        if req.models:
            codes = np.where(gc.allowed(req.models), codes, 2)
        codes = np.where(count == 0, 1, codes)
        return codes.astype(np.int64), self._statuses

    # Reserve ------------------------------------------------------------------------------------
    def _left_without(self, pod: Pod, node_name: str) -> list[int]:
        """The node's milli left per device, the pod itself not counted (the snapshot may
        already hold it, assumed)."""
        ng = node_gpus(self.handle.snapshot().get(node_name), self.ledger, self.model_label)
        left = list(ng.left)
        own = ng.devices.get(pod.uid)
        if own:
            req = gpu_request(pod)
            if req is not None:
                for d in own:
                    left[d] = min(MILLI, left[d] + req.milli)
        return left

    @staticmethod
    def _hinted(state: CycleState, node_name: str, left: list[int], req: GpuRequest) -> tuple[int, ...] | None:
        if DEVICE_HINT not in state:
            return None
        hint = state.read(DEVICE_HINT)
        devs = hint.get(node_name) if isinstance(hint, Mapping) else None
        if not isinstance(devs, (tuple, list)) or len(devs) != req.count or len(set(devs)) != len(devs):
            return None
        if not all(type(d) is int and 0 <= d < len(left) and left[d] >= req.milli for d in devs):
            return None
        return tuple(devs)

    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            req = gpu_request(pod)
        except GpuSpecError as e:
            return Status.unresolvable(str(e))
        if req is None:
            return None
        left = self._left_without(pod, node_name)
        devs = self._hinted(state, node_name, left, req) or choose_devices(left, req)
        if devs is None:
            return Status.unschedulable(NO_FREE_SHARE if req.share else NO_FREE_GPUS)
        self.ledger.record(pod.uid, node_name, devs)
        state.write(RESERVED, devs)
        return None

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.ledger.forget(pod.uid)
        if RESERVED in state:
            state.delete(RESERVED)

    # PreBind ------------------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState) -> Status | None:
        return None if RESERVED in state else Status.skip()

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if RESERVED not in state:
            return None
        value = format_devices(state.read(RESERVED))
        try:
            self.handle.objects.patch(
                "v1", "Pod", pod.name, {"metadata": {"annotations": {GPU_INDEX: value}}}, pod.namespace
            )
        except ObjectNotFound as e:
            return Status.failed(f"writing {GPU_INDEX}={value} on pod {cut(pod.key)}: the pod is gone: {cut(e)}", e)
        except ObjectConflict as e:
            return Status.failed(f"writing {GPU_INDEX}={value} on pod {cut(pod.key)}: conflict: {cut(e)}", e)
        return None

    # EnqueueExtensions --------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), self._pod_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE.value, _NODE_ACTIONS), self._node_hint),
        ]

    def _pod_hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """An assigned pod that held GPUs was deleted."""
        gone = _as(old, Pod)
        if gone is None or not gone.node_name:
            return QueueingHint.SKIP
        try:
            held = gpu_request(gone)
        except GpuSpecError:
            return QueueingHint.SKIP
        return QueueingHint.SKIP if held is None else QueueingHint.QUEUE

    def _gpus_of(self, node: Node | None) -> tuple[int, str]:
        if node is None:
            return 0, ""
        scalar = node.allocatable.scalar
        n = scalar.get(GPU_RESOURCE, 0)
        if n <= 0:
            n = scalar.get(GPU_MILLI, 0) // MILLI
        model = node.labels.get(self.model_label, "")
        return int(n), model if isinstance(model, str) else ""

    def _node_hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """A node added, or updated, that now has enough GPUs of a model the pod accepts."""
        target = _as(pod, Pod)
        try:
            req = gpu_request(target) if target is not None else None
        except GpuSpecError:
            return QueueingHint.SKIP
        if req is None:
            return QueueingHint.QUEUE
        count, model = self._gpus_of(_as(new, Node))
        if count < req.count or (req.models and model not in req.models):
            return QueueingHint.SKIP
        if old is not None and self._gpus_of(_as(old, Node)) == (count, model):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
