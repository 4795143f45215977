{%- set cls = cookiecutter.__plugin_class -%}
"""The installed distribution exposes the plugin through the ``kubesched.plugins`` entry point,
as ``kubesched plugins`` (the command an operator runs) shows it.

Needs the distribution installed: ``pip install -e '.[test]'``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from {{ cookiecutter.__module_name }} import NAME

DISTRIBUTION = "{{ cookiecutter.__distribution_name }}"
EXTENSION_POINTS = [
{%- if cookiecutter.pre_filter_and_filter %}
    "preFilter",
    "filter",
{%- endif %}
{%- if cookiecutter.score %}
    "score",
{%- endif %}
{%- if cookiecutter.reserve_and_permit %}
    "reserve",
    "permit",
{%- endif %}
{%- if cookiecutter.post_bind %}
    "postBind",
{%- endif %}
]


def kubesched_command() -> str:
    """The ``kubesched`` script of this interpreter's environment (venv not activated, too)."""
    name = "kubesched.exe" if os.name == "nt" else "kubesched"
    script = Path(sysconfig.get_path("scripts")) / name
    found = str(script) if script.exists() else shutil.which("kubesched")
    if found is None:
        pytest.fail("the kubesched command is missing: pip install -e '.[test]'")
    return found


def test_kubesched_plugins_lists_the_plugin() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KUBESCHED_LOAD_PLUGINS"}
    proc = subprocess.run(
        [kubesched_command(), "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    plugins = {p["name"]: p for p in json.loads(proc.stdout)}
    assert NAME in plugins, f"{NAME} is not installed: pip install -e '.[test]'"
    spec = plugins[NAME]
    assert "error" not in spec, spec["error"]
    assert "warnings" not in spec, spec["warnings"]
    assert spec["distribution"] == DISTRIBUTION
    assert spec["extension_points"] == EXTENSION_POINTS
    assert spec["args_kind"] == NAME + "Args"
