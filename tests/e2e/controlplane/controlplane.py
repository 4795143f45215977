"""A real Kubernetes control plane (etcd + kube-apiserver) for kubesched's e2e tests.

The binaries are built from the Go module next to this file (see ``build`` and README.md) into a
flat assets directory, like controller-runtime envtest's ``KUBEBUILDER_ASSETS``. This module only
needs the Python standard library and the ``openssl`` command (for the certificates).

Library use::

    from controlplane import ControlPlane, ensure_assets

    cp = ControlPlane(ensure_assets(), workdir).start()
    ...  # cp.kubeconfig, cp.url, cp.etcd_url, cp.pids
    sched = cp.start_kube_scheduler("scheduler-config.yaml")
    cp.restart_apiserver()
    cp.stop()

CLI use (what the ``up`` and ``down`` scripts call)::

    python controlplane.py up [--workdir DIR] [--assets DIR]   # last line: kubeconfig path
    python controlplane.py down [--workdir DIR]
    python controlplane.py status [--workdir DIR]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "AssetsUnavailable",
    "BuildError",
    "ControlPlane",
    "ControlPlaneError",
    "ensure_assets",
    "pinned_kubernetes_version",
]

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "build"
DEFAULT_STATE_DIR = HERE / ".state"
STATE_FILE = "state.json"

#: The binaries an assets directory must hold.
REQUIRED_BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kubectl")
#: What is enough to run a control plane from a foreign (envtest) assets dir.
CONTROL_PLANE_BINARIES = ("etcd", "kube-apiserver")

SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
SERVICE_CLUSTER_FIRST_IP = "10.0.0.1"
CONTEXT_NAME = "kubesched-e2e"


class ControlPlaneError(RuntimeError):
    """The control plane could not be started, restarted or stopped."""


class AssetsUnavailable(ControlPlaneError):
    """No binaries are available and they cannot be built (``go`` is not on PATH)."""


class BuildError(ControlPlaneError):
    """``go`` is present but building the binaries failed."""


# --------------------------------------------------------------------------------------------
# assets


def pinned_kubernetes_version() -> str:
    """The k8s.io/kubernetes version pinned in go.mod (read as text: works without Go)."""
    text = (HERE / "go.mod").read_text()
    m = re.search(r"^\s*k8s\.io/kubernetes\s+(v\d+\.\d+\.\d+\S*)", text, re.MULTILINE)
    if not m:
        raise ControlPlaneError(f"k8s.io/kubernetes is not required in {HERE / 'go.mod'}")
    return m.group(1)


def _default_assets_dir() -> Path:
    return Path.home() / ".cache" / "kubesched" / "assets" / pinned_kubernetes_version()


def _holds(directory: Path, names: Iterable[str]) -> bool:
    return all(os.access(directory / n, os.X_OK) and (directory / n).is_file() for n in names)


def _stamp_version_matches(directory: Path) -> bool:
    stamp = directory / ".kubesched-assets-stamp"
    try:
        first = stamp.read_text().splitlines()[0]
    except (OSError, IndexError):
        return False
    return first == f"k8s.io/kubernetes {pinned_kubernetes_version()}"


def ensure_assets(*, quiet: bool = False) -> Path:
    """Return a directory holding etcd, kube-apiserver, kube-scheduler and kubectl.

    In order: ``$KUBESCHED_ASSETS`` if it holds the binaries (unless its stamp file says they
    were built for another version and Go is present: then they are rebuilt); ``$KUBEBUILDER_ASSETS`` if it holds etcd, kube-apiserver and kube-scheduler;
    otherwise the ``build`` script is run (a no-op when already built) and its output directory is
    returned. Without ``go`` on PATH, an already built default (or ``$KUBESCHED_ASSETS``)
    directory is still used; if there is none, :class:`AssetsUnavailable` is raised. A failed
    build raises :class:`BuildError`.
    """
    env_assets = os.environ.get("KUBESCHED_ASSETS")
    if env_assets and _holds(Path(env_assets), REQUIRED_BINARIES):
        p = Path(env_assets)
        hand_filled = not (p / ".kubesched-assets-stamp").exists()
        if hand_filled or _stamp_version_matches(p) or shutil.which("go") is None:
            return p.resolve()
        # else: built by us for another version; the build script rebuilds it in place.
    kb_assets = os.environ.get("KUBEBUILDER_ASSETS")
    if kb_assets and _holds(Path(kb_assets), ("etcd", "kube-apiserver", "kube-scheduler")):
        return Path(kb_assets).resolve()

    if shutil.which("go") is None:
        candidate = Path(env_assets) if env_assets else _default_assets_dir()
        if _holds(candidate, REQUIRED_BINARIES):
            return candidate.resolve()
        raise AssetsUnavailable(
            "no control plane binaries: 'go' is not on PATH and neither KUBESCHED_ASSETS nor "
            f"KUBEBUILDER_ASSETS nor {candidate} holds {', '.join(REQUIRED_BINARIES)} "
            f"(install Go and run {BUILD_SCRIPT})"
        )

    proc = subprocess.run(
        [str(BUILD_SCRIPT)],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if quiet else None,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BuildError(f"{BUILD_SCRIPT} failed with exit code {proc.returncode}")
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise BuildError(f"{BUILD_SCRIPT} printed no assets directory")
    assets = Path(lines[-1])
    if not _holds(assets, REQUIRED_BINARIES):
        raise BuildError(f"{BUILD_SCRIPT} reported {assets}, which lacks the binaries")
    return assets.resolve()


# --------------------------------------------------------------------------------------------
# small utilities

_handed_out_ports: set[int] = set()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free now on ``host`` (never the same one twice in this process)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if port not in _handed_out_ports:
            _handed_out_ports.add(port)
            return port
    raise ControlPlaneError("could not find a free port")


def _proc_start_time(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks since boot), to tell a PID from a reused one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _pid_alive(pid: int, start_time: str | None = None) -> bool:
    st = _proc_start_time(pid)
    if st is None:
        return False
    if start_time is not None and st != start_time:
        return False  # the PID was reused by another process
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _set_pdeathsig() -> None:  # pragma: no cover - runs in the child before exec
    """Ask Linux to SIGKILL the child when the thread that started it dies. SIGKILL, not
    SIGTERM: a kube-apiserver told to shut down gracefully after etcd went away hangs for
    minutes retrying etcd."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def _run_openssl(*args: str, cwd: Path) -> None:
    openssl = shutil.which("openssl") or "/usr/bin/openssl"
    proc = subprocess.run([openssl, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ControlPlaneError(
            f"openssl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}"
        )


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


# --------------------------------------------------------------------------------------------
# certificates


class _PKI:
    """Files made with the openssl CLI, all in one directory."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def path(self, name: str) -> Path:
        return self.dir / name

    def _ec_key(self, name: str) -> None:
        _run_openssl(
            "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", f"{name}.key", cwd=self.dir,
        )  # fmt: skip

    def ca(self, name: str, cn: str) -> None:
        self._ec_key(name)
        (self.dir / f"{name}.cnf").write_text(
            "[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=" + cn + "\n"
            "[v3_ca]\nbasicConstraints=critical,CA:TRUE\n"
            "keyUsage=critical,keyCertSign,cRLSign,digitalSignature\n"
            "subjectKeyIdentifier=hash\n"
        )
        _run_openssl(
            "req", "-x509", "-new", "-key", f"{name}.key", "-sha256", "-days", "3650",
            "-config", f"{name}.cnf", "-extensions", "v3_ca", "-out", f"{name}.crt",
            cwd=self.dir,
        )  # fmt: skip

    def leaf(
        self,
        name: str,
        ca: str,
        subject: str,
        *,
        usage: str,
        ip_sans: Sequence[str] = (),
        dns_sans: Sequence[str] = (),
    ) -> None:
        """A certificate for ``name`` signed by ``ca``; ``usage`` is serverAuth or clientAuth."""
        self._ec_key(name)
        ext = [
            "basicConstraints=critical,CA:FALSE",
            "keyUsage=critical,digitalSignature,keyEncipherment",
            f"extendedKeyUsage={usage}",
            "authorityKeyIdentifier=keyid",
        ]
        sans = [f"IP:{ip}" for ip in ip_sans] + [f"DNS:{d}" for d in dns_sans]
        if sans:
            ext.append("subjectAltName=" + ",".join(sans))
        (self.dir / f"{name}.ext").write_text("\n".join(ext) + "\n")
        _run_openssl(
            "req", "-new", "-key", f"{name}.key", "-subj", subject, "-out", f"{name}.csr",
            cwd=self.dir,
        )  # fmt: skip
        _run_openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
            "-set_serial", "0x" + secrets.token_hex(16), "-days", "3650", "-sha256",
            "-extfile", f"{name}.ext", "-out", f"{name}.crt",
            cwd=self.dir,
        )  # fmt: skip

    def service_account_keys(self) -> None:
        _run_openssl(
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
            "-out", "sa.key", cwd=self.dir,
        )  # fmt: skip
        _run_openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=self.dir)

    def generate(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca("ca", "kubesched-e2e-ca")
        self.leaf(
            "apiserver",
            "ca",
            "/CN=kube-apiserver",
            usage="serverAuth",
            ip_sans=("127.0.0.1", SERVICE_CLUSTER_FIRST_IP),
            dns_sans=(
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ),
        )
        self.leaf("admin", "ca", "/O=system:masters/CN=admin", usage="clientAuth")
        self.ca("front-proxy-ca", "kubesched-e2e-front-proxy-ca")
        self.leaf(
            "front-proxy-client", "front-proxy-ca", "/CN=front-proxy-client", usage="clientAuth"
        )
        self.service_account_keys()
        for p in self.dir.glob("*.key"):
            p.chmod(0o600)


# --------------------------------------------------------------------------------------------
# the control plane


class ControlPlane:
    """etcd + kube-apiserver on 127.0.0.1, with generated certificates and an admin kubeconfig.

    ``assets_dir`` holds the binaries (see :func:`ensure_assets`); ``workdir`` receives the
    certificates (``certs/``), etcd's data (``etcd/``), logs (``logs/``), the admin
    ``kubeconfig`` and ``state.json``. Only the processes this object starts are ever stopped.

    ``die_with_parent`` (default True) makes the children receive SIGKILL if the Python thread
    that started them dies, so a killed test run does not leak servers; the CLI turns it off.
    """

    def __init__(
        self,
        assets_dir: str | os.PathLike[str],
        workdir: str | os.PathLike[str],
        *,
        extra_apiserver_args: Sequence[str] = (),
        start_timeout: float = 120.0,
        die_with_parent: bool = True,
    ) -> None:
        self.assets_dir = Path(assets_dir).resolve()
        self.workdir = Path(workdir).resolve()
        self.extra_apiserver_args = list(extra_apiserver_args)
        self.start_timeout = start_timeout
        self.die_with_parent = die_with_parent

        self.certs_dir = self.workdir / "certs"
        self.etcd_data_dir = self.workdir / "etcd"
        self.logs_dir = self.workdir / "logs"
        self.kubeconfig: Path = self.workdir / "kubeconfig"

        self.etcd_port: int | None = None
        self.etcd_peer_port: int | None = None
        self.apiserver_port: int | None = None

        # name -> Popen (for processes started by this object in this Python process)
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        # name -> {"pid": int, "start_time": str} (also for a plane loaded from state.json)
        self._recorded: dict[str, dict[str, Any]] = {}
        self._scheduler_count = 0

    # ---- public properties ------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The apiserver's URL, ``https://127.0.0.1:<port>``."""
        if self.apiserver_port is None:
            raise ControlPlaneError("control plane not started")
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def etcd_url(self) -> str:
        """etcd's client URL, ``http://127.0.0.1:<port>``."""
        if self.etcd_port is None:
            raise ControlPlaneError("control plane not started")
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def pids(self) -> dict[str, int]:
        """PIDs of the live processes this control plane started, by name
        (``etcd``, ``kube-apiserver``, ``kube-scheduler-1``, ...)."""
        return {
            name: rec["pid"]
            for name, rec in self._recorded.items()
            if _pid_alive(rec["pid"], rec.get("start_time"))
        }

    @property
    def ca_file(self) -> Path:
        return self.certs_dir / "ca.crt"

    @property
    def client_cert_file(self) -> Path:
        return self.certs_dir / "admin.crt"

    @property
    def client_key_file(self) -> Path:
        return self.certs_dir / "admin.key"

    def log_path(self, name: str) -> Path:
        return self.logs_dir / f"{name}.log"

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<ControlPlane workdir={self.workdir} pids={self.pids}>"

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ControlPlane:
        """Generate certificates, start etcd and kube-apiserver, wait for ``/readyz``, write the
        admin kubeconfig. Returns ``self``. On failure, whatever was started is stopped."""
        if self._recorded:
            raise ControlPlaneError("already started")
        for b in CONTROL_PLANE_BINARIES:
            if not _holds(self.assets_dir, (b,)):
                raise ControlPlaneError(f"{self.assets_dir} has no executable {b}")
        self._clean_workdir()
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        try:
            _PKI(self.certs_dir).generate()
            self._start_etcd()
            self._start_apiserver(new_port=True)
            self._write_kubeconfig()
            self._save_state()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM (then, after ``timeout``, SIGKILL) exactly the processes this object started:
        schedulers first, then the apiserver, then etcd."""
        order = sorted(
            self._recorded,
            key=lambda n: (
                0 if n.startswith("kube-scheduler") else 1 if n == "kube-apiserver" else 2
            ),
        )
        for name in order:
            self._terminate(name, timeout)
        self._recorded.clear()
        self._procs.clear()
        with contextlib.suppress(FileNotFoundError):
            (self.workdir / STATE_FILE).unlink()

    def restart_apiserver(self) -> None:
        """Kill the apiserver with SIGKILL (a crash), then start a new one on the same port with
        the same etcd, certificates and flags, and wait until it is ready."""
        if "kube-apiserver" not in self._recorded:
            raise ControlPlaneError("the apiserver is not running")
        self._kill("kube-apiserver", signal.SIGKILL)
        self._wait_gone("kube-apiserver", 10.0)
        del self._recorded["kube-apiserver"]
        self._procs.pop("kube-apiserver", None)
        self._start_apiserver(new_port=False)
        self._save_state()

    def kill_apiserver(self) -> None:
        """SIGKILL the apiserver and leave it down (``restart_apiserver`` brings it back)."""
        self._kill("kube-apiserver", signal.SIGKILL)
        self._wait_gone("kube-apiserver", 10.0)

    def start_kube_scheduler(
        self,
        config_path: str | os.PathLike[str],
        *,
        extra_args: Sequence[str] = (),
        wait_healthy: bool = True,
        timeout: float = 60.0,
    ) -> subprocess.Popen[bytes]:
        """Run the built kube-scheduler against this control plane and return its Popen.

        ``config_path`` is a KubeSchedulerConfiguration (YAML or JSON). kube-scheduler ignores
        ``--kubeconfig`` when ``--config`` is given, so a copy of the config is written with
        ``clientConnection.kubeconfig`` set to the admin kubeconfig (unless it sets one).
        ``--leader-elect=false`` is passed unless the config sets ``leaderElection.leaderElect``.
        Authentication/authorization delegate to the admin kubeconfig; ``--secure-port`` is a
        free port. The process is stopped by :meth:`stop` (or terminate it yourself). With
        ``wait_healthy``, waits for its ``/healthz`` to answer ok.
        """
        if "kube-apiserver" not in self._recorded:
            raise ControlPlaneError("control plane not started")
        binary = self.assets_dir / "kube-scheduler"
        if not _holds(self.assets_dir, ("kube-scheduler",)):
            raise ControlPlaneError(f"{self.assets_dir} has no executable kube-scheduler")
        self._scheduler_count += 1
        name = f"kube-scheduler-{self._scheduler_count}"
        sched_dir = self.workdir / name
        sched_dir.mkdir(parents=True, exist_ok=True)
        config, says_leader_elect = _scheduler_config_with_kubeconfig(
            Path(config_path), self.kubeconfig
        )
        config_file = sched_dir / "config.yaml"
        config_file.write_text(config)
        port = free_port()
        args = [
            str(binary),
            f"--config={config_file}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={sched_dir / 'certs'}",
        ]
        if not says_leader_elect:
            args.append("--leader-elect=false")
        args.extend(extra_args)
        proc = self._spawn(name, args)
        if wait_healthy:
            try:
                self._wait_https_ok(
                    name, f"https://127.0.0.1:{port}/healthz", timeout, verify=False
                )
            except BaseException:
                self._terminate(name, 10.0)
                raise
        self._save_state()
        return proc

    # ---- internals: processes ----------------------------------------------------------------

    def _clean_workdir(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for sub in ("certs", "etcd", "logs"):
            shutil.rmtree(self.workdir / sub, ignore_errors=True)
        for p in self.workdir.glob("kube-scheduler-*"):
            shutil.rmtree(p, ignore_errors=True)
        for f in ("kubeconfig", STATE_FILE):
            with contextlib.suppress(FileNotFoundError):
                (self.workdir / f).unlink()

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        with open(self.log_path(name), "ab") as log:  # the child keeps its own descriptor
            log.write(f"\n==> {time.strftime('%H:%M:%S')} {' '.join(args)}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                start_new_session=True,  # a Ctrl-C in the terminal does not hit them directly
                preexec_fn=_set_pdeathsig if self.die_with_parent else None,
            )
        self._procs[name] = proc
        self._recorded[name] = {"pid": proc.pid, "start_time": _proc_start_time(proc.pid)}
        return proc

    def _alive(self, name: str) -> bool:
        proc = self._procs.get(name)
        if proc is not None:
            return proc.poll() is None
        rec = self._recorded.get(name)
        return rec is not None and _pid_alive(rec["pid"], rec.get("start_time"))

    def _kill(self, name: str, sig: int) -> None:
        rec = self._recorded.get(name)
        if rec is None or not self._alive(name):
            return
        proc = self._procs.get(name)
        with contextlib.suppress(ProcessLookupError):
            if proc is not None:
                proc.send_signal(sig)
            elif _pid_alive(rec["pid"], rec.get("start_time")):
                os.kill(rec["pid"], sig)

    def _wait_gone(self, name: str, timeout: float) -> bool:
        proc = self._procs.get(name)
        if proc is not None:
            try:
                proc.wait(timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._alive(name):
                return True
            time.sleep(0.1)
        return not self._alive(name)

    def _terminate(self, name: str, timeout: float) -> None:
        if name not in self._recorded:
            return
        self._kill(name, signal.SIGTERM)
        if not self._wait_gone(name, timeout):
            self._kill(name, signal.SIGKILL)
            self._wait_gone(name, 10.0)
        self._recorded.pop(name, None)
        self._procs.pop(name, None)

    def _fail(self, name: str, what: str) -> ControlPlaneError:
        tail = ""
        with contextlib.suppress(OSError):
            tail = "\n".join(self.log_path(name).read_text(errors="replace").splitlines()[-30:])
        return ControlPlaneError(f"{name}: {what} (log: {self.log_path(name)})\n{tail}")

    def _start_etcd(self, attempts: int = 3) -> None:
        binary = self.assets_dir / "etcd"
        for attempt in range(1, attempts + 1):
            self.etcd_port, self.etcd_peer_port = free_port(), free_port()
            peer = f"http://127.0.0.1:{self.etcd_peer_port}"
            args = [
                str(binary),
                "--name=kubesched",
                f"--data-dir={self.etcd_data_dir}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=kubesched={peer}",
                "--log-level=warn",
                "--unsafe-no-fsync=true",
            ]
            self._spawn("etcd", args)
            try:
                self._wait_etcd(self.start_timeout)
                return
            except ControlPlaneError:
                exited = not self._alive("etcd")
                self._terminate("etcd", 10.0)
                if not exited or attempt == attempts:
                    raise
                shutil.rmtree(self.etcd_data_dir, ignore_errors=True)  # port taken: retry

    def _wait_etcd(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._alive("etcd"):
                raise self._fail("etcd", "exited during startup")
            try:
                with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as r:
                    if json.loads(r.read()).get("health") == "true":
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise self._fail("etcd", f"not healthy after {timeout:.0f}s")

    def _apiserver_args(self) -> list[str]:
        c = self.certs_dir
        return [
            str(self.assets_dir / "kube-apiserver"),
            # envtest's flag set ...
            "--advertise-address=127.0.0.1",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.apiserver_port}",
            f"--etcd-servers={self.etcd_url}",
            f"--cert-dir={c}",
            f"--tls-cert-file={c / 'apiserver.crt'}",
            f"--tls-private-key-file={c / 'apiserver.key'}",
            f"--client-ca-file={c / 'ca.crt'}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--allow-privileged=true",
            "--authorization-mode=RBAC",
            f"--service-account-issuer=https://127.0.0.1:{self.apiserver_port}/",
            f"--service-account-key-file={c / 'sa.pub'}",
            f"--service-account-signing-key-file={c / 'sa.key'}",
            # ... plus what a control plane without kube-controller-manager needs ...
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            "--endpoint-reconciler-type=none",
            # ... and a front proxy, so delegated authentication (kube-scheduler) is content.
            f"--requestheader-client-ca-file={c / 'front-proxy-ca.crt'}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={c / 'front-proxy-client.crt'}",
            f"--proxy-client-key-file={c / 'front-proxy-client.key'}",
            *self.extra_apiserver_args,
        ]

    def _start_apiserver(self, *, new_port: bool, attempts: int = 3) -> None:
        for attempt in range(1, attempts + 1):
            if new_port or self.apiserver_port is None:
                self.apiserver_port = free_port()
            self._spawn("kube-apiserver", self._apiserver_args())
            try:
                self._wait_https_ok("kube-apiserver", f"{self.url}/readyz", self.start_timeout)
                return
            except ControlPlaneError:
                exited = not self._alive("kube-apiserver")
                self._terminate("kube-apiserver", 10.0)
                if not exited or attempt == attempts:
                    raise
                if not new_port:
                    time.sleep(1.0)  # same port requested: give the kernel a moment

    def _ssl_context(self, verify: bool = True) -> ssl.SSLContext:
        if verify:
            ctx = ssl.create_default_context(cafile=str(self.ca_file))
        else:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        ctx.load_cert_chain(str(self.client_cert_file), str(self.client_key_file))
        return ctx

    def _wait_https_ok(self, name: str, url: str, timeout: float, verify: bool = True) -> None:
        ctx = self._ssl_context(verify)
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if not self._alive(name):
                raise self._fail(name, "exited during startup")
            try:
                with urllib.request.urlopen(url, timeout=5, context=ctx) as r:
                    body = r.read().decode(errors="replace").strip()
                    if r.status == 200 and body == "ok":
                        return
                    last = f"{r.status} {body[:200]}"
            except urllib.error.HTTPError as e:
                last = f"{e.code} {e.read().decode(errors='replace')[:300]}"
            except (OSError, ssl.SSLError) as e:
                last = str(e)
            time.sleep(0.2)
        raise self._fail(name, f"{url} not ok after {timeout:.0f}s; last answer: {last}")

    # ---- internals: files --------------------------------------------------------------------

    def _write_kubeconfig(self) -> None:
        c = self.certs_dir
        text = f"""apiVersion: v1
kind: Config
clusters:
- name: {CONTEXT_NAME}
  cluster:
    server: {self.url}
    certificate-authority-data: {_b64(c / "ca.crt")}
users:
- name: admin
  user:
    client-certificate-data: {_b64(c / "admin.crt")}
    client-key-data: {_b64(c / "admin.key")}
contexts:
- name: {CONTEXT_NAME}
  context:
    cluster: {CONTEXT_NAME}
    user: admin
    namespace: default
current-context: {CONTEXT_NAME}
preferences: {{}}
"""
        self.kubeconfig.write_text(text)
        self.kubeconfig.chmod(0o600)

    def _save_state(self) -> None:
        state = {
            "assets_dir": str(self.assets_dir),
            "workdir": str(self.workdir),
            "kubeconfig": str(self.kubeconfig),
            "url": self.url,
            "etcd_url": self.etcd_url,
            "etcd_port": self.etcd_port,
            "etcd_peer_port": self.etcd_peer_port,
            "apiserver_port": self.apiserver_port,
            "extra_apiserver_args": self.extra_apiserver_args,
            "processes": self._recorded,
        }
        tmp = self.workdir / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        tmp.replace(self.workdir / STATE_FILE)

    @classmethod
    def load(cls, workdir: str | os.PathLike[str]) -> ControlPlane | None:
        """The control plane recorded in ``workdir/state.json`` (e.g. by ``up``), or None.
        Its processes can be stopped with :meth:`stop` (by their recorded PIDs, after checking
        each PID still belongs to the same process)."""
        path = Path(workdir).resolve() / STATE_FILE
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        cp = cls(
            state["assets_dir"],
            state["workdir"],
            extra_apiserver_args=state.get("extra_apiserver_args", ()),
            die_with_parent=False,
        )
        cp.etcd_port = state["etcd_port"]
        cp.etcd_peer_port = state.get("etcd_peer_port")
        cp.apiserver_port = state["apiserver_port"]
        cp._recorded = {k: dict(v) for k, v in state.get("processes", {}).items()}
        cp._scheduler_count = sum(1 for k in cp._recorded if k.startswith("kube-scheduler"))
        return cp

    def is_ready(self) -> bool:
        """True if the apiserver answers ``/readyz`` with ok right now."""
        try:
            with urllib.request.urlopen(
                f"{self.url}/readyz", timeout=5, context=self._ssl_context()
            ) as r:
                return r.status == 200
        except (OSError, ssl.SSLError, ControlPlaneError):
            return False


def _scheduler_config_with_kubeconfig(config_path: Path, kubeconfig: Path) -> tuple[str, bool]:
    """Return (config text with clientConnection.kubeconfig set, whether it sets leaderElect)."""
    text = config_path.read_text()
    data: Any = None
    try:
        data = json.loads(text)
    except ValueError:
        yaml: Any = None
        with contextlib.suppress(ImportError):
            import yaml  # type: ignore[import-untyped,no-redef]  # optional (kubernetes needs it)
        if yaml is not None:
            data = yaml.safe_load(text)
    if isinstance(data, dict):
        cc = data.setdefault("clientConnection", {}) or {}
        data["clientConnection"] = cc
        cc.setdefault("kubeconfig", str(kubeconfig))
        says = "leaderElect" in (data.get("leaderElection") or {})
        return json.dumps(data, indent=2) + "\n", says
    # No YAML parser: append the key textually when the document does not have it already.
    if re.search(r"^clientConnection\s*:", text, re.MULTILINE):
        if not re.search(r"^\s+kubeconfig\s*:", text, re.MULTILINE):
            raise ControlPlaneError(
                f"{config_path}: has clientConnection without kubeconfig; install PyYAML or "
                "set clientConnection.kubeconfig"
            )
        new = text
    else:
        new = (
            text.rstrip("\n")
            + f"\nclientConnection:\n  kubeconfig: {json.dumps(str(kubeconfig))}\n"
        )
    says = re.search(r"^\s+leaderElect\s*:", text, re.MULTILINE) is not None
    return new, says


# --------------------------------------------------------------------------------------------
# CLI


def _state_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("KUBESCHED_CONTROLPLANE_DIR") or DEFAULT_STATE_DIR)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="controlplane.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="build if needed, start etcd + kube-apiserver in the background")
    up.add_argument("--workdir", help="state dir (default: $KUBESCHED_CONTROLPLANE_DIR or .state/)")
    up.add_argument("--assets", help="assets dir (default: ensure_assets())")
    down = sub.add_parser("down", help="stop the processes 'up' started")
    down.add_argument("--workdir")
    status = sub.add_parser("status", help="print the recorded state and whether it is ready")
    status.add_argument("--workdir")
    sub.add_parser("assets", help="build if needed and print the assets dir")
    args = parser.parse_args(argv)

    if args.command == "assets":
        print(ensure_assets())
        return 0

    workdir = _state_dir(args.workdir)
    if args.command == "up":
        existing = ControlPlane.load(workdir)
        if existing is not None:
            if existing.pids.keys() >= {"etcd", "kube-apiserver"} and existing.is_ready():
                print(f"already up: {existing.url} (pids {existing.pids})", file=sys.stderr)
                print(existing.kubeconfig)
                return 0
            print("stale state found; stopping what is left of it", file=sys.stderr)
            existing.stop()
        assets = Path(args.assets) if args.assets else ensure_assets()
        cp = ControlPlane(assets, workdir, die_with_parent=False).start()
        print(f"up: {cp.url} etcd {cp.etcd_url} pids {cp.pids}", file=sys.stderr)
        print(f"export KUBECONFIG={cp.kubeconfig}", file=sys.stderr)
        print(cp.kubeconfig)
        return 0
    if args.command == "down":
        recorded = ControlPlane.load(workdir)
        if recorded is None:
            print(f"nothing recorded in {workdir}", file=sys.stderr)
            return 0
        pids = recorded.pids
        recorded.stop()
        print(f"stopped {pids}", file=sys.stderr)
        return 0
    if args.command == "status":
        loaded = ControlPlane.load(workdir)
        if loaded is None:
            print(f"down (nothing recorded in {workdir})")
            return 1
        ready = loaded.is_ready()
        print(
            json.dumps(
                {
                    "url": loaded.url,
                    "etcd_url": loaded.etcd_url,
                    "kubeconfig": str(loaded.kubeconfig),
                    "pids": loaded.pids,
                    "ready": ready,
                },
                indent=2,
            )
        )
        return 0 if ready else 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
