"""Strict decoding of the versioned KubeSchedulerConfiguration types.

Mirrors ``staging/src/k8s.io/kube-scheduler/config/{v1,v1beta3,v1beta2}/types.go`` and the
component-base ``LeaderElectionConfiguration``/``ClientConnectionConfiguration``/
``DebuggingConfiguration`` they embed, decoded the way kube-scheduler decodes them: strict
(unknown fields are errors, field names are case-sensitive), JSON value types (a string is not an
int; an integral float such as ``1.0`` is), ``null`` meaning "not set".
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.sdk._describe import suggest, type_name
from kubesched.sdk._text import SCALAR_LIMIT, printable

from ._duration import parse_go_duration
from ._types import EXTENSION_POINTS, MULTI_POINT, V1, V1BETA2, V1BETA3, ConfigError
from ._yaml import join_index, join_key


@dataclass(frozen=True)
class Scalar:
    #: string | bool | int32 | int64 | float32 | duration
    kind: str


@dataclass(frozen=True)
class Struct:
    name: str
    fields: Mapping[str, Spec]


@dataclass(frozen=True)
class ListOf:
    item: Spec


@dataclass(frozen=True)
class Args:
    """runtime.RawExtension holding plugin args: any mapping."""


@dataclass(frozen=True)
class AnyList:
    """A list whose items are not decoded (extenders, which are rejected anyway)."""


Spec = Scalar | Struct | ListOf | Args | AnyList

STRING = Scalar("string")
BOOL = Scalar("bool")
INT32 = Scalar("int32")
INT64 = Scalar("int64")
FLOAT32 = Scalar("float32")
DURATION = Scalar("duration")

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}

LEADER_ELECTION = Struct(
    "LeaderElectionConfiguration",
    {
        "leaderElect": BOOL,
        "leaseDuration": DURATION,
        "renewDeadline": DURATION,
        "retryPeriod": DURATION,
        "resourceLock": STRING,
        "resourceName": STRING,
        "resourceNamespace": STRING,
    },
)
CLIENT_CONNECTION = Struct(
    "ClientConnectionConfiguration",
    {
        "kubeconfig": STRING,
        "acceptContentTypes": STRING,
        "contentType": STRING,
        "qps": FLOAT32,
        "burst": INT32,
    },
)
PLUGIN = Struct("Plugin", {"name": STRING, "weight": INT32})
PLUGIN_SET = Struct("PluginSet", {"enabled": ListOf(PLUGIN), "disabled": ListOf(PLUGIN)})
PLUGIN_CONFIG = Struct("PluginConfig", {"name": STRING, "args": Args()})


def _plugins(points: tuple[str, ...]) -> Struct:
    return Struct("Plugins", {point: PLUGIN_SET for point in points})


def _profile(plugins: Struct, *, percentage: bool) -> Struct:
    fields: dict[str, Spec] = {"schedulerName": STRING}
    if percentage:
        fields["percentageOfNodesToScore"] = INT32
    fields["plugins"] = plugins
    fields["pluginConfig"] = ListOf(PLUGIN_CONFIG)
    return Struct("KubeSchedulerProfile", fields)


def _configuration(profile: Struct, extra: Mapping[str, Spec]) -> Struct:
    fields: dict[str, Spec] = {
        "apiVersion": STRING,
        "kind": STRING,
        "parallelism": INT32,
        "leaderElection": LEADER_ELECTION,
        "clientConnection": CLIENT_CONNECTION,
        # componentbaseconfigv1alpha1.DebuggingConfiguration, inlined
        "enableProfiling": BOOL,
        "enableContentionProfiling": BOOL,
        "percentageOfNodesToScore": INT32,
        "podInitialBackoffSeconds": INT64,
        "podMaxBackoffSeconds": INT64,
        "profiles": ListOf(profile),
        "extenders": AnyList(),
    }
    fields.update(extra)
    return Struct("KubeSchedulerConfiguration", fields)


#: v1's plugin sets of the workload placement extension points (kube-scheduler 1.36, alpha
#: TopologyAwareWorkloadScheduling): accepted as kube-scheduler accepts them; kubesched has no
#: such extension point, so the loader refuses a plugin enabled there.
PLACEMENT_POINTS = ("placementGenerate", "placementScore")

SCHEMAS: dict[str, Struct] = {
    V1: _configuration(
        _profile(_plugins((*EXTENSION_POINTS, MULTI_POINT, *PLACEMENT_POINTS)), percentage=True),
        {"delayCacheUntilActive": BOOL},
    ),
    V1BETA3: _configuration(
        _profile(_plugins((*EXTENSION_POINTS, MULTI_POINT)), percentage=False), {}
    ),
    V1BETA2: _configuration(
        _profile(_plugins(EXTENSION_POINTS), percentage=False),
        {"healthzBindAddress": STRING, "metricsBindAddress": STRING},
    ),
}


def go_repr(value: Any) -> str:
    """A value as apimachinery's field errors print it (strings quoted, JSON literals); a string
    longer than ``SCALAR_LIMIT`` is cut (a token pasted in the wrong field is not echoed) and
    characters that would act on a terminal are escaped (:mod:`kubesched.sdk._text`)."""
    if isinstance(value, str):
        if len(value) > SCALAR_LIMIT:
            quoted = json.dumps(value[:SCALAR_LIMIT], ensure_ascii=False)
            return printable(f'{quoted[:-1]}... ({len(value) - SCALAR_LIMIT} more characters)"')
        return printable(json.dumps(value, ensure_ascii=False))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Mapping):
        return "{...}"
    if isinstance(value, (list, tuple)):
        return "[...]"
    return repr(value)


class Decoder:
    def __init__(self, source: str | None, positions: Mapping[str, int]) -> None:
        self.source = source
        self.positions = positions

    def error(self, path: str, message: str) -> ConfigError:
        return ConfigError(self.source, path, message, line=self.line(path))

    def line(self, path: str) -> int | None:
        while path:
            if path in self.positions:
                return self.positions[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return self.positions.get("")

    def _bad_type(self, path: str, value: Any, expected: str) -> ConfigError:
        return self.error(
            path, f"Invalid value: {go_repr(value)}: expected {expected}, got {type_name(value)}"
        )

    def decode(self, value: Any, spec: Spec, path: str) -> Any:
        """Decoded value; for structs a dict holding only the fields that are set."""
        if isinstance(spec, Struct):
            return self._struct(value, spec, path)
        if isinstance(spec, ListOf):
            if not isinstance(value, list):
                raise self._bad_type(path, value, "a list")
            return [
                self.decode(item, spec.item, join_index(path, i)) for i, item in enumerate(value)
            ]
        if isinstance(spec, AnyList):
            if not isinstance(value, list):
                raise self._bad_type(path, value, "a list")
            return list(value)
        if isinstance(spec, Args):
            if not isinstance(value, Mapping):
                raise self._bad_type(path, value, "a mapping of plugin arguments")
            return dict(value)
        return self._scalar(value, spec.kind, path)

    def _struct(self, value: Any, spec: Struct, path: str) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise self._bad_type(path, value, f"a mapping ({spec.name})")
        out: dict[str, Any] = {}
        for key, item in value.items():
            child = join_key(path, key)
            if key not in spec.fields:
                message = f"unknown field {go_repr(key)}"
                close = suggest(key, spec.fields)
                if close is not None:
                    message += f'; did you mean "{close}"?'
                raise self.error(child, message)
            if item is None:  # JSON null: the field stays unset
                continue
            out[key] = self.decode(item, spec.fields[key], child)
        return out

    def _scalar(self, value: Any, kind: str, path: str) -> Any:
        if kind == "string":
            if not isinstance(value, str):
                raise self._bad_type(path, value, "a string")
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                raise self._bad_type(path, value, "a boolean")
            return value
        if kind in _INT_RANGES:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self._bad_type(path, value, f"an integer ({kind})")
            if isinstance(value, float):
                if not math.isfinite(value) or not value.is_integer():
                    raise self._bad_type(path, value, f"an integer ({kind})")
                value = int(value)
            low, high = _INT_RANGES[kind]
            if not low <= value <= high:
                raise self.error(
                    path, f"Invalid value: {value}: out of range for {kind} [{low}, {high}]"
                )
            return value
        if kind == "float32":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self._bad_type(path, value, "a number")
            return float(value)
        if kind == "duration":
            if not isinstance(value, str):
                raise self._bad_type(path, value, 'a duration string such as "15s"')
            try:
                return parse_go_duration(value)
            except ValueError as exc:
                raise self.error(path, f"Invalid value: {go_repr(value)}: {exc}") from None
        raise AssertionError(f"unknown scalar kind {kind}")
