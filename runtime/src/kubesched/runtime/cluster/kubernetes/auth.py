"""Where the API server is and who we are: the official ``kubernetes`` client does this part.

Its config loaders read a kubeconfig (contexts, client certificates, tokens, exec and
auth-provider plugins) or the in-cluster service account, into a ``Configuration``; its REST
client turns that into a urllib3 ``PoolManager`` with the TLS settings (CA, client certificate,
``insecure-skip-tls-verify``, proxy). Everything after that (every request) is kubesched's own
(``api.py``): the client's model classes and request path are too slow for a scheduler.
"""

from __future__ import annotations

import os
from typing import Any

from kubesched.sdk._text import cut, printable

from .errors import KubeconfigError

__all__ = ["USER_AGENT", "Auth", "config_source", "default_kubeconfig", "load_configuration", "pool_manager"]

USER_AGENT = "kubesched/0.1.0"


def default_kubeconfig() -> str:
    """The kubeconfig read when none is named: ``$KUBECONFIG``, else ``~/.kube/config``."""
    return os.environ.get("KUBECONFIG") or "~/.kube/config"


def config_source(kubeconfig: str | None) -> str:
    """Where the credentials come from, in words, for messages: ``kubeconfig PATH`` or the
    in-cluster service account (never a credential itself)."""
    if kubeconfig:
        return f"kubeconfig {printable(kubeconfig)}"
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return "the in-cluster service account token"
    return f"kubeconfig {printable(default_kubeconfig())}"


def _check_file(path: str, shown: str) -> None:
    """Raise KubeconfigError when ``path`` cannot be read or is not a YAML mapping: the
    official loader's errors for these are tracebacks (``TypeError``) or say nothing of the file."""
    import yaml

    try:
        with open(os.path.expanduser(path), "rb") as f:
            text = f.read()
    except FileNotFoundError:
        raise KubeconfigError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise KubeconfigError(f"{shown}: is a directory") from None
    except PermissionError:
        raise KubeconfigError(f"{shown}: permission denied") from None
    except OSError as e:
        raise KubeconfigError(f"{shown}: cannot be read: {printable(e.strerror or e)}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise KubeconfigError(f"{shown}: not valid YAML{where}") from None
    except RecursionError:
        raise KubeconfigError(f"{shown}: not valid YAML (nested too deep)") from None
    if not isinstance(doc, dict):
        got = "an empty file" if doc is None else f"a {type(doc).__name__}"
        raise KubeconfigError(f"{shown}: not a kubeconfig (expected a mapping with clusters, contexts and users; got {got})")


def load_configuration(kubeconfig: str | None, context: str | None = None) -> Any:
    """``kubeconfig`` if given, else the in-cluster service account, else ``~/.kube/config``
    (``$KUBECONFIG``); the connection pool is sized for the binding and writer threads.

    Raises KubeconfigError (one line, no secrets: the file's content is never quoted) when
    there is no configuration or it cannot be loaded."""
    from kubernetes import client as kclient
    from kubernetes import config as kconfig
    from kubernetes.config.config_exception import ConfigException

    cfg = kclient.Configuration()
    in_cluster = not kubeconfig and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    path = kubeconfig or default_kubeconfig()
    shown = config_source(kubeconfig)
    if not kubeconfig and not in_cluster and not os.environ.get("KUBECONFIG") and not os.path.exists(os.path.expanduser(path)):
        raise KubeconfigError(
            "no kubeconfig: ~/.kube/config does not exist, KUBECONFIG is not set and this is not a pod; "
            "give --kubeconfig or clientConnection.kubeconfig"
        )
    try:
        if in_cluster:
            kconfig.load_incluster_config(client_configuration=cfg)
        else:
            if os.pathsep not in path:
                _check_file(path, shown)
            kconfig.load_kube_config(config_file=path, context=context, client_configuration=cfg)
    except KubeconfigError:
        raise
    except ConfigException as e:
        raise KubeconfigError(f"{shown}: {cut(str(e), 200)}") from None
    except Exception as e:  # the loader's own failures on odd files (TypeError, KeyError...)
        raise KubeconfigError(f"{shown}: cannot be loaded ({type(e).__name__}: {cut(str(e), 200)})") from None
    cfg.connection_pool_maxsize = max(getattr(cfg, "connection_pool_maxsize", 4) or 4, 32)
    return cfg


def pool_manager(cfg: Any) -> tuple[Any, Any]:
    """(the client's ``ApiClient``, its urllib3 pool manager with the TLS/proxy settings)."""
    from kubernetes import client as kclient

    api = kclient.ApiClient(cfg)
    return api, api.rest_client.pool_manager


class Auth:
    """Request headers with the bearer token. A token that can change (in-cluster tokens are
    re-read, exec plugins refresh: the client installs ``refresh_api_key_hook``) is asked for on
    every request; a static one is looked up once."""

    def __init__(self, cfg: Any) -> None:
        self.configuration = cfg
        self._static_auth: str | None = None  # the token, when no refresh hook can change it
        self._blocks: dict[str | None, bytes] = {}

    def header_block(self, content_type: str | None) -> bytes:
        """``headers(content_type)`` as the lines of an HTTP request (each ending in CRLF);
        made once per content type while the token is static."""
        block = self._blocks.get(content_type)
        if block is None:
            h = self.headers(content_type)
            if any(c in k + v for k, v in h.items() for c in "\r\n\0"):
                raise ValueError("a request header holds a line break or NUL (the token or content type)")
            block = "".join(f"{k}: {v}\r\n" for k, v in h.items()).encode("latin-1")
            if self._static_auth is not None and getattr(self.configuration, "refresh_api_key_hook", None) is None:
                self._blocks[content_type] = block
        return block

    def headers(self, content_type: str | None) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if content_type:
            h["Content-Type"] = content_type
        cfg = self.configuration
        hook = getattr(cfg, "refresh_api_key_hook", None)
        if hook is None and self._static_auth is not None:
            if self._static_auth:
                h["Authorization"] = self._static_auth
            return h
        if hook is not None:
            hook(cfg)
        token = None
        if hasattr(cfg, "get_api_key_with_prefix"):
            # the client keeps kubeconfig and in-cluster tokens under "BearerToken" (v29+) or
            # "authorization" (older releases)
            token = cfg.get_api_key_with_prefix("BearerToken") or cfg.get_api_key_with_prefix("authorization")
        if token:
            h["Authorization"] = token
        if hook is None:
            self._static_auth = token or ""
        return h
