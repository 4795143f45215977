"""kubesched-gpushare: GPU sharing on actual devices, and GPU placement policies.

* :mod:`.model`: the per-device GPU model (what a pod asks, a node's devices and their use).
* :class:`GpuShare` (:mod:`.plugin`): PreFilter / Filter / Reserve / PreBind over that model.
"""

from __future__ import annotations

from .model import (
    DEFAULT_MODEL_LABEL,
    DEVICE_HINT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_MODEL,
    GPU_RESOURCE,
    MILLI,
    GpuColumns,
    GpuRequest,
    GpuSpecError,
    Ledger,
    NodeGpus,
    choose_devices,
    fits,
    format_devices,
    gpu_columns,
    gpu_request,
    node_gpus,
    parse_devices,
)
from .plugin import GpuShare, GpuShareArgs

__all__ = [
    "DEFAULT_MODEL_LABEL",
    "DEVICE_HINT",
    "GPU_INDEX",
    "GPU_MILLI",
    "GPU_MODEL",
    "GPU_RESOURCE",
    "MILLI",
    "GpuColumns",
    "GpuRequest",
    "GpuShare",
    "GpuShareArgs",
    "GpuSpecError",
    "Ledger",
    "NodeGpus",
    "choose_devices",
    "fits",
    "format_devices",
    "gpu_columns",
    "gpu_request",
    "node_gpus",
    "parse_devices",
]
