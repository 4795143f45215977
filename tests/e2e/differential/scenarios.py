"""A seeded generator of random clusters and pending pods for the differential test.

``scenario(seed)`` returns a :class:`Scenario`: nodes (labels for hostname, zone, disk and a
numeric generation; cpu/memory/pods and sometimes an extended resource; taints; images;
sometimes cordoned), PriorityClasses, Services (their selectors give pods kube-scheduler's
default topology spreading), pods already running on nodes, and the pending pods, scheduled
one after another. The pending pods draw from every default plugin's inputs: requests (with
init containers and restartable sidecars, and best-effort pods), nodeSelector, required and
preferred node affinity (In, NotIn, Exists, DoesNotExist, Gt, Lt, matchFields on the name),
required and preferred pod (anti-)affinity on hostname and zone, topology spread constraints
(maxSkew, minDomains, nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys, both
whenUnsatisfiable values), tolerations, host ports, images and priorities (which make
DefaultPreemption act).

``dra_scenario(seed)`` is another generator (its own random stream, so ``scenario(seed)`` is
unchanged): dynamic resource allocation (resource.k8s.io/v1). DeviceClasses, a ResourceSlice per
node (GPUs with model, memory and numa; NICs with numa) and sometimes a pool for all nodes,
standalone ResourceClaims (some shared by several pods) and ResourceClaimTemplates (the harness
acts as the resourceclaim controller), requests with CEL selectors on attributes and capacity,
count 1-2, allocationMode All, firstAvailable subrequests, matchAttribute and distinctAttribute
constraints, and a missing device class now and then.

The same seed gives the same scenario on every machine (``random.Random(seed)`` only).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

ZONES = ("zone-a", "zone-b", "zone-c")
DISKS = ("ssd", "hdd")
APPS = ("web", "db", "cache", "batch")
IMAGES = {
    "registry.example/web:1": 250 * 1024**2,
    "registry.example/db:2": 900 * 1024**2,
    "registry.example/cache:3": 60 * 1024**2,
    "registry.example/batch:4": 1500 * 1024**2,
    "registry.example/tiny:5": 5 * 1024**2,
}
GPU = "example.com/gpu"
TAINTS = (
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "NoExecute"},
    {"key": "gpu", "value": "true", "effect": "NoSchedule"},
)
#: name -> (value, preemptionPolicy)
PRIORITY_CLASSES = {
    "diff-low": (10, "PreemptLowerPriority"),
    "diff-mid": (100, "PreemptLowerPriority"),
    "diff-high": (1000, "PreemptLowerPriority"),
    "diff-high-never": (1000, "Never"),
}
GATE = "kubesched.io/differential"
STORAGE_CLASS = "diff-static"
RESTART_ALL = "RestartAllContainersOnContainerExits"


@dataclass
class Scenario:
    seed: int
    namespace: str
    #: (name, labels, taints, unschedulable, allocatable, images)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    services: list[dict[str, Any]] = field(default_factory=list)
    #: pods bound to a node from the start (spec.nodeName set)
    running: list[dict[str, Any]] = field(default_factory=list)
    #: pods to schedule, in order
    pending: list[dict[str, Any]] = field(default_factory=list)
    #: PersistentVolumeClaims of the namespace: ``{"name", "mode", "bound_to"}`` where
    #: ``bound_to`` is ``"node:<name>"`` or ``"zone:<zone>"`` (a PV with that node affinity
    #: and zone label is created, bound to the claim) or ``None`` (unbound, in the
    #: WaitForFirstConsumer class ``diff-static``, which no PV matches)
    claims: list[dict[str, Any]] = field(default_factory=list)
    #: resource.k8s.io/v1 objects (``dra_scenario``): cluster-scoped DeviceClasses and
    #: ResourceSlices, and the namespace's ResourceClaims and ResourceClaimTemplates
    device_classes: list[dict[str, Any]] = field(default_factory=list)
    resource_slices: list[dict[str, Any]] = field(default_factory=list)
    resource_claims: list[dict[str, Any]] = field(default_factory=list)
    claim_templates: list[dict[str, Any]] = field(default_factory=list)

    @property
    def node_names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.nodes]


def priority_classes() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "preemptionPolicy": policy,
        }
        for name, (value, policy) in PRIORITY_CLASSES.items()
    ]


def _qty_cpu(m: int) -> str:
    return f"{m}m" if m % 1000 else str(m // 1000)


def _qty_mem(mi: int) -> str:
    return f"{mi // 1024}Gi" if mi % 1024 == 0 else f"{mi}Mi"


def _node(rng: random.Random, prefix: str, i: int) -> dict[str, Any]:
    name = f"{prefix}-n{i}"
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    if rng.random() < 0.9:
        labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    if rng.random() < 0.8:
        labels["disk"] = rng.choice(DISKS)
    labels["generation"] = str(rng.randint(1, 5))
    cpu = rng.choice((2000, 4000, 4000, 8000, 16000))
    mem = rng.choice((4096, 8192, 8192, 16384, 32768))
    alloc = {"cpu": _qty_cpu(cpu), "memory": _qty_mem(mem), "pods": str(rng.choice((110, 110, 110, 4, 8)))}
    if rng.random() < 0.25:
        alloc[GPU] = str(rng.choice((1, 2, 4)))
    taints = []
    if rng.random() < 0.35:
        taints = [dict(t) for t in rng.sample(TAINTS, rng.choice((1, 1, 2)))]
    images = [
        {"names": [img], "sizeBytes": size}
        for img, size in IMAGES.items()
        if rng.random() < 0.35
    ]
    status: dict[str, Any] = {"capacity": dict(alloc), "allocatable": alloc, "images": images}
    if rng.random() < 0.5:
        status["declaredFeatures"] = [RESTART_ALL]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": rng.random() < 0.06, **({"taints": taints} if taints else {})},
        "status": status,
    }


def _requests(rng: random.Random, big: bool = False) -> dict[str, str]:
    if rng.random() < 0.1:
        return {}
    cpu = rng.choice((100, 250, 500, 1000, 1500, 2000) + ((3000, 6000) if big else ()))
    mem = rng.choice((128, 256, 512, 1024, 2048, 4096) + ((8192, 12288) if big else ()))
    req = {}
    if rng.random() < 0.95:
        req["cpu"] = _qty_cpu(cpu)
    if rng.random() < 0.9:
        req["memory"] = _qty_mem(mem)
    return req


def _container(rng: random.Random, name: str, app: str, big: bool = False) -> dict[str, Any]:
    image = f"registry.example/{app}:{1 + APPS.index(app)}" if rng.random() < 0.7 else rng.choice(list(IMAGES))
    c: dict[str, Any] = {"name": name, "image": image}
    req = _requests(rng, big)
    if req:
        c["resources"] = {"requests": req}
    return c


def _node_selector_term(rng: random.Random, node_names: list[str]) -> dict[str, Any]:
    kind = rng.random()
    if kind < 0.12 and node_names:
        return {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [rng.choice(node_names)]}]}
    exprs = []
    for _ in range(rng.choice((1, 1, 2))):
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
        if op in ("Gt", "Lt"):
            exprs.append({"key": "generation", "operator": op, "values": [str(rng.randint(1, 5))]})
        elif op in ("Exists", "DoesNotExist"):
            exprs.append({"key": rng.choice(("disk", "topology.kubernetes.io/zone")), "operator": op})
        else:
            key = rng.choice(("disk", "topology.kubernetes.io/zone"))
            vals = DISKS if key == "disk" else ZONES
            exprs.append({"key": key, "operator": op, "values": rng.sample(vals, rng.randint(1, 2))})
    return {"matchExpressions": exprs}


def _pod_term(rng: random.Random) -> dict[str, Any]:
    key = rng.choice(("kubernetes.io/hostname", "topology.kubernetes.io/zone"))
    if rng.random() < 0.8:
        sel: dict[str, Any] = {"matchLabels": {"app": rng.choice(APPS)}}
    else:
        sel = {"matchExpressions": [{"key": "app", "operator": rng.choice(("In", "NotIn")), "values": rng.sample(APPS, 2)}]}
    return {"labelSelector": sel, "topologyKey": key}


def _affinity(rng: random.Random, node_names: list[str]) -> dict[str, Any]:
    aff: dict[str, Any] = {}
    if rng.random() < 0.3:
        na: dict[str, Any] = {}
        if rng.random() < 0.6:
            na["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [_node_selector_term(rng, node_names) for _ in range(rng.choice((1, 1, 2)))]
            }
        if rng.random() < 0.6:
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "preference": _node_selector_term(rng, [])}
                for _ in range(rng.randint(1, 2))
            ]
        if na:
            aff["nodeAffinity"] = na
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.25:
            pa: dict[str, Any] = {}
            if rng.random() < 0.5:
                pa["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_term(rng)]
            if rng.random() < 0.7:
                pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": _pod_term(rng)}
                    for _ in range(rng.randint(1, 2))
                ]
            if pa:
                aff[kind] = pa
    return aff


def _spread(rng: random.Random, app: str) -> list[dict[str, Any]]:
    out = []
    for key in rng.sample(("kubernetes.io/hostname", "topology.kubernetes.io/zone"), rng.choice((1, 1, 2))):
        c: dict[str, Any] = {
            "maxSkew": rng.choice((1, 1, 2)),
            "topologyKey": key,
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": {"matchLabels": {"app": app}} if rng.random() < 0.9 else {},
        }
        if c["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.3:
            c["minDomains"] = rng.randint(2, 4)
        if rng.random() < 0.3:
            c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.3:
            c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            c["matchLabelKeys"] = ["version"]
        out.append(c)
    return out


def _tolerations(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for t in TAINTS:
        if rng.random() < 0.25:
            tol: dict[str, Any] = {"key": t["key"], "effect": t["effect"]}
            if "value" in t and rng.random() < 0.7:
                tol.update(operator="Equal", value=t["value"])
            else:
                tol["operator"] = "Exists"
            out.append(tol)
    if rng.random() < 0.03:
        out.append({"operator": "Exists"})
    return out


def _pod(
    rng: random.Random,
    ns: str,
    name: str,
    node_names: list[str],
    *,
    running_on: str | None = None,
    claims: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    app = rng.choice(APPS)
    labels = {"app": app}
    if rng.random() < 0.5:
        labels["version"] = rng.choice(("v1", "v2"))
    big = rng.random() < 0.15
    containers = [_container(rng, "main", app, big)]
    if rng.random() < 0.2:
        containers.append(_container(rng, "helper", app))
    spec: dict[str, Any] = {"containers": containers, "terminationGracePeriodSeconds": 0}
    if rng.random() < 0.15:
        inits = [_container(rng, "init", app, big=rng.random() < 0.5)]
        if rng.random() < 0.5:
            side = _container(rng, "sidecar", app)
            side["restartPolicy"] = "Always"
            inits.append(side)
        spec["initContainers"] = inits
    if rng.random() < 0.1:
        containers[0].setdefault("resources", {}).setdefault("requests", {})[GPU] = str(rng.choice((1, 2)))
        containers[0]["resources"]["limits"] = {GPU: containers[0]["resources"]["requests"][GPU]}
    if rng.random() < 0.12:
        proto = rng.choice(("TCP", "TCP", "UDP"))
        port: dict[str, Any] = {"containerPort": 80, "hostPort": rng.choice((8080, 9090)), "protocol": proto}
        if rng.random() < 0.2:
            port["hostIP"] = "10.1.0.1"
        containers[0]["ports"] = [port]
    if rng.random() < 0.45:
        spec["priorityClassName"] = rng.choice(list(PRIORITY_CLASSES))
    if rng.random() < 0.1:
        # pod-level resources (PodLevelResources, beta since 1.34): both at the pod level and
        # none in the containers, or one at the pod level and only the other in the containers
        level = {"cpu": _qty_cpu(rng.choice((500, 1000, 2500))), "memory": _qty_mem(rng.choice((512, 2048, 6144)))}
        keep = rng.choice((None, "cpu", "memory"))
        for c in containers + spec.get("initContainers", []):
            reqs = (c.get("resources") or {}).get("requests") or {}
            kept = {k: v for k, v in reqs.items() if k == keep}
            c.pop("resources", None)
            if kept:
                c["resources"] = {"requests": kept}
        if keep:
            del level[keep]
        spec["resources"] = {"requests": level}
    if rng.random() < 0.05:
        # a restart rule that needs the node feature RestartAllContainersOnContainerExits
        spec["restartPolicy"] = "Never"
        containers[0]["restartPolicy"] = "Never"
        containers[0]["restartPolicyRules"] = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]
    if claims and rng.random() < (0.5 if running_on else 0.2):
        claim = rng.choice(claims)["name"]
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        containers[0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    if running_on is not None:
        spec["nodeName"] = running_on
    else:
        if rng.random() < 0.15:
            spec["nodeSelector"] = {"disk": rng.choice(DISKS)} if rng.random() < 0.7 else {"topology.kubernetes.io/zone": rng.choice(ZONES)}
        aff = _affinity(rng, node_names)
        if aff:
            spec["affinity"] = aff
        if rng.random() < 0.3:
            spec["topologySpreadConstraints"] = _spread(rng, app)
        tols = _tolerations(rng)
        if tols:
            spec["tolerations"] = tols
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}


def scenario(seed: int, *, pending: int | None = None) -> Scenario:
    """The scenario of ``seed``: 3–9 nodes, 0–10 running pods, ``pending`` (default 14–26)
    pods to schedule."""
    rng = random.Random(seed)
    ns = f"diff-{seed}"
    prefix = f"d{seed}"
    sc = Scenario(seed=seed, namespace=ns)
    sc.nodes = [_node(rng, prefix, i) for i in range(rng.randint(3, 9))]
    names = sc.node_names
    for app in APPS:
        if rng.random() < 0.2:
            sc.services.append({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"svc-{app}", "namespace": ns},
                "spec": {"selector": {"app": app}, "ports": [{"port": 80}]},
            })
    if rng.random() < 0.35:
        for i in range(rng.randint(2, 4)):
            r = rng.random()
            bound_to = f"node:{rng.choice(names)}" if r < 0.4 else (f"zone:{rng.choice(ZONES)}" if r < 0.8 else None)
            mode = "ReadWriteOncePod" if bound_to and rng.random() < 0.4 else "ReadWriteOnce"
            sc.claims.append({"name": f"data-{i}", "mode": mode, "bound_to": bound_to})
    placeable = [n for n in sc.nodes if not n["spec"].get("unschedulable")] or sc.nodes
    bound_claims = [c for c in sc.claims if c["bound_to"]]
    for i in range(rng.randint(0, 10)):
        node = rng.choice(placeable)["metadata"]["name"]
        sc.running.append(_pod(rng, ns, f"run-{i}", names, running_on=node, claims=bound_claims))
    count = pending if pending is not None else rng.randint(14, 26)
    sc.pending = [_pod(rng, ns, f"p-{i:02d}", names, claims=sc.claims) for i in range(count)]
    return sc


# ---------------------------------------------------------------------------------------------
# dynamic resource allocation

DRA_DRIVER = "gpu.diff.kubesched.io"
DRA_FABRIC_DRIVER = "fabric.diff.kubesched.io"
DRA_MODELS = ("a100", "h100", "t4")
DRA_MEMORY = ("16Gi", "40Gi", "80Gi")
DRA_API = "resource.k8s.io/v1"


def _dra_device(name: str, attributes: dict[str, Any], capacity: dict[str, str] | None = None) -> dict[str, Any]:
    def attr(v: Any) -> dict[str, Any]:
        return {"int": v} if isinstance(v, int) else {"string": v}

    d: dict[str, Any] = {"name": name, "attributes": {k: attr(v) for k, v in attributes.items()}}
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return d


def _dra_slice(name: str, driver: str, pool: str, devices: list[dict[str, Any]], *, node: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
        "devices": devices,
    }
    if node:
        spec["nodeName"] = node
    else:
        spec["allNodes"] = True
    return {"apiVersion": DRA_API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def _dra_selector(rng: random.Random) -> list[dict[str, Any]]:
    d = DRA_DRIVER
    r = rng.random()
    if r < 0.35:
        return []
    if r < 0.6:
        expr = f'device.attributes["{d}"].model == "{rng.choice(DRA_MODELS)}"'
    elif r < 0.8:
        expr = f'device.capacity["{d}"].memory.compareTo(quantity("{rng.choice(DRA_MEMORY)}")) >= 0'
    elif r < 0.9:
        expr = f'device.attributes["{d}"].model != "t4" && device.attributes["{d}"].numa == {rng.randint(0, 1)}'
    else:
        expr = f'device.capacity["{d}"].memory.isGreaterThan(quantity("20Gi")) || device.attributes["{d}"].model == "t4"'
    return [{"cel": {"expression": expr}}]


def _dra_request(rng: random.Random, name: str, classes: dict[str, str]) -> dict[str, Any]:
    r = rng.random()
    if r < 0.2:
        subs = []
        for i in range(rng.randint(2, 3)):
            sub: dict[str, Any] = {"name": f"s{i}", "deviceClassName": classes["gpu"], "allocationMode": "ExactCount", "count": rng.choice((1, 1, 2))}
            sel = _dra_selector(rng)
            if sel:
                sub["selectors"] = sel
            subs.append(sub)
        return {"name": name, "firstAvailable": subs}
    cls = classes["gpu"]
    if r > 0.97:
        cls = classes["missing"]
    exact: dict[str, Any] = {"deviceClassName": cls}
    if rng.random() < 0.08:
        exact["allocationMode"] = "All"
    else:
        exact.update(allocationMode="ExactCount", count=rng.choice((1, 1, 1, 2)))
    sel = _dra_selector(rng)
    if sel:
        exact["selectors"] = sel
    return {"name": name, "exactly": exact}


def _dra_claim_spec(rng: random.Random, classes: dict[str, str], fabric: bool) -> dict[str, Any]:
    requests = [_dra_request(rng, "gpu", classes)]
    constraints: list[dict[str, Any]] = []
    r = rng.random()
    if r < 0.25:
        requests.append({"name": "nic", "exactly": {"deviceClassName": classes["nic"], "allocationMode": "ExactCount", "count": 1}})
        # not with allocationMode All: a device of "All" that breaks a constraint is an error in
        # the allocator, and which node's error kube-scheduler reports depends on its parallel Filter
        if rng.random() < 0.7 and requests[0].get("exactly", {}).get("allocationMode") != "All":
            constraints.append({"requests": ["gpu", "nic"], "matchAttribute": f"{DRA_DRIVER}/numa"})
    elif r < 0.35 and "exactly" in requests[0] and requests[0]["exactly"].get("count") == 2:
        constraints.append({"requests": ["gpu"], "distinctAttribute": f"{DRA_DRIVER}/numa"})
    elif r < 0.45 and fabric:
        requests.append({"name": "link", "exactly": {"deviceClassName": classes["fabric"], "allocationMode": "ExactCount", "count": 1}})
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def dra_scenario(seed: int, *, pending: int | None = None) -> Scenario:
    """A DRA scenario of ``seed``: 3-6 nodes, most with a ResourceSlice of 1-4 GPUs and 0-2
    NICs, sometimes a pool of fabric devices for all nodes; ``pending`` (default 10-16) pods, about
    two thirds of them with one or two pod claims (a standalone claim, maybe shared with other
    pods, or a template). No priorities: no claim is ever freed (no controller runs), so a
    preemptor could not get a victim's devices."""
    rng = random.Random(f"dra-{seed}")
    ns = f"diff-dra-{seed}"
    prefix = f"r{seed}"
    sc = Scenario(seed=seed, namespace=ns)
    sc.nodes = [_node(rng, prefix, i) for i in range(rng.randint(3, 6))]
    names = sc.node_names
    classes = {"gpu": f"{prefix}-gpu", "nic": f"{prefix}-nic", "fabric": f"{prefix}-fabric", "missing": f"{prefix}-missing"}
    for role in ("gpu", "nic"):
        expr = f'device.driver == "{DRA_DRIVER}" && device.attributes["{DRA_DRIVER}"].role == "{role}"'
        sc.device_classes.append({"apiVersion": DRA_API, "kind": "DeviceClass", "metadata": {"name": classes[role]}, "spec": {"selectors": [{"cel": {"expression": expr}}]}})
    for name in names:
        if rng.random() < 0.2:
            continue
        devices = [
            _dra_device(f"gpu-{g}", {"role": "gpu", "model": rng.choice(DRA_MODELS), "numa": rng.randint(0, 1)}, {"memory": rng.choice(DRA_MEMORY)})
            for g in range(rng.randint(1, 4))
        ]
        devices += [_dra_device(f"nic-{k}", {"role": "nic", "numa": rng.randint(0, 1)}) for k in range(rng.randint(0, 2))]
        sc.resource_slices.append(_dra_slice(f"{name}-gpu", DRA_DRIVER, name, devices, node=name))
    fabric = rng.random() < 0.4
    if fabric:
        sc.device_classes.append({"apiVersion": DRA_API, "kind": "DeviceClass", "metadata": {"name": classes["fabric"]}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_FABRIC_DRIVER}"'}}]}})
        links = [_dra_device(f"link-{k}", {"role": "link"}) for k in range(rng.randint(1, 3))]
        sc.resource_slices.append(_dra_slice(f"{prefix}-fabric", DRA_FABRIC_DRIVER, f"{prefix}-fabric", links, node=None))
    for i in range(rng.randint(1, 4)):
        sc.claim_templates.append({"apiVersion": DRA_API, "kind": "ResourceClaimTemplate", "metadata": {"name": f"t-{i}", "namespace": ns}, "spec": {"spec": _dra_claim_spec(rng, classes, fabric)}})
    placeable = [n for n in sc.nodes if not n["spec"].get("unschedulable")] or sc.nodes
    for i in range(rng.randint(0, 4)):
        pod = _pod(rng, ns, f"run-{i}", names, running_on=rng.choice(placeable)["metadata"]["name"])
        pod["spec"].pop("priorityClassName", None)
        sc.running.append(pod)
    count = pending if pending is not None else rng.randint(10, 16)
    standalone = 0
    for i in range(count):
        pod = _pod(rng, ns, f"p-{i:02d}", names)
        pod["spec"].pop("priorityClassName", None)
        pod_claims: list[dict[str, Any]] = []
        for k in range(rng.choice((0, 1, 1, 1, 2))):
            if rng.random() < 0.5:
                pod_claims.append({"name": f"dev-{k}", "resourceClaimTemplateName": rng.choice(sc.claim_templates)["metadata"]["name"]})
                continue
            if sc.resource_claims and rng.random() < 0.3:
                claim = rng.choice(sc.resource_claims)["metadata"]["name"]  # shared with an earlier pod
            else:
                claim = f"c-{standalone}"
                standalone += 1
                sc.resource_claims.append({"apiVersion": DRA_API, "kind": "ResourceClaim", "metadata": {"name": claim, "namespace": ns}, "spec": _dra_claim_spec(rng, classes, fabric)})
            if all(pc.get("resourceClaimName") != claim for pc in pod_claims):
                pod_claims.append({"name": f"dev-{k}", "resourceClaimName": claim})
        if pod_claims:
            if rng.random() < 0.6:  # mostly the devices decide, not the other plugins
                for key in ("affinity", "topologySpreadConstraints", "nodeSelector"):
                    pod["spec"].pop(key, None)
            pod["spec"]["resourceClaims"] = pod_claims
            pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": pc["name"]} for pc in pod_claims]
        sc.pending.append(pod)
    return sc
