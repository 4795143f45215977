"""The ``kubesched`` command line: simulate, explain, plugins, config validate, run.

One module per command; ``app`` holds the click group and what the commands share.
"""

from __future__ import annotations

from . import compare_cmd, config_cmd, import_cmd, plugins_cmd, snapshot_cmd, sweep_cmd  # noqa: F401  (registers the commands)
from .app import UserError, main
from .explain_cmd import explain_live, explain_simulated
from .run_cmd import required_kinds, run_scheduler
from .simulate_cmd import simulate

__all__ = ["UserError", "explain_live", "explain_simulated", "main", "required_kinds", "run_scheduler", "simulate"]
