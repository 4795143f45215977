"""DynamicResourcesArgs (kubescheduler.config.k8s.io/v1, kube-scheduler v1.36.3)."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.sdk import ArgsError

from ...config._duration import parse_go_duration
from ...timefmt import go_duration

__all__ = ["DynamicResourcesArgs"]


@dataclass
class DynamicResourcesArgs:
    """DynamicResourcesArgs (kubescheduler.config.k8s.io/v1, v1.36.3 types_pluginargs.go): Go
    durations. Defaults (v1/defaults.go SetDefaults_DynamicResourcesArgs, with
    DRASchedulerFilterTimeout, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on,
    as in 1.36): filterTimeout 10s (the longest one Filter's allocation for a node may take; 0
    means no limit), bindingTimeout 10m (how long PreBind waits for binding conditions)."""

    filter_timeout: str = "10s"
    binding_timeout: str = "10m0s"

    def validate(self) -> None:
        """ValidateDynamicResourcesArgs (field.ErrorList.ToAggregate())."""
        errs: list[tuple[str, str]] = []
        for field_name, text, check in (
            ("filterTimeout", self.filter_timeout, lambda s: s < 0),
            ("bindingTimeout", self.binding_timeout, lambda s: s < 1),
        ):
            if not isinstance(text, str):
                raise ArgsError(field_name, f"Invalid value: {text!r}: expected a duration string such as \"10s\"")
            try:
                seconds = parse_go_duration(text)
            except ValueError as e:
                raise ArgsError(field_name, f"Invalid value: {_go_quote(text)}: {e}") from None
            if check(seconds):
                detail = "must be zero or positive" if field_name == "filterTimeout" else "must be at least 1 second"
                errs.append((field_name, f"Invalid value: {_go_quote(go_duration(seconds))}: {detail}"))
        if len(errs) == 1:
            raise ArgsError(*errs[0])
        if errs:
            raise ArgsError("", "[" + ", ".join(f"{f}: {m}" for f, m in errs) + "]")


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
