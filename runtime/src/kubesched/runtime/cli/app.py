"""The ``kubesched`` command group and what every command shares: one-line user errors,
plugin discovery and config loading."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import click

from .. import __version__

__all__ = ["ServerUnusable", "UserError", "fail", "guard", "load_config_file", "main", "registry", "split_pod"]


class UserError(click.ClickException):
    """Bad input: one line, exit code 2, no traceback (unless --debug)."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"kubesched: error: {self.message}", err=True)


class ServerUnusable(Exception):
    """A one-shot command (``explain``) could not read the cluster: the API server is
    unreachable, not a Kubernetes API server, or refuses the credentials."""


def fail(msg: str) -> NoReturn:
    raise UserError(msg)


def guard(ctx: click.Context, fn: Callable[[], Any]) -> Any:
    """Turn known input errors into one-line exits (exit 2); show tracebacks only with --debug."""
    from ..cluster.kubernetes.errors import KubeconfigError
    from ..cluster.simulated import ManifestError
    from ..config import ConfigError
    from ..observe.metrics import AddressError
    from ..registry import UnknownPluginError

    debug = bool(ctx.find_root().params.get("debug"))
    try:
        return fn()
    except (ConfigError, ManifestError, UnknownPluginError, KubeconfigError, ServerUnusable) as e:
        if debug:
            raise
        fail(str(e))
    except AddressError as e:
        if debug:
            raise
        fail(f"--address {e}")


def registry() -> Any:
    from ..registry import Registry

    return Registry.discover()


def load_config_file(path: str | None, registry: Any) -> Any:
    from ..config import load_config

    return load_config(path, installed_plugins=registry.names(), unknown_plugin_hints=registry.unknown_plugin_hints())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kubesched", message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show tracebacks: of input errors, and of every exception a plugin raised (debug logs, as -v 4).")
def main(debug: bool) -> None:
    """kubesched — the Kubernetes scheduling framework in Python."""
    if debug:
        from ..observe.logging import setup_logging

        setup_logging(DEBUG_VERBOSITY)


#: the ``-v`` level ``--debug`` implies: debug logs, with the traceback of a plugin's exception
DEBUG_VERBOSITY = 4



def split_pod(pod: str) -> tuple[str, str]:
    """``[namespace/]name`` as (namespace, name); the namespace defaults to ``default``."""
    return (pod.split("/", 1)[0], pod.split("/", 1)[1]) if "/" in pod else ("default", pod)
