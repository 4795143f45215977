"""The typed messages other threads post into the scheduler's inbox (one NamedTuple per kind).

The loop dispatches on the message's type; nothing else crosses threads into the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from kubesched.sdk import CycleState, Pod, QueuedPodInfo, Status

from ..framework import Framework, WaitingPodImpl

__all__ = [
    "BINDING_DONE",
    "Activate",
    "AddTimer",
    "BindingContext",
    "BindingDone",
    "BindingFailed",
    "Bound",
    "ClusterEventMsg",
    "PermitDone",
]


class BindingContext(NamedTuple):
    """An assumed pod between its scheduling cycle and the end of its binding cycle."""

    fw: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: Pod
    host: str


class ClusterEventMsg(NamedTuple):
    """ADDED / MODIFIED / DELETED of an API object, from the cluster's watchers."""

    etype: str
    kind: str
    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None


class AddTimer(NamedTuple):
    """Call ``fn`` on the loop at ``deadline`` (clock time): a Permit timeout."""

    deadline: float
    fn: Callable[[], None]


class PermitDone(NamedTuple):
    """A pod waiting at Permit was allowed, rejected or timed out."""

    wp: WaitingPodImpl
    status: Status


class Bound(NamedTuple):
    """The binding cycle bound the pod."""

    ctx: BindingContext


class BindingFailed(NamedTuple):
    """The binding cycle failed (Unreserve has run); a bind conflict is not retried."""

    ctx: BindingContext
    status: Status


class Activate(NamedTuple):
    """Pods a plugin asked to activate (CycleState.pods_to_activate in a binding cycle, or
    ``handle.activate``); with ``gated_by``, only those gated at PreEnqueue by that plugin,
    whose PreEnqueue runs again (``handle.recheck_gated``)."""

    pods: list[Pod]
    gated_by: str = ""


class BindingDone(NamedTuple):
    """A binding cycle has ended, whatever its outcome (PostBind included)."""


BINDING_DONE = BindingDone()
