"""PrioritySort: QueueSort by priority (higher first), then by the time the pod was queued
(kube-scheduler's ``queuesort/priority_sort.go`` at v1.36.3; unchanged in behaviour since v1.34)."""

from __future__ import annotations

from kubesched.sdk import QueuedPodInfo, hookimpl

__all__ = ["PrioritySort"]


class PrioritySort:
    name = "PrioritySort"

    @hookimpl
    def queue_sort_less(self, pod_info_1: QueuedPodInfo, pod_info_2: QueuedPodInfo) -> bool:
        p1 = pod_info_1.pod.priority
        p2 = pod_info_2.pod.priority
        return (p1 > p2) or (p1 == p2 and pod_info_1.timestamp < pod_info_2.timestamp)
