"""PreBindPreFlight and NominatedNodeNameForExpectation (beta, on by default since 1.35).

kube-scheduler v1.36.3: framework.go ``RunPreBindPreFlights`` (framework_test.go
TestPreBindPreFlightPlugins), schedule_one.go ``bindingCycle`` (schedule_one_test.go
TestSchedulerScheduleOne, the PreBindPreFlight and nominated-node-name cases): a PreBind plugin's
PreBindPreFlight says whether its PreBind has work to do for the pod; when one has, or the pod
waits at Permit, the pod's ``status.nominatedNodeName`` is set to the node before PreBind.

The simulated cluster's writes to a pod are recorded through its object store, in order.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster
from kubesched.runtime.config import load_config
from kubesched.runtime.observe.metrics import Metrics
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import Code, CycleState, Pod, Status, hookimpl


def _record(run: Any, writes: list[Any] | None = None) -> list[Any]:
    """Every change of a pod's ``spec.nodeName`` and ``status.nominatedNodeName`` in the
    simulated cluster, in order, appended to ``writes``: (pod, "nodeName" |
    "nominatedNodeName", new value)."""
    writes = [] if writes is None else writes

    def listener(etype: str, kind: str, old: Any, new: Any) -> None:
        if kind != "Pod" or etype != "MODIFIED":
            return
        name = new["metadata"]["name"]
        if (old.get("spec") or {}).get("nodeName") != (new.get("spec") or {}).get("nodeName"):
            writes.append((name, "nodeName", new["spec"]["nodeName"]))
        before, after = old.get("status") or {}, new.get("status") or {}
        if before.get("nominatedNodeName") != after.get("nominatedNodeName"):
            writes.append((name, "nominatedNodeName", after.get("nominatedNodeName")))

    run.cluster.store.subscribe(listener)
    return writes


def _start(run: Any, writes: list[Any] | None = None) -> list[Any]:
    writes = _record(run, writes)
    run.start()
    return writes


# --- RunPreBindPreFlights ------------------------------------------------------------------------


def _flight(code: Code | None, calls: list[Any] | None = None) -> type:
    """framework_test.go's TestPlugin with an injected PreBindPreFlight code (reason
    "injected status"); its PreBind records the call."""

    class P:
        @hookimpl
        def pre_bind_pre_flight(self, state, pod, node_name):
            if calls is not None:
                calls.append(("pre_bind_pre_flight", pod.name))
            return None if code is None else Status(code, "injected status")

        @hookimpl
        def pre_bind(self, pod):
            if calls is not None:
                calls.append(("pre_bind", pod.name))

    return P


_S, _K, _E, _U = Code.SUCCESS, Code.SKIP, Code.ERROR, Code.UNSCHEDULABLE
#: framework_test.go TestPreBindPreFlightPlugins: (plugins with their injected code, want)
PRE_FLIGHT_CASES: dict[str, tuple[list[tuple[str, Code]], Status]] = {
    "Skip when there's no PreBind Plugin": ([], Status(Code.SKIP)),
    "Success when PreBindPreFlight returns Success": ([("TestPlugin1", _K), ("TestPlugin2", _S)], Status()),
    "Skip when all PreBindPreFlight returns Skip": ([("TestPlugin1", _K), ("TestPlugin2", _K)], Status(Code.SKIP)),
    "Error when PreBindPreFlight returns Error": (
        [("TestPlugin1", _K), ("TestPlugin2", _E)],
        Status(Code.ERROR, 'running PreBindPreFlight "TestPlugin2": injected status'),
    ),
    "Error when PreBindPreFlight returns Unschedulable": (
        [("TestPlugin", _U)],
        Status(
            Code.ERROR,
            'PreBindPreFlight TestPlugin returned "Unschedulable", which is unsupported. '
            "It is supposed to return Success, Skip, or Error status",
        ),
    ),
}


@pytest.mark.parametrize("case", list(PRE_FLIGHT_CASES))
def test_run_pre_bind_pre_flights(ks, case: str) -> None:
    """framework_test.go TestPreBindPreFlightPlugins."""
    plugins, want = PRE_FLIGHT_CASES[case]
    r = ks.build({n: _flight(c) for n, c in plugins}, {"preBind": [n for n, _ in plugins]}, ks.nodes(1))
    st = r.framework.run_pre_bind_pre_flights(CycleState(), Pod(ks.pod("p")), "")
    assert (st.code, st.message) == (want.code, want.message)


def test_pre_flight_records_the_plugins_that_skip_and_pre_bind_runs_the_others(ks, calls) -> None:
    """RunPreBindPreFlights' SetSkipPreBindPlugins, RunPreBindPlugins' skippedPlugins: one call
    per PreBind plugin for a plugin that skips (its PreBindPreFlight), two for one that works."""
    plugins = {"Skips": _flight(_K, calls), "Works": _flight(_S, calls)}
    r = ks.build(plugins, {"preBind": ["Skips", "Works"]}, ks.nodes(1))
    fw, state, p = r.framework, CycleState(), Pod(ks.pod("p"))
    assert fw.run_pre_bind_pre_flights(state, p, "n1").code is Code.SUCCESS
    assert state.skip_pre_bind_plugins == {"Skips"}
    assert fw.run_pre_bind(state, p, "n1").is_success()
    assert calls == [("pre_bind_pre_flight", "p"), ("pre_bind_pre_flight", "p"), ("pre_bind", "p")]


def test_a_pre_bind_plugin_without_the_hook_counts_as_success(ks, calls) -> None:
    class Plain:
        @hookimpl
        def pre_bind(self, pod):
            calls.append(("pre_bind", pod.name))

    r = ks.build({"Plain": Plain, "Skips": _flight(_K)}, {"preBind": ["Plain", "Skips"]}, ks.nodes(1))
    state = CycleState()
    assert r.framework.run_pre_bind_pre_flights(state, Pod(ks.pod("p")), "n1").code is Code.SUCCESS
    assert state.skip_pre_bind_plugins == {"Skips"}


def test_pre_flight_exception_and_contract_errors(ks) -> None:
    class Raises:
        @hookimpl
        def pre_bind_pre_flight(self):
            raise RuntimeError("boom")

        @hookimpl
        def pre_bind(self):
            return None

    class ReturnsInt:
        @hookimpl
        def pre_bind_pre_flight(self):
            return 1

        @hookimpl
        def pre_bind(self):
            return None

    r = ks.build({"Raises": Raises, "ReturnsInt": ReturnsInt}, {"preBind": ["Raises"]}, ks.nodes(1))
    st = r.framework.run_pre_bind_pre_flights(CycleState(), Pod(ks.pod("p")), "n1")
    assert (st.code, st.message) == (Code.ERROR, 'running PreBindPreFlight "Raises": RuntimeError: boom')
    r = ks.build({"ReturnsInt": ReturnsInt}, {"preBind": ["ReturnsInt"]}, ks.nodes(1))
    st = r.framework.run_pre_bind_pre_flights(CycleState(), Pod(ks.pod("p")), "n1")
    assert (st.code, st.message) == (
        Code.ERROR,
        'plugin "ReturnsInt" hook pre_bind_pre_flight returned int 1; expected None or a Status (Success, Skip or Error)',
    )


# --- bindingCycle: the nominated node name -------------------------------------------------------


def _fake_pre_bind(pre_flight: Status | None, pre_bind: Status | None, calls: list[Any]) -> type:
    """fake_plugins.go FakePreBindPlugin: the given PreBindPreFlight and PreBind statuses."""

    class FakePreBind:
        @hookimpl
        def pre_bind_pre_flight(self, pod):
            calls.append(("pre_bind_pre_flight", pod.name))
            return pre_flight

        @hookimpl
        def pre_bind(self, pod):
            calls.append(("pre_bind", pod.name))
            return pre_bind

    return FakePreBind


BINDING_CASES: dict[str, tuple[Status | None, Status | None, list[Any], tuple[str, str | None, str]]] = {
    # id: (PreBindPreFlight, PreBind, the pod's writes, (result, node, message))
    "prebindpreflight failed with status code error": (
        Status.failed("on PreBindPreFlight"),
        None,
        [],
        ("Error", None, 'running PreBindPreFlight "FakePreBind": on PreBindPreFlight'),
    ),
    "prebindpreflight failed with status code unschedulable": (
        Status.unschedulable("rejected on prebindpreflight"),
        None,
        [],
        (
            "Error",
            None,
            'PreBindPreFlight FakePreBind returned "Unschedulable", which is unsupported. '
            "It is supposed to return Success, Skip, or Error status",
        ),
    ),
    "prebind isn't called and nominated node name isn't set, if preflight returns skip": (
        Status.skip(),
        Status.failed("rejected on prebind"),
        [("p", "nodeName", "n1")],
        ("Scheduled", "n1", ""),
    ),
    "prebind is called and nominated node name is set, if preflight returns success": (
        None,
        None,
        [("p", "nominatedNodeName", "n1"), ("p", "nodeName", "n1"), ("p", "nominatedNodeName", None)],
        ("Scheduled", "n1", ""),
    ),
    # Go's table expects node1 to stay: its fake's failure handler holds the pod as it was
    # before the nomination, so clearNominatedNode finds nothing to change. kubesched's failure
    # handler clears it in the same write as the PodScheduled=False condition, as
    # kube-scheduler does once its informer has the nominated pod.
    "prebind failed with status code error": (
        None,
        Status.failed("on PreBind"),
        [("p", "nominatedNodeName", "n1"), ("p", "nominatedNodeName", None)],
        ("Error", None, 'running PreBind plugin "FakePreBind": on PreBind'),
    ),
}


@pytest.mark.parametrize("case", list(BINDING_CASES))
def test_binding_cycle_pre_flight_and_nomination(ks, calls, case: str) -> None:
    """schedule_one_test.go TestSchedulerScheduleOne: the PreBindPreFlight cases."""
    pre_flight, pre_bind, want_writes, (status, node, message) = BINDING_CASES[case]
    plugin = _fake_pre_bind(pre_flight, pre_bind, calls)
    r = ks.build({"FakePreBind": plugin}, {"preBind": ["FakePreBind"]}, ks.nodes(1) + [ks.pod("p")])
    writes = _start(r)
    res = r.result("p")
    assert (res.status, res.node, res.message) == (status, node, message)
    assert writes == want_writes
    ran_pre_bind = pre_flight is None or pre_flight.code is Code.SUCCESS
    assert calls == [("pre_bind_pre_flight", "p")] + ([("pre_bind", "p")] if ran_pre_bind else [])
    if status == "Error":
        (ev,) = r.events("FailedScheduling")
        assert ev.note == message
        assert not r.scheduler.cache.is_assumed("p") and r.cluster.binds == []


def test_bind_assumed_pod_scheduled_without_pre_bind_plugins(ks) -> None:
    """schedule_one_test.go TestSchedulerScheduleOne/bind assumed pod scheduled: no PreBind plugin, no Permit wait: the pod is
    bound without a nomination write."""
    r = ks.build({}, {}, ks.nodes(1) + [ks.pod("p")])
    writes = _start(r)
    assert r.result("p").status == "Scheduled"
    assert writes == [("p", "nodeName", "n1")]


def test_already_nominated_to_the_node_is_not_written_again(ks, calls) -> None:
    """updatePod: nominatedNodeName is written only when it differs from the pod's."""
    p = ks.pod("p")
    p["status"] = {"nominatedNodeName": "n1"}
    r = ks.build({"FakePreBind": _fake_pre_bind(None, None, calls)}, {"preBind": ["FakePreBind"]}, ks.nodes(1) + [p])
    writes = _start(r)
    assert writes == [("p", "nodeName", "n1"), ("p", "nominatedNodeName", None)]


# --- Permit ----------------------------------------------------------------------------------------


def _gang(writes: list[Any], *, pre_flight: Status | None = Status.skip()) -> type:
    """Pod "a" waits at Permit (60s); pod "b" allows it through the handle."""

    class Gang:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def permit(self, pod):
            if pod.name == "a":
                return Status.wait(), 60
            writes.append(("b allows a",))
            wp = self.handle.get_waiting_pod("a")
            if wp is not None:
                wp.allow("Gang")
            return None

        @hookimpl
        def pre_bind_pre_flight(self):
            return pre_flight

        @hookimpl
        def pre_bind(self):
            return None

    return Gang


def _pending_a_then_b(ks) -> list[dict[str, Any]]:
    return [ks.pod("a", created="2024-01-01T00:00:00Z"), ks.pod("b", created="2024-01-01T00:00:01Z")]


def test_a_pod_waiting_on_permit_is_nominated_before_it_is_allowed(ks) -> None:
    """schedule_one_test.go TestSchedulerScheduleOne/nominated node name is set, permit plugin is working in wait on permit
    phase: every PreBind plugin skips, but the pod waits at Permit, so it is nominated as its
    wait begins; "b", which does not wait, is not."""
    writes: list[Any] = []
    r = ks.build({"Gang": _gang(writes)}, {"permit": ["Gang"], "preBind": ["Gang"]}, ks.nodes(1) + _pending_a_then_b(ks))
    _start(r, writes)
    assert r.result("a").status == "Scheduled" and r.result("b").status == "Scheduled"
    a_writes = [w for w in writes if w[0] in ("a", "b allows a")]
    assert a_writes == [("a", "nominatedNodeName", "n1"), ("b allows a",), ("a", "nodeName", "n1"), ("a", "nominatedNodeName", None)]
    assert [w for w in writes if w[0] == "b"] == [("b", "nodeName", "n1")]


def test_pre_flight_error_of_a_waiting_pod_ends_its_wait(ks) -> None:
    """bindingCycle returns the PreBindPreFlight Error before WaitOnPermit: the pod is not
    nominated and fails at once, without waiting for its Permit timeout."""
    writes: list[Any] = []

    class Waits:
        @hookimpl
        def permit(self):
            return Status.wait(), 60

        @hookimpl
        def pre_bind_pre_flight(self):
            return Status.failed("volume gone")

        @hookimpl
        def pre_bind(self):
            return None

    r = ks.build({"Waits": Waits}, {"permit": ["Waits"], "preBind": ["Waits"]}, ks.nodes(1) + [ks.pod("a")])
    _record(r, writes)
    r.cluster.start(r.scheduler.on_cluster_event)
    for m in r.cluster.manifests:
        r.cluster.store.create(m)
    t0 = r.scheduler.clock.now()
    r.scheduler.run_until_idle(advance_time=False)
    res = r.result("a")
    assert (res.status, res.message) == ("Error", 'running PreBindPreFlight "Waits": volume gone')
    assert r.scheduler.clock.now() == t0
    assert r.scheduler.waiting_pods == {}
    assert not r.scheduler.cache.is_assumed("a")
    assert writes == []


def _drive(sched: Any, timeout: float = 10.0) -> None:
    """Run the scheduler loop in this thread until idle (bindings on the pool included)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sched.step():
            continue
        if sched.idle():
            return
        time.sleep(0.001)
    raise AssertionError("scheduler did not become idle")


def test_binding_of_a_released_pod_waits_for_its_pre_flight(ks) -> None:
    """On a worker pool, pod "a" is allowed while its PreBindPreFlight step (run on another
    worker as its wait began) is still running: its binding cycle waits for that step, so the
    nomination is written before the bind, as in kube-scheduler's one binding goroutine."""
    writes: list[Any] = []
    allowed = threading.Event()

    class Gang:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def permit(self, pod):
            if pod.name == "a":
                return Status.wait(), 60
            self.handle.get_waiting_pod("a").allow("Gang")
            allowed.set()
            return None

        @hookimpl
        def pre_bind_pre_flight(self, pod):
            if pod.name == "a":
                allowed.wait(5)
                time.sleep(0.2)  # the released binding cycle of "a" starts meanwhile
                writes.append(("a pre-flight done",))
            return None

        @hookimpl
        def pre_bind(self):
            return None

    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="binding") as pool:
        r = ks.build({"Gang": Gang}, {"permit": ["Gang"], "preBind": ["Gang"]}, ks.nodes(1) + _pending_a_then_b(ks), executor=pool)
        _record(r, writes)
        r.cluster.start(r.scheduler.on_cluster_event)
        for m in r.cluster.manifests:
            r.cluster.store.create(m)
        _drive(r.scheduler)
    assert r.bound() == {"a": "n1", "b": "n1"}
    assert [w for w in writes if w[0].startswith("a")] == [
        ("a pre-flight done",), ("a", "nominatedNodeName", "n1"), ("a", "nodeName", "n1"), ("a", "nominatedNodeName", None),
    ]


# --- the default profile: VolumeBinding ------------------------------------------------------------


WFC = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "local"},
    "provisioner": "kubernetes.io/no-provisioner",
    "volumeBindingMode": "WaitForFirstConsumer",
}
PV = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "pv-1"},
    "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local"},
    "status": {"phase": "Available"},
}
PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "default"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}, "storageClassName": "local"},
}


def _default_profile_run(ks, manifests: list[dict[str, Any]], metrics: Metrics | None = None) -> Any:
    reg = ks.registry()
    cluster = SimulatedCluster([dict(m) for m in manifests])
    return ks.Run(Scheduler(load_config(None), reg, cluster, simulated=True, seed=1, metrics=metrics), cluster)


def _claim_pod(ks, name: str) -> dict[str, Any]:
    p = ks.pod(name, scheduler="default-scheduler")
    p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    return p


def test_default_profile_nominates_a_pod_whose_volumes_are_bound_in_pre_bind(ks) -> None:
    """A pod with an unbound WaitForFirstConsumer claim: VolumeBinding's PreBind has work (it
    binds pv-1), so the pod is nominated to its node before PreBind writes the claim and the
    bind; a plain pod (VolumeBinding and DynamicResources skip) gets no such write."""
    r = _default_profile_run(ks, [*ks.nodes(1), WFC, PV, PVC, _claim_pod(ks, "db"), ks.pod("plain", scheduler="default-scheduler")])
    events: list[Any] = []
    r.cluster.store.subscribe(lambda etype, kind, old, new: events.append((kind, new["metadata"]["name"])) if kind == "PersistentVolumeClaim" and etype == "MODIFIED" else None)
    writes = _start(r)
    assert r.result("db").node == "n1" and r.result("plain").node == "n1"
    assert [w for w in writes if w[0] == "db"] == [("db", "nominatedNodeName", "n1"), ("db", "nodeName", "n1"), ("db", "nominatedNodeName", None)]
    assert [w for w in writes if w[0] == "plain"] == [("plain", "nodeName", "n1")]
    assert r.cluster.store.get("v1", "PersistentVolumeClaim", "data", "default")["spec"]["volumeName"] == "pv-1"
    assert ("PersistentVolumeClaim", "data") in events
    assert r.scheduler.frameworks["default-scheduler"].points["preBind"] == ["VolumeBinding", "DynamicResources"]


def test_pre_bind_pre_flight_metrics(ks) -> None:
    """scheduler_framework_extension_point_duration_seconds{extension_point="PreBindPreFlight"}
    once per binding cycle, and in sampled cycles each plugin's PreBindPreFlight under the
    same label (metrics.PreBindPreFlight)."""
    metrics = Metrics(plugin_sample_rate=1.0)
    r = _default_profile_run(ks, [*ks.nodes(1), ks.pod("plain", scheduler="default-scheduler")], metrics)
    r.start()

    def counts(name: str, label: str) -> dict[str, int]:
        return {
            s.labels[label] + ("/" + s.labels["plugin"] if "plugin" in s.labels else ""): int(s.value)
            for f in metrics.registry.collect()
            for s in f.samples
            if s.name == f"{name}_count" and "PreBind" in s.labels.get("extension_point", "")
        }

    assert counts("scheduler_framework_extension_point_duration_seconds", "extension_point") == {"PreBindPreFlight": 1, "PreBind": 1}
    assert counts("scheduler_plugin_execution_duration_seconds", "extension_point") == {
        "PreBindPreFlight/VolumeBinding": 1,
        "PreBindPreFlight/DynamicResources": 1,
    }
