"""Error messages: every problem names the file and a kube-scheduler-style field path.

Validation cases follow kubernetes/kubernetes pkg/scheduler/apis/config/validation/validation.go
(ValidateKubeSchedulerConfiguration) and component-base config validation; decoding cases follow
kube-scheduler's strict decoding.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from cfgtest_helpers import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.runtime.config import (
    ConfigError,
    SchedulerConfiguration,
    load_config,
    load_config_data,
    suggest,
)

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def error_of(text: str, **kwargs: Any) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config_data(text, source="cfg.yaml", **kwargs)
    return info.value


def error_of_data(data: dict[str, Any], **kwargs: Any) -> ConfigError:
    body = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    with pytest.raises(ConfigError) as info:
        load_config_data({**body, **data}, source="cfg.yaml", **kwargs)
    return info.value


# ---------------------------------------------------------------- reading the document


def test_malformed_yaml_reports_line_and_column() -> None:
    path = DATA / "malformed.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    err = info.value
    assert err.file == str(path)
    assert err.field_path == "line 5, column 13"
    assert err.line == 5
    assert err.message.startswith("invalid YAML: mapping values are not allowed here")
    assert str(err).startswith(f"{path}: line 5, column 13: invalid YAML: ")


def test_exactly_one_document() -> None:
    path = DATA / "two_documents.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}: line 4: a second YAML document starts here; the file must hold exactly one "
        "KubeSchedulerConfiguration"
    )
    err = error_of("# nothing here\n")
    assert err.message == "the file holds no YAML document; expected one KubeSchedulerConfiguration"
    assert str(err).startswith("cfg.yaml: the file holds")


def test_non_mapping_document() -> None:
    err = error_of("- a\n- b\n")
    assert str(err) == "cfg.yaml: line 1: expected a KubeSchedulerConfiguration mapping, got a list"
    err = error_of("just text\n")
    assert err.message == (
        'expected a KubeSchedulerConfiguration mapping, got the scalar "just text"'
    )


def test_wrong_kind() -> None:
    err = error_of("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n")
    assert str(err) == (
        'cfg.yaml: kind: Unsupported value: "Pod": supported values: "KubeSchedulerConfiguration"'
    )
    assert err.line == 2
    err = error_of("apiVersion: kubescheduler.config.k8s.io/v1\n")
    assert str(err) == 'cfg.yaml: kind: Required value: must be "KubeSchedulerConfiguration"'


def test_unknown_api_version_lists_supported_ones() -> None:
    err = error_of(
        "apiVersion: kubescheduler.config.k8s.io/v1alpha1\nkind: KubeSchedulerConfiguration\n"
    )
    assert str(err) == (
        'cfg.yaml: apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1alpha1": '
        'supported values: "kubescheduler.config.k8s.io/v1", '
        '"kubescheduler.config.k8s.io/v1beta3", "kubescheduler.config.k8s.io/v1beta2"'
    )
    assert error_of("kind: KubeSchedulerConfiguration\n").message.startswith("Required value")


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "missing.yaml")
    assert str(info.value) == (
        f"{tmp_path / 'missing.yaml'}: cannot read configuration file: No such file or directory"
    )


def test_unprintable_character() -> None:
    err = error_of(HEAD + "parallelism: 4\x07\n")
    assert str(err) == (
        "cfg.yaml: line 3, column 15: invalid YAML: unacceptable character #x0007: "
        "special characters are not allowed"
    )


def test_recursive_alias() -> None:
    err = error_of(HEAD + "profiles: &a [*a]\n")
    assert str(err) == "cfg.yaml: profiles[0]: recursive YAML alias: a node contains itself"


def test_duplicate_yaml_key() -> None:
    err = error_of(HEAD + "parallelism: 4\nparallelism: 8\n")
    assert str(err) == 'cfg.yaml: parallelism: duplicate field "parallelism" (first set on line 3)'
    assert err.line == 4


# ---------------------------------------------------------------- strict decoding


def test_unknown_field_with_path_and_suggestion() -> None:
    err = error_of(HEAD + "profils: []\n")
    assert str(err) == 'cfg.yaml: profils: unknown field "profils"; did you mean "profiles"?'
    assert err.line == 3
    err = error_of(HEAD + "profiles:\n- schedulerName: x\n  plugins:\n    filtr: {}\n")
    assert str(err) == (
        'cfg.yaml: profiles[0].plugins.filtr: unknown field "filtr"; did you mean "filter"?'
    )
    assert err.line == 6
    err = error_of(HEAD + "zzz: 1\n")
    assert str(err) == 'cfg.yaml: zzz: unknown field "zzz"'


def test_field_names_are_case_sensitive() -> None:
    err = error_of(HEAD + "Parallelism: 4\n")
    assert err.message == 'unknown field "Parallelism"; did you mean "parallelism"?'


def test_fields_of_other_versions_are_unknown() -> None:
    # multiPoint does not exist in v1beta2; profile-level percentage only in v1.
    err = error_of(
        "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    multiPoint: {}\n"
    )
    assert err.field_path == "profiles[0].plugins.multiPoint"
    err = error_of(
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- percentageOfNodesToScore: 5\n"
    )
    assert err.field_path == "profiles[0].percentageOfNodesToScore"
    err = error_of(HEAD + "healthzBindAddress: 0.0.0.0:0\n")
    assert err.message == 'unknown field "healthzBindAddress"'


@pytest.mark.parametrize(
    ("snippet", "path", "message"),
    [
        (
            'parallelism: "16"',
            "parallelism",
            'Invalid value: "16": expected an integer (int32), got a string',
        ),
        (
            "parallelism: 1.5",
            "parallelism",
            "Invalid value: 1.5: expected an integer (int32), got a number",
        ),
        (
            "parallelism: true",
            "parallelism",
            "Invalid value: true: expected an integer (int32), got a boolean",
        ),
        ("profiles: {}", "profiles", "Invalid value: {...}: expected a list, got a mapping"),
        (
            "profiles:\n- schedulerName: 7",
            "profiles[0].schedulerName",
            "Invalid value: 7: expected a string, got an integer",
        ),
        (
            'leaderElection:\n  leaderElect: "yes please"',
            "leaderElection.leaderElect",
            'Invalid value: "yes please": expected a boolean, got a string',
        ),
        (
            "leaderElection:\n  leaseDuration: 15",
            "leaderElection.leaseDuration",
            'Invalid value: 15: expected a duration string such as "15s", got an integer',
        ),
        (
            'leaderElection:\n  leaseDuration: "15"',
            "leaderElection.leaseDuration",
            'Invalid value: "15": time: missing unit in duration "15"',
        ),
        (
            "leaderElection:\n  retryPeriod: 2sec",
            "leaderElection.retryPeriod",
            'Invalid value: "2sec": time: unknown unit "sec" in duration "2sec"',
        ),
        (
            "clientConnection:\n  qps: fast",
            "clientConnection.qps",
            'Invalid value: "fast": expected a number, got a string',
        ),
        (
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: A\n        weight: 3000000000",
            "profiles[0].plugins.score.enabled[0].weight",
            "Invalid value: 3000000000: out of range for int32 [-2147483648, 2147483647]",
        ),
        (
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - weight: 3",
            "profiles[0].plugins.score.enabled[0].name",
            "Required value: the plugin's name",
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: A\n    args: [1, 2]",
            "profiles[0].pluginConfig[0].args",
            "Invalid value: [...]: expected a mapping of plugin arguments, got a list",
        ),
        (
            "podMaxBackoffSeconds: 1e400",
            "podMaxBackoffSeconds",
            'Invalid value: "1e400": expected an integer (int64), got a string',
        ),
    ],
)
def test_wrong_types(snippet: str, path: str, message: str) -> None:
    err = error_of(HEAD + snippet + "\n")
    assert (err.field_path, err.message) == (path, message)
    assert str(err) == f"cfg.yaml: {path}: {message}"


# ---------------------------------------------------------------- validation.go


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        (
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "profiles[1].schedulerName",
            # kube-scheduler v1.36.3: 'profiles[1].schedulerName: Duplicate value: {}'; kubesched
            # adds the name in parentheses
            'Duplicate value: {} ("a" is already profiles[0].schedulerName)',
        ),
        ({"profiles": [{"schedulerName": ""}]}, "profiles[0].schedulerName", "Required value"),
        (
            {"profiles": [{"schedulerName": "a"}, {}]},
            "profiles[1].schedulerName",
            "Required value",
        ),
        (
            {"percentageOfNodesToScore": 101},
            "percentageOfNodesToScore",
            "Invalid value: 101: not in valid range [0-100]",
        ),
        (
            {"profiles": [{"percentageOfNodesToScore": -1}]},
            "profiles[0].percentageOfNodesToScore",
            "Invalid value: -1: not in valid range [0-100]",
        ),
        (
            {"podInitialBackoffSeconds": 0},
            "podInitialBackoffSeconds",
            "Invalid value: 0: must be greater than 0",
        ),
        (
            {"podInitialBackoffSeconds": 30},
            "podMaxBackoffSeconds",
            "Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds",
        ),
        (
            {"parallelism": 0},
            "parallelism",
            "Invalid value: 0: should be an integer value greater than zero",
        ),
        (
            {"clientConnection": {"burst": -1}},
            "clientConnection.burst",
            "Invalid value: -1: must be non-negative",
        ),
        (
            {"leaderElection": {"leaseDuration": "-1s"}},
            "leaderElection.leaseDuration",
            'Invalid value: "-1s": must be greater than zero',  # quoted, as kube-scheduler prints it
        ),
        (
            {"leaderElection": {"retryPeriod": "-500ms"}},
            "leaderElection.retryPeriod",
            'Invalid value: "-500ms": must be greater than zero',
        ),
        (
            {"leaderElection": {"leaseDuration": "5s"}},
            "leaderElection.leaseDuration",
            # kube-scheduler v1.36.3 prints RenewDeadline as the value: 'Invalid value: "10s": must
            # be greater than `RenewDeadline`'; kubesched adds the leaseDuration
            'Invalid value: "10s": must be greater than `RenewDeadline` (leaseDuration is 5s)',
        ),
        (
            {"leaderElection": {"resourceLock": "endpoints"}},
            "leaderElection.resourceLock",
            'Invalid value: "endpoints": resourceLock value must be "leases"',
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "Foo"}, {"name": "Bar"}, {"name": "Foo"}]}]},
            "profiles[0].pluginConfig[2]",
            'Duplicate value: "Foo"',
        ),
        (
            {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]},
            "profiles[0].plugins.filter.enabled[0]",
            # "v1": kube-scheduler v1.36.3's table keys on core/v1's SchemeGroupVersion
            'Invalid value: "EBSLimits": was invalid in version "v1" '
            '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "GCEPDLimits"}]}]},
            "profiles[0].pluginConfig[0]",
            'Invalid value: "GCEPDLimits": was invalid in version "v1" '
            '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        ),
        (
            {"profiles": [{"plugins": {"queueSort": {"enabled": [{"name": "A"}, {"name": "B"}]}}}]},
            "profiles[0].plugins.queueSort.Enabled",  # sic, kube-scheduler v1.36.3's path
            "Invalid value: 2: only one queue sort plugin can be enabled",
        ),
        (
            {
                "profiles": [
                    {
                        "schedulerName": "a",
                        "plugins": {
                            "queueSort": {"enabled": [{"name": "Q"}], "disabled": [{"name": "*"}]}
                        },
                    },
                    {"schedulerName": "b"},
                ]
            },
            "profiles[1].plugins.queueSort",
            # the value as kube-scheduler v1.36.3 prints it (json.Marshal of config.PluginSet)
            'Invalid value: {"Enabled":null,"Disabled":null}: must be the same for all profiles '
            '(profiles[0] has {"Enabled":[{"Name":"Q","Weight":0}],"Disabled":[{"Name":"*","Weight":0}]})',
        ),
        (
            {
                "profiles": [
                    {
                        "schedulerName": "a",
                        "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}},
                        "pluginConfig": [{"name": "Q", "args": {"x": 1}}],
                    },
                    {
                        "schedulerName": "b",
                        "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}},
                        "pluginConfig": [{"name": "Q", "args": {"x": 2}}],
                    },
                ]
            },
            "profiles[1].pluginConfig.args",  # sic, kube-scheduler v1.36.3's path and value
            'Invalid value: {"x":2}: queueSort must be the same for all profiles',
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "NodeResourcesFit", "args": {"kind": "InterPodAffinityArgs"}}
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[0].args.kind",
            "args for plugin NodeResourcesFit were not of type "
            "NodeResourcesFitArgs.kubescheduler.config.k8s.io, got "
            "InterPodAffinityArgs.kubescheduler.config.k8s.io",
        ),
    ],
)
def test_validation(data: dict[str, Any], path: str, message: str) -> None:
    err = error_of_data(data)
    assert (err.field_path, err.message) == (path, message)


def test_leader_election_not_validated_when_disabled() -> None:
    cfg = load_config_data(
        HEAD + "leaderElection:\n  leaderElect: false\n  leaseDuration: 1s\n  resourceLock: x\n"
    )
    assert cfg.leader_election.leader_elect is False


def test_v1beta2_bind_addresses() -> None:
    v1beta2 = "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n"
    err = error_of(v1beta2 + "healthzBindAddress: 0.0.0.0:10251\n")
    assert str(err) == (
        'cfg.yaml: healthzBindAddress: Invalid value: "0.0.0.0:10251": '
        "must be empty or with an explicit 0 port"
    )
    err = error_of(v1beta2 + "metricsBindAddress: localhost\n")
    assert err.message == 'Invalid value: "localhost": address localhost: missing port in address'
    cfg = load_config_data(v1beta2 + "metricsBindAddress: '[::]:0'\n")
    assert cfg.metrics_bind_address == "[::]:0"


def test_v1beta2_invalid_plugins() -> None:
    err = error_of(
        "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourcesMostAllocated\n"
    )
    # the merged score list holds the seven defaults first; the path is that of the entry
    assert err.field_path == "profiles[0].plugins.score.enabled[0]"
    assert err.message.startswith(
        'Invalid value: "NodeResourcesMostAllocated": was invalid in version '
        '"kubescheduler.config.k8s.io/v1beta2"'
    )


def test_extenders_are_rejected() -> None:
    path = DATA / "extenders.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field_path == "extenders"
    assert info.value.message.startswith(
        "Forbidden: scheduler extenders are not supported by kubesched (1 configured)"
    )
    assert load_config_data(HEAD + "extenders: []\n").profiles


def test_all_errors_are_collected() -> None:
    err = error_of_data({"parallelism": 0, "percentageOfNodesToScore": 200})
    assert [e.field_path for e in err.errors] == ["parallelism", "percentageOfNodesToScore"]
    assert err.errors[0] is err
    assert str(err.errors[1]) == (
        "cfg.yaml: percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]"
    )


def test_error_without_file() -> None:
    with pytest.raises(ConfigError) as info:
        load_config_data(HEAD + "parallelism: -1\n")
    assert info.value.file is None
    assert str(info.value) == (
        "parallelism: Invalid value: -1: should be an integer value greater than zero"
    )


def test_error_line_of_validation_error() -> None:
    err = error_of(HEAD + "profiles:\n- schedulerName: a\n- schedulerName: a\n")
    assert err.line == 5


def test_config_error_pickles() -> None:
    err = ConfigError("f.yaml", "a.b", "boom", line=3)
    again = pickle.loads(pickle.dumps(err))
    assert (again.file, again.field_path, again.message, again.line) == ("f.yaml", "a.b", "boom", 3)


# ---------------------------------------------------------------- installed plugins


INSTALLED = ["DefaultBinder", "PrioritySort", "PriorityLabel", "NodeResourcesFit"]


def test_unknown_plugin_did_you_mean() -> None:
    path = DATA / "typo.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path, installed_plugins=INSTALLED)
    assert str(info.value) == (
        f"{path}: profiles[0].plugins.filter.enabled[1].name: "
        'unknown plugin "PriortyLabel"; did you mean "PriorityLabel"? '
        "installed plugins: DefaultBinder, NodeResourcesFit, PriorityLabel, PrioritySort"
    )
    assert info.value.line == 9


def test_unknown_plugin_without_suggestion_and_in_plugin_config() -> None:
    err = error_of_data(
        {
            "profiles": [
                {
                    "plugins": {"multiPoint": {"enabled": [{"name": "Zzyzx"}]}},
                    "pluginConfig": [{"name": "NodeResourcesFitt"}],
                }
            ]
        },
        installed_plugins=INSTALLED,
    )
    assert str(err) == (
        'cfg.yaml: profiles[0].plugins.multiPoint.enabled[0].name: unknown plugin "Zzyzx"; '
        "installed plugins: DefaultBinder, NodeResourcesFit, PriorityLabel, PrioritySort"
    )
    # a pluginConfig entry for a plugin that is not installed: a warning, not an error
    # (kube-scheduler v1.36.3 runs such a file; the args are never used)
    assert len(err.errors) == 1


def test_plugin_config_for_a_plugin_not_installed_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    cfg = load_config_data(
        HEAD + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFitt\n    args: {}\n",
        source="cfg.yaml",
        installed_plugins=INSTALLED,
    )
    assert cfg.profiles[0].plugin_config == {"NodeResourcesFitt": {}}
    assert [r.getMessage() for r in caplog.records] == [
        'cfg.yaml: profiles[0].pluginConfig[0].name: unknown plugin "NodeResourcesFitt"; '
        'did you mean "NodeResourcesFit"? installed plugins: DefaultBinder, NodeResourcesFit, '
        "PriorityLabel, PrioritySort (its args are not used)"
    ]


def test_disabled_names_and_defaults_are_not_checked_against_installed() -> None:
    cfg = load_config_data(
        HEAD + "profiles:\n- plugins:\n    filter:\n      disabled:\n      - name: EBSLimits\n",
        installed_plugins=INSTALLED,
    )
    assert cfg.profiles[0].plugins.filter.disabled[0].name == "EBSLimits"


def test_suggest() -> None:
    assert suggest("PriortyLabel", ["PriorityLabel", "NodeName"]) == "PriorityLabel"
    assert suggest("nodename", ["PriorityLabel", "NodeName"]) == "NodeName"
    assert suggest("Zzyzx", ["PriorityLabel", "NodeName"]) is None
    assert suggest("x", []) is None


# ---------------------------------------------------------------- robustness


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_arbitrary_text_gives_config_or_config_error(text: str) -> None:
    try:
        result = load_config_data(HEAD + text)
    except ConfigError as err:
        assert err.message
    else:
        assert isinstance(result, SchedulerConfiguration)


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200)
@given(
    st.dictionaries(
        st.sampled_from(
            ["parallelism", "profiles", "leaderElection", "clientConnection", "extenders", "x"]
        ),
        _values,
    )
)
def test_arbitrary_data_gives_config_or_config_error(data: dict[str, Any]) -> None:
    try:
        load_config_data(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                **data,
            }
        )
    except ConfigError as err:
        assert err.message


def test_v1_placement_plugin_sets_are_fields_but_nothing_can_be_enabled_there() -> None:
    """kube-scheduler 1.36's v1 Plugins has placementGenerate and placementScore (workload
    placement, alpha): it accepts a file that disables plugins there, and so does kubesched; a
    plugin enabled there is refused (kubesched has no such extension point); v1beta3 has no such
    field."""
    disabled = HEAD + "profiles:\n- schedulerName: x\n  plugins:\n    placementScore:\n      disabled: [{name: '*'}]\n"
    cfg = load_config_data(disabled, source="cfg.yaml")
    assert cfg.profiles[0].scheduler_name == "x"
    err = error_of(HEAD + "profiles:\n- schedulerName: x\n  plugins:\n    placementGenerate:\n      enabled: [{name: Foo}]\n")
    assert str(err) == (
        "cfg.yaml: profiles[0].plugins.placementGenerate.enabled[0].name: kubesched has no placementGenerate "
        "extension point (kube-scheduler 1.36's workload placement, TopologyAwareWorkloadScheduling, alpha and "
        'off by default): cannot enable "Foo" there'
    )
    err = error_of(disabled.replace("/v1\n", "/v1beta3\n"))
    assert str(err) == 'cfg.yaml: profiles[0].plugins.placementScore: unknown field "placementScore"; did you mean "preScore"?'


def test_v1_removed_plugin_in_multi_point() -> None:
    """kube-scheduler v1.36.3 rejects GCEPDLimits in multiPoint too (its registry lacks it:
    'PreFilterPlugin "GCEPDLimits" does not exist'); kubesched names the removal there."""
    err = error_of(HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: GCEPDLimits\n")
    assert (err.field_path, err.message) == (
        "profiles[0].plugins.multiPoint.enabled[0]",
        'Invalid value: "GCEPDLimits": was invalid in version "v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
    )
