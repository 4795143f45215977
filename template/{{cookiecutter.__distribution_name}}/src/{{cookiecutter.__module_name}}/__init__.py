{%- set cls = cookiecutter.__plugin_class -%}
{%- set F = cookiecutter.pre_filter_and_filter -%}
{%- set S = cookiecutter.score -%}
{%- set R = cookiecutter.reserve_and_permit -%}
{%- set B = cookiecutter.post_bind -%}
{%- set desc = cookiecutter.__description_escaped -%}
"""{{ desc|wordwrap(96) }}

A kubesched scheduler plugin. The class below is named by the ``kubesched.plugins`` entry point
in ``pyproject.toml``; the entry point's name is the plugin's name in KubeSchedulerConfiguration
files. What it does at each extension point:
{% if F %}
* PreFilter: pods in ``ignoredNamespaces`` are skipped (their Filter is not called); for the
  others, the value the pod asks for (the pod's own ``nodeLabel`` label, if any) is stored in
  the cycle state.
* Filter: the node must carry the label ``nodeLabel`` (with the pod's value, if it asked for one).
{%- endif %}
{%- if S %}
* Score: a stable hash of the node's name (your first plugin: scoring nodes by their name).
* NormalizeScore: the raw scores scaled to 0..100 over the feasible nodes.
{%- endif %}
{%- if R %}
* Reserve / Unreserve: remember which pods were reserved on which node, and forget them again.
* Permit: let every pod through at once.
{%- endif %}
{%- if B %}
* PostBind: record a ``Normal`` event on the pod once it is bound.
{%- endif %}

Plugin code uses only :mod:`kubesched.sdk`. Each hook's docstring repeats the short form of its
contract; the full one is in ``kubesched.sdk.hookspecs``.
"""

from __future__ import annotations

{% if S %}import hashlib
{% endif %}{% if R %}import threading
{% endif %}{% if F %}from collections.abc import Sequence
{% endif %}from dataclasses import dataclass{% if F %}, field{% endif %}

from kubesched.sdk import (
{%- if S %}
    MAX_NODE_SCORE,
{%- endif %}
{%- if F %}
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
{%- endif %}
    CycleState,
{%- if F %}
    EventResource,
{%- endif %}
    Handle,
{%- if F %}
    Node,
{%- endif %}
{%- if F or S %}
    NodeInfo,
{%- endif %}
{%- if S %}
    NodeScore,
{%- endif %}
    Pod,
{%- if F %}
    QueueingHint,
{%- endif %}
{%- if F or S or R %}
    Status,
{%- endif %}
    hookimpl,
)

__all__ = [
    "NAME",
    "{{ cls }}",
    "{{ cls }}Args",
{%- if S %}
    "name_hash",
{%- endif %}
]

#: The plugin's name in configuration files (the entry point's name in pyproject.toml).
NAME = "{{ cls }}"
{%- if F %}
#: Where PreFilter leaves :class:`PreFilterState` for Filter.
STATE_KEY = "PreFilter" + NAME
{%- endif %}
{%- if B %}
#: The ``reason`` of the event PostBind records.
EVENT_REASON = NAME + "Bound"
{%- endif %}
{% if F %}

@dataclass(frozen=True)
class PreFilterState:
    """What PreFilter computes once per pod and Filter reads on every node."""

    #: the value the pod wants for the node label (None: any value)
    wanted: str | None
{% endif %}

@dataclass
class {{ cls }}Args:
    """The plugin's arguments: ``pluginConfig[].args`` of the profile.
{%- if F or S or B %}

    YAML keys are the camelCase field names ({% if F %}``nodeLabel`` for ``node_label``{% elif B %}``recordEvents`` for ``record_events``{% else %}``salt``{% endif %}).
{%- else %}

    Add fields here (``max_pods: int = 10``); camelCase keys in YAML (``maxPods``) map to them.
{%- endif %}
    Omitted keys take the defaults; unknown keys and wrong types are rejected with the field's
    path before :meth:`validate` runs.
    """
{%- if F %}

    #: PreFilter/Filter: nodes must carry this label to run pods.
    node_label: str = "example.com/{{ cookiecutter.__plugin_slug }}"
    #: PreFilter: pods in these namespaces are not checked.
    ignored_namespaces: list[str] = field(default_factory=lambda: ["kube-system"])
{%- endif %}
{%- if S %}

    #: Score: mixed into the hash; change it for another (still stable) order of the nodes.
    salt: str = ""
{%- endif %}
{%- if B %}

    #: PostBind: record an event on each pod bound while this plugin is enabled.
    record_events: bool = True
{%- endif %}

    def validate(self) -> None:
        """Called after the fields are set; raise ``ValueError("fieldName: message")`` and the
        error names ``args.fieldName`` of this plugin's ``pluginConfig`` entry."""
{%- if F %}
        if not self.node_label.strip():
            raise ValueError("nodeLabel: must not be empty")
{%- endif %}
{%- if S %}
        if len(self.salt) > 253:
            raise ValueError("salt: must be at most 253 characters")
{%- endif %}
{%- if S %}


def name_hash(node_name: str, salt: str = "") -> int:
    """A number in ``0..65535`` from the node's name: the same on every run and every replica
    (unlike the built-in ``hash()``, which changes between processes)."""
    digest = hashlib.sha256(f"{salt}{node_name}".encode()).digest()
    return int.from_bytes(digest[:2], "big")
{%- endif %}


class {{ cls }}:
    """{{ desc|wordwrap(92, wrapstring="\n    ") }}"""

    #: the typed arguments, built from ``pluginConfig`` (defaults applied, validated)
    Args = {{ cls }}Args
    #: the ``kind`` accepted in ``pluginConfig[].args``
    args_kind = "{{ cls }}Args"

    def __init__(self, args: {{ cls }}Args, handle: Handle) -> None:
        """Built once per profile. The Handle gives the snapshot of nodes, the waiting pods,
        the event recorder, the clock and object access (``handle.objects.get/list/patch``)."""
        self.args = args
        self.handle = handle
{%- if R %}
        self._lock = threading.Lock()  # Unreserve may run in a binding cycle's thread
        #: node name -> uids of the pods reserved there
        self._reserved: dict[str, set[str]] = {}
{%- endif %}
{%- if F %}

    # PreFilter / Filter ---------------------------------------------------------------------

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreFilter: check the pod and precompute what Filter needs, once per cycle.

        ``None`` (Success) goes on; ``Status.skip()`` means this plugin has nothing to do for
        the pod and its Filter is not called this cycle; Unschedulable or
        UnschedulableAndUnresolvable stops the cycle for every node (PostFilter runs); an Error
        fails the cycle. A ``PreFilterResult(node_names=...)`` would restrict Filter to those
        nodes (intersected with the other plugins' results).
        """
        if pod.namespace in self.args.ignored_namespaces:
            return Status.skip()
        state.write(STATE_KEY, PreFilterState(pod.labels.get(self.args.node_label)))
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter: can the pod run on this node? Called for each candidate node.

        ``None`` (Success) lets the node pass; ``Status.unschedulable(reason)``: it does not fit
        now, preemption may help; ``Status.unresolvable(reason)``: preemption cannot help; an
        Error fails the cycle. Reasons are counted across nodes in the event message
        (``0/3 nodes are available: 2 node(s) didn't have label ...``). Do not modify
        ``node_info``. The cycle state is what PreFilter left: ``read_as`` checks its type and
        raises StateError (a KeyError, an Error for the pod) if this plugin is enabled at filter
        but not at preFilter; ``multiPoint`` enables both.
        """
        wanted = state.read_as(STATE_KEY, PreFilterState).wanted
        value = node_info.node.labels.get(self.args.node_label)
        if value is None:
            return Status.unresolvable(f"node(s) didn't have label {self.args.node_label}")
        if wanted is not None and value != wanted:
            return Status.unresolvable(f"node(s) didn't have label {self.args.node_label}={wanted}")
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EnqueueExtensions: the cluster events that may make a pod this plugin rejected
        schedulable. Here: a node added or relabelled, and (the queueing hint) only when the
        node now has the label the pod needs. Without this hook every event retries the pod."""
        node_added_or_relabelled = ClusterEvent(
            EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        )
        return [ClusterEventWithHint(node_added_or_relabelled, self._node_may_fit)]

    def _node_may_fit(self, pod: Pod, old_obj: Node | None, new_obj: Node | None) -> QueueingHint:
        """The queueing hint: ``old_obj``/``new_obj`` are the node before and after (views)."""
        value = new_obj.labels.get(self.args.node_label) if new_obj is not None else None
        wanted = pod.labels.get(self.args.node_label)
        if value is None or (wanted is not None and value != wanted):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
{%- endif %}
{%- if S %}

    # Score / NormalizeScore -----------------------------------------------------------------

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Score: rank a feasible node. Return an int (or ``(int, Status)``).

        Without NormalizeScore the score must be in ``0..100``. The framework multiplies the
        final score by the plugin's weight and sums over plugins; the highest total wins, ties
        are broken at random. A Status other than Success fails the cycle. Runs once per node:
        keep it cheap (precompute in ``pre_score`` if needed).
        """
        return name_hash(node_info.name, self.args.salt)

    @hookimpl
    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """NormalizeScore: rewrite this plugin's raw scores in place so they end in ``0..100``.

        Called once per cycle after every feasible node is scored; a score outside ``0..100``
        afterwards fails the cycle. Here: the lowest raw score becomes 0 and the highest 100.
        """
        if not scores:
            return None
        low = min(s.score for s in scores)
        high = max(s.score for s in scores)
        for s in scores:
            if high == low:
                s.score = MAX_NODE_SCORE
            else:
                s.score = (s.score - low) * MAX_NODE_SCORE // (high - low)
        return None
{%- endif %}
{%- if R %}

    # Reserve / Unreserve / Permit -----------------------------------------------------------

    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Reserve: the node is chosen and the pod is assumed on it; reserve what the plugin
        tracks itself. Any status other than Success (Unschedulable with a reason, or Error)
        aborts: every Reserve plugin gets Unreserve, in reverse order, and the pod is requeued.

        Here: the pod is added to :meth:`reserved_pods`. Pods no longer on the node (the
        snapshot is the source of truth) are forgotten first, so the table stays small.
        """
        try:
            present = {p.uid for p in self.handle.snapshot().get(node_name).pods}
        except KeyError:
            present = set()
        with self._lock:
            held = self._reserved.setdefault(node_name, set())
            held.intersection_update(present)
            held.add(pod.uid)
        return None

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve: undo Reserve. Called in reverse plugin order when a later step (Reserve,
        Permit, PreBind, Bind) fails or the pod is rejected while waiting. Must be idempotent
        and must not fail."""
        with self._lock:
            held = self._reserved.get(node_name)
            if held is not None:
                held.discard(pod.uid)
                if not held:
                    del self._reserved[node_name]

    def reserved_pods(self, node_name: str) -> set[str]:
        """The uids of the pods reserved on ``node_name`` (a copy)."""
        with self._lock:
            return set(self._reserved.get(node_name, ()))

    @hookimpl
    def permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | tuple[Status, float] | None:
        """Permit: the last gate before binding.

        ``None`` (Success) allows the pod; a rejection (Unschedulable) denies it; to hold it,
        return ``(Status.wait(), timeout_seconds)`` (at most 15 minutes): the pod waits in its
        binding cycle until a plugin allows or rejects it through
        ``handle.get_waiting_pod(pod.uid)``; on timeout it is rejected and Unreserve runs.
        Here: allow every pod at once.
        """
        return None
{%- endif %}
{%- if B %}

    # PostBind -------------------------------------------------------------------------------

    @hookimpl
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """PostBind: informational, after a successful bind (e.g. remember the node, clean up).
        Nothing can fail any more: the result is ignored.

        Here: record a ``Normal`` event on the pod (``kubectl events --for pod/NAME``).
        """
        if self.args.record_events:
            note = f"{NAME}: {pod.key} is bound to {node_name}"
            self.handle.event_recorder.event(pod.raw, "Normal", EVENT_REASON, "Binding", note)
{%- endif %}
