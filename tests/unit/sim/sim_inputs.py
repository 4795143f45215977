"""Inputs shared by the compare and sweep tests: a workload where the scoring strategy decides.

Two 4-cpu nodes, two 1-cpu pods then a 4-cpu pod: LeastAllocated spreads the small pods over both
nodes (the big one fits nowhere), MostAllocated packs them on one node (the big one takes the
other)."""

WORKLOAD = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: small-1}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: small-2}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "4", memory: 1Gi}}}]}
"""


def fit_config(strategy: str) -> str:
    return f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: {strategy}
        resources: [{{name: cpu, weight: 1}}, {{name: memory, weight: 1}}]
"""
