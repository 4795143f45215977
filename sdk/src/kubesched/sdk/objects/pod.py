"""The read-only Pod view, its parsed parts, and the queue's QueuedPodInfo."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._text import cut
from ..readonly import EMPTY_DICT, EMPTY_LIST, ReadOnlyDict, ReadOnlyList, read_only
from ..selectors import InvalidObjectError, LabelSelector, NodeSelector
from .requests import (
    _has_status_resources,
    is_supported_pod_level_resource,
    pod_requests,
    quantity_value,
    simple_requests,
)
from .resource import (
    Resource,
    _q,
    _set,
    _whole_resource,
)
from .taints import Toleration
from .view import ObjectView, _int, _list, _mapping, _objects, _show, _text, cached_property

if TYPE_CHECKING:
    from .node import Node


def parse_time(value: Any, field: str = "metadata.creationTimestamp") -> float | None:
    """RFC 3339 time (``2024-01-02T03:04:05Z``) as seconds since the epoch."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            f = float(value)
            if f - f == 0:  # finite
                return f
        elif isinstance(value, _dt.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=_dt.UTC)
            return value.timestamp()
        elif isinstance(value, str):
            s = value[:-1] + "+00:00" if value.endswith("Z") else value
            d = _dt.datetime.fromisoformat(s)
            if d.tzinfo is None:
                d = d.replace(tzinfo=_dt.UTC)
            return d.timestamp()
    except (ValueError, OverflowError):
        pass
    raise InvalidObjectError(field, f"invalid time {_show(value)}")


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


#: What assigning or deleting an attribute of a Pod view raises (``TypeError``).
POD_READ_ONLY_MESSAGE = "Pod views are read-only; write through handle.objects.patch(...)"


def _ro_list(v: Any) -> ReadOnlyList[Any]:
    """A list field of a view's (read-only) JSON as a ReadOnlyList (empty when missing)."""
    if type(v) is ReadOnlyList:
        return v
    return read_only(list(v)) if v else EMPTY_LIST  # type: ignore[no-any-return]


_dict_set = dict.__setitem__
_new_pod = object.__new__


class Pod(ObjectView):
    """A read-only view of a v1.Pod. ``pod.raw`` is the API object, as read-only mappings and
    lists (a copy made once, when the view is built); writes raise ``TypeError``."""

    __slots__ = ()
    kind = "Pod"
    read_only_message = POD_READ_ONLY_MESSAGE

    # metadata (name, labels, annotations: ObjectView) --------------------------------------
    @cached_property
    def namespace(self) -> str:
        return _text(self.metadata.get("namespace"), "default")

    @cached_property
    def uid(self) -> str:
        return _text(self.metadata.get("uid")) or f"{self.namespace}/{self.name}"

    @cached_property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @cached_property
    def owner_references(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(_objects(self.metadata.get("ownerReferences"), "metadata.ownerReferences"))

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
        """None while the pod is not being deleted (and when the time cannot be read: the
        queue reads it before the pod is validated; ``validate()`` names it)."""
        try:
            return parse_time(self.metadata.get("deletionTimestamp"), "metadata.deletionTimestamp")
        except InvalidObjectError:
            return None

    @cached_property
    def resource_version(self) -> str:
        return _text(self.metadata.get("resourceVersion"))

    # spec -------------------------------------------------------------------------------------
    @cached_property
    def node_name(self) -> str:
        return _text(self.spec.get("nodeName"))

    @cached_property
    def scheduler_name(self) -> str:
        return _text(self.spec.get("schedulerName"), "default-scheduler")

    @cached_property
    def priority(self) -> int:
        """``spec.priority`` (0 when missing, and when it is not an integer: the queue sorts
        pods before they are validated; ``validate()`` names it)."""
        try:
            return _int(self.spec.get("priority"), "spec.priority")
        except InvalidObjectError:
            return 0

    @cached_property
    def priority_class_name(self) -> str:
        return _text(self.spec.get("priorityClassName"))

    @cached_property
    def preemption_policy(self) -> str:
        return _text(self.spec.get("preemptionPolicy"), "PreemptLowerPriority")

    @cached_property
    def nominated_node_name(self) -> str:
        return _text(self.status.get("nominatedNodeName"))

    @cached_property
    def phase(self) -> str:
        return _text(self.status.get("phase"))

    @cached_property
    def containers(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(_objects(self.spec.get("containers"), "spec.containers"))

    @cached_property
    def init_containers(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(_objects(self.spec.get("initContainers"), "spec.initContainers"))

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
        return _mapping(self.spec.get("affinity"), "spec.affinity")

    @cached_property
    def tolerations(self) -> tuple[Toleration, ...]:
        out = []
        for i, t in enumerate(_objects(self.spec.get("tolerations"), "spec.tolerations")):
            op = t.get("operator") or "Equal"
            # Gt/Lt (k8s.io/api v0.36) tolerate nothing while TaintTolerationComparisonOperators
            # (alpha) is off, as in kube-scheduler 1.36 (Toleration.tolerates returns False).
            if op not in ("Equal", "Exists", "Gt", "Lt"):
                raise InvalidObjectError(f"spec.tolerations[{i}].operator", f'Unsupported value: {_show(op)}: supported values: "Equal", "Exists"')
            secs = t.get("tolerationSeconds")
            out.append(
                Toleration(
                    key=_text(t.get("key")),
                    operator=op,
                    value=_text(t.get("value")),
                    effect=_text(t.get("effect")),
                    toleration_seconds=None if secs is None else _int(secs, f"spec.tolerations[{i}].tolerationSeconds"),
                )
            )
        return tuple(out)

    @cached_property
    def scheduling_gates(self) -> Sequence[str]:
        """The names of ``spec.schedulingGates`` (none when the list is malformed: PreEnqueue
        reads it before the pod is validated, and ``validate()`` names it)."""
        gates = self.spec.get("schedulingGates")
        if not gates:
            return EMPTY_LIST
        try:
            return ReadOnlyList([_text(g.get("name")) for g in _objects(gates, "spec.schedulingGates")])
        except InvalidObjectError:
            return EMPTY_LIST

    @cached_property
    def topology_spread_constraints(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(_objects(self.spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"))

    @cached_property
    def volumes(self) -> Sequence[Mapping[str, Any]]:
        return _ro_list(_objects(self.spec.get("volumes"), "spec.volumes"))

    @cached_property
    def pvc_names(self) -> Sequence[str]:
        """Names of PersistentVolumeClaims the pod mounts (ephemeral volumes as ``<pod>-<volume>``)."""
        out = []
        for i, v in enumerate(self.volumes):
            if v.get("persistentVolumeClaim"):
                pvc = _mapping(v["persistentVolumeClaim"], f"spec.volumes[{i}].persistentVolumeClaim")
                out.append(_text(pvc.get("claimName"), "None"))
            elif v.get("ephemeral"):
                out.append(f"{self.name}-{_text(v.get('name'), 'None')}")
        return ReadOnlyList(out)

    @cached_property
    def host_ports(self) -> tuple[HostPort, ...]:
        """Host ports of the containers and of sidecars (init containers with
        ``restartPolicy: Always``), as ``schedutil.GetHostPorts`` (v1.34) collects them."""
        out = []
        every = [("spec.containers", i, c) for i, c in enumerate(self.containers) if c.get("ports") is not None]
        every += [("spec.initContainers", i, c) for i, c in enumerate(self.init_containers)
                  if c.get("restartPolicy") == "Always" and c.get("ports") is not None]
        for part, i, c in every:
            field = f"{part}[{i}]"
            for pi, p in enumerate(_objects(c.get("ports"), f"{field}.ports")):
                hp = p.get("hostPort")
                if not hp:
                    continue
                port = _int(hp, f"{field}.ports[{pi}].hostPort")
                out.append(HostPort(_text(p.get("hostIP"), "0.0.0.0"), _text(p.get("protocol"), "TCP"), port))
        return tuple(out)

    @cached_property
    def images(self) -> Sequence[str]:
        return ReadOnlyList([_text(c.get("image")) for c in (*self.containers, *self.init_containers)])

    # resources ----------------------------------------------------------------------------
    @cached_property
    def requests(self) -> Resource:
        """Effective requests, as kube-scheduler computes them (init containers, overhead);
        read-only (``pod.requests.clone()`` is a mutable copy)."""
        if self._simple_requests():
            return self.__dict__["requests"]  # type: ignore[no-any-return]
        r = Resource()
        for k, v in pod_requests(self).items():
            r.add_quantity(k, v)
        return r.read_only()

    @cached_property
    def non_zero_requests(self) -> tuple[int, int]:
        """(milli-CPU, memory) with 100m / 200Mi for containers that request nothing (scoring)."""
        if self._simple_requests():
            return self.__dict__["non_zero_requests"]  # type: ignore[no-any-return]
        f = pod_requests(self, non_missing=True)
        return quantity_value(f, "cpu"), quantity_value(f, "memory")

    def _simple_requests(self) -> bool:
        """Keep ``requests`` and ``non_zero_requests`` (and ``node_requests`` and
        ``node_non_zero_requests`` when the status holds no resources) summed as integers by
        :func:`simple_requests`; False for a pod it leaves to the exact path."""
        got = simple_requests(self)
        if got is None:
            return False
        total, cpu, mem = got
        ro = _whole_resource(total)
        nz = (cpu, mem)
        d = self.__dict__
        d["requests"] = ro
        d["non_zero_requests"] = nz
        if not _has_status_resources(self):
            d["node_requests"] = ro
            d["node_non_zero_requests"] = nz
        return True

    @cached_property
    def node_requests(self) -> Resource:
        """What the pod takes on its node (framework/types.go CalculateResource): ``requests``,
        with the resources an in-place resize put in the status (InPlacePodVerticalScaling, GA;
        InPlacePodLevelResourcesVerticalScaling, beta on in 1.36) taken where larger. The same as
        ``requests`` for a pod whose status has none (every pending pod)."""
        if not _has_status_resources(self):
            return self.requests
        r = Resource()
        for k, v in pod_requests(self, use_status=True, pod_level_status=True).items():
            r.add_quantity(k, v)
        return r.read_only()

    @cached_property
    def node_non_zero_requests(self) -> tuple[int, int]:
        """``non_zero_requests`` as the node counts them (``node_requests``' status rule). With
        pod-level requests, 100m / 200Mi only for a resource neither level requests
        (types.go getNonMissingContainerRequests)."""
        f = pod_requests(self, non_missing=True, use_status=True, pod_level_status=True)
        level = _mapping(_mapping(self.spec.get("resources"), "spec.resources").get("requests"), "spec.resources.requests")
        if not level and not _has_status_resources(self):
            return self.non_zero_requests  # the same requests, read the same way
        if any(map(is_supported_pod_level_resource, map(str, level))):
            reqs = pod_requests(self, use_status=True, pod_level_status=True)
            f.update((k, reqs[k]) for k in ("cpu", "memory") if k in reqs)
        return quantity_value(f, "cpu"), quantity_value(f, "memory")

    @cached_property
    def requested_resource_names(self) -> frozenset[str]:
        return frozenset(k for k, v in pod_requests(self).items() if v != 0)

    # affinity -----------------------------------------------------------------------------
    def _section(self, kind: str) -> Mapping[str, Any]:
        return _mapping(self.affinity.get(kind), f"spec.affinity.{kind}")

    def _terms(self, kind: str, field: str, weighted: bool) -> tuple[AffinityTerm, ...]:
        path = f"spec.affinity.{kind}.{field}"
        out = []
        for i, raw in enumerate(_objects(self._section(kind).get(field), path)):
            f = f"{path}[{i}]"
            weight = 0
            if weighted:
                weight = _int(raw.get("weight"), f"{f}.weight")
                f += ".podAffinityTerm"
                raw = _mapping(raw.get("podAffinityTerm"), f)
            ns = _list(raw.get("namespaces") or [], f"{f}.namespaces", "a list of strings")
            nss = raw.get("namespaceSelector")
            namespaces = frozenset([self.namespace]) if not ns and nss is None else frozenset(_text(n) for n in ns)
            out.append(
                AffinityTerm(
                    namespaces=namespaces,
                    selector=LabelSelector.parse(raw.get("labelSelector"), f"{f}.labelSelector"),
                    topology_key=_text(raw.get("topologyKey")),
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
        return bool(self._section("podAntiAffinity").get("requiredDuringSchedulingIgnoredDuringExecution"))

    @cached_property
    def required_node_affinity(self) -> NodeSelector | None:
        """``spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``."""
        na = self._section("nodeAffinity").get("requiredDuringSchedulingIgnoredDuringExecution")
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
        d = self.__dict__
        if _VALID in d:
            return
        self._validate_object()
        if not self.name:
            raise InvalidObjectError("metadata.name", "Required value: name or generateName is required")
        md, spec = self.metadata, self.spec
        parse_time(md.get("deletionTimestamp"), "metadata.deletionTimestamp")
        _int(spec.get("priority"), "spec.priority")
        if spec.get("schedulingGates"):
            _objects(spec["schedulingGates"], "spec.schedulingGates")
        # the parts a pod does not have read as empty: kept without parsing (they cannot fail)
        for part, absent in ((md, _ABSENT_METADATA), (spec, _ABSENT_SPEC)):
            for field, values in absent:
                if part.get(field) is None:
                    for k, v in values:
                        if k not in d:
                            d[k] = v
        _ = (
            self.creation_timestamp,
            self.owner_references,
            self.requests,
            self.non_zero_requests,
            self.node_requests,
            self.node_non_zero_requests,
            self.tolerations,
            self.host_ports,
            self.node_selector,
            self.required_node_affinity,
            self.required_affinity_terms,
            self.required_anti_affinity_terms,
            self.preferred_affinity_terms,
            self.preferred_anti_affinity_terms,
            self.topology_spread_constraints,
            self.pvc_names,
            self.images,
        )
        for field, cs in (("spec.containers", self.containers), ("spec.initContainers", self.init_containers)):
            for i, c in enumerate(cs):
                if c.get("resources"):
                    _nonnegative(c, field, i)
        d[_VALID] = True

    # copies -------------------------------------------------------------------------------
    def adopt_requests(self, other: Pod) -> None:
        """Take ``other``'s computed requests when they are ``self``'s too: the same containers,
        init containers, overhead and pod-level resources, and neither status holds resources
        (an in-place resize would). The cache calls it when the API server's copy of a pod it
        assumed arrives (only nodeName and the status changed): the requests are not computed
        again. When the whole spec and the name are the same, every part read from them alone
        (``host_ports``, the affinity terms, ...) is taken too."""
        if other is self:
            return
        spec, ospec = self.spec, other.spec
        if spec == ospec and self.key == other.key:
            d, od = self.__dict__, other.__dict__
            for k in _SPEC_PROPERTIES:
                if k in od and k not in d:
                    d[k] = od[k]
        for k in _REQUEST_FIELDS:
            if spec.get(k) != ospec.get(k):
                return
        if _has_status_resources(self) or _has_status_resources(other):
            return
        d = self.__dict__
        for k in _REQUEST_PROPERTIES:
            if k in other.__dict__ and k not in d:
                d[k] = other.__dict__[k]

    def with_node_name(self, node_name: str) -> Pod:
        """A copy bound to ``node_name`` (what the cache assumes while binding); it shares
        every read-only part of this view but ``spec``."""
        if type(node_name) is not str:
            raw = dict(self.raw)
            raw["spec"] = {**self.spec, "nodeName": node_name}
            p = Pod(raw)
            keep = {k: v for k, v in self.__dict__.items() if k not in ("spec", "node_name")}
            p.__dict__.update(keep)
            return p
        # the read-only parts are shared: only the top level and the spec are new
        spec = ReadOnlyDict(self.spec)
        _dict_set(spec, "nodeName", node_name)
        raw = ReadOnlyDict(self.raw)
        _dict_set(raw, "spec", spec)
        p = _new_pod(Pod)
        _set(p, "raw", raw)
        d = self.__dict__.copy()  # every part but the node's name is the same
        d["spec"] = spec
        d["node_name"] = node_name
        _set(p, "__dict__", d)
        return p

    def __repr__(self) -> str:
        return f"Pod({self.key})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pod) and other.uid == self.uid

    def __hash__(self) -> int:
        return hash(self.uid)


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


#: where a Pod view records that it passed ``validate()`` (its ``__dict__``)
_VALID = "_valid"


#: what ``validate()`` keeps without parsing when a field of the metadata or the spec is missing
#: (or null): the field, and its cached properties with the values they read it as
_ABSENT_METADATA: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("creationTimestamp", (("creation_timestamp", 0.0),)),
    ("ownerReferences", (("owner_references", EMPTY_LIST),)),
)
_ABSENT_SPEC: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("initContainers", (("init_containers", EMPTY_LIST),)),
    ("tolerations", (("tolerations", ()),)),
    ("nodeSelector", (("node_selector", EMPTY_DICT),)),
    ("affinity", (
        ("affinity", EMPTY_DICT),
        ("required_node_affinity", None),
        ("required_affinity_terms", ()),
        ("required_anti_affinity_terms", ()),
        ("preferred_affinity_terms", ()),
        ("preferred_anti_affinity_terms", ()),
        ("has_pod_affinity", False),
        ("has_required_anti_affinity", False),
    )),
    ("topologySpreadConstraints", (("topology_spread_constraints", EMPTY_LIST),)),
    ("volumes", (("volumes", EMPTY_LIST), ("pvc_names", EMPTY_LIST))),
)

#: how a quantity without a minus sign (nor whitespace before it) starts
_UNSIGNED = frozenset("0123456789.+")


def _nonnegative(c: Mapping[str, Any], containers: str, i: int) -> None:
    """ValidateResourceQuantityValue's sign check of a container's requests and limits (both
    parsed by ``requests`` already, which names a malformed one first)."""
    res = c.get("resources")
    if not res:
        return
    for part in ("requests", "limits"):
        rl = res.get(part)
        if not rl:
            continue
        for k, v in rl.items():
            if type(v) is str and v[:1] in _UNSIGNED:
                continue  # parsed by ``requests`` already, and it has no sign: not negative
            field = f"{containers}[{i}]"
            if _q(v, f"{field}.resources.{part}.{cut(k)}") < 0:
                raise InvalidObjectError(f"{field}.resources.{part}.{cut(k)}", f"Invalid value: {_show(v)}: must be greater than or equal to 0")


#: what :meth:`Pod.adopt_requests` takes from a view of the same spec and name: the cached
#: properties read from nothing else (not the metadata's other fields, nor the status)
_SPEC_PROPERTIES = (
    "node_name",
    "scheduler_name",
    "priority",
    "priority_class_name",
    "preemption_policy",
    "containers",
    "init_containers",
    "node_selector",
    "affinity",
    "tolerations",
    "scheduling_gates",
    "topology_spread_constraints",
    "volumes",
    "pvc_names",
    "host_ports",
    "images",
    "required_affinity_terms",
    "required_anti_affinity_terms",
    "preferred_affinity_terms",
    "preferred_anti_affinity_terms",
    "has_pod_affinity",
    "has_required_anti_affinity",
    "required_node_affinity",
    "requests",
    "non_zero_requests",
    "requested_resource_names",
)

#: the spec fields a pod's requests are computed from (besides the status)
_REQUEST_FIELDS = ("containers", "initContainers", "overhead", "resources")
#: what :meth:`Pod.adopt_requests` copies: the computed requests (cached properties and the
#: memo of ``pod_requests``)
_REQUEST_PROPERTIES = (
    "requests",
    "non_zero_requests",
    "node_requests",
    "node_non_zero_requests",
    "requested_resource_names",
    "_pod_requests",
)
