"""Loading the three API versions, and kube-scheduler's defaulting.

Defaulting cases are transcribed from kubernetes/kubernetes
pkg/scheduler/apis/config/v1/defaults_test.go TestSchedulerDefaults (with release-1.34's
default plugins); each test names its case.
"""

from __future__ import annotations

from typing import Any

import pytest
from cfgtest_helpers import DATA, named_weights, names, plugins, ps

from kubesched.runtime.config import (
    ClientConnection,
    ConfigError,
    LeaderElection,
    PluginRef,
    SchedulerConfiguration,
    default_plugins,
    load_config,
    load_config_data,
)
from kubesched.runtime.config._types import V1, V1BETA2, V1BETA3

HEAD = {"apiVersion": V1, "kind": "KubeSchedulerConfiguration"}


def load(**fields: Any) -> SchedulerConfiguration:
    return load_config_data({**HEAD, **fields})


# ---------------------------------------------------------------- the three versions


def test_load_v1_file() -> None:
    cfg = load_config(DATA / "v1.yaml")
    assert cfg.api_version == V1
    assert cfg.source == str(DATA / "v1.yaml")
    assert cfg.parallelism == 8
    assert cfg.percentage_of_nodes_to_score == 30
    assert cfg.pod_initial_backoff_seconds == 2
    assert cfg.pod_max_backoff_seconds == 20
    assert cfg.leader_election == LeaderElection(
        leader_elect=False, lease_duration=90.0, renew_deadline=0.5, retry_period=2.0
    )
    assert cfg.client_connection == ClientConnection(
        kubeconfig="/etc/kubernetes/scheduler.conf", qps=100.0, burst=200
    )
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "gpu-scheduler"]
    assert [p.index for p in cfg.profiles] == [0, 1]

    default = cfg.profile("default-scheduler")
    assert default.plugins == default_plugins(V1)
    assert default.percentage_of_nodes_to_score is None
    assert default.plugin_config == {}

    gpu = cfg.profile("gpu-scheduler")
    assert gpu.percentage_of_nodes_to_score == 100
    assert gpu.plugins.multi_point.enabled == [
        *default_plugins(V1).multi_point.enabled,
        PluginRef("PriorityLabel", 5),
    ]
    assert gpu.plugins.filter == ps([], ["NodePorts"])
    assert gpu.plugins.get("score") == ps([], ["ImageLocality"])
    assert gpu.plugin_config == {
        "PriorityLabel": {"label": "team"},
        "NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}},
    }
    assert gpu.plugin_config_kinds == {"PriorityLabel": "PriorityLabelArgs"}
    # entries read from the file remember where they were written
    assert gpu.plugins.multi_point.enabled[-1].path == "profiles[1].plugins.multiPoint.enabled[0]"
    assert gpu.plugins.multi_point.enabled[0].path is None


def test_load_v1beta3_file() -> None:
    cfg = load_config(DATA / "v1beta3.yaml")
    assert cfg.api_version == V1BETA3
    prof = cfg.profiles[0]
    assert named_weights(prof.plugins.multi_point.enabled)[-2:] == [
        ("SchedulingGates", 0),
        ("PriorityLabel", 0),
    ]
    assert prof.plugins.score == ps([("NodeResourcesBalancedAllocation", 4)], ["PodTopologySpread"])
    assert prof.percentage_of_nodes_to_score is None
    assert cfg.health_bind_address == ""


def test_load_v1beta2_file() -> None:
    cfg = load_config(DATA / "v1beta2.yaml")
    assert cfg.api_version == V1BETA2
    assert cfg.health_bind_address == "0.0.0.0:0"
    assert cfg.metrics_bind_address == "0.0.0.0:0"
    prof = cfg.profiles[0]
    assert prof.plugins.multi_point == ps()
    assert prof.plugins.pre_enqueue == ps(["SchedulingGates"])
    assert names(prof.plugins.filter.enabled) == [
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
        "PriorityLabel",
    ]
    assert prof.plugins.filter.disabled == []  # v1beta2's mergePluginSet drops them
    # TaintToleration re-listed with weight 5: keeps its place, takes the weight
    assert named_weights(prof.plugins.score.enabled) == [
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesFit", 1),
        ("NodeAffinity", 1),
        ("PodTopologySpread", 2),
        ("TaintToleration", 5),
        ("PriorityLabel", 3),
    ]


def test_relisted_default_with_new_weight_keeps_its_position() -> None:
    cfg = load_config(DATA / "reweight.yaml")
    enabled = named_weights(cfg.profiles[0].plugins.multi_point.enabled)
    defaults = named_weights(default_plugins().multi_point.enabled)
    position = [n for n, _ in defaults].index("NodeResourcesFit")
    assert enabled[position] == ("NodeResourcesFit", 7)
    assert enabled[:position] == defaults[:position]
    assert enabled[position + 1 : -1] == defaults[position + 1 :]
    assert enabled[-1] == ("PriorityLabel", 4)


def test_v1beta3_pre_enqueue_is_ignored_like_kube_scheduler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cfg = load_config_data(
        {
            "apiVersion": V1BETA3,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"preEnqueue": {"enabled": [{"name": "MyGate"}]}}}],
        }
    )
    assert cfg.profiles[0].plugins.pre_enqueue == ps()
    assert "preEnqueue is ignored" in caplog.text


# ---------------------------------------------------------------- TestSchedulerDefaults


def test_scheduler_defaults_empty_config() -> None:
    """TestSchedulerDefaults "empty config"."""
    cfg = load()
    assert cfg == SchedulerConfiguration(
        api_version=V1,
        source=None,
        profiles=cfg.profiles,
        percentage_of_nodes_to_score=None,  # config.DefaultPercentageOfNodesToScore == 0
        pod_initial_backoff_seconds=1,
        pod_max_backoff_seconds=10,
        parallelism=16,
        leader_election=LeaderElection(
            leader_elect=True,
            lease_duration=15,
            renew_deadline=10,
            retry_period=2,
            resource_lock="leases",
            resource_name="kube-scheduler",
            resource_namespace="kube-system",
        ),
        client_connection=ClientConnection(
            qps=50, burst=100, content_type="application/vnd.kubernetes.protobuf"
        ),
        enable_profiling=True,
        enable_contention_profiling=True,
    )
    assert len(cfg.profiles) == 1
    assert cfg.profiles[0].scheduler_name == "default-scheduler"
    assert cfg.profiles[0].plugins == default_plugins()
    assert load_config(None) == cfg


def test_scheduler_defaults_no_scheduler_name() -> None:
    """TestSchedulerDefaults "no scheduler name"."""
    cfg = load(profiles=[{}])
    assert cfg.profiles[0].scheduler_name == "default-scheduler"
    assert cfg.profiles[0].plugins == default_plugins()


def test_scheduler_defaults_two_profiles() -> None:
    """TestSchedulerDefaults "two profiles": the name is defaulted only for a single profile,
    so the nameless first profile then fails validation."""
    profiles: list[dict[str, Any]] = [
        {"pluginConfig": [{"name": "FooPlugin"}]},
        {
            "schedulerName": "custom-scheduler",
            "plugins": {
                "bind": {
                    "enabled": [{"name": "BarPlugin"}],
                    "disabled": [{"name": "DefaultBinder"}],
                }
            },
        },
    ]
    with pytest.raises(ConfigError) as info:
        load(profiles=profiles)
    assert str(info.value) == "profiles[0].schedulerName: Required value"

    cfg = load(profiles=[{**profiles[0], "schedulerName": "first"}, profiles[1]])
    assert cfg.profiles[0].plugins == default_plugins()
    assert cfg.profiles[0].plugin_config == {"FooPlugin": {}}
    assert cfg.profiles[1].plugins == plugins(
        multi_point=default_plugins().multi_point,
        bind=ps(["BarPlugin"], ["DefaultBinder"]),
    )


@pytest.mark.parametrize(
    ("case", "fields", "check"),
    [
        ("Prallelism with no port", {"parallelism": 16}, lambda c: c.parallelism == 16),
        ("set non default parallelism", {"parallelism": 8}, lambda c: c.parallelism == 8),
        (
            "set non default delayCacheUntilActive",
            {"delayCacheUntilActive": True},
            lambda c: c.delay_cache_until_active is True,
        ),
        (
            "set non default global percentageOfNodesToScore",
            {"percentageOfNodesToScore": 50},
            lambda c: (
                c.percentage_of_nodes_to_score == 50
                and c.profiles[0].percentage_of_nodes_to_score is None
            ),
        ),
        (
            "set non default profile percentageOfNodesToScore",
            {"profiles": [{"percentageOfNodesToScore": 50}]},
            lambda c: (
                c.percentage_of_nodes_to_score is None
                and c.profiles[0].percentage_of_nodes_to_score == 50
            ),
        ),
        (
            "set non default global and profile percentageOfNodesToScore",
            {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
            lambda c: (
                c.percentage_of_nodes_to_score == 10
                and c.profiles[0].percentage_of_nodes_to_score == 50
            ),
        ),
        (
            "unknown plugin config",
            {"profiles": [{"pluginConfig": [{"name": "Foo", "args": {"x": 1}}]}]},
            lambda c: c.profiles[0].plugin_config == {"Foo": {"x": 1}},
        ),
    ],
)
def test_scheduler_defaults(case: str, fields: dict[str, Any], check: Any) -> None:
    """TestSchedulerDefaults cases (named by ``case``)."""
    cfg = load(**fields)
    assert check(cfg), case
    assert cfg.profiles[0].plugins == default_plugins()


def test_leader_election_and_client_connection_zero_values_are_defaulted() -> None:
    """RecommendedDefaultLeaderElectionConfiguration: zero durations take the defaults; the
    scheduler's QPS/burst of 0 mean 50/100."""
    cfg = load(
        leaderElection={"leaseDuration": "0s", "renewDeadline": "0", "resourceLock": ""},
        clientConnection={"qps": 0, "burst": 0, "contentType": ""},
    )
    assert cfg.leader_election == LeaderElection()
    assert cfg.client_connection == ClientConnection()


def test_contention_profiling_follows_profiling() -> None:
    cfg = load(enableProfiling=False)
    assert (cfg.enable_profiling, cfg.enable_contention_profiling) == (False, False)


def test_null_means_unset() -> None:
    cfg = load_config_data(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "parallelism: null\nprofiles:\nleaderElection: ~\n"
    )
    assert cfg.parallelism == 16
    assert cfg.profiles[0].scheduler_name == "default-scheduler"


def test_yaml_merge_keys_and_anchors() -> None:
    text = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- &base
  schedulerName: a
  plugins:
    score:
      disabled: [{name: ImageLocality}]
- <<: *base
  schedulerName: b
"""
    cfg = load_config_data(text)
    assert cfg.profiles[1].plugins.score == ps([], ["ImageLocality"])
    assert cfg.profiles[1].scheduler_name == "b"


def test_explicit_keys_override_merged_ones_and_aliases_are_shared() -> None:
    text = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- &a
  <<: &b {schedulerName: x, percentageOfNodesToScore: 3}
  schedulerName: a
- <<: *a
  schedulerName: c
- <<: *b
  schedulerName: d
"""
    cfg = load_config_data(text)
    assert [(p.scheduler_name, p.percentage_of_nodes_to_score) for p in cfg.profiles] == [
        ("a", 3),
        ("c", 3),
        ("d", 3),
    ]


def test_plugin_config_for_a_plugin_that_is_not_enabled_is_accepted() -> None:
    """validation.go does not reject it (NewFramework only instantiates needed plugins)."""
    cfg = load(profiles=[{"pluginConfig": [{"name": "NotEnabledAnywhere", "args": {"a": 1}}]}])
    assert cfg.profiles[0].plugin_config == {"NotEnabledAnywhere": {"a": 1}}


def test_negative_score_weight_is_accepted_like_kube_scheduler() -> None:
    """Neither validation.go nor getScoreWeights rejects a negative weight (only overflow)."""
    cfg = load(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "weight": -1}]}}}])
    assert cfg.profiles[0].plugins.score.enabled == [PluginRef("A", -1)]


def test_integral_floats_are_ints_like_json() -> None:
    cfg = load(parallelism=4.0)
    assert cfg.parallelism == 4 and isinstance(cfg.parallelism, int)


def test_timestamps_stay_strings() -> None:
    cfg = load_config_data(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: 2024-01-02\n"
    )
    assert cfg.profiles[0].scheduler_name == "2024-01-02"


def test_profile_lookup_error() -> None:
    with pytest.raises(KeyError, match="default-scheduler"):
        load().profile("nope")


def test_plugins_get_accepts_camel_and_snake_case() -> None:
    p = default_plugins()
    assert p.get("multiPoint") is p.get("multi_point") is p.multi_point
    assert p.get("preFilter") is p.get("pre_filter")
    with pytest.raises(KeyError):
        p.get("normalizeScore")
