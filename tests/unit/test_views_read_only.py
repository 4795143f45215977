"""Pod, Node and NodeInfo are read-only views (issue 11, "Immutable views").

Every way a plugin could write into a view (item assignment, del, the dict and list mutators,
attribute assignment, nested mappings of raw/spec/status/metadata, the Resource totals,
``node_info.pods``, image states, used ports, the NodeInfo mutators of a snapshot NodeInfo)
raises ``TypeError`` with a message that says where to write instead; a whole scheduling run
with a plugin that tries them all leaves the cluster's objects and the next pods unchanged.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from kubesched.sdk import Node, NodeInfo, Pod, Resource, hookimpl
from kubesched.sdk.objects import (
    NODE_INFO_READ_ONLY_MESSAGE,
    NODE_READ_ONLY_MESSAGE,
    POD_READ_ONLY_MESSAGE,
    RESOURCE_READ_ONLY_MESSAGE,
)
from kubesched.sdk.readonly import READ_ONLY_MESSAGE, ReadOnlyDict, ReadOnlyList
from kubesched.sdk.selectors import SELECTOR_READ_ONLY_MESSAGE
from kubesched.testing import make_pod, run_profile

POD_RAW: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "namespace": "default",
        "uid": "uid-p",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
        "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "controller": True}],
    },
    "spec": {
        "nodeSelector": {"disk": "ssd"},
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "100m", "memory": "1Gi", "example.com/gpu": "1"}},
                "ports": [{"containerPort": 80, "hostPort": 8080}],
            }
        ],
        "initContainers": [{"name": "i", "image": "busybox"}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "claim"}}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        "schedulingGates": [],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]
                }
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            },
        },
    },
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
}

NODE_RAW: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n", "labels": {"disk": "ssd", "kubernetes.io/hostname": "n", "zone": "z"}, "annotations": {"a": "b"}},
    "spec": {"taints": [{"key": "t", "value": "v", "effect": "NoSchedule"}]},
    "status": {
        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "2"},
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "images": [{"names": ["nginx:latest", "nginx"], "sizeBytes": 100}],
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def _pod() -> Pod:
    return Pod(copy.deepcopy(POD_RAW))


def _node() -> Node:
    return Node(copy.deepcopy(NODE_RAW))


def _mapping_writes(get: Callable[[], Any]) -> list[tuple[str, Callable[[], Any]]]:
    """Every mutator of a dict, on the mapping ``get()`` returns."""

    def ior() -> None:
        m = get()
        m |= {"x": "y"}

    return [
        ("setitem", lambda: get().__setitem__("x", "y")),
        ("setitem existing", lambda: get().__setitem__(next(iter(get()), "x"), "y")),
        ("del", lambda: get().__delitem__(next(iter(get()), "x"))),
        ("update", lambda: get().update({"x": "y"})),
        ("update kwargs", lambda: get().update(x="y")),
        ("setdefault", lambda: get().setdefault("x", "y")),
        ("pop", lambda: get().pop(next(iter(get()), "x"))),
        ("pop default", lambda: get().pop("missing", None)),
        ("popitem", lambda: get().popitem()),
        ("clear", lambda: get().clear()),
        ("|=", ior),
    ]


def _list_writes(get: Callable[[], Any]) -> list[tuple[str, Callable[[], Any]]]:
    """Every mutator of a list, on the list ``get()`` returns."""

    def iadd() -> None:
        lst = get()
        lst += [1]

    def imul() -> None:
        lst = get()
        lst *= 2

    return [
        ("append", lambda: get().append(1)),
        ("extend", lambda: get().extend([1])),
        ("insert", lambda: get().insert(0, 1)),
        ("setitem", lambda: get().__setitem__(0, 1)),
        ("setitem slice", lambda: get().__setitem__(slice(0, 1), [1])),
        ("del", lambda: get().__delitem__(0)),
        ("pop", lambda: get().pop()),
        ("remove", lambda: get().remove(get()[0] if get() else 1)),
        ("clear", lambda: get().clear()),
        ("sort", lambda: get().sort(key=str)),
        ("reverse", lambda: get().reverse()),
        ("+=", iadd),
        ("*=", imul),
    ]


def _pod_mappings(p: Pod) -> dict[str, Callable[[], Any]]:
    return {
        "raw": lambda: p.raw,
        "raw.metadata": lambda: p.raw["metadata"],
        "raw.metadata.labels": lambda: p.raw["metadata"]["labels"],
        "raw.spec": lambda: p.raw["spec"],
        "raw.spec.containers[0]": lambda: p.raw["spec"]["containers"][0],
        "raw.spec.containers[0].resources.requests": lambda: p.raw["spec"]["containers"][0]["resources"]["requests"],
        "raw.spec.affinity.podAntiAffinity...labelSelector.matchLabels": lambda: p.raw["spec"]["affinity"]["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ][0]["labelSelector"]["matchLabels"],
        "raw.status": lambda: p.raw["status"],
        "metadata": lambda: p.metadata,
        "spec": lambda: p.spec,
        "status": lambda: p.status,
        "labels": lambda: p.labels,
        "annotations": lambda: p.annotations,
        "node_selector": lambda: p.node_selector,
        "affinity": lambda: p.affinity,
        "containers[0]": lambda: p.containers[0],
        "containers[0].resources": lambda: p.containers[0]["resources"],
        "owner_references[0]": lambda: p.owner_references[0],
        "controller_ref": lambda: p.controller_ref,
        "volumes[0].persistentVolumeClaim": lambda: p.volumes[0]["persistentVolumeClaim"],
        "requests.scalar": lambda: p.requests.scalar,
    }


def _pod_lists(p: Pod) -> dict[str, Callable[[], Any]]:
    return {
        "raw.spec.containers": lambda: p.raw["spec"]["containers"],
        "raw.spec.containers[0].ports": lambda: p.raw["spec"]["containers"][0]["ports"],
        "raw.spec.tolerations": lambda: p.raw["spec"]["tolerations"],
        "raw.status.conditions": lambda: p.raw["status"]["conditions"],
        "containers": lambda: p.containers,
        "init_containers": lambda: p.init_containers,
        "owner_references": lambda: p.owner_references,
        "topology_spread_constraints": lambda: p.topology_spread_constraints,
        "volumes": lambda: p.volumes,
        "pvc_names": lambda: p.pvc_names,
        "images": lambda: p.images,
    }


def _node_mappings(n: Node) -> dict[str, Callable[[], Any]]:
    return {
        "raw": lambda: n.raw,
        "raw.metadata.labels": lambda: n.raw["metadata"]["labels"],
        "raw.status.allocatable": lambda: n.raw["status"]["allocatable"],
        "raw.spec.taints[0]": lambda: n.raw["spec"]["taints"][0],
        "metadata": lambda: n.metadata,
        "spec": lambda: n.spec,
        "status": lambda: n.status,
        "labels": lambda: n.labels,
        "annotations": lambda: n.annotations,
        "conditions": lambda: n.conditions,
        "allocatable.scalar": lambda: n.allocatable.scalar,
    }


def _node_lists(n: Node) -> dict[str, Callable[[], Any]]:
    return {
        "raw.spec.taints": lambda: n.raw["spec"]["taints"],
        "raw.status.images": lambda: n.raw["status"]["images"],
        "raw.status.images[0].names": lambda: n.raw["status"]["images"][0]["names"],
        "images": lambda: n.images,
        "images[0] names": lambda: n.images[0][0],
    }


def _cases(views: dict[str, Callable[[], Any]], writes: Callable[..., list[tuple[str, Callable[[], Any]]]]) -> list[Any]:
    return [pytest.param(f, id=f"{where}-{name}") for where, get in views.items() for name, f in writes(get)]


_P = _pod()
_N = _node()


@pytest.mark.parametrize("write", _cases(_pod_mappings(_P), _mapping_writes) + _cases(_pod_lists(_P), _list_writes))
def test_every_write_into_a_pod_raises(write: Callable[[], Any]) -> None:
    before = copy.deepcopy(_P.raw)
    with pytest.raises(TypeError) as e:
        write()
    assert str(e.value) == READ_ONLY_MESSAGE == "Pod, Node and NodeInfo views are read-only; write through handle.objects.patch(...)"
    assert _P.raw == before == POD_RAW


@pytest.mark.parametrize("write", _cases(_node_mappings(_N), _mapping_writes) + _cases(_node_lists(_N), _list_writes))
def test_every_write_into_a_node_raises(write: Callable[[], Any]) -> None:
    with pytest.raises(TypeError) as e:
        write()
    assert str(e.value) == READ_ONLY_MESSAGE
    assert _N.raw == NODE_RAW


@pytest.mark.parametrize("attr", ["raw", "labels", "name", "spec", "containers", "requests", "priority", "new_attribute"])
def test_pod_attributes_cannot_be_assigned_or_deleted(attr: str) -> None:
    p = _pod()
    with pytest.raises(TypeError) as e:
        setattr(p, attr, {"x": "y"})
    assert str(e.value) == POD_READ_ONLY_MESSAGE == "Pod views are read-only; write through handle.objects.patch(...)"
    with pytest.raises(TypeError) as e:
        delattr(p, attr)
    assert str(e.value) == POD_READ_ONLY_MESSAGE
    assert p.raw == POD_RAW and p.labels == {"app": "web"}


@pytest.mark.parametrize("attr", ["raw", "labels", "name", "taints", "allocatable", "unschedulable", "new_attribute"])
def test_node_attributes_cannot_be_assigned_or_deleted(attr: str) -> None:
    n = _node()
    with pytest.raises(TypeError) as e:
        setattr(n, attr, {"x": "y"})
    assert str(e.value) == NODE_READ_ONLY_MESSAGE == "Node views are read-only; write through handle.objects.patch(...)"
    with pytest.raises(TypeError) as e:
        delattr(n, attr)
    assert str(e.value) == NODE_READ_ONLY_MESSAGE
    assert n.raw == NODE_RAW


def _resource_writes(get: Callable[[], Resource]) -> list[tuple[str, Callable[[], Any]]]:
    def iadd() -> None:
        r = get()
        r.milli_cpu += 1

    return [
        ("milli_cpu =", lambda: setattr(get(), "milli_cpu", 0)),
        ("memory =", lambda: setattr(get(), "memory", 0)),
        ("ephemeral_storage =", lambda: setattr(get(), "ephemeral_storage", 0)),
        ("allowed_pod_number =", lambda: setattr(get(), "allowed_pod_number", 0)),
        ("scalar =", lambda: setattr(get(), "scalar", {})),
        ("milli_cpu +=", iadd),
        ("del memory", lambda: delattr(get(), "memory")),
        ("add", lambda: get().add(Resource(milli_cpu=1))),
        ("add_quantity", lambda: get().add_quantity("cpu", 1)),  # type: ignore[arg-type]
    ]


def _snapshot_node_info() -> NodeInfo:
    """A NodeInfo as the scheduler's cache keeps it (and as the snapshot shows it)."""
    from kubesched.runtime.cache import Cache

    c = Cache()
    c.add_node(_node())
    c.add_pod(_pod().with_node_name("n"))
    ni = c.node_info("n")
    assert ni is not None and ni.is_sealed
    return ni


def _resources() -> dict[str, Callable[[], Resource]]:
    p, n, ni = _pod(), _node(), _snapshot_node_info()
    return {
        "pod.requests": lambda: p.requests,
        "node.allocatable": lambda: n.allocatable,
        "node.capacity": lambda: n.capacity,
        "node_info.requested": lambda: ni.requested,
        "node_info.non_zero_requested": lambda: ni.non_zero_requested,
        "node_info.allocatable": lambda: ni.allocatable,
    }


@pytest.mark.parametrize("write", _cases(_resources(), _resource_writes))
def test_resources_of_views_are_read_only(write: Callable[[], Any]) -> None:
    ni = _snapshot_node_info()
    before = (ni.requested.as_dict(), ni.non_zero_requested.as_dict(), ni.allocatable.as_dict())
    with pytest.raises(TypeError) as e:
        write()
    assert str(e.value) == RESOURCE_READ_ONLY_MESSAGE == "this Resource belongs to a read-only view; resource.clone() gives a mutable copy"
    assert (ni.requested.as_dict(), ni.non_zero_requested.as_dict(), ni.allocatable.as_dict()) == before


def test_resource_clone_is_a_mutable_copy() -> None:
    p = _pod()
    r = p.requests.clone()
    r.add(Resource(milli_cpu=900))
    r.scalar["example.com/gpu"] = 5
    assert (r.milli_cpu, r.scalar, r.is_read_only) == (1000, {"example.com/gpu": 5}, False)
    assert (p.requests.milli_cpu, p.requests.scalar, p.requests.is_read_only) == (100, {"example.com/gpu": 1}, True)


def _node_info_writes() -> dict[str, Callable[[NodeInfo], Any]]:
    pod = make_pod().name("other").uid("uid-other").node("n").req(cpu="1").pod()
    return {
        "add_pod": lambda ni: ni.add_pod(pod),
        "remove_pod": lambda ni: ni.remove_pod(ni.pods[0] if ni.pods else pod),
        "set_node": lambda ni: ni.set_node(_node()),
        "remove_node": lambda ni: ni.remove_node(),
        "node =": lambda ni: setattr(ni, "node", None),
        "name =": lambda ni: setattr(ni, "name", "x"),
        "pods =": lambda ni: setattr(ni, "pods", []),
        "requested =": lambda ni: setattr(ni, "requested", Resource()),
        "image_states =": lambda ni: setattr(ni, "image_states", {}),
        "generation =": lambda ni: setattr(ni, "generation", 0),
        "new attribute": lambda ni: setattr(ni, "extra", 1),
        "del node": lambda ni: delattr(ni, "node"),
        "used_ports.add": lambda ni: ni.used_ports.add("0.0.0.0", "TCP", 9090),
        "used_ports.remove": lambda ni: ni.used_ports.remove("0.0.0.0", "TCP", 8080),
        "image_states[...].num_nodes =": lambda ni: setattr(ni.image_states["nginx"], "num_nodes", 99),
        "image_states[...].size =": lambda ni: setattr(ni.image_states["nginx"], "size", 0),
        "del image_states[...].size": lambda ni: delattr(ni.image_states["nginx"], "size"),
    }


@pytest.mark.parametrize("name", list(_node_info_writes()))
def test_every_write_to_a_snapshot_node_info_raises(name: str) -> None:
    ni = _snapshot_node_info()
    before = (ni.node, ni.name, list(ni.pods), ni.requested.as_dict(), ni.used_ports.items(), dict(ni.image_states), ni.generation)
    with pytest.raises(TypeError) as e:
        _node_info_writes()[name](ni)
    assert str(e.value) == NODE_INFO_READ_ONLY_MESSAGE == (
        'NodeInfo views of the snapshot are read-only; evaluate "what if" on node_info.clone(), '
        "write through handle.objects.patch(...)"
    )
    assert (ni.node, ni.name, list(ni.pods), ni.requested.as_dict(), ni.used_ports.items(), dict(ni.image_states), ni.generation) == before


def _node_info_containers(ni: NodeInfo) -> list[Any]:
    return (
        _cases({"pods": lambda: ni.pods, "pods_with_affinity": lambda: ni.pods_with_affinity,
                "pods_with_required_anti_affinity": lambda: ni.pods_with_required_anti_affinity}, _list_writes)
        + _cases({"image_states": lambda: ni.image_states, "pvc_ref_counts": lambda: ni.pvc_ref_counts}, _mapping_writes)
    )


_NI = _snapshot_node_info()


@pytest.mark.parametrize("write", _node_info_containers(_NI))
def test_the_lists_and_mappings_of_a_node_info_are_read_only(write: Callable[[], Any]) -> None:
    n_pods = len(_NI.pods)
    with pytest.raises(TypeError) as e:
        write()
    assert str(e.value) == READ_ONLY_MESSAGE
    assert len(_NI.pods) == n_pods == 1 and dict(_NI.pvc_ref_counts) == {"default/claim": 1}


def test_a_clone_is_open_and_the_snapshot_node_info_is_unchanged() -> None:
    ni = _snapshot_node_info()
    c = ni.clone()
    assert not c.is_sealed
    victim = c.pods[0]
    c.remove_pod(victim)
    other = make_pod().name("other").uid("uid-other").node("n").req(cpu="1").host_port(9090).pod()
    c.add_pod(other)
    assert [p.name for p in c.pods] == ["other"]
    assert (c.requested.milli_cpu, c.used_ports.check_conflict("0.0.0.0", "TCP", 9090)) == (1000, True)
    assert dict(c.pvc_ref_counts) == {}
    assert [p.name for p in ni.pods] == ["p"]
    assert (ni.requested.milli_cpu, ni.used_ports.check_conflict("0.0.0.0", "TCP", 9090)) == (100, False)
    assert dict(ni.pvc_ref_counts) == {"default/claim": 1}
    # the clone's containers are read-only too: it changes through its methods
    with pytest.raises(TypeError):
        c.pods.append(other)  # type: ignore[attr-defined]


def test_an_open_node_info_built_by_a_plugin_works_as_before() -> None:
    ni = NodeInfo(_node(), [_pod().with_node_name("n")])
    assert not ni.is_sealed
    ni.remove_pod(ni.pods[0])
    ni.requested = Resource(milli_cpu=5)
    assert (ni.pods, ni.requested.milli_cpu) == ([], 5)


def test_selectors_of_a_pod_view_are_read_only() -> None:
    p = _pod()
    term = p.required_anti_affinity_terms[0]
    na = p.required_node_affinity
    assert na is not None
    for obj, attr in [(term.selector, "requirements"), (term.selector.requirements[0], "key"),
                      (na, "terms"), (na, "errors"), (na.terms[0], "labels"), (na.terms[0].labels[0], "values")]:
        with pytest.raises(TypeError) as e:
            setattr(obj, attr, ())
        assert str(e.value) == SELECTOR_READ_ONLY_MESSAGE == "selectors are read-only; parse a new one"
    with pytest.raises(AttributeError):
        term.topology_key = "x"  # type: ignore[misc]


def test_read_only_json_still_serializes_copies_and_compares() -> None:
    p = _pod()
    assert isinstance(p.raw, dict) and isinstance(p.raw["spec"]["containers"], list)
    assert isinstance(p.raw, ReadOnlyDict) and isinstance(p.containers, ReadOnlyList)
    assert p.raw == POD_RAW and p.containers == POD_RAW["spec"]["containers"]
    assert json.loads(json.dumps(p.raw)) == POD_RAW
    assert yaml.safe_load(yaml.safe_dump(p.raw)) == POD_RAW
    assert yaml.safe_load(yaml.dump(p.raw)) == POD_RAW
    assert pickle.loads(pickle.dumps(p.raw)) == POD_RAW
    deep = copy.deepcopy(p.raw)
    deep["spec"]["containers"][0]["image"] = "changed"  # a plain, mutable copy
    assert type(deep) is dict and type(deep["spec"]["containers"]) is list
    shallow = {**p.raw, "status": {**p.status, "phase": "Running"}}
    assert Pod(shallow).phase == "Running" and p.phase == "Pending"
    assert type(dict(p.labels)) is dict and type(list(p.containers)) is list and type(copy.copy(p.labels)) is dict
    assert p.raw == POD_RAW


def test_a_view_copies_its_object_so_later_writes_to_the_source_do_not_reach_it() -> None:
    raw = copy.deepcopy(POD_RAW)
    p = Pod(raw)
    raw["metadata"]["labels"]["app"] = "changed"
    raw["spec"]["containers"].append({"name": "more"})
    assert p.labels == {"app": "web"} and len(p.containers) == 1
    # a view of a view's JSON shares it instead of copying it again
    assert Pod(p.raw).raw is p.raw
    assert p.with_node_name("n").raw["metadata"] is p.raw["metadata"]


# end to end -------------------------------------------------------------------------------------

ATTEMPTS: list[tuple[str, str]] = []


def _every_write(pod: Pod, node_info: NodeInfo) -> list[tuple[str, Callable[[], Any]]]:
    n = node_info.node
    out: list[tuple[str, Callable[[], Any]]] = []
    for views, writes in (
        (_pod_mappings(pod), _mapping_writes),
        (_pod_lists(pod), _list_writes),
        (_node_mappings(n), _mapping_writes),
        (_node_lists(n), _list_writes),
        ({"pods": lambda: node_info.pods}, _list_writes),
        ({"image_states": lambda: node_info.image_states, "pvc_ref_counts": lambda: node_info.pvc_ref_counts}, _mapping_writes),
    ):
        for where, get in views.items():
            for name, f in writes(get):
                out.append((f"{where} {name}", f))
    for where, getr in {"pod.requests": lambda: pod.requests, "node.allocatable": lambda: n.allocatable,
                        "node_info.requested": lambda: node_info.requested}.items():
        for name, f in _resource_writes(getr):
            out.append((f"{where} {name}", f))
    for name, g in _node_info_writes().items():
        out.append((f"node_info {name}", lambda g=g: g(node_info)))  # type: ignore[misc]
    out.append(("pod.labels =", lambda: setattr(pod, "labels", {"x": "y"})))
    out.append(("node.labels =", lambda: setattr(n, "labels", {"x": "y"})))
    return out


class Meddler:
    """A Filter that tries every write into its arguments, catches the errors and passes."""

    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> None:
        for name, write in _every_write(pod, node_info):
            try:
                write()
            except TypeError as e:
                ATTEMPTS.append((name, str(e)))
            else:
                raise AssertionError(f"{name} did not raise")
        return None


class Writer:
    """A Filter that writes a node label and does not catch the error."""

    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> None:
        node_info.node.labels["meddled"] = "yes"  # type: ignore[index]


def _cluster() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two nodes and four pods shaped as NODE_RAW and POD_RAW (each field the writes reach)."""
    nodes = []
    for n in ("a", "b"):
        node = copy.deepcopy(NODE_RAW)
        node["metadata"]["name"] = n
        node["metadata"]["labels"]["kubernetes.io/hostname"] = n
        nodes.append(node)
    pods = []
    for i in range(4):
        pod = copy.deepcopy(POD_RAW)
        del pod["metadata"]["uid"]
        pod["metadata"]["name"] = f"p{i}"
        pod["metadata"]["labels"] = {"app": f"web-{i}"}
        pod["spec"]["containers"][0]["ports"][0]["hostPort"] = 8000 + i
        pod["spec"]["tolerations"] = [{"operator": "Exists"}]
        pods.append(pod)
    return nodes, pods


def _state(r: Any) -> dict[str, Any]:
    store = r.objects()
    return {
        "nodes": [store.get("v1", "Node", n) for n in ("a", "b")],
        "pods": [(o["metadata"]["name"], o["metadata"].get("labels"), o["spec"].get("nodeName"), o["spec"]["containers"])
                 for o in store.list("v1", "Pod")],
    }


def test_a_plugin_that_tries_every_write_changes_nothing_the_next_pods_or_the_cluster_see() -> None:
    nodes, pods = _cluster()
    objects = [
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
                  "claimRef": {"name": "claim", "namespace": "default"}},
         "status": {"phase": "Bound"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "claim", "namespace": "default",
         "annotations": {"pv.kubernetes.io/bind-completed": "yes"}}, "spec": {"volumeName": "pv", "accessModes": ["ReadWriteMany"]}, "status": {"phase": "Bound"}},
    ]
    plain = run_profile([], nodes=nodes, pods=pods, objects=objects, defaults=True)
    ATTEMPTS.clear()
    meddled = run_profile({"Meddler": Meddler}, nodes=nodes, pods=pods, objects=objects, defaults=True)
    assert ATTEMPTS, "the Filter ran"
    assert {msg for _, msg in ATTEMPTS} == {READ_ONLY_MESSAGE, POD_READ_ONLY_MESSAGE, NODE_READ_ONLY_MESSAGE,
                                            RESOURCE_READ_ONLY_MESSAGE, NODE_INFO_READ_ONLY_MESSAGE}
    assert len({name for name, _ in ATTEMPTS}) > 300
    # every pod placed as without the meddler, with the same scores: nothing it did was seen
    for p in ("p0", "p1", "p2", "p3"):
        assert meddled.status(p) == plain.status(p) == "Scheduled"
        assert meddled.node(p) == plain.node(p)
        assert meddled.totals(p) == plain.totals(p)
    assert _state(meddled) == _state(plain)
    for ni in meddled.scheduler.cache.update_snapshot().list():
        assert ni.node.labels == {"disk": "ssd", "kubernetes.io/hostname": ni.name, "zone": "z"}
        assert ni.node.raw["status"] == NODE_RAW["status"] and ni.node.raw["spec"] == NODE_RAW["spec"]
        assert ni.requested.milli_cpu == 100 * len(ni.pods) and ni.is_sealed
        assert sorted(p.name for p in ni.pods) == sorted(p for p in ("p0", "p1", "p2", "p3") if meddled.node(p) == ni.name)


def test_an_uncaught_write_is_an_error_for_that_pod_naming_the_plugin() -> None:
    nodes, pods = _cluster()
    r = run_profile({"Writer": Writer}, nodes=nodes, pods=pods[:2])
    for p in ("p0", "p1"):
        assert r.status(p) == "Error"
        assert r.message(p) == f'running Filter plugin "Writer": TypeError: {READ_ONLY_MESSAGE}'
        assert [(e.point, e.plugin, type(e.exception).__name__) for e in r.errors(p)][:1] == [("Filter", "Writer", "TypeError")]
    for n in ("a", "b"):
        assert "meddled" not in r.objects().get("v1", "Node", n)["metadata"]["labels"]


def test_views_copy_and_pickle_without_writing() -> None:
    """copy.copy/deepcopy (CycleState.clone copies values) and pickle go around the setters."""
    p, n, ni = _pod(), _node(), _snapshot_node_info()
    for view in (p, n, p.requests, n.allocatable, p.required_node_affinity, ni.image_states["nginx"]):
        assert copy.copy(view) is view and copy.deepcopy(view) is view
        assert type(pickle.loads(pickle.dumps(view))) is type(view)
    assert copy.deepcopy(p.required_anti_affinity_terms[0]).selector is p.required_anti_affinity_terms[0].selector
    assert pickle.loads(pickle.dumps(p)).raw == POD_RAW and pickle.loads(pickle.dumps(n)).raw == NODE_RAW
    assert pickle.loads(pickle.dumps(p.requests)) == p.requests and pickle.loads(pickle.dumps(p.requests)).is_read_only
    term = pickle.loads(pickle.dumps(p.required_anti_affinity_terms[0]))
    assert term.selector.matches({"app": "web"}) and not term.selector.matches({"app": "db"})
    for c in (copy.copy(ni), copy.deepcopy(ni)):
        assert not c.is_sealed and c.pods == ni.pods and c.requested == ni.requested
        c.remove_pod(c.pods[0])
        assert len(ni.pods) == 1


def test_the_kits_handle_gives_read_only_node_infos_as_a_run_does() -> None:
    """make_handle's snapshot is sealed like the scheduler's: a plugin unit-tested with the kit
    is told off for writing into a NodeInfo, as it would be in a real run; clones stay open."""
    from kubesched.testing import make_handle, make_node

    node = make_node().name("a").capacity({"cpu": "2"}).obj()
    node["status"]["images"] = [{"names": ["nginx:1"], "sizeBytes": 100}]
    handle = make_handle([node], [make_pod().name("p").node("a").obj()])
    ni = handle.snapshot().get("a")
    assert ni.is_sealed and [p.name for p in ni.pods] == ["p"]
    assert set(ni.image_states) == {"nginx:1"}
    with pytest.raises(TypeError) as e:
        ni.image_states["evil"] = 1  # type: ignore[index]
    assert str(e.value) == READ_ONLY_MESSAGE
    with pytest.raises(TypeError) as e:
        ni.add_pod(Pod(make_pod().name("q").obj()))
    assert str(e.value) == NODE_INFO_READ_ONLY_MESSAGE
    clone = ni.clone()
    clone.add_pod(Pod(make_pod().name("q").obj()))
    assert [p.name for p in clone.pods] == ["p", "q"] and [p.name for p in ni.pods] == ["p"]
