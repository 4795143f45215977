"""kube-scheduler's default plugins and its ``mergePlugins``/``mergePluginSet``, per API version.

Ported from kubernetes/kubernetes:

* ``kubescheduler.config.k8s.io/v1`` — ``pkg/scheduler/apis/config/v1/default_plugins.go`` at
  v1.36.3 (getDefaultPlugins + applyFeatureGates with v1.36's default feature gates:
  NodeDeclaredFeatures is beta/on, so ``NodeDeclaredFeatures`` is appended to multiPoint;
  DynamicResourceAllocation is GA/on, so ``DynamicResources`` is inserted before
  ``DefaultPreemption`` with weight 2; GangScheduling and TopologyAwareWorkloadScheduling are
  alpha/off, so GangScheduling, TopologyPlacementGenerator and PodGroupPodsCount are not added.
  The in-tree EBSLimits/GCEPDLimits/AzureDiskLimits plugins were removed before 1.34).
* ``v1beta3`` — ``pkg/scheduler/apis/config/v1beta3/default_plugins.go`` as of release 1.28, the last
  release that served v1beta3 (PodSchedulingReadiness is on by default there, so
  ``SchedulingGates`` is appended to multiPoint). Its ``mergePlugins`` does not merge
  ``preEnqueue``: a ``preEnqueue`` section in a v1beta3 file is ignored, exactly as kube-scheduler
  ignored it (see koordinator-sh/koordinator#2165).
* ``v1beta2`` — ``pkg/scheduler/apis/config/v1beta2/default_plugins.go`` as of release 1.27, the last
  release that served v1beta2: per-extension-point lists, ``SchedulingGates`` at preEnqueue
  (PodSchedulingReadiness on), ``VolumeZone`` at preFilter; VolumeCapacityPriority (off) adds
  nothing. Its ``mergePluginSet`` drops ``disabled`` lists from the result and, like v1beta3,
  ignores a custom ``preEnqueue`` section.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ._types import (
    EXTENSION_POINTS,
    MULTI_POINT,
    SUPPORTED_API_VERSIONS,
    V1,
    V1BETA2,
    V1BETA3,
    PluginRef,
    Plugins,
    PluginSet,
)

log = logging.getLogger(__name__)

_Spec = Sequence[tuple[str, int]]

# pkg/scheduler/apis/config/v1/default_plugins.go (v1.36.3), after applyFeatureGates.
_V1_MULTI_POINT: _Spec = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),  # applyFeatureGates: DynamicResourceAllocation (GA), weight 2 in v1.36
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("NodeDeclaredFeatures", 0),  # applyFeatureGates: NodeDeclaredFeatures (beta, on in 1.36)
)

# pkg/scheduler/apis/config/v1beta3/default_plugins.go (release-1.28), after applyFeatureGates.
_V1BETA3_MULTI_POINT: _Spec = (
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("EBSLimits", 0),
    ("GCEPDLimits", 0),
    ("NodeVolumeLimits", 0),
    ("AzureDiskLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("SchedulingGates", 0),  # applyFeatureGates: PodSchedulingReadiness (beta, on)
)

# pkg/scheduler/apis/config/v1beta2/default_plugins.go (release-1.27), after applyFeatureGates.
_V1BETA2_POINTS: dict[str, _Spec] = {
    "preEnqueue": (("SchedulingGates", 0),),  # applyFeatureGates: PodSchedulingReadiness
    "queueSort": (("PrioritySort", 0),),
    "preFilter": (
        ("NodeResourcesFit", 0),
        ("NodePorts", 0),
        ("VolumeRestrictions", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("NodeAffinity", 0),
    ),
    "filter": (
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
        ("NodePorts", 0),
        ("NodeResourcesFit", 0),
        ("VolumeRestrictions", 0),
        ("EBSLimits", 0),
        ("GCEPDLimits", 0),
        ("NodeVolumeLimits", 0),
        ("AzureDiskLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
    ),
    "postFilter": (("DefaultPreemption", 0),),
    "preScore": (
        ("InterPodAffinity", 0),
        ("PodTopologySpread", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
    ),
    "score": (
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesFit", 1),
        ("NodeAffinity", 1),
        # Weight is doubled because:
        # - This is a score coming from user preference.
        # - It makes its signal comparable to NodeResourcesFit.LeastAllocated.
        ("PodTopologySpread", 2),
        ("TaintToleration", 1),
    ),
    "reserve": (("VolumeBinding", 0),),
    "preBind": (("VolumeBinding", 0),),
    "bind": (("DefaultBinder", 0),),
}

#: Extension points each version's ``mergePlugins`` merges (others keep the defaults).
_MERGED_POINTS: dict[str, tuple[str, ...]] = {
    V1: (MULTI_POINT, *EXTENSION_POINTS),
    V1BETA3: (MULTI_POINT, *(p for p in EXTENSION_POINTS if p != "preEnqueue")),
    V1BETA2: tuple(p for p in EXTENSION_POINTS if p != "preEnqueue"),
}


def _refs(spec: _Spec) -> list[PluginRef]:
    return [PluginRef(name, weight, default=True) for name, weight in spec]


def _check_version(api_version: str) -> None:
    if api_version not in SUPPORTED_API_VERSIONS:
        supported = ", ".join(f'"{v}"' for v in SUPPORTED_API_VERSIONS)
        raise ValueError(f"unsupported apiVersion {api_version!r}; supported values: {supported}")


def default_plugins(api_version: str = V1) -> Plugins:
    """kube-scheduler's default plugin set for ``api_version`` (a fresh object)."""
    _check_version(api_version)
    plugins = Plugins()
    if api_version == V1:
        plugins.multi_point = PluginSet(_refs(_V1_MULTI_POINT))
    elif api_version == V1BETA3:
        plugins.multi_point = PluginSet(_refs(_V1BETA3_MULTI_POINT))
    else:
        for point, spec in _V1BETA2_POINTS.items():
            plugins.set(point, PluginSet(_refs(spec)))
    return plugins


def merge_plugin_set(
    default_set: PluginSet, custom_set: PluginSet, *, v1beta2: bool = False
) -> PluginSet:
    """``mergePluginSet``: merge a custom set into a default one.

    ``disabled`` names (``"*"`` = all) drop defaults; a default re-listed in ``enabled`` is
    replaced in place (keeps its position, takes the custom weight); the other custom plugins
    follow in their order. Duplicated custom plugins are kept (the framework rejects them).
    With ``v1beta2=True`` the v1beta2 variant is used: default ``disabled`` entries are not
    consulted and the result has no ``disabled`` list.
    """
    disabled: list[PluginRef] = []
    disabled_names: set[str] = set()
    for plugin in custom_set.disabled:
        disabled.append(PluginRef(plugin.name, path=plugin.path))
        disabled_names.add(plugin.name)
    if not v1beta2:
        # With MultiPoint, the default registry may itself disable plugins at a point.
        for plugin in default_set.disabled:
            disabled.append(PluginRef(plugin.name, path=plugin.path))
            disabled_names.add(plugin.name)

    # Later duplicates win, as with Go's map assignment.
    custom_by_name: dict[str, tuple[int, PluginRef]] = {
        plugin.name: (index, plugin) for index, plugin in enumerate(custom_set.enabled)
    }
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for default_plugin in default_set.enabled:
            if default_plugin.name in disabled_names:
                continue
            chosen = default_plugin
            if default_plugin.name in custom_by_name:
                index, chosen = custom_by_name[default_plugin.name]
                log.debug("Default plugin is explicitly re-configured; overriding: %s", chosen.name)
                replaced.add(index)
            enabled.append(_copy(chosen))
    for index, plugin in enumerate(custom_set.enabled):
        if index not in replaced:
            enabled.append(_copy(plugin))
    return PluginSet(enabled, [] if v1beta2 else disabled)


def merge_plugins(defaults: Plugins, custom: Plugins | None, api_version: str = V1) -> Plugins:
    """``mergePlugins`` of ``api_version``: ``custom`` merged into ``defaults`` (a new object)."""
    _check_version(api_version)
    result = copy_plugins(defaults)
    if custom is None:
        return result
    for point in _MERGED_POINTS[api_version]:
        result.set(
            point,
            merge_plugin_set(
                defaults.get(point), custom.get(point), v1beta2=api_version == V1BETA2
            ),
        )
    return result


def copy_plugins(plugins: Plugins) -> Plugins:
    out = Plugins()
    for point, plugin_set in plugins.items():
        out.set(
            point,
            PluginSet(
                [_copy(p) for p in plugin_set.enabled], [_copy(p) for p in plugin_set.disabled]
            ),
        )
    return out


def _copy(plugin: PluginRef) -> PluginRef:
    return PluginRef(plugin.name, plugin.weight, path=plugin.path, default=plugin.default)
