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
from kubesched.sdk.objects.requests import pod_requests

from ..cache import Cache
from ..framework import WaitingPodImpl
from ..queue import SchedulingQueue
from .results import Results

__all__ = ["EventHandlers", "node_update_action", "pod_update_action"]

log = logging.getLogger("kubesched")

_NODE = EventResource.NODE.value
_ASSIGNED_POD = EventResource.ASSIGNED_POD.value
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

    def handle(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if kind == "Node":
            self.node_event(etype, old, new)
        elif kind == "Pod":
            self.pod_event(etype, old, new)
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
            log.error("ignoring node %s: %s", node.name, e)
            return
        self.cache.add_node(node)
        if etype == "ADDED" or old is None:
            move(ClusterEvent(_NODE, ActionType.ADD), None, node)
            return
        old_node = Node(old)
        action = node_update_action(old_node, node)
        if action:
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
                queue.delete_nominated(pod)  # our own bind: the pod is in flight, not queued
            else:
                queue.delete(pod)
            cache.add_pod(pod)
            self.results.assigned(pod)
            if not was_assigned:
                queue.move_all_to_active_or_backoff(ClusterEvent(_ASSIGNED_POD, ActionType.ADD), None, pod)
            else:
                action = pod_update_action(old_pod, pod) if old_pod is not None else ActionType.UPDATE_OTHER
                if action:
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
        else:
            queue.update(Pod(old), pod)


def node_update_action(old: Node, new: Node) -> ActionType:
    """Which specific node update this is (kube-scheduler's nodeSchedulingPropertiesChange)."""
    a = ActionType(0)
    if old.labels != new.labels:
        a |= ActionType.UPDATE_NODE_LABEL
    if old.raw.get("spec", {}).get("taints") != new.raw.get("spec", {}).get("taints") or old.unschedulable != new.unschedulable:
        a |= ActionType.UPDATE_NODE_TAINT
    if (old.status.get("allocatable") != new.status.get("allocatable")) or (old.status.get("capacity") != new.status.get("capacity")):
        a |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.conditions != new.conditions:
        a |= ActionType.UPDATE_NODE_CONDITION
    if old.annotations != new.annotations:
        a |= ActionType.UPDATE_NODE_ANNOTATION
    if old.status.get("declaredFeatures") != new.status.get("declaredFeatures"):
        a |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    return a


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


def pod_update_action(old: Pod, new: Pod) -> ActionType:
    """Which specific update of an assigned pod this is (kube-scheduler's podSchedulingPropertiesChange)."""
    a = ActionType(0)
    if old.labels != new.labels:
        a |= ActionType.UPDATE_POD_LABEL
    if _scaled_down(old, new):
        a |= ActionType.UPDATE_POD_SCALE_DOWN
    if old.spec.get("tolerations") != new.spec.get("tolerations"):
        a |= ActionType.UPDATE_POD_TOLERATION
    if not a and old.raw != new.raw:
        a = ActionType.UPDATE_OTHER
    return a
