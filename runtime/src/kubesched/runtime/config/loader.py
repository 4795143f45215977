"""Reading a KubeSchedulerConfiguration: decode strictly, default, merge plugins, validate.

The steps follow kube-scheduler's ``cmd/kube-scheduler/app/options`` → ``scheme`` decoding →
``SetDefaults_KubeSchedulerConfiguration`` (``pkg/scheduler/apis/config/<version>/defaults.go``)
→ conversion to the internal type → ``ValidateKubeSchedulerConfiguration``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from kubesched.sdk._describe import suggest
from kubesched.sdk._text import cut

from . import _validate
from ._schema import PLACEMENT_POINTS, SCHEMAS, Decoder, go_repr
from ._types import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    GROUP,
    KIND,
    MULTI_POINT,
    SUPPORTED_API_VERSIONS,
    V1,
    V1BETA2,
    V1BETA3,
    ClientConnection,
    ConfigError,
    LeaderElection,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    SchedulerConfiguration,
)
from ._validate import PluginConfigEntry, args_check
from ._yaml import join_index, parse_document, plain_data
from .defaults import default_plugins, merge_plugins

log = logging.getLogger(__name__)

# In-tree plugins whose args kube-scheduler decodes into a registered "<Name>Args" type, per
# version (types_pluginargs.go): their args' kind/apiVersion group must match.
_IN_TREE_ARGS = (
    "DefaultPreemption",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "PodTopologySpread",
    "VolumeBinding",
)
_IN_TREE_ARGS_BY_VERSION: dict[str, frozenset[str]] = {
    V1: frozenset((*_IN_TREE_ARGS, "DynamicResources")),
    V1BETA3: frozenset(_IN_TREE_ARGS),
    V1BETA2: frozenset(_IN_TREE_ARGS),
}

_DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # config.DefaultPercentageOfNodesToScore


def load_config(
    path: str | os.PathLike[str] | None,
    *,
    installed_plugins: Collection[str] | None = None,
    unknown_plugin_hints: Mapping[str, str] | None = None,
) -> SchedulerConfiguration:
    """Load the KubeSchedulerConfiguration file at ``path``.

    ``None`` gives kube-scheduler's default configuration: one profile ``default-scheduler``
    with the default plugins of ``kubescheduler.config.k8s.io/v1``.
    """
    hints = unknown_plugin_hints
    if path is None:
        return load_config_data(
            {"apiVersion": V1, "kind": KIND}, source=None, installed_plugins=installed_plugins,
            unknown_plugin_hints=hints,
        )
    source = os.fsdecode(os.fspath(path))
    try:
        text = Path(source).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source, "", f"cannot read configuration file: not UTF-8 text ({exc.reason})"
        ) from exc
    except OSError as exc:
        raise ConfigError(
            source, "", f"cannot read configuration file: {exc.strerror or exc}"
        ) from exc
    return load_config_data(
        text, source=source, installed_plugins=installed_plugins, unknown_plugin_hints=hints
    )


def load_config_data(
    data: Mapping[str, Any] | str,
    *,
    source: str | None = None,
    installed_plugins: Collection[str] | None = None,
    unknown_plugin_hints: Mapping[str, str] | None = None,
) -> SchedulerConfiguration:
    """Load a KubeSchedulerConfiguration from YAML text or from already-parsed data.

    ``source`` names the origin in error messages. When ``installed_plugins`` is given, every
    plugin name written in an ``enabled`` list (any extension point, ``multiPoint`` included)
    must be one of them (a ``pluginConfig`` entry naming another is a logged warning: its args
    are never used, and kube-scheduler runs such a file); ``unknown_plugin_hints`` says, for a name that
    is not, why (the registry's misspelt entry-point groups) instead of a did-you-mean.
    """
    positions: dict[str, int]
    if isinstance(data, str):
        document, positions = parse_document(data, source)
    else:
        document, positions = plain_data(data, "", source), {}
    return _Builder(source, positions).build(document, installed_plugins, unknown_plugin_hints)


class _Builder:
    def __init__(self, source: str | None, positions: Mapping[str, int]) -> None:
        self.source = source
        self.decoder = Decoder(source, positions)

    def error(self, path: str, message: str) -> ConfigError:
        return self.decoder.error(path, message)

    # ------------------------------------------------------------------ decoding
    def build(
        self,
        document: Any,
        installed_plugins: Collection[str] | None,
        unknown_plugin_hints: Mapping[str, str] | None = None,
    ) -> SchedulerConfiguration:
        if not isinstance(document, Mapping):
            got = "a list" if isinstance(document, list) else f"the scalar {go_repr(document)}"
            line = self.decoder.line("")
            raise ConfigError(
                self.source,
                f"line {line}" if line else "",
                f"expected a {KIND} mapping, got {got}",
                line=line,
            )
        api_version = self._api_version(document)
        kind: Any = document.get("kind")
        if kind is None:
            raise self.error("kind", f'Required value: must be "{KIND}"')
        if kind != KIND:
            raise self.error(
                "kind", f'Unsupported value: {go_repr(kind)}: supported values: "{KIND}"'
            )

        decoded: dict[str, Any] = self.decoder.decode(document, SCHEMAS[api_version], "")
        extenders = decoded.get("extenders") or []
        if extenders:
            raise self.error(
                "extenders",
                f"Forbidden: scheduler extenders are not supported by kubesched ({len(extenders)} "
                "configured); implement the extender's logic as a kubesched plugin instead",
            )

        cfg, plugin_configs = self._convert(decoded, api_version)
        errors = _validate.validate(
            cfg, plugin_configs, self.decoder.line, args_check(_IN_TREE_ARGS_BY_VERSION[api_version])
        )
        if installed_plugins is not None:
            errors.extend(
                self._check_installed(decoded, set(installed_plugins), unknown_plugin_hints or {})
            )
        if errors:
            first = errors[0]
            first.errors = errors
            raise first
        return cfg

    def _api_version(self, document: Mapping[str, Any]) -> str:
        supported = ", ".join(f'"{v}"' for v in SUPPORTED_API_VERSIONS)
        api_version = document.get("apiVersion")
        if api_version is None:
            raise self.error("apiVersion", f"Required value: supported values: {supported}")
        if api_version not in SUPPORTED_API_VERSIONS:
            raise self.error(
                "apiVersion",
                f"Unsupported value: {go_repr(api_version)}: supported values: {supported}",
            )
        return str(api_version)

    # ------------------------------------------------------------------ defaulting
    def _convert(
        self, decoded: Mapping[str, Any], api_version: str
    ) -> tuple[SchedulerConfiguration, list[list[PluginConfigEntry]]]:
        """SetDefaults_KubeSchedulerConfiguration + conversion to the internal types."""
        raw_profiles: list[dict[str, Any]] = list(decoded.get("profiles") or [])
        if not raw_profiles:
            raw_profiles = [{}]
        # Only apply a default scheduler name when there is a single profile.
        # Validation will ensure that every profile has a non-empty unique name.
        if len(raw_profiles) == 1 and "schedulerName" not in raw_profiles[0]:
            raw_profiles[0] = {**raw_profiles[0], "schedulerName": DEFAULT_SCHEDULER_NAME}

        profiles: list[Profile] = []
        plugin_configs: list[list[PluginConfigEntry]] = []
        for index, raw in enumerate(raw_profiles):
            profile, entries = self._profile(index, raw, api_version)
            profiles.append(profile)
            plugin_configs.append(entries)

        le_raw: Mapping[str, Any] = decoded.get("leaderElection", {})
        defaults = LeaderElection()
        leader_election = LeaderElection(
            leader_elect=le_raw.get("leaderElect", True),
            # metav1.Duration zero values are defaulted (RecommendedDefaultLeaderElectionConfiguration)
            lease_duration=le_raw.get("leaseDuration") or defaults.lease_duration,
            renew_deadline=le_raw.get("renewDeadline") or defaults.renew_deadline,
            retry_period=le_raw.get("retryPeriod") or defaults.retry_period,
            resource_lock=le_raw.get("resourceLock") or "leases",
            resource_name=le_raw.get("resourceName") or defaults.resource_name,
            resource_namespace=le_raw.get("resourceNamespace") or defaults.resource_namespace,
        )
        cc_raw: Mapping[str, Any] = decoded.get("clientConnection", {})
        client_connection = ClientConnection(
            kubeconfig=cc_raw.get("kubeconfig", ""),
            # Scheduler has an opinion about QPS/Burst: 0 means its own defaults.
            qps=cc_raw.get("qps") or 50.0,
            burst=cc_raw.get("burst") or 100,
            content_type=cc_raw.get("contentType") or "application/vnd.kubernetes.protobuf",
            accept_content_types=cc_raw.get("acceptContentTypes", ""),
        )
        percentage = decoded.get("percentageOfNodesToScore", _DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE)
        enable_profiling = decoded.get("enableProfiling", True)
        cfg = SchedulerConfiguration(
            api_version=api_version,
            source=self.source,
            profiles=profiles,
            percentage_of_nodes_to_score=None if percentage == 0 else percentage,
            pod_initial_backoff_seconds=float(decoded.get("podInitialBackoffSeconds", 1)),
            pod_max_backoff_seconds=float(decoded.get("podMaxBackoffSeconds", 10)),
            parallelism=decoded.get("parallelism", 16),
            leader_election=leader_election,
            client_connection=client_connection,
            health_bind_address=decoded.get("healthzBindAddress", ""),
            metrics_bind_address=decoded.get("metricsBindAddress", ""),
            enable_profiling=enable_profiling,
            enable_contention_profiling=decoded.get("enableContentionProfiling", enable_profiling),
            delay_cache_until_active=decoded.get("delayCacheUntilActive", False),
        )
        return cfg, plugin_configs

    def _profile(
        self, index: int, raw: Mapping[str, Any], api_version: str
    ) -> tuple[Profile, list[PluginConfigEntry]]:
        path = f"profiles[{index}]"
        raw_plugins: Mapping[str, Any] | None = raw.get("plugins")
        custom = None if raw_plugins is None else self._custom_plugins(path, raw_plugins)
        if api_version != V1 and raw_plugins and raw_plugins.get("preEnqueue"):
            log.warning(
                "%s: %s.plugins.preEnqueue is ignored: kube-scheduler's %s mergePlugins does not "
                "merge preEnqueue",
                self.source or "<config>",
                path,
                api_version,
            )
        plugins = merge_plugins(default_plugins(api_version), custom, api_version)

        entries: list[PluginConfigEntry] = []
        plugin_config: dict[str, dict[str, Any]] = {}
        kinds: dict[str, str] = {}
        for j, item in enumerate(raw.get("pluginConfig") or []):
            entry_path = join_index(f"{path}.pluginConfig", j)
            if "name" not in item:
                raise self.error(f"{entry_path}.name", "Required value: the plugin's name")
            name: str = item["name"]
            args = dict(item.get("args") or {})
            kind = args.pop("kind", None)
            arg_api_version = args.pop("apiVersion", None)
            self._check_args_type(entry_path, name, kind, arg_api_version, api_version)
            entries.append(PluginConfigEntry(name, args, entry_path))
            if name not in plugin_config:  # duplicates are reported by validation
                plugin_config[name] = args
                if isinstance(kind, str):
                    kinds[name] = kind
        percentage = raw.get("percentageOfNodesToScore")
        profile = Profile(
            scheduler_name=raw.get("schedulerName", ""),
            percentage_of_nodes_to_score=percentage,
            plugins=plugins,
            plugin_config=plugin_config,
            plugin_config_kinds=kinds,
            index=index,
            source=self.source,
        )
        return profile, entries

    def _custom_plugins(self, path: str, raw_plugins: Mapping[str, Any]) -> Plugins:
        custom = Plugins()
        for point, raw_set in raw_plugins.items():
            point_path = f"{path}.plugins.{point}"
            if point in PLACEMENT_POINTS:
                enabled = raw_set.get("enabled") or []
                if enabled:
                    raise self.error(
                        f"{point_path}.enabled[0].name",
                        f"kubesched has no {point} extension point (kube-scheduler 1.36's workload "
                        "placement, TopologyAwareWorkloadScheduling, alpha and off by default): "
                        f"cannot enable {go_repr(enabled[0]['name'])} there",
                    )
                continue  # disabling plugins there changes nothing
            custom.set(
                point,
                PluginSet(
                    self._refs(f"{point_path}.enabled", raw_set.get("enabled") or []),
                    self._refs(f"{point_path}.disabled", raw_set.get("disabled") or []),
                ),
            )
        return custom

    def _refs(self, path: str, items: list[Mapping[str, Any]]) -> list[PluginRef]:
        refs = []
        for i, item in enumerate(items):
            item_path = join_index(path, i)
            if "name" not in item:
                raise self.error(f"{item_path}.name", "Required value: the plugin's name")
            refs.append(PluginRef(item["name"], item.get("weight", 0), path=item_path))
        return refs

    def _check_args_type(
        self,
        path: str,
        name: str,
        kind: Any,
        arg_api_version: Any,
        api_version: str,
    ) -> None:
        """``PluginConfig.decodeNestedObjects`` for in-tree plugins: the args' GroupKind."""
        for key, value in (("kind", kind), ("apiVersion", arg_api_version)):
            if value is not None and not isinstance(value, str):
                raise self.error(
                    f"{path}.args.{key}", f"Invalid value: {go_repr(value)}: expected a string"
                )
        if name not in _IN_TREE_ARGS_BY_VERSION[api_version]:
            return  # out-of-tree plugin args are passed through as written
        want_kind = f"{name}Args"
        got_kind = kind or want_kind
        got_group = GROUP
        if arg_api_version:
            got_group = arg_api_version.rsplit("/", 1)[0] if "/" in arg_api_version else ""
        if (got_kind, got_group) != (want_kind, GROUP):
            field = "kind" if got_kind != want_kind else "apiVersion"
            got = cut(f"{got_kind}.{got_group}" if got_group else got_kind)
            raise self.error(
                f"{path}.args.{field}",
                f"args for plugin {name} were not of type {want_kind}.{GROUP}, got {got}",
            )

    # ------------------------------------------------------------------ installed plugins
    def _check_installed(
        self, decoded: Mapping[str, Any], installed: set[str], hints: Mapping[str, str]
    ) -> list[ConfigError]:
        listing = ", ".join(sorted(installed)) if installed else "(none)"
        errors: list[ConfigError] = []

        def unknown(name: str) -> str | None:
            if name in installed:
                return None
            message = f"unknown plugin {go_repr(name)}"
            if name in hints:
                return f"{message}; {hints[name]}"
            close = suggest(name, installed)
            message += f'; did you mean "{close}"? ' if close else "; "
            return message + f"installed plugins: {listing}"

        def check(name: str, path: str) -> None:
            message = unknown(name)
            if message is not None:
                errors.append(self.error(path, message))

        for i, profile in enumerate(decoded.get("profiles") or []):
            plugins: Mapping[str, Any] = profile.get("plugins") or {}
            for point, raw_set in plugins.items():
                if point not in (*EXTENSION_POINTS, MULTI_POINT):
                    continue
                for j, item in enumerate(raw_set.get("enabled") or []):
                    check(item["name"], f"profiles[{i}].plugins.{point}.enabled[{j}].name")
            # kube-scheduler v1.36.3 runs a file whose pluginConfig names a plugin it does not
            # have (the args are never used): a warning, not an error
            for j, item in enumerate(profile.get("pluginConfig") or []):
                message = unknown(item["name"])
                if message is not None:
                    log.warning(
                        "%s: profiles[%d].pluginConfig[%d].name: %s (its args are not used)",
                        self.source or "<config>", i, j, message,
                    )
        return errors
