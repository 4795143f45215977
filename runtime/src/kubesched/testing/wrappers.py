"""Fluent builders for Pods and Nodes, after kube-scheduler's ``pkg/scheduler/testing/wrappers.go``.

    make_pod().name("p").namespace("ns").req(cpu="1", memory="1Gi").node("n1").obj()
    make_node().name("n1").capacity(cpu="4", memory="16Gi", pods=110).label("zone", "a").obj()

``obj()`` returns the API dict; ``pod()``/``node()`` return the SDK views.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.sdk import Node, Pod

__all__ = ["NodeWrapper", "PodWrapper", "make_node", "make_pod"]


def _rl(mapping: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in {**(mapping or {}), **kw}.items():
        out[k.replace("_", "-") if k == "ephemeral_storage" else k] = str(v)
    return out


class PodWrapper:
    def __init__(self) -> None:
        self._o: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "", "namespace": "default"},
            "spec": {"containers": []},
            "status": {},
        }

    # metadata
    def name(self, n: str) -> PodWrapper:
        self._o["metadata"]["name"] = n
        return self

    def namespace(self, ns: str) -> PodWrapper:
        self._o["metadata"]["namespace"] = ns
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._o["metadata"]["uid"] = uid
        return self

    def label(self, k: str, v: str) -> PodWrapper:
        self._o["metadata"].setdefault("labels", {})[k] = v
        return self

    def labels(self, labels: Mapping[str, str]) -> PodWrapper:
        for k, v in labels.items():
            self.label(k, v)
        return self

    def annotation(self, k: str, v: str) -> PodWrapper:
        self._o["metadata"].setdefault("annotations", {})[k] = v
        return self

    def creation_timestamp(self, ts: str) -> PodWrapper:
        self._o["metadata"]["creationTimestamp"] = ts
        return self

    def terminating(self) -> PodWrapper:
        self._o["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
        return self

    def owner_reference(self, name: str, kind: str, api_version: str = "apps/v1", uid: str = "", controller: bool = True) -> PodWrapper:
        self._o["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid or f"{kind}-{name}", "controller": controller}
        )
        return self

    # spec
    def node(self, n: str) -> PodWrapper:
        self._o["spec"]["nodeName"] = n
        return self

    def scheduler_name(self, n: str) -> PodWrapper:
        self._o["spec"]["schedulerName"] = n
        return self

    def priority(self, p: int) -> PodWrapper:
        self._o["spec"]["priority"] = p
        return self

    def preemption_policy(self, p: str) -> PodWrapper:
        self._o["spec"]["preemptionPolicy"] = p
        return self

    def container(self, image: str = "pause", name: str = "") -> PodWrapper:
        cs = self._o["spec"]["containers"]
        cs.append({"name": name or f"con{len(cs)}", "image": image})
        return self

    def req(self, requests: Mapping[str, Any] | None = None, **kw: Any) -> PodWrapper:
        """Add a container with these requests."""
        cs = self._o["spec"]["containers"]
        cs.append({"name": f"con{len(cs)}", "image": "pause", "resources": {"requests": _rl(requests, **kw)}})
        return self

    def res(self, requests: Mapping[str, Any] | None = None, **kw: Any) -> PodWrapper:
        """Add a container with these requests and limits."""
        cs = self._o["spec"]["containers"]
        r = _rl(requests, **kw)
        cs.append({"name": f"con{len(cs)}", "image": "pause", "resources": {"requests": r, "limits": dict(r)}})
        return self

    def init_req(self, requests: Mapping[str, Any] | None = None, restart_always: bool = False, **kw: Any) -> PodWrapper:
        ics = self._o["spec"].setdefault("initContainers", [])
        c: dict[str, Any] = {"name": f"init{len(ics)}", "image": "pause", "resources": {"requests": _rl(requests, **kw)}}
        if restart_always:
            c["restartPolicy"] = "Always"
        ics.append(c)
        return self

    def overhead(self, rl: Mapping[str, Any]) -> PodWrapper:
        self._o["spec"]["overhead"] = _rl(rl)
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodWrapper:
        cs = self._o["spec"]["containers"]
        if not cs:
            self.container()
        p: dict[str, Any] = {"hostPort": port, "containerPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        cs[-1].setdefault("ports", []).append(p)
        return self

    def image(self, image: str) -> PodWrapper:
        return self.container(image)

    def node_selector(self, sel: Mapping[str, str]) -> PodWrapper:
        self._o["spec"]["nodeSelector"] = dict(sel)
        return self

    def _node_affinity(self) -> dict[str, Any]:
        return self._o["spec"].setdefault("affinity", {}).setdefault("nodeAffinity", {})

    def node_affinity_in(self, key: str, values: Sequence[str], field: bool = False) -> PodWrapper:
        return self._node_affinity_req(key, "In", values, field)

    def node_affinity_not_in(self, key: str, values: Sequence[str], field: bool = False) -> PodWrapper:
        return self._node_affinity_req(key, "NotIn", values, field)

    def _node_affinity_req(self, key: str, op: str, values: Sequence[str], field: bool) -> PodWrapper:
        req = self._node_affinity().setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [{}]}
        )
        term = req["nodeSelectorTerms"][0]
        term.setdefault("matchFields" if field else "matchExpressions", []).append(
            {"key": key, "operator": op, "values": list(values)}
        )
        return self

    def required_node_affinity(self, node_selector: Mapping[str, Any]) -> PodWrapper:
        self._node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"] = copy.deepcopy(dict(node_selector))
        return self

    def preferred_node_affinity(self, terms: Sequence[Mapping[str, Any]]) -> PodWrapper:
        self._node_affinity()["preferredDuringSchedulingIgnoredDuringExecution"] = copy.deepcopy(list(terms))
        return self

    def _pod_affinity(self, kind: str, mode: str, term: dict[str, Any], weight: int | None) -> PodWrapper:
        sect = self._o["spec"].setdefault("affinity", {}).setdefault(kind, {})
        if mode == "required":
            sect.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            sect.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight or 1, "podAffinityTerm": term}
            )
        return self

    @staticmethod
    def _term(key: str, topology_key: str, op: str = "Exists", values: Sequence[str] = (), namespaces: Sequence[str] | None = None) -> dict[str, Any]:
        expr: dict[str, Any] = {"key": key, "operator": op}
        if values:
            expr["values"] = list(values)
        t: dict[str, Any] = {"labelSelector": {"matchExpressions": [expr]}, "topologyKey": topology_key}
        if namespaces is not None:
            t["namespaces"] = list(namespaces)
        return t

    def pod_affinity_exists(self, key: str, topology_key: str, required: bool = True, weight: int = 1) -> PodWrapper:
        return self._pod_affinity("podAffinity", "required" if required else "preferred", self._term(key, topology_key), weight)

    def pod_anti_affinity_exists(self, key: str, topology_key: str, required: bool = True, weight: int = 1) -> PodWrapper:
        return self._pod_affinity("podAntiAffinity", "required" if required else "preferred", self._term(key, topology_key), weight)

    def pod_affinity_in(self, key: str, topology_key: str, values: Sequence[str], required: bool = True, weight: int = 1) -> PodWrapper:
        return self._pod_affinity("podAffinity", "required" if required else "preferred", self._term(key, topology_key, "In", values), weight)

    def pod_anti_affinity_in(self, key: str, topology_key: str, values: Sequence[str], required: bool = True, weight: int = 1) -> PodWrapper:
        return self._pod_affinity("podAntiAffinity", "required" if required else "preferred", self._term(key, topology_key, "In", values), weight)

    def pod_affinity_term(self, term: Mapping[str, Any], anti: bool = False, required: bool = True, weight: int = 1) -> PodWrapper:
        return self._pod_affinity("podAntiAffinity" if anti else "podAffinity", "required" if required else "preferred", copy.deepcopy(dict(term)), weight)

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when_unsatisfiable: str = "DoNotSchedule",
        selector: Mapping[str, Any] | None = None,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: Sequence[str] | None = None,
    ) -> PodWrapper:
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when_unsatisfiable}
        if selector is not None:
            c["labelSelector"] = copy.deepcopy(dict(selector))
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self._o["spec"].setdefault("topologySpreadConstraints", []).append(c)
        return self

    def toleration(self, key: str, value: str = "", effect: str = "", operator: str = "Equal") -> PodWrapper:
        t: dict[str, Any] = {"key": key, "operator": operator}
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self._o["spec"].setdefault("tolerations", []).append(t)
        return self

    def tolerations(self, tols: Sequence[Mapping[str, Any]]) -> PodWrapper:
        self._o["spec"]["tolerations"] = [dict(t) for t in tols]
        return self

    def scheduling_gates(self, names: Sequence[str]) -> PodWrapper:
        self._o["spec"]["schedulingGates"] = [{"name": n} for n in names]
        return self

    def pvc(self, claim_name: str, volume_name: str = "") -> PodWrapper:
        self._o["spec"].setdefault("volumes", []).append(
            {"name": volume_name or claim_name, "persistentVolumeClaim": {"claimName": claim_name}}
        )
        return self

    def volume(self, volume: Mapping[str, Any]) -> PodWrapper:
        self._o["spec"].setdefault("volumes", []).append(copy.deepcopy(dict(volume)))
        return self

    def nominated_node_name(self, n: str) -> PodWrapper:
        self._o["status"]["nominatedNodeName"] = n
        return self

    def phase(self, p: str) -> PodWrapper:
        self._o["status"]["phase"] = p
        return self

    def start_time(self, ts: str) -> PodWrapper:
        self._o["status"]["startTime"] = ts
        return self

    def spec(self, **fields: Any) -> PodWrapper:
        self._o["spec"].update(fields)
        return self

    def obj(self) -> dict[str, Any]:
        o = copy.deepcopy(self._o)
        if not o["spec"]["containers"]:
            o["spec"]["containers"] = [{"name": "con0", "image": "pause"}]
        return o

    def pod(self) -> Pod:
        return Pod(self.obj())


class NodeWrapper:
    def __init__(self) -> None:
        self._o: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": ""},
            "spec": {},
            "status": {"capacity": {"pods": "32"}, "allocatable": {"pods": "32"}},
        }

    def name(self, n: str) -> NodeWrapper:
        self._o["metadata"]["name"] = n
        self._o["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = n
        return self

    def uid(self, uid: str) -> NodeWrapper:
        self._o["metadata"]["uid"] = uid
        return self

    def label(self, k: str, v: str) -> NodeWrapper:
        self._o["metadata"].setdefault("labels", {})[k] = v
        return self

    def labels(self, labels: Mapping[str, str]) -> NodeWrapper:
        for k, v in labels.items():
            self.label(k, v)
        return self

    def capacity(self, resources: Mapping[str, Any] | None = None, **kw: Any) -> NodeWrapper:
        """Sets capacity and allocatable (as wrappers.go does); ``pods`` defaults to 32."""
        rl = {"pods": "32", **_rl(resources, **kw)}
        self._o["status"]["capacity"] = dict(rl)
        self._o["status"]["allocatable"] = dict(rl)
        return self

    def allocatable(self, resources: Mapping[str, Any] | None = None, **kw: Any) -> NodeWrapper:
        self._o["status"]["allocatable"] = _rl(resources, **kw)
        return self

    def images(self, images: Mapping[str, int]) -> NodeWrapper:
        self._o["status"]["images"] = [{"names": [n], "sizeBytes": s} for n, s in images.items()]
        return self

    def taints(self, taints: Sequence[Mapping[str, str]]) -> NodeWrapper:
        self._o["spec"]["taints"] = [dict(t) for t in taints]
        return self

    def unschedulable(self, v: bool = True) -> NodeWrapper:
        self._o["spec"]["unschedulable"] = v
        return self

    def ready(self) -> NodeWrapper:
        self._o["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._o)

    def node(self) -> Node:
        return Node(self.obj())


def make_pod() -> PodWrapper:
    return PodWrapper()


def make_node() -> NodeWrapper:
    return NodeWrapper()
