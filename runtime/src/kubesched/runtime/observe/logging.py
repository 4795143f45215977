"""Structured logs, text or JSON, with kube-scheduler-like ``-v`` levels.

``-v 0`` (default, as kube-scheduler) lifecycle and problems; ``-v 2`` also every scheduling
decision (as kube-scheduler logs them at V(2)); ``-v 4`` debug; ``-v 5`` also informers and writes.
Secrets are never logged: only object names. A message's control characters (from object
names, server answers) are escaped (``kubesched.sdk._text.printable``): one record is one line,
and a name cannot forge a log line or drive the terminal; a traceback keeps its lines.
"""

from __future__ import annotations

import json
import logging
import sys
import time

from kubesched.sdk._text import printable

__all__ = ["TextFormatter", "setup_logging"]


class TextFormatter(logging.Formatter):
    """kube-scheduler's klog-like text line, with the message's control characters escaped."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = printable(record.message)
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        d = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            d["err"] = self.formatException(record.exc_info)
        return json.dumps(d)


def setup_logging(verbosity: int = 2, fmt: str = "text") -> None:
    level = logging.INFO if verbosity <= 3 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        f = TextFormatter("%(levelname).1s%(asctime)s %(name)s] %(message)s", "%m%d %H:%M:%S")
        f.converter = time.gmtime
        handler.setFormatter(f)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("urllib3", "kubernetes"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if verbosity < 5:
        logging.getLogger("kubesched.kubernetes").setLevel(max(level, logging.INFO))
    # one line per scheduling decision only from -v 2, as kube-scheduler
    logging.getLogger("kubesched.scheduler").setLevel(logging.INFO if verbosity >= 2 else logging.WARNING)
