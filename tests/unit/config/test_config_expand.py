"""expand_plugins: NewFramework's per-point plugin lists, transcribed from kube-scheduler's tests.

Source: kubernetes/kubernetes pkg/scheduler/framework/runtime/framework_test.go —
TestNewFrameworkMultiPointExpansion, TestNewFrameworkErrors, TestInitFrameworkWithScorePlugins.
The test registry there is rebuilt as ``REGISTRY``: plugin name -> extension points its Go type
implements.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import pytest
from cfgtest_helpers import DATA, as_pairs, expanded, plugins, ps

from kubesched.runtime.config import (
    ConfigError,
    Plugins,
    Profile,
    expand_plugins,
    load_config,
    load_config_data,
)

ALL_BUT_PRE_ENQUEUE = (
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
# framework_test.go's registry.
REGISTRY: dict[str, frozenset[str]] = {
    "score-with-normalize-plugin-1": frozenset({"score"}),  # TestScoreWithNormalizePlugin
    "score-with-normalize-plugin-2": frozenset({"score"}),
    "score-plugin-1": frozenset({"preScore", "score"}),  # TestScorePlugin
    "score-plugin-2": frozenset({"preScore", "score"}),
    "plugin-not-implementing-score": frozenset(),
    "duplicate-plugin": frozenset({"preFilter"}),
    "test-plugin": frozenset(ALL_BUT_PRE_ENQUEUE),  # TestPlugin implements all but PreEnqueue
    "no-op-queue-sort-plugin": frozenset({"queueSort"}),
    "bind-plugin": frozenset({"bind"}),
    "test-close-error-plugin": frozenset(),
}
TEST_PLUGIN = "test-plugin"
SCORE_PLUGIN_1 = "score-plugin-1"
SCORE_PLUGIN_2 = "score-plugin-2"
SCORE_WITH_NORMALIZE_1 = "score-with-normalize-plugin-1"
QUEUE_SORT = "no-op-queue-sort-plugin"
BIND = "bind-plugin"


def implements_from(registry: Mapping[str, Collection[str]]):  # type: ignore[no-untyped-def]
    def implements(name: str) -> Collection[str]:
        return registry[name]  # KeyError: not installed

    return implements


def profile_with(p: Plugins, name: str = "") -> Profile:
    return Profile(scheduler_name=name, percentage_of_nodes_to_score=None, plugins=p)


def everywhere(weight: int = 0) -> dict[str, list[tuple[str, int]]]:
    """test-plugin at each point it implements (score carries ``weight``)."""
    return expanded(
        **{
            point: [(TEST_PLUGIN, weight if point == "score" else 0)]
            for point in ALL_BUT_PRE_ENQUEUE
        }
    )


# ---------------------------------------------------------------- TestNewFrameworkMultiPointExpansion
MULTI_POINT_CASES: list[tuple[str, Plugins, dict[str, list[tuple[str, int]]]]] = [
    ("plugin expansion", plugins(multi_point=ps([(TEST_PLUGIN, 5)])), everywhere(5)),
    (
        "disable MultiPoint plugin at some extension points",
        plugins(
            multi_point=ps([TEST_PLUGIN]),
            pre_score=ps([], [TEST_PLUGIN]),
            score=ps([], [TEST_PLUGIN]),
        ),
        {**everywhere(), "preScore": [], "score": []},
    ),
    (
        "Multiple MultiPoint plugins",
        plugins(multi_point=ps([TEST_PLUGIN, SCORE_PLUGIN_1])),
        {
            **everywhere(),
            "preScore": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
            "score": [(TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)],
        },
    ),
    (
        "disable MultiPoint extension",
        plugins(multi_point=ps([TEST_PLUGIN, SCORE_PLUGIN_1]), pre_score=ps([], ["*"])),
        {
            **everywhere(),
            "preScore": [],
            "score": [(TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)],
        },
    ),
    (
        "Reorder MultiPoint plugins (specified extension takes precedence)",
        plugins(
            multi_point=ps([SCORE_WITH_NORMALIZE_1, TEST_PLUGIN, SCORE_PLUGIN_1]),
            score=ps([SCORE_PLUGIN_1, TEST_PLUGIN]),
        ),
        {
            **everywhere(),
            "preScore": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
            "score": [(SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_1, 1)],
        },
    ),
    (
        "Reorder MultiPoint plugins (specified extension only takes precedence when it exists in "
        "MultiPoint)",
        plugins(
            multi_point=ps([TEST_PLUGIN, SCORE_PLUGIN_1]),
            score=ps([SCORE_WITH_NORMALIZE_1, SCORE_PLUGIN_1, TEST_PLUGIN]),
        ),
        {
            **everywhere(),
            "preScore": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
            "score": [(SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_1, 1)],
        },
    ),
    (
        "Override MultiPoint plugins weights",
        plugins(
            multi_point=ps([TEST_PLUGIN, SCORE_PLUGIN_1]),
            score=ps([(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3)]),
        ),
        {
            **everywhere(),
            "preScore": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
            "score": [(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3)],
        },
    ),
    (
        "disable and enable MultiPoint plugins with '*'",
        plugins(multi_point=ps([QUEUE_SORT, BIND, SCORE_PLUGIN_1], ["*"])),
        expanded(
            queueSort=[QUEUE_SORT],
            preScore=[SCORE_PLUGIN_1],
            score=[(SCORE_PLUGIN_1, 1)],
            bind=[BIND],
        ),
    ),
    (
        "disable and enable MultiPoint plugin by name",
        plugins(multi_point=ps([BIND, QUEUE_SORT, SCORE_PLUGIN_1], [SCORE_PLUGIN_1])),
        expanded(
            queueSort=[QUEUE_SORT],
            preScore=[SCORE_PLUGIN_1],
            score=[(SCORE_PLUGIN_1, 1)],
            bind=[BIND],
        ),
    ),
    (
        "Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
        plugins(
            multi_point=ps([TEST_PLUGIN, SCORE_PLUGIN_1]),
            score=ps([(SCORE_PLUGIN_1, 5), (SCORE_PLUGIN_2, 5), (TEST_PLUGIN, 3)]),
        ),
        {
            **everywhere(),
            "preScore": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
            "score": [(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3), (SCORE_PLUGIN_2, 5)],
        },
    ),
]


@pytest.mark.parametrize(
    ("given_plugins", "want"),
    [case[1:] for case in MULTI_POINT_CASES],
    ids=[case[0] for case in MULTI_POINT_CASES],
)
def test_new_framework_multi_point_expansion(
    given_plugins: Plugins, want: dict[str, list[tuple[str, int]]]
) -> None:
    got = expand_plugins(profile_with(given_plugins), implements_from(REGISTRY))
    assert as_pairs(got) == want


def test_new_framework_multi_point_expansion_expect_already_registered_error() -> None:
    """TestNewFrameworkMultiPointExpansion "Expect 'already registered' error"."""
    given_plugins = plugins(multi_point=ps([TEST_PLUGIN, TEST_PLUGIN]))
    with pytest.raises(ConfigError) as info:
        expand_plugins(profile_with(given_plugins), implements_from(REGISTRY))
    assert info.value.field_path == "profiles[0].plugins.multiPoint.enabled[1]"
    assert info.value.message == 'plugin "test-plugin" already registered as "PreFilterPlugin"'


def test_new_framework_errors_duplicate_plugin_name() -> None:
    """TestNewFrameworkErrors "duplicate plugin name"."""
    given_plugins = plugins(pre_filter=ps([("duplicate-plugin", 1), ("duplicate-plugin", 1)]))
    with pytest.raises(ConfigError, match="already registered"):
        expand_plugins(profile_with(given_plugins), implements_from(REGISTRY))


def test_new_framework_errors_duplicate_plugin_config() -> None:
    """TestNewFrameworkErrors "duplicate plugin config": validation rejects it first."""
    with pytest.raises(ConfigError) as info:
        load_config_data(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {"pluginConfig": [{"name": "duplicate-plugin"}, {"name": "duplicate-plugin"}]}
                ],
            },
            source="cfg.yaml",
        )
    assert str(info.value) == (
        'cfg.yaml: profiles[0].pluginConfig[1]: Duplicate value: "duplicate-plugin"'
    )


# ---------------------------------------------------------------- TestInitFrameworkWithScorePlugins
DEFAULT_WEIGHTS = {
    "score-with-normalize-plugin-1": 1,
    "score-with-normalize-plugin-2": 2,
    SCORE_PLUGIN_1: 1,
}


def with_queue_sort_and_bind(score_names: list[str]) -> Plugins:
    """buildScoreConfigDefaultWeights + newFrameworkWithQueueSortAndBind."""
    return plugins(
        queue_sort=ps([QUEUE_SORT]),
        bind=ps([BIND]),
        score=ps([(n, DEFAULT_WEIGHTS.get(n, 0)) for n in score_names]),
    )


@pytest.mark.parametrize(
    ("score_names", "error"),
    [
        (["notExist"], 'ScorePlugin "notExist" does not exist'),
        (
            ["plugin-not-implementing-score"],
            'plugin "plugin-not-implementing-score" does not extend ScorePlugin plugin',
        ),
        ([], None),
        ([SCORE_PLUGIN_1], None),
        (["score-with-normalize-plugin-1"], None),
    ],
    ids=[
        "enabled Score plugin doesn't exist in registry",
        "enabled Score plugin doesn't extend the ScorePlugin interface",
        "enabled Score plugin list is empty",
        "enabled plugin only implements ScorePlugin interface",
        "enabled plugin implements ScoreWithNormalizePlugin interface",
    ],
)
def test_init_framework_with_score_plugins(score_names: list[str], error: str | None) -> None:
    profile = profile_with(with_queue_sort_and_bind(score_names))
    if error is None:
        got = expand_plugins(profile, implements_from(REGISTRY))
        assert [n for n, _ in as_pairs(got)["score"]] == score_names
    else:
        with pytest.raises(ConfigError) as info:
            expand_plugins(profile, implements_from(REGISTRY))
        assert info.value.field_path == "profiles[0].plugins.score.enabled[0]"
        assert info.value.message.startswith(error)


def test_queue_sort_and_bind_required() -> None:
    """NewFramework: exactly one queue sort plugin, at least one bind plugin."""
    with pytest.raises(ConfigError) as info:
        expand_plugins(profile_with(plugins(bind=ps([BIND])), "p"), implements_from(REGISTRY))
    assert info.value.message == (
        'only one queue sort plugin required for profile with scheduler name "p", but got 0'
    )
    with pytest.raises(ConfigError) as info:
        expand_plugins(
            profile_with(plugins(queue_sort=ps([QUEUE_SORT])), "p"), implements_from(REGISTRY)
        )
    assert info.value.field_path == "profiles[0].plugins.bind"
    assert info.value.message == (
        'at least one bind plugin is needed for profile with scheduler name "p"'
    )


# ---------------------------------------------------------------- the default profile
# Extension points of the in-tree plugins of kube-scheduler v1.36.3 (their Go types), as in
# pkg/scheduler/apis/config/testing/defaults/defaults.go ExpandedPluginsV1 of that release
# (1.36: DefaultPreemption is a PreEnqueue plugin, DynamicResources a Score plugin, and
# NodeDeclaredFeatures is new). Its PlacementScore list (NodeResourcesFit, for the alpha
# workload-aware scheduling) has no counterpart: kubesched has no placementScore point.
IN_TREE: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "EBSLimits": frozenset({"preFilter", "filter"}),
    "GCEPDLimits": frozenset({"preFilter", "filter"}),
    "AzureDiskLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DynamicResources": frozenset(
        {"preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve", "preBind"}
    ),
    "DefaultPreemption": frozenset({"preEnqueue", "postFilter"}),
    "NodeDeclaredFeatures": frozenset({"preFilter", "filter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
    # an out-of-tree plugin used by the data files
    "PriorityLabel": frozenset({"filter", "score"}),
}

# The same plugins' types before 1.35 (DefaultPreemption without PreEnqueue, DynamicResources
# without Score), against which the v1beta3/v1beta2 expectations below were written: those
# config versions were last served by kube-scheduler 1.28 and 1.27.
IN_TREE_1_34: dict[str, frozenset[str]] = {
    **IN_TREE,
    "DynamicResources": IN_TREE["DynamicResources"] - {"score"},
    "DefaultPreemption": frozenset({"postFilter"}),
}

DEFAULT_V1_EXPANDED = expanded(
    preEnqueue=["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    queueSort=["PrioritySort"],
    preFilter=[
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeDeclaredFeatures",
    ],
    filter=[
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeDeclaredFeatures",
    ],
    postFilter=["DynamicResources", "DefaultPreemption"],
    preScore=[
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ],
    score=[
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ],
    reserve=["VolumeBinding", "DynamicResources"],
    preBind=["VolumeBinding", "DynamicResources"],
    bind=["DefaultBinder"],
)


def test_default_profile_expands_like_expanded_plugins_v1() -> None:
    cfg = load_config(None)
    got = expand_plugins(cfg.profile("default-scheduler"), implements_from(IN_TREE))
    assert as_pairs(got) == DEFAULT_V1_EXPANDED


def test_v1_file_second_profile_expansion() -> None:
    cfg = load_config(DATA / "v1.yaml")
    got = as_pairs(expand_plugins(cfg.profile("gpu-scheduler"), implements_from(IN_TREE)))
    want_filter = [p for p in DEFAULT_V1_EXPANDED["filter"] if p[0] != "NodePorts"]
    assert got["filter"] == [*want_filter, ("PriorityLabel", 0)]
    want_score = [p for p in DEFAULT_V1_EXPANDED["score"] if p[0] != "ImageLocality"]
    assert got["score"] == [*want_score, ("PriorityLabel", 5)]
    assert got["preFilter"] == DEFAULT_V1_EXPANDED["preFilter"]  # NodePorts disabled at filter only


def test_relisted_default_keeps_position_with_new_weight_multi_point() -> None:
    """reweight.yaml re-lists NodeResourcesFit in multiPoint with weight 7: mergePluginSet
    updates the default in place, so it keeps its position at every point."""
    cfg = load_config(DATA / "reweight.yaml")
    got = as_pairs(expand_plugins(cfg.profiles[0], implements_from(IN_TREE)))
    assert got["score"] == [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 7),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("PriorityLabel", 4),
    ]
    assert got["filter"][:6] == DEFAULT_V1_EXPANDED["filter"][:6]


def test_relisted_default_at_specific_point_goes_first() -> None:
    """In v1, defaults live in multiPoint; re-listing one under ``score`` makes it an override,
    which expandMultiPointPlugins puts first ("specified extension takes precedence")."""
    cfg = load_config_data(
        """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 7
"""
    )
    got = as_pairs(expand_plugins(cfg.profiles[0], implements_from(IN_TREE)))
    assert got["score"][0] == ("NodeResourcesFit", 7)
    assert got["score"][1:] == [
        p for p in DEFAULT_V1_EXPANDED["score"] if p[0] != "NodeResourcesFit"
    ]


def test_v1beta3_file_expansion() -> None:
    cfg = load_config(DATA / "v1beta3.yaml")
    got = as_pairs(expand_plugins(cfg.profiles[0], implements_from(IN_TREE_1_34)))
    assert got["score"] == [
        ("NodeResourcesBalancedAllocation", 4),  # override: first, with its score weight
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("InterPodAffinity", 2),  # PodTopologySpread is disabled at score
        ("ImageLocality", 1),
        ("PriorityLabel", 1),
    ]
    assert got["preEnqueue"] == [("SchedulingGates", 0)]
    assert ("EBSLimits", 0) in got["filter"]


def test_v1beta2_file_expansion_and_relisted_weight() -> None:
    """v1beta2 defaults are per point: TaintToleration re-listed with weight 5 stays in place."""
    cfg = load_config(DATA / "v1beta2.yaml")
    got = as_pairs(expand_plugins(cfg.profiles[0], implements_from(IN_TREE_1_34)))
    assert got["score"] == [
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesFit", 1),
        ("NodeAffinity", 1),
        ("PodTopologySpread", 2),
        ("TaintToleration", 5),
        ("PriorityLabel", 3),
    ]
    assert got["filter"][-1] == ("PriorityLabel", 0)
    assert "EBSLimits" not in [n for n, _ in got["filter"]]


def test_missing_default_plugin_is_reported_as_default() -> None:
    registry = {k: v for k, v in IN_TREE.items() if k != "VolumeZone"}
    with pytest.raises(ConfigError) as info:
        expand_plugins(load_config(None).profiles[0], implements_from(registry))
    assert info.value.field_path == "profiles[0].plugins.multiPoint.enabled[11]"
    assert info.value.message.startswith('PreFilterPlugin "VolumeZone" does not exist')
    assert "default plugin" in info.value.message


def test_user_plugin_at_unimplemented_point_names_the_entry(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cfg.yaml"
    path.write_text(
        """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    permit:
      enabled:
      - name: PriorityLabel
"""
    )
    with pytest.raises(ConfigError) as info:
        expand_plugins(load_config(path).profiles[0], implements_from(IN_TREE))
    assert str(info.value) == (
        f"{path}: profiles[0].plugins.permit.enabled[0]: "
        'plugin "PriorityLabel" does not extend PermitPlugin plugin'
    )


def test_implements_may_use_snake_case_and_sdk_hook_names() -> None:
    registry = {
        "Sorter": ["queue_sort_less", "events_to_register"],
        "Binder": ["bind"],
        "Scorer": ["pre_score", "score", "normalize_score"],
    }
    p = plugins(multi_point=ps(["Sorter", "Binder", ("Scorer", 0)]))
    got = as_pairs(expand_plugins(profile_with(p), implements_from(registry)))
    assert got == expanded(
        queueSort=["Sorter"], bind=["Binder"], preScore=["Scorer"], score=[("Scorer", 1)]
    )


@pytest.mark.parametrize(
    ("weights", "error_at"),
    [
        ([-1, 1], 1),  # after -100, MaxTotalScore - totalPriority wraps around in int64
        ([1, -1], None),  # a negative weight last is accepted (and used) by kube-scheduler
        ([1, 2], None),
    ],
    ids=["negative-then-positive", "positive-then-negative", "positive"],
)
def test_score_weight_overflow_check_in_go_int64(weights: list[int], error_at: int | None) -> None:
    """getValidScoreWeights in int64: kube-scheduler v1.36.3 rejects ImageLocality at weight -1
    followed by another Score plugin with 'score plugins: total score of Score plugins could
    overflow'."""
    score = ps([(SCORE_PLUGIN_1, weights[0]), (SCORE_PLUGIN_2, weights[1])])
    profile = profile_with(with_queue_sort_and_bind([]))
    profile.plugins.score = score
    for i, ref in enumerate(score.enabled):
        ref.path = f"profiles[0].plugins.score.enabled[{i}]"
    if error_at is None:
        got = expand_plugins(profile, implements_from(REGISTRY))
        assert as_pairs(got)["score"] == [(SCORE_PLUGIN_1, weights[0]), (SCORE_PLUGIN_2, weights[1])]
    else:
        with pytest.raises(ConfigError) as info:
            expand_plugins(profile, implements_from(REGISTRY))
        assert (info.value.field_path, info.value.message) == (
            f"profiles[0].plugins.score.enabled[{error_at}]",
            "score plugins: total score of Score plugins could overflow",
        )
