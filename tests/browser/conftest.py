"""Fixtures for tests that render pages in a real headless Chromium (Debian's ``chromium``).

- ``chromium`` (session): the path of the Chromium binary. Found on PATH (``chromium``,
  ``chromium-browser``) or at ``/usr/bin/chromium``; when missing and this process is root with
  ``apt-get`` available, it is installed (``apt-get update`` then ``apt-get install -y
  --no-install-recommends chromium``, progress shown live), so ``python3 -m tox`` sets up a fresh
  machine. Skipped only where it cannot be had (not root, or no ``apt-get``); a failed install is
  an error, never a skip.
- ``run_chromium(*args, timeout=...)``: runs it headless (``--headless --no-sandbox
  --disable-gpu`` and a temporary ``--user-data-dir``), each call bounded by a timeout.

Every test collected under ``tests/browser`` gets the ``browser`` marker (``-m "not browser"``
deselects).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

BROWSER_DIR = Path(__file__).resolve().parent

#: seconds one Chromium call may take (a cold start on a loaded 2-core machine takes a few)
CHROMIUM_TIMEOUT = 120
#: seconds apt-get may take to update and install Chromium and its libraries
INSTALL_TIMEOUT = 1800


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if BROWSER_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def _install_chromium(config: pytest.Config) -> None:
    """apt-get update + install chromium, with apt's output shown live (not captured)."""
    capman = config.pluginmanager.getplugin("capturemanager")
    reporter = config.pluginmanager.getplugin("terminalreporter")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    commands = [
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", "chromium"],
    ]
    cm = capman.global_and_fixture_disabled() if capman is not None else None
    if cm is None:
        for cmd in commands:
            subprocess.run(cmd, check=True, env=env, timeout=INSTALL_TIMEOUT)
        return
    with cm:
        if reporter is not None:
            reporter.write_line(
                "browser: installing Debian's chromium with apt-get (a few minutes the first time)"
            )
        for cmd in commands:
            subprocess.run(cmd, check=True, env=env, timeout=INSTALL_TIMEOUT)


@pytest.fixture(scope="session")
def chromium(request: pytest.FixtureRequest) -> str:
    found = find_chromium()
    if found:
        return found
    if os.geteuid() != 0:
        pytest.skip("chromium is not installed and this process is not root (cannot apt-get it)")
    if shutil.which("apt-get") is None:
        pytest.skip("chromium is not installed and apt-get is not available")
    _install_chromium(request.config)
    found = find_chromium()
    if found is None:
        raise RuntimeError("apt-get installed chromium but no chromium binary was found")
    return found


@pytest.fixture(scope="session")
def run_chromium(chromium: str) -> Callable[..., subprocess.CompletedProcess[bytes]]:
    def run(*args: str, timeout: float = CHROMIUM_TIMEOUT) -> subprocess.CompletedProcess[bytes]:
        with tempfile.TemporaryDirectory(prefix="kubesched-chromium-") as profile:
            cmd = [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                *args,
            ]
            proc = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            raise AssertionError(
                f"chromium exited {proc.returncode}: {' '.join(cmd)}\n"
                f"{proc.stderr.decode(errors='replace')[-4000:]}"
            )
        return proc

    return run
