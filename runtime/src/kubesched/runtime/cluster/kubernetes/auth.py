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

__all__ = ["USER_AGENT", "Auth", "load_configuration", "pool_manager"]

USER_AGENT = "kubesched/0.1.0"


def load_configuration(kubeconfig: str | None, context: str | None = None) -> Any:
    """``kubeconfig`` if given, else the in-cluster service account, else ``~/.kube/config``
    (``$KUBECONFIG``); the connection pool is sized for the binding and writer threads."""
    from kubernetes import client as kclient
    from kubernetes import config as kconfig

    cfg = kclient.Configuration()
    if kubeconfig:
        kconfig.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        kconfig.load_incluster_config(client_configuration=cfg)
    else:
        kconfig.load_kube_config(context=context, client_configuration=cfg)
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
