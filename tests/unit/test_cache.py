"""The scheduler cache: NodeInfo running totals through add/remove/assume/forget, snapshots, and
never binding a pod twice."""

from __future__ import annotations

import pytest

from kubesched.runtime.cache import Cache
from kubesched.sdk import Node, Pod, Status, hookimpl
from kubesched.testing import make_node, make_pod

Gi = 1024**3
Mi = 1024**2


def _node(name: str = "n1", zone: str | None = None) -> Node:
    w = make_node().name(name).capacity(cpu="4", memory="8Gi")
    if zone:
        w.label("topology.kubernetes.io/zone", zone)
    return w.node()


def _pod(
    name: str,
    node: str | None = "n1",
    cpu: str | None = "500m",
    memory: str | None = "1Gi",
    port: int | None = None,
) -> Pod:
    w = make_pod().name(name).uid(name)
    reqs = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    if reqs:
        w.req(reqs)
    if port:
        w.host_port(port)
    if node:
        w.node(node)
    return w.pod()


def _totals(cache: Cache, node: str = "n1") -> tuple[int, int, int, int, int]:
    ni = cache.node_info(node)
    assert ni is not None
    return (
        ni.requested.milli_cpu,
        ni.requested.memory,
        ni.non_zero_requested.milli_cpu,
        ni.non_zero_requested.memory,
        len(ni.pods),
    )


def test_running_totals_add_remove():
    c = Cache()
    c.add_node(_node())
    assert _totals(c) == (0, 0, 0, 0, 0)
    a = _pod("a")
    c.add_pod(a)
    assert _totals(c) == (500, Gi, 500, Gi, 1)
    b = _pod("b", cpu=None, memory=None)
    c.add_pod(b)
    assert _totals(c) == (500, Gi, 600, Gi + 200 * Mi, 2)
    c.remove_pod(a)
    assert _totals(c) == (0, 0, 100, 200 * Mi, 1)
    c.remove_pod(b)
    assert _totals(c) == (0, 0, 0, 0, 0)
    assert c.pod_count() == 0


def test_assume_then_forget_restores_totals():
    c = Cache()
    c.add_node(_node())
    c.add_pod(_pod("running", cpu="1"))
    assumed = _pod("new", cpu="2", port=8080)
    c.assume_pod(assumed)
    assert c.is_assumed("new")
    assert _totals(c)[0] == 3000
    assert c.node_info("n1").used_ports.check_conflict("0.0.0.0", "TCP", 8080)
    c.forget_pod("new")
    assert not c.is_assumed("new")
    assert not c.has_pod("new")
    assert _totals(c)[0] == 1000
    assert not c.node_info("n1").used_ports.check_conflict("0.0.0.0", "TCP", 8080)


def test_assume_then_confirm_counts_once():
    c = Cache()
    c.add_node(_node())
    c.assume_pod(_pod("p", cpu="1"))
    c.add_pod(_pod("p", cpu="1"))  # the bound pod arrives from the cluster
    assert not c.is_assumed("p")
    assert _totals(c) == (1000, Gi, 1000, Gi, 1)
    c.forget_pod("p")  # no longer assumed: nothing happens
    assert _totals(c) == (1000, Gi, 1000, Gi, 1)


def test_assume_confirmed_on_another_node_moves_accounting():
    c = Cache()
    c.add_node(_node("n1"))
    c.add_node(_node("n2"))
    c.assume_pod(_pod("p", node="n1", cpu="1"))
    c.add_pod(_pod("p", node="n2", cpu="1"))
    assert _totals(c, "n1")[0] == 0
    assert _totals(c, "n2")[0] == 1000


def test_cannot_assume_a_pod_already_in_cache():
    c = Cache()
    c.add_node(_node())
    c.add_pod(_pod("p"))
    with pytest.raises(ValueError):
        c.assume_pod(_pod("p"))
    assert _totals(c)[4] == 1


def test_update_pod_replaces_requests():
    c = Cache()
    c.add_node(_node())
    c.add_pod(_pod("p", cpu="1"))
    c.add_pod(_pod("p", cpu="3"))  # an update of the assigned pod
    assert _totals(c)[0] == 3000
    assert c.pod_count() == 1


def test_pod_on_unknown_node_then_node_arrives():
    c = Cache()
    c.add_pod(_pod("p", node="late", cpu="1"))
    c.add_node(_node("late"))
    assert _totals(c, "late")[0] == 1000
    assert c.node_count() == 1


def test_remove_node_with_pods_keeps_accounting_until_pods_go():
    c = Cache()
    c.add_node(_node())
    p = _pod("p")
    c.add_pod(p)
    c.remove_node("n1")
    assert c.node_count() == 0
    assert [ni.name for ni in c.update_snapshot().list()] == []
    assert c.node_info("n1") is not None  # pods still accounted
    c.remove_pod(p)
    assert c.node_info("n1") is None


def test_snapshot_reflects_assumed_pods_and_zones_interleave():
    c = Cache()
    for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("a3", "a"), ("b2", "b")]:
        c.add_node(_node(name, zone))
    snap = c.update_snapshot()
    assert [ni.name for ni in snap.list()] == ["a1", "b1", "a2", "b2", "a3"]
    c.assume_pod(_pod("p", node="b1", cpu="1"))
    assert c.update_snapshot().get("b1").requested.milli_cpu == 1000


def test_pod_is_never_bound_twice(ks, calls):
    """Someone else binds the pod while we are in PreBind: our Bind gets a conflict, which is not
    retried, and the pod ends up accounted once, on the node the cluster says."""

    class Race:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def pre_bind(self, pod, node_name):
            calls.append(("pre_bind", node_name))
            other = "n2" if node_name == "n1" else "n1"
            self.handle.objects.patch(
                "v1", "Pod", pod.name, {"spec": {"nodeName": other}}, pod.namespace
            )

    class CountingBinder:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def bind(self, pod, node_name):
            calls.append(("bind", node_name))
            try:
                self.handle.bind_pod(pod, node_name)
            except Exception as e:
                return Status.from_exception(e)

    class Unres:
        @hookimpl
        def reserve(self):
            pass

        @hookimpl
        def unreserve(self, pod):
            calls.append(("unreserve", pod.name))

    r = ks.run(
        {"Race": Race, "CountingBinder": CountingBinder, "Unres": Unres},
        {"reserve": ["Unres"], "preBind": ["Race"], "bind": ["CountingBinder"]},
        ks.nodes(2) + [ks.pod("p", cpu="1")],
    )
    assert [c for c in calls if c[0] == "bind"] and len([c for c in calls if c[0] == "bind"]) == 1
    assert r.cluster.binds == []  # our bind never went through
    stored = r.cluster.store.get("v1", "Pod", "p", "default")
    chosen = next(c[1] for c in calls if c[0] == "pre_bind")
    other = "n2" if chosen == "n1" else "n1"
    assert stored["spec"]["nodeName"] == other
    cache = r.scheduler.cache
    assert not cache.is_assumed("p")
    assert cache.node_info(other).requested.milli_cpu == 1000
    assert cache.node_info(chosen).requested.milli_cpu == 0
    # our binding cycle failed (the binder's error is no conflict status): never reported
    # Scheduled, but the report says where the cluster put the pod
    res = r.result("p")
    assert res.status == "Error"
    assert res.node == other
    assert res.message.endswith(f"(yet the pod is bound to node {other})")
    assert r.result("p").node == other
    assert ("unreserve", "p") in calls
    assert not r.scheduler.queue.contains("p")
