"""The shape of a plugin: what the runtime reads from a plugin class besides its hooks.

A plugin is any class (or factory) named by an entry point in the ``kubesched.plugins`` group.
Every member below is optional; :class:`Plugin` documents them and lets a type checker check a
plugin that declares it implements the protocol::

    class MyPlugin:                 # structurally a kubesched.sdk.Plugin
        Args = MyArgs               # a dataclass; built from pluginConfig args, defaults applied
        watches = (("v1", "ConfigMap"),)

        def __init__(self, args: MyArgs, handle: Handle) -> None: ...
        def close(self) -> None: ...  # called once when the scheduler shuts down
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol, runtime_checkable

__all__ = ["PLUGIN_ATTRIBUTES", "Plugin"]

#: Class attributes the runtime reads of a plugin (all optional).
PLUGIN_ATTRIBUTES: tuple[str, ...] = ("name", "Args", "args_kind", "watches")


@runtime_checkable
class Plugin(Protocol):
    """Optional members of a plugin class.

    * ``name``: the plugin's name in messages (the entry point's name is what configs use).
    * ``Args``: a dataclass for the plugin's ``pluginConfig`` args; the constructor then takes
      ``(args, handle)`` (or fewer, by parameter name ``args``/``handle``).
    * ``args_kind``: the ``kind`` its args may carry in a config (default ``<Name>Args``).
    * ``watches``: ``(apiVersion, kind)`` pairs the plugin reads through ``handle.objects``
      besides the kinds its ``events_to_register`` names, so the runtime caches them.
    * ``close()``: release what the plugin holds (threads, connections); called once when the
      scheduler shuts down, in reverse order of construction. An exception is logged.
    """

    name: ClassVar[str]
    args_kind: ClassVar[str]
    watches: ClassVar[Sequence[tuple[str, str]]]

    def close(self) -> None: ...
