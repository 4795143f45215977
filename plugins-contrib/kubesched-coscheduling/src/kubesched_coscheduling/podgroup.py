"""The PodGroup API (``scheduling.x-k8s.io/v1alpha1``): a read-only view, the membership label,
and the CRD manifest shipped with this package."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from fractions import Fraction
from functools import cached_property
from importlib import resources
from typing import Any

from kubesched.sdk import InvalidObjectError, Pod, QuantityError, parse_quantity

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "POD_GROUP_LABEL",
    "PodGroup",
    "pod_group_full_name",
    "pod_group_name",
    "podgroup_crd",
]

GROUP = "scheduling.x-k8s.io"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "PodGroup"
#: A pod belongs to the PodGroup named by this label, in the pod's namespace.
POD_GROUP_LABEL = f"{GROUP}/pod-group"

#: Phases a PodGroup controller writes in ``status.phase``.
PHASES = ("Pending", "Scheduling", "Running", "Unknown", "Finished", "Failed")


def pod_group_name(pod: Pod) -> str:
    """The name of the pod's PodGroup ("" when the pod is not in a group)."""
    return str(pod.labels.get(POD_GROUP_LABEL) or "")


def pod_group_full_name(pod: Pod) -> str:
    """``namespace/name`` of the pod's PodGroup ("" when the pod is not in a group)."""
    name = pod_group_name(pod)
    return f"{pod.namespace}/{name}" if name else ""


def podgroup_crd() -> str:
    """The PodGroup CustomResourceDefinition manifest (YAML text), ready for ``kubectl apply``."""
    return (resources.files(__package__) / "manifests" / "podgroup-crd.yaml").read_text(encoding="utf-8")


def _amount(name: str, q: Fraction) -> int:
    """A quantity in kube-scheduler's units: milli-CPU for cpu, whole units otherwise (rounded up)."""
    if name == "cpu":
        q = q * 1000
    return -((-q.numerator) // q.denominator)


class PodGroup:
    """A read-only view of a PodGroup object (an API dict). Malformed fields raise
    :class:`~kubesched.sdk.InvalidObjectError` naming the field when read."""

    __slots__ = ("__dict__", "raw")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise InvalidObjectError("", "a PodGroup must be an object")
        self.raw = raw

    @cached_property
    def metadata(self) -> Mapping[str, Any]:
        md = self.raw.get("metadata") or {}
        return md if isinstance(md, Mapping) else {}

    @cached_property
    def spec(self) -> Mapping[str, Any]:
        spec = self.raw.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise InvalidObjectError("spec", "must be an object")
        return spec

    @cached_property
    def status(self) -> Mapping[str, Any]:
        st = self.raw.get("status") or {}
        return st if isinstance(st, Mapping) else {}

    @cached_property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @cached_property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "default")

    @cached_property
    def full_name(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @cached_property
    def creation_timestamp(self) -> float | None:
        """Seconds since the epoch, or None when the object has none (hand-written YAML)."""
        return _parse_time(self.metadata.get("creationTimestamp"), "metadata.creationTimestamp")

    @cached_property
    def min_member(self) -> int:
        """``spec.minMember``; 0 when unset (every group size is then enough)."""
        return _int(self.spec.get("minMember"), "spec.minMember", minimum=0)

    @cached_property
    def schedule_timeout_seconds(self) -> int | None:
        """``spec.scheduleTimeoutSeconds``, or None when unset."""
        v = self.spec.get("scheduleTimeoutSeconds")
        return None if v is None else _int(v, "spec.scheduleTimeoutSeconds", minimum=0)

    @cached_property
    def min_resources(self) -> dict[str, int] | None:
        """``spec.minResources`` in kube-scheduler's units (milli-CPU, bytes, counts), or None
        when unset."""
        rl = self.spec.get("minResources")
        if rl is None:
            return None
        if not isinstance(rl, Mapping):
            raise InvalidObjectError("spec.minResources", "must be a map of resource quantities")
        out: dict[str, int] = {}
        for name, q in rl.items():
            try:
                out[str(name)] = _amount(str(name), parse_quantity(q))
            except (QuantityError, TypeError, ValueError) as e:
                raise InvalidObjectError(f"spec.minResources.{name}", str(e)) from None
        return out

    @cached_property
    def phase(self) -> str:
        return str(self.status.get("phase") or "")

    def validate(self) -> None:
        """Read every field the plugin uses, so a malformed object fails in one place."""
        _ = self.spec, self.min_member, self.schedule_timeout_seconds, self.min_resources
        _ = self.creation_timestamp

    def __repr__(self) -> str:
        return f"PodGroup({self.full_name})"


def _parse_time(v: Any, field: str) -> float | None:
    """RFC 3339 (``2024-01-02T03:04:05Z``) as seconds since the epoch."""
    if v is None or v == "":
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, _dt.datetime):  # YAML loaders may have parsed it already
        d = v
    else:
        s = str(v)
        try:
            d = _dt.datetime.fromisoformat(s[:-1] + "+00:00" if s.endswith("Z") else s)
        except ValueError:
            raise InvalidObjectError(field, f"invalid time {v!r}") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.UTC)
    return d.timestamp()


def _int(v: Any, field: str, *, minimum: int) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            v = int(v)
        else:
            raise InvalidObjectError(field, f"invalid value {v!r}: must be an integer")
    if v < minimum:
        raise InvalidObjectError(field, f"invalid value {v}: must be greater than or equal to {minimum}")
    return int(v)
