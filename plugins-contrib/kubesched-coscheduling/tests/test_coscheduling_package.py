"""Args, the shipped CRD, the README's configuration and the entry point."""

from __future__ import annotations

import re
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.runtime.config import ConfigError, load_config_data
from kubesched.runtime.registry import Registry
from kubesched.sdk import ArgsError, args_schema, build_args
from kubesched.testing import make_node, make_pod, run_profile
from kubesched_coscheduling import (
    POD_GROUP_LABEL,
    Coscheduling,
    CoschedulingArgs,
    PodGroup,
    podgroup_crd,
)

README = Path(__file__).resolve().parent.parent / "README.md"


# args ----------------------------------------------------------------------------------------------


def test_args_defaults_and_camel_case_keys() -> None:
    args = build_args(CoschedulingArgs, None)
    assert (args.permit_waiting_time_seconds, args.pod_group_backoff_seconds, args.pod_group_reject_percentage) == (60, 0, 10)
    args = build_args(CoschedulingArgs, {"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 5, "podGroupRejectPercentage": 0})
    assert (args.permit_waiting_time_seconds, args.pod_group_backoff_seconds, args.pod_group_reject_percentage) == (10, 5, 0)
    assert args_schema(CoschedulingArgs) == {
        "permitWaitingTimeSeconds": {"type": "integer", "default": 60},
        "podGroupBackoffSeconds": {"type": "integer", "default": 0},
        "podGroupRejectPercentage": {"type": "integer", "default": 10},
    }


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ({"permitWaitingTimeSeconds": -1}, "args.permitWaitingTimeSeconds", "Invalid value: -1: must be greater than or equal to 0"),
        ({"podGroupBackoffSeconds": -5}, "args.podGroupBackoffSeconds", "Invalid value: -5: must be greater than or equal to 0"),
        ({"podGroupRejectPercentage": 101}, "args.podGroupRejectPercentage", "Invalid value: 101: must be between 0 and 100"),
        ({"permitWaitingTimeSeconds": "10s"}, "args.permitWaitingTimeSeconds", "Invalid type: expected integer, got str"),
        ({"kubeConfigPath": "/x"}, "args.kubeConfigPath", 'unknown field "kubeConfigPath"'),
    ],
)
def test_args_are_validated(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ArgsError) as e:
        build_args(CoschedulingArgs, raw)
    assert e.value.field == field
    assert message in e.value.message


def test_invalid_args_fail_the_configuration_with_the_field_path() -> None:
    with pytest.raises(ConfigError) as e:
        run_profile(
            {"Coscheduling": Coscheduling},
            nodes=[make_node().name("n1").obj()],
            pods=[make_pod().name("p").obj()],
            config=_readme_config(args={"podGroupBackoffSeconds": -1}),
        )
    assert "pluginConfig[0].args.podGroupBackoffSeconds" in str(e.value)
    assert "must be greater than or equal to 0" in str(e.value)


# the CRD ------------------------------------------------------------------------------------------------


def test_the_crd_ships_in_the_package_and_describes_the_pod_group_api() -> None:
    text = (resources.files("kubesched_coscheduling") / "manifests" / "podgroup-crd.yaml").read_text(encoding="utf-8")
    assert text == podgroup_crd()
    crd = yaml.safe_load(text)
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1" and crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["name"] == "podgroups.scheduling.x-k8s.io"
    spec = crd["spec"]
    assert spec["group"] == "scheduling.x-k8s.io" and spec["scope"] == "Namespaced"
    assert spec["names"]["kind"] == "PodGroup" and spec["names"]["plural"] == "podgroups"
    (version,) = spec["versions"]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    schema = version["schema"]["openAPIV3Schema"]["properties"]
    assert set(schema["spec"]["properties"]) == {"minMember", "minResources", "scheduleTimeoutSeconds"}
    assert schema["spec"]["properties"]["minMember"]["minimum"] == 1
    assert {"phase", "occupiedBy", "running", "succeeded", "failed", "scheduleStartTime"} <= set(schema["status"]["properties"])
    assert POD_GROUP_LABEL in version["schema"]["openAPIV3Schema"]["description"]


def test_pod_group_view() -> None:
    pg = PodGroup(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "ns", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"minMember": 3, "scheduleTimeoutSeconds": 10, "minResources": {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": 2}},
            "status": {"phase": "Pending"},
        }
    )
    pg.validate()
    assert pg.full_name == "ns/g"
    assert pg.min_member == 3 and pg.schedule_timeout_seconds == 10
    assert pg.min_resources == {"cpu": 1500, "memory": 1 << 30, "nvidia.com/gpu": 2}
    assert pg.creation_timestamp == 1704067200.0
    assert pg.phase == "Pending"
    empty = PodGroup({"metadata": {"name": "e"}})
    assert (empty.min_member, empty.schedule_timeout_seconds, empty.min_resources, empty.creation_timestamp) == (0, None, None, None)


# the README -------------------------------------------------------------------------------------------


def _readme_config(args: dict[str, Any] | None = None) -> dict[str, Any]:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    (cfg,) = [yaml.safe_load(b) for b in blocks if "KubeSchedulerConfiguration" in b]
    if args is not None:
        cfg["profiles"][0]["pluginConfig"][0]["args"] = args
    return cfg


def test_the_readme_configuration_replaces_the_queue_sort_and_enables_every_point() -> None:
    result = run_profile(
        {"Coscheduling": Coscheduling},
        nodes=[make_node().name("n1").capacity(cpu="4").obj()],
        pods=[make_pod().name(f"p{i}").label(POD_GROUP_LABEL, "g").req(cpu="1").obj() for i in range(3)],
        objects=[{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": {"minMember": 3}}],
        config=_readme_config(),
    )
    fw = result.scheduler.frameworks["gang-scheduler"]
    assert fw.points["queueSort"] == ["Coscheduling"]
    for point in ("preFilter", "postFilter", "reserve", "permit"):
        assert "Coscheduling" in fw.points[point]
    assert "NodeResourcesFit" in fw.points["filter"]  # the default plugins stay
    plugin = fw.plugins["Coscheduling"]
    assert plugin.args.permit_waiting_time_seconds == 60 and plugin.args.pod_group_backoff_seconds == 30
    assert all(result.node(f"p{i}") == "n1" for i in range(3))


def test_the_readme_configuration_loads_with_the_installed_plugin() -> None:
    reg = Registry.discover()
    cfg = load_config_data(_readme_config(), source="README.md", installed_plugins=reg.names())
    assert cfg.profiles[0].scheduler_name == "gang-scheduler"


def test_the_readme_mentions_the_crd_and_the_label() -> None:
    text = README.read_text(encoding="utf-8")
    assert "manifests/podgroup-crd.yaml" in text
    assert "scheduling.x-k8s.io/pod-group" in text


# packaging ----------------------------------------------------------------------------------------------


def test_entry_point_is_registered() -> None:
    eps = {ep.name: ep for ep in metadata.entry_points(group="kubesched.plugins")}
    assert eps["Coscheduling"].value == "kubesched_coscheduling:Coscheduling"
    spec = Registry.discover().get("Coscheduling")
    assert spec.distribution == "kubesched-coscheduling"
    assert spec.broken is False
    assert set(spec.extension_points) == {"queueSort", "preFilter", "postFilter", "reserve", "permit"}
    assert spec.args_kind == "CoschedulingArgs"
