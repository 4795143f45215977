"""Pod resource requests: ``resource.PodRequests`` of ``k8s.io/component-helpers/resource``, the one
implementation (``Pod.requests``, ``Pod.non_zero_requests`` and the noderesources plugins use it).

Containers are summed; each init container's peak (with the restartable init containers before
it) is a floor; sidecars (restartable init containers) are added; pod-level requests of the
supported resources (cpu, memory, ``hugepages-*``) override the aggregate; overhead is added. A
missing container request is taken from the container's limit (what the API server's defaulting
writes), so the totals agree with what kube-scheduler sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .._text import cut
from ..quantity import QuantityError, bounded, parse_quantity
from ..readonly import ReadOnlyDict, ReadOnlyList
from ..selectors import InvalidObjectError
from .resource import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, _ceil, _ceil_milli
from .view import _mapping, _objects

if TYPE_CHECKING:
    from .pod import Pod

__all__ = ["Requests", "is_supported_pod_level_resource", "pod_requests", "quantity_value"]

_CPU = "cpu"
_MEMORY = "memory"
_HUGEPAGES_PREFIX = "hugepages-"
_NON_MISSING: dict[str, Fraction] = {
    _CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    _MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}

#: resource name -> exact quantity
Requests = dict[str, Fraction]


def is_supported_pod_level_resource(name: str) -> bool:
    """resource.IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return name in (_CPU, _MEMORY) or name.startswith(_HUGEPAGES_PREFIX)


#: quantity string -> its value: a workload repeats a few quantities over thousands of pods
#: (parsing one exactly takes microseconds); emptied when it grows past ``_PARSED_MAX``
_PARSED: dict[str, Fraction] = {}
_PARSED_MAX = 4096


def _parse_list(rl: Any, field: str) -> Requests:
    if not rl:
        return {}
    if type(rl) is not ReadOnlyDict and not isinstance(rl, Mapping):
        raise InvalidObjectError(field, "must be a map of resource quantities")
    out: Requests = {}
    parsed = _PARSED
    for k, v in rl.items():
        if type(v) is str:
            q = parsed.get(v)
            if q is not None:
                out[str(k)] = q
                continue
        try:
            q = parse_quantity(v)
        except QuantityError as e:
            raise InvalidObjectError(f"{field}.{cut(k)}", str(e)) from None
        if type(v) is str:
            if len(parsed) >= _PARSED_MAX:
                parsed.clear()
            parsed[v] = q
        out[str(k)] = q
    return out


def _container_requests(c: Mapping[str, Any], field: str) -> Requests:
    """A container's requests (limits where a request is missing); callers do not change it."""
    res = _mapping(c.get("resources"), f"{field}.resources")
    # the API server defaults each missing request to its limit
    reqs = _parse_list(res.get("limits"), f"{field}.resources.limits")
    reqs.update(_parse_list(res.get("requests"), f"{field}.resources.requests"))
    return reqs


def _add(dst: Requests, src: Mapping[str, Fraction]) -> None:
    for k, v in src.items():
        cur = dst.get(k)
        dst[k] = v if cur is None else cur + v


def _max_into(dst: Requests, src: Mapping[str, Fraction]) -> None:
    for k, v in src.items():
        cur = dst.get(k)
        if cur is None or v > cur:
            dst[k] = v


def _apply_non_missing(reqs: Requests) -> Requests:
    out = dict(reqs)
    for k, v in _NON_MISSING.items():
        if k not in reqs:
            out[k] = v
    return out


def _resize_infeasible(pod: Pod) -> bool:
    """resource.IsPodResizeInfeasible: condition PodResizePending with reason Infeasible."""
    for cond in _objects(pod.status.get("conditions"), "status.conditions"):
        if cond.get("type") == "PodResizePending":
            return cond.get("reason") == "Infeasible"
    return False


def _status_requests(
    pod: Pod, reqs: Requests, cs: Mapping[str, Any] | None, field: str
) -> Requests:
    """determineContainerReqs: requests as the kubelet has actuated/allocated them."""
    if cs is None or cs.get("resources") is None:
        return reqs
    status_reqs = _parse_list(
        _mapping(cs.get("resources"), f"{field}.resources").get("requests"), f"{field}.resources.requests"
    )
    allocated = _parse_list(cs.get("allocatedResources"), f"{field}.allocatedResources")
    out: Requests = {} if _resize_infeasible(pod) else dict(reqs)
    _max_into(out, status_reqs)
    _max_into(out, allocated)
    return out


def pod_requests(
    pod: Pod,
    *,
    pod_level: bool = True,
    use_status: bool = False,
    non_missing: bool = False,
    exclude_overhead: bool = False,
    pod_level_status: bool = False,
) -> Requests:
    """resource.PodRequests: containers summed, each init container's peak (with the restartable
    init containers before it) taken as a floor, sidecars added, pod-level requests of supported
    resources overriding the aggregate when ``pod_level``, overhead added.

    ``non_missing`` fills missing cpu/memory container requests with 100m/200Mi (scoring's
    NonMissingContainerRequests); ``use_status`` reads the container statuses as
    InPlacePodVerticalScaling does; with ``use_status`` and ``pod_level_status``
    (InPlacePodLevelResourcesVerticalScaling) the pod-level requests are read from
    ``status.resources`` / ``status.allocatedResources`` too.

    A pod view is read-only, so the result for each set of options is computed once per view
    and kept on it; each call returns a new dict.
    """
    if use_status and not _has_status_resources(pod):
        use_status = pod_level_status = False  # nothing in the status to read: the spec's result
    key = (pod_level, use_status, non_missing, exclude_overhead, pod_level_status)
    memo: dict[tuple[bool, ...], Requests] | None = pod.__dict__.get(_MEMO)
    if memo is None:
        memo = pod.__dict__[_MEMO] = {}
    reqs = memo.get(key)
    if reqs is None:
        reqs = memo[key] = _pod_requests(
            pod, pod_level, use_status, non_missing, exclude_overhead, pod_level_status and use_status
        )
    return dict(reqs)


def _has_status_resources(pod: Pod) -> bool:
    """Whether the status holds resources an in-place resize reads (a pending pod's never does);
    kept on the view (its status never changes)."""
    d = pod.__dict__
    got: bool | None = d.get(_STATUS_RESOURCES)
    if got is None:
        got = d[_STATUS_RESOURCES] = _status_resources(pod.status)
    return got


def _status_resources(st: Mapping[str, Any]) -> bool:
    if st.get("resources") is not None:
        return True
    for part in ("containerStatuses", "initContainerStatuses"):
        for cs in _objects(st.get(part), f"status.{part}"):
            if cs.get("resources") is not None:
                return True
    return False


#: where a Pod view keeps :func:`_has_status_resources` (its ``__dict__``)
_STATUS_RESOURCES = "_status_resources"


#: quantity string -> (its ``MilliValue()``, its ``Value()``), each None when the quantity is
#: not a whole number of that unit: what :func:`simple_requests` sums as integers
_WHOLE: dict[str, tuple[int | None, int | None]] = {}
#: ints taken as they are (YAML's ``cpu: 2``) up to this magnitude (far inside QUANTITY_LIMIT)
_INT_MAX = 1 << 62


def _whole(v: Any) -> tuple[int | None, int | None] | None:
    """``(milli, value)`` of a quantity for :func:`simple_requests`; None for what it leaves to
    the exact path (a float, a malformed or very large quantity)."""
    t = type(v)
    if t is str:
        got = _WHOLE.get(v)
        if got is not None:
            return got
        try:
            q = parse_quantity(v)
        except QuantityError:
            return None
        milli = q.numerator * 1000 // q.denominator if (q.numerator * 1000) % q.denominator == 0 else None
        got = (milli, q.numerator if q.denominator == 1 else None)
        if len(_WHOLE) >= _PARSED_MAX:
            _WHOLE.clear()
        _WHOLE[v] = got
        return got
    if t is int and -_INT_MAX <= v <= _INT_MAX:
        return v * 1000, v
    return None


def simple_requests(pod: Pod) -> tuple[dict[str, int], int, int] | None:
    """``pod_requests(pod)`` and the (milli-CPU, memory) of ``pod_requests(pod, non_missing=True)``
    as kube-scheduler reads them (``MilliValue()`` of cpu, ``Value()`` of the rest), summed as
    integers, for the common pod: containers only (no init containers, overhead or pod-level
    resources) whose quantities are whole milli-CPUs and whole units of the rest, so that each
    sum is exact and rounding it changes nothing. The dict keeps ``pod_requests``' names in its
    order. None for any other pod (and for a malformed one): the exact path computes it and names the
    problem."""
    spec = pod.spec
    ic = spec.get("initContainers")
    if (ic is not None and (type(ic) is not ReadOnlyList or ic)) or spec.get("overhead") is not None or spec.get("resources") is not None:
        return None
    total: dict[str, int] = {}
    cpu = mem = 0
    whole = _whole
    for c in pod.containers:
        res = c.get("resources")
        if res is None:
            cpu += DEFAULT_MILLI_CPU_REQUEST
            mem += DEFAULT_MEMORY_REQUEST
            continue
        if type(res) is not ReadOnlyDict:
            return None
        lim = res.get("limits")
        req = res.get("requests")
        if lim:
            if type(lim) is not ReadOnlyDict:
                return None
            if req:
                if type(req) is not ReadOnlyDict:
                    return None
                # a limit a request overrides is not summed, but it must still parse: the exact
                # path parses it (and validate() names it when it does not)
                for k, v in lim.items():
                    if k in req and whole(v) is None:
                        return None
                cr = {**lim, **req}
            else:
                cr = lim
        elif req:
            if type(req) is not ReadOnlyDict:
                return None
            cr = req
        else:
            cpu += DEFAULT_MILLI_CPU_REQUEST
            mem += DEFAULT_MEMORY_REQUEST
            continue
        has_cpu = has_mem = False
        for k, v in cr.items():
            if type(k) is not str:
                return None
            w = whole(v)
            if w is None:
                return None
            if k == _CPU:
                n = w[0]
                if n is None:
                    return None
                has_cpu = True
                cpu += n
            else:
                n = w[1]
                if n is None:
                    return None
                if k == _MEMORY:
                    has_mem = True
                    mem += n
            cur = total.get(k)
            total[k] = n if cur is None else cur + n
        if not has_cpu:
            cpu += DEFAULT_MILLI_CPU_REQUEST
        if not has_mem:
            mem += DEFAULT_MEMORY_REQUEST
    return total, bounded(cpu), bounded(mem)



#: where a Pod view keeps its computed requests (its ``__dict__``, beside its cached properties)
_MEMO = "_pod_requests"


def _pod_requests(
    pod: Pod, pod_level: bool, use_status: bool, non_missing: bool, exclude_overhead: bool, level_status: bool
) -> Requests:
    statuses: dict[str, Mapping[str, Any]] = {}
    if use_status:
        st = pod.status
        for part in ("containerStatuses", "initContainerStatuses"):
            for cs in _objects(st.get(part), f"status.{part}"):
                statuses[str(cs.get("name") or "")] = cs

    reqs: Requests = {}
    for i, c in enumerate(pod.containers):
        field = f"spec.containers[{i}]"
        cr = _container_requests(c, field)
        if use_status:
            cr = _status_requests(pod, cr, statuses.get(str(c.get("name") or "")), field)
        if non_missing:
            cr = _apply_non_missing(cr)
        _add(reqs, cr)

    restartable: Requests = {}
    init_max: Requests = {}
    for i, c in enumerate(pod.init_containers):
        field = f"spec.initContainers[{i}]"
        cr = _container_requests(c, field)
        always = c.get("restartPolicy") == "Always"
        if use_status and always:
            cr = _status_requests(pod, cr, statuses.get(str(c.get("name") or "")), field)
        if non_missing:
            cr = _apply_non_missing(cr)
        if always:
            _add(reqs, cr)
            _add(restartable, cr)
            cr = dict(restartable)
        else:
            tmp: Requests = dict(cr)
            _add(tmp, restartable)
            cr = tmp
        _max_into(init_max, cr)
    _max_into(reqs, init_max)

    if pod_level:
        level = _mapping(pod.spec.get("resources"), "spec.resources").get("requests")
        if level:
            spec_level = _parse_list(level, "spec.resources.requests")
            effective = _pod_level_status_requests(pod, spec_level) if level_status else None
            for k, v in spec_level.items():
                if is_supported_pod_level_resource(k):
                    reqs[k] = v if effective is None else effective.get(k, Fraction(0))

    if not exclude_overhead:
        overhead = pod.spec.get("overhead")
        if overhead:
            _add(reqs, _parse_list(overhead, "spec.overhead"))
    return reqs


def _pod_level_status_requests(pod: Pod, spec_level: Requests) -> Requests | None:
    """determineEffectiveRequests for the pod-level requests: the max of spec, actuated
    (``status.resources.requests``) and allocated (``status.allocatedResources``); spec left out
    while a resize is infeasible. None when the status has no ``resources``."""
    res = pod.status.get("resources")
    if res is None:
        return None
    res = _mapping(res, "status.resources")
    out: Requests = {} if _resize_infeasible(pod) else dict(spec_level)
    _max_into(out, _parse_list(res.get("requests"), "status.resources.requests"))
    _max_into(out, _parse_list(pod.status.get("allocatedResources"), "status.allocatedResources"))
    return out


def quantity_value(reqs: Mapping[str, Fraction], name: str) -> int:
    """``requests[name]`` as the scheduler reads it: ``MilliValue()`` for cpu, ``Value()``
    otherwise (both round up), bounded at ``quantity.RESOURCE_LIMIT``; 0 when absent."""
    q = reqs.get(name)
    if q is None:
        return 0
    if name == _CPU:
        return bounded(_ceil_milli(q))
    return bounded(_ceil(q))
