"""Builders shared by the Coscheduling tests (a uniquely named module, imported by the tests)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.sdk import Pod, QueuedPodInfo, Status
from kubesched.testing import RunResult, make_node, make_pod, run_profile
from kubesched_coscheduling import API_VERSION, POD_GROUP_LABEL, Coscheduling

PLUGINS = {"Coscheduling": Coscheduling}
PROFILE = "gang-scheduler"
T0 = "2024-01-01T00:00:00Z"


def config(args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """kube-scheduler's default profile with Coscheduling added, as in the README: enabled
    through multiPoint, and the one QueueSort instead of PrioritySort."""
    profile: dict[str, Any] = {
        "schedulerName": PROFILE,
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]},
        },
    }
    if args is not None:
        profile["pluginConfig"] = [{"name": "Coscheduling", "args": dict(args)}]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


def pod_group(
    name: str,
    min_member: int,
    *,
    namespace: str = "default",
    created: str | None = T0,
    **spec: Any,
) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    if created is not None:
        md["creationTimestamp"] = created
    return {"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": md, "spec": {"minMember": min_member, **spec}}


def node(name: str, cpu: str = "1") -> dict[str, Any]:
    return make_node().name(name).capacity(cpu=cpu, memory="4Gi").ready().obj()


def member(
    name: str,
    group: str,
    *,
    cpu: str = "1",
    created: str | None = None,
    namespace: str = "default",
    node_name: str = "",
    gates: Iterable[str] = (),
) -> dict[str, Any]:
    w = (
        make_pod()
        .name(name)
        .namespace(namespace)
        .uid(f"uid-{namespace}-{name}")
        .label(POD_GROUP_LABEL, group)
        .req(cpu=cpu)
        .scheduler_name(PROFILE)
    )
    if created is not None:
        w = w.creation_timestamp(created)
    if node_name:
        w = w.node(node_name)
    if gates:
        w = w.scheduling_gates(list(gates))
    return w.obj()


def solo(name: str, *, cpu: str = "1", created: str | None = None) -> dict[str, Any]:
    w = make_pod().name(name).uid(f"uid-default-{name}").req(cpu=cpu).scheduler_name(PROFILE)
    if created is not None:
        w = w.creation_timestamp(created)
    return w.obj()


def run(
    *,
    nodes: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    objects: Iterable[Mapping[str, Any]] = (),
    args: Mapping[str, Any] | None = None,
) -> RunResult:
    return run_profile(PLUGINS, nodes=nodes, pods=pods, objects=objects, config=config(args))


def rerun(result: RunResult) -> RunResult:
    """Schedule until idle again (after a change to the cluster) and return fresh outcomes."""
    result.scheduler.run_until_idle()
    return RunResult(result.scheduler, result.cluster, result.tracer)


def advance(result: RunResult, seconds: float) -> None:
    clock = result.scheduler.clock
    clock.advance_to(clock.now() + seconds)


def bound(result: RunResult, *pods: str) -> dict[str, str | None]:
    """pod -> node as the cluster has it (spec.nodeName), for the given pod names."""
    out: dict[str, str | None] = {}
    for name in pods:
        obj = result.cluster.store.get("v1", "Pod", name, "default")
        out[name] = (obj.get("spec") or {}).get("nodeName") or None
    return out


def first_attempt_order(result: RunResult) -> list[str]:
    """Pod names in the order of their first PreFilter call (the queue's pop order)."""
    seen: list[str] = []
    for _point, plugin, pod, _node in result.calls(point="PreFilter"):
        if plugin == "Coscheduling" and pod not in seen:
            seen.append(pod)
    return [p.split("/", 1)[1] for p in seen]


class FakeWaitingPod:
    """A WaitingPod for direct hook calls: records allow/reject."""

    def __init__(self, pod: Mapping[str, Any] | Pod, pending: Iterable[str] = ("Coscheduling",)) -> None:
        self._pod = pod if isinstance(pod, Pod) else Pod(pod)
        self.pending = list(pending)
        self.allowed_by: list[str] = []
        self.rejected: list[tuple[str, str]] = []

    @property
    def pod(self) -> Pod:
        return self._pod

    def pending_plugins(self) -> list[str]:
        return list(self.pending)

    def allow(self, plugin: str) -> None:
        self.allowed_by.append(plugin)
        if plugin in self.pending:
            self.pending.remove(plugin)

    def reject(self, plugin: str, message: str) -> None:
        self.rejected.append((plugin, message))


def qpi(pod: Mapping[str, Any], timestamp: float, initial: float | None = None) -> QueuedPodInfo:
    q = QueuedPodInfo(Pod(pod), timestamp)
    q.initial_attempt_timestamp = initial
    return q


def reasons(st: Status | None) -> list[str]:
    return [] if st is None else list(st.reasons)
