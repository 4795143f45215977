"""The simulated cluster's and the event path's shortcuts (issue 14, zone S) give what the long
way gives: the store's read-only patch, its per-kind write counts, and the DeviceClass resolver
that skips its re-read while no DeviceClass was written (on the store and on the real cluster's
informer cache)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.runtime.cluster.kubernetes.informers import Informer
from kubesched.runtime.cluster.kubernetes.objects import KubeObjects
from kubesched.runtime.dra.deviceclasses import (
    DEVICE_CLASS_API_VERSION,
    DEVICE_CLASS_PREFIX,
    DeviceClassResolver,
)
from kubesched.runtime.objectstore import ObjectInvalid, ObjectStore, merge_patch
from kubesched.runtime.plugins.queuesort import PrioritySort
from kubesched.runtime.queue import SchedulingQueue
from kubesched.runtime.scheduler import SimClock
from kubesched.runtime.sim.measure import Recorder
from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    ObjectNotFound,
    QueueingHint,
    Status,
)
from kubesched.sdk.readonly import READ_ONLY_MESSAGE, ReadOnlyDict, ReadOnlyList
from kubesched.testing import make_pod

DC = "DeviceClass"


def _pod(name: str = "p") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending", "nominatedNodeName": "n0", "conditions": [{"type": "PodScheduled", "status": "False"}]},
    }


def _device_class(name: str, extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {} if extended is None else {"extendedResourceName": extended}
    return {"apiVersion": DEVICE_CLASS_API_VERSION, "kind": DC, "metadata": {"name": name}, "spec": spec}


# the store's patch --------------------------------------------------------------------------------
BIND = {
    "spec": {"nodeName": "n1"},
    "status": {"conditions": [{"type": "PodScheduled", "status": "True"}], "phase": "Running", "nominatedNodeName": None},
}


def _read_only_all_through(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is ReadOnlyDict and all(_read_only_all_through(v) for v in value.values())
    if isinstance(value, list):
        return type(value) is ReadOnlyList and all(_read_only_all_through(v) for v in value)
    return True


def test_a_patch_stores_what_merge_patch_gives_read_only_through_and_in_the_same_key_order() -> None:
    store = ObjectStore()
    old = store.create(_pod())
    patch = copy.deepcopy(BIND)
    new = store.apply_patch("v1", "Pod", "p", patch, "default")
    want = merge_patch(old, BIND)
    want["metadata"] = {**want["metadata"], "resourceVersion": "2"}
    assert new == want
    assert list(new) == list(want) and list(new["status"]) == list(want["status"]) == ["phase", "conditions"]
    assert _read_only_all_through(new)
    assert store.peek("v1", "Pod", "p", "default") is new
    # the caller's patch is not shared: changing it afterwards leaves the stored object as it was
    patch["status"]["conditions"][0]["status"] = "changed"
    assert new["status"]["conditions"] == [{"type": "PodScheduled", "status": "True"}]
    # what the patch did not touch is shared with the old object
    assert new["spec"]["containers"] is old["spec"]["containers"]
    with pytest.raises(TypeError) as ei:
        new["status"]["conditions"][0]["status"] = "x"
    assert str(ei.value) == READ_ONLY_MESSAGE
    # patch() still hands out a mutable copy
    copied = store.patch("v1", "Pod", "p", {"metadata": {"labels": {"a": "b"}}}, "default")
    copied["spec"]["nodeName"] = "n2"
    assert store.peek("v1", "Pod", "p", "default")["spec"]["nodeName"] == "n1"


# the per-kind write counts ------------------------------------------------------------------------
def test_kind_generation_counts_every_write_of_a_kind_and_only_of_that_kind() -> None:
    store = ObjectStore()
    assert store.kind_generation(DEVICE_CLASS_API_VERSION, DC) == 0
    store.create(_device_class("a"))
    assert store.kind_generation(DEVICE_CLASS_API_VERSION, DC) == 1
    store.create(_pod())
    store.apply_patch("v1", "Pod", "p", BIND, "default")
    store.delete("v1", "Pod", "p", "default")
    assert store.kind_generation(DEVICE_CLASS_API_VERSION, DC) == 1
    assert store.kind_generation("v1", "Pod") == 3
    store.patch(DEVICE_CLASS_API_VERSION, DC, "a", {"spec": {"extendedResourceName": "example.com/gpu"}})
    store.update({**_device_class("a"), "metadata": {"name": "a"}})
    store.delete(DEVICE_CLASS_API_VERSION, DC, "a")
    assert store.kind_generation(DEVICE_CLASS_API_VERSION, DC) == 4
    # the group counts: another group's kind of the same name is another kind
    assert store.kind_generation("v1", DC) == 0


def test_a_refused_write_is_not_counted() -> None:
    store = ObjectStore()
    store.create(_device_class("a"))

    def refuse(old: Any, new: Any) -> None:
        raise ObjectInvalid('DeviceClass.resource.k8s.io "a" is invalid: spec: Forbidden')

    store.add_validator(DEVICE_CLASS_API_VERSION, DC, refuse)
    with pytest.raises(ObjectInvalid) as ei:
        store.apply_patch(DEVICE_CLASS_API_VERSION, DC, "a", {"spec": {"x": 1}})
    assert str(ei.value) == 'DeviceClass.resource.k8s.io "a" is invalid: spec: Forbidden'
    with pytest.raises(ObjectNotFound) as nf:
        store.delete(DEVICE_CLASS_API_VERSION, DC, "b")
    assert str(nf.value) == 'DeviceClass "b" not found'
    assert store.kind_generation(DEVICE_CLASS_API_VERSION, DC) == 1


# the DeviceClass resolver -------------------------------------------------------------------------
class _CountingReads:
    """An object client over a store that counts the resolver's reads of the DeviceClasses."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.reads = 0
        self.kind_generation = store.kind_generation

    def peek_all(self, api_version: str, kind: str) -> list[Any]:
        self.reads += 1
        return self.store.peek_all(api_version, kind)


def test_the_resolver_reads_the_device_classes_again_only_after_one_was_written() -> None:
    store = ObjectStore()
    client = _CountingReads(store)
    r = DeviceClassResolver(client)
    r.refresh()
    r.refresh()
    assert client.reads == 1  # nothing written in between: the second refresh reads nothing
    store.create(_pod())  # another kind
    r.refresh()
    assert client.reads == 1
    store.create(_device_class("gpu", "example.com/gpu"))
    r.refresh()
    assert client.reads == 2
    assert r.get_device_class("example.com/gpu") is store.peek(DEVICE_CLASS_API_VERSION, DC, "gpu")
    r.refresh()
    assert client.reads == 2
    store.apply_patch(DEVICE_CLASS_API_VERSION, DC, "gpu", {"spec": {"extendedResourceName": "example.com/tpu"}})
    r.refresh()
    assert client.reads == 3
    assert r.get_device_class("example.com/gpu") is None
    assert r.get_extended_resource("gpu") == "example.com/tpu"
    store.delete(DEVICE_CLASS_API_VERSION, DC, "gpu")
    r.refresh()
    assert client.reads == 4
    assert r.get_device_class(DEVICE_CLASS_PREFIX + "gpu") is None
    assert not r


def test_the_resolver_reads_every_time_from_a_client_that_does_not_count() -> None:
    store = ObjectStore()
    client = _CountingReads(store)
    del client.kind_generation
    r = DeviceClassResolver(client)
    store.create(_device_class("gpu"))
    r.refresh()
    r.refresh()
    assert client.reads == 2
    assert r.get_device_class(DEVICE_CLASS_PREFIX + "gpu") is store.peek(DEVICE_CLASS_API_VERSION, DC, "gpu")


# the real cluster's informer cache ----------------------------------------------------------------
class _Server:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def request(self, method: str, path: str, body: Any = None, **options: Any) -> Any:
        return {"apiVersion": DEVICE_CLASS_API_VERSION, "items": copy.deepcopy(self.items), "metadata": {"resourceVersion": "5"}}


class _Cluster:
    def __init__(self, server: _Server, inf: Informer) -> None:
        self.client = server
        self.informers = {DC: inf}

    def resolve(self, api_version: str, kind: str) -> tuple[str, str, bool]:
        return (DEVICE_CLASS_API_VERSION, "deviceclasses", False)

    def informer_for(self, kind: str, api_version: str = "") -> Informer | None:
        return self.informers.get(kind)


def _versioned(name: str, rv: str, extended: str | None = None) -> dict[str, Any]:
    o = _device_class(name, extended)
    o["metadata"] = {"name": name, "uid": "u-" + name, "resourceVersion": rv}
    return o


def test_kube_objects_count_the_informer_caches_changes_and_the_resolver_follows_them() -> None:
    server = _Server()
    inf = Informer(server, DC, DEVICE_CLASS_API_VERSION, "deviceclasses")  # type: ignore[arg-type]
    objs = KubeObjects(_Cluster(server, inf))  # type: ignore[arg-type]
    assert objs.kind_generation(DEVICE_CLASS_API_VERSION, DC) is None  # not synced: no count
    inf._list()
    g0 = objs.kind_generation(DEVICE_CLASS_API_VERSION, DC)
    assert g0 is not None
    r = DeviceClassResolver(objs)
    r.refresh()
    assert not r
    inf._handle({"type": "ADDED", "object": _versioned("gpu", "6", "example.com/gpu")})
    g1 = objs.kind_generation(DEVICE_CLASS_API_VERSION, DC)
    assert g1 != g0
    r.refresh()
    assert r.get_extended_resource("gpu") == "example.com/gpu"
    # a watch event older than the cache changes nothing, and is not counted
    inf._handle({"type": "MODIFIED", "object": _versioned("gpu", "6", "example.com/other")})
    assert objs.kind_generation(DEVICE_CLASS_API_VERSION, DC) == g1
    # a relist that finds the class gone deletes it
    server.items = []
    inf._list()
    assert objs.kind_generation(DEVICE_CLASS_API_VERSION, DC) != g1
    r.refresh()
    assert r.get_device_class("example.com/gpu") is None
    # an informer that may not list the kind gives no count
    inf.forbidden = True
    assert objs.kind_generation(DEVICE_CLASS_API_VERSION, DC) is None


# the queue: pods rejected only by plugins deaf to an event ---------------------------------------
def test_an_event_moves_no_pod_rejected_only_by_plugins_that_registered_other_events() -> None:

    node_add = ClusterEvent(EventResource.NODE.value, ActionType.ADD)
    pod_add = ClusterEvent(EventResource.ASSIGNED_POD.value, ActionType.ADD)
    hinted: list[str] = []

    def hint(pod: Any, old: Any, new: Any) -> QueueingHint:
        hinted.append(pod.name)
        return QueueingHint.QUEUE if pod.name != "skipped" else QueueingHint.SKIP

    events = {"Deaf": [ClusterEventWithHint(node_add, hint)], "Hinted": [ClusterEventWithHint(pod_add, hint)], "Silent": []}
    q = SchedulingQueue(PrioritySort().queue_sort_less, SimClock(1000.0), events={"test": events})
    rejectors = {
        "deaf": ({"Deaf"}, set()),
        "deaf-and-silent": ({"Deaf", "Silent"}, set()),
        "deaf-pending": ({"Deaf"}, {"Deaf"}),
        "hinted": ({"Deaf", "Hinted"}, set()),
        "skipped": ({"Hinted"}, set()),
        "unregistered": ({"Deaf", "Other"}, set()),
    }
    for name in rejectors:
        q.add(make_pod().name(name).uid(name).scheduler_name("test").pod())
    for _ in rejectors:
        qpi = q.pop()
        assert qpi is not None
        plugins, pending = rejectors[qpi.pod.name]
        q.requeue_failed(qpi, Status.unschedulable("no"), plugins, pending)
    assert q.move_all_to_active_or_backoff(pod_add, None, None) == 2
    assert sorted(p.pod.name for p in q.unschedulable_pods()) == ["deaf", "deaf-and-silent", "deaf-pending", "skipped"]
    assert sorted(hinted) == ["hinted", "skipped"]  # the deaf plugin's hint is never asked
    # the same pods and a Node add: the deaf plugin hears it
    assert q.move_all_to_active_or_backoff(node_add, None, None) == 3
    assert [p.pod.name for p in q.unschedulable_pods()] == ["skipped"]


# the recorder: one sample per virtual time ------------------------------------------------------
def test_the_recorder_samples_the_totals_each_time_as_its_last_event_left_them() -> None:

    clock = SimClock(1000.0)
    rec = Recorder(clock, 1000.0, ["default-scheduler"])
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "1Gi"}}}
    pod = {**_pod(), "metadata": {"name": "p", "namespace": "default", "uid": "u1"}}
    pod["spec"] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}
    rec.on_event("ADDED", "Node", None, node)
    rec.on_event("ADDED", "Pod", None, pod)
    rec.on_event("ADDED", "ConfigMap", None, {"metadata": {"name": "c"}})  # not counted
    clock.advance_to(1002.5)
    bound = {**pod, "spec": {**pod["spec"], "nodeName": "n1"}}
    rec.on_event("MODIFIED", "Pod", pod, bound)
    clock.advance_to(1003.0)
    rec.on_event("DELETED", "Pod", bound, None)
    rec.finish(4.0)
    alloc = {"cpu": 4.0, "memory": float(1 << 30)}
    # (t, nodes, pending, running, allocatable, requested, arrived)
    assert rec._samples == [
        (0.0, 1, 1, 0, alloc, {}, 1),
        (2.5, 1, 0, 1, alloc, {"cpu": 1.0}, 1),
        (3.0, 1, 0, 0, alloc, {"cpu": 0.0}, 1),
        (4.0, 1, 0, 0, alloc, {"cpu": 0.0}, 1),
    ]
    assert rec.waits == [2.5]


# rfc3339 of the virtual clock's times -------------------------------------------------------------
def test_rfc3339_of_given_times_formats_each_second_right_whatever_came_before() -> None:
    import time

    from kubesched.runtime.timefmt import rfc3339

    assert rfc3339(86400.25) == "1970-01-02T00:00:00Z"
    assert rfc3339(86400.75, micro=True) == "1970-01-02T00:00:00.750000Z"
    assert rfc3339(86401.0) == "1970-01-02T00:00:01Z"
    assert rfc3339(0.5) == "1970-01-01T00:00:00Z"
    now = rfc3339()  # the wall clock's cache is its own
    assert now[:4] == time.strftime("%Y", time.gmtime()) and now.endswith("Z")
    assert rfc3339(0.9) == "1970-01-01T00:00:00Z"
    assert rfc3339(86400.5) == "1970-01-02T00:00:00Z"
