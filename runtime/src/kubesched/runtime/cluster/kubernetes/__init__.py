"""The real cluster: kube-apiserver through kubesched's own raw-JSON client.

One job per module (the way kopf splits its client):

========================  ==========================================================================
``auth``                  kubeconfig / in-cluster loading and TLS through the official ``kubernetes``
                          client; bearer-token headers (refreshed when the client can refresh them)
``api``                   ``KubeClient.request``: HTTP straight to the server's urllib3 pool
``ratelimit``             the ``clientConnection.qps``/``burst`` token bucket
``errors``                ``ApiError`` and the one map from HTTP status to exception; ``retryable``
``retry``                 the one retry loop (jittered exponential backoff) every caller uses
``discovery``             kind -> URL: the built-in table, API discovery, the cluster-scoped kinds
``informers``             list + watch into a cache, relist on ``410 Gone``
``problems``              the informers' failures in words: one log line per error and backoff step
``objects``               ``KubeObjects``: get/list/patch/delete for plugins through the Handle
``writers``               binding, events, pod conditions and annotations (a background write queue)
``cluster``               ``KubernetesCluster``: the Cluster protocol, from the parts above
========================  ==========================================================================
"""

from __future__ import annotations

from .api import KubeClient
from .cluster import KubernetesCluster
from .discovery import BUILTIN_RESOURCES, CLUSTER_SCOPED_KINDS
from .errors import (
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    ServerError,
    TooManyRequests,
    Unauthorized,
    error_for,
)
from .informers import Informer
from .objects import KubeObjects
from .ratelimit import RateLimiter
from .retry import Backoff, retry

__all__ = [
    "BUILTIN_RESOURCES",
    "CLUSTER_SCOPED_KINDS",
    "ApiError",
    "Backoff",
    "Conflict",
    "Forbidden",
    "Gone",
    "Informer",
    "Invalid",
    "KubeClient",
    "KubeObjects",
    "KubernetesCluster",
    "NotFound",
    "RateLimiter",
    "ServerError",
    "TooManyRequests",
    "Unauthorized",
    "error_for",
    "retry",
]
