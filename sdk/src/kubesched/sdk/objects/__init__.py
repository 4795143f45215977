"""Read-only typed views over Kubernetes API objects (the API's JSON).

``Pod``, ``Node`` and ``NodeInfo`` parse what the scheduler needs once and cache it. They are
read-only, and so is everything inside them: a view copies its API object once, when it is
built, into read-only mappings and lists (:mod:`kubesched.sdk.readonly`), so ``pod.raw``,
``labels``, ``spec``, containers, the ``Resource`` totals and ``node_info.pods`` all raise
``TypeError`` on a write instead of changing what the next pod sees. A plugin writes through
the Handle: ``handle.objects.patch(...)``; the change comes back as a new view.

The NodeInfos of the scheduler's snapshot are sealed: ``add_pod``/``remove_pod`` and attribute
assignment raise. ``node_info.clone()`` gives an open copy on which a plugin evaluates "what
if" (preemption removes its victims from a clone, as kube-scheduler does).

The views live in one module each: :mod:`.resource` (``Resource``), :mod:`.taints`,
:mod:`.pod` (``Pod``, ``QueuedPodInfo``), :mod:`.node` (``Node``) and :mod:`.nodeinfo`
(``NodeInfo``); every name is importable from here.
"""

from __future__ import annotations

from ..selectors import InvalidObjectError
from .node import NODE_READ_ONLY_MESSAGE, Node
from .nodeinfo import NODE_INFO_READ_ONLY_MESSAGE, HostPortInfo, ImageStateSummary, NodeInfo
from .pod import POD_READ_ONLY_MESSAGE, AffinityTerm, HostPort, Pod, QueuedPodInfo, parse_time
from .resource import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    RESOURCE_READ_ONLY_MESSAGE,
    Resource,
    is_scalar_resource,
)
from .taints import Taint, Toleration, find_untolerated_taint

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "NODE_INFO_READ_ONLY_MESSAGE",
    "NODE_READ_ONLY_MESSAGE",
    "POD_READ_ONLY_MESSAGE",
    "RESOURCE_READ_ONLY_MESSAGE",
    "AffinityTerm",
    "HostPort",
    "HostPortInfo",
    "ImageStateSummary",
    "InvalidObjectError",
    "Node",
    "NodeInfo",
    "Pod",
    "QueuedPodInfo",
    "Resource",
    "Taint",
    "Toleration",
    "find_untolerated_taint",
    "is_scalar_resource",
    "parse_time",
]
