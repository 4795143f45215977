"""kubesched.testing — the plugin author's kit (a pytest plugin through ``pytest11``).

Builders for nodes and pods, a Handle for calling hooks directly, and helpers that run plugins
through a real framework cycle on the simulated cluster.
"""

from __future__ import annotations

from .handle import FakeClock, RecordedEvent, TestHandle, build_plugin, make_handle
from .run import PluginError, PodOutcome, RunResult, profile_config, run_profile
from .wrappers import NodeWrapper, PodWrapper, make_node, make_pod

__all__ = [
    "FakeClock",
    "NodeWrapper",
    "PluginError",
    "PodOutcome",
    "PodWrapper",
    "RecordedEvent",
    "RunResult",
    "TestHandle",
    "build_plugin",
    "make_handle",
    "make_node",
    "make_pod",
    "profile_config",
    "run_profile",
]
