"""StickyNode: pods of the same owner go back to the node where they last ran.

The remembered node is an annotation on the *owner* object, so it survives the pod:

* **StatefulSet** (``apps/v1``, the pod's controller): pods differ by ordinal, so each pod has
  its own key, ``sticky-node.kubesched.io/<pod name>`` (derived from arg ``annotation``:
  ``<prefix>/<name>`` becomes ``<name>.<prefix>/<pod name>``). Always on.
* **KubeVirt VirtualMachine**: the pod (virt-launcher) is controlled by a
  ``VirtualMachineInstance`` (``kubevirt.io/v1``), itself controlled by a ``VirtualMachine``;
  the key ``kubesched.io/sticky-node`` (arg ``annotation``) is on the VirtualMachine. Always on.
  Live-migration target pods (label ``kubevirt.io/migrationJobUID``) are left alone.
* **Any other controller** (any apiVersion/kind, a VMI without a VM included) opts in by
  carrying the ``annotation`` key on the owner object; an empty value means "remember from now
  on".

Extension points:

* PreFilter: read the remembered node; none -> Skip (normal placement). The node gone, cordoned
  (``spec.unschedulable``, unless the pod tolerates the ``unschedulable`` taint) or not Ready ->
  arg ``policy``: ``strict`` -> UnschedulableAndUnresolvable (``sticky node <n> is gone`` /
  ``sticky node <n> is unschedulable``); ``preferred`` -> Skip. Otherwise a PreFilterResult
  with just that node.
* Filter: only the sticky node passes (``node(s) were not the pod's sticky node <n>``).
* PostBind: write the node back to the owner with a JSON merge patch carrying the
  resourceVersion of a fresh get, retried on conflict (5 attempts).
* EnqueueExtensions: Node add / taint / condition updates (the sticky node may come back) and
  updates of StatefulSets and VirtualMachines (the remembered node may be changed or cleared).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    Node,
    NodeInfo,
    ObjectConflict,
    ObjectNotFound,
    Pod,
    PreFilterResult,
    QueueingHint,
    StateData,
    Status,
    Taint,
    find_untolerated_taint,
    hookimpl,
)

__all__ = [
    "DEFAULT_ANNOTATION",
    "MIGRATION_JOB_LABEL",
    "PATCH_ATTEMPTS",
    "Owner",
    "StickyNode",
    "StickyNodeArgs",
    "per_pod_prefix",
]

#: The default key on a VirtualMachine / opted-in owner; StatefulSets use the per-pod form.
DEFAULT_ANNOTATION = "kubesched.io/sticky-node"
#: KubeVirt's label on the target pod of a live migration.
MIGRATION_JOB_LABEL = "kubevirt.io/migrationJobUID"
#: How many times PostBind tries its patch when the owner changed under it.
PATCH_ATTEMPTS = 5

STATE_KEY = "PreFilterStickyNode"

_NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

_TAINT_UNSCHEDULABLE = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
_TAINT_NOT_READY = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")
_TAINT_UNREACHABLE = Taint("node.kubernetes.io/unreachable", "", "NoSchedule")


def _is_dns_subdomain(s: str) -> bool:
    return 0 < len(s) <= 253 and all(_DNS_LABEL_RE.match(part) for part in s.split("."))


def per_pod_prefix(annotation: str) -> str:
    """``kubesched.io/sticky-node`` -> ``sticky-node.kubesched.io`` (StatefulSet keys are
    ``<this>/<pod name>``)."""
    prefix, _, name = annotation.partition("/")
    return f"{name.lower()}.{prefix}"


@dataclass
class StickyNodeArgs:
    #: ``strict``: the pod waits for its node; ``preferred``: it falls back to normal placement
    #: when its node is gone or unschedulable.
    policy: Literal["strict", "preferred"] = "strict"
    #: the annotation key (``<prefix>/<name>``) holding the node on a VirtualMachine or an
    #: opted-in owner; StatefulSets use ``<name>.<prefix>/<pod name>``.
    annotation: str = DEFAULT_ANNOTATION

    def validate(self) -> None:
        if self.policy not in ("strict", "preferred"):
            raise ValueError(
                f'policy: Unsupported value: "{self.policy}": supported values: "strict", "preferred"'
            )
        prefix, slash, name = self.annotation.partition("/")
        if not slash:
            raise ValueError(
                f'annotation: Invalid value: "{self.annotation}": must be <prefix>/<name> with a DNS subdomain prefix (e.g. {DEFAULT_ANNOTATION})'
            )
        if not _is_dns_subdomain(prefix):
            raise ValueError(
                f'annotation: Invalid value: "{self.annotation}": prefix "{prefix}" must be a lowercase DNS subdomain'
            )
        if not (0 < len(name) <= 63 and _NAME_RE.match(name)):
            raise ValueError(
                f'annotation: Invalid value: "{self.annotation}": name "{name}" must be 1-63 alphanumerics, "-", "_" or "." starting and ending alphanumeric'
            )
        derived = per_pod_prefix(self.annotation)
        if not _is_dns_subdomain(derived):
            raise ValueError(
                f'annotation: Invalid value: "{self.annotation}": the StatefulSet key prefix "{derived}" must be a lowercase DNS subdomain of at most 253 characters'
            )


@dataclass(frozen=True)
class Owner:
    """The object holding a pod's remembered node, and the annotation key used for the pod."""

    api_version: str
    kind: str
    name: str
    namespace: str
    key: str
    #: False when the owner kind does not opt in by itself: the key must be present on it.
    always: bool = True


@dataclass
class _State(StateData):
    node_name: str


def _group(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _controller(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller"):
            return ref
    return None


def _annotations(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    if not obj:
        return {}
    return (obj.get("metadata") or {}).get("annotations") or {}


class StickyNode:
    """Send pods back to the node their owner remembers."""

    name = "StickyNode"
    Args = StickyNodeArgs
    args_kind = "StickyNodeArgs"

    def __init__(self, args: StickyNodeArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.policy = args.policy
        self.annotation = args.annotation
        self.pod_prefix = per_pod_prefix(args.annotation)
        #: seconds slept before retry n (n >= 1) after a conflict: ``retry_delay * n``
        self.retry_delay = 0.01

    # owner resolution ---------------------------------------------------------------------------
    def owner_of(self, pod: Pod) -> Owner | None:
        """The object whose annotation holds this pod's node, or None when the pod is not
        sticky (no controller, a migration target, a StatefulSet pod name too long for a key)."""
        ref = pod.controller_ref
        if ref is None or MIGRATION_JOB_LABEL in pod.labels:
            return None
        api_version = str(ref.get("apiVersion") or "")
        kind = str(ref.get("kind") or "")
        name = str(ref.get("name") or "")
        if not (api_version and kind and name):
            return None
        ns = pod.namespace
        if kind == "StatefulSet" and _group(api_version) == "apps":
            if len(pod.name) > 63:
                return None
            return Owner(api_version, kind, name, ns, f"{self.pod_prefix}/{pod.name}")
        if kind == "VirtualMachineInstance" and _group(api_version) == "kubevirt.io":
            try:
                vmi = self.handle.objects.get(api_version, kind, name, ns)
            except ObjectNotFound:
                return None
            vm_ref = _controller(vmi)
            if (
                vm_ref is not None
                and vm_ref.get("kind") == "VirtualMachine"
                and _group(str(vm_ref.get("apiVersion") or "")) == "kubevirt.io"
            ):
                return Owner(
                    str(vm_ref["apiVersion"]),
                    "VirtualMachine",
                    str(vm_ref.get("name") or ""),
                    ns,
                    self.annotation,
                )
            # a VMI without a VM: sticky only when it opts in itself
        return Owner(api_version, kind, name, ns, self.annotation, always=False)

    def _read(self, owner: Owner) -> tuple[dict[str, Any] | None, str | None]:
        """(owner object or None if gone, remembered node or None)."""
        try:
            obj = self.handle.objects.get(
                owner.api_version, owner.kind, owner.name, owner.namespace
            )
        except ObjectNotFound:
            return None, None
        value = _annotations(obj).get(owner.key)
        return obj, (str(value) if value else None)

    def remembered_node(self, pod: Pod) -> str | None:
        owner = self.owner_of(pod)
        if owner is None:
            return None
        return self._read(owner)[1]

    def unusable_reason(self, pod: Pod, node: Node) -> str | None:
        """Why the pod cannot go to this node now (``cordoned`` / ``not ready``), or None."""
        tols = pod.tolerations
        if node.unschedulable and find_untolerated_taint([_TAINT_UNSCHEDULABLE], tols) is not None:
            return "cordoned"
        ready = node.conditions.get("Ready")
        if ready is not None and ready != "True":
            taint = _TAINT_UNREACHABLE if ready == "Unknown" else _TAINT_NOT_READY
            if find_untolerated_taint([taint], tols) is not None:
                return "not ready"
        return None

    # PreFilter / Filter ------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        node_name = self.remembered_node(pod)
        if node_name is None:
            return Status.skip()
        node_info = next(
            (ni for ni in nodes if ni.node is not None and ni.node.name == node_name), None
        )
        problem: str | None
        if node_info is None or node_info.node is None:
            problem = f"sticky node {node_name} is gone"
        else:
            why = self.unusable_reason(pod, node_info.node)
            problem = f"sticky node {node_name} is unschedulable ({why})" if why else None
        if problem is not None:
            if self.policy == "preferred":
                return Status.skip()
            return Status.unresolvable(problem)
        state.write(STATE_KEY, _State(node_name))
        return PreFilterResult({node_name}), None

    @hookimpl
    def filter(self, state: CycleState, node_info: NodeInfo) -> Status | None:
        st = state.get(STATE_KEY)
        if not isinstance(st, _State):
            return None
        node = node_info.node
        if node is None or node.name != st.node_name:
            return Status.unresolvable(f"node(s) were not the pod's sticky node {st.node_name}")
        return None

    # PostBind -----------------------------------------------------------------------------------
    @hookimpl
    def post_bind(self, pod: Pod, node_name: str) -> None:
        owner = self.owner_of(pod)
        if owner is None:
            return
        last: Exception | None = None
        for attempt in range(PATCH_ATTEMPTS):
            if attempt and self.retry_delay > 0:
                time.sleep(self.retry_delay * attempt)
            try:
                obj = self.handle.objects.get(
                    owner.api_version, owner.kind, owner.name, owner.namespace
                )
            except ObjectNotFound:
                return  # the owner is gone: nothing to remember on
            annotations = _annotations(obj)
            if not owner.always and owner.key not in annotations:
                return  # this owner did not opt in
            if annotations.get(owner.key) == node_name:
                return
            rv = str((obj.get("metadata") or {}).get("resourceVersion") or "") or None
            try:
                self.handle.objects.patch(
                    owner.api_version,
                    owner.kind,
                    owner.name,
                    {"metadata": {"annotations": {owner.key: node_name}}},
                    owner.namespace,
                    resource_version=rv,
                )
                return
            except ObjectNotFound:
                return
            except ObjectConflict as e:
                last = e
        self.handle.event_recorder.event(
            pod.raw,
            "Warning",
            "StickyNodeNotRecorded",
            "PostBind",
            f"could not record sticky node {node_name} on {owner.kind} {owner.namespace}/{owner.name} "
            f"after {PATCH_ATTEMPTS} attempts: {last}",
        )

    # EnqueueExtensions ---------------------------------------------------------------------------
    def _node_hint(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        if new is None:
            return QueueingHint.SKIP
        node = new
        remembered = self.remembered_node(pod)
        if remembered is None:
            return QueueingHint.QUEUE  # no longer sticky: normal placement may work
        if node.name != remembered or self.unusable_reason(pod, node) is not None:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def _owner_hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        obj = new or old
        if not obj or (obj.get("metadata") or {}).get("namespace", pod.namespace) != pod.namespace:
            return QueueingHint.SKIP
        keys = (self.annotation, f"{self.pod_prefix}/{pod.name}")
        before, after = _annotations(old), _annotations(new)
        if any(before.get(k) != after.get(k) for k in keys):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = (
            ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_CONDITION
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, node_actions), self._node_hint
            ),
            ClusterEventWithHint(ClusterEvent("StatefulSet", ActionType.UPDATE), self._owner_hint),
            ClusterEventWithHint(
                ClusterEvent("VirtualMachine", ActionType.UPDATE), self._owner_hint
            ),
        ]
