"""The binding cycle runs concurrently with the next scheduling cycle (kube-scheduler runs
bindingCycle in a goroutine)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kubesched.sdk import hookimpl

T0 = "2024-01-01T00:00:00Z"


def _drive(sched, timeout: float = 10.0) -> None:
    """Run the scheduler loop in this thread until idle (bindings included)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sched.step():
            continue
        if sched.idle():
            return
        time.sleep(0.001)
    raise AssertionError("scheduler did not become idle")


def test_next_scheduling_cycle_completes_before_first_bind(ks):
    log: list[str] = []
    lock = threading.Lock()
    release = threading.Event()
    first_blocked = threading.Event()

    def record(entry: str) -> None:
        with lock:
            log.append(entry)

    class SlowPreBind:
        @hookimpl
        def pre_bind(self, pod, node_name):
            record(f"prebind-start {pod.name}")
            if pod.name == "first":
                first_blocked.set()
                # a scheduler running the binding inline would block here until the timeout
                released = release.wait(timeout=5)
                record(f"prebind-released {pod.name} {released}")

    class Rec:
        @hookimpl
        def reserve(self, pod, node_name):
            record(f"reserve {pod.name} {threading.current_thread().name}")
            if pod.name == "second":
                release.set()

        @hookimpl
        def unreserve(self, pod):
            record(f"unreserve {pod.name}")

        @hookimpl
        def post_bind(self, pod, node_name):
            record(f"postbind {pod.name}")

    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="binding") as pool:
        r = ks.build(
            {"SlowPreBind": SlowPreBind, "Rec": Rec},
            {"reserve": ["Rec"], "preBind": ["SlowPreBind"], "postBind": ["Rec"]},
            ks.nodes(2)
            + [ks.pod("first", priority=10, created=T0), ks.pod("second", priority=0, created=T0)],
            executor=pool,
        )
        r.cluster.start(r.scheduler.on_cluster_event)
        for m in r.cluster.manifests:
            r.cluster.store.create(m)
        start = time.monotonic()
        _drive(r.scheduler)
        elapsed = time.monotonic() - start

    assert "prebind-released first True" in log, log
    i_second_reserved = next(i for i, e in enumerate(log) if e.startswith("reserve second"))
    i_first_bound = log.index("postbind first")
    i_first_released = log.index("prebind-released first True")
    assert i_second_reserved < i_first_released < i_first_bound, log
    # the scheduling cycles ran on the loop thread, the bindings on the pool
    assert not any(e.startswith("reserve") and "binding" in e for e in log)
    assert elapsed < 4
    assert r.result("first").status == "Scheduled"
    assert r.result("second").status == "Scheduled"
    assert sorted(r.bound()) == ["first", "second"]
    assert not [e for e in log if e.startswith("unreserve")]


def test_shutdown_waits_for_inflight_bindings(ks):
    release = threading.Event()
    started = threading.Event()

    class Slow:
        @hookimpl
        def pre_bind(self, pod):
            started.set()
            release.wait(timeout=5)

    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="binding")
    r = ks.build(
        {"Slow": Slow},
        {"preBind": ["Slow"]},
        ks.nodes(1) + [ks.pod("p", created=T0)],
        executor=pool,
    )
    r.cluster.start(r.scheduler.on_cluster_event)
    for m in r.cluster.manifests:
        r.cluster.store.create(m)
    while not started.is_set():
        r.scheduler.step()
        time.sleep(0.001)
    threading.Timer(0.05, release.set).start()
    r.scheduler.shutdown(wait=True)
    assert r.cluster.binds == [("default/p", "n1")]


def test_worker_pool_runs_work_on_its_threads_and_after_shutdown_in_the_caller() -> None:
    from kubesched.runtime.scheduler import WorkerPool

    pool = WorkerPool(2, "tpool")
    seen: list[str] = []
    done = threading.Event()

    def work(tag: str) -> None:
        seen.append(f"{tag}:{threading.current_thread().name}")
        done.set()

    pool.submit(work, "before")
    assert done.wait(10)
    pool.shutdown(wait=True)
    pool.submit(work, tag="after")  # a binding cycle submitted by the last drain is not lost
    assert seen[0].startswith("before:tpool-")
    assert seen[1] == f"after:{threading.current_thread().name}"
