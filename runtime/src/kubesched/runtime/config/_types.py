"""Typed results of loading a KubeSchedulerConfiguration, and the error type.

The dataclasses mirror kube-scheduler's *internal* configuration
(``pkg/scheduler/apis/config/types.go``) after defaulting and conversion, with
snake_case attribute names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kubesched.sdk._text import printable
from kubesched.sdk.points import EXTENSION_POINTS as _SDK_POINTS

KIND = "KubeSchedulerConfiguration"
GROUP = "kubescheduler.config.k8s.io"
V1 = f"{GROUP}/v1"
V1BETA3 = f"{GROUP}/v1beta3"
V1BETA2 = f"{GROUP}/v1beta2"
SUPPORTED_API_VERSIONS: tuple[str, ...] = (V1, V1BETA3, V1BETA2)

DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: Extension points as written in the configuration (camelCase), in kube-scheduler's order
#: (from the SDK's one table, :mod:`kubesched.sdk.points`).
EXTENSION_POINTS: tuple[str, ...] = tuple(p.name for p in _SDK_POINTS)
MULTI_POINT = "multiPoint"

#: camelCase -> snake_case attribute name of :class:`Plugins` (``queueSort`` -> ``queue_sort``)
_SNAKE: dict[str, str] = {p: re.sub(r"(?<!^)([A-Z])", r"_\1", p).lower() for p in (*EXTENSION_POINTS, MULTI_POINT)}
_CAMEL: dict[str, str] = {snake: camel for camel, snake in _SNAKE.items()}


def camel_point(point: str) -> str:
    """Return the camelCase name of an extension point given in camelCase or snake_case.

    ``multiPoint``/``multi_point`` are accepted too. Raises :class:`KeyError` otherwise.
    """
    if point in _SNAKE:
        return point
    if point in _CAMEL:
        return _CAMEL[point]
    raise KeyError(f"unknown extension point {point!r}; known: {', '.join(_SNAKE)}")


class ConfigError(Exception):
    """A configuration problem, located by file and kube-scheduler-style field path.

    ``str(e)`` is ``"{file}: {field_path}: {message}"``; the file part is left out when
    ``file`` is None (and the path part when the problem has no field, e.g. unreadable file).
    ``errors`` holds every problem found in the same pass (this one first); ``line`` is the
    1-based line of the offending node when it is known.
    """

    file: str | None
    field_path: str
    message: str
    line: int | None
    errors: list[ConfigError]

    def __init__(
        self,
        file: str | None,
        field_path: str,
        message: str,
        *,
        line: int | None = None,
        errors: list[ConfigError] | None = None,
    ) -> None:
        self.file = file
        self.field_path = field_path
        self.message = message
        self.line = line
        self.errors = list(errors) if errors else [self]
        super().__init__(str(self))

    def __str__(self) -> str:
        # one line: a file name, field or message holding control characters has them escaped
        return printable(": ".join(part for part in (self.file, self.field_path, self.message) if part))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (self.file, self.field_path, self.message, self.line))


def _rebuild_error(file: str | None, path: str, message: str, line: int | None) -> ConfigError:
    return ConfigError(file, path, message, line=line)


@dataclass
class PluginRef:
    """One plugin in an ``enabled``/``disabled`` list. ``weight`` 0 means "not set"."""

    name: str
    weight: int = 0
    #: Field path of the entry in the file it came from (None for kube-scheduler defaults).
    path: str | None = field(default=None, compare=False, repr=False)
    #: True when kube-scheduler's default plugin set put it there.
    default: bool = field(default=False, compare=False, repr=False)


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)


@dataclass
class Plugins:
    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)

    def get(self, point: str) -> PluginSet:
        """The set of an extension point named in camelCase or snake_case (``multiPoint`` too)."""
        result: PluginSet = getattr(self, _SNAKE[camel_point(point)])
        return result

    def set(self, point: str, plugin_set: PluginSet) -> None:
        setattr(self, _SNAKE[camel_point(point)], plugin_set)

    def items(self) -> Iterator[tuple[str, PluginSet]]:
        """``(camelCase point, set)`` for every extension point, then ``multiPoint``."""
        for point in (*EXTENSION_POINTS, MULTI_POINT):
            yield point, self.get(point)


@dataclass
class Profile:
    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Plugins
    plugin_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    plugin_config_kinds: dict[str, str] = field(default_factory=dict)
    index: int = 0
    #: The file this profile was read from (for error messages); None for in-memory data.
    source: str | None = field(default=None, compare=False, repr=False)


@dataclass
class LeaderElection:
    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass
class ClientConnection:
    kubeconfig: str = ""
    qps: float = 50
    burst: int = 100
    content_type: str = "application/vnd.kubernetes.protobuf"
    accept_content_types: str = ""


@dataclass
class SchedulerConfiguration:
    api_version: str
    source: str | None
    profiles: list[Profile]
    #: Global percentage; None means kube-scheduler's 0, the adaptive percentage.
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: float = 1
    pod_max_backoff_seconds: float = 10
    parallelism: int = 16
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    #: Only kubescheduler.config.k8s.io/v1beta2 has these; "" otherwise.
    health_bind_address: str = ""
    metrics_bind_address: str = ""
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    #: Only kubescheduler.config.k8s.io/v1 has this field.
    delay_cache_until_active: bool = False

    def profile(self, scheduler_name: str) -> Profile:
        """The profile whose ``schedulerName`` is ``scheduler_name`` (KeyError if none)."""
        for prof in self.profiles:
            if prof.scheduler_name == scheduler_name:
                return prof
        names = ", ".join(repr(p.scheduler_name) for p in self.profiles)
        raise KeyError(f"no profile with schedulerName {scheduler_name!r} (profiles: {names})")
