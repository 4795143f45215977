"""Port of ``pkg/scheduler/apis/config/validation/validation.go`` (ValidateKubeSchedulerConfiguration)
and of component-base's ``ValidateClientConnectionConfiguration`` /
``ValidateLeaderElectionConfiguration``.

Validation runs, as in kube-scheduler, on the configuration *after* defaulting and plugin
merging. Errors keep apimachinery's ``field.Error`` wording (``Invalid value: ...``,
``Required value``, ``Duplicate value: ...``). Plugin args (validation_pluginargs.go) are
checked by the plugins' own ``Args`` types, for every ``pluginConfig`` entry as
``validatePluginConfig`` checks them (:func:`args_check`).
"""

from __future__ import annotations

import importlib.metadata
import ipaddress
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubesched.sdk import ArgsError, build_args
from kubesched.sdk._text import cut

from ..timefmt import go_duration
from ._schema import go_repr
from ._types import (
    EXTENSION_POINTS,
    MULTI_POINT,
    V1,
    V1BETA2,
    V1BETA3,
    ConfigError,
    PluginSet,
    SchedulerConfiguration,
)

# invalidPluginsByVersion, as each version's last serving release had it: (version, plugins).
# v1: release-1.36 (the same list since 1.34); v1beta3: release-1.28; v1beta2: release-1.27.
_INVALID_PLUGINS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    # 1.36 names the version "v1": its table keys on core/v1's SchemeGroupVersion (the ``v1``
    # import in validation.go), as kube-scheduler v1.36.3 prints it.
    V1: (("v1", ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")),),
    V1BETA3: ((V1BETA3, ()),),
    V1BETA2: (
        (
            V1BETA2,
            (
                "NodeLabel",
                "ServiceAffinity",
                "NodePreferAvoidPods",
                "NodeResourcesLeastAllocated",
                "NodeResourcesMostAllocated",
                "RequestedToCapacityRatio",
            ),
        ),
    ),
}


@dataclass
class PluginConfigEntry:
    """One ``pluginConfig`` item as written (validation needs duplicates and paths)."""

    name: str
    args: dict[str, Any]
    path: str


def invalid(value: str, detail: str) -> str:
    return f"Invalid value: {value}: {detail}" if detail else f"Invalid value: {value}"


def required(detail: str = "") -> str:
    return f"Required value: {detail}" if detail else "Required value"


def is_plugin_invalid(api_version: str, name: str) -> str | None:
    """``isPluginInvalid``: the version in which ``name`` became invalid, or None."""
    for version, plugins in _INVALID_PLUGINS.get(api_version, ()):
        if name in plugins:
            return version
    return None


def go_json(value: Any) -> str:
    """A value as apimachinery's ``field.Error`` renders a composite one: ``json.Marshal``."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: ``check_args(name, args, field)``: the (field, message) of the first problem of the args of
#: plugin ``name`` (``validatePluginConfig``'s validators), or None
ArgsCheck = Callable[[str, dict[str, Any], str], "tuple[str, str] | None"]


def validate(
    cfg: SchedulerConfiguration,
    plugin_configs: Sequence[Sequence[PluginConfigEntry]],
    line_of: Callable[[str], int | None],
    check_args: ArgsCheck | None = None,
) -> list[ConfigError]:
    errors: list[ConfigError] = []

    def add(path: str, message: str) -> None:
        errors.append(ConfigError(cfg.source, path, message, line=line_of(path)))

    # componentbasevalidation.ValidateClientConnectionConfiguration
    if cfg.client_connection.burst < 0:
        add(
            "clientConnection.burst",
            invalid(str(cfg.client_connection.burst), "must be non-negative"),
        )

    # componentbasevalidation.ValidateLeaderElectionConfiguration
    le = cfg.leader_election
    if le.leader_elect:
        for key, value in (
            ("leaseDuration", le.lease_duration),
            ("renewDeadline", le.renew_deadline),
            ("retryPeriod", le.retry_period),
        ):
            if value <= 0:
                # a metav1.Duration is rendered by json.Marshal: quoted
                add(
                    f"leaderElection.{key}",
                    invalid(go_json(go_duration(value)), "must be greater than zero"),
                )
        if le.lease_duration <= le.renew_deadline:
            # kube-scheduler's value is RenewDeadline (component-base passes it); kubesched adds
            # the leaseDuration it compared
            add(
                "leaderElection.leaseDuration",
                invalid(
                    go_json(go_duration(le.renew_deadline)),
                    "must be greater than `RenewDeadline` "
                    f"(leaseDuration is {go_duration(le.lease_duration)})",
                ),
            )
        if not le.resource_lock:
            add("leaderElection.resourceLock", required())
        if not le.resource_namespace:
            add("leaderElection.resourceNamespace", required())
        if not le.resource_name:
            add("leaderElection.resourceName", required())
        # Only ResourceLock values with leases are allowed.
        if le.resource_lock != "leases":
            add(
                "leaderElection.resourceLock",
                invalid(go_repr(le.resource_lock), 'resourceLock value must be "leases"'),
            )

    if cfg.parallelism <= 0:
        add(
            "parallelism",
            invalid(str(cfg.parallelism), "should be an integer value greater than zero"),
        )

    if not cfg.profiles:
        add("profiles", required())
    else:
        seen_names: dict[str, int] = {}
        for i, profile in enumerate(cfg.profiles):
            path = f"profiles[{i}]"
            if not profile.scheduler_name:
                add(f"{path}.schedulerName", required())
            _validate_percentage(
                add, f"{path}.percentageOfNodesToScore", profile.percentage_of_nodes_to_score
            )
            _validate_plugin_config(
                add, path, cfg.api_version, profile.plugins, plugin_configs[i], check_args
            )
            if profile.scheduler_name in seen_names:
                # kube-scheduler's value is the earlier profile's *field.Path, which json.Marshal
                # renders as {}; kubesched adds the name and the profile that has it already.
                add(
                    f"{path}.schedulerName",
                    f"Duplicate value: {{}} ({go_repr(profile.scheduler_name)} is already "
                    f"profiles[{seen_names[profile.scheduler_name]}].schedulerName)",
                )
            else:
                seen_names[profile.scheduler_name] = i
        _validate_common_queue_sort(add, cfg, plugin_configs)

    if cfg.api_version == V1BETA2:
        for key, address in (
            ("healthzBindAddress", cfg.health_bind_address),
            ("metricsBindAddress", cfg.metrics_bind_address),
        ):
            if address:
                for detail in _bind_address_problems(address):
                    add(key, invalid(go_repr(address), detail))

    _validate_percentage(add, "percentageOfNodesToScore", cfg.percentage_of_nodes_to_score)

    if cfg.pod_initial_backoff_seconds <= 0:
        add(
            "podInitialBackoffSeconds",
            invalid(_num(cfg.pod_initial_backoff_seconds), "must be greater than 0"),
        )
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        add(
            "podMaxBackoffSeconds",
            invalid(
                _num(cfg.pod_max_backoff_seconds),
                "must be greater than or equal to PodInitialBackoffSeconds",
            ),
        )
    return errors


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _validate_percentage(add: Callable[[str, str], None], path: str, value: int | None) -> None:
    if value is not None and not 0 <= value <= 100:
        add(path, invalid(str(value), "not in valid range [0-100]"))


def _validate_plugin_config(
    add: Callable[[str, str], None],
    path: str,
    api_version: str,
    plugins: Any,
    entries: Sequence[PluginConfigEntry],
    check_args: ArgsCheck | None,
) -> None:
    # kube-scheduler checks the extension points, not multiPoint: a removed plugin there fails
    # in NewFramework ('PreFilterPlugin "X" does not exist': its registry lacks it). kubesched
    # has these plugins for the older versions, so it names the removal at multiPoint too.
    for point in (*EXTENSION_POINTS, MULTI_POINT):
        for j, ref in enumerate(plugins.get(point).enabled):
            version = is_plugin_invalid(api_version, ref.name)
            if version is not None:
                add(
                    ref.path or f"{path}.plugins.{point}.enabled[{j}]",
                    invalid(go_repr(ref.name), _invalid_in(version, api_version)),
                )
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            add(entry.path, f"Duplicate value: {go_repr(entry.name)}")
        else:
            seen.add(entry.name)
        version = is_plugin_invalid(api_version, entry.name)
        if version is not None:
            add(entry.path, invalid(go_repr(entry.name), _invalid_in(version, api_version)))
        elif check_args is not None:
            # every entry's args, whether or not an extension point enables the plugin
            problem = check_args(entry.name, entry.args, f"{entry.path}.args")
            if problem is not None:
                add(*problem)


def _invalid_in(version: str, api_version: str) -> str:
    return f'was invalid in version "{version}" (KubeSchedulerConfiguration is version "{api_version}")'


def _describe(plugin_set: PluginSet) -> str:
    """The internal ``config.PluginSet`` as json.Marshal renders it (no json tags: Go field
    names; an empty list is nil, ``null``, after mergePluginSet)."""

    def refs(items: Sequence[Any]) -> list[dict[str, Any]] | None:
        return [{"Name": p.name, "Weight": p.weight} for p in items] or None

    return go_json({"Enabled": refs(plugin_set.enabled), "Disabled": refs(plugin_set.disabled)})


def _same_set(a: PluginSet, b: PluginSet) -> bool:
    return [(p.name, p.weight) for p in a.enabled] == [(p.name, p.weight) for p in b.enabled] and [
        p.name for p in a.disabled
    ] == [p.name for p in b.disabled]


def _validate_common_queue_sort(
    add: Callable[[str, str], None],
    cfg: SchedulerConfiguration,
    plugin_configs: Sequence[Sequence[PluginConfigEntry]],
) -> None:
    """``validateCommonQueueSort``: every profile needs the same queueSort plugins and args."""
    canon = cfg.profiles[0].plugins.queue_sort
    queue_sort_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        add(
            "profiles[0].plugins.queueSort.Enabled",  # sic: kube-scheduler's path
            invalid(str(len(canon.enabled)), "only one queue sort plugin can be enabled"),
        )
    queue_sort_args: dict[str, Any] | None = None
    for entry in plugin_configs[0]:
        if queue_sort_name and entry.name == queue_sort_name:
            queue_sort_args = entry.args
    for i in range(1, len(cfg.profiles)):
        curr = cfg.profiles[i].plugins.queue_sort
        if not _same_set(canon, curr):
            add(
                f"profiles[{i}].plugins.queueSort",
                invalid(
                    _describe(curr),
                    f"must be the same for all profiles (profiles[0] has {_describe(canon)})",
                ),
            )
        for entry in plugin_configs[i]:
            if entry.name == queue_sort_name and entry.args != queue_sort_args:
                add(
                    f"profiles[{i}].pluginConfig.args",  # sic: kube-scheduler's path
                    invalid(go_json(entry.args), "queueSort must be the same for all profiles"),
                )


def _bind_address_problems(address: str) -> list[str]:
    """The 1.27 checks on v1beta2 healthz/metrics bind addresses (splitHostIntPort etc.)."""
    if address.startswith("["):
        end = address.find("]")
        if end < 0:
            return [f"address {cut(address)}: missing ']' in address"]
        host, rest = address[1:end], address[end + 1 :]
        if not rest.startswith(":"):
            return [f"address {cut(address)}: missing port in address"]
        port = rest[1:]
    else:
        colon = address.rfind(":")
        if colon < 0:
            return [f"address {cut(address)}: missing port in address"]
        host, port = address[:colon], address[colon + 1 :]
        if ":" in host:
            return [f"address {cut(address)}: too many colons in address"]
    try:
        port_number = int(port, 10)
    except ValueError:
        return [f"strconv.Atoi: parsing {go_repr(port)}: invalid syntax"]
    problems = []
    try:
        ipaddress.ip_address(host)
    except ValueError:
        problems.append("must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
    if port_number != 0:
        problems.append("must be empty or with an explicit 0 port")
    return problems


# ---------------------------------------------------------------- pluginConfig args
#
# The args of every ``pluginConfig`` entry, validated with the file as kube-scheduler does.
#
# kube-scheduler decodes the args of its in-tree plugins strictly with the file, then
# ``validatePluginConfig`` (``pkg/scheduler/apis/config/validation/validation.go``) runs the args
# validator of every entry whose plugin has one, whether or not an extension point enables the
# plugin (``NewFramework`` builds only the enabled plugins, so a disabled plugin's args are checked
# nowhere else). Its validators map keys NodeResourcesFit's as ``"NodeResourcesFitArgs"``, which no
# entry is named: NodeResourcesFit's args are only decoded with the file and validated when the
# plugin is built, so a disabled NodeResourcesFit with a bad ``scoringStrategy.type`` passes;
# kubesched does the same. A name kube-scheduler has no args type for (an out-of-tree plugin) is left to
# the plugin, which receives its args when it is enabled.
#
# The args types are the runtime's own plugins' ``Args`` (named by its ``kubesched.plugins`` entry
# points), decoded and validated by :func:`kubesched.sdk.build_args`, as when the plugin is built.

#: the plugins whose args ``validatePluginConfig`` decodes but does not validate
DECODED_ONLY = frozenset({"NodeResourcesFit"})

_DISTRIBUTION = "kubesched"
_GROUP = "kubesched.plugins"


@cache
def _args_class(name: str) -> type[Any] | None:
    """The ``Args`` of the runtime's own plugin ``name`` (None when it has none)."""
    try:
        entry_points = importlib.metadata.distribution(_DISTRIBUTION).entry_points
    except importlib.metadata.PackageNotFoundError:  # not installed: the plugin validates its args
        return None
    for ep in entry_points:
        if ep.group == _GROUP and ep.name == name:
            args_cls = getattr(ep.load(), "Args", None)
            return args_cls if isinstance(args_cls, type) else None
    return None


_DECODED_ONLY_CLASSES: dict[type[Any], type[Any]] = {}


def _decoded_only(args_cls: type[Any]) -> type[Any]:
    """``args_cls`` without its ``validate()``: build_args decodes (unknown fields, types) only."""
    cls = _DECODED_ONLY_CLASSES.get(args_cls)
    if cls is None:
        attrs = {"validate": None, "__module__": args_cls.__module__}
        cls = _DECODED_ONLY_CLASSES[args_cls] = type(args_cls.__name__, (args_cls,), attrs)
    return cls


def args_check(in_tree: Collection[str]) -> ArgsCheck:
    """The check of one entry's args, for a file whose in-tree plugins with args are ``in_tree``."""

    def check(name: str, args: Mapping[str, Any], field: str) -> tuple[str, str] | None:
        if name not in in_tree:
            return None
        args_cls = _args_class(name)
        if args_cls is None:
            return None
        if name in DECODED_ONLY:
            args_cls = _decoded_only(args_cls)
        try:
            build_args(args_cls, args, field=field)
        except ArgsError as e:
            return e.field, e.message
        return None

    return check
