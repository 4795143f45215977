"""NodeResourcesFitArgs / NodeResourcesBalancedAllocationArgs defaults and validation, transcribed
from kube-scheduler's ``pkg/scheduler/apis/config/v1/defaults_test.go`` (TestPluginArgsDefaults) and
``pkg/scheduler/apis/config/validation/validation_pluginargs_test.go``.

Go's validation tests call ``ValidateNodeResourcesFitArgs`` on the internal config, without the v1
defaulting; ``args.errors()`` on an object whose fields were assigned after construction does the
same. The field paths are those of the v1.36 validation (``scoringStrategy.resources[i].weight``,
``scoringStrategy.requestedToCapacityRatio.shape[i]...``; v1.34 said ``scoringStrategy.shape``).
The qualified-name messages are the SDK's, in apimachinery v0.36.3's wording
(``api/validate/content``: "a valid label key must consist of", "no more than 63 bytes"), as
v1.36's validation_pluginargs_test.go expects them.
"""

from __future__ import annotations

import pytest

from kubesched.runtime.plugins.noderesources import (
    BalancedAllocation,
    Fit,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.sdk import ArgsError, build_args
from kubesched.testing import build_plugin, make_handle

DEFAULT_RESOURCE_SPEC = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


# TestPluginArgsDefaults -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args_cls", "raw", "want"),
    [
        pytest.param(
            NodeResourcesBalancedAllocationArgs,
            {},
            NodeResourcesBalancedAllocationArgs(
                resources=[ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
            ),
            id="TestPluginArgsDefaults/NodeResourcesBalancedAllocationArgs resources empty",
        ),
        pytest.param(
            NodeResourcesBalancedAllocationArgs,
            {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
            NodeResourcesBalancedAllocationArgs(resources=[ResourceSpec("scalar.io/scalar1", 1)]),
            id="TestPluginArgsDefaults/NodeResourcesBalancedAllocationArgs with scalar resource",
        ),
        pytest.param(
            NodeResourcesBalancedAllocationArgs,
            {
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "scalar.io/scalar1", "weight": 1},
                ]
            },
            NodeResourcesBalancedAllocationArgs(
                resources=[ResourceSpec("cpu", 1), ResourceSpec("scalar.io/scalar1", 1)]
            ),
            id="TestPluginArgsDefaults/NodeResourcesBalancedAllocationArgs with mixed resources",
        ),
        pytest.param(
            NodeResourcesBalancedAllocationArgs,
            {
                "resources": [
                    {"name": "cpu"},
                    {"name": "scalar.io/scalar0"},
                    {"name": "scalar.io/scalar1", "weight": 1},
                ]
            },
            NodeResourcesBalancedAllocationArgs(
                resources=[
                    ResourceSpec("cpu", 1),
                    ResourceSpec("scalar.io/scalar0", 1),
                    ResourceSpec("scalar.io/scalar1", 1),
                ]
            ),
            id="TestPluginArgsDefaults/NodeResourcesBalancedAllocationArgs have resource no weight",
        ),
        pytest.param(
            NodeResourcesFitArgs,
            {},
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    type="LeastAllocated", resources=DEFAULT_RESOURCE_SPEC
                )
            ),
            id="TestPluginArgsDefaults/NodeResourcesFitArgs not set",
        ),
        pytest.param(
            NodeResourcesFitArgs,
            {"scoringStrategy": {"type": "MostAllocated"}},
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    type="MostAllocated", resources=DEFAULT_RESOURCE_SPEC
                )
            ),
            id="TestPluginArgsDefaults/NodeResourcesFitArgs Resources empty",
        ),
    ],
)
def test_plugin_args_defaults(args_cls, raw, want):
    assert build_args(args_cls, raw) == want


def test_fit_args_defaults_in_camel_case_config():
    """A whole pluginConfig ``args`` block as kube-scheduler reads it."""
    args = build_args(
        NodeResourcesFitArgs,
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "NodeResourcesFitArgs",
            "ignoredResources": ["example.com/foo"],
            "ignoredResourceGroups": ["example.org"],
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "nvidia.com/gpu", "weight": 5}, {"name": "cpu"}],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            },
        },
    )
    assert args == NodeResourcesFitArgs(
        ignored_resources=["example.com/foo"],
        ignored_resource_groups=["example.org"],
        scoring_strategy=ScoringStrategy(
            "RequestedToCapacityRatio",
            [ResourceSpec("nvidia.com/gpu", 5), ResourceSpec("cpu", 1)],
            RequestedToCapacityRatioParam(
                [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]
            ),
        ),
    )


# TestValidateFitArgs ---------------------------------------------------------------------------
def _fit_args(ignored=(), groups=(), strategy=...) -> NodeResourcesFitArgs:
    a = NodeResourcesFitArgs()
    a.ignored_resources = list(ignored)
    a.ignored_resource_groups = list(groups)
    if strategy is not ...:
        a.scoring_strategy = strategy
    return a


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        pytest.param(
            _fit_args(ignored=["longvalue" + "a" * 64]),
            "name part must be no more than 63 bytes",
            id="TestValidateFitArgs/IgnoredResources: too long value",
        ),
        pytest.param(
            _fit_args(ignored=["example.com/"]),
            "name part must be non-empty",
            id="TestValidateFitArgs/IgnoredResources: name is empty",
        ),
        pytest.param(
            _fit_args(ignored=["example.com/aaa/bbb"]),
            "a valid label key must consist of",
            id="TestValidateFitArgs/IgnoredResources: name has too many slash",
        ),
        pytest.param(
            _fit_args(ignored=["example.com"]),
            "",
            id="TestValidateFitArgs/IgnoredResources: valid args",
        ),
        pytest.param(
            _fit_args(groups=["example.com"]),
            "",
            id="TestValidateFitArgs/IgnoredResourceGroups: valid args ",
        ),
        pytest.param(
            _fit_args(groups=["example.com/"]),
            "name part must be non-empty",
            id="TestValidateFitArgs/IgnoredResourceGroups: illegal args",
        ),
        pytest.param(
            _fit_args(groups=["a" * 64]),
            "name part must be no more than 63 bytes",
            id="TestValidateFitArgs/IgnoredResourceGroups: name is too long",
        ),
        pytest.param(
            _fit_args(groups=["example.com/aa"]),
            "resource group name can't contain '/'",
            id="TestValidateFitArgs/IgnoredResourceGroups: name cannot be contain slash",
        ),
        # v1.36: a nil ScoringStrategy is an error (defaulting never leaves it nil)
        pytest.param(
            _fit_args(strategy=None),
            "scoringStrategy: Required value: ScoringStrategy field is required",
            id="TestValidateFitArgs/ScoringStrategy: field is required",
        ),
        pytest.param(
            _fit_args(strategy=ScoringStrategy("Invalid", [ResourceSpec("cpu", 1)])),
            'Unsupported value: "Invalid"',
            id="TestValidateFitArgs/ScoringStrategy: type is unsupported",
        ),
        pytest.param(
            _fit_args(strategy=ScoringStrategy("RequestedToCapacityRatio", [ResourceSpec("cpu", 1)])),
            "scoringStrategy.requestedToCapacityRatio: Required value: "
            "must be specified when type is RequestedToCapacityRatio",
            id="TestValidateFitArgs/ScoringStrategy: requestedToCapacityRatio field is missing",
        ),
    ],
)
def test_validate_fit_args(args, expect):
    errs = args.errors()
    if not expect:
        assert errs == []
    else:
        assert any(expect in e for e in errs), errs


def test_validate_fit_args_forbids_a_shape_for_other_types():
    """v1.36: requestedToCapacityRatio set with another type is Forbidden (v1.34 validated the
    shape and ignored it)."""
    strategy = ScoringStrategy(
        "LeastAllocated", [ResourceSpec("cpu", 1)], RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0)])
    )
    assert _fit_args(strategy=strategy).errors() == [
        "scoringStrategy.requestedToCapacityRatio: Forbidden: "
        "must be nil when type is not RequestedToCapacityRatio"
    ]


def _fields(errs: list[str]) -> list[tuple[str, str]]:
    """(field path, error type) of rendered field.Errors, as Go's tests compare them."""
    out = []
    for e in errs:
        path, rest = e.split(": ", 1)
        out.append((path, rest.split(":", 1)[0]))
    return out


INVALID = "Invalid value"


def _strategy_cases(test: str):
    return [
        pytest.param(None, [], id=f"{test}/default config"),
        pytest.param(
            [ResourceSpec("cpu", 1), ResourceSpec("memory", 10)],
            [],
            id=f"{test}/multi valid resources",
        ),
        pytest.param(
            [ResourceSpec("cpu", 0)],
            [("scoringStrategy.resources[0].weight", INVALID)],
            id=f"{test}/weight less than min",
        ),
        pytest.param(
            [ResourceSpec("cpu", 101)],
            [("scoringStrategy.resources[0].weight", INVALID)],
            id=f"{test}/weight greater than max",
        ),
        pytest.param(
            [ResourceSpec("cpu", 0), ResourceSpec("memory", 101)],
            [
                ("scoringStrategy.resources[0].weight", INVALID),
                ("scoringStrategy.resources[1].weight", INVALID),
            ],
            id=f"{test}/multi invalid resources",
        ),
    ]


@pytest.mark.parametrize(
    ("resources", "want"), _strategy_cases("TestValidateLeastAllocatedScoringStrategy")
)
def test_validate_least_allocated_scoring_strategy(resources, want):
    errs = _fit_args(strategy=ScoringStrategy("LeastAllocated", resources or [])).errors()
    assert _fields(errs) == want


@pytest.mark.parametrize(
    ("resources", "want"), _strategy_cases("TestValidateMostAllocatedScoringStrategy")
)
def test_validate_most_allocated_scoring_strategy(resources, want):
    errs = _fit_args(strategy=ScoringStrategy("MostAllocated", resources or [])).errors()
    assert _fields(errs) == want


_SHAPE30 = [UtilizationShapePoint(30, 3)]


@pytest.mark.parametrize(
    ("resources", "shape", "want"),
    [
        pytest.param(
            None,
            None,
            [("scoringStrategy.requestedToCapacityRatio.shape", "Required value")],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/no shapes",
        ),
        pytest.param(
            [ResourceSpec("cpu", 101)],
            _SHAPE30,
            [("scoringStrategy.resources[0].weight", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/weight greater than max",
        ),
        pytest.param(
            [ResourceSpec("cpu", 0)],
            _SHAPE30,
            [("scoringStrategy.resources[0].weight", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/weight less than min",
        ),
        pytest.param(
            None,
            _SHAPE30,
            [],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/valid shapes",
        ),
        pytest.param(
            None,
            [UtilizationShapePoint(-1, 3)],
            [("scoringStrategy.requestedToCapacityRatio.shape[0].utilization", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/utilization less than min",
        ),
        pytest.param(
            None,
            [UtilizationShapePoint(101, 3)],
            [("scoringStrategy.requestedToCapacityRatio.shape[0].utilization", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/utilization greater than max",
        ),
        pytest.param(
            None,
            [UtilizationShapePoint(10, 3), UtilizationShapePoint(10, 3)],
            [("scoringStrategy.requestedToCapacityRatio.shape[1].utilization", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/duplicated utilization values",
        ),
        pytest.param(
            None,
            [
                UtilizationShapePoint(10, 3),
                UtilizationShapePoint(20, 3),
                UtilizationShapePoint(30, 3),
            ],
            [],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/increasing utilization values",
        ),
        pytest.param(
            None,
            [
                UtilizationShapePoint(10, 3),
                UtilizationShapePoint(20, 3),
                UtilizationShapePoint(15, 3),
            ],
            [("scoringStrategy.requestedToCapacityRatio.shape[2].utilization", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/non-increasing utilization values",
        ),
        pytest.param(
            None,
            [UtilizationShapePoint(10, -1)],
            [("scoringStrategy.requestedToCapacityRatio.shape[0].score", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/score less than min",
        ),
        pytest.param(
            None,
            [UtilizationShapePoint(10, 11)],
            [("scoringStrategy.requestedToCapacityRatio.shape[0].score", INVALID)],
            id="TestValidateRequestedToCapacityRatioScoringStrategy/score greater than max",
        ),
    ],
)
def test_validate_requested_to_capacity_ratio_scoring_strategy(resources, shape, want):
    strategy = ScoringStrategy(
        "RequestedToCapacityRatio",
        resources or [],
        RequestedToCapacityRatioParam(list(shape or [])),
    )
    assert _fields(_fit_args(strategy=strategy).errors()) == want


# TestValidateNodeResourcesBalancedAllocationArgs ----------------------------------------------
def _ba(resources: list[ResourceSpec]) -> NodeResourcesBalancedAllocationArgs:
    a = NodeResourcesBalancedAllocationArgs()
    a.resources = resources
    return a


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(
            _ba([ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]),
            [],
            id="TestValidateNodeResourcesBalancedAllocationArgs/valid config",
        ),
        pytest.param(
            _ba([ResourceSpec("cpu", 2), ResourceSpec("memory", 1)]),
            [("resources[0].weight", INVALID)],
            id="TestValidateNodeResourcesBalancedAllocationArgs/invalid config",
        ),
        pytest.param(
            _ba([ResourceSpec("cpu", 1), ResourceSpec("cpu", 1)]),
            [("resources[1].name", "Duplicate value")],
            id="TestValidateNodeResourcesBalancedAllocationArgs/repeated resources",
        ),
    ],
)
def test_validate_node_resources_balanced_allocation_args(args, want):
    assert _fields(args.errors()) == want


# messages and the runtime's error path ---------------------------------------------------------
@pytest.mark.parametrize(
    ("plugin", "raw", "field", "message"),
    [
        (
            Fit,
            {"scoringStrategy": {"type": "Foo"}},
            "args.scoringStrategy.type",
            'Unsupported value: "Foo": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            Fit,
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}},
            "args.scoringStrategy.type",
            'Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            Fit,
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 101}],
                }
            },
            "args.scoringStrategy.resources[0].weight",
            "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
        ),
        (
            Fit,
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": []},
                }
            },
            "args.scoringStrategy.requestedToCapacityRatio.shape",
            "Required value: at least one point must be specified",
        ),
        (
            Fit,
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "args.scoringStrategy.requestedToCapacityRatio",
            "Required value: must be specified when type is RequestedToCapacityRatio",
        ),
        (
            Fit,
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}]},
                }
            },
            "args.scoringStrategy.requestedToCapacityRatio",
            "Forbidden: must be nil when type is not RequestedToCapacityRatio",
        ),
        (
            Fit,
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 5}, {"utilization": 40, "score": 11}]
                    },
                }
            },
            "args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "Invalid value: 40: values must be sorted in increasing order",
        ),
        (
            Fit,
            {"ignoredResources": ["example.com/aaa/bbb"]},
            "args.ignoredResources[0]",
            "Invalid value: \"example.com/aaa/bbb\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        ),
        (
            Fit,
            {"ignoredResourceGroups": ["example.com/aa"]},
            "args.ignoredResourceGroups[0]",
            "Invalid value: \"example.com/aa\": resource group name can't contain '/'",
        ),
        (
            BalancedAllocation,
            {"resources": [{"name": "cpu", "weight": 2}]},
            "args.resources[0].weight",
            "Invalid value: 2: must be 1",
        ),
        (
            BalancedAllocation,
            {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
            "args.resources[1].name",
            'Duplicate value: "cpu"',
        ),
    ],
)
def test_build_plugin_reports_go_messages(plugin, raw, field, message):
    with pytest.raises(ArgsError) as e:
        build_plugin(plugin, raw, make_handle())
    assert (e.value.field, e.value.message) == (field, message)


def test_weight_zero_is_defaulted_not_rejected_when_decoding():
    """v1 defaulting turns weight 0 into 1 before validation (SetDefaults_NodeResourcesFitArgs)."""
    p = build_plugin(
        Fit,
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 0}],
            }
        },
        make_handle(),
    )
    assert p.args.scoring_strategy.resources == [ResourceSpec("cpu", 1)]
