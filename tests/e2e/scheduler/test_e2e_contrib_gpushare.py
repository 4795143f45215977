"""GpuShare (kubesched-gpushare) on a real API server: nodes advertising ``nvidia.com/gpu`` and
``alibabacloud.com/gpu-milli`` with a GPU model label; a whole-GPU pod and two 500-milli pods
share a node's two devices (the two shares on one device, the whole GPU on the other), as the
``alibabacloud.com/gpu-index`` annotations on the API server show; GPU-model constraints; and a
restart of kubesched, whose new model is rebuilt from the bound pods' annotations, so the next
whole-GPU pod gets the device that is really free (a fresh assignment in pod order would name the
other one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from e2e_contrib import delete_pod_and_wait
from e2e_sched import GROUP_LABEL, Kubesched, scheduler_config, wait_bound, wait_event
from helpers import PAUSE_IMAGE, make_node, make_pod

GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_RESOURCE = "nvidia.com/gpu"
GPU_MODEL = "alibabacloud.com/gpu-card-model"
GPU_INDEX = "alibabacloud.com/gpu-index"


def gpu_profile(scheduler_name: str) -> dict[str, Any]:
    """kube-scheduler's default plugins plus GpuShare at every point it implements."""
    return {
        "schedulerName": scheduler_name,
        "plugins": {"multiPoint": {"enabled": [{"name": "GpuShare"}]}},
        "pluginConfig": [{"name": "GpuShare", "args": {"modelLabel": GPU_MODEL}}],
    }


def gpu_node(core_v1: Any, group: str, model: str, gpus: int) -> str:
    """A node of ``group`` with ``gpus`` GPUs of ``model`` (the device plugins' capacity)."""
    name = f"{group}-{model.lower()}"
    make_node(
        core_v1,
        name,
        labels={GROUP_LABEL: group, GPU_MODEL: model},
        extra_resources={GPU_RESOURCE: str(gpus), GPU_MILLI: str(1000 * gpus)},
    )
    return name


def gpu_pod(core_v1: Any, name: str, namespace: str, scheduler: str, group: str, model: str, resource: str, amount: str) -> None:
    """A pod of ``group`` asking ``amount`` of ``resource`` (requests = limits, as the API
    requires for extended resources) on a GPU of ``model``."""
    container = {
        "name": "main",
        "image": PAUSE_IMAGE,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi", resource: amount}, "limits": {resource: amount}},
    }
    make_pod(
        core_v1,
        name,
        namespace,
        scheduler_name=scheduler,
        node_selector={GROUP_LABEL: group},
        annotations={GPU_MODEL: model},
        spec_overrides={"containers": [container]},
    )


def devices(core_v1: Any, namespace: str, name: str) -> tuple[str, str | None]:
    pod = core_v1.read_namespaced_pod(name, namespace)
    return pod.spec.node_name, (pod.metadata.annotations or {}).get(GPU_INDEX)


def test_gpushare_devices_and_restart(
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    group = f"gpu-{test_id}"
    v100 = gpu_node(core_v1, group, "V100", 2)
    t4 = gpu_node(core_v1, group, "T4", 1)
    scheduler = f"gpushare-{test_id}"
    config = scheduler_config([gpu_profile(scheduler)])
    ks = run_kubesched(config)

    def place(name: str, model: str, resource: str, amount: str) -> tuple[str, str | None]:
        gpu_pod(core_v1, name, namespace, scheduler, group, model, resource, amount)
        wait_bound(core_v1, namespace, [name])
        return devices(core_v1, namespace, name)

    # 1. One pod at a time, so the order is known: a whole GPU takes device 0; two 500-milli
    # shares go together on device 1 (best fit: the second takes the device the first half
    # filled); a T4 pod goes to the T4 node.
    assert place("whole-1", "V100", GPU_RESOURCE, "1") == (v100, "0")
    assert place("share-1", "V100", GPU_MILLI, "500") == (v100, "1")
    assert place("share-2", "V100", GPU_MILLI, "500") == (v100, "1")
    assert place("t4-1", "T4", GPU_MILLI, "300") == (t4, "0")

    # 2. A model no node has: FailedScheduling with GpuShare's reason, kubesched keeps going.
    gpu_pod(core_v1, "a100", namespace, scheduler, group, "A100", GPU_MILLI, "100")
    ev = wait_event(events_v1, namespace, "a100", "FailedScheduling", timeout=30)
    assert "0/" in ev.note and "2 node(s) had a different GPU model" in ev.note, ev.note

    # 3. kubesched stops; the whole-GPU pod goes away (device 0 is free, device 1 is full).
    assert ks.terminate() == 0
    delete_pod_and_wait(core_v1, "whole-1", namespace)
    delete_pod_and_wait(core_v1, "a100", namespace)

    # 4. A new kubesched: its devices come from the annotations, so the next whole GPU gets
    # device 0 (assigned afresh in pod order, the two shares would sit on device 0 and it would
    # get device 1), and a share no longer fits on the V100 node.
    run_kubesched(config, name="kubesched-restarted")
    assert place("whole-2", "V100", GPU_RESOURCE, "1") == (v100, "0")
    gpu_pod(core_v1, "share-3", namespace, scheduler, group, "V100", GPU_MILLI, "500")
    ev = wait_event(events_v1, namespace, "share-3", "FailedScheduling", timeout=30)
    assert "1 node(s) did not have a GPU with enough free share" in ev.note, ev.note
    assert "1 node(s) had a different GPU model" in ev.note, ev.note
    assert devices(core_v1, namespace, "share-3") == (None, None)
    assert devices(core_v1, namespace, "share-1") == (v100, "1")
    assert devices(core_v1, namespace, "share-2") == (v100, "1")
