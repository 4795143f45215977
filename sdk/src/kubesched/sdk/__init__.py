"""kubesched.sdk — the plugin author's API.

Everything a plugin needs is importable from here::

    from kubesched.sdk import hookimpl, Status, CycleState, Pod, NodeInfo, Handle

See :mod:`kubesched.sdk.hookspecs` for the extension points and their contracts.
"""

from __future__ import annotations

import pluggy

from .args import ArgsError, args_schema, build_args
from .columns import NodeColumns, default_normalize_columns
from .cycle_state import CycleState, StateData, StateError
from .events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    QueueingHintFn,
)
from .handle import (
    Clock,
    EventRecorder,
    Handle,
    NodeInfoLister,
    ObjectClient,
    ObjectConflict,
    ObjectNotFound,
    WaitingPod,
)
from .hookspecs import EXTENSION_POINT_HOOKS, OTHER_HOOKS, PRIMARY_HOOKS
from .objects import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    AffinityTerm,
    HostPort,
    HostPortInfo,
    ImageStateSummary,
    InvalidObjectError,
    Node,
    NodeInfo,
    Pod,
    QueuedPodInfo,
    Resource,
    Taint,
    Toleration,
    find_untolerated_taint,
    is_scalar_resource,
)
from .plugin import PLUGIN_ATTRIBUTES, Plugin
from .points import EXTENSION_POINTS, HOOKS, ExtensionPoint, HookInfo, extension_point, hook_info
from .quantity import QuantityError, milli_value, parse_quantity, value
from .readonly import READ_ONLY_MESSAGE, ReadOnlyDict, ReadOnlyList, read_only
from .scoring import default_normalize_score
from .selectors import LabelSelector, NodeSelector, NodeSelectorTerm, Requirement
from .signature import freeze
from .status import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindConflict,
    Code,
    NodeScore,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from .validation import label_value_errors, qualified_name_errors

__version__ = "0.1.0"

#: The marker for hook implementations: ``@hookimpl def filter(self, state, pod, node_info): ...``
hookimpl = pluggy.HookimplMarker("kubesched")

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EXTENSION_POINTS",
    "EXTENSION_POINT_HOOKS",
    "HOOKS",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "OTHER_HOOKS",
    "PLUGIN_ATTRIBUTES",
    "PRIMARY_HOOKS",
    "READ_ONLY_MESSAGE",
    "ActionType",
    "AffinityTerm",
    "ArgsError",
    "BindConflict",
    "Clock",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EventRecorder",
    "EventResource",
    "ExtensionPoint",
    "Handle",
    "HookInfo",
    "HostPort",
    "HostPortInfo",
    "ImageStateSummary",
    "InvalidObjectError",
    "LabelSelector",
    "Node",
    "NodeColumns",
    "NodeInfo",
    "NodeInfoLister",
    "NodeScore",
    "NodeSelector",
    "NodeSelectorTerm",
    "ObjectClient",
    "ObjectConflict",
    "ObjectNotFound",
    "Plugin",
    "Pod",
    "PostFilterResult",
    "PreFilterResult",
    "QuantityError",
    "QueuedPodInfo",
    "QueueingHint",
    "QueueingHintFn",
    "ReadOnlyDict",
    "ReadOnlyList",
    "Requirement",
    "Resource",
    "StateData",
    "StateError",
    "Status",
    "Taint",
    "Toleration",
    "WaitingPod",
    "__version__",
    "args_schema",
    "build_args",
    "default_normalize_columns",
    "default_normalize_score",
    "extension_point",
    "find_untolerated_taint",
    "freeze",
    "hook_info",
    "hookimpl",
    "is_scalar_resource",
    "label_value_errors",
    "milli_value",
    "parse_quantity",
    "qualified_name_errors",
    "read_only",
    "value",
]
