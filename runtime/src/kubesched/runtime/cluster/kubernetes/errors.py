"""API errors: the one map from an HTTP status to an exception, and what is worth retrying.

Each status the client acts on has its own ``ApiError`` subclass, so callers write
``except NotFound`` instead of comparing ``e.status`` with numbers. ``NotFound`` and ``Conflict``
are also the SDK's ``ObjectNotFound`` and ``ObjectConflict``: plugins (through the Handle) and the
scheduler (from ``bind``) catch them without knowing that a real API server is behind.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from kubesched.sdk import ObjectConflict, ObjectNotFound

__all__ = [
    "ApiError",
    "BadResponse",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "KubeconfigError",
    "NotFound",
    "ServerError",
    "TooManyRequests",
    "Unauthorized",
    "error_for",
    "retryable",
]


class ApiError(Exception):
    """A response with status >= 400 (or an ``ERROR`` watch event); ``body`` is the decoded
    ``Status`` object when the server sent one."""

    def __init__(self, status: int, body: Any, method: str = "", path: str = "") -> None:
        self.status = status
        self.body = body
        msg = body.get("message") if isinstance(body, Mapping) else str(body)[:300]
        super().__init__(f"{method} {path}: {status}: {msg}")
        self.reason = body.get("reason", "") if isinstance(body, Mapping) else ""


class Unauthorized(ApiError):
    """401: the credentials were refused."""


class Forbidden(ApiError):
    """403: a missing RBAC rule."""


class NotFound(ApiError, ObjectNotFound):
    """404: the object (or the resource) does not exist."""


class Conflict(ApiError, ObjectConflict):
    """409: the object changed since it was read, exists already, or the pod is already bound."""


class Gone(ApiError):
    """410: the resourceVersion a watch started from was compacted; list again."""


class Invalid(ApiError):
    """422: the server rejected the object (e.g. a status patch of a pod that changed)."""


class TooManyRequests(ApiError):
    """429: API priority and fairness turned the request away; retry later."""


class ServerError(ApiError):
    """5xx: the API server (or what is behind it) failed; retry later."""


_BY_STATUS: dict[int, type[ApiError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}


class BadResponse(Exception):
    """A success status whose body is not JSON: the server is not a Kubernetes API server (a
    web server or a proxy's login page answering on its address)."""

    def __init__(self, status: int, method: str = "", path: str = "") -> None:
        self.status = status
        self.method = method
        self.path = path
        super().__init__(f"{method} {path}: {status}: the body is not JSON")


class KubeconfigError(Exception):
    """The connection cannot be set up: no kubeconfig, one that cannot be read or parsed, a
    context it does not have. A setup error: the commands report it in one line (exit 2)."""


def error_for(status: int, body: Any, method: str = "", path: str = "") -> ApiError:
    """The exception for an error response (or an ``ERROR`` watch event's ``Status``)."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)
    return cls(status, body, method, path)


def retryable(e: BaseException) -> bool:
    """True for failures that another try may not meet: 429, 5xx, timeouts and connection
    errors. Every other API error (400, 401, 403, 404, 409, 422...) is an answer."""
    if isinstance(e, ApiError):
        return isinstance(e, (TooManyRequests, ServerError))
    import urllib3

    return isinstance(e, (urllib3.exceptions.HTTPError, socket.timeout, ConnectionError, TimeoutError, OSError))
