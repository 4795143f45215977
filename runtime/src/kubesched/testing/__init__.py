"""kubesched.testing — the plugin author's kit (a pytest plugin through ``pytest11``).

Builders for nodes and pods, a Handle for calling hooks directly, and helpers that run plugins
through a real framework cycle on the simulated cluster.
"""

from __future__ import annotations

from .handle import FakeClock, RecordedEvent, TestHandle, build_plugin, make_handle
from .wrappers import NodeWrapper, PodWrapper, make_node, make_pod

__all__ = [
    "FakeClock",
    "NodeWrapper",
    "PodWrapper",
    "RecordedEvent",
    "TestHandle",
    "build_plugin",
    "make_handle",
    "make_node",
    "make_pod",
]
