"""Cluster events into the cache and the queue (kube-scheduler's ``eventhandlers.go``).

Runs on the scheduler's loop thread. The queue's queueing hints get typed views for Pod and
Node events (``Pod``, ``Node``), the API mappings for any other kind.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Container, Mapping
from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    EventResource,
    InvalidObjectError,
    Node,
    Pod,
)
from kubesched.sdk._text import cut
from kubesched.sdk.objects.requests import pod_requests

from ..cache import Cache
from ..framework import WaitingPodImpl
from ..queue import SchedulingQueue
from .results import Results

__all__ = ["EventHandlers", "node_update_events", "pod_update_events"]

log = logging.getLogger("kubesched")

_NODE = EventResource.NODE.value
_ASSIGNED_POD = EventResource.ASSIGNED_POD.value
_UNSCHEDULED_POD = EventResource.UNSCHEDULABLE_POD.value
_OTHER_ACTIONS = {"ADDED": ActionType.ADD, "DELETED": ActionType.DELETE}


class EventHandlers:
    """ADDED / MODIFIED / DELETED of an API object, applied to the cache, the queue, the
    waiting pods and the results."""

    def __init__(
        self,
        cache: Cache,
        queue: SchedulingQueue,
        results: Results,
        waiting_pods: Mapping[str, WaitingPodImpl],
        profiles: Container[str],
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.results = results
        self.waiting_pods = waiting_pods
        #: the scheduler names this scheduler is responsible for
        self.profiles = profiles
        #: whether a plugin asked for UnschedulablePod/Add (computed on first use)
        self._unscheduled_adds: bool | None = None

    def handle(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if kind == "Node" or kind == "Pod":
            try:
                if kind == "Node":
                    self.node_event(etype, old, new)
                else:
                    self.pod_event(etype, old, new)
            except InvalidObjectError as e:
                # an object no view can be built of (not an object, nested too deeply): the
                # ones that can be read are validated where they are used (a pending pod in
                # its scheduling cycle, where it becomes an Error)
                log.error("ignoring %s %s event: %s", kind.lower(), etype, cut(e, 200))
        else:
            action = _OTHER_ACTIONS.get(etype, ActionType.UPDATE_OTHER)
            self.queue.move_all_to_active_or_backoff(ClusterEvent(kind, action), old, new)

    def node_event(self, etype: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        move = self.queue.move_all_to_active_or_backoff
        if etype == "DELETED":
            assert old is not None
            gone = Node(old)
            self.cache.remove_node(gone.name)
            move(ClusterEvent(_NODE, ActionType.DELETE), gone, None)
            return
        assert new is not None
        node = Node(new)
        try:
            node.validate()
        except InvalidObjectError as e:
            log.error("ignoring node %s: %s", cut(node.name), cut(e, 200))
            return
        self.cache.add_node(node)
        if etype == "ADDED" or old is None:
            move(ClusterEvent(_NODE, ActionType.ADD), None, node)
            return
        old_node = Node(old)
        for action in node_update_events(old_node, node):
            move(ClusterEvent(_NODE, action), old_node, node)

    def pod_event(self, etype: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        queue = self.queue
        cache = self.cache
        if etype == "DELETED":
            assert old is not None
            pod = Pod(old)
            # assigned or not by the API object alone: an assumed pod (held at Permit, or
            # binding) is still a pending pod (kube-scheduler's deletePodFromCache /
            # deletePodFromSchedulingQueue)
            assigned = bool(pod.node_name)
            if assigned:
                cache.remove_pod(pod)
                queue.move_all_to_active_or_backoff(ClusterEvent(_ASSIGNED_POD, ActionType.DELETE), pod, None)
            else:
                # out of the queue (in flight too, so its attempt's failure does not requeue
                # it); a pod held at Permit is rejected: its binding cycle fails, which runs
                # Unreserve and forgets the assumed pod
                queue.delete(pod)
                wp = self.waiting_pods.get(pod.uid)
                if wp is not None:
                    wp.reject("", "removed")
            self.results.deleted(pod.uid, assigned=assigned)
            return
        assert new is not None
        pod = Pod(new)
        if pod.node_name:
            old_pod = Pod(old) if old is not None else None
            was_assigned = old_pod is not None and bool(old_pod.node_name)
            if cache.is_assumed(pod.uid):
                queue.nominator.delete(pod)  # our own bind: the pod is in flight, not queued
            else:
                queue.delete(pod)
                # a pod bound elsewhere: every cycle reads it from its node, so one that cannot
                # be read stays out of the cache (as a node that cannot be read does)
                try:
                    pod.validate()
                except InvalidObjectError as e:
                    log.error("ignoring pod %s bound to node %s: %s", cut(pod.key), cut(pod.node_name), cut(e, 200))
                    if was_assigned:
                        cache.remove_pod(pod)
                    return
            cache.add_pod(pod)
            self.results.assigned(pod)
            if not was_assigned:
                queue.move_all_to_active_or_backoff(ClusterEvent(_ASSIGNED_POD, ActionType.ADD), None, pod)
            else:
                actions = pod_update_events(old_pod, pod) if old_pod is not None else [ActionType.UPDATE]
                for action in actions:
                    queue.move_all_to_active_or_backoff(ClusterEvent(_ASSIGNED_POD, action), old_pod, pod)
            return
        if pod.scheduler_name not in self.profiles:
            return
        if pod.deletion_timestamp is not None:
            queue.delete(pod)
            return
        self.results.seen(pod)
        if cache.is_assumed(pod.uid):
            return  # binding in flight; the assigned update will come
        if etype == "ADDED" or old is None:
            queue.add(pod)
            # kube-scheduler moves other pods on an unscheduled pod's add only with its
            # GangScheduling (alpha, off in 1.36): kubesched does when a plugin registered
            # UnschedulablePod/Add itself (a gang plugin such as kubesched-coscheduling); the
            # default profile registers none, so it is kube-scheduler's behaviour there.
            if self._unscheduled_adds is None:
                self._unscheduled_adds = queue.registered_for(_UNSCHEDULED_POD, ActionType.ADD)
            if self._unscheduled_adds:
                queue.move_all_to_active_or_backoff(ClusterEvent(_UNSCHEDULED_POD, ActionType.ADD), None, pod)
        else:
            queue.update(Pod(old), pod)


def node_update_events(old: Node, new: Node) -> list[ActionType]:
    """The specific updates of a node, one action each, in kube-scheduler's order
    (events.go NodeSchedulingPropertiesChange): each is moved on its own, since an event matches a
    registration only when its action is not above the registered mask (MatchClusterEvents), so
    OR-ing "allocatable" with "conditions" would miss every plugin that registers the former."""
    out: list[ActionType] = []
    if old.unschedulable != new.unschedulable and not new.unschedulable:
        out.append(ActionType.UPDATE_NODE_TAINT)  # extractNodeSpecUnschedulableChange
    if old.status.get("allocatable") != new.status.get("allocatable"):
        out.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if old.labels != new.labels:
        out.append(ActionType.UPDATE_NODE_LABEL)
    if (old.raw.get("spec") or {}).get("taints") != (new.raw.get("spec") or {}).get("taints"):
        out.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(old) != _condition_statuses(new):
        out.append(ActionType.UPDATE_NODE_CONDITION)
    if old.annotations != new.annotations:
        out.append(ActionType.UPDATE_NODE_ANNOTATION)
    if old.status.get("declaredFeatures") != new.status.get("declaredFeatures"):
        out.append(ActionType.UPDATE_NODE_DECLARED_FEATURE)
    return out


def _condition_statuses(node: Node) -> dict[Any, Any]:
    """extractNodeConditionsChange's strip: condition type -> status (heartbeats ignored)."""
    return {c.get("type"): c.get("status") for c in node.status.get("conditions") or []}


def _scaled_down(old: Pod, new: Pod) -> bool:
    """events.go extractPodScaleDown: a request (as the node counts it, status of an in-place
    resize included) was removed or went down, in milli-units; an increase is not a scale-down."""
    if old.raw is new.raw:
        return False
    before = pod_requests(old, use_status=True, pod_level_status=True)
    after = pod_requests(new, use_status=True, pod_level_status=True)
    for name, q in before.items():
        n = after.get(name)
        if n is None or math.ceil(q * 1000) > math.ceil(n * 1000):
            return True
    return False


def pod_update_events(old: Pod, new: Pod) -> list[ActionType]:
    """The specific updates of a pod, one action each, in kube-scheduler's order (events.go
    PodSchedulingPropertiesChange), or the general Update when none applies."""
    out: list[ActionType] = []
    if old.labels != new.labels:
        out.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(old, new):
        out.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if not new.spec.get("schedulingGates") and old.spec.get("schedulingGates"):
        out.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new.spec.get("tolerations") or []) != len(old.spec.get("tolerations") or []):
        # API validation lets tolerations be added only: their count tells (extractPodTolerationChange)
        out.append(ActionType.UPDATE_POD_TOLERATION)
    if old.status.get("resourceClaimStatuses") != new.status.get("resourceClaimStatuses") or (
        old.status.get("extendedResourceClaimStatus") != new.status.get("extendedResourceClaimStatus")
    ):
        out.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    return out or [ActionType.UPDATE]
