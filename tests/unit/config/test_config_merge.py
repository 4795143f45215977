"""mergePlugins / default plugin sets, transcribed from kube-scheduler's own tests.

Sources (kubernetes/kubernetes):
* pkg/scheduler/apis/config/v1/default_plugins_test.go — TestApplyFeatureGates, TestMergePlugins
* pkg/scheduler/apis/config/v1beta2/default_plugins_test.go — TestApplyFeatureGates, TestMergePlugins
"""

from __future__ import annotations

import pytest
from cfgtest_helpers import named_weights, plugins, ps
from hypothesis import given
from hypothesis import strategies as st

from kubesched.runtime.config import PluginRef, Plugins, PluginSet, default_plugins
from kubesched.runtime.config._types import V1, V1BETA2, V1BETA3
from kubesched.runtime.config.defaults import merge_plugin_set, merge_plugins

# --------------------------------------------------------------------------- default sets


def test_apply_feature_gates_v1_default_gates_of_1_36() -> None:
    """v1 TestApplyFeatureGates "Feature gate NodeDeclaredFeatures enabled" (v1.36.3), which is
    the list with v1.36's default gates (PluginsV1 of testing/defaults/defaults.go).

    DynamicResourceAllocation is GA (on), so applyFeatureGates inserts DynamicResources with
    weight 2 before DefaultPreemption; NodeDeclaredFeatures is beta (on), so it is appended.
    GangScheduling and TopologyAwareWorkloadScheduling are alpha (off): their cases, and the
    "DynamicResourceAllocation disabled" and "NodeDeclaredFeatures disabled" ones, need gates
    kubesched's configuration does not have.
    """
    want = plugins(
        multi_point=ps(
            [
                "SchedulingGates",
                "PrioritySort",
                "NodeUnschedulable",
                "NodeName",
                ("TaintToleration", 3),
                ("NodeAffinity", 2),
                "NodePorts",
                ("NodeResourcesFit", 1),
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                ("DynamicResources", 2),
                "DefaultPreemption",
                ("NodeResourcesBalancedAllocation", 1),
                ("ImageLocality", 1),
                "DefaultBinder",
                "NodeDeclaredFeatures",
            ]
        )
    )
    assert default_plugins() == want
    assert default_plugins(V1) == want


def test_apply_feature_gates_v1beta3_release_1_28() -> None:
    """v1beta3 getDefaultPlugins + applyFeatureGates (PodSchedulingReadiness on in 1.28)."""
    got = default_plugins(V1BETA3)
    assert named_weights(got.multi_point.enabled) == [
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
        ("SchedulingGates", 0),
    ]
    assert all(not s.enabled for p, s in got.items() if p != "multiPoint")


def test_apply_feature_gates_v1beta2_feature_gate_pod_scheduling_readiness_enabled() -> None:
    """v1beta2 TestApplyFeatureGates "Feature gate PodSchedulingReadiness enabled" (on in 1.27),
    with VolumeZone at preFilter (VolumeZone gained PreFilter in 1.27, kubernetes#114149)."""
    want = plugins(
        pre_enqueue=ps(["SchedulingGates"]),
        queue_sort=ps(["PrioritySort"]),
        pre_filter=ps(
            [
                "NodeResourcesFit",
                "NodePorts",
                "VolumeRestrictions",
                "PodTopologySpread",
                "InterPodAffinity",
                "VolumeBinding",
                "VolumeZone",
                "NodeAffinity",
            ]
        ),
        filter=ps(
            [
                "NodeUnschedulable",
                "NodeName",
                "TaintToleration",
                "NodeAffinity",
                "NodePorts",
                "NodeResourcesFit",
                "VolumeRestrictions",
                "EBSLimits",
                "GCEPDLimits",
                "NodeVolumeLimits",
                "AzureDiskLimits",
                "VolumeBinding",
                "VolumeZone",
                "PodTopologySpread",
                "InterPodAffinity",
            ]
        ),
        post_filter=ps(["DefaultPreemption"]),
        pre_score=ps(["InterPodAffinity", "PodTopologySpread", "TaintToleration", "NodeAffinity"]),
        score=ps(
            [
                ("NodeResourcesBalancedAllocation", 1),
                ("ImageLocality", 1),
                ("InterPodAffinity", 1),
                ("NodeResourcesFit", 1),
                ("NodeAffinity", 1),
                ("PodTopologySpread", 2),
                ("TaintToleration", 1),
            ]
        ),
        reserve=ps(["VolumeBinding"]),
        pre_bind=ps(["VolumeBinding"]),
        bind=ps(["DefaultBinder"]),
    )
    assert default_plugins(V1BETA2) == want


def test_default_plugins_unknown_version() -> None:
    with pytest.raises(ValueError, match="supported values"):
        default_plugins("kubescheduler.config.k8s.io/v1alpha1")


def test_default_plugins_are_fresh_objects() -> None:
    a = default_plugins()
    a.multi_point.enabled.clear()
    assert default_plugins().multi_point.enabled


# --------------------------------------------------------------------------- TestMergePlugins (v1)

V1_MERGE_CASES: list[tuple[str, Plugins | None, Plugins, Plugins]] = [
    # (name, customPlugins, defaultPlugins, expectedPlugins)
    (
        "AppendCustomPlugin",
        plugins(filter=ps(["CustomPlugin"])),
        plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])),
    ),
    (
        "InsertAfterDefaultPlugins2",
        plugins(filter=ps(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])),
        plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        plugins(
            filter=ps(["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])
        ),
    ),
    (
        "InsertBeforeAllPlugins",
        plugins(filter=ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])),
        plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        plugins(filter=ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])),
    ),
    (
        "ReorderDefaultPlugins",
        plugins(filter=ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])),
        plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        plugins(filter=ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])),
    ),
    (
        "ApplyNilCustomPlugin",
        None,
        plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        plugins(filter=ps(["DefaultPlugin1", "DefaultPlugin2"])),
    ),
    (
        "CustomPluginOverrideDefaultPlugin",
        plugins(filter=ps([("Plugin1", 2), ("Plugin3", 3)])),
        plugins(filter=ps(["Plugin1", "Plugin2", "Plugin3"])),
        plugins(filter=ps([("Plugin1", 2), "Plugin2", ("Plugin3", 3)])),
    ),
    (
        "OrderPreserveAfterOverride",
        plugins(filter=ps([("Plugin2", 2), ("Plugin1", 1)])),
        plugins(filter=ps(["Plugin1", "Plugin2", "Plugin3"])),
        plugins(filter=ps([("Plugin1", 1), ("Plugin2", 2), "Plugin3"])),
    ),
    (
        "RepeatedCustomPlugin",
        plugins(filter=ps(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)])),
        plugins(filter=ps(["Plugin1", "Plugin2", "Plugin3"])),
        plugins(filter=ps(["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)])),
    ),
    (
        "Append custom MultiPoint plugin",
        plugins(multi_point=ps(["CustomPlugin"])),
        plugins(multi_point=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        plugins(multi_point=ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])),
    ),
    (
        "Append disabled Multipoint plugins",
        plugins(
            multi_point=ps(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            score=ps([], ["CustomPlugin2"]),
        ),
        plugins(multi_point=ps(["DefaultPlugin1", "DefaultPlugin2"])),
        plugins(
            multi_point=ps(["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            score=ps([], ["CustomPlugin2"]),
        ),
    ),
    (
        "override default MultiPoint plugins with custom value",
        plugins(multi_point=ps([("DefaultPlugin", 5)])),
        plugins(multi_point=ps(["DefaultPlugin"])),
        plugins(multi_point=ps([("DefaultPlugin", 5)])),
    ),
    (
        "disabled MultiPoint plugin in default set",
        plugins(multi_point=ps(["CustomPlugin"])),
        plugins(multi_point=ps(["DefaultPlugin"], ["DefaultPlugin2"])),
        plugins(multi_point=ps(["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"])),
    ),
    (
        "disabled MultiPoint plugin in default set for specific extension point",
        plugins(multi_point=ps(["CustomPlugin"])),
        plugins(multi_point=ps(["DefaultPlugin"]), score=ps([], ["DefaultPlugin2"])),
        plugins(
            multi_point=ps(["DefaultPlugin", "CustomPlugin"]), score=ps([], ["DefaultPlugin2"])
        ),
    ),
    (
        "multipoint with only disabled gets merged",
        plugins(multi_point=ps([], ["DefaultPlugin"])),
        plugins(multi_point=ps(["DefaultPlugin"])),
        plugins(multi_point=ps([], ["DefaultPlugin"])),
    ),
]


@pytest.mark.parametrize(
    ("custom", "defaults", "expected"),
    [case[1:] for case in V1_MERGE_CASES],
    ids=[case[0] for case in V1_MERGE_CASES],
)
def test_merge_plugins_v1(custom: Plugins | None, defaults: Plugins, expected: Plugins) -> None:
    """v1 TestMergePlugins (pkg/scheduler/apis/config/v1/default_plugins_test.go)."""
    assert merge_plugins(defaults, custom, V1) == expected


def _without_disabled(p: Plugins) -> Plugins:
    out = Plugins()
    for point, plugin_set in p.items():
        out.set(point, PluginSet(plugin_set.enabled, []))
    return out


# The v1beta2 test has the eight filter-only cases; its mergePluginSet returns
# PluginSet{Enabled: ...}, so the expected sets have no disabled lists.
V1BETA2_MERGE_CASES = [
    (name, custom, defaults, _without_disabled(expected))
    for name, custom, defaults, expected in V1_MERGE_CASES[:8]
]


@pytest.mark.parametrize(
    ("custom", "defaults", "expected"),
    [case[1:] for case in V1BETA2_MERGE_CASES],
    ids=[case[0] for case in V1BETA2_MERGE_CASES],
)
def test_merge_plugins_v1beta2(
    custom: Plugins | None, defaults: Plugins, expected: Plugins
) -> None:
    """v1beta2 TestMergePlugins (pkg/scheduler/apis/config/v1beta2/default_plugins_test.go)."""
    assert merge_plugins(defaults, custom, V1BETA2) == expected


def test_merge_plugins_v1beta3_and_v1beta2_ignore_pre_enqueue() -> None:
    """v1beta3/v1beta2 mergePlugins have no PreEnqueue line: a custom preEnqueue is dropped."""
    custom = plugins(pre_enqueue=ps(["MyGate"]))
    assert merge_plugins(default_plugins(V1BETA3), custom, V1BETA3).pre_enqueue == ps()
    assert merge_plugins(default_plugins(V1BETA2), custom, V1BETA2).pre_enqueue == ps(
        ["SchedulingGates"]
    )
    assert merge_plugins(default_plugins(V1), custom, V1).pre_enqueue == ps(["MyGate"])


# --------------------------------------------------------------------------- properties

_names = st.sampled_from(["A", "B", "C", "D", "E", "F"])
_sets = st.builds(
    lambda enabled, disabled: PluginSet(
        [PluginRef(n, w) for n, w in enabled], [PluginRef(n) for n in disabled]
    ),
    st.lists(st.tuples(_names, st.integers(0, 5)), max_size=6),
    st.lists(st.one_of(_names, st.just("*")), max_size=3),
)


@given(_sets, _sets)
def test_merge_plugin_set_properties(default_set: PluginSet, custom_set: PluginSet) -> None:
    merged = merge_plugin_set(default_set, custom_set)
    disabled = {p.name for p in custom_set.disabled} | {p.name for p in default_set.disabled}
    # every custom plugin is in the result, exactly as often as it was written
    # (a re-listed default takes the last custom entry's place; earlier duplicates follow)
    custom_names = [p.name for p in custom_set.enabled]
    for name in set(custom_names):
        kept_defaults = [p for p in default_set.enabled if p.name == name and name not in disabled]
        expected = custom_names.count(name) + (
            max(len(kept_defaults) - 1, 0) if "*" not in disabled else 0
        )
        assert [p.name for p in merged.enabled].count(name) == expected
    # disabled defaults never survive unless re-enabled by the custom set
    for p in merged.enabled:
        assert p.name in custom_names or ("*" not in disabled and p.name not in disabled)
    # with "*" the result is exactly the custom enabled list
    if "*" in disabled:
        assert merged.enabled == custom_set.enabled
    assert [p.name for p in merged.disabled] == [
        p.name for p in (*custom_set.disabled, *default_set.disabled)
    ]
