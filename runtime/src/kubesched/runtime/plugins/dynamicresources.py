"""DynamicResources: kube-scheduler's default profile (v1.34) includes dynamic resource
allocation (DRA). kubesched does not allocate ResourceClaims yet: pods without
``spec.resourceClaims`` are unaffected (PreFilter returns Skip, as kube-scheduler's plugin does
for them); a pod that uses claims is rejected with a clear, unresolvable reason instead of being
placed on a node whose devices nobody allocated."""

from __future__ import annotations

from kubesched.sdk import ActionType, ClusterEvent, ClusterEventWithHint, Pod, Status, hookimpl

__all__ = ["DynamicResources"]


class DynamicResources:
    name = "DynamicResources"

    @hookimpl
    def pre_filter(self, pod: Pod) -> Status:
        if not pod.spec.get("resourceClaims"):
            return Status.skip()
        return Status.unresolvable("kubesched does not support dynamic resource allocation (pod uses resourceClaims)")

    @hookimpl
    def filter(self) -> None:
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_OTHER))]
