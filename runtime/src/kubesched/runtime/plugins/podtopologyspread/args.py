"""PodTopologySpreadArgs: defaults (``pkg/scheduler/apis/config/v1/defaults.go``) and validation
(``pkg/scheduler/apis/config/validation/validation_pluginargs.go``), with kube-scheduler's
messages (``field.Error`` formatting; several errors are aggregated as ``[e1, e2]``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.sdk import ArgsError
from kubesched.sdk.validation import qualified_name_errors as _is_qualified_name

__all__ = [
    "DO_NOT_SCHEDULE",
    "LIST_DEFAULTING",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULTING",
    "PodTopologySpreadArgs",
    "validate_label_name",
]

#: v1.UnsatisfiableConstraintAction values.
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
#: config.PodTopologySpreadConstraintsDefaulting values.
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


def _go_value(v: Any) -> str:
    """How ``field.Invalid``/``field.NotSupported`` print a bad value (``%q`` for strings)."""
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    return str(v)


def _invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {_go_value(value)}: {detail}"


def _required(path: str, detail: str) -> str:
    return f"{path}: Required value: {detail}"


def _not_supported(path: str, value: Any, supported: list[str]) -> str:
    return f"{path}: Unsupported value: {_go_value(value)}: supported values: " + ", ".join(
        _go_value(s) for s in supported
    )


def _forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def _duplicate(path: str, value: Any) -> str:
    return f"{path}: Duplicate value: {_go_value(value)}"


# --- k8s.io/apimachinery/pkg/util/validation: IsQualifiedName -------------------------------------


def validate_label_name(name: str, path: str) -> list[str]:
    """metav1validation.ValidateLabelName."""
    return [_invalid(path, name, m) for m in _is_qualified_name(name)]


# --- the args --------------------------------------------------------------------------------------


@dataclass
class PodTopologySpreadArgs:
    """kube-scheduler's ``PodTopologySpreadArgs`` (v1).

    ``defaultConstraints`` are ``v1.TopologySpreadConstraint`` objects (API dicts, camelCase keys)
    without ``labelSelector``; ``defaultingType`` is ``System`` (the built-in constraints: hostname
    maxSkew 3 and zone maxSkew 5, both ScheduleAnyway) or ``List`` (use ``defaultConstraints``).
    As in v1, ``defaultingType`` defaults to ``System`` even when ``defaultConstraints`` is set,
    which validation then rejects: set ``defaultingType: List`` with ``defaultConstraints``.
    """

    default_constraints: list[dict[str, Any]] = field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING

    def validate(self) -> None:
        """ValidatePodTopologySpreadArgs (path is nil when the plugin validates its own args)."""
        errs: list[str] = []
        dt = self.defaulting_type
        if dt not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(_not_supported("defaultingType", dt, [SYSTEM_DEFAULTING, LIST_DEFAULTING]))
        elif dt == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(_invalid("defaultingType", dt, "when .defaultConstraints are not empty"))

        cs = self.default_constraints
        for i, c in enumerate(cs):
            p = f"defaultConstraints[{i}]"
            if not isinstance(c, dict):
                errs.append(_invalid(p, str(c), "must be an object"))
                continue
            max_skew = c.get("maxSkew", 0)
            if isinstance(max_skew, bool) or not isinstance(max_skew, int):
                errs.append(_invalid(f"{p}.maxSkew", max_skew, "must be an integer"))
            elif max_skew <= 0:
                errs.append(_invalid(f"{p}.maxSkew", max_skew, "not in valid range (0, inf)"))
            key = c.get("topologyKey") or ""
            if not isinstance(key, str):
                errs.append(_invalid(f"{p}.topologyKey", str(key), "must be a string"))
            elif not key:
                errs.append(_required(f"{p}.topologyKey", "can not be empty"))
            else:
                errs.extend(validate_label_name(key, f"{p}.topologyKey"))
            wu = c.get("whenUnsatisfiable") or ""
            if not wu:
                errs.append(_required(f"{p}.whenUnsatisfiable", "can not be empty"))
            elif wu not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errs.append(
                    _not_supported(f"{p}.whenUnsatisfiable", wu, [DO_NOT_SCHEDULE, SCHEDULE_ANYWAY])
                )
            if c.get("labelSelector") is not None:
                errs.append(
                    _forbidden(
                        f"{p}.labelSelector",
                        "constraint must not define a selector, as they deduced for each pod",
                    )
                )
            # validateConstraintNotRepeat
            for other in cs[:i]:
                if (
                    isinstance(other, dict)
                    and other.get("topologyKey") == c.get("topologyKey")
                    and other.get("whenUnsatisfiable") == c.get("whenUnsatisfiable")
                ):
                    errs.append(
                        _duplicate(p, f"{{{c.get('topologyKey')}, {c.get('whenUnsatisfiable')}}}")
                    )
                    break
        if len(errs) == 1:
            raise ValueError(errs[0])
        if errs:
            # An aggregate names no single field (ArgsError with an empty field: "args: [...]").
            raise ArgsError("", "[" + ", ".join(errs) + "]")
