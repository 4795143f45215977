"""One framework per profile: the plugins of a profile, run with kube-scheduler's semantics.

==================  ==============================================================================
module              job (kube-scheduler's ``framework/runtime``)
==================  ==============================================================================
``interface``       the :class:`Framework` Protocol the rest of the runtime uses; score types
``wiring``          building one from a Profile and the Registry (``NewFramework``)
``runners``         :class:`FrameworkImpl`: every extension point (``framework.go``)
``score``           Score, NormalizeScore, ranges and weights (``RunScorePlugins``)
``reuse``           SignPod, result-reuse tables, batch forms (``signature.go``, ``batch.go``)
``contract``        what each hook may return, and the Error a pod gets otherwise
``instrument``      metrics, wrapped once at build time (``instrumented_plugins.go``)
``waiting``         pods held at Permit (``waiting_pods_map.go``)
``handle``          the Handle plugins get and the services the scheduler gives
==================  ==============================================================================
"""

from .contract import split_result
from .handle import FrameworkHandle, FrameworkServices
from .interface import Entry, Framework, NodePluginScores, PluginScore
from .runners import FrameworkImpl
from .waiting import MAX_PERMIT_TIMEOUT, WaitingPodImpl
from .wiring import build_framework

__all__ = [
    "MAX_PERMIT_TIMEOUT",
    "Entry",
    "Framework",
    "FrameworkHandle",
    "FrameworkImpl",
    "FrameworkServices",
    "NodePluginScores",
    "PluginScore",
    "WaitingPodImpl",
    "build_framework",
    "split_result",
]
