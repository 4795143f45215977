"""Shared helpers for the framework/scheduler unit tests.

Everything is exposed through the ``ks`` fixture (a namespace of helpers), so that test modules
do not import this file. A typical test::

    def test_x(ks):
        class A:
            @hookimpl
            def filter(self, node_info): ...
        run = ks.run({"A": A}, {"filter": ["A"]}, ks.nodes(3) + [ks.pod("p")])
        assert run.result("p").node == "n1"

Profiles are made only of the given plugins plus PrioritySort and DefaultBinder: the default
plugins are ported concurrently and may not load.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from kubesched.runtime.cluster.simulated import SimulatedCluster
from kubesched.runtime.config import load_config_data
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import PodResult, Scheduler
from kubesched.testing import make_node, make_pod

SCHEDULER_NAME = "test"


@functools.cache
def _discovered() -> Registry:
    return Registry.discover(allow=None)


def registry(plugins: Mapping[str, Any] | None = None) -> Registry:
    """A fresh registry: the discovered plugins plus ``plugins`` registered in-process."""
    reg = _discovered().copy()
    for name, factory in (plugins or {}).items():
        reg.register(name, factory)
    return reg


def _refs(items: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for it in items:
        if isinstance(it, tuple):
            out.append({"name": it[0], "weight": it[1]})
        else:
            out.append({"name": it})
    return out


def config_dict(
    points: Mapping[str, Sequence[Any]],
    *,
    name: str = SCHEDULER_NAME,
    percentage: int | None = None,
    global_percentage: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A KubeSchedulerConfiguration with one profile made only of ``points``.

    ``points`` maps an extension point (camelCase) to plugin names, or ``(name, weight)``
    tuples for score. queueSort defaults to PrioritySort and bind to DefaultBinder.
    """
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]}}
    pts = dict(points)
    pts.setdefault("queueSort", ["PrioritySort"])
    pts.setdefault("bind", ["DefaultBinder"])
    for point, items in pts.items():
        plugins[point] = {"enabled": _refs(items)}
    profile: dict[str, Any] = {"schedulerName": name, "plugins": plugins}
    if percentage is not None:
        profile["percentageOfNodesToScore"] = percentage
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
    if global_percentage is not None:
        doc["percentageOfNodesToScore"] = global_percentage
    doc.update(extra or {})
    return doc


def config_yaml(points: Mapping[str, Sequence[Any]], **kw: Any) -> str:
    return yaml.safe_dump(config_dict(points, **kw), sort_keys=False)


def load_cfg(points: Mapping[str, Sequence[Any]], reg: Registry | None = None, **kw: Any) -> Any:
    reg = reg or registry()
    return load_config_data(config_yaml(points, **kw), installed_plugins=reg.names())


def nodes(
    n: int = 3,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    prefix: str = "n",
    labels: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``n`` node manifests named n1..n<n>."""
    out = []
    for i in range(1, n + 1):
        w = make_node().name(f"{prefix}{i}").capacity(cpu=cpu, memory=memory)
        if labels:
            w.labels(labels)
        out.append(w.obj())
    return out


def node(
    name: str, *, cpu: str = "4", memory: str = "8Gi", labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    w = make_node().name(name).capacity(cpu=cpu, memory=memory)
    if labels:
        w.labels(labels)
    return w.obj()


def pod(
    name: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    uid: str | None = None,
    scheduler: str = SCHEDULER_NAME,
    node_name: str | None = None,
    priority: int | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """A pod manifest for the ``test`` profile; uid defaults to the pod's name."""
    w = make_pod().name(name).uid(uid or name).scheduler_name(scheduler)
    reqs = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    if reqs:
        w.req(reqs)
    if node_name:
        w.node(node_name)
    if priority is not None:
        w.priority(priority)
    if labels:
        w.labels(labels)
    for k, v in (annotations or {}).items():
        w.annotation(k, v)
    if created:
        w.creation_timestamp(created)
    return w.obj()


class Run:
    """A finished (or started) simulated run."""

    def __init__(self, scheduler: Scheduler, cluster: SimulatedCluster) -> None:
        self.scheduler = scheduler
        self.cluster = cluster

    @property
    def results(self) -> dict[str, PodResult]:
        return self.scheduler.results

    def result(self, name: str, namespace: str = "default") -> PodResult:
        for r in self.scheduler.results.values():
            if r.name == name and r.namespace == namespace:
                return r
        raise KeyError(
            f"no result for {namespace}/{name}: {sorted(r.name for r in self.scheduler.results.values())}"
        )

    def placements(self) -> dict[str, str | None]:
        return {r.name: r.node for r in self.scheduler.results.values()}

    @property
    def framework(self) -> Any:
        return self.scheduler.frameworks[SCHEDULER_NAME]

    def events(self, reason: str | None = None) -> list[Any]:
        return [e for e in self.cluster.events if reason is None or e.reason == reason]

    def bound(self) -> dict[str, str]:
        return {k.split("/", 1)[1]: n for k, n in self.cluster.binds}

    def settle(self) -> None:
        self.scheduler.run_until_idle()

    def start(self) -> Run:
        """Subscribe the scheduler and create every manifest at once (no file-order pacing)."""
        self.cluster.start(self.scheduler.on_cluster_event)
        for m in self.cluster.manifests:
            self.cluster.store.create(m)
        self.settle()
        return self

    def create(self, obj: Mapping[str, Any]) -> None:
        self.cluster.store.create(dict(obj))
        self.settle()


def build(
    plugins: Mapping[str, Any],
    points: Mapping[str, Sequence[Any]],
    manifests: Sequence[Mapping[str, Any]],
    *,
    seed: int | None = 1,
    executor: Any = None,
    tracer: Any = None,
    simulated: bool = True,
    **cfg_kw: Any,
) -> Run:
    """Build a scheduler over a simulated cluster, without running it."""
    reg = registry(plugins)
    cfg = load_config_data(config_yaml(points, **cfg_kw), installed_plugins=reg.names())
    cluster = SimulatedCluster([dict(m) for m in manifests])
    sched = Scheduler(
        cfg, reg, cluster, simulated=simulated, seed=seed, executor=executor, tracer=tracer
    )
    return Run(sched, cluster)


def run(
    plugins: Mapping[str, Any],
    points: Mapping[str, Sequence[Any]],
    manifests: Sequence[Mapping[str, Any]],
    **kw: Any,
) -> Run:
    """Build and run to completion (``SimulatedCluster.run``)."""
    r = build(plugins, points, manifests, **kw)
    r.cluster.run(r.scheduler)
    return r


@pytest.fixture
def ks() -> SimpleNamespace:
    """Helpers for building profiles, manifests and simulated runs."""
    return SimpleNamespace(
        SCHEDULER_NAME=SCHEDULER_NAME,
        registry=registry,
        config_dict=config_dict,
        config_yaml=config_yaml,
        load_cfg=load_cfg,
        nodes=nodes,
        node=node,
        pod=pod,
        build=build,
        run=run,
        Run=Run,
    )


@pytest.fixture
def calls() -> list[Any]:
    """A recording list test plugins append to."""
    return []
