"""Many experiments (workload x config x seed) in parallel: ``kubesched compare`` and
``kubesched sweep`` (docs/compare-and-sweep.md).

:func:`run_experiments` runs each :class:`Experiment` through
:func:`kubesched.runtime.sim.run_experiment` and returns their Measurements in the
experiments' order:

* ``jobs=1``: one after another, in this process;
* otherwise a local pool of ``jobs`` processes (default: the CPUs this process may use), one
  forked process per experiment, so no state of one experiment leaks into the next;
* ``address="tcp://host:8786"``: on an existing Dask distributed cluster (its workers need the
  same packages, kubesched and the plugins, and see the files at the same paths).

An experiment that fails (a config that does not validate, a plugin a worker lacks, a worker
that died) is one error row (:func:`error_row`: ``label, workload, config, seed, error``) and
the others go on. Ctrl-C cancels what has not finished and returns what did
(``Results.cancelled``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.sdk._text import cut, quote

__all__ = [
    "Experiment",
    "Results",
    "SweepError",
    "config_labels",
    "error_row",
    "experiment_grid",
    "parse_seeds",
    "result_row",
    "run_experiments",
]

#: what a row names an experiment by (every row has them, an error row too)
ID_COLUMNS = ("label", "workload", "config", "seed")


class SweepError(Exception):
    """The sweep cannot start (the Dask scheduler cannot be reached, bad arguments)."""


@dataclass(frozen=True)
class Experiment:
    """One run: a workload file under a KubeSchedulerConfiguration (None: the default profile)
    with a seed (None: the scheduler's default tie-breaking), named ``label`` in the results."""

    workload: str
    config: str | None = None
    seed: int | None = None
    label: str | None = None


class Results(list[dict[str, Any]]):
    """The finished experiments' Measurements (or error rows) in the experiments' order;
    ``cancelled``: the experiments Ctrl-C stopped or kept from starting."""

    def __init__(self, items: Iterable[dict[str, Any]] = (), cancelled: Sequence[Experiment] = ()) -> None:
        super().__init__(items)
        self.cancelled = list(cancelled)

    @property
    def interrupted(self) -> bool:
        return bool(self.cancelled) or any(m.get("interrupted") for m in self)


# -- the grid ---------------------------------------------------------------------------------


def parse_seeds(seeds: Sequence[int] = (), ranges: Sequence[str] = ()) -> list[int]:
    """``--seed N`` (repeated) then ``--seeds A-B`` / ``A,B,C`` (repeated), duplicates dropped."""
    out = list(seeds)
    for spec in ranges:
        for part in spec.split(","):
            part = part.strip()
            lo, sep, hi = part.partition("-")
            try:
                a = int(lo)
                b = int(hi) if sep else a
            except ValueError:
                raise SweepError(f"--seeds {cut(spec)}: expected a seed (3), a range (1-5) or a list (1,3,5)") from None
            if a > b:
                raise SweepError(f"--seeds {cut(spec)}: the range's start {a} is greater than its end {b}")
            out.extend(range(a, b + 1))
    return list(dict.fromkeys(out))


def config_labels(configs: Sequence[str | None]) -> list[str]:
    """One label per config: its file's stem (None: ``default``). Configs whose stems collide
    are told apart by their directories (``a/fit``, ``b/fit``), and a label still repeated (the
    same file twice) gets ``#2``, ``#3``."""
    stems = ["default" if c is None else Path(c).stem for c in configs]
    labels = list(stems)
    for stem in set(stems):
        same = [i for i, s in enumerate(stems) if s == stem]
        if len(same) < 2:
            continue
        parts = {i: Path(os.path.abspath(c)).with_suffix("").parts if (c := configs[i]) is not None else ("default",) for i in same}
        for depth in range(2, max(len(p) for p in parts.values()) + 1):
            tails = {i: "/".join(p[-depth:]) for i, p in parts.items()}
            if len(set(tails.values())) == len(same):
                for i in same:
                    labels[i] = tails[i] if configs[i] is not None else "default"
                break
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            labels[i] = f"{label}#{seen[label]}"
    return labels


def experiment_grid(workloads: Sequence[str], configs: Sequence[str | None], seeds: Sequence[int]) -> list[Experiment]:
    """The cross product workload x config x seed (in that nesting order), labelled by
    :func:`config_labels`; no seeds: one run per pair with the default tie-breaking."""
    labels = config_labels(configs)
    seed_list: Sequence[int | None] = list(seeds) or [None]
    return [Experiment(w, c, s, label) for w in workloads for c, label in zip(configs, labels) for s in seed_list]


# -- rows -------------------------------------------------------------------------------------


def error_row(exp: Experiment, message: str, worker: str | None = None) -> dict[str, Any]:
    """The result of an experiment that did not run to its end."""
    row: dict[str, Any] = {"label": exp.label, "workload": exp.workload, "config": exp.config, "seed": exp.seed, "error": message}
    if worker is not None:
        row["worker"] = worker
    return row


def result_row(m: Mapping[str, Any]) -> dict[str, Any]:
    """The table row of one result: ``summary_row`` of a Measurements, or the error row's
    names and ``error``."""
    if "error" in m:
        return {k: m.get(k) for k in (*ID_COLUMNS, "error")}
    from .measure import summary_row

    return summary_row(m)


# -- running one ------------------------------------------------------------------------------


def _message(e: BaseException) -> str:
    """An experiment's error, one line: the input errors' own message (they name file and
    field), a missing file's name, else the exception's type and message."""
    from ..cluster.simulated import ManifestError
    from ..config import ConfigError
    from ..registry import UnknownPluginError

    if isinstance(e, ConfigError | ManifestError | UnknownPluginError):
        text = str(e)
    elif isinstance(e, OSError) and e.filename is not None and e.strerror:
        text = f"{e.filename}: {e.strerror}"
    else:
        text = f"{type(e).__name__}: {e}"
    return " ".join(text.splitlines())


def worker_id() -> str:
    """Where an experiment ran: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_one(exp: Experiment, worker: str | None = None) -> dict[str, Any]:
    """Run one experiment here; its Measurements with ``worker`` (where it ran), or its error
    row. Never raises an Exception (KeyboardInterrupt passes)."""
    worker = worker or worker_id()
    try:
        from . import run_experiment

        m = dict(run_experiment(workload=exp.workload, config=exp.config, seed=exp.seed, label=exp.label))
    except Exception as e:
        return error_row(exp, _message(e), worker)
    m["worker"] = worker
    return m


def _run_in_child(exp: Experiment, conn: Any) -> None:
    """A pool process: run, send the result, exit."""
    res = run_one(exp)
    try:
        conn.send(res)
    except Exception as e:  # a result that does not pickle
        conn.send(error_row(exp, f"the result could not be sent back: {_message(e)}", res.get("worker")))
    conn.close()


def _run_on_dask_worker(exp: Experiment, cwd: str) -> dict[str, Any]:
    """A Dask task: the experiment with its relative paths resolved against the client's
    working directory; the result names the files as the user gave them."""
    from distributed import get_worker

    try:
        where = get_worker().address
    except ValueError:
        where = None
    given = exp
    local = Experiment(
        os.path.join(cwd, exp.workload),
        None if exp.config is None else os.path.join(cwd, exp.config),
        exp.seed,
        exp.label,
    )
    res = run_one(local, f"{where} ({worker_id()})" if where else None)
    res["workload"], res["config"] = given.workload, given.config
    if "error" in res:  # name the files as given
        for path, as_given in ((local.workload, given.workload), (local.config, given.config)):
            if path and as_given and path != as_given:
                res["error"] = res["error"].replace(path, as_given)
    return res


# -- running many -----------------------------------------------------------------------------


Progress = Callable[[Experiment, dict[str, Any]], None]


def run_experiments(
    experiments: Sequence[Experiment],
    *,
    jobs: int | None = None,
    address: str | None = None,
    progress: Progress | None = None,
) -> Results:
    """Run every experiment; their Measurements (or error rows) in the experiments' order.
    ``progress(experiment, result)`` is called as each one finishes. Ctrl-C (KeyboardInterrupt)
    stops: what finished is returned, the rest is in ``Results.cancelled``."""
    exps = list(experiments)
    done: dict[int, dict[str, Any]] = {}

    def finished(i: int, res: dict[str, Any]) -> None:
        done[i] = res
        if progress is not None:
            progress(exps[i], res)

    if address is not None:
        _run_dask(exps, address, finished)
    else:
        n = default_jobs() if jobs is None else jobs
        if n < 1:
            raise SweepError(f"-j {n}: expected at least 1 job")
        if n == 1 or len(exps) <= 1:
            _run_here(exps, finished)
        else:
            _run_pool(exps, min(n, len(exps)), finished)
    return Results((done[i] for i in sorted(done)), [e for i, e in enumerate(exps) if i not in done])


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1


def _run_here(exps: Sequence[Experiment], finished: Callable[[int, dict[str, Any]], None]) -> None:
    try:
        for i, exp in enumerate(exps):
            res = run_one(exp)
            finished(i, res)
            if res.get("interrupted"):  # Ctrl-C stopped this run: it measured what it could
                return
    except KeyboardInterrupt:
        return


def _run_pool(exps: Sequence[Experiment], jobs: int, finished: Callable[[int, dict[str, Any]], None]) -> None:
    """One forked process per experiment, ``jobs`` at a time. The children ignore SIGINT: a
    Ctrl-C reaches this process, which stops them."""
    from multiprocessing.connection import wait

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx: Any = multiprocessing.get_context(method)
    todo = deque(enumerate(exps))
    running: dict[Any, tuple[int, Any]] = {}
    main_thread = threading.current_thread() is threading.main_thread()
    try:
        while todo or running:
            while todo and len(running) < jobs:
                i, exp = todo.popleft()
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_run_in_child, args=(exp, writer), daemon=True, name=f"kubesched-experiment-{i}")
                old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
                try:
                    proc.start()
                finally:
                    if old is not None:
                        signal.signal(signal.SIGINT, old)
                writer.close()
                running[reader] = (i, proc)
            for ready in wait(list(running)):
                i, proc = running.pop(ready)
                conn: Any = ready
                try:
                    res = conn.recv()
                except EOFError:
                    res = None
                conn.close()
                proc.join()
                if res is None:
                    res = error_row(exps[i], f"the experiment's process exited with code {proc.exitcode} before it finished")
                finished(i, res)
    except KeyboardInterrupt:
        pass
    finally:
        for _, proc in running.values():
            proc.terminate()
        for left, (_, proc) in running.items():
            proc.join()
            left.close()


def _run_dask(exps: Sequence[Experiment], address: str, finished: Callable[[int, dict[str, Any]], None]) -> None:
    """Every experiment a task on the Dask cluster at ``address``; a task that raised (its
    worker could not unpickle it: kubesched missing there) or whose worker died is an error row."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise SweepError(f"--address {quote(address)}: the Dask client is not installed (pip install 'kubesched[sweep]')") from None
    try:
        client = Client(address, set_as_default=False)  # connect timeout: distributed.comm.timeouts.connect
    except (OSError, ValueError, TypeError) as e:
        raise SweepError(f"--address {quote(address)}: cannot connect to the Dask scheduler: {_message(e)}") from None
    try:
        cwd = os.getcwd()
        token = uuid.uuid4().hex[:8]
        futures = [client.submit(_run_on_dask_worker, exp, cwd, key=f"kubesched-experiment-{i}-{token}", pure=False) for i, exp in enumerate(exps)]
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures, loop=client.loop):
                i = index[fut.key]
                try:
                    res = fut.result()
                except Exception as e:
                    res = error_row(exps[i], f"on the Dask cluster: {_message(e)}")
                finished(i, res)
        except KeyboardInterrupt:
            client.cancel([f for f in futures if not f.done()])
    finally:
        client.close()
