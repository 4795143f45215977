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
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from itertools import count
from typing import TYPE_CHECKING, Any, NoReturn

from .quantity import QuantityError, parse_quantity
from .readonly import (
    EMPTY_DICT,
    EMPTY_LIST,
    ReadOnlyDict,
    ReadOnlyList,
    read_only,
)
from .selectors import InvalidObjectError, LabelSelector, NodeSelector

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
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

#: kube-scheduler's defaults for containers without requests, used by scoring only.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_CPU = "cpu"
_MEMORY = "memory"
_EPHEMERAL = "ephemeral-storage"
_PODS = "pods"


def is_scalar_resource(name: str) -> bool:
    """Extended (``example.com/foo``), hugepages-*, attachable-volumes-* resources.

    kube-scheduler's IsScalarResourceName: extended, native hugepages, prefixed native, or
    attachable volumes.
    """
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    if "/" in name:
        # extended (not kubernetes.io/ prefixed) or native prefixed (kubernetes.io/...)
        return True
    return False


def parse_time(value: Any) -> float | None:
    """RFC 3339 time (``2024-01-02T03:04:05Z``) as seconds since the epoch."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return value.timestamp()
    s = str(value)
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    try:
        d = _dt.datetime.fromisoformat(s)
    except ValueError:
        raise InvalidObjectError("metadata.creationTimestamp", f"invalid time {value!r}") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.UTC)
    return d.timestamp()


class Resource:
    """Compute resources in kube-scheduler's units: milli-CPU, bytes, a pod count, scalars.

    The Resources a view gives (``pod.requests``, ``node.allocatable``, a snapshot NodeInfo's
    ``requested``) are read-only; :meth:`clone` gives a mutable copy."""

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: Mapping[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = dict(scalar) if scalar else {}

    @classmethod
    def from_list(cls, rl: Mapping[str, Any] | None, field: str = "") -> Resource:
        """From a v1.ResourceList (``{"cpu": "2", "memory": "4Gi"}``)."""
        r = cls()
        for name, q in (rl or {}).items():
            r.add_quantity(name, _q(q, f"{field}.{name}" if field else name))
        return r

    def add_quantity(self, name: str, q: Fraction) -> None:
        if name == _CPU:
            self.milli_cpu += _ceil(q * 1000)
        elif name == _MEMORY:
            self.memory += _ceil(q)
        elif name == _PODS:
            self.allowed_pod_number += _ceil(q)
        elif name == _EPHEMERAL:
            self.ephemeral_storage += _ceil(q)
        elif is_scalar_resource(name):
            self.scalar[name] = self.scalar.get(name, 0) + _ceil(q)

    def get(self, name: str) -> int:
        """The amount of one resource by its API name."""
        if name == _CPU:
            return self.milli_cpu
        if name == _MEMORY:
            return self.memory
        if name == _EPHEMERAL:
            return self.ephemeral_storage
        if name == _PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def clone(self) -> Resource:
        """A mutable copy (also of a read-only Resource)."""
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, self.scalar)

    def read_only(self) -> Resource:
        """A read-only copy (``self`` if it is read-only already)."""
        if type(self) is _ReadOnlyResource:
            return self
        r = _ReadOnlyResource.__new__(_ReadOnlyResource)
        _set(r, "milli_cpu", self.milli_cpu)
        _set(r, "memory", self.memory)
        _set(r, "ephemeral_storage", self.ephemeral_storage)
        _set(r, "allowed_pod_number", self.allowed_pod_number)
        _set(r, "scalar", ReadOnlyDict(self.scalar))
        return r

    @property
    def is_read_only(self) -> bool:
        return False

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) + sign * v

    def as_dict(self) -> dict[str, int]:
        d = {_CPU: self.milli_cpu, _MEMORY: self.memory, _EPHEMERAL: self.ephemeral_storage, _PODS: self.allowed_pod_number}
        d.update(self.scalar)
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and {k: v for k, v in self.scalar.items() if v} == {k: v for k, v in other.scalar.items() if v}
        )

    def __repr__(self) -> str:
        return (
            f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, "
            f"ephemeral_storage={self.ephemeral_storage}, allowed_pod_number={self.allowed_pod_number}, "
            f"scalar={self.scalar})"
        )


#: What a write to a read-only Resource raises (``TypeError``).
RESOURCE_READ_ONLY_MESSAGE = "this Resource belongs to a read-only view; resource.clone() gives a mutable copy"

_set = object.__setattr__


def _resource_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(RESOURCE_READ_ONLY_MESSAGE)


class _ReadOnlyResource(Resource):
    """A Resource of a view: every write raises; the runtime's cache updates a sealed
    NodeInfo's totals through :func:`_add_resource`."""

    __slots__ = ()

    __setattr__ = _resource_error
    __delattr__ = _resource_error
    add = _resource_error
    add_quantity = _resource_error

    @property
    def is_read_only(self) -> bool:
        return True


def _add_resource(r: Resource, other: Resource, sign: int) -> None:
    """``r.add(other, sign)`` that also works on a read-only Resource (NodeInfo's own totals)."""
    _set(r, "milli_cpu", r.milli_cpu + sign * other.milli_cpu)
    _set(r, "memory", r.memory + sign * other.memory)
    _set(r, "ephemeral_storage", r.ephemeral_storage + sign * other.ephemeral_storage)
    if other.scalar:
        sc = r.scalar
        for k, v in other.scalar.items():
            dict.__setitem__(sc, k, sc.get(k, 0) + sign * v)


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def _q(v: Any, field: str) -> Fraction:
    try:
        return parse_quantity(v)
    except QuantityError as e:
        raise InvalidObjectError(field, str(e)) from None


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""

    def __str__(self) -> str:
        return f"{{{self.key}: {self.value}}}" if self.value else f"{{{self.key}: }}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """v1.Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator == "Exists":
            return True
        return False


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Iterable[Toleration], effects: Iterable[str] | None = None
) -> Taint | None:
    """The first taint (with one of ``effects``, if given) that no toleration tolerates."""
    tols = list(tolerations)
    eff = set(effects) if effects is not None else None
    for t in taints:
        if eff is not None and t.effect not in eff:
            continue
        if not any(tol.tolerates(t) for tol in tols):
            return t
    return None


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A parsed (anti-)affinity term of a pod: who it selects and over which topology key."""

    namespaces: frozenset[str]
    selector: LabelSelector
    topology_key: str
    namespace_selector: LabelSelector
    weight: int = 0

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str] | None = None) -> bool:
        """Whether ``pod`` is selected (its namespace is listed or selected, and labels match)."""
        if pod.namespace in self.namespaces or (
            namespace_labels is not None and self.namespace_selector.matches(namespace_labels)
        ):
            return self.selector.matches(pod.labels)
        return False


_uid = count(1)


#: What assigning or deleting an attribute of a Pod view raises (``TypeError``).
POD_READ_ONLY_MESSAGE = "Pod views are read-only; write through handle.objects.patch(...)"
#: What assigning or deleting an attribute of a Node view raises (``TypeError``).
NODE_READ_ONLY_MESSAGE = "Node views are read-only; write through handle.objects.patch(...)"


def _pod_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(POD_READ_ONLY_MESSAGE)


def _node_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(NODE_READ_ONLY_MESSAGE)


def _ro_list(v: Any) -> ReadOnlyList[Any]:
    """A list field of a view's (read-only) JSON as a ReadOnlyList (empty when missing)."""
    if type(v) is ReadOnlyList:
        return v
    return read_only(list(v)) if v else EMPTY_LIST  # type: ignore[no-any-return]


class Pod:
    """A read-only view of a v1.Pod. ``pod.raw`` is the API object, as read-only mappings and
    lists (a copy made once, when the view is built); writes raise ``TypeError``."""

    __slots__ = ("__dict__", "raw")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise InvalidObjectError("", "a Pod must be an object")
        _set(self, "raw", read_only(raw))

    if TYPE_CHECKING:
        raw: Mapping[str, Any]
    else:
        __setattr__ = _pod_error
        __delattr__ = _pod_error

    # metadata -----------------------------------------------------------------------------
    @cached_property
    def metadata(self) -> Mapping[str, Any]:
        return self.raw.get("metadata") or EMPTY_DICT

    @cached_property
    def spec(self) -> Mapping[str, Any]:
        return self.raw.get("spec") or EMPTY_DICT

    @cached_property
    def status(self) -> Mapping[str, Any]:
        return self.raw.get("status") or EMPTY_DICT

    @cached_property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @cached_property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "default")

    @cached_property
    def uid(self) -> str:
        return str(self.metadata.get("uid") or f"{self.namespace}/{self.name}")

    @cached_property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @cached_property
    def labels(self) -> Mapping[str, str]:
        return self.metadata.get("labels") or EMPTY_DICT

    @cached_property
    def annotations(self) -> Mapping[str, str]:
        return self.metadata.get("annotations") or EMPTY_DICT

    @cached_property
    def owner_references(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(self.metadata.get("ownerReferences"))

    @cached_property
    def controller_ref(self) -> Mapping[str, Any] | None:
        for ref in self.owner_references:
            if ref.get("controller"):
                return ref
        return None

    @cached_property
    def creation_timestamp(self) -> float:
        return parse_time(self.metadata.get("creationTimestamp")) or 0.0

    @cached_property
    def deletion_timestamp(self) -> float | None:
        return parse_time(self.metadata.get("deletionTimestamp"))

    @cached_property
    def resource_version(self) -> str:
        return str(self.metadata.get("resourceVersion") or "")

    # spec -------------------------------------------------------------------------------------
    @cached_property
    def node_name(self) -> str:
        return str(self.spec.get("nodeName") or "")

    @cached_property
    def scheduler_name(self) -> str:
        return str(self.spec.get("schedulerName") or "default-scheduler")

    @cached_property
    def priority(self) -> int:
        p = self.spec.get("priority")
        if p is None:
            return 0
        try:
            return int(p)
        except (TypeError, ValueError):
            raise InvalidObjectError("spec.priority", f"invalid value {p!r}: must be an integer") from None

    @cached_property
    def priority_class_name(self) -> str:
        return str(self.spec.get("priorityClassName") or "")

    @cached_property
    def preemption_policy(self) -> str:
        return str(self.spec.get("preemptionPolicy") or "PreemptLowerPriority")

    @cached_property
    def nominated_node_name(self) -> str:
        return str(self.status.get("nominatedNodeName") or "")

    @cached_property
    def phase(self) -> str:
        return str(self.status.get("phase") or "")

    @cached_property
    def containers(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(self.spec.get("containers"))

    @cached_property
    def init_containers(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(self.spec.get("initContainers"))

    @cached_property
    def node_selector(self) -> Mapping[str, str]:
        ns = self.spec.get("nodeSelector") or EMPTY_DICT
        if not isinstance(ns, Mapping):
            raise InvalidObjectError("spec.nodeSelector", "must be a map of strings")
        if all(type(k) is str and type(v) is str for k, v in ns.items()):
            return ns
        return ReadOnlyDict({str(k): str(v) for k, v in ns.items()})

    @cached_property
    def affinity(self) -> Mapping[str, Any]:
        return self.spec.get("affinity") or EMPTY_DICT

    @cached_property
    def tolerations(self) -> tuple[Toleration, ...]:
        out = []
        for i, t in enumerate(self.spec.get("tolerations") or []):
            if not isinstance(t, Mapping):
                raise InvalidObjectError(f"spec.tolerations[{i}]", "must be an object")
            op = t.get("operator") or "Equal"
            if op not in ("Equal", "Exists"):
                raise InvalidObjectError(f"spec.tolerations[{i}].operator", f'Unsupported value: "{op}": supported values: "Equal", "Exists"')
            out.append(
                Toleration(
                    key=str(t.get("key") or ""),
                    operator=op,
                    value=str(t.get("value") or ""),
                    effect=str(t.get("effect") or ""),
                    toleration_seconds=t.get("tolerationSeconds"),
                )
            )
        return tuple(out)

    @cached_property
    def scheduling_gates(self) -> Sequence[str]:
        return ReadOnlyList([str(g.get("name")) for g in self.spec.get("schedulingGates") or []])

    @cached_property
    def topology_spread_constraints(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(self.spec.get("topologySpreadConstraints"))

    @cached_property
    def volumes(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(self.spec.get("volumes"))

    @cached_property
    def pvc_names(self) -> Sequence[str]:
        """Names of PersistentVolumeClaims the pod mounts (ephemeral volumes as ``<pod>-<volume>``)."""
        out = []
        for v in self.volumes:
            if v.get("persistentVolumeClaim"):
                out.append(str(v["persistentVolumeClaim"].get("claimName")))
            elif v.get("ephemeral"):
                out.append(f"{self.name}-{v.get('name')}")
        return ReadOnlyList(out)

    @cached_property
    def host_ports(self) -> tuple[HostPort, ...]:
        """Host ports of the containers and of sidecars (init containers with
        ``restartPolicy: Always``), as ``schedutil.GetHostPorts`` (v1.34) collects them."""
        out = []
        sidecars = [c for c in self.init_containers if c.get("restartPolicy") == "Always"]
        for ci, c in enumerate([*self.containers, *sidecars]):
            for pi, p in enumerate(c.get("ports") or []):
                hp = p.get("hostPort")
                if not hp:
                    continue
                try:
                    port = int(hp)
                except (TypeError, ValueError):
                    raise InvalidObjectError(f"spec.containers[{ci}].ports[{pi}].hostPort", f"invalid value {hp!r}") from None
                out.append(HostPort(str(p.get("hostIP") or "0.0.0.0"), str(p.get("protocol") or "TCP"), port))
        return tuple(out)

    @cached_property
    def images(self) -> Sequence[str]:
        return ReadOnlyList([str(c.get("image") or "") for c in (*self.containers, *self.init_containers)])

    # resources ----------------------------------------------------------------------------
    def _requests_fraction(self, non_missing: bool) -> dict[str, Fraction]:
        """resourcehelper.PodRequests: max(sum(containers), init containers), sidecars, overhead."""

        def creqs(c: Mapping[str, Any], field: str) -> dict[str, Fraction]:
            res = c.get("resources") or {}
            # the API server defaults each missing request to its limit
            reqs = res.get("requests") or {}
            out = {k: _q(v, f"{field}.resources.limits.{k}") for k, v in (res.get("limits") or {}).items() if k not in reqs}
            out.update({k: _q(v, f"{field}.resources.requests.{k}") for k, v in reqs.items()})
            if non_missing:
                out.setdefault(_CPU, Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000))
                out.setdefault(_MEMORY, Fraction(DEFAULT_MEMORY_REQUEST))
            return out

        total: dict[str, Fraction] = {}
        for i, c in enumerate(self.containers):
            for k, v in creqs(c, f"spec.containers[{i}]").items():
                total[k] = total.get(k, 0) + v
        restartable: dict[str, Fraction] = {}
        init_max: dict[str, Fraction] = {}
        for i, c in enumerate(self.init_containers):
            r = creqs(c, f"spec.initContainers[{i}]")
            if c.get("restartPolicy") == "Always":
                for k, v in r.items():
                    total[k] = total.get(k, 0) + v
                    restartable[k] = restartable.get(k, 0) + v
                r = dict(restartable)
            else:
                r = dict(r)
                for k, v in restartable.items():
                    r[k] = r.get(k, 0) + v
            for k, v in r.items():
                if v > init_max.get(k, Fraction(-1)):
                    init_max[k] = v
        for k, v in init_max.items():
            if v > total.get(k, Fraction(-1)):
                total[k] = v
        pod_level = (self.spec.get("resources") or {}).get("requests") or {}
        for k in (_CPU, _MEMORY):
            if k in pod_level:
                total[k] = _q(pod_level[k], f"spec.resources.requests.{k}")
        for k, v in (self.spec.get("overhead") or {}).items():
            total[k] = total.get(k, 0) + _q(v, f"spec.overhead.{k}")
        return total

    @cached_property
    def requests(self) -> Resource:
        """Effective requests, as kube-scheduler computes them (init containers, overhead);
        read-only (``pod.requests.clone()`` is a mutable copy)."""
        r = Resource()
        for k, v in self._requests_fraction(False).items():
            r.add_quantity(k, v)
        return r.read_only()

    @cached_property
    def non_zero_requests(self) -> tuple[int, int]:
        """(milli-CPU, memory) with 100m / 200Mi for containers that request nothing (scoring)."""
        f = self._requests_fraction(True)
        return _ceil(f.get(_CPU, Fraction(0)) * 1000), _ceil(f.get(_MEMORY, Fraction(0)))

    @cached_property
    def requested_resource_names(self) -> frozenset[str]:
        return frozenset(k for k, v in self._requests_fraction(False).items() if v != 0)

    # affinity -----------------------------------------------------------------------------
    def _terms(self, kind: str, field: str, weighted: bool) -> tuple[AffinityTerm, ...]:
        sect = self.affinity.get(kind) or {}
        out = []
        for i, raw in enumerate(sect.get(field) or []):
            f = f"spec.affinity.{kind}.{field}[{i}]"
            weight = 0
            if weighted:
                weight = int(raw.get("weight") or 0)
                raw = raw.get("podAffinityTerm") or {}
                f += ".podAffinityTerm"
            ns = raw.get("namespaces") or []
            nss = raw.get("namespaceSelector")
            namespaces = frozenset([self.namespace]) if not ns and nss is None else frozenset(str(n) for n in ns)
            out.append(
                AffinityTerm(
                    namespaces=namespaces,
                    selector=LabelSelector.parse(raw.get("labelSelector"), f"{f}.labelSelector"),
                    topology_key=str(raw.get("topologyKey") or ""),
                    namespace_selector=LabelSelector.parse(nss, f"{f}.namespaceSelector"),
                    weight=weight,
                )
            )
        return tuple(out)

    @cached_property
    def required_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        return self._terms("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution", False)

    @cached_property
    def required_anti_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        return self._terms("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", False)

    @cached_property
    def preferred_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        return self._terms("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution", True)

    @cached_property
    def preferred_anti_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        return self._terms("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", True)

    @cached_property
    def has_pod_affinity(self) -> bool:
        """kube-scheduler's podWithAffinity: any pod (anti-)affinity section is set."""
        return bool(self.affinity.get("podAffinity") or self.affinity.get("podAntiAffinity"))

    @cached_property
    def has_required_anti_affinity(self) -> bool:
        return bool((self.affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))

    @cached_property
    def required_node_affinity(self) -> NodeSelector | None:
        """``spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``."""
        na = (self.affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if na is None:
            return None
        return NodeSelector.parse_lazy(na, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")

    def matches_node_selector_and_affinity(self, node: Node) -> bool:
        """The pod's nodeSelector and required node affinity both match the node
        (``nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)``)."""
        labels = node.labels
        for k, v in self.node_selector.items():
            if labels.get(k) != v:
                return False
        na = self.required_node_affinity
        if na is not None and not na.matches(labels, node.name):
            return False
        return True

    # validation ---------------------------------------------------------------------------
    def validate(self) -> None:
        """Parse everything the default plugins read; raises :class:`InvalidObjectError` with
        the field path of the first problem. The runtime calls this before scheduling the pod."""
        if not self.name:
            raise InvalidObjectError("metadata.name", "Required value: name or generateName is required")
        _ = (
            self.creation_timestamp,
            self.priority,
            self.requests,
            self.non_zero_requests,
            self.tolerations,
            self.host_ports,
            self.node_selector,
            self.required_affinity_terms,
            self.required_anti_affinity_terms,
            self.preferred_affinity_terms,
            self.preferred_anti_affinity_terms,
        )
        for i, c in enumerate(self.containers):
            for k, v in ((c.get("resources") or {}).get("limits") or {}).items():
                _q(v, f"spec.containers[{i}].resources.limits.{k}")

    # copies -------------------------------------------------------------------------------
    def with_node_name(self, node_name: str) -> Pod:
        """A copy bound to ``node_name`` (what the cache assumes while binding); it shares
        every read-only part of this view but ``spec``."""
        raw = dict(self.raw)
        raw["spec"] = {**self.spec, "nodeName": node_name}
        p = Pod(raw)
        keep = {k: v for k, v in self.__dict__.items() if k not in ("spec", "node_name")}
        p.__dict__.update(keep)
        return p

    def __repr__(self) -> str:
        return f"Pod({self.key})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pod) and other.uid == self.uid

    def __hash__(self) -> int:
        return hash(self.uid)


class Node:
    """A read-only view of a v1.Node. ``node.raw`` is the API object, as read-only mappings
    and lists (a copy made once, when the view is built); writes raise ``TypeError``."""

    __slots__ = ("__dict__", "raw")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise InvalidObjectError("", "a Node must be an object")
        _set(self, "raw", read_only(raw))

    if TYPE_CHECKING:
        raw: Mapping[str, Any]
    else:
        __setattr__ = _node_error
        __delattr__ = _node_error

    @cached_property
    def metadata(self) -> Mapping[str, Any]:
        return self.raw.get("metadata") or EMPTY_DICT

    @cached_property
    def spec(self) -> Mapping[str, Any]:
        return self.raw.get("spec") or EMPTY_DICT

    @cached_property
    def status(self) -> Mapping[str, Any]:
        return self.raw.get("status") or EMPTY_DICT

    @cached_property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @cached_property
    def labels(self) -> Mapping[str, str]:
        return self.metadata.get("labels") or EMPTY_DICT

    @cached_property
    def annotations(self) -> Mapping[str, str]:
        return self.metadata.get("annotations") or EMPTY_DICT

    @cached_property
    def unschedulable(self) -> bool:
        return bool(self.spec.get("unschedulable"))

    @cached_property
    def taints(self) -> tuple[Taint, ...]:
        out = []
        for i, t in enumerate(self.spec.get("taints") or []):
            if not isinstance(t, Mapping) or not t.get("key"):
                raise InvalidObjectError(f"spec.taints[{i}].key", "Required value")
            eff = t.get("effect") or ""
            if eff not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                raise InvalidObjectError(f"spec.taints[{i}].effect", f'Unsupported value: "{eff}": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"')
            out.append(Taint(str(t["key"]), str(t.get("value") or ""), eff))
        return tuple(out)

    @cached_property
    def allocatable(self) -> Resource:
        alloc = self.status.get("allocatable")
        if alloc is None:
            alloc = self.status.get("capacity")
        return Resource.from_list(alloc, "status.allocatable").read_only()

    @cached_property
    def capacity(self) -> Resource:
        return Resource.from_list(self.status.get("capacity"), "status.capacity").read_only()

    @cached_property
    def images(self) -> Sequence[tuple[Sequence[str], int]]:
        """``status.images`` as (names, size in bytes)."""
        return ReadOnlyList([(_ro_list(i.get("names")), int(i.get("sizeBytes") or 0)) for i in self.status.get("images") or []])

    @cached_property
    def conditions(self) -> Mapping[str, str]:
        return ReadOnlyDict({str(c.get("type")): str(c.get("status")) for c in self.status.get("conditions") or []})

    def validate(self) -> None:
        if not self.name:
            raise InvalidObjectError("metadata.name", "Required value: name is required")
        _ = (self.taints, self.allocatable, self.capacity, self.images)

    def __repr__(self) -> str:
        return f"Node({self.name})"


#: What a write to a NodeInfo of the scheduler's snapshot raises (``TypeError``).
NODE_INFO_READ_ONLY_MESSAGE = (
    "NodeInfo views of the snapshot are read-only; evaluate \"what if\" on node_info.clone(), "
    "write through handle.objects.patch(...)"
)


def _node_info_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(NODE_INFO_READ_ONLY_MESSAGE)


class HostPortInfo:
    """Host ports in use on a node: ip -> {(protocol, port)}; ``0.0.0.0`` conflicts with all.

    The one of a snapshot NodeInfo is read-only (``add``/``remove`` raise); :meth:`clone`
    gives an open copy."""

    __slots__ = ("_m", "_sealed")

    def __init__(self) -> None:
        self._m: dict[str, set[tuple[str, int]]] = {}
        self._sealed = False

    def add(self, ip: str, protocol: str, port: int) -> None:
        if self._sealed:
            _node_info_error()
        self._add(ip, protocol, port)

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if self._sealed:
            _node_info_error()
        self._remove(ip, protocol, port)

    def _add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        self._m.setdefault(ip or "0.0.0.0", set()).add((protocol or "TCP", port))

    def _remove(self, ip: str, protocol: str, port: int) -> None:
        ip = ip or "0.0.0.0"
        s = self._m.get(ip)
        if s is not None:
            s.discard((protocol or "TCP", port))
            if not s:
                del self._m[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """True when ``ip:protocol/port`` conflicts with a used port (HostPortInfo.CheckConflict)."""
        if port <= 0:
            return False
        ip = ip or "0.0.0.0"
        pp = (protocol or "TCP", port)
        if ip == "0.0.0.0":
            return any(pp in s for s in self._m.values())
        return pp in self._m.get(ip, ()) or pp in self._m.get("0.0.0.0", ())

    def __len__(self) -> int:
        return sum(len(s) for s in self._m.values())

    def clone(self) -> HostPortInfo:
        """An open (mutable) copy."""
        c = HostPortInfo()
        c._m = {k: set(v) for k, v in self._m.items()}
        return c

    def items(self) -> list[tuple[str, str, int]]:
        return [(ip, pr, po) for ip, s in self._m.items() for pr, po in sorted(s)]


class ImageStateSummary:
    """An image on a node: its size and on how many nodes of the cluster it is (read-only;
    the runtime's cache keeps ``num_nodes`` up to date)."""

    __slots__ = ("num_nodes", "size")

    def __init__(self, size: int, num_nodes: int) -> None:
        _set(self, "size", size)
        _set(self, "num_nodes", num_nodes)

    if TYPE_CHECKING:
        size: int
        num_nodes: int
    else:
        __setattr__ = _node_info_error
        __delattr__ = _node_info_error

    def _count(self, delta: int) -> int:
        """Add ``delta`` to ``num_nodes`` (the runtime's cache) and return the new count."""
        n: int = self.num_nodes + delta
        _set(self, "num_nodes", n)
        return n

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImageStateSummary):
            return NotImplemented
        return self.size == other.size and self.num_nodes == other.num_nodes

    def __repr__(self) -> str:
        return f"ImageStateSummary(size={self.size}, num_nodes={self.num_nodes})"


_generation = count(1)


class NodeInfo:
    """A node and the pods on it (bound and assumed), with running totals.

    The runtime keeps one per node and updates the totals incrementally. The NodeInfos a plugin
    gets from the scheduler (its arguments, ``handle.snapshot()``) are sealed: attribute
    assignment, ``add_pod``/``remove_pod``/``set_node``/``remove_node`` and writes to what they
    hold (``pods``, ``requested``, ``used_ports``, ``image_states``, ...) raise ``TypeError``.
    :meth:`clone` gives an open copy on which a plugin evaluates "what if" with ``add_pod``
    and ``remove_pod`` (as preemption does); a NodeInfo built with ``NodeInfo(node, pods)`` is
    open too. Its lists and mappings are read-only either way: change them through the methods.
    """

    __slots__ = (
        "_sealed",
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    if TYPE_CHECKING:
        _sealed: bool
        node: Node
        name: str
        pods: ReadOnlyList[Pod]
        pods_with_affinity: ReadOnlyList[Pod]
        pods_with_required_anti_affinity: ReadOnlyList[Pod]
        used_ports: HostPortInfo
        requested: Resource
        non_zero_requested: Resource
        allocatable: Resource
        image_states: Mapping[str, ImageStateSummary]
        pvc_ref_counts: ReadOnlyDict[str, int]
        generation: int

    def __init__(self, node: Node | None = None, pods: Iterable[Pod] = ()) -> None:
        _set(self, "_sealed", False)
        #: The node. Always set for the NodeInfos a plugin sees (the snapshot holds only
        #: existing nodes); None only inside the runtime's cache for a deleted node whose pods
        #: are still being removed.
        _set(self, "node", None)
        #: the node's name ("" when there is no node)
        _set(self, "name", "")
        _set(self, "pods", ReadOnlyList())
        _set(self, "pods_with_affinity", ReadOnlyList())
        _set(self, "pods_with_required_anti_affinity", ReadOnlyList())
        _set(self, "used_ports", HostPortInfo())
        _set(self, "requested", Resource())
        _set(self, "non_zero_requested", Resource())
        _set(self, "allocatable", Resource())
        _set(self, "image_states", EMPTY_DICT)
        _set(self, "pvc_ref_counts", ReadOnlyDict())
        _set(self, "generation", next(_generation))
        if node is not None:
            self._set_node(node)
        for p in pods:
            self._add_pod(p)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._sealed:
            _node_info_error()
        _set(self, name, value)

    def __delattr__(self, name: str) -> None:
        _node_info_error()

    @property
    def is_sealed(self) -> bool:
        """True for the scheduler's NodeInfos (read-only); False for clones."""
        return self._sealed

    # the public mutators: open NodeInfos only ------------------------------------------------
    def set_node(self, node: Node) -> None:
        if self._sealed:
            _node_info_error()
        self._set_node(node)

    def remove_node(self) -> None:
        if self._sealed:
            _node_info_error()
        self._remove_node()

    def add_pod(self, pod: Pod) -> None:
        if self._sealed:
            _node_info_error()
        self._add_pod(pod)

    def remove_pod(self, pod: Pod) -> None:
        """Remove the pod with ``pod.uid``; raises ``KeyError`` if it is not on this node."""
        if self._sealed:
            _node_info_error()
        self._remove_pod(pod)

    # the runtime's cache (and the methods above) ---------------------------------------------
    def _seal(self) -> NodeInfo:
        """Make this NodeInfo read-only to plugins (the runtime's cache seals its own)."""
        _set(self, "requested", self.requested.read_only())
        _set(self, "non_zero_requested", self.non_zero_requested.read_only())
        _set(self, "allocatable", self.allocatable.read_only())
        _set(self.used_ports, "_sealed", True)
        _set(self, "_sealed", True)
        return self

    def _set_node(self, node: Node) -> None:
        _set(self, "node", node)
        _set(self, "name", node.name)
        _set(self, "allocatable", node.allocatable)
        _set(self, "generation", next(_generation))

    def _remove_node(self) -> None:
        _set(self, "node", None)
        _set(self, "name", "")
        _set(self, "generation", next(_generation))

    def _set_image_states(self, states: Mapping[str, ImageStateSummary]) -> None:
        _set(self, "image_states", ReadOnlyDict(states) if states else EMPTY_DICT)

    def _add_pod(self, pod: Pod) -> None:
        list.append(self.pods, pod)
        if pod.has_pod_affinity:
            list.append(self.pods_with_affinity, pod)
        if pod.has_required_anti_affinity:
            list.append(self.pods_with_required_anti_affinity, pod)
        self._update(pod, 1)

    def _remove_pod(self, pod: Pod) -> None:
        uid = pod.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, p in enumerate(lst):
                if p.uid == uid:
                    list.__setitem__(lst, i, lst[-1])
                    list.pop(lst)
                    break
        pods = self.pods
        for i, p in enumerate(pods):
            if p.uid == uid:
                list.__setitem__(pods, i, pods[-1])
                list.pop(pods)
                self._update(p, -1)
                return
        raise KeyError(f"no corresponding pod {pod.name} in pods of node {self.name}")

    def _update(self, pod: Pod, sign: int) -> None:
        _add_resource(self.requested, pod.requests, sign)
        cpu, mem = pod.non_zero_requests
        nz = self.non_zero_requested
        _set(nz, "milli_cpu", nz.milli_cpu + sign * cpu)
        _set(nz, "memory", nz.memory + sign * mem)
        for hp in pod.host_ports:
            if sign > 0:
                self.used_ports._add(hp.ip, hp.protocol, hp.port)
            else:
                self.used_ports._remove(hp.ip, hp.protocol, hp.port)
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if not pvc:
                continue
            key = f"{pod.namespace}/{pvc.get('claimName')}"
            counts = self.pvc_ref_counts
            n = counts.get(key, 0) + sign
            if n <= 0:
                dict.pop(counts, key, None)
            else:
                dict.__setitem__(counts, key, n)
        _set(self, "generation", next(_generation))

    def clone(self) -> NodeInfo:
        """An open copy (``add_pod``/``remove_pod`` work on it); the pods and the node are
        shared (they are read-only views)."""
        c = NodeInfo.__new__(NodeInfo)
        _set(c, "_sealed", False)
        _set(c, "node", self.node)
        _set(c, "name", self.name)
        _set(c, "pods", ReadOnlyList(self.pods))
        _set(c, "pods_with_affinity", ReadOnlyList(self.pods_with_affinity))
        _set(c, "pods_with_required_anti_affinity", ReadOnlyList(self.pods_with_required_anti_affinity))
        _set(c, "used_ports", self.used_ports.clone())
        _set(c, "requested", self.requested.clone())
        _set(c, "non_zero_requested", self.non_zero_requested.clone())
        _set(c, "allocatable", self.allocatable.clone())
        _set(c, "image_states", self.image_states)
        _set(c, "pvc_ref_counts", ReadOnlyDict(self.pvc_ref_counts))
        _set(c, "generation", self.generation)
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={[p.key for p in self.pods]})"


class QueuedPodInfo:
    """A pod in the scheduling queue, with the bookkeeping QueueSort and backoff use."""

    __slots__ = (
        "attempts",
        "backoff_expiration",
        "consecutive_errors",
        "gating_plugin",
        "initial_attempt_timestamp",
        "pending_plugins",
        "pod",
        "timestamp",
        "unschedulable_count",
        "unschedulable_plugins",
    )

    def __init__(self, pod: Pod, timestamp: float = 0.0) -> None:
        self.pod = pod
        #: when the pod was (last) added to the queue
        self.timestamp = timestamp
        #: scheduling attempts so far
        self.attempts = 0
        self.initial_attempt_timestamp: float | None = None
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gating_plugin = ""
        self.backoff_expiration = 0.0
        self.unschedulable_count = 0
        self.consecutive_errors = 0

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.key}, attempts={self.attempts})"
