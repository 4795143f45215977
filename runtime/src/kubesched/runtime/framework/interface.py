"""What the rest of the runtime sees of a framework (kube-scheduler's ``framework.Framework``).

scheduling, the scheduler, explain, the test kit and the CLI type against :class:`Framework`;
:class:`~kubesched.runtime.framework.runners.FrameworkImpl` is the one implementation, built by
:func:`~kubesched.runtime.framework.wiring.build_framework`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.sdk import (
    ClusterEventWithHint,
    CycleState,
    NodeColumns,
    NodeInfo,
    Pod,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    Status,
)

if TYPE_CHECKING:
    from ..config import Profile
    from ..registry import Registry
    from .handle import FrameworkHandle, FrameworkServices

__all__ = ["Entry", "Framework", "NodePluginScores", "PluginScore"]

#: one collected hook implementation: (plugin name, callable taking the spec's arguments)
Entry = tuple[str, Callable[..., Any]]


@dataclass
class PluginScore:
    name: str
    raw: int = 0
    normalized: int = 0
    weighted: int = 0


@dataclass
class NodePluginScores:
    name: str
    scores: list[PluginScore] = field(default_factory=list)
    total_score: int = 0


class Framework(Protocol):
    """The plugins of one profile, wired to extension points, run with kube-scheduler's semantics."""

    #: reuse Filter results and raw Scores between pods with equal signatures (settable)
    reuse_results: bool
    #: use the batch forms filter_batch/score_batch (settable)
    use_batch: bool
    #: use the column forms filter_columns/score_columns (settable)
    use_columns: bool

    @classmethod
    def build(cls, profile: Profile, registry: Registry, services: FrameworkServices, *, source: str | None = None) -> Framework:
        """The framework of ``profile`` (see :func:`~kubesched.runtime.framework.wiring.build_framework`)."""
        from .wiring import build_framework

        return build_framework(profile, registry, services, source=source)

    # read-only facts ------------------------------------------------------------------------
    @property
    def profile_name(self) -> str: ...
    @property
    def percentage_of_nodes_to_score(self) -> int | None: ...
    @property
    def plugins(self) -> Mapping[str, Any]:
        """Plugin instances by name, in construction order."""
    @property
    def points(self) -> Mapping[str, list[str]]:
        """camelCase extension point -> enabled plugin names, in order."""
    @property
    def score_weights(self) -> Mapping[str, int]: ...
    @property
    def events(self) -> Mapping[str, list[ClusterEventWithHint] | None]:
        """EnqueueExtensions per plugin (None: the plugin did not say; every event requeues)."""
    @property
    def services(self) -> FrameworkServices | None: ...
    @property
    def handle(self) -> FrameworkHandle | None: ...
    # collected hooks, in configured order (explain runs them one by one)
    @property
    def pre_filter(self) -> Sequence[Entry]: ...
    @property
    def filter(self) -> Sequence[Entry]: ...
    @property
    def pre_score(self) -> Sequence[Entry]: ...
    @property
    def score(self) -> Sequence[Entry]: ...
    @property
    def normalize(self) -> Mapping[str, Callable[..., Any]]: ...

    # queue ----------------------------------------------------------------------------------
    def queue_sort_func(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]: ...
    def run_pre_enqueue(self, pod: Pod, only: str = "") -> Status: ...

    # scheduling cycle -----------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status, set[str]]: ...
    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status: ...
    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status: ...
    def active_filters(self, state: CycleState) -> list[Entry]: ...
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo, entries: list[Entry] | None = None) -> Status: ...
    def batch_filters(self, state: CycleState, entries: list[Entry]) -> bool: ...
    def run_filter_plugins_batch(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], entries: list[Entry], use_batch: bool = True
    ) -> list[Status] | Status: ...
    def column_filters(self, state: CycleState, entries: list[Entry]) -> list[Entry] | None: ...
    def run_filter_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, centries: list[Entry]) -> tuple[Any, list[Status]] | Status | None: ...
    def column_scores(self, state: CycleState) -> list[tuple[str, Callable[..., Any], Callable[..., Any] | None, int]] | None: ...
    def run_score_columns(
        self,
        state: CycleState,
        pod: Pod,
        columns: NodeColumns,
        rows: Any,
        centries: Sequence[tuple[str, Callable[..., Any], Callable[..., Any] | None, int]],
        details: list[tuple[str, Any, Any, int]] | None = None,
    ) -> Any: ...
    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo, entries: list[Entry] | None = None) -> Status: ...
    def run_filter_with_nominated_pods_added(self, state: CycleState, pod: Pod, node_info: NodeInfo, added: Sequence[Pod] | None = None) -> Status | None: ...
    def run_post_filter(self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]: ...
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status: ...
    def active_scores(self, state: CycleState) -> list[Entry]: ...
    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        details: bool = False,
        totals_only: bool = False,
        reuse: dict[Any, Any] | None = None,
    ) -> tuple[list[NodePluginScores], Status]: ...
    def score_totals(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], reuse: dict[Any, Any] | None = None) -> tuple[list[int], Status]: ...
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...
    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...
    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...
    def will_wait_on_permit(self, pod: Pod) -> bool: ...

    # result reuse ---------------------------------------------------------------------------
    def sign(self, names: Sequence[str], pod: Pod) -> tuple[Any, ...] | Status | None: ...
    def reuse_table(self, kind: str, signature: tuple[Any, ...], epoch: int) -> dict[Any, Any]: ...

    # binding cycle --------------------------------------------------------------------------
    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...
    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...
    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...
    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...

    # info and lifecycle ---------------------------------------------------------------------
    def has_filter_plugins(self) -> bool: ...
    def has_score_plugins(self) -> bool: ...
    def has_post_filter_plugins(self) -> bool: ...
    def close(self) -> None:
        """Each plugin's ``close()``, once, in reverse construction order (exceptions logged)."""
