"""VolumeBinding: kube-scheduler's volume binding plugin, ported.

Followed: ``pkg/scheduler/framework/plugins/volumebinding/{volume_binding.go,binder.go,scorer.go}``
of kubernetes/kubernetes, checked against v1.36.3 (v1.36 semantics; the stored copies were
commits 72771784-era ``volume_binding.go`` with the CSIStorageCapacity/CSIDriver/CSINode queueing
hints, ``binder.go`` 8af39349 and the v1.35-based vendored copy for the StorageCapacityScoring
score; v1.36 changed the assume caches, see ``binder.py``), plus
``k8s.io/component-helpers/storage/volume`` (898b9f80) for PV matching, the defaults of
``pkg/scheduler/apis/config/v1/defaults.go`` and ``validation_pluginargs.go``.

* PreFilter: every claim of the pod must exist (``persistentvolumeclaim "x" not found``), not be
  Lost or being deleted; unbound claims of an ``Immediate`` class reject the pod
  (``pod has unbound immediate PersistentVolumeClaims``). Since v1.34 PreFilter no longer returns
  a PreFilterResult from bound PVs' node affinity (removed upstream), so it does not here.
* Filter: bound claims' PVs must exist and their node affinity match the node; unbound
  ``WaitForFirstConsumer`` claims get the smallest available PV that fits (class, access modes,
  capacity, volume mode, selector, node affinity) or are left to dynamic provisioning (the
  class has a provisioner, its allowedTopologies match the node, CSIStorageCapacity allows).
* Reserve assumes the chosen PVs / annotated claims (Unreserve reverts); PreBind writes them.
* PreScore/Score: only with the ``StorageCapacityScoring`` feature gate (alpha, off in v1.36;
  set ``KUBESCHED_FEATURE_GATES=StorageCapacityScoring=true`` to turn it on). Without it the
  plugin never scores and ``shape`` must not be set, as in kube-scheduler.

kube-scheduler's feature gates are not part of kubesched's configuration; the ones this plugin
consults are read from ``KUBESCHED_FEATURE_GATES`` (``Name=true,Other=false``) at import time
and can be changed through :data:`FEATURES` (tests do).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.sdk import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    StateData,
    Status,
    hookimpl,
)

from ..helper import SKIP
from .binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    volume_limit,
)
from .storage_helpers import (
    ANN_MIGRATED_PLUGINS,
    STORAGE_API,
    ObjectCache,
    as_pod,
    meta,
    not_found_message,
    pvc_name_of_volume,
    quantity,
    raw,
    storage_request,
    volume_is_for_pod,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "FEATURES",
    "UtilizationShapePoint",
    "VolumeBinding",
    "VolumeBindingArgs",
]

NAME = "VolumeBinding"
#: kube-scheduler's stateKey for this plugin is its name.
STATE_KEY = NAME
MAX_UTILIZATION = 100
#: config.MaxCustomPriorityScore
MAX_CUSTOM_PRIORITY_SCORE = 10
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


def _parse_feature_gates(text: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for item in text.split(","):
        name, sep, val = item.strip().partition("=")
        if name and sep:
            out[name.strip()] = val.strip().lower() == "true"
    return out


#: The kube-scheduler feature gates this plugin reads, with their v1.36 defaults.
FEATURES: dict[str, bool] = {
    "StorageCapacityScoring": False,
    **{
        k: v
        for k, v in _parse_feature_gates(os.environ.get("KUBESCHED_FEATURE_GATES", "")).items()
        if k == "StorageCapacityScoring"
    },
}


def _storage_capacity_scoring() -> bool:
    return bool(FEATURES.get("StorageCapacityScoring"))


# ---------------------------------------------------------------------------------------------
# Args


@dataclass
class UtilizationShapePoint:
    utilization: int = 0
    score: int = 0


@dataclass
class VolumeBindingArgs:
    """VolumeBindingArgs with kube-scheduler's defaults (SetDefaults_VolumeBindingArgs)."""

    bind_timeout_seconds: int = 600
    #: Only with the StorageCapacityScoring feature gate; defaulted to
    #: ``[{0, 10}, {100, 0}]`` when the gate is on and no shape is given.
    shape: list[UtilizationShapePoint] | None = None

    def __post_init__(self) -> None:
        # SetDefaults_VolumeBindingArgs: len(obj.Shape) == 0 && gate on
        if not self.shape and _storage_capacity_scoring():
            self.shape = [
                UtilizationShapePoint(utilization=0, score=MAX_CUSTOM_PRIORITY_SCORE),
                UtilizationShapePoint(utilization=100, score=0),
            ]

    def validate(self) -> None:
        """ValidateVolumeBindingArgs."""
        errs: list[str] = []
        if self.bind_timeout_seconds < 0:
            errs.append(
                f"bindTimeoutSeconds: Invalid value: {self.bind_timeout_seconds}: "
                "invalid BindTimeoutSeconds, should not be a negative value"
            )
        if _storage_capacity_scoring():
            errs.extend(_validate_function_shape(self.shape or [], "shape"))
        elif self.shape is not None:
            errs.append(
                f"shape: Invalid value: {_shape_repr(self.shape)}: unexpected field `shape`, remove it or "
                "turn on the feature gate StorageCapacityScoring"
            )
        if errs:
            raise ValueError(", ".join(errs))


def _shape_repr(shape: Sequence[UtilizationShapePoint]) -> str:
    """The shape as apimachinery's field.Error renders it (json.Marshal of the internal type)."""
    return "[" + ",".join(f'{{"Utilization":{p.utilization},"Score":{p.score}}}' for p in shape) + "]"


def _validate_function_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[str]:
    """validateFunctionShape."""
    if not shape:
        return [f"{path}: Required value: at least one point must be specified"]
    errs: list[str] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                f"{path}[{i}].utilization: Invalid value: {shape[i].utilization}: "
                "values must be sorted in increasing order"
            )
            break
    for i, p in enumerate(shape):
        if p.utilization < 0 or p.utilization > 100:
            errs.append(f"{path}[{i}].utilization: Invalid value: {p.utilization}: not in valid range [0, 100]")
        if p.score < 0 or p.score > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                f"{path}[{i}].score: Invalid value: {p.score}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
    return errs


# ---------------------------------------------------------------------------------------------
# Scorer (scorer.go + helper.BuildBrokenLinearFunction)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def build_broken_linear_function(shape: Sequence[tuple[int, int]]) -> Any:
    def f(p: int) -> int:
        for i, (util, score) in enumerate(shape):
            if p <= util:
                if i == 0:
                    return shape[0][1]
                pu, ps = shape[i - 1]
                return ps + _go_div((score - ps) * (p - pu), util - pu)
        return shape[-1][1]

    return f


def build_scorer_function(shape: Sequence[tuple[int, int]]) -> Any:
    raw_fn = build_broken_linear_function(shape)

    def f(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw_fn(MAX_UTILIZATION)
        return raw_fn(_go_div(requested * MAX_UTILIZATION, capacity))

    def scorer(class_resources: dict[str, list[int]]) -> int:
        if not class_resources:
            return 0
        total = sum(f(req, cap) for req, cap in class_resources.values())
        # math.Round: half away from zero
        return math.floor(total / len(class_resources) + 0.5)

    return scorer


# ---------------------------------------------------------------------------------------------
# Cycle state


class _CycleCache(ObjectCache):
    """Per-cycle lookups (storage classes, PVCs, PVs, CSIDrivers, CSIStorageCapacities)."""

    __slots__ = ("_binder", "_capacities", "_drivers", "_pvs")

    def __init__(self, objects: Any, binder: VolumeBinder) -> None:
        super().__init__(objects)
        self._binder = binder
        self._pvs: dict[str, dict[str, Any]] | None = None
        self._drivers: dict[str, dict[str, Any] | None] = {}
        self._capacities: list[dict[str, Any]] | None = None

    def pvs(self) -> dict[str, dict[str, Any]]:
        if self._pvs is None:
            self._pvs = self._binder.list_pvs()
        return self._pvs

    def csi_driver(self, name: str) -> dict[str, Any] | None:
        try:
            return self._drivers[name]
        except KeyError:
            pass
        try:
            obj: dict[str, Any] | None = self._objects.get(STORAGE_API, "CSIDriver", name)
        except Exception:  # ObjectNotFound: not a CSI driver
            obj = None
        self._drivers[name] = obj
        return obj

    def csi_storage_capacities(self) -> list[dict[str, Any]]:
        if self._capacities is None:
            self._capacities = list(self._objects.list(STORAGE_API, "CSIStorageCapacity"))
        return self._capacities


class _StateData(StateData):
    """stateData; like Go's, ``clone`` returns the same object (Filter results are shared)."""

    def __init__(self, claims: PodVolumeClaims | None = None, cache: _CycleCache | None = None) -> None:
        self.all_bound = False
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.pod_volume_claims = claims
        self.has_static_bindings = False
        self.cache = cache
        self.lock = threading.Lock()

    def clone(self) -> _StateData:
        return self


#: errNoPodVolumeForNode (volume_binding.go), followed by the quoted node name
ERR_NO_POD_VOLUME_FOR_NODE = "no pod volume found for node"


def _get_state(state: CycleState) -> _StateData:
    s = state.get(STATE_KEY)
    if s is None:
        raise KeyError(f'"{STATE_KEY}" not found')
    if not isinstance(s, _StateData):
        raise TypeError("unable to convert state into stateData")
    return s


# ---------------------------------------------------------------------------------------------
# The plugin


class VolumeBinding:
    """Binds the pod's PersistentVolumeClaims to PersistentVolumes (or triggers dynamic
    provisioning on the chosen node) as part of scheduling."""

    name = NAME
    Args = VolumeBindingArgs
    args_kind = "VolumeBindingArgs"

    def __init__(self, args: VolumeBindingArgs | None, handle: Any) -> None:
        args = args if args is not None else VolumeBindingArgs()
        self._handle = handle
        self._objects = handle.objects
        self.binder = VolumeBinder(handle, args.bind_timeout_seconds)
        self._scorer = None
        if _storage_capacity_scoring():
            shape = [
                (p.utilization, p.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for p in args.shape or []
            ]
            self._scorer = build_scorer_function(shape)

    # EnqueueExtensions -------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Queueing hints are always on in kubesched, so (as kube-scheduler with QHint) no
        # UpdateNodeTaint registration is needed for Node.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS.value, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM.value, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME.value, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE.value, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_csi_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER.value, ActionType.UPDATE),
                self.is_schedulable_after_csi_driver_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY.value, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_csi_storage_capacity_change,
            ),
        ]

    @staticmethod
    def is_schedulable_after_csi_node_change(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        if old_obj is None:
            return QueueingHint.QUEUE
        old, new = raw(old_obj), raw(new_obj)
        if not isinstance(old, dict) or not isinstance(new, dict):
            return QueueingHint.QUEUE
        old_ann = (meta(old).get("annotations") or {}).get(ANN_MIGRATED_PLUGINS)
        new_ann = (meta(new).get("annotations") or {}).get(ANN_MIGRATED_PLUGINS)
        return QueueingHint.QUEUE if old_ann != new_ann else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_persistent_volume_claim_change(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        new = raw(new_obj)
        if not isinstance(new, dict):
            return QueueingHint.QUEUE
        pod = as_pod(pod)
        md = meta(new)
        if pod.namespace != (md.get("namespace") or "default"):
            return QueueingHint.SKIP
        for vol in pod.volumes:
            name, _ = pvc_name_of_volume(pod, vol)
            if name is not None and name == md.get("name"):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_storage_class_change(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        new = raw(new_obj)
        if not isinstance(new, dict):
            return QueueingHint.QUEUE
        if old_obj is None:
            return QueueingHint.QUEUE
        old = raw(old_obj)
        if not isinstance(old, dict):
            return QueueingHint.QUEUE
        if (new.get("allowedTopologies") or None) != (old.get("allowedTopologies") or None):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_csi_storage_capacity_change(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        new = raw(new_obj)
        if not isinstance(new, dict):
            return QueueingHint.QUEUE
        if old_obj is None:
            return QueueingHint.QUEUE
        old = raw(old_obj)
        if not isinstance(old, dict):
            return QueueingHint.QUEUE
        old_limit = volume_limit(old)
        new_limit = volume_limit(new)
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_csi_driver_change(pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        old, new = raw(old_obj), raw(new_obj)
        if not isinstance(new, dict) or not isinstance(old, dict):
            return QueueingHint.QUEUE
        pod = as_pod(pod)
        name = meta(new).get("name")
        for vol in pod.volumes:
            csi = vol.get("csi")
            if csi is None or csi.get("driver") != name:
                continue
            if (old.get("spec") or {}).get("storageCapacity") and not (new.get("spec") or {}).get("storageCapacity"):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # PreFilter ---------------------------------------------------------------------------------
    def _pod_has_pvcs(self, pod: Pod, cache: ObjectCache) -> tuple[bool, str | None]:
        """podHasPVCs: (has a PVC, error message)."""
        has_pvc = False
        for vol in pod.volumes:
            pvc_name, is_ephemeral = pvc_name_of_volume(pod, vol)
            if pvc_name is None:
                continue
            has_pvc = True
            pvc = cache.pvc(pod.namespace, pvc_name)
            if pvc is None:
                if is_ephemeral:
                    return has_pvc, (
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{pvc_name}"'
                    )
                return has_pvc, not_found_message("PersistentVolumeClaim", pvc_name)
            md = meta(pvc)
            if (pvc.get("status") or {}).get("phase") == "Lost":
                vol_name = (pvc.get("spec") or {}).get("volumeName") or ""
                return has_pvc, (
                    f'persistentvolumeclaim "{md.get("name")}" bound to non-existent persistentvolume "{vol_name}"'
                )
            if md.get("deletionTimestamp"):
                return has_pvc, f'persistentvolumeclaim "{md.get("name")}" is being deleted'
            if is_ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err:
                    return has_pvc, err
        return has_pvc, None

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        cache = _CycleCache(self._objects, self.binder)
        has_pvc, err = self._pod_has_pvcs(pod, cache)
        if err is not None:
            return Status.unresolvable(err)
        if not has_pvc:
            state.write(STATE_KEY, _StateData())
            return SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod, cache)
        except BinderError as e:
            return Status.failed(str(e), e)
        if claims.unbound_claims_immediate:
            return Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(
            STATE_KEY,
            _StateData(
                PodVolumeClaims(
                    bound_claims=claims.bound_claims,
                    unbound_claims_delay_binding=claims.unbound_claims_delay_binding,
                    unbound_volumes_delay_binding=claims.unbound_volumes_delay_binding,
                ),
                cache,
            ),
        )
        return None

    # Filter ------------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            s = _get_state(state)
        except (KeyError, TypeError) as e:
            return Status.failed(str(e).strip('"'), e)
        node: Node | None = node_info.node
        if node is None:
            return Status.failed("node not found")
        claims = s.pod_volume_claims
        if claims is None:
            # The pod has no PVC (PreFilter returned Skip); kube-scheduler's FindPodVolumes
            # finds nothing to check either.
            pod_volumes = PodVolumes()
            reasons: list[str] = []
        else:
            cache = s.cache if s.cache is not None else _CycleCache(self._objects, self.binder)
            try:
                pod_volumes, reasons = self.binder.find_pod_volumes(pod, claims, node, cache.pvs, cache)
            except BinderError as e:
                return Status.failed(str(e), e)
        if reasons:
            return Status.unresolvable(*reasons)
        with s.lock:
            s.pod_volumes_by_node[node.name] = pod_volumes
            s.has_static_bindings = s.has_static_bindings or bool(pod_volumes.static_bindings)
        return None

    # PreScore / Score ------------------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if self._scorer is None:
            return SKIP
        try:
            s = _get_state(state)
        except (KeyError, TypeError) as e:
            return Status.failed(str(e), e)
        if s.has_static_bindings or _storage_capacity_scoring():
            return None
        return SKIP

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        if self._scorer is None:
            return 0
        try:
            s = _get_state(state)
        except (KeyError, TypeError) as e:
            return 0, Status.failed(str(e), e)
        pod_volumes = s.pod_volumes_by_node.get(node_info.name)
        if pod_volumes is None:
            return 0
        class_resources: dict[str, list[int]] = {}
        if pod_volumes.static_bindings or not _storage_capacity_scoring():
            for b in pod_volumes.static_bindings:
                req, cap = b.storage_resource()
                r = class_resources.setdefault(b.storage_class_name(), [0, 0])
                r[0] += req
                r[1] += cap
        else:
            for p in pod_volumes.dynamic_provisions:
                if p.node_capacity is None:
                    continue
                cls = str((p.pvc.get("spec") or {}).get("storageClassName") or "")
                r = class_resources.setdefault(cls, [0, 0])
                cap_q = p.node_capacity.get("capacity")
                r[1] = _quantity_value(cap_q)
                r[0] += _quantity_value_f(storage_request(p.pvc))
        return self._scorer(class_resources)

    # Reserve / Unreserve ----------------------------------------------------------------------------
    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _get_state(state)
        except (KeyError, TypeError) as e:
            return Status.failed(str(e), e)
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            # the pod references no PVC
            s.all_bound = True
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        except BinderError as e:
            return Status.failed(str(e), e)
        return None

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _StateData):
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return
        self.binder.revert_assumed_pod_volumes(pod_volumes)

    # PreBind --------------------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState, node_name: str) -> Status | None:
        """v1.36 PreBindPreFlight: Skip when every claim is bound (a pod without claims too:
        Reserve marked it), Success when the node has volumes to bind, an Error otherwise."""
        try:
            s = _get_state(state)
        except (KeyError, TypeError) as e:
            return Status.failed(str(e), e)
        if s.all_bound:
            return SKIP
        if node_name not in s.pod_volumes_by_node:
            return Status.failed(f'{ERR_NO_POD_VOLUME_FOR_NODE} "{node_name}"')
        return None

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _get_state(state)
        except (KeyError, TypeError) as e:
            return Status.failed(str(e), e)
        if s.all_bound:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return Status.failed(f'{ERR_NO_POD_VOLUME_FOR_NODE} "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod, node_name, pod_volumes)
        except BinderError as e:
            return Status.failed(str(e), e)
        return None


def _quantity_value(q: Any) -> int:
    return _quantity_value_f(quantity(q))


def _quantity_value_f(q: Any) -> int:
    return -((-q.numerator) // q.denominator)


