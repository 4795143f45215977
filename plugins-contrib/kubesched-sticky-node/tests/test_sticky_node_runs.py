"""StickyNode through real framework cycles on the simulated cluster (``run_profile``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.testing import RunResult, make_node, make_pod, run_profile
from kubesched_sticky_node import StickyNode

PLUGINS = {"StickyNode": StickyNode}
STS_KEY = "sticky-node.kubesched.io/{pod}"
VM_KEY = "kubesched.io/sticky-node"


def nodes(*names: str) -> list[dict[str, Any]]:
    return [make_node().name(n).capacity(cpu="4", memory="8Gi").ready().obj() for n in names]


def sts(name: str = "web", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        md["annotations"] = dict(annotations)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": md, "spec": {"replicas": 1}}


def sts_pod(name: str = "web-0", owner: str = "web", cpu: str = "1") -> dict[str, Any]:
    return make_pod().name(name).req(cpu=cpu).owner_reference(owner, "StatefulSet").obj()


def filler(node: str, cpu: str = "3", name: str = "filler") -> dict[str, Any]:
    """A running pod that makes ``node`` the fullest one."""
    return make_pod().name(name).req(cpu=cpu).node(node).obj()


def vm_objects(annotations: dict[str, str] | None = None) -> list[dict[str, Any]]:
    vm_md: dict[str, Any] = {"name": "fedora", "namespace": "default", "uid": "vm-uid"}
    if annotations:
        vm_md["annotations"] = dict(annotations)
    vm = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": vm_md,
        "spec": {"running": True},
    }
    vmi = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "name": "fedora",
            "namespace": "default",
            "uid": "vmi-uid",
            "ownerReferences": [
                {
                    "apiVersion": "kubevirt.io/v1",
                    "kind": "VirtualMachine",
                    "name": "fedora",
                    "uid": "vm-uid",
                    "controller": True,
                }
            ],
        },
        "spec": {},
    }
    return [vm, vmi]


def launcher_pod(name: str = "virt-launcher-fedora-abcde") -> dict[str, Any]:
    return (
        make_pod()
        .name(name)
        .req(cpu="1")
        .label("kubevirt.io", "virt-launcher")
        .owner_reference(
            "fedora", "VirtualMachineInstance", api_version="kubevirt.io/v1", uid="vmi-uid"
        )
        .obj()
    )


def annotations_of(result: RunResult, api_version: str, kind: str, name: str) -> dict[str, str]:
    obj = result.objects().get(api_version, kind, name, "default")
    return dict(obj["metadata"].get("annotations") or {})


def rerun(result: RunResult) -> RunResult:
    """Let the scheduler of a finished run react to changes made to its store."""
    result.scheduler.run_until_idle()
    return RunResult(result.scheduler, result.cluster, result.tracer)


# --- StatefulSet ------------------------------------------------------------------------------------


def test_statefulset_pod_is_placed_and_its_node_remembered_per_pod() -> None:
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b", "c"),
        pods=[sts_pod("web-0"), sts_pod("web-1")],
        objects=[sts()],
        defaults=True,
    )
    assert result.status("web-0") == "Scheduled"
    assert result.status("web-1") == "Scheduled"
    ann = annotations_of(result, "apps/v1", "StatefulSet", "web")
    assert ann == {
        STS_KEY.format(pod="web-0"): result.node("web-0"),
        STS_KEY.format(pod="web-1"): result.node("web-1"),
    }
    # nothing remembered yet on the first placement: normal placement, PostBind records it
    assert ("PreFilter", "StickyNode", "default/web-0", "-", "Skip") in result.call_results("web-0")
    assert ("PostBind", "StickyNode", "default/web-0", result.node("web-0")) in result.calls(
        "web-0"
    )


def test_recreated_pod_goes_back_even_when_another_node_is_emptier() -> None:
    first = run_profile(
        PLUGINS, nodes=nodes("a", "b", "c"), pods=[sts_pod()], objects=[sts()], defaults=True
    )
    home = first.node("web-0")
    assert home is not None
    owner = first.objects().get("apps/v1", "StatefulSet", "web", "default")

    # the pod was deleted and the StatefulSet controller made a new one; its node is now the fullest
    again = run_profile(
        PLUGINS,
        nodes=nodes("a", "b", "c"),
        pods=[filler(home), sts_pod()],
        objects=[owner],
        defaults=True,
    )
    assert again.node("web-0") == home
    assert again.call_results("web-0")[-1][:4] == ("PostBind", "StickyNode", "default/web-0", home)
    assert (
        "PreFilter",
        "StickyNode",
        "default/web-0",
        "-",
        f"Success (nodes: {home})",
    ) in again.call_results("web-0")
    assert {c[3] for c in again.calls("web-0", point="Filter")} == {home}  # Filter ran only there

    # control: without the memory the default scores send it to an emptier node
    control = run_profile(
        PLUGINS,
        nodes=nodes("a", "b", "c"),
        pods=[filler(home), sts_pod()],
        objects=[sts()],
        defaults=True,
    )
    assert control.node("web-0") not in (None, home)


def test_pod_deleted_and_recreated_in_the_same_run_goes_back() -> None:
    result = run_profile(
        PLUGINS, nodes=nodes("a", "b", "c"), pods=[sts_pod()], objects=[sts()], defaults=True
    )
    home = result.node("web-0")
    assert home is not None
    store = result.objects()
    store.delete("v1", "Pod", "web-0", "default")
    store.create(filler(home))
    store.create({**sts_pod(), "spec": {**sts_pod()["spec"], "schedulerName": "kubesched-test"}})
    after = rerun(result)
    assert after.node("web-0") == home
    assert annotations_of(after, "apps/v1", "StatefulSet", "web") == {
        STS_KEY.format(pod="web-0"): home
    }


def test_each_ordinal_goes_back_to_its_own_node() -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "a", STS_KEY.format(pod="web-1"): "c"})
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b", "c"),
        pods=[sts_pod("web-0"), sts_pod("web-1")],
        objects=[owner],
        defaults=True,
    )
    assert result.placements() == {"default/web-0": "a", "default/web-1": "c"}


# --- KubeVirt ---------------------------------------------------------------------------------------


def test_kubevirt_vm_is_remembered_on_the_virtual_machine() -> None:
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b", "c"),
        pods=[launcher_pod()],
        objects=vm_objects(),
        defaults=True,
    )
    home = result.node("virt-launcher-fedora-abcde")
    assert home is not None
    assert annotations_of(result, "kubevirt.io/v1", "VirtualMachine", "fedora") == {VM_KEY: home}
    assert annotations_of(result, "kubevirt.io/v1", "VirtualMachineInstance", "fedora") == {}


def test_kubevirt_vm_restart_goes_back_through_the_vmi_chain() -> None:
    # the VM was stopped and started: a new VMI (same name) and a new launcher pod
    objs = vm_objects({VM_KEY: "b"})
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b", "c"),
        pods=[filler("b"), launcher_pod("virt-launcher-fedora-xyz12")],
        objects=objs,
        defaults=True,
    )
    assert result.node("virt-launcher-fedora-xyz12") == "b"


def test_kubevirt_migration_target_pod_is_not_pinned() -> None:
    target = launcher_pod("virt-launcher-fedora-target")
    target["metadata"]["labels"]["kubevirt.io/migrationJobUID"] = "mig-1"
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b"),
        pods=[filler("b"), target],
        objects=vm_objects({VM_KEY: "b"}),
        defaults=True,
    )
    assert result.node("virt-launcher-fedora-target") == "a"
    assert annotations_of(result, "kubevirt.io/v1", "VirtualMachine", "fedora") == {VM_KEY: "b"}


# --- other owners -----------------------------------------------------------------------------------


def widget(annotations: dict[str, str] | None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": "w", "namespace": "default"}
    if annotations is not None:
        md["annotations"] = annotations
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md}


def widget_pod(name: str = "w-1") -> dict[str, Any]:
    return (
        make_pod()
        .name(name)
        .req(cpu="1")
        .owner_reference("w", "Widget", api_version="example.com/v1")
        .obj()
    )


def test_any_owner_opts_in_with_the_annotation() -> None:
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b"),
        pods=[widget_pod()],
        objects=[widget({VM_KEY: ""})],
        defaults=True,
    )
    home = result.node("w-1")
    assert annotations_of(result, "example.com/v1", "Widget", "w") == {VM_KEY: home}

    pinned = run_profile(
        PLUGINS,
        nodes=nodes("a", "b"),
        pods=[filler("b"), widget_pod("w-2")],
        objects=[widget({VM_KEY: "b"})],
        defaults=True,
    )
    assert pinned.node("w-2") == "b"


def test_owner_without_the_annotation_is_left_alone() -> None:
    result = run_profile(
        PLUGINS, nodes=nodes("a", "b"), pods=[widget_pod()], objects=[widget(None)], defaults=True
    )
    assert result.status("w-1") == "Scheduled"
    assert annotations_of(result, "example.com/v1", "Widget", "w") == {}


def test_pod_without_owner_or_with_a_missing_owner_is_placed_normally() -> None:
    lone = make_pod().name("lone").req(cpu="1").obj()
    orphan = sts_pod("ghost-0", owner="ghost")
    result = run_profile(PLUGINS, nodes=nodes("a", "b"), pods=[lone, orphan], defaults=True)
    assert result.status("lone") == "Scheduled"
    assert result.status("ghost-0") == "Scheduled"
    assert ("PreFilter", "StickyNode", "default/lone", "-", "Skip") in result.call_results("lone")


# --- the remembered node is gone or unschedulable ----------------------------------------------------


def test_gone_node_strict_is_unschedulable_with_a_reason() -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "gone-node"})
    result = run_profile(
        PLUGINS, nodes=nodes("a", "b"), pods=[sts_pod()], objects=[owner], defaults=True
    )
    out = result.outcome("web-0")
    assert out.status == "Unschedulable"
    assert out.node is None
    assert "sticky node gone-node is gone" in out.message
    assert result.calls("web-0", point="Filter") == []
    assert (
        "PreFilter",
        "StickyNode",
        "default/web-0",
        "-",
        "UnschedulableAndUnresolvable: sticky node gone-node is gone",
    ) in result.call_results("web-0")


def test_gone_node_preferred_falls_back_and_remembers_the_new_node() -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "gone-node"})
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b"),
        pods=[sts_pod()],
        objects=[owner],
        defaults=True,
        args={"StickyNode": {"policy": "preferred"}},
    )
    assert result.node("web-0") in ("a", "b")
    assert annotations_of(result, "apps/v1", "StatefulSet", "web") == {
        STS_KEY.format(pod="web-0"): result.node("web-0")
    }


def cordoned(name: str) -> dict[str, Any]:
    return make_node().name(name).capacity(cpu="4", memory="8Gi").ready().unschedulable().obj()


def not_ready(name: str) -> dict[str, Any]:
    n = make_node().name(name).capacity(cpu="4", memory="8Gi").obj()
    n["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    # as the node lifecycle controller does
    n["spec"]["taints"] = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
    return n


@pytest.mark.parametrize(("make", "why"), [(cordoned, "cordoned"), (not_ready, "not ready")])
def test_unschedulable_node_strict(make: Any, why: str) -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "b"})
    result = run_profile(
        PLUGINS, nodes=[*nodes("a"), make("b")], pods=[sts_pod()], objects=[owner], defaults=True
    )
    assert result.status("web-0") == "Unschedulable"
    assert f"sticky node b is unschedulable ({why})" in result.message("web-0")


@pytest.mark.parametrize("make", [cordoned, not_ready])
def test_unschedulable_node_preferred_goes_elsewhere(make: Any) -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "b"})
    result = run_profile(
        PLUGINS,
        nodes=[*nodes("a"), make("b")],
        pods=[sts_pod()],
        objects=[owner],
        args={"StickyNode": {"policy": "preferred"}},
        defaults=True,
    )
    assert result.node("web-0") == "a"
    assert annotations_of(result, "apps/v1", "StatefulSet", "web") == {
        STS_KEY.format(pod="web-0"): "a"
    }


def test_cordoned_node_is_fine_for_a_pod_tolerating_the_cordon() -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "b"})
    pod = sts_pod()
    pod["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    ]
    result = run_profile(
        PLUGINS, nodes=[*nodes("a"), cordoned("b")], pods=[pod], objects=[owner], defaults=True
    )
    assert result.node("web-0") == "b"


# --- requeueing on cluster events ---------------------------------------------------------------------


def test_waiting_pod_is_placed_when_its_node_comes_back() -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "b"})
    result = run_profile(
        PLUGINS, nodes=nodes("a"), pods=[sts_pod()], objects=[owner], defaults=True
    )
    assert result.status("web-0") == "Unschedulable"
    result.objects().create(nodes("b")[0])
    assert rerun(result).node("web-0") == "b"


def test_waiting_pod_is_placed_when_its_node_is_uncordoned() -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "b"})
    result = run_profile(
        PLUGINS,
        nodes=[*nodes("a"), cordoned("b")],
        pods=[sts_pod()],
        objects=[owner],
        defaults=True,
    )
    assert result.status("web-0") == "Unschedulable"
    result.objects().patch("v1", "Node", "b", {"spec": {"unschedulable": None}})
    assert rerun(result).node("web-0") == "b"


def test_other_nodes_do_not_wake_the_pod_but_clearing_the_memory_does() -> None:
    owner = sts(annotations={STS_KEY.format(pod="web-0"): "b"})
    result = run_profile(
        PLUGINS, nodes=nodes("a"), pods=[sts_pod()], objects=[owner], defaults=True
    )
    attempts = result.outcome("web-0").attempts
    result.objects().create(nodes("c")[0])
    after = rerun(result)
    assert after.status("web-0") == "Unschedulable"
    assert after.outcome("web-0").attempts == attempts  # the hint skipped node c
    # an operator releases the pod: kubectl annotate sts web sticky-node.kubesched.io/web-0-
    result.objects().patch(
        "apps/v1",
        "StatefulSet",
        "web",
        {"metadata": {"annotations": {STS_KEY.format(pod="web-0"): None}}},
        "default",
    )
    released = rerun(result)
    assert released.node("web-0") in ("a", "c")
    assert annotations_of(released, "apps/v1", "StatefulSet", "web") == {
        STS_KEY.format(pod="web-0"): released.node("web-0")
    }


def test_config_args_are_validated_through_the_profile() -> None:
    with pytest.raises(Exception, match=r"pluginConfig\[0\]\.args\.policy"):
        run_profile(
            PLUGINS,
            nodes=nodes("a"),
            pods=[sts_pod()],
            objects=[sts()],
            args={"StickyNode": {"policy": "sometimes"}},
        )


def test_custom_annotation_key() -> None:
    args = {"StickyNode": {"annotation": "example.com/home"}}
    owner = copy.deepcopy(sts(annotations={"home.example.com/web-0": "b"}))
    result = run_profile(
        PLUGINS,
        nodes=nodes("a", "b"),
        pods=[filler("b"), sts_pod()],
        objects=[owner],
        args=args,
        defaults=True,
    )
    assert result.node("web-0") == "b"
    vm = run_profile(
        PLUGINS,
        nodes=nodes("a", "b"),
        pods=[launcher_pod()],
        objects=vm_objects(),
        args=args,
        defaults=True,
    )
    assert annotations_of(vm, "kubevirt.io/v1", "VirtualMachine", "fedora") == {
        "example.com/home": vm.node("virt-launcher-fedora-abcde")
    }


def test_vmi_without_a_vm_is_sticky_only_when_it_opts_in() -> None:
    _vm, vmi = vm_objects()
    del vmi["metadata"]["ownerReferences"]
    plain = run_profile(
        PLUGINS, nodes=nodes("a", "b"), pods=[launcher_pod()], objects=[vmi], defaults=True
    )
    assert plain.status("virt-launcher-fedora-abcde") == "Scheduled"
    assert annotations_of(plain, "kubevirt.io/v1", "VirtualMachineInstance", "fedora") == {}

    vmi["metadata"]["annotations"] = {VM_KEY: "b"}
    pinned = run_profile(
        PLUGINS,
        nodes=nodes("a", "b"),
        pods=[filler("b"), launcher_pod()],
        objects=[vmi],
        defaults=True,
    )
    assert pinned.node("virt-launcher-fedora-abcde") == "b"
