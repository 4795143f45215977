"""Fuzzing the configuration loader: whatever the file holds, only ConfigError comes out.

(a) random YAML-looking text; (b) random JSON-like trees spliced into a valid
KubeSchedulerConfiguration at random field paths (top-level fields, profiles, plugin sets,
pluginConfig entries and the args of every in-tree plugin that takes args), loaded both as
in-memory data and as YAML text.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.runtime.config import ConfigError, load_config_data

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BASE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 8,
    "percentageOfNodesToScore": 50,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "leaderElection": {"leaderElect": True, "leaseDuration": "15s", "resourceLock": "leases"},
    "clientConnection": {"qps": 50, "burst": 100},
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "percentageOfNodesToScore": 30,
            "plugins": {
                "multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 2}]},
                "score": {
                    "enabled": [{"name": "NodeResourcesFit", "weight": 3}],
                    "disabled": [{"name": "TaintToleration"}],
                },
                "filter": {"disabled": [{"name": "NodePorts"}]},
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [{"name": "cpu", "weight": 1}],
                            "requestedToCapacityRatio": {
                                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                            },
                        },
                        "ignoredResources": ["example.com/foo"],
                        "ignoredResourceGroups": ["example.org"],
                    },
                },
                {
                    "name": "PodTopologySpread",
                    "args": {
                        "defaultingType": "List",
                        "defaultConstraints": [
                            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                        ],
                    },
                },
                {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}},
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}
                                ]
                            }
                        }
                    },
                },
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 300}},
                {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 20}},
                {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 1}]}},
                {"name": "DynamicResources", "args": {"filterTimeout": "5s"}},
            ],
        },
        {"schedulerName": "second", "plugins": {"preScore": {"disabled": [{"name": "*"}]}}},
    ],
}


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every field path of ``node`` (each mapping key and list index), the root excluded."""
    out: list[tuple[Any, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        out.append((*prefix, key))
        out.extend(_paths(value, (*prefix, key)))
    return out


PATHS = _paths(BASE)
assert len(PATHS) > 100

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["*", "", "NodeResourcesFit", "LeastAllocated", "10s", "-1s", "1e400", "kind"])
)
TREES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.text(max_size=8) | st.sampled_from(["name", "args", "weight", "enabled", "kind", "apiVersion"]),
        children,
        max_size=4,
    ),
    max_leaves=12,
)


def _load(data: Any) -> None:
    try:
        load_config_data(data, source="fuzz.yaml")
    except ConfigError as e:
        message = str(e)
        assert message.startswith("fuzz.yaml")
        assert "\n" not in message


def _splice(path: tuple[Any, ...], tree: Any, extra_key: str | None) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    if extra_key is not None and isinstance(parent[path[-1]], dict):
        parent[path[-1]][extra_key] = tree  # a field added beside the others
    else:
        parent[path[-1]] = tree
    return doc


def test_the_base_configuration_is_valid() -> None:
    cfg = load_config_data(copy.deepcopy(BASE), source="fuzz.yaml")
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "second"]


@FUZZ
@given(
    path=st.sampled_from(PATHS),
    tree=TREES,
    extra_key=st.none() | st.sampled_from(["name", "weight", "type", "x", "kind", "args"]),
)
def test_spliced_trees_give_only_config_errors(path: tuple[Any, ...], tree: Any, extra_key: str | None) -> None:
    doc = _splice(path, tree, extra_key)
    _load(doc)
    _load(yaml.safe_dump(doc, sort_keys=False))


YAML_TOKENS = st.sampled_from(
    [
        "\n", "\n  ", "\n- ", ": ", "- ", "[", "]", "{", "}", ", ", "&a ", "*a", "&b ", "*b", "<<: ",
        "!!int ", "!!str ", "!!bool ", "!!float ", "!!null ", "!!binary ", "!!timestamp ", "!!set ",
        "!!omap ", "!!map ", "!!seq ", "!!python/name:os.system ", "!x ", "? ", "|\n  ", ">\n  ",
        "---\n", "...\n", "'", '"', "#", "%YAML 1.1\n", "0x_", "1:30", "yes", "~", "1e400", ".nan",
        "apiVersion", "kind", "profiles", "plugins", "pluginConfig", "args", "name", "weight",
        "enabled", "disabled", "score", "multiPoint", "parallelism", "NodeResourcesFit",
        "DefaultPreemption", "KubeSchedulerConfiguration", "kubescheduler.config.k8s.io/v1",
    ]
)
YAML_TEXT = st.lists(YAML_TOKENS | st.text(max_size=6), max_size=40).map("".join)
PREFIX = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@FUZZ
@given(text=YAML_TEXT, with_header=st.booleans())
def test_random_yaml_text_gives_only_config_errors(text: str, with_header: bool) -> None:
    _load(PREFIX + text if with_header else text)


@FUZZ
@given(text=st.text(max_size=200))
def test_random_unicode_gives_only_config_errors(text: str) -> None:
    _load(text)
