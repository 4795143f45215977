"""Workload files: the cluster YAML users already have, plus time (annotations).

See docs/simulator.md. Times are offsets from the start of the run: a Go duration (``90s``,
``1h30m``) or a bare number of seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.sdk._text import cut

from ..kinds import RESOURCE_KINDS

__all__ = [
    "ARRIVE_AT",
    "CONTROLLER_KINDS",
    "CORDON_AT",
    "DELETE_AT",
    "DRAIN_AT",
    "RUN_FOR",
    "TIME_ANNOTATIONS",
    "parse_time",
    "template_run_for",
    "times_of",
]

#: when the object (Pod, Node, Deployment, ReplicaSet, StatefulSet, Job) is created
ARRIVE_AT = "sim.kubesched.io/arrive-at"
#: when it is deleted (a Node: removed, and its pods with it)
DELETE_AT = "sim.kubesched.io/delete-at"
#: how long a pod runs once bound; then it completes
RUN_FOR = "sim.kubesched.io/run-for"
#: when a Node becomes unschedulable
CORDON_AT = "sim.kubesched.io/cordon-at"
#: when a Node is cordoned and its pods evicted
DRAIN_AT = "sim.kubesched.io/drain-at"

TIME_ANNOTATIONS = (ARRIVE_AT, DELETE_AT, RUN_FOR, CORDON_AT, DRAIN_AT)


# parsing --------------------------------------------------------------------------------------
#: the largest time offset, in seconds: the virtual clock (which starts in 2023) stays before
#: the year 9999, the last one an RFC 3339 timestamp can write
MAX_TIME = 2.5e11
#: the kinds whose pods the simulated cluster creates, as their controllers would
CONTROLLER_KINDS = frozenset(("Deployment", "ReplicaSet", "StatefulSet", "Job"))
#: which annotations each kind may carry
ALLOWED = {
    "Pod": (ARRIVE_AT, DELETE_AT, RUN_FOR),
    "Node": (ARRIVE_AT, DELETE_AT, CORDON_AT, DRAIN_AT),
    **{k: (ARRIVE_AT, DELETE_AT) for k in CONTROLLER_KINDS},
    # dynamic resource allocation: a driver publishes its slices when it starts, a user writes
    # a claim or a class at some time
    **{k: (ARRIVE_AT, DELETE_AT) for k in RESOURCE_KINDS},
}


def parse_time(value: object) -> float:
    """Seconds in a time annotation: a bare number of seconds (``"90"``, ``"1.5"``) or a Go
    duration (``90s``, ``1h30m``); ValueError with the reason when it is neither, or negative."""
    import math

    from ..config._duration import parse_go_duration

    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("must be a duration such as \"90s\" or \"1h30m\", or a number of seconds")
    text = str(value).strip()
    try:
        t = float(text)
    except ValueError:
        try:
            t = parse_go_duration(text)
        except ValueError as e:
            raise ValueError(f"{e}; expected a duration such as \"90s\" or \"1h30m\", or a number of seconds") from None
    if not math.isfinite(t):
        raise ValueError(f"{value!r} is not a finite number of seconds")
    if t < 0:
        raise ValueError(f"must not be negative, got {text!r}")
    if t > MAX_TIME:
        raise ValueError(f"{text!r} is too far: times are at most {MAX_TIME:.0f} seconds (about 7,900 years) after the start")
    return t


def times_of(obj: Mapping[str, Any], where: Callable[[Mapping[str, Any]], str]) -> dict[str, float]:
    """The time annotations of one object of a workload, in seconds: ``{annotation: t}``.
    Raises ManifestError naming the file, document, object and annotation for a bad value or
    an annotation its kind does not take."""
    from ..cluster.manifests import ManifestError

    md = obj.get("metadata")
    ann = md.get("annotations") if isinstance(md, Mapping) else None
    if not isinstance(ann, Mapping):
        return {}
    out: dict[str, float] = {}
    for key in TIME_ANNOTATIONS:
        if key not in ann:
            continue
        kind = str(obj.get("kind"))
        field = f"metadata.annotations.{key}"
        if key not in ALLOWED.get(kind, ()):
            takes = ", ".join(k for k, v in ALLOWED.items() if key in v)
            raise ManifestError(f"{where(obj)}: {field}: a {cut(kind)} does not take this annotation (it is for: {takes})")
        try:
            out[key] = parse_time(ann[key])
        except ValueError as e:
            raise ManifestError(f"{where(obj)}: {field}: {e}") from None
    for key in (DELETE_AT, CORDON_AT, DRAIN_AT):
        if key in out and ARRIVE_AT in out and out[key] < out[ARRIVE_AT]:
            raise ManifestError(f"{where(obj)}: metadata.annotations.{key}: {ann[key]!s} is before {ARRIVE_AT} ({ann[ARRIVE_AT]!s})")
    return out


def template_run_for(obj: Mapping[str, Any], where: Callable[[Mapping[str, Any]], str]) -> float | None:
    """``sim.kubesched.io/run-for`` of a controller's pod template, in seconds, or None."""
    from ..cluster.manifests import ManifestError

    spec = obj.get("spec")
    tmpl = spec.get("template") if isinstance(spec, Mapping) else None
    md = tmpl.get("metadata") if isinstance(tmpl, Mapping) else None
    ann = md.get("annotations") if isinstance(md, Mapping) else None
    if not isinstance(ann, Mapping) or RUN_FOR not in ann:
        return None
    try:
        return parse_time(ann[RUN_FOR])
    except ValueError as e:
        raise ManifestError(f"{where(obj)}: spec.template.metadata.annotations.{RUN_FOR}: {e}") from None
