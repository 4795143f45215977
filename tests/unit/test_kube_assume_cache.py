"""The informer cache as the scheduler's assume cache (Go's ``assumecache``): ``KubeObjects`` puts
each write's response into it and delivers the change itself; an older watch event or list never
undoes the scheduler's later write, and the watch event of its own write is not delivered twice."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.runtime.cluster.kubernetes.informers import Informer
from kubesched.runtime.cluster.kubernetes.objects import KubeObjects
from kubesched.runtime.objectstore import merge_patch
from kubesched.runtime.plugins.dynamicresources import DynamicResources
from kubesched.runtime.plugins.dynamicresources.manager import DraManager
from kubesched.sdk import Pod, QueueingHint

API = "resource.k8s.io/v1"
ALLOC = {
    "devices": {"results": [{"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
}
FINALIZER = "resource.kubernetes.io/delete-protection"


def _claim(rv: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": {"name": "c1", "namespace": "default", "uid": "u1", "resourceVersion": rv},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
        **extra,
    }


class _Server:
    """An API server of one claim: a PATCH checks and bumps its resourceVersion; a GET of the
    collection lists it; every written version is kept in ``history`` (what the watch sends)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.history: list[dict[str, Any]] = []

    def request(self, method: str, path: str, body: Any = None, **options: Any) -> Any:
        if method == "PATCH":
            b = copy.deepcopy(body)
            rv = b["metadata"].pop("resourceVersion")
            assert rv == self.obj["metadata"]["resourceVersion"]
            self.obj = merge_patch(self.obj, b)
            self.obj["metadata"]["resourceVersion"] = str(int(rv) + 1)
            self.history.append(copy.deepcopy(self.obj))
        elif method == "POST":
            self.obj = {**copy.deepcopy(body), "metadata": {**body["metadata"], "resourceVersion": "30"}}
            self.history.append(copy.deepcopy(self.obj))
        elif path.endswith("/resourceclaims"):
            return {"apiVersion": API, "items": [copy.deepcopy(self.obj)], "metadata": {"resourceVersion": self.obj["metadata"]["resourceVersion"]}}
        return copy.deepcopy(self.obj)


class _Cluster:
    def __init__(self, server: _Server) -> None:
        self.client = server
        self.informers: dict[str, Informer] = {}

    def resolve(self, api_version: str, kind: str) -> tuple[str, str, bool]:
        return (API, "resourceclaims", True)

    def informer_for(self, kind: str, api_version: str = "") -> Informer | None:
        return self.informers.get(kind)


Event = tuple[str, str | None, str | None]


def _setup(cached: dict[str, Any]) -> tuple[_Server, Informer, KubeObjects, list[Event]]:
    server = _Server(copy.deepcopy(cached))
    cluster = _Cluster(server)
    inf = Informer(server, "ResourceClaim", API, "resourceclaims")  # type: ignore[arg-type]
    inf.store["default/c1"] = copy.deepcopy(cached)
    inf.synced.set()
    events: list[Event] = []
    inf.attach(lambda etype, kind, old, new: events.append((etype, old and old["metadata"]["resourceVersion"], new and new["metadata"]["resourceVersion"])))
    events.clear()  # the replay of the store
    cluster.informers["ResourceClaim"] = inf
    return server, inf, KubeObjects(cluster), events  # type: ignore[arg-type]


def _cached_rv(inf: Informer) -> str:
    return str(inf.store["default/c1"]["metadata"]["resourceVersion"])


def test_an_older_watch_event_does_not_undo_the_schedulers_allocation() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    manager = DraManager(objs)
    # PreBind's two writes: the finalizer (rv 11), then the status with the allocation (rv 12)
    objs.patch(API, "ResourceClaim", "c1", {"metadata": {"finalizers": [FINALIZER]}}, "default", resource_version="10")
    objs.patch(API, "ResourceClaim", "c1", {"status": {"allocation": ALLOC}}, "default", resource_version="11", subresource="status")
    assert events == [("MODIFIED", "10", "11"), ("MODIFIED", "11", "12")]
    # the watch now delivers both writes, the older first: neither replaces the cached rv 12
    for obj in server.history:
        assert inf._handle({"type": "MODIFIED", "object": copy.deepcopy(obj)}) is True
    assert _cached_rv(inf) == "12"
    assert inf.resource_version == "12"
    assert manager.gather_allocated_state(False).allocated_devices == {("gpu.example.com", "n1", "gpu-0")}
    assert events == [("MODIFIED", "10", "11"), ("MODIFIED", "11", "12")]
    # a later change by someone else applies as before
    inf._handle({"type": "MODIFIED", "object": _claim("13")})
    assert _cached_rv(inf) == "13"
    assert events[-1] == ("MODIFIED", "12", "13")


def test_the_schedulers_own_deallocation_reaches_the_hints_once() -> None:
    server, inf, objs, events = _setup(_claim("10", metadata={"name": "c1", "namespace": "default", "uid": "u1", "resourceVersion": "10", "finalizers": [FINALIZER]}, status={"allocation": ALLOC}))
    delivered: list[tuple[Any, Any]] = []
    sink = inf.sink
    assert sink is not None
    inf.attach(lambda etype, kind, old, new: (sink(etype, kind, old, new), delivered.append((old, new))))
    events.clear()
    pl = DynamicResources()
    pl._manager = DraManager(objs)
    pod = Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "g", "resourceClaimName": "c1"}]}})
    # PostFilter deallocates the claim: the write itself delivers allocated -> free
    pl.manager.objects.patch(API, "ResourceClaim", "c1", {"status": {"reservedFor": None, "allocation": None, "devices": None}}, "default", resource_version="10", subresource="status")
    assert events == [("MODIFIED", "10", "11")]
    old, new = delivered[-1]
    assert old["status"]["allocation"] is not None
    assert new.get("status", {}).get("allocation") is None
    assert pl.is_schedulable_after_claim_change(pod, old, new) == QueueingHint.QUEUE
    # the watch event of the same write (rv 11) is not delivered again as old == new
    inf._handle({"type": "MODIFIED", "object": copy.deepcopy(server.history[-1])})
    assert events == [("MODIFIED", "10", "11")]


def test_a_created_object_is_delivered_as_added_once() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    created = objs.create({"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": "c2", "namespace": "default", "uid": "u2"}})
    assert created["metadata"]["resourceVersion"] == "30"
    assert events == [("ADDED", None, "30")]
    inf._handle({"type": "ADDED", "object": copy.deepcopy(server.history[-1])})
    assert events == [("ADDED", None, "30")]
    assert inf.store["default/c2"]["metadata"]["resourceVersion"] == "30"


def test_a_write_older_than_the_cache_is_not_remembered() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    inf._handle({"type": "MODIFIED", "object": _claim("15")})
    events.clear()
    objs._remember("ResourceClaim", _claim("12"))
    objs._remember("ResourceClaim", _claim("15"))
    assert _cached_rv(inf) == "15"
    assert events == []


def test_a_write_never_brings_back_an_object_the_cache_dropped() -> None:
    """As Go's Assume (ErrNotFound): the response of a patch that lands after the watch removed
    the object (deleted meanwhile, or a pod that finished and left the informer's selector) does
    not put it back, nor announce it as ADDED."""
    server, inf, objs, events = _setup(_claim("10"))
    inf._handle({"type": "DELETED", "object": _claim("10")})
    events.clear()
    objs._remember("ResourceClaim", _claim("11"))
    assert "default/c1" not in inf.store
    assert events == []


def test_a_delete_applies_whatever_its_version() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    objs.patch(API, "ResourceClaim", "c1", {"metadata": {"finalizers": [FINALIZER]}}, "default", resource_version="10")
    inf._handle({"type": "DELETED", "object": _claim("9")})
    assert "default/c1" not in inf.store
    assert events == [("MODIFIED", "10", "11"), ("DELETED", "11", None)]


def test_unparsable_versions_apply_as_before() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    inf._handle({"type": "MODIFIED", "object": _claim("x1")})
    inf._handle({"type": "MODIFIED", "object": _claim("5")})
    assert _cached_rv(inf) == "5"
    assert events == [("MODIFIED", "10", "x1"), ("MODIFIED", "x1", "5")]


def test_a_relist_keeps_the_schedulers_later_write() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    objs.patch(API, "ResourceClaim", "c1", {"metadata": {"finalizers": [FINALIZER]}}, "default", resource_version="10")
    server.obj = _claim("10")  # the list is served from a watch cache still at rv 10
    inf._list()
    assert _cached_rv(inf) == "11"
    assert inf.store["default/c1"]["metadata"]["finalizers"] == [FINALIZER]
    assert events == [("MODIFIED", "10", "11")]
    server.obj = _claim("14")  # a later list applies as before
    inf._list()
    assert _cached_rv(inf) == "14"
    assert events == [("MODIFIED", "10", "11"), ("MODIFIED", "11", "14")]


def test_peek_all_gives_the_cached_objects_themselves() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    peeked = objs.peek_all(API, "ResourceClaim")
    assert len(peeked) == 1
    assert peeked[0] is inf.store["default/c1"]
    assert objs.list(API, "ResourceClaim") == [inf.store["default/c1"]]


def test_peek_all_lists_from_the_server_without_an_informer() -> None:
    server, inf, objs, events = _setup(_claim("10"))
    objs._c.informers.clear()
    assert [o["metadata"]["resourceVersion"] for o in objs.peek_all(API, "ResourceClaim")] == ["10"]


@pytest.mark.parametrize(("cached", "new", "older"), [("12", "11", True), ("12", "12", True), ("12", "13", False), ("12", "x", False), (None, "1", False)])
def test_is_older(cached: str | None, new: str, older: bool) -> None:
    from kubesched.runtime.cluster.kubernetes.informers import is_older

    assert is_older(_claim(new), None if cached is None else _claim(cached)) is older


def test_peek_reads_the_cached_object_itself_and_none_when_absent() -> None:
    """KubeObjects.peek (the object store's peek): the informer's object without a copy, None
    for an object the cache does not hold (no API request); asynchronous preemption asks it
    whether a victim is gone."""
    server, inf, objs, _events = _setup(_claim("10"))
    server.request = None  # type: ignore[assignment,method-assign]  # any API request fails the test
    got = objs.peek(API, "ResourceClaim", "c1", "default")
    assert got is inf.store["default/c1"]
    assert objs.peek(API, "ResourceClaim", "c2", "default") is None
    inf._handle({"type": "DELETED", "object": _claim("11")})
    assert objs.peek(API, "ResourceClaim", "c1", "default") is None
