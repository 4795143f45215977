"""kube-scheduler as the oracle: the real kube-scheduler and kubesched decide on the same state,
pod by pod, and every difference is recorded.

For each scenario (``scenarios.scenario(seed)``) on a real control plane:

1. the nodes (with their status: allocatable, images), PriorityClasses, Services and running
   pods are created in a fresh namespace; kube-scheduler is started at ``-v=10`` with the
   configuration under test (``--feature-gates=OpportunisticBatching=false``: see below), and
   kubesched is started in this process on the same API server, with the same configuration,
   its informers feeding its cache but no scheduling loop;
2. each pending pod is created behind a scheduling gate, so that neither scheduler places it;
   once kubesched's cache holds exactly the pods the API server has bound, kubesched explains
   the pod (``observe.explain.explain_pod``, the framework's own runners: feasible nodes, every
   Score plugin's weighted score per node, totals, the node it would choose, the
   FailedScheduling message); the cycle's own algorithm runs on the same snapshot too (the
   column forms, as ``kubesched run`` schedules) and must agree with explain's per-node result;
3. the gate is removed; kube-scheduler runs its cycle; its ``-v=10`` log gives every plugin's
   score per node ("Plugin scored node for pod") and the totals ("Calculated node's final
   score for pod"), the API server the node it bound or its PodScheduled condition's message;
4. the two are compared: feasible nodes, per-plugin scores, totals, the chosen node where the
   top total is unique (kube-scheduler breaks ties at random), the message of a pod that does
   not fit;
5. for a pod with DRA claims (``scenarios.dra_scenario``; the harness creates a template's claim
   and the pod's ``status.resourceClaimStatuses`` as the resourceclaim controller would), the
   allocation kubesched's DynamicResources Filter made for kube-scheduler's node is compared
   with the allocation kube-scheduler wrote to each claim it allocated (results without the
   random shareID, config, nodeSelector; allocationTimestamp dropped);
6. a pod that does not fit is deleted, unless it preempted (it has a nominated node): then
   the victims are gone (every pod has a grace period of 0, as a kubelet would confirm at once)
   and the harness waits for it to be bound, so that the next pod sees the same state in both.

kube-scheduler's OpportunisticBatching (beta, on since 1.35) is switched off: it gives a pod
the next node of the previous pod's ranking when the pods' signatures match and they arrive
within 500 ms of each other, a decision that depends on timing. kubesched evaluates every pod in
full, which is kube-scheduler's decision with the batch empty or expired.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from scenarios import GATE, STORAGE_CLASS, Scenario, priority_classes

DRA_GROUP, DRA_VERSION = "resource.k8s.io", "v1"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

#: klog's text format: `I1124 03:45:12.123456   12345 file.go:998] "Message" key="value" k=v`
_LINE = re.compile(r'^[IWE]\d{4} [\d:.]+\s+\d+ \S+\] "(?P<msg>[^"]*)"(?P<rest>.*)$')
_KV = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')

KUBE_SCHEDULER_ARGS = ("-v=10", "--feature-gates=OpportunisticBatching=false")
DEFAULT_CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
}


def _kv(rest: str) -> dict[str, str]:
    out = {}
    for k, v in _KV.findall(rest):
        out[k] = v[1:-1].encode().decode("unicode_escape") if v.startswith('"') else v
    return out


@dataclass
class KubeCycle:
    """What kube-scheduler's log says of one pod's first scheduling cycle."""

    attempted: bool = False
    #: the FailedScheduling message, when the first cycle found no fit
    failed: str | None = None
    scores: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> plugin -> weighted
    totals: dict[str, int] = field(default_factory=dict)


def parse_first_cycle(lines: list[str], pod_key: str) -> KubeCycle:
    """The scores and totals kube-scheduler logged in ``pod_key``'s first cycle."""
    cyc = KubeCycle()
    for line in lines:
        m = _LINE.match(line)
        if not m:
            continue
        msg = m.group("msg")
        if msg == "About to try and schedule pod":
            kv = _kv(m.group("rest"))
            if cyc.attempted:
                break  # the next cycle (this pod's retry or another pod's)
            if kv.get("pod") == pod_key:
                cyc.attempted = True
            continue
        if not cyc.attempted:
            continue
        if msg == "Plugin scored node for pod":
            kv = _kv(m.group("rest"))
            if kv.get("pod") == pod_key:
                cyc.scores.setdefault(kv["node"], {})[kv["plugin"]] = int(kv["score"])
        elif msg == "Unable to schedule pod; no fit; waiting":
            kv = _kv(m.group("rest"))
            if kv.get("pod") == pod_key:
                cyc.failed = kv.get("err", "")
        elif msg == "Calculated node's final score for pod":
            kv = _kv(m.group("rest"))
            if kv.get("pod") == pod_key:
                cyc.totals[kv["node"]] = int(kv["score"])
    return cyc


@dataclass
class PodResult:
    pod: str
    kube_node: str | None
    kube_message: str
    kube_feasible: list[str]
    ours_feasible: list[str]
    ours_selected: str | None
    ours_message: str
    differences: list[str] = field(default_factory=list)
    #: why a comparison was not made (e.g. "tie" for the chosen node)
    notes: list[str] = field(default_factory=list)
    preempted: bool = False
    #: kube-scheduler's weighted score per node and plugin (pods with several feasible nodes)
    scores: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ScenarioResult:
    seed: int
    nodes: int
    pods: list[PodResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def differences(self) -> list[str]:
        return [f"{p.pod}: {d}" for p in self.pods for d in p.differences]


def compare(kube: KubeCycle, kube_node: str | None, kube_message: str, ex: Any) -> tuple[list[str], list[str], list[str]]:
    """(differences, notes, kube-scheduler's feasible nodes) of one pod."""
    diffs: list[str] = []
    notes: list[str] = []
    if kube.totals:
        kube_feasible = sorted(kube.totals)
    elif kube_node:
        kube_feasible = [kube_node]  # one feasible node: kube-scheduler does not score
    else:
        kube_feasible = []
    ours_feasible = sorted(ex.feasible)
    if ex.error:
        diffs.append(f"kubesched error: {ex.error}")
    if ours_feasible != kube_feasible:
        diffs.append(f"feasible nodes: kube-scheduler {kube_feasible}, kubesched {ours_feasible}")
    if kube.totals and ours_feasible == kube_feasible:
        for node in kube_feasible:
            ks = kube.scores.get(node, {})
            ours = {p: w for p, (_raw, _norm, w) in ex.scores.get(node, {}).items()}
            for plugin in sorted(set(ks) | set(ours)):
                if ks.get(plugin) != ours.get(plugin):
                    diffs.append(f"{plugin} on {node}: kube-scheduler {ks.get(plugin)}, kubesched {ours.get(plugin)}")
            if kube.totals[node] != ex.totals.get(node):
                diffs.append(f"total on {node}: kube-scheduler {kube.totals[node]}, kubesched {ex.totals.get(node)}")
    if kube_node:
        top = max(kube.totals.values()) if kube.totals else None
        if top is not None and sum(1 for v in kube.totals.values() if v == top) > 1:
            notes.append("tie")
            tied = {n for n, v in kube.totals.items() if v == top}
            if ex.selected not in tied:
                diffs.append(f"chosen node: kube-scheduler one of {sorted(tied)}, kubesched {ex.selected}")
        elif ex.selected != kube_node:
            diffs.append(f"chosen node: kube-scheduler {kube_node}, kubesched {ex.selected}")
    else:
        if ex.selected:
            diffs.append(f"chosen node: kube-scheduler none, kubesched {ex.selected}")
        if kube_message != ex.message:
            diffs.append(f"message: kube-scheduler {kube_message!r}, kubesched {ex.message!r}")
    return diffs, notes, kube_feasible


class Differential:
    """Runs scenarios on ``control_plane`` (a started ``controlplane.ControlPlane``)."""

    def __init__(
        self,
        control_plane: Any,
        workdir: Path,
        config: dict[str, Any] | None = None,
        *,
        ours_config: dict[str, Any] | None = None,
    ) -> None:
        """``config`` is the KubeSchedulerConfiguration both run; ``ours_config``, when given,
        is kubesched's instead (a test shows the harness sees the difference)."""
        from kubernetes import client
        from kubernetes import config as kube_config

        self.cp = control_plane
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config = config or DEFAULT_CONFIG
        self.config_path = self.workdir / "scheduler-config.yaml"
        self.config_path.write_text(yaml.safe_dump(self.config))
        self.ours_config_path = self.config_path
        if ours_config is not None:
            self.ours_config_path = self.workdir / "kubesched-config.yaml"
            self.ours_config_path.write_text(yaml.safe_dump(ours_config))
        self._runs = 0
        self.api_client = kube_config.new_client_from_config(config_file=str(control_plane.kubeconfig))
        self.core = client.CoreV1Api(self.api_client)
        self.sched_api = client.SchedulingV1Api(self.api_client)
        self.storage_api = client.StorageV1Api(self.api_client)
        self.custom = client.CustomObjectsApi(self.api_client)
        storage_class = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": STORAGE_CLASS},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
        for create, body in [(self.sched_api.create_priority_class, pc) for pc in priority_classes()] + [
            (self.storage_api.create_storage_class, storage_class)
        ]:
            try:
                create(body)
            except client.ApiException as e:
                if e.status != 409:
                    raise

    def close(self) -> None:
        self.api_client.close()

    # ---- one scenario ---------------------------------------------------------------------------

    def run(self, sc: Scenario) -> ScenarioResult:
        t0 = time.monotonic()
        self._runs += 1
        sc = _in_namespace(sc, f"{sc.namespace}-{self._runs}")  # namespaces are never reused
        res = ScenarioResult(seed=sc.seed, nodes=len(sc.nodes))
        self._create_state(sc)
        kube = self.cp.start_kube_scheduler(self.config_path, extra_args=KUBE_SCHEDULER_ARGS)
        log_path = self.cp.log_path(f"kube-scheduler-{self.cp._scheduler_count}")
        try:
            with self._kubesched() as ours:
                for body in sc.pending:
                    res.pods.append(self._one(sc, body, ours, log_path))
                    if kube.poll() is not None:
                        raise RuntimeError(f"kube-scheduler exited with {kube.returncode}; see {log_path}")
        finally:
            kube.terminate()
            kube.wait(30)
            self._delete_state(sc)
        res.seconds = time.monotonic() - t0
        return res

    def _create_state(self, sc: Scenario) -> None:
        self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": sc.namespace}})
        for node in sc.nodes:
            body = {k: v for k, v in node.items() if k != "status"}
            self.core.create_node(body)
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            status = dict(node["status"])
            status["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "differential test node", "lastHeartbeatTime": now, "lastTransitionTime": now}]
            status["addresses"] = [{"type": "InternalIP", "address": "10.1.0.1"}, {"type": "Hostname", "address": node["metadata"]["name"]}]
            self.core.patch_node_status(node["metadata"]["name"], {"status": status})
        for svc in sc.services:
            self.core.create_namespaced_service(sc.namespace, svc)
        for claim in sc.claims:
            self._create_claim(sc.namespace, claim)
        for plural, objs in (("deviceclasses", sc.device_classes), ("resourceslices", sc.resource_slices)):
            for obj in objs:
                self.custom.create_cluster_custom_object(DRA_GROUP, DRA_VERSION, plural, obj)
        for plural, objs in (("resourceclaimtemplates", sc.claim_templates), ("resourceclaims", sc.resource_claims)):
            for obj in objs:
                self.custom.create_namespaced_custom_object(DRA_GROUP, DRA_VERSION, sc.namespace, plural, obj)
        for pod in sc.running:
            self.core.create_namespaced_pod(sc.namespace, pod)

    def _create_claim(self, ns: str, claim: dict[str, Any]) -> None:
        """A PVC, and for a bound one its PV (node affinity to a node or a zone, zone label), both
        with the status and annotation the PV controller leaves on a bound pair."""
        name, mode, bound_to = claim["name"], claim["mode"], claim["bound_to"]
        pvc: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"accessModes": [mode], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": STORAGE_CLASS},
        }
        if not bound_to:
            self.core.create_namespaced_persistent_volume_claim(ns, pvc)
            return
        pv_name = f"{ns}-{name}"
        pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        pvc["spec"]["volumeName"] = pv_name
        created = self.core.create_namespaced_persistent_volume_claim(ns, pvc)
        kind, value = bound_to.split(":", 1)
        key = "kubernetes.io/hostname" if kind == "node" else "topology.kubernetes.io/zone"
        pv: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv_name, "labels": {"topology.kubernetes.io/zone": value} if kind == "zone" else {}},
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": [mode],
                "storageClassName": STORAGE_CLASS,
                "hostPath": {"path": f"/tmp/{pv_name}"},
                "claimRef": {"namespace": ns, "name": name, "uid": created.metadata.uid},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}},
            },
        }
        self.core.create_persistent_volume(pv)
        self.core.patch_persistent_volume_status(pv_name, {"status": {"phase": "Bound"}})
        self.core.patch_namespaced_persistent_volume_claim_status(
            name, ns, {"status": {"phase": "Bound", "accessModes": [mode], "capacity": {"storage": "10Gi"}}}
        )

    def _delete_state(self, sc: Scenario) -> None:
        from kubernetes import client

        for pod in self.core.list_namespaced_pod(sc.namespace).items:
            try:
                self.core.delete_namespaced_pod(pod.metadata.name, sc.namespace, grace_period_seconds=0)
            except client.ApiException as e:
                if e.status != 404:
                    raise
        for claim in sc.claims:
            if claim["bound_to"]:
                try:
                    self.core.delete_persistent_volume(f"{sc.namespace}-{claim['name']}")
                except client.ApiException as e:
                    if e.status != 404:
                        raise
        self._delete_dra_state(sc)
        for name in sc.node_names:
            try:
                self.core.delete_node(name)
            except client.ApiException as e:
                if e.status != 404:
                    raise

    def _delete_dra_state(self, sc: Scenario) -> None:
        """Claims (their finalizer removed: no controller runs), then slices and classes, so the
        next scenario on the same node and pool names starts with every device free."""
        from kubernetes import client

        if not (sc.device_classes or sc.resource_slices or sc.resource_claims or sc.claim_templates):
            return
        claims = self.custom.list_namespaced_custom_object(DRA_GROUP, DRA_VERSION, sc.namespace, "resourceclaims")["items"]
        for claim in claims:
            name = claim["metadata"]["name"]
            try:
                if claim["metadata"].get("finalizers"):
                    self.custom.patch_namespaced_custom_object(
                        DRA_GROUP, DRA_VERSION, sc.namespace, "resourceclaims", name, {"metadata": {"finalizers": None}}
                    )
                self.custom.delete_namespaced_custom_object(DRA_GROUP, DRA_VERSION, sc.namespace, "resourceclaims", name)
            except client.ApiException as e:
                if e.status != 404:
                    raise
        for plural, objs in (("resourceslices", sc.resource_slices), ("deviceclasses", sc.device_classes)):
            for obj in objs:
                try:
                    self.custom.delete_cluster_custom_object(DRA_GROUP, DRA_VERSION, plural, obj["metadata"]["name"])
                except client.ApiException as e:
                    if e.status != 404:
                        raise

    def _instantiate_templates(self, ns: str, pod: Any) -> None:
        """The resourceclaim controller's part ($K/pkg/controller/resourceclaim/controller.go
        handleClaim): for each pod claim with a template, a claim named ``<pod>-<podClaim>-``
        + 5 random characters, controlled by the pod, with the pod-claim-name annotation; then
        the pod's ``status.resourceClaimStatuses``."""
        made = []
        for pc in pod.spec.resource_claims or []:
            if not pc.resource_claim_template_name:
                continue
            tmpl = self.custom.get_namespaced_custom_object(
                DRA_GROUP, DRA_VERSION, ns, "resourceclaimtemplates", pc.resource_claim_template_name
            )
            tmeta = tmpl["spec"].get("metadata") or {}
            meta: dict[str, Any] = {
                "generateName": f"{pod.metadata.name}-{pc.name}-",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.metadata.name, "uid": pod.metadata.uid, "controller": True}],
                "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pc.name},
            }
            if tmeta.get("labels"):
                meta["labels"] = tmeta["labels"]
            body = {"apiVersion": f"{DRA_GROUP}/{DRA_VERSION}", "kind": "ResourceClaim", "metadata": meta, "spec": tmpl["spec"]["spec"]}
            claim = self.custom.create_namespaced_custom_object(DRA_GROUP, DRA_VERSION, ns, "resourceclaims", body)
            made.append({"name": pc.name, "resourceClaimName": claim["metadata"]["name"]})
        if made:
            self.core.patch_namespaced_pod_status(pod.metadata.name, ns, {"status": {"resourceClaimStatuses": made}})

    def _dra_synced(self, ours: _Ours, ns: str, pod_name: str) -> bool:
        """kubesched's informers hold the namespace's claims and the pod at the API server's
        resourceVersions (a claim kube-scheduler allocated for the previous pod, the pod's
        resourceClaimStatuses)."""
        informers = ours.cluster.informers
        if "ResourceClaim" not in informers:
            return True
        claims = self.custom.list_namespaced_custom_object(DRA_GROUP, DRA_VERSION, ns, "resourceclaims")["items"]
        store = informers["ResourceClaim"].store
        for c in claims:
            have = store.get(f"{ns}/{c['metadata']['name']}")
            if have is None or have["metadata"].get("resourceVersion") != c["metadata"]["resourceVersion"]:
                return False
        pod_rv = self.core.read_namespaced_pod(pod_name, ns).metadata.resource_version
        have_pod = informers["Pod"].store.get(f"{ns}/{pod_name}")
        return have_pod is not None and have_pod["metadata"].get("resourceVersion") == pod_rv

    def _compare_allocations(self, ns: str, pod: Any, kube_node: str, state: Any) -> list[str]:
        """kubesched's allocation (its Filter's, for kube-scheduler's node) against the claims
        kube-scheduler allocated for the pod."""
        from kubesched.runtime.plugins.dynamicresources import STATE_KEY

        try:
            s = state.read(STATE_KEY)
            node_allocations = s.node_allocations  # DraState: Filter's allocations by node
            to_allocate = [c for _i, c in s.claims.to_allocate()]
        except Exception as e:  # the harness must not go blind when the plugin's state changes
            return [f"claims: kubesched's DynamicResources state not readable: {e!r}"]
        if not to_allocate:
            return []
        found = node_allocations.get(kube_node)
        if found is None:
            return [f"claims: kubesched has no allocation on {kube_node}"]
        out = []
        for claim, ours in zip(to_allocate, found.allocation_results, strict=False):
            name = claim["metadata"]["name"]
            kube = self.custom.get_namespaced_custom_object(DRA_GROUP, DRA_VERSION, ns, "resourceclaims", name)
            theirs = _comparable_allocation((kube.get("status") or {}).get("allocation"))
            mine = _comparable_allocation(ours)
            if theirs != mine:
                out.append(f"claim {name} allocation: kube-scheduler {theirs}, kubesched {mine}")
        return out

    # ---- kubesched, in this process --------------------------------------------------------------

    class _Ours:
        def __init__(self, sched: Any, cluster: Any) -> None:
            self.sched = sched
            self.cluster = cluster

    def _kubesched(self) -> Any:
        from contextlib import contextmanager

        from kubesched.runtime.cli.app import load_config_file, registry
        from kubesched.runtime.cli.run_cmd import required_kinds
        from kubesched.runtime.cluster.kubernetes import KubeClient, KubernetesCluster
        from kubesched.runtime.scheduler import Scheduler

        @contextmanager
        def started() -> Iterator[Differential._Ours]:
            reg = registry()
            cfg = load_config_file(str(self.ours_config_path), reg)
            kc = KubeClient(str(self.cp.kubeconfig), qps=1000, burst=1000)
            cluster = KubernetesCluster(kc, kinds=required_kinds(cfg, reg))
            sched = Scheduler(cfg, reg, cluster, seed=0, simulated=False)
            try:
                cluster.start_informers()
                if not cluster.wait_for_sync(60):
                    raise RuntimeError("kubesched's informers did not sync within 60 s")
                cluster.start(sched.on_cluster_event)
                yield Differential._Ours(sched, cluster)
            finally:
                sched.shutdown()
                cluster.stop(flush=0)

        return started()

    def _wait_synced(self, ours: _Ours, ns: str, pod_name: str, timeout: float = 30.0, *, dra: bool = False) -> dict[str, Any]:
        """Wait until kubesched's cache holds exactly the pods the API server has bound, and its
        informer has ``pod_name``; return that pod as kubesched's informer has it."""
        deadline = time.monotonic() + timeout
        store = ours.cluster.informers["Pod"].store
        while True:
            ours.sched.drain()
            bound = {
                p.metadata.uid: p.spec.node_name
                for p in self.core.list_pod_for_all_namespaces().items
                if p.spec.node_name and p.metadata.deletion_timestamp is None
            }
            cache = ours.sched.cache
            obj = store.get(f"{ns}/{pod_name}")
            ok = obj is not None and cache.pod_count() == len(bound)
            if ok:
                for uid, node in bound.items():
                    cp = cache.pod(uid)
                    if cp is None or cp.node_name != node:
                        ok = False
                        break
            if ok and dra:
                ok = self._dra_synced(ours, ns, pod_name)
                # the informers' events up to what was just seen reach the plugin's claim tracker,
                # and the pod explained is the one with its resourceClaimStatuses
                ours.sched.drain()
                obj = store.get(f"{ns}/{pod_name}")
            if ok:
                return dict(obj)
            if time.monotonic() > deadline:
                raise TimeoutError(f"kubesched's cache did not reach the API server's state for {ns}/{pod_name} in {timeout}s")
            time.sleep(0.02)

    def _explain(self, ours: _Ours, raw: dict[str, Any]) -> Any:
        from kubesched.runtime.observe.explain import explain_pod
        from kubesched.sdk import Pod

        spec = dict(raw.get("spec") or {})
        spec.pop("schedulingGates", None)
        raw = {**raw, "spec": spec}
        pod = Pod(raw)
        fw = ours.sched.frameworks[pod.scheduler_name]
        return explain_pod(fw, ours.sched.cache.update_snapshot(), pod, select=ours.sched.algo.select_host)

    def _scheduled(self, ours: _Ours, raw: dict[str, Any], ex: Any, state: Any = None) -> list[str]:
        """The cycle's own algorithm (``Scheduling.schedule_pod``: the column forms where every
        active plugin has one, as ``kubesched run`` schedules) on the same snapshot, against
        ``explain`` (the per-node hooks, compared with kube-scheduler): the feasible nodes, the
        host among the top totals, the FailedScheduling message. Differences as text."""
        from kubesched.runtime.diagnosis import FitError
        from kubesched.runtime.scheduling import Scheduling, SchedulingError
        from kubesched.sdk import CycleState, Pod

        spec = dict(raw.get("spec") or {})
        spec.pop("schedulingGates", None)
        pod = Pod({**raw, "spec": spec})
        fw = ours.sched.frameworks[pod.scheduler_name]
        snapshot = ours.sched.cache.update_snapshot()
        algo = Scheduling(seed=1)
        out: list[str] = []
        try:
            res = algo.schedule_pod(fw, state if state is not None else CycleState(), pod, snapshot)
        except FitError as fe:
            # explain's message ends with PostFilter's (preemption), which the cycle adds later
            if ex.selected is not None or not (ex.message == fe.message() or ex.message.startswith(fe.message() + " ")):
                out.append(f"columns: no fit ({fe.message()!r}), explain {ex.selected or ex.message!r}")
            return out
        except SchedulingError as e:
            return [f"columns: error {e.status.message!r}, explain {ex.error or ex.selected!r}"]
        rejected = set(res.diagnosis.node_to_status) if res.diagnosis is not None else set()
        feasible = sorted(n for n in ex.nodes if n not in rejected) if res.feasible_nodes > 1 else None
        if feasible is not None and feasible != sorted(ex.feasible):
            out.append(f"columns: feasible {feasible}, explain {sorted(ex.feasible)}")
        top = max(ex.totals.values()) if ex.totals else None
        best = {n for n, v in ex.totals.items() if v == top} if top is not None else {ex.selected}
        if res.suggested_host not in best:
            out.append(f"columns: chose {res.suggested_host}, explain's top {sorted(b for b in best if b)}")
        return out

    # ---- one pod ----------------------------------------------------------------------------------

    def _one(self, sc: Scenario, body: dict[str, Any], ours: _Ours, log_path: Path) -> PodResult:
        from kubernetes import client

        ns, name = sc.namespace, body["metadata"]["name"]
        gated = {**body, "spec": {**body["spec"], "schedulingGates": [{"name": GATE}]}}
        created = self.core.create_namespaced_pod(ns, gated)
        dra = bool(body["spec"].get("resourceClaims"))
        if dra:
            self._instantiate_templates(ns, created)
        raw = self._wait_synced(ours, ns, name, dra=dra)
        ex = self._explain(ours, raw)
        from kubesched.sdk import CycleState

        state = CycleState()
        column_diffs = self._scheduled(ours, raw, ex, state)

        offset = log_path.stat().st_size
        self.core.patch_namespaced_pod(name, ns, [{"op": "remove", "path": "/spec/schedulingGates"}])
        pod = self._wait_outcome(ns, name)
        with open(log_path, "rb") as f:
            f.seek(offset)
            lines = f.read().decode(errors="replace").splitlines()
        kube = parse_first_cycle(lines, f"{ns}/{name}")
        # The first cycle decides: a pod that preempted may be bound by its retry already.
        kube_node = None if kube.failed is not None else pod.spec.node_name
        message = kube.failed or ""
        nominated = pod.status.nominated_node_name
        diffs, notes, kube_feasible = compare(kube, kube_node, message, ex)
        diffs += column_diffs
        if dra and kube_node:
            diffs += self._compare_allocations(ns, pod, kube_node, state)
        if not kube.attempted:
            diffs.append("kube-scheduler's log has no cycle for this pod")
        result = PodResult(
            pod=f"{ns}/{name}",
            kube_node=kube_node,
            kube_message=message,
            kube_feasible=kube_feasible,
            ours_feasible=sorted(ex.feasible),
            ours_selected=ex.selected,
            ours_message=ex.message,
            differences=diffs,
            notes=notes,
            preempted=bool(kube.failed is not None and (nominated or pod.spec.node_name)),
            scores=kube.scores,
        )
        if not pod.spec.node_name:
            if nominated:
                self._finish_preemption(ns, name)
            else:
                try:
                    self.core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
                except client.ApiException as e:
                    if e.status != 404:
                        raise
                self._wait_gone(ns, name)
        return result

    def _wait_outcome(self, ns: str, name: str, timeout: float = 60.0) -> Any:
        """The pod once kube-scheduler's first cycle is over: bound, or PodScheduled=False."""
        deadline = time.monotonic() + timeout
        while True:
            pod = self.core.read_namespaced_pod(name, ns)
            if pod.spec.node_name:
                return pod
            for c in pod.status.conditions or []:
                if c.type == "PodScheduled" and c.status == "False" and c.reason != "SchedulingGated":
                    return pod
            if time.monotonic() > deadline:
                raise TimeoutError(f"kube-scheduler did not decide on {ns}/{name} within {timeout}s")
            time.sleep(0.02)

    def _finish_preemption(self, ns: str, name: str, timeout: float = 60.0) -> None:
        """The preemptor: victims gone (grace period 0), then wait until it is bound (or, if
        kube-scheduler gives up on it, delete it)."""
        from kubernetes import client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in self.core.list_namespaced_pod(ns).items:
                if p.metadata.deletion_timestamp is not None:
                    try:
                        self.core.delete_namespaced_pod(p.metadata.name, ns, grace_period_seconds=0)
                    except client.ApiException as e:
                        if e.status != 404:
                            raise
            if self.core.read_namespaced_pod(name, ns).spec.node_name:
                return
            time.sleep(0.1)
        self.core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
        self._wait_gone(ns, name)

    def _wait_gone(self, ns: str, name: str, timeout: float = 30.0) -> None:
        from kubernetes import client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.core.read_namespaced_pod(name, ns)
            except client.ApiException as e:
                if e.status == 404:
                    return
                raise
            time.sleep(0.02)
        raise TimeoutError(f"{ns}/{name} still exists after {timeout}s")


def _in_namespace(sc: Scenario, ns: str) -> Scenario:
    def moved(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**o, "metadata": {**o["metadata"], "namespace": ns}} for o in objs]

    return Scenario(
        seed=sc.seed,
        namespace=ns,
        nodes=sc.nodes,
        services=moved(sc.services),
        running=moved(sc.running),
        pending=moved(sc.pending),
        claims=sc.claims,
        device_classes=sc.device_classes,
        resource_slices=sc.resource_slices,
        resource_claims=moved(sc.resource_claims),
        claim_templates=moved(sc.claim_templates),
    )


def _comparable_allocation(alloc: Any) -> Any:
    """An AllocationResult as both schedulers must agree on it: no allocationTimestamp, no
    shareID, and no empty or null field (the API server drops them; kubesched's in-memory
    result may carry them)."""

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            out = {k: clean(v) for k, v in x.items() if k not in ("allocationTimestamp", "shareID")}
            return {k: v for k, v in out.items() if v not in (None, [], {})}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return clean(dict(alloc)) if alloc else None


def summarize(results: list[ScenarioResult]) -> dict[str, Any]:
    pods = [p for r in results for p in r.pods]
    kinds: Counter[str] = Counter()
    for p in pods:
        for d in p.differences:
            kinds[d.split(":", 1)[0].split(" on ")[0]] += 1
    scored = sum(1 for p in pods if len(p.kube_feasible) > 1)
    return {
        "scenarios": len(results),
        "pods": len(pods),
        "bound": sum(1 for p in pods if p.kube_node),
        "unschedulable": sum(1 for p in pods if not p.kube_node),
        "preempted": sum(1 for p in pods if p.preempted),
        "scored": scored,
        "node_scores_compared": sum(len(p.kube_feasible) for p in pods if len(p.kube_feasible) > 1),
        "ties": sum(1 for p in pods if "tie" in p.notes),
        "pods_with_differences": sum(1 for p in pods if p.differences),
        "differences_by_kind": dict(kinds),
        "seconds": round(sum(r.seconds for r in results), 1),
    }
