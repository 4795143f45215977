"""Which cluster events requeue which waiting pods (kube-scheduler's ``isPodWorthRequeuing``
and ``MatchAnyClusterEvent`` in ``backend/queue/scheduling_queue.go``): the plugins'
registered events (EventsToRegister) and their queueing hints, with the per-event caches that
keep this cheap when one event meets many waiting pods. The scheduling queue (``queue.py``)
asks it; it holds no pods."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueuedPodInfo,
    QueueingHint,
)

__all__ = ["QueueingHints"]

log = logging.getLogger("kubesched")


class QueueingHints:
    """The registrations of every profile's plugins, and the decisions made from them."""

    def __init__(self, events: Mapping[str, Mapping[str, list[ClusterEventWithHint] | None]]) -> None:
        #: scheduler name -> plugin -> events (None = every event)
        self._events = events
        #: event -> (profile, plugin) -> the plugin's registrations that match the event (None:
        #: the plugin registered none, so every event may help); events and registrations are
        #: fixed, so each match is computed once
        self._matching: dict[ClusterEvent, dict[tuple[str, str], tuple[Any, ...] | None]] = {}
        #: event -> profile -> the plugins with registrations none of which matches the event:
        #: a pod rejected only by such plugins stays where it is (``deaf_to``)
        self._deaf: dict[ClusterEvent, dict[str, frozenset[str]]] = {}
        #: (plugin, exception type) of the queueing hints that raised and were logged
        self._hint_errors: set[tuple[str, type]] = set()

    def registered_for(self, resource: str, action: ActionType) -> bool:
        """Whether a plugin of some profile registered exactly this resource for this action."""
        for plugin_events in self._events.values():
            for evs in plugin_events.values():
                for ewh in evs or ():
                    if str(ewh.event.resource) == resource and ewh.event.action & action:
                        return True
        return False

    def strategy(
        self,
        qpi: QueuedPodInfo,
        event: ClusterEvent,
        old: Any,
        new: Any,
        matching: dict[tuple[str, str], tuple[Any, ...] | None],
        wildcard: bool,
    ) -> str:
        """How ``event`` requeues ``qpi`` ("skip", "after_backoff", "immediately");
        ``matching`` is the event's registrations per (profile, plugin) (``matching_for``)."""
        unsched, pending = qpi.unschedulable_plugins, qpi.pending_plugins
        if (not unsched and not pending) or wildcard:
            return "after_backoff"
        profile = qpi.pod.scheduler_name
        strategy = "skip"
        # a plugin in both sets is looked at twice, to the same effect
        for plugin in (*unsched, *pending) if pending else unsched:
            try:
                evs = matching[(profile, plugin)]
            except KeyError:
                evs = self._match(matching, (profile, plugin), event)
            if evs is None:
                # no EnqueueExtensions (or unknown plugin): any event may help
                if plugin in qpi.pending_plugins:
                    return "immediately"
                strategy = "after_backoff"
                continue
            for ewh in evs:
                hint = QueueingHint.QUEUE
                if ewh.hint is not None:
                    try:
                        hint = ewh.hint(qpi.pod, old, new)
                    except Exception as e:
                        self.hint_failed(plugin, event, e)
                        hint = QueueingHint.QUEUE
                if hint == QueueingHint.SKIP:
                    continue
                if plugin in qpi.pending_plugins:
                    return "immediately"
                strategy = "after_backoff"
        return strategy

    def deaf_to(self, event: ClusterEvent) -> dict[str, frozenset[str]]:
        """Per profile, the plugins that registered events but none matching ``event``: for a pod
        rejected by these alone, ``strategy`` calls no hint and gives "skip"."""
        d = self._deaf.get(event)
        if d is None:
            d = self._deaf[event] = {
                profile: frozenset(p for p, evs in plugin_events.items() if evs is not None and not any(ewh.event.matches(event) for ewh in evs))
                for profile, plugin_events in self._events.items()
            }
        return d

    def matching_for(self, event: ClusterEvent) -> dict[tuple[str, str], tuple[Any, ...] | None]:
        """The cache of ``event``'s matching registrations (filled by ``strategy``)."""
        m = self._matching.get(event)
        if m is None:
            m = self._matching[event] = {}
        return m

    def worth(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any, plugins: set[str]) -> bool:
        if event.is_wildcard():
            return True
        plugin_events = self._events.get(qpi.pod.scheduler_name, {})
        for plugin in plugins:
            evs = plugin_events.get(plugin)
            if evs is None:
                return True
            for ewh in evs:
                if ewh.event.matches(event):
                    if ewh.hint is None:
                        return True
                    try:
                        if ewh.hint(qpi.pod, old, new) != QueueingHint.SKIP:
                            return True
                    except Exception as e:
                        self.hint_failed(plugin, event, e)
                        return True
        return False

    def registers(self, qpi: QueuedPodInfo, event: ClusterEvent, matching: dict[tuple[str, str], tuple[Any, ...] | None]) -> bool:
        """MatchAnyClusterEvent(event, GatingPluginEvents): the pod's gating plugin registered
        an event that matches (a plugin without EnqueueExtensions registers every event);
        ``matching`` is the event's cache of matching registrations, as in ``strategy``."""
        key = (qpi.pod.scheduler_name, qpi.gating_plugin)
        try:
            evs = matching[key]
        except KeyError:
            evs = self._match(matching, key, event)
        return evs is None or bool(evs)

    def _match(self, matching: dict[tuple[str, str], tuple[Any, ...] | None], key: tuple[str, str], event: ClusterEvent) -> tuple[Any, ...] | None:
        """A miss of ``matching``: the registrations of ``key``'s (profile, plugin) that match
        ``event`` (None: it registered none), kept in ``matching``."""
        registered = self._events.get(key[0], {}).get(key[1])
        evs = None if registered is None else tuple(ewh for ewh in registered if ewh.event.matches(event))
        matching[key] = evs
        return evs

    def hint_failed(self, plugin: str, event: ClusterEvent, e: Exception) -> None:
        """A queueing hint raised: the pod is queued (QUEUE), as kube-scheduler does; logged at
        ERROR once per (plugin, exception type), the traceback at debug level."""
        key = (plugin, type(e))
        if key in self._hint_errors:
            return
        self._hint_errors.add(key)
        log.error(
            'queueing hint of plugin "%s" failed on event %s: %s: %s; the pod is queued (logged once per plugin and exception type)',
            plugin, event, type(e).__name__, e,
        )
        if log.isEnabledFor(logging.DEBUG):
            log.debug('queueing hint of plugin "%s" failed', plugin, exc_info=(type(e), e, e.__traceback__))
