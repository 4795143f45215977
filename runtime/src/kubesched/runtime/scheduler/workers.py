"""Where binding cycles run: inline on the simulated cluster, on a worker pool on a real one."""

from __future__ import annotations

import functools
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

__all__ = ["InlineExecutor", "WorkerPool"]

log = logging.getLogger("kubesched")


class InlineExecutor(Executor):
    """Runs submitted work at once, in the caller's thread (the simulated cluster)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        fn(*args, **kwargs)
        return None


class WorkerPool(Executor):
    """``size`` threads taking work from a SimpleQueue (C; no Condition per item as in
    ThreadPoolExecutor): the binding cycles. The threads start with the first submit (only the
    loop thread submits); an exception is logged (the binding cycle handles its own failures);
    work submitted after shutdown runs in the caller's thread."""

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name
        self._q: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self._closed:  # after shutdown (the scheduler's last drain): run it here, lose nothing
            fn(*args, **kwargs)
            return None
        if not self._threads:
            self._threads = [threading.Thread(target=self._work, name=f"{self.name}-{i}", daemon=True) for i in range(self.size)]
            for t in self._threads:
                t.start()
        self._q.put((functools.partial(fn, **kwargs) if kwargs else fn, args))
        return None

    def _work(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, args = item
            try:
                fn(*args)
            except Exception:
                log.exception("%s worker: unexpected error", self.name)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._closed = True
        for _ in self._threads:
            self._q.put(None)
        if wait:
            for t in self._threads:
                t.join()
