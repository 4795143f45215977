"""Configuration files, differentially: the real kube-scheduler v1.36.3 and ``kubesched config
validate`` must accept the same KubeSchedulerConfiguration files and reject the same ones with the
same message.

How each side is asked:

* kube-scheduler runs as ``kube-scheduler --config FILE --secure-port=0`` where the file's
  ``clientConnection.kubeconfig`` names a kubeconfig for an unreachable API server
  (``https://127.0.0.1:1``). A rejected file makes it exit at once with
  ``E... run.go:72] "command failed" err="<message>"`` (decoding errors, validation with every
  plugin's args, and ``NewFramework``'s checks such as an unknown plugin all come before it
  connects anywhere); a valid one gets to ``"Starting Kubernetes Scheduler"`` (logged after every
  profile's framework was built), and is then killed. ``--secure-port=0`` keeps it off the ports.
* kubesched runs its command line in process: ``kubesched config validate FILE`` prints
  ``FILE: valid ...`` (exit 0) or ``kubesched: error: FILE: <message>`` (exit 2).

The messages compared are kube-scheduler's ``err=`` text (klog-unquoted) and kubesched's text
after the ``FILE: `` prefix. A row's ``valid`` is the verdict both must give; for a rejection,
``message`` is kube-scheduler's text after normalization, which kubesched's must equal. The
normalizations, each a deliberate difference:

1. **Aggregates.** kube-scheduler prints all validation errors at once, ``[a, b]`` when there
   are several (a plugin's args errors flattened in, each at its full path); kubesched stops at
   the first problem (``ConfigError.errors`` holds the rest of the file's) and prints a plugin's
   several args errors as ``profiles[i].pluginConfig[j].args: [x: ..., y: ...]``. The first
   error of each is compared (kubesched's ``P: [x: m, ...]`` read as ``P.x: m``).
2. **Framework errors.** kube-scheduler wraps ``NewFramework``'s errors in
   ``initializing profiles: creating profile for scheduler name NAME: ``; kubesched names the
   field instead (``profiles[i].plugins.POINT.enabled[j]: `` or ``profiles[i].plugins.POINT: ``).
   Both are dropped.
3. **NodeResourcesFitArgs.** kube-scheduler 1.36's validation skips them (its validators map
   keys them as ``"NodeResourcesFitArgs"``), so they fail when the plugin is built, as
   ``initializing plugin "NodeResourcesFit": <path in the args>: ...`` (after normalization 2);
   kubesched too (it only decodes them with the file) and prints
   ``profiles[i].pluginConfig[j].args.<path in the args>: ...``. Both prefixes read as ``args.``.
4. **Help.** kubesched may follow kube-scheduler's whole message with help of its own, after
   ``" ("``: the name a duplicate ``schedulerName`` repeats (kube-scheduler prints ``{}``, the
   JSON of a ``*field.Path``), profiles[0]'s queueSort, the leaseDuration compared with
   ``RenewDeadline`` (kube-scheduler prints the RenewDeadline as the value). A row's ``help``
   pins it.
5. **Decoding errors.** kube-scheduler's come from Go's decoders (``strict decoding error:
   unknown field "x"``, ``json: cannot unmarshal ...``, ``decoding .profiles[0].pluginConfig[0]:
   ...``) and name no field, or a decoder's path; kubesched's name the field (and its line) and
   add a did-you-mean or the known fields. Both must reject; the row pins both texts and the
   text they share (``common``).
6. **Unknown plugins.** kube-scheduler says ``FilterPlugin "X" does not exist`` (the first
   extension point, in its own order, that names it); kubesched says, at the field,
   ``unknown plugin "X"`` and a did-you-mean or the plugins installed here (they are not
   kube-scheduler's). Pinned like 5.
7. **Deprecated versions.** kube-scheduler 1.36 no longer reads ``v1beta3`` (removed in 1.29);
   kubesched reads it as release 1.28 did (docs/config.md). The row pins kube-scheduler's
   rejection and kubesched's acceptance.
8. **YAML tags and bounds.** go-yaml's refusals (a tag its value does not resolve to, excessive
   aliasing) come without a field; kubesched's name it. kubesched refuses a tag outside YAML
   1.1's core set (``!!python/...``, ``!foo``), whose text go-yaml reads as a string, and nesting
   deeper than 100 levels (go-yaml's bound is 10,000). Pinned like 5.
"""

from __future__ import annotations

import ast
import os
import re
import selectors
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from controlplane import AssetsUnavailable, ensure_assets

V1 = "kubescheduler.config.k8s.io/v1"
V1BETA3 = "kubescheduler.config.k8s.io/v1beta3"

#: kube-scheduler's log line once every profile's framework is built (server.go Run)
STARTED = '"Starting Kubernetes Scheduler"'
FAILED = re.compile(r'"command failed" err=(.*)$')
FRAMEWORK_PREFIX = re.compile(r"^initializing profiles: creating profile for scheduler name [^:]*: ")

UNREACHABLE_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: unreachable
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: unreachable
  context: {cluster: unreachable, user: nobody}
current-context: unreachable
users:
- name: nobody
  user: {token: none}
"""


@dataclass(frozen=True)
class Case:
    id: str
    body: str
    valid: bool
    #: kube-scheduler's message after normalizations 1-3, which kubesched's must equal
    message: str | None = None
    #: kubesched's help after the message (normalization 4)
    help: str = ""
    api_version: str = V1
    #: normalizations 5-7: each side's exact text ('' when it accepts) and what both say
    kube: str | None = None
    kubesched: str | None = None
    common: str = ""
    #: kubesched's text goes on with the plugins installed here (normalization 6)
    listing: bool = False


def ok(id: str, body: str, *, api_version: str = V1) -> Case:
    return Case(id, body, True, api_version=api_version)


def bad(id: str, body: str, message: str, *, help: str = "") -> Case:
    return Case(id, body, False, message, help=help)


def pinned(
    id: str,
    body: str,
    *,
    kube: str,
    kubesched: str,
    common: str,
    api_version: str = V1,
    listing: bool = False,
) -> Case:
    return Case(
        id, body, False, api_version=api_version, kube=kube, kubesched=kubesched, common=common,
        listing=listing,
    )


def disabled_args(plugin: str, body: str) -> str:
    """A one-profile file that enables only the queue sort and the binder, and gives the disabled
    ``plugin`` the args ``body`` (YAML): validatePluginConfig checks them all the same."""
    args_yaml = textwrap.indent(textwrap.dedent(body).strip("\n"), "      ")
    return (
        "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
        '      disabled:\n      - name: "*"\n      enabled:\n      - name: PrioritySort\n'
        "      - name: DefaultBinder\n  pluginConfig:\n"
        f"  - name: {plugin}\n    args:\n{args_yaml}\n"
    )


def alias_bomb() -> str:
    """The billion laughs: 9 levels of 9 aliases each (9^9 strings once expanded)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def args(plugin: str, body: str) -> str:
    """A one-profile file whose pluginConfig gives ``plugin`` the args ``body`` (YAML)."""
    args_yaml = textwrap.indent(textwrap.dedent(body).strip("\n"), "      ")
    return (
        "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
        f"  - name: {plugin}\n    args:\n{args_yaml}\n"
    )


CASES: list[Case] = [
    # ---------------------------------------------------------------- valid
    ok("default", ""),
    ok("two-profiles", """
        profiles:
        - schedulerName: default-scheduler
        - schedulerName: no-scoring
          plugins:
            score:
              disabled:
              - name: "*"
        """),
    ok("multipoint-weights", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            multiPoint:
              enabled:
              - name: NodeResourcesFit
                weight: 3
              - name: ImageLocality
                weight: 5
        """),
    ok("disabled-star-then-enabled", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            score:
              disabled:
              - name: "*"
              enabled:
              - name: NodeResourcesFit
                weight: 2
            preScore:
              disabled:
              - name: "*"
        """),
    ok("fit-least-allocated", args("NodeResourcesFit", """
        scoringStrategy:
          type: LeastAllocated
          resources:
          - {name: cpu, weight: 2}
          - {name: memory, weight: 1}
        ignoredResources: [example.com/foo]
        ignoredResourceGroups: [example.org]
        """)),
    ok("fit-most-allocated", args("NodeResourcesFit", """
        scoringStrategy:
          type: MostAllocated
          resources:
          - {name: cpu, weight: 1}
        """)),
    ok("fit-requested-to-capacity-ratio", args("NodeResourcesFit", """
        scoringStrategy:
          type: RequestedToCapacityRatio
          resources:
          - {name: cpu, weight: 1}
          requestedToCapacityRatio:
            shape:
            - {utilization: 0, score: 0}
            - {utilization: 100, score: 10}
        """)),
    ok("spread-list-default-constraints", args("PodTopologySpread", """
        defaultingType: List
        defaultConstraints:
        - maxSkew: 2
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: ScheduleAnyway
        """)),
    ok("spread-system-defaulting", args("PodTopologySpread", """
        defaultingType: System
        """)),
    ok("interpodaffinity-args", args("InterPodAffinity", """
        hardPodAffinityWeight: 5
        ignorePreferredTermsOfExistingPods: true
        """)),
    ok("nodeaffinity-added-affinity", args("NodeAffinity", """
        addedAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: pool, operator: In, values: [a, b]}
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 10
            preference:
              matchExpressions:
              - {key: disk, operator: Exists}
        """)),
    ok("volumebinding-bind-timeout", args("VolumeBinding", """
        bindTimeoutSeconds: 300
        """)),
    ok("defaultpreemption-args", args("DefaultPreemption", """
        minCandidateNodesPercentage: 20
        minCandidateNodesAbsolute: 50
        """)),
    ok("balancedallocation-args", args("NodeResourcesBalancedAllocation", """
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
        - {name: example.com/gpu, weight: 1}
        """)),
    ok("dynamicresources-args", args("DynamicResources", """
        filterTimeout: 5s
        bindingTimeout: 2m
        """)),
    ok("percentage-of-nodes-to-score", """
        percentageOfNodesToScore: 50
        profiles:
        - schedulerName: default-scheduler
          percentageOfNodesToScore: 30
        """),
    ok("parallelism", "parallelism: 8\n"),
    ok("placement-score-disabled", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            placementScore:
              disabled:
              - name: "*"
        """),
    ok("weight-on-a-filter-plugin", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            filter:
              enabled:
              - name: NodeName
                weight: 4
        """),
ok("plugin-config-for-unknown-plugin", """
        profiles:
        - schedulerName: default-scheduler
          pluginConfig:
          - name: NoSuchPlugin
            args: {}
        """),
    # ---------------------------------------------------------------- invalid: plugin args
    bad("fit-bad-scoring-type", args("NodeResourcesFit", """
        scoringStrategy:
          type: Balanced
          resources:
          - {name: cpu, weight: 1}
        """), (
            'args.scoringStrategy.type: Unsupported value: "Balanced": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        )),
    bad("fit-resource-weight-out-of-range", args("NodeResourcesFit", """
        scoringStrategy:
          type: LeastAllocated
          resources:
          - {name: cpu, weight: 101}
        """), (
            'args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight '
            'of cpu not in valid range (0, 100]'
        )),
    bad("fit-ratio-shape-unsorted", args("NodeResourcesFit", """
        scoringStrategy:
          type: RequestedToCapacityRatio
          resources:
          - {name: cpu, weight: 1}
          requestedToCapacityRatio:
            shape:
            - {utilization: 50, score: 5}
            - {utilization: 10, score: 1}
        """), (
            'args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid '
            'value: 10: values must be sorted in increasing order'
        )),
    bad("fit-ratio-without-shape-args", args("NodeResourcesFit", """
        scoringStrategy:
          type: RequestedToCapacityRatio
          resources:
          - {name: cpu, weight: 1}
        """), (
            'args.scoringStrategy.requestedToCapacityRatio: Required value: must be '
            'specified when type is RequestedToCapacityRatio'
        )),
    bad("fit-ignored-resource-group-with-slash", args("NodeResourcesFit", """
        ignoredResourceGroups: [example.com/foo]
        """), (
            'args.ignoredResourceGroups[0]: Invalid value: "example.com/foo": resource '
            "group name can't contain '/'"
        )),
    bad("spread-max-skew-zero", args("PodTopologySpread", """
        defaultingType: List
        defaultConstraints:
        - maxSkew: 0
          topologyKey: zone
          whenUnsatisfiable: DoNotSchedule
        """), (
            'profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid '
            'value: 0: not in valid range (0, inf)'
        )),
    bad("spread-system-with-constraints", args("PodTopologySpread", """
        defaultingType: System
        defaultConstraints:
        - maxSkew: 1
          topologyKey: zone
          whenUnsatisfiable: DoNotSchedule
        """), (
            'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": '
            'when .defaultConstraints are not empty'
        )),
    bad("spread-bad-when-unsatisfiable", args("PodTopologySpread", """
        defaultingType: List
        defaultConstraints:
        - maxSkew: 1
          topologyKey: zone
          whenUnsatisfiable: Sometimes
        """), (
            'profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: '
            'Unsupported value: "Sometimes": supported values: "DoNotSchedule", '
            '"ScheduleAnyway"'
        )),
    bad("interpodaffinity-weight-101", args("InterPodAffinity", """
        hardPodAffinityWeight: 101
        """), (
            'profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: '
            'not in valid range [0, 100]'
        )),
    bad("nodeaffinity-bad-operator", args("NodeAffinity", """
        addedAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: pool, operator: Near, values: [a]}
        """), (
            'profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: '
            'Unsupported value: "Near": supported values: "In", "NotIn", "Exists", '
            '"DoesNotExist", "Gt", "Lt"'
        )),
    bad("volumebinding-negative-timeout", args("VolumeBinding", """
        bindTimeoutSeconds: -1
        """), (
            'profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: '
            'invalid BindTimeoutSeconds, should not be a negative value'
        )),
    bad("volumebinding-shape-without-gate", args("VolumeBinding", """
        shape:
        - {utilization: 0, score: 0}
        - {utilization: 100, score: 10}
        """), (
            'profiles[0].pluginConfig[0].args.shape: Invalid value: '
            '[{"Utilization":0,"Score":0},{"Utilization":100,"Score":10}]: unexpected '
            'field `shape`, remove it or turn on the feature gate StorageCapacityScoring'
        )),
    bad("defaultpreemption-both-zero", args("DefaultPreemption", """
        minCandidateNodesPercentage: 0
        minCandidateNodesAbsolute: 0
        """), (
            'profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: '
            '0: cannot be zero at the same time as minCandidateNodesAbsolute'
        )),
    bad("defaultpreemption-percentage-101", args("DefaultPreemption", """
        minCandidateNodesPercentage: 101
        """), (
            'profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: '
            '101: not in valid range [0, 100]'
        )),
    bad("balancedallocation-weight-2", args("NodeResourcesBalancedAllocation", """
        resources:
        - {name: cpu, weight: 2}
        """), (
            'profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must '
            'be 1'
        )),
    bad("dynamicresources-binding-timeout-zero", args("DynamicResources", """
        bindingTimeout: 0s
        """), (
            'profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: "0s": must be '
            'at least 1 second'
        )),
    pinned("dynamicresources-bad-duration", args("DynamicResources", """
        bindingTimeout: ten minutes
        """),
        kube=(
            'decoding .profiles[0].pluginConfig[0]: decoding args for plugin '
            'DynamicResources: time: invalid duration "ten minutes"'
        ),
        kubesched=(
            'profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: "ten '
            'minutes": time: invalid duration "ten minutes"'
        ),
        common='time: invalid duration "ten minutes"',
    ),
    pinned("args-unknown-field", args("InterPodAffinity", """
        hardPodAffinityWeigth: 5
        """),
        kube=(
            'strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding '
            'error: decoding args for plugin InterPodAffinity: strict decoding error: '
            'unknown field "hardPodAffinityWeigth"'
        ),
        kubesched=(
            'profiles[0].pluginConfig[0].args.hardPodAffinityWeigth: unknown field '
            '"hardPodAffinityWeigth" (known fields: hardPodAffinityWeight, '
            'ignorePreferredTermsOfExistingPods)'
        ),
        common='unknown field "hardPodAffinityWeigth"',
    ),
    pinned("args-wrong-kind", args("InterPodAffinity", """
        kind: NodeAffinityArgs
        apiVersion: kubescheduler.config.k8s.io/v1
        """),
        kube=(
            'decoding .profiles[0].pluginConfig[0]: args for plugin InterPodAffinity were '
            'not of type InterPodAffinityArgs.kubescheduler.config.k8s.io, got '
            'NodeAffinityArgs.kubescheduler.config.k8s.io'
        ),
        kubesched=(
            'profiles[0].pluginConfig[0].args.kind: args for plugin InterPodAffinity were '
            'not of type InterPodAffinityArgs.kubescheduler.config.k8s.io, got '
            'NodeAffinityArgs.kubescheduler.config.k8s.io'
        ),
        common=(
            'args for plugin InterPodAffinity were not of type '
            'InterPodAffinityArgs.kubescheduler.config.k8s.io, got '
            'NodeAffinityArgs.kubescheduler.config.k8s.io'
        ),
    ),
    # ---------------------------------------------------------------- invalid: profiles, plugins
    bad("two-plugin-configs-for-one-plugin", """
        profiles:
        - schedulerName: default-scheduler
          pluginConfig:
          - name: InterPodAffinity
            args: {hardPodAffinityWeight: 2}
          - name: InterPodAffinity
            args: {hardPodAffinityWeight: 3}
        """, 'profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"'),
    bad("duplicate-profile-names", """
        profiles:
        - schedulerName: same
        - schedulerName: same
        """, 'profiles[1].schedulerName: Duplicate value: {}',
        help=' ("same" is already profiles[0].schedulerName)',
    ),
    bad("queue-sort-differs-between-profiles", """
        profiles:
        - schedulerName: a
        - schedulerName: b
          plugins:
            queueSort:
              disabled:
              - name: "*"
        """, (
            'profiles[1].plugins.queueSort: Invalid value: '
            '{"Enabled":null,"Disabled":[{"Name":"*","Weight":0}]}: must be the same for '
            'all profiles'
        ),
        help=' (profiles[0] has {"Enabled":null,"Disabled":null})',
    ),
    pinned("unknown-plugin-at-filter", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            filter:
              enabled:
              - name: NoSuchPlugin
        """,
        kube=(
            'initializing profiles: creating profile for scheduler name default-scheduler: '
            'FilterPlugin "NoSuchPlugin" does not exist'
        ),
        kubesched='profiles[0].plugins.filter.enabled[0].name: unknown plugin "NoSuchPlugin"; '
        "installed plugins: ",
        listing=True,
        common='"NoSuchPlugin"',
    ),
    bad("score-plugin-that-does-not-score", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            score:
              enabled:
              - name: NodeName
        """, 'plugin "NodeName" does not extend ScorePlugin plugin'),
    bad("removed-plugin-enabled", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            filter:
              enabled:
              - name: EBSLimits
        """, (
            'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was '
            'invalid in version "v1" (KubeSchedulerConfiguration is version '
            '"kubescheduler.config.k8s.io/v1")'
        )),
    bad("negative-percentage", "percentageOfNodesToScore: -1\n", 'percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]'),
    bad("profile-percentage-101", """
        profiles:
        - schedulerName: default-scheduler
          percentageOfNodesToScore: 101
        """, (
            'profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range '
            '[0-100]'
        )),
    bad("parallelism-zero", "parallelism: 0\n", 'parallelism: Invalid value: 0: should be an integer value greater than zero'),
    bad("max-backoff-below-initial", "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n", (
            'podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to '
            'PodInitialBackoffSeconds'
        )),
    pinned("unknown-top-level-field", "percentageOfNodesToScor: 50\n",
        kube='strict decoding error: unknown field "percentageOfNodesToScor"',
        kubesched=(
            'percentageOfNodesToScor: unknown field "percentageOfNodesToScor"; did you '
            'mean "percentageOfNodesToScore"?'
        ),
        common='unknown field "percentageOfNodesToScor"',
    ),
    pinned("wrong-value-type", "parallelism: many\n",
        kube=(
            'json: cannot unmarshal string into Go struct field '
            'KubeSchedulerConfiguration.parallelism of type int32'
        ),
        kubesched='parallelism: Invalid value: "many": expected an integer (int32), got a string',
        common='parallelism',
    ),
    bad("leader-election-endpoints-lock", "leaderElection:\n  resourceLock: endpoints\n", (
            'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value '
            'must be "leases"'
        )),
    bad("two-profiles-one-unnamed", """
        profiles:
        - schedulerName: a
        - percentageOfNodesToScore: 10
        """, 'profiles[1].schedulerName: Required value'),
    bad("two-queue-sort-plugins", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            queueSort:
              enabled:
              - name: PrioritySort
              - name: PrioritySort
        """, (
            'profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort '
            'plugin can be enabled'
        )),
    bad("queue-sort-args-differ", """
        profiles:
        - schedulerName: a
          plugins:
            queueSort:
              enabled:
              - name: PrioritySort
              disabled:
              - name: "*"
        - schedulerName: b
          plugins:
            queueSort:
              enabled:
              - name: PrioritySort
              disabled:
              - name: "*"
          pluginConfig:
          - name: PrioritySort
            args: {}
        """, (
            'profiles[1].pluginConfig.args: Invalid value: {}: queueSort must be the same '
            'for all profiles'
        )),
    pinned("removed-plugin-in-multipoint", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            multiPoint:
              enabled:
              - name: GCEPDLimits
        """,
        kube=(
            'initializing profiles: creating profile for scheduler name default-scheduler: '
            'PreFilterPlugin "GCEPDLimits" does not exist'
        ),
        kubesched=(
            'profiles[0].plugins.multiPoint.enabled[0]: Invalid value: "GCEPDLimits": was '
            'invalid in version "v1" (KubeSchedulerConfiguration is version '
            '"kubescheduler.config.k8s.io/v1")'
        ),
        common='"GCEPDLimits"',
    ),
    bad("negative-score-weight", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            score:
              enabled:
              - name: ImageLocality
                weight: -1
        """, 'score plugins: total score of Score plugins could overflow'),
        pinned("unknown-extension-point", """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            preSort:
              enabled:
              - name: PrioritySort
        """,
        kube='strict decoding error: unknown field "profiles[0].plugins.preSort"',
        kubesched='profiles[0].plugins.preSort: unknown field "preSort"; did you mean "preScore"?',
        common='unknown field',
    ),
    bad("initial-backoff-zero", "podInitialBackoffSeconds: 0\n", 'podInitialBackoffSeconds: Invalid value: 0: must be greater than 0'),
    bad("lease-shorter-than-renew-deadline", "leaderElection:\n  leaseDuration: 5s\n", (
            'leaderElection.leaseDuration: Invalid value: "10s": must be greater than '
            '`RenewDeadline`'
        ),
        help=' (leaseDuration is 5s)',
    ),
    bad("negative-retry-period", "leaderElection:\n  retryPeriod: -1s\n", 'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero'),
    bad("spread-constraint-with-selector", args("PodTopologySpread", """
        defaultingType: List
        defaultConstraints:
        - maxSkew: 1
          topologyKey: zone
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {matchLabels: {app: x}}
        """), (
            'profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: '
            'Forbidden: constraint must not define a selector, as they deduced for each pod'
        )),
    bad("fit-bad-ignored-resource-name", args("NodeResourcesFit", """
        ignoredResources: ["-bad-"]
        """), (
            'args.ignoredResources[0]: Invalid value: "-bad-": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
            "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )),
    bad("interpodaffinity-negative-weight", args("InterPodAffinity", """
        hardPodAffinityWeight: -1
        """), (
            'profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: -1: '
            'not in valid range [0, 100]'
        )),
    # ---------------------------------------------------------------- every pluginConfig entry
    bad("disabled-defaultpreemption-bad-args", disabled_args("DefaultPreemption", """
        minCandidateNodesPercentage: 200
        """), (
            'profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: '
            '200: not in valid range [0, 100]'
        )),
    bad("disabled-volumebinding-bad-args", disabled_args("VolumeBinding", """
        bindTimeoutSeconds: -1
        """), (
            'profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: '
            'invalid BindTimeoutSeconds, should not be a negative value'
        )),
    bad("disabled-spread-bad-args", disabled_args("PodTopologySpread", """
        defaultingType: Sometimes
        """), (
            'profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: '
            '"Sometimes": supported values: "System", "List"'
        )),
    bad("disabled-balancedallocation-bad-args", disabled_args("NodeResourcesBalancedAllocation", """
        resources:
        - {name: cpu, weight: 2}
        """), 'profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1'),
    # validatePluginConfig's map keys NodeResourcesFit's validator as "NodeResourcesFitArgs":
    # disabled, its args are only decoded
    ok("disabled-fit-bad-scoring-type", disabled_args("NodeResourcesFit", """
        scoringStrategy: {type: Foo}
        """)),
    # pluginsNeeded: a plugin multiPoint enables is built even when the file disables it at
    # every extension point it has, so its args fail when it is built
    bad("multipoint-fit-disabled-at-each-point-bad-scoring-type", (
        "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
        "    preFilter:\n      disabled:\n      - name: NodeResourcesFit\n"
        "    filter:\n      disabled:\n      - name: NodeResourcesFit\n"
        "    score:\n      disabled:\n      - name: NodeResourcesFit\n"
        "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      scoringStrategy:\n        type: Foo\n"
        "        resources:\n        - {name: cpu, weight: 1}\n"
    ), (
        'args.scoringStrategy.type: Unsupported value: "Foo": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    )),
    pinned("disabled-fit-unknown-field", disabled_args("NodeResourcesFit", """
        foo: 1
        """),
        kube=(
            'strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding '
            'error: decoding args for plugin NodeResourcesFit: strict decoding error: unknown '
            'field "foo"'
        ),
        kubesched=(
            'profiles[0].pluginConfig[0].args.foo: unknown field "foo" (known fields: '
            'ignoredResources, ignoredResourceGroups, scoringStrategy)'
        ),
        common='unknown field "foo"',
    ),
    # ---------------------------------------------------------------- YAML tags and bounds
    ok("tag-float-on-an-integer", "parallelism: !!float 8\n"),
    ok("tag-binary", "leaderElection:\n  resourceName: !!binary a3ViZS1zY2hlZA==\n"),
    ok("tag-set-on-a-mapping", "leaderElection: !!set {leaderElect: true}\n"),
    ok("tag-str-on-a-number", "leaderElection:\n  resourceName: !!str 123\n"),
    pinned("tag-int-not-a-number", "parallelism: !!int x\n",
        kube="yaml: cannot decode !!str `x` as a !!int",
        kubesched='parallelism: invalid YAML: cannot decode !!str "x" as a !!int (line 5)',
        common="cannot decode !!str",
    ),
    pinned("tag-int-empty", "parallelism: !!int\n",
        kube="yaml: cannot decode !!null `` as a !!int",
        kubesched='parallelism: invalid YAML: cannot decode !!null "" as a !!int (line 5)',
        common="cannot decode !!null",
    ),
    pinned("tag-bool-maybe", "enableProfiling: !!bool maybe\n",
        kube="yaml: cannot decode !!str `maybe` as a !!bool",
        kubesched='enableProfiling: invalid YAML: cannot decode !!str "maybe" as a !!bool (line 5)',
        common="cannot decode !!str",
    ),
    pinned("tag-python", "leaderElection:\n  resourceName: !!python/name:os.system x\n",
        kube="",
        kubesched=(
            'leaderElection.resourceName: unsupported YAML tag "!!python/name:os.system" (line '
            "6): kubesched reads YAML 1.1's core tags only (!!str, !!int, !!float, !!bool, "
            "!!null, !!binary, !!timestamp, !!map, !!seq, ...)"
        ),
        common="",
    ),
    pinned("alias-bomb", alias_bomb(),
        kube="yaml: document contains excessive aliasing",
        kubesched=(
            "d[1][6][1]: invalid YAML: document contains excessive aliasing (4555 of the first "
            "4601 values come from aliases)"
        ),
        common="document contains excessive aliasing",
    ),
    pinned("nested-490-levels", "profiles: " + "[" * 490 + "]" * 490 + "\n",
        kube=(
            "json: cannot unmarshal array into Go struct field KubeSchedulerConfiguration.profiles "
            "of type v1.KubeSchedulerProfile"
        ),
        kubesched="profiles[0][0][0][0][0]... (100 levels): nested deeper than 100 levels (line 5)",
        common="profiles",
    ),
    pinned(
        "v1beta3-file",
        "",
        api_version=V1BETA3,
        kube='no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1beta3" in scheme "pkg/runtime/scheme.go:111"',
        kubesched="",
        common="",
    ),
]


@pytest.fixture(scope="module")
def kube_scheduler() -> Path:
    try:
        assets = ensure_assets(quiet=True)
    except AssetsUnavailable as e:
        pytest.skip(f"kube-scheduler binary unavailable: {e}")
    return assets / "kube-scheduler"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("config-differential")
    (d / "kubeconfig").write_text(UNREACHABLE_KUBECONFIG)
    return d


def write_config(workdir: Path, case: Case) -> Path:
    header = (
        f"apiVersion: {case.api_version}\n"
        "kind: KubeSchedulerConfiguration\n"
        "clientConnection:\n"
        f"  kubeconfig: {workdir / 'kubeconfig'}\n"
    )
    path = workdir / f"{case.id}.yaml"
    path.write_text(header + textwrap.dedent(case.body).lstrip("\n"))
    return path


def klog_value(raw: str, lines: Iterator[str]) -> str:
    """A klog text-format value: ``"quoted"`` (Go escapes) or the multi-line ``<`` ... ``>`` form."""
    if raw.startswith('"'):
        value = ast.literal_eval(raw)
        assert isinstance(value, str)
        return value
    assert raw == "<", raw
    parts = []
    for line in lines:
        if line.rstrip("\n") == " >":
            break
        parts.append(line.rstrip("\n").removeprefix("\t"))
    return "\n".join(parts)


def run_kube_scheduler(binary: Path, config: Path, timeout: float = 60.0) -> tuple[bool, str]:
    """(valid, message): kube-scheduler's verdict on ``config``."""
    proc = subprocess.Popen(
        [str(binary), "--config", str(config), "--secure-port=0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen: list[str] = []
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stderr, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout

        def lines() -> Iterator[str]:
            while time.monotonic() < deadline:
                if sel.select(timeout=max(0.0, deadline - time.monotonic())):
                    line = proc.stderr.readline()  # type: ignore[union-attr]
                    if not line:
                        return
                    seen.append(line)
                    yield line

        it = lines()
        for line in it:
            if STARTED in line:
                return True, ""
            m = FAILED.search(line.rstrip("\n"))
            if m:
                return False, klog_value(m.group(1), it)
        raise AssertionError("kube-scheduler gave no verdict:\n" + "".join(seen))
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()


def run_kubesched(config: Path) -> tuple[bool, str]:
    """(valid, message after the file-name prefix): ``kubesched config validate``'s verdict."""
    from kubesched.runtime.cli import main

    result = CliRunner().invoke(main, ["config", "validate", str(config)])
    if result.exit_code == 0:
        assert result.stdout.startswith(f"{config}: valid "), result.stdout
        return True, ""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    prefix = f"kubesched: error: {config}: "
    assert result.stderr.startswith(prefix), result.stderr
    return False, result.stderr[len(prefix) :].rstrip("\n")


#: where one of kube-scheduler's aggregated errors starts: a top-level field of the file
_NEXT_ERROR = re.compile(
    r", (?=(?:profiles|percentageOfNodesToScore|parallelism|podInitialBackoffSeconds|"
    r"podMaxBackoffSeconds|leaderElection|clientConnection)[\[.:])"
)
#: where one of kubesched's aggregated args errors starts: a field path and ": "
_NEXT_ARGS_ERROR = re.compile(r", (?=[A-Za-z0-9_.\[\]]+: )")
_INIT_PLUGIN = re.compile(r'^initializing plugin "[^"]+": ')
_KUBESCHED_ARGS = re.compile(r"^profiles\[\d+\]\.pluginConfig\[\d+\]\.args\.")


def normalized(kube: str, kubesched: str) -> tuple[str, str]:
    """Normalizations 1-3 on the pair of messages."""
    # 1: the first of an aggregate
    if kube.startswith("[") and kube.endswith("]"):
        kube = _NEXT_ERROR.split(kube[1:-1])[0]
    m = re.match(r"^(\S+): \[(.*)\]$", kubesched)
    if m:
        kubesched = f"{m.group(1)}.{_NEXT_ARGS_ERROR.split(m.group(2))[0]}"
    # 2: NewFramework's wrapper and kubesched's field path
    framework = FRAMEWORK_PREFIX.match(kube)
    if framework:
        kube = kube[framework.end() :]
        kubesched = re.sub(r"^profiles\[\d+\]\.plugins(\.\w+(\.enabled\[\d+\])?)?: ", "", kubesched)
    # 3: NodeResourcesFitArgs, validated when the plugin is built
    if framework and _INIT_PLUGIN.match(kube):
        kube = _INIT_PLUGIN.sub("args.", kube)
        kubesched = _KUBESCHED_ARGS.sub("args.", kubesched)
    return kube, kubesched


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kube_scheduler_and_kubesched_judge_the_file_alike(
    case: Case, kube_scheduler: Path, workdir: Path
) -> None:
    config = write_config(workdir, case)
    kube_valid, kube_message = run_kube_scheduler(kube_scheduler, config)
    ks_valid, ks_message = run_kubesched(config)
    if case.kube is not None:
        assert case.kubesched is not None
        assert (kube_valid, kube_message) == (case.kube == "", case.kube)
        if case.listing:
            assert not ks_valid
            assert ks_message.startswith(case.kubesched), ks_message
            assert re.fullmatch(r"[A-Za-z0-9]+(, [A-Za-z0-9]+)*", ks_message[len(case.kubesched) :])
        else:
            assert (ks_valid, ks_message) == (case.kubesched == "", case.kubesched)
        assert case.common in kube_message
        assert case.common in ks_message
        return
    assert (kube_valid, ks_valid) == (case.valid, case.valid), (kube_message, ks_message)
    if not case.valid:
        kube, kubesched = normalized(kube_message, ks_message)
        assert kube == case.message
        assert kubesched == kube + case.help
