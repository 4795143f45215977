"""The corpus of malformed pods, nodes and quantities: each is one InvalidObjectError or
QuantityError with its field path and message, never a Python exception from inside a view; a
malformed pod is an Error of its own and the others are still scheduled."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import (
    InvalidObjectError,
    Node,
    Pod,
    QuantityError,
    milli_value,
    parse_quantity,
    value,
)
from kubesched.sdk.quantity import RESOURCE_LIMIT

FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX = "unable to parse quantity's suffix"
NEG = "must be greater than or equal to 0"
INT64_MAX = 2**63 - 1


def pod(spec: Any = None, **top: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c"}]} if spec is None else spec}
    base.update(top)
    return base


def c(**fields: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", **fields}]}}


def res(**kw: Any) -> dict[str, Any]:
    return c(resources=kw)["spec"]


def aff(**kw: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c"}], "affinity": kw}


REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"

# (pod spec or whole pod, the message of validate()'s InvalidObjectError)
BAD_PODS: list[tuple[Any, str]] = [
    # the shapes
    ({"containers": "nginx"}, "spec.containers: must be a list of objects"),
    ({"containers": [None]}, "spec.containers[0]: must be an object"),
    ({"containers": [{"name": "c", "resources": "lots"}]}, "spec.containers[0].resources: must be an object"),
    (res(requests=["cpu"]), "spec.containers[0].resources.requests: must be a map of resource quantities"),
    (res(limits="x"), "spec.containers[0].resources.limits: must be a map of resource quantities"),
    ({"containers": [{"name": "c"}], "initContainers": "x"}, "spec.initContainers: must be a list of objects"),
    ({"containers": [{"name": "c"}], "initContainers": [1]}, "spec.initContainers[0]: must be an object"),
    ({"containers": [{"name": "c"}], "initContainers": [{"resources": 5}]}, "spec.initContainers[0].resources: must be an object"),
    (aff() | {"affinity": "yes"}, "spec.affinity: must be an object"),
    # quantities
    (res(requests={"cpu": "9" * 5000}), None),  # saturated, valid
    (res(requests={"cpu": "12x"}), f'spec.containers[0].resources.requests.cpu: "12x": {FORMAT}'),
    (res(requests={"cpu": "1K"}), f'spec.containers[0].resources.requests.cpu: "1K": {SUFFIX}'),
    (res(requests={"cpu": "1e99999999999999999999"}), f'spec.containers[0].resources.requests.cpu: "1e99999999999999999999": {SUFFIX}'),
    (res(requests={"cpu": None}), f"spec.containers[0].resources.requests.cpu: null: {FORMAT}"),
    (res(requests={"cpu": [1]}), f"spec.containers[0].resources.requests.cpu: a list: {FORMAT}"),
    (res(requests={"cpu": {"a": 1}}), f"spec.containers[0].resources.requests.cpu: an object: {FORMAT}"),
    (res(requests={"memory": "x" * 100}), f'spec.containers[0].resources.requests.memory: "{"x" * 64}... (36 more characters)": {FORMAT}'),
    (res(requests={"cpu": "1\x1b[2J"}), f'spec.containers[0].resources.requests.cpu: "1\\x1b[2J": {FORMAT}'),
    (res(requests={"cpu": "-4"}), 'spec.containers[0].resources.requests.cpu: Invalid value: "-4": ' + NEG),
    (res(limits={"memory": -1}), 'spec.containers[0].resources.limits.memory: Invalid value: "-1": ' + NEG),
    (res(limits={"memory": "1x"}), f'spec.containers[0].resources.limits.memory: "1x": {FORMAT}'),
    ({"containers": [{"name": "c"}], "overhead": "x"}, "spec.overhead: must be a map of resource quantities"),
    ({"containers": [{"name": "c"}], "overhead": {"cpu": "y"}}, f'spec.overhead.cpu: "y": {FORMAT}'),
    ({"containers": [{"name": "c"}], "resources": "x"}, "spec.resources: must be an object"),
    ({"containers": [{"name": "c"}], "resources": {"requests": [1]}}, "spec.resources.requests: must be a map of resource quantities"),
    # ports
    (c(ports="80")["spec"], "spec.containers[0].ports: must be a list of objects"),
    (c(ports=[80])["spec"], "spec.containers[0].ports[0]: must be an object"),
    (c(ports=[{"hostPort": "http"}])["spec"], 'spec.containers[0].ports[0].hostPort: invalid value "http": must be an integer'),
    (c(ports=[{"hostPort": [1]}])["spec"], "spec.containers[0].ports[0].hostPort: invalid value a list: must be an integer"),
    (
        {"containers": [{"name": "c"}], "initContainers": [{"name": "s", "restartPolicy": "Always", "ports": [{"hostPort": 1.0e400}]}]},
        "spec.initContainers[0].ports[0].hostPort: invalid value \"inf\": must be an integer",
    ),
    # tolerations, priority, gates, node selector
    ({"containers": [{"name": "c"}], "tolerations": "x"}, "spec.tolerations: must be a list of objects"),
    ({"containers": [{"name": "c"}], "tolerations": [None]}, "spec.tolerations[0]: must be an object"),
    ({"containers": [{"name": "c"}], "tolerations": [{"operator": "Maybe"}]}, 'spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"'),
    ({"containers": [{"name": "c"}], "tolerations": [{"operator": ["Exists"]}]}, 'spec.tolerations[0].operator: Unsupported value: a list: supported values: "Equal", "Exists"'),
    ({"containers": [{"name": "c"}], "tolerations": [{"tolerationSeconds": "soon"}]}, 'spec.tolerations[0].tolerationSeconds: invalid value "soon": must be an integer'),
    ({"containers": [{"name": "c"}], "priority": "high"}, 'spec.priority: invalid value "high": must be an integer'),
    ({"containers": [{"name": "c"}], "priority": {"a": 1}}, "spec.priority: invalid value an object: must be an integer"),
    ({"containers": [{"name": "c"}], "schedulingGates": "x"}, "spec.schedulingGates: must be a list of objects"),
    ({"containers": [{"name": "c"}], "schedulingGates": [1]}, "spec.schedulingGates[0]: must be an object"),
    ({"containers": [{"name": "c"}], "nodeSelector": ["a"]}, "spec.nodeSelector: must be a map of strings"),
    # pod (anti-)affinity
    (aff(podAffinity="x"), "spec.affinity.podAffinity: must be an object"),
    (aff(podAntiAffinity={REQ: "x"}), f"spec.affinity.podAntiAffinity.{REQ}: must be a list of objects"),
    (aff(podAffinity={REQ: [None]}), f"spec.affinity.podAffinity.{REQ}[0]: must be an object"),
    (aff(podAffinity={REQ: [{"labelSelector": "x"}]}), f"spec.affinity.podAffinity.{REQ}[0].labelSelector: must be an object"),
    (aff(podAffinity={REQ: [{"labelSelector": {"matchLabels": ["a"]}}]}), f"spec.affinity.podAffinity.{REQ}[0].labelSelector.matchLabels: must be a map of strings"),
    (
        aff(podAffinity={REQ: [{"labelSelector": {"matchExpressions": "x"}}]}),
        f"spec.affinity.podAffinity.{REQ}[0].labelSelector.matchExpressions: must be a list of objects",
    ),
    (
        aff(podAffinity={REQ: [{"labelSelector": {"matchExpressions": [{"key": "a", "operator": ["In"]}]}}]}),
        f"spec.affinity.podAffinity.{REQ}[0].labelSelector.matchExpressions[0].operator: a non-string is not a valid label selector operator",
    ),
    (
        aff(podAffinity={REQ: [{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": 5}]}}]}),
        f"spec.affinity.podAffinity.{REQ}[0].labelSelector.matchExpressions[0].values: must be a list of strings",
    ),
    (aff(podAffinity={REQ: [{"namespaces": "default"}]}), f"spec.affinity.podAffinity.{REQ}[0].namespaces: must be a list of strings"),
    (aff(podAntiAffinity={PREF: [{"weight": "heavy"}]}), f'spec.affinity.podAntiAffinity.{PREF}[0].weight: invalid value "heavy": must be an integer'),
    (aff(podAntiAffinity={PREF: [{"weight": 1, "podAffinityTerm": 3}]}), f"spec.affinity.podAntiAffinity.{PREF}[0].podAffinityTerm: must be an object"),
    # node affinity
    (aff(nodeAffinity="x"), "spec.affinity.nodeAffinity: must be an object"),
    (aff(nodeAffinity={REQ: "x"}), f"spec.affinity.nodeAffinity.{REQ}: must be an object"),
    (aff(nodeAffinity={REQ: {"nodeSelectorTerms": {"a": 1}}}), f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms: must be a list of objects"),
    # an empty string, 0 or false is not an empty list (selectors read lists as the views do)
    (aff(nodeAffinity={REQ: {"nodeSelectorTerms": ""}}), f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms: must be a list of objects"),
    (aff(podAffinity={REQ: [{"labelSelector": {"matchExpressions": False}}]}), f"spec.affinity.podAffinity.{REQ}[0].labelSelector.matchExpressions: must be a list of objects"),
    # the rest of the spec the views read
    ({"containers": [{"name": "c"}], "topologySpreadConstraints": {"a": 1}}, "spec.topologySpreadConstraints: must be a list of objects"),
    ({"containers": [{"name": "c"}], "volumes": [7]}, "spec.volumes[0]: must be an object"),
    ({"containers": [{"name": "c"}], "volumes": [{"name": "v", "persistentVolumeClaim": "claim"}]}, "spec.volumes[0].persistentVolumeClaim: must be an object"),
    # metadata and status
    (pod(metadata={"name": "bad", "labels": "x"}), "metadata.labels: must be a map of strings"),
    (pod(metadata={"name": "bad", "labels": {"a": {"b": 1}}}), 'metadata.labels["a"]: must be a string'),
    (pod(metadata={"name": "bad", "annotations": ["a"]}), "metadata.annotations: must be a map of strings"),
    (pod(metadata={"name": {"first": "x"}}), "metadata.name: must be a string"),
    (pod(metadata="x"), "metadata: must be an object"),
    (pod(spec=[1]), "spec: must be an object"),
    (pod(status="Running"), "status: must be an object"),
    (pod(metadata={"name": "bad", "ownerReferences": "x"}), "metadata.ownerReferences: must be a list of objects"),
    (pod(metadata={"name": "bad", "creationTimestamp": "yesterday"}), 'metadata.creationTimestamp: invalid time "yesterday"'),
    (pod(metadata={"name": "bad", "deletionTimestamp": [1]}), "metadata.deletionTimestamp: invalid time a list"),
    (pod(metadata={"name": "bad", "creationTimestamp": 1e400}), 'metadata.creationTimestamp: invalid time "inf"'),
    (pod(status={"containerStatuses": "x"}), "status.containerStatuses: must be a list of objects"),
    (pod(status={"containerStatuses": [{"name": "c", "resources": "x"}]}), "spec.containers[0].resources: must be an object"),
    (pod(status={"resources": "x"}, spec={"containers": [{"name": "c"}], "resources": {"requests": {"cpu": "1"}}}), "status.resources: must be an object"),
]
BAD_PODS = [(p if "metadata" in p else pod(p), m) for p, m in BAD_PODS]


@pytest.mark.parametrize(("raw", "message"), BAD_PODS)
def test_validate_names_the_field(raw, message):
    p = Pod(raw)
    if message is None:
        p.validate()
        return
    with pytest.raises(InvalidObjectError) as ei:
        p.validate()
    assert str(ei.value) == message
    # what the queue reads before validation never raises
    _ = (p.name, p.namespace, p.uid, p.key, p.node_name, p.scheduler_name, p.priority, p.scheduling_gates)
    _ = (p.deletion_timestamp, p.labels, p.annotations, p.nominated_node_name, p.metadata, p.spec, p.status)


def test_queue_fields_of_a_malformed_pod_read_as_empty():
    p = Pod({"metadata": {"name": "x", "labels": "x"}, "spec": {"priority": "high", "schedulingGates": "g", "nodeName": ["n"]}, "status": 3})
    assert (p.priority, list(p.scheduling_gates), p.node_name, dict(p.labels), dict(p.status)) == (0, [], "", {}, {})
    assert Pod({"metadata": {"name": "x", "deletionTimestamp": "never"}}).deletion_timestamp is None


def test_a_view_of_something_nested_too_deeply_is_an_invalid_object():
    deep: Any = "x"
    for _ in range(5000):
        deep = {"a": deep}
    with pytest.raises(InvalidObjectError) as ei:
        Pod({"metadata": {"name": "x", "annotations": {"a": deep}}})
    assert str(ei.value) == "a Pod must not be nested this deeply"


def node(status: Any = None, **top: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"metadata": {"name": "n"}, "status": status if status is not None else {"allocatable": {"cpu": "4"}}}
    base.update(top)
    return base


BAD_NODES: list[tuple[dict[str, Any], str]] = [
    (node({"allocatable": {"cpu": "-4"}}), 'status.allocatable.cpu: Invalid value: "-4": ' + NEG),
    (node({"capacity": {"memory": -1}, "allocatable": {"memory": -1}}), 'status.capacity.memory: Invalid value: "-1": ' + NEG),
    (node({"allocatable": {"cpu": "1e2x"}}), f'status.allocatable.cpu: "1e2x": {FORMAT}'),
    (node({"allocatable": "lots"}), "status.allocatable: must be a map of resource quantities"),
    (node({"capacity": ["cpu"]}), "status.capacity: must be a map of resource quantities"),
    (node({"images": "x"}), "status.images: must be a list of objects"),
    (node({"images": [{"names": "a", "sizeBytes": 1}]}), "status.images[0].names: must be a list of strings"),
    (node({"images": [{"names": ["a"], "sizeBytes": "big"}]}), 'status.images[0].sizeBytes: invalid value "big": must be an integer'),
    (node({"conditions": [1]}), "status.conditions[0]: must be an object"),
    (node(spec={"taints": "x"}), "spec.taints: must be a list of objects"),
    (node(spec={"taints": [{"key": "k", "effect": "Sometimes"}]}), 'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'),
    (node(spec={"taints": [{"effect": "NoSchedule"}]}), "spec.taints[0].key: Required value"),
    (node(metadata={"name": "n", "labels": ["a"]}), "metadata.labels: must be a map of strings"),
    (node(spec=[1]), "spec: must be an object"),
    (node(metadata={}), "metadata.name: Required value: name is required"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_NODES)
def test_node_validate_names_the_field(raw, message):
    with pytest.raises(InvalidObjectError) as ei:
        Node(raw).validate()
    assert str(ei.value) == message


@pytest.mark.parametrize(
    ("text", "parsed", "milli", "whole"),
    [
        ("1e400", 10**64, INT64_MAX, INT64_MAX),  # saturated at the bound, Value() at int64
        ("-1e400", -(10**64), -(2**63), -(2**63)),
        ("9" * 5000, 10**64, INT64_MAX, INT64_MAX),  # more than Python's 4,300 digits
        ("0." + "0" * 5000 + "1", None, 1, 1),  # rounded up, as Go rounds up to 1n
        ("10Ei", INT64_MAX, INT64_MAX, INT64_MAX),  # Go caps BinarySI at max int64
        ("9223372036854775807Ki", INT64_MAX, INT64_MAX, INT64_MAX),
        ("1Ei", 2**60, INT64_MAX, 2**60),  # MilliValue saturates (Go's wraps negative)
        ("1e19", 10**19, INT64_MAX, INT64_MAX),  # Go's Value() wraps to 0
        ("1e4294967296", 1, 1000, 1),  # Go reads the exponent as int64 and keeps its int32
        ("+", 0, 0, 0),
    ],
)
def test_quantity_bounds(text, parsed, milli, whole):
    if parsed is not None:
        assert parse_quantity(text) == parsed
    assert (milli_value(text), value(text)) == (milli, whole)


def test_a_yaml_int_of_5000_digits_saturates():
    big = 10**5000
    assert (parse_quantity(big), milli_value(big), value(-big)) == (10**64, INT64_MAX, -(2**63))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1e99999999999999999999", f'"1e99999999999999999999": {SUFFIX}'),
        ("1K", f'"1K": {SUFFIX}'),
        ("1e", f'"1e": {SUFFIX}'),
        ("1e3m", f'"1e3m": {FORMAT}'),
        ("", f'"": {FORMAT}'),
        ("inf", f'"inf": {FORMAT}'),
        (float("inf"), f'"inf": {FORMAT}'),
        (float("nan"), f'"nan": {FORMAT}'),
        ("7" * 70 + "x", f'"{"7" * 64}... (7 more characters)": {FORMAT}'),
        (True, f"true: {FORMAT}"),
    ],
)
def test_quantity_errors_are_gos(text, message):
    with pytest.raises(QuantityError) as ei:
        parse_quantity(text)
    assert str(ei.value) == message


def test_absurd_node_quantities_give_no_overflow():
    n = Node(node({"allocatable": {"cpu": "1e400", "memory": "9" * 5000, "example.com/gpu": "1e400"}}))
    n.validate()
    # the scheduler's accounting bounds each amount at RESOURCE_LIMIT (2^53 - 1)
    assert (n.allocatable.milli_cpu, n.allocatable.memory, n.allocatable.scalar["example.com/gpu"]) == (RESOURCE_LIMIT,) * 3


# end to end: the simulated scheduler with the default profile ----------------------------------


def _run(objects: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    cfg = load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    cluster = SimulatedCluster([apply_defaults({"apiVersion": "v1", **copy.deepcopy(o)}) for o in objects])
    sched = Scheduler(cfg, Registry.discover(), cluster, simulated=True, seed=1)
    cluster.run(sched)
    return {f"{r.namespace}/{r.name}": (r.status, r.message) for r in sched.results.values()}


GOOD_NODE = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
GOOD_POD = {"kind": "Pod", "metadata": {"name": "good"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}

E2E = [
    ({"containers": "nginx"}, "spec.containers: must be a list of objects"),
    ({"containers": [None]}, "spec.containers[0]: must be an object"),
    ({"containers": [{"name": "c", "resources": "lots"}]}, "spec.containers[0].resources: must be an object"),
    ({"containers": [{"name": "c", "resources": {"requests": ["cpu"]}}]}, "spec.containers[0].resources.requests: must be a map of resource quantities"),
    ({"containers": [{"name": "c"}], "initContainers": "x"}, "spec.initContainers: must be a list of objects"),
    ({"containers": [{"name": "c"}], "affinity": "yes"}, "spec.affinity: must be an object"),
    ({"containers": [{"name": "c"}], "priority": "high"}, 'spec.priority: invalid value "high": must be an integer'),
    ({"containers": [{"name": "c"}], "schedulingGates": "x"}, "spec.schedulingGates: must be a list of objects"),
    ({"containers": [{"name": "c", "resources": {"requests": {"cpu": "-4"}}}]}, 'spec.containers[0].resources.requests.cpu: Invalid value: "-4": ' + NEG),
    ({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1K"}}}]}, f'spec.containers[0].resources.requests.cpu: "1K": {SUFFIX}'),
]


def test_one_absurd_node_or_pod_poisons_no_other_pod():
    """cpu: 1e400 beside a normal node: without the bound the scores' int64 arithmetic
    overflowed and every pod was an Error ("invalid score")."""
    huge = {"kind": "Node", "metadata": {"name": "huge"}, "status": {"allocatable": {"cpu": "1e400", "memory": "1e400", "pods": "110", "example.com/x": "1e400"}}}
    big = {"kind": "Pod", "metadata": {"name": "big"}, "spec": {"containers": [
        {"name": c, "resources": {"requests": {"cpu": "1e400", "example.com/x": "1e400"}}} for c in ("a", "b")]}}
    x = {"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "example.com/x": "1e300"}}}]}}
    out = _run([GOOD_NODE, huge, GOOD_POD, x, big])
    assert out["default/good"][0] == "Scheduled"
    assert out["default/x"][0] == "Scheduled"
    assert out["default/big"][0] == "Unschedulable"
    assert out["default/big"][1].startswith("0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient example.com/x.")


def test_node_sums_beyond_int64_are_bounded_in_the_columns():
    from kubesched.sdk import NodeInfo
    from kubesched.sdk.columns import NodeColumns

    ni = NodeInfo(Node(node({"allocatable": {"cpu": "1e400", "pods": "5000"}})))
    for k in range(1100):  # each at RESOURCE_LIMIT: the sum is beyond int64
        ni.add_pod(Pod({"metadata": {"name": f"p{k}", "uid": f"u{k}"}, "spec": {"nodeName": "n", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1e400"}}}]}}))
    assert ni.requested.milli_cpu == 1100 * RESOURCE_LIMIT
    cols = NodeColumns([ni])
    assert int(cols.requested("cpu")[0]) == 1 << 62
    assert int(cols.allocatable("cpu")[0]) == RESOURCE_LIMIT
    assert int(cols.pod_count[0]) == 1100


@pytest.mark.parametrize(("spec", "message"), E2E)
def test_a_malformed_pod_is_an_error_of_its_own(spec, message):
    bad = {"kind": "Pod", "metadata": {"name": "bad"}, "spec": spec}
    out = _run([GOOD_NODE, bad, GOOD_POD])
    assert out["default/bad"] == ("Error", f"invalid pod spec: {message}")
    assert out["default/good"][0] == "Scheduled"


def test_an_absurd_node_does_not_poison_the_pods():
    huge = {"kind": "Node", "metadata": {"name": "n0"}, "status": {"allocatable": {"cpu": "1e400", "memory": "9" * 5000, "pods": "110"}}}
    out = _run([huge, GOOD_POD])
    assert out["default/good"] == ("Scheduled", "")


def test_a_negative_node_is_ignored_with_its_message(caplog):
    neg = {"kind": "Node", "metadata": {"name": "neg"}, "status": {"allocatable": {"cpu": "-4", "pods": "110"}}}
    bound = {"kind": "Pod", "metadata": {"name": "elsewhere"}, "spec": {"nodeName": "n1", "containers": "x"}}
    with caplog.at_level(logging.ERROR, logger="kubesched"):
        out = _run([GOOD_NODE, bound, GOOD_POD])
        handlers_only = [r.getMessage() for r in caplog.records]
    assert out["default/good"] == ("Scheduled", "")
    assert "ignoring pod default/elsewhere bound to node n1: spec.containers: must be a list of objects" in handlers_only
    with pytest.raises(InvalidObjectError) as ei:
        Node(neg).validate()
    assert str(ei.value) == 'status.allocatable.cpu: Invalid value: "-4": ' + NEG
