"""NodePorts, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/nodeports/node_ports_test.go (v1.36.3)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.nodeports import ERR_REASON, NodePorts, fits
from kubesched.sdk import (
    ActionType,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
)
from kubesched.testing import build_plugin, make_pod


def new_pod(host: str, *host_port_infos: str) -> Pod:
    """newPod: a pod on ``host`` with one container whose ports are "PROTOCOL/hostIP/hostPort"."""
    ports = []
    for info in host_port_infos:
        protocol, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": protocol})
    return Pod({"metadata": {"name": "p"}, "spec": {"nodeName": host, "containers": [{"name": "container", "image": "pause", "ports": ports}]}})


def new_node_info(*host_port_infos: str) -> NodeInfo:
    return NodeInfo(None, [new_pod("p1", *host_port_infos)])


def node_info(*pods: Pod) -> NodeInfo:
    return NodeInfo(None, pods)


def init_container_port_pod(sidecar: bool, ports: list[dict[str, Any]]) -> Pod:
    c: dict[str, Any] = {"name": "init-container", "image": "pause", "ports": ports}
    if sidecar:
        c["restartPolicy"] = "Always"
    return Pod({"metadata": {"name": "p"}, "spec": {"initContainers": [c], "containers": []}})


UNSCHEDULABLE = Status(Code.UNSCHEDULABLE, ERR_REASON)


@pytest.mark.parametrize(
    ("pod", "ni", "want_pre_filter", "want_filter"),
    [
        pytest.param(Pod({}), NodeInfo(), Status(Code.SKIP), None, id="TestNodePorts/skip filter"),
        pytest.param(new_pod("m1", "UDP/127.0.0.1/8080"), node_info(new_pod("m1", "UDP/127.0.0.1/9090")), None, None, id="TestNodePorts/other port"),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"), node_info(new_pod("m1", "UDP/127.0.0.1/8080")), None, UNSCHEDULABLE, id="TestNodePorts/same udp port"
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"), node_info(new_pod("m1", "TCP/127.0.0.1/8080")), None, UNSCHEDULABLE, id="TestNodePorts/same tcp port"
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"), node_info(new_pod("m1", "TCP/127.0.0.2/8080")), None, None, id="TestNodePorts/different host ip"
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"), node_info(new_pod("m1", "TCP/127.0.0.1/8080")), None, None, id="TestNodePorts/different protocol"
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
            None,
            UNSCHEDULABLE,
            id="TestNodePorts/second udp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
            None,
            UNSCHEDULABLE,
            id="TestNodePorts/first tcp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/0.0.0.0/8001"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
            None,
            UNSCHEDULABLE,
            id="TestNodePorts/first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
            None,
            UNSCHEDULABLE,
            id="TestNodePorts/TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001"),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
            None,
            UNSCHEDULABLE,
            id="TestNodePorts/second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"), node_info(new_pod("m1", "TCP/0.0.0.0/8001")), None, None, id="TestNodePorts/second different protocol"
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
            None,
            UNSCHEDULABLE,
            id="TestNodePorts/UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            init_container_port_pod(False, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
            Status(Code.SKIP),
            None,
            id="TestNodePorts/non-sidecar initContainer using hostPort",
        ),
        pytest.param(
            init_container_port_pod(True, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
            None,
            UNSCHEDULABLE,
            id="TestNodePorts/TCP hostPort conflict from sidecar initContainer",
        ),
    ],
)
def test_node_ports(pod, ni, want_pre_filter, want_filter):
    p = build_plugin(NodePorts)
    state = CycleState()
    status = p.pre_filter(state, pod, [])
    if want_pre_filter is None:
        assert status is None
    else:
        assert status == want_pre_filter and status.code is want_pre_filter.code
    if status is not None and status.is_skip():
        return
    got = p.filter(state, pod, ni)
    if want_filter is None:
        assert got is None
    else:
        assert got == want_filter and got.code is want_filter.code


def test_pre_filter_disabled():
    """TestPreFilterDisabled: Filter without PreFilter state is an error (fwk.ErrNotFound)."""
    p = build_plugin(NodePorts)
    got = p.filter(CycleState(), Pod({}), NodeInfo(Node({})))
    assert got.code is Code.ERROR
    assert got.message == 'reading "PreFilterNodePorts" from cycleState: not found'


POD_WITH_HOST_PORT = make_pod().host_port(8080).obj()


@pytest.mark.parametrize(
    ("old_obj", "expected"),
    [
        pytest.param("not-a-pod", QueueingHint.QUEUE, id="Test_isSchedulableAfterPodDeleted/backoff-wrong-old-object"),
        pytest.param(make_pod().obj(), QueueingHint.SKIP, id="Test_isSchedulableAfterPodDeleted/skip-queue-on-unscheduled"),
        pytest.param(make_pod().node("fake-node").obj(), QueueingHint.SKIP, id="Test_isSchedulableAfterPodDeleted/skip-queue-on-non-hostport"),
        pytest.param(
            make_pod().node("fake-node").host_port(8081).obj(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterPodDeleted/skip-queue-on-unrelated-hostport",
        ),
        pytest.param(
            make_pod().node("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterPodDeleted/queue-on-released-hostport",
        ),
    ],
)
def test_is_schedulable_after_pod_deleted(old_obj, expected):
    p = build_plugin(NodePorts)
    assert p.is_schedulable_after_pod_deleted(POD_WITH_HOST_PORT, old_obj, None) is expected


@pytest.mark.parametrize(
    ("pod", "existing", "expect"),
    [
        pytest.param(new_pod("p", "TCP/127.0.0.1/80"), new_node_info("TCP/127.0.0.1/9090"), True, id="TestFits/non-conflicting ports"),
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
            new_node_info("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"),
            True,
            id="TestFits/multiple non-conflicting ports",
        ),
        pytest.param(new_pod("m1", "TCP/127.0.0.1/80"), new_node_info("UDP/127.0.0.1/80"), True, id="TestFits/same ports on different protocols"),
        pytest.param(new_pod("m1", "TCP/127.0.0.1/80"), new_node_info("TCP/127.0.0.1/80"), False, id="TestFits/conflicting ports"),
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
            new_node_info("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"),
            False,
            id="TestFits/multiple ports, some conflicting",
        ),
    ],
)
def test_fits(pod, existing, expect):
    assert fits(pod, existing) is expect


def test_events_to_register():
    p = build_plugin(NodePorts)
    evs = p.events_to_register()
    assert [(e.event.resource, e.event.action, e.hint) for e in evs] == [
        (EventResource.POD.value, ActionType.DELETE, p.is_schedulable_after_pod_deleted),
        (EventResource.NODE.value, ActionType.ADD, None),
    ]


# --- details of the port not covered by the Go cases ------------------------------------------------


def test_sidecar_ports_of_pods_on_the_node_are_in_use():
    """util.GetHostPorts also counts the node's pods' sidecar ports (NodeInfo.UsedPorts in Go)."""
    existing = init_container_port_pod(True, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}])
    p = build_plugin(NodePorts)
    state = CycleState()
    pod = new_pod("", "TCP/0.0.0.0/8001")
    assert p.pre_filter(state, pod, []) is None
    assert p.filter(state, pod, node_info(existing)) == UNSCHEDULABLE
    # A non-sidecar init container's port is free once it has run.
    existing = init_container_port_pod(False, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}])
    assert p.filter(state, pod, node_info(existing)) is None
