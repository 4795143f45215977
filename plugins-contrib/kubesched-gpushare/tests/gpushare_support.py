"""Builders shared by the GpuShare tests."""

from __future__ import annotations

from typing import Any

from kubesched_gpushare import GPU_INDEX, GPU_MODEL

from kubesched.testing import make_pod


def gpod(name: str, *, node: str = "", index: str | None = None, models: str | None = None, phase: str = "", **res: str) -> dict[str, Any]:
    """A pod asking 1 CPU and ``res`` (GPU resources), optionally bound to ``node``, with a
    gpu-index annotation ``index``, a model list ``models`` and a ``phase``."""
    w = make_pod().name(name).uid(name).req(cpu="1", **res)
    if node:
        w = w.node(node)
    if index is not None:
        w = w.annotation(GPU_INDEX, index)
    if models is not None:
        w = w.annotation(GPU_MODEL, models)
    if phase:
        w = w.phase(phase)
    return w.obj()
