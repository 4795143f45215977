"""Fuzz of the Pod and Node views: JSON-like trees spliced in at every field the views read.
Building the view, ``validate()`` and every accessor either succeed or raise
InvalidObjectError / QuantityError, nothing else."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.sdk import InvalidObjectError, Node, Pod, QuantityError

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["1", "-4", "100m", "1e400", "1Ki", "Exists", "In", "Always", "NoSchedule", "cpu", "a"]),
)
trees = st.recursive(
    scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(st.sampled_from(["cpu", "memory", "name", "key", "a", "values", "operator"]), kids, max_size=3)),
    max_leaves=10,
)

GOOD_POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}, "ownerReferences": [{"controller": True}]},
    "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}, "ports": [{"hostPort": 80}]}],
        "initContainers": [{"name": "i", "restartPolicy": "Always", "resources": {"requests": {"memory": "1Gi"}}}],
        "overhead": {"cpu": "10m"},
        "resources": {"requests": {"cpu": "1"}},
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "nodeSelector": {"a": "b"},
        "priority": 5,
        "schedulingGates": [{"name": "g"}],
        "topologySpreadConstraints": [{"maxSkew": 1}],
        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}],
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}]}},
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "z"}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {"topologyKey": "z", "namespaces": ["x"]}}]},
        },
    },
    "status": {"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], "conditions": [{"type": "PodResizePending"}]},
}
GOOD_NODE: dict[str, Any] = {
    "metadata": {"name": "n", "labels": {"a": "b"}},
    "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "4"}, "capacity": {"cpu": "4"}, "images": [{"names": ["x"], "sizeBytes": 1}], "conditions": [{"type": "Ready", "status": "True"}]},
}


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


POD_PATHS = _paths(GOOD_POD)[1:]
NODE_PATHS = _paths(GOOD_NODE)[1:]


def _splice(base: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    obj = copy.deepcopy(base)
    cur: Any = obj
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return obj


POD_ACCESSORS = [
    "name", "namespace", "uid", "key", "labels", "annotations", "owner_references", "controller_ref",
    "creation_timestamp", "deletion_timestamp", "resource_version", "node_name", "scheduler_name",
    "priority", "priority_class_name", "preemption_policy", "nominated_node_name", "phase", "containers",
    "init_containers", "node_selector", "affinity", "tolerations", "scheduling_gates",
    "topology_spread_constraints", "volumes", "pvc_names", "host_ports", "images", "requests",
    "non_zero_requests", "node_requests", "node_non_zero_requests", "requested_resource_names",
    "required_affinity_terms", "required_anti_affinity_terms", "preferred_affinity_terms",
    "preferred_anti_affinity_terms", "has_pod_affinity", "has_required_anti_affinity", "required_node_affinity",
]  # fmt: skip
NODE_ACCESSORS = ["name", "labels", "annotations", "unschedulable", "taints", "allocatable", "capacity", "images", "conditions"]
# what the queue and the event handlers read before validation: never raises
POD_TOTAL = ["name", "namespace", "uid", "key", "node_name", "scheduler_name", "priority", "scheduling_gates", "deletion_timestamp", "labels", "annotations", "nominated_node_name"]


def _check(view_cls: type, raw: dict[str, Any], accessors: list[str], total: list[str]) -> None:
    try:
        view = view_cls(raw)
    except InvalidObjectError:
        return
    for a in total:
        getattr(view, a)
    try:
        view.validate()
    except InvalidObjectError:
        pass
    for a in accessors:
        try:
            getattr(view, a)
        except (InvalidObjectError, QuantityError):
            pass


@settings(max_examples=300, deadline=None)
@given(path=st.sampled_from(POD_PATHS), value=trees)
def test_pod_views_raise_only_invalid_object(path, value):
    _check(Pod, _splice(GOOD_POD, path, value), POD_ACCESSORS, POD_TOTAL)


@settings(max_examples=200, deadline=None)
@given(path=st.sampled_from(NODE_PATHS), value=trees)
def test_node_views_raise_only_invalid_object(path, value):
    _check(Node, _splice(GOOD_NODE, path, value), NODE_ACCESSORS, ["name", "labels", "annotations"])


@settings(max_examples=200, deadline=None)
@given(raw=st.dictionaries(st.sampled_from(["metadata", "spec", "status"]), trees, max_size=3))
def test_whole_trees_as_objects(raw):
    _check(Pod, raw, POD_ACCESSORS, POD_TOTAL)
    _check(Node, raw, NODE_ACCESSORS, ["name", "labels", "annotations"])


def test_a_valid_pod_validates():
    Pod(GOOD_POD).validate()
    Node(GOOD_NODE).validate()
