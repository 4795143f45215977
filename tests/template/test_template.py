"""The cookiecutter template in ``template/``.

Every combination of extension points is baked (pytest-cookies); each baked distribution is
installed editable into this environment, and its own tests, ``ruff check``,
``ruff format --check`` and ``mypy`` (strict, its own config) must pass, and
``kubesched plugins --json`` must list it. The combinations get distinct plugin names so that all
of them are installed with one pip call; they are uninstalled when the module is done. The
checks of different projects run in parallel (one worker per CPU; mypy runs serially with one
cache directory, kept in pytest's cache between runs).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import itertools
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from cookiecutter.exceptions import FailedHookException

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template"
POINTS = ("pre_filter_and_filter", "score", "reserve_and_permit", "post_bind")
WORDS = {
    "pre_filter_and_filter": "Filter",
    "score": "Score",
    "reserve_and_permit": "Reserve",
    "post_bind": "Bind",
}
#: config extension points each answer adds, in the order `kubesched plugins` lists them
EXPECTED_POINTS = {
    "pre_filter_and_filter": ["preFilter", "filter"],
    "score": ["score"],
    "reserve_and_permit": ["reserve", "permit"],
    "post_bind": ["postBind"],
}
#: every baked combination's plugin name starts with this (its distribution with DIST_PREFIX)
NAME_PREFIX = "Template Check"
DIST_PREFIX = "kubesched-template-check-"
TIMEOUT = 600

Combo = dict[str, bool]
ALL_COMBOS: list[Combo] = [
    dict(zip(POINTS, bits, strict=True)) for bits in itertools.product((False, True), repeat=4)
]
COMBOS = [c for c in ALL_COMBOS if any(c.values())]


def combo_id(combo: Combo) -> str:
    return "-".join(WORDS[k].lower() for k, v in combo.items() if v) or "none"


def combo_context(combo: Combo) -> dict[str, Any]:
    words = " ".join(WORDS[k] for k, v in combo.items() if v)
    return {
        "plugin_name": f"{NAME_PREFIX} {words}",
        "description": f"Template check: {words}",
        "author_name": "Template Check",
        "author_email": "template-check@example.com",
        **combo,
    }


def camel(plugin_name: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in plugin_name.split())


def expected_points(combo: Combo) -> list[str]:
    return [p for k, v in combo.items() if v for p in EXPECTED_POINTS[k]]


# tools ------------------------------------------------------------------------------------------


def run(
    cmd: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def ruff_cmd() -> list[str]:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is needed to check the baked projects: pip install ruff")
    return [exe]


def mypy_cmd() -> list[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is needed to check the baked projects: pip install mypy")
    return [sys.executable, "-m", "mypy"]


def kubesched_cmd() -> list[str]:
    script = Path(sysconfig.get_path("scripts")) / (
        "kubesched.exe" if os.name == "nt" else "kubesched"
    )
    found = str(script) if script.exists() else shutil.which("kubesched")
    if found is None:
        pytest.fail("the kubesched command is not installed (pip install -e runtime)")
    return [found]


def pip_install_cmd() -> list[str]:
    """``pip install --no-deps``, without build isolation when the installed setuptools can build
    an editable wheel by itself (>= 70.1, or older with ``wheel``): much faster, and offline."""
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "-q"]
    try:
        st = tuple(int(x) for x in re.findall(r"\d+", metadata.version("setuptools"))[:2])
    except metadata.PackageNotFoundError:
        return cmd
    if st >= (70, 1) or (st >= (64, 0) and importlib.util.find_spec("wheel") is not None):
        cmd.append("--no-build-isolation")
    return cmd


def pip_uninstall(dists: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
    if not dists:
        return None
    return run(
        [sys.executable, "-m", "pip", "uninstall", "-y", "--disable-pip-version-check", *dists]
    )


def installed_check_dists() -> list[str]:
    """Distributions left by this module (e.g. by an interrupted earlier run)."""
    return sorted(
        {
            d.metadata["Name"]
            for d in metadata.distributions()
            if (d.metadata["Name"] or "").startswith(DIST_PREFIX)
        }
    )


def mypy_path() -> str:
    """Source roots of kubesched.sdk/kubesched.testing when they are installed editable (mypy
    cannot follow setuptools' editable import hooks); empty when they are regular installs."""
    site_dirs = {
        Path(p).resolve() for p in (sysconfig.get_path("purelib"), sysconfig.get_path("platlib"))
    }
    roots: list[str] = []
    for mod in ("kubesched.sdk", "kubesched.testing"):
        file = importlib.import_module(mod).__file__
        assert file is not None
        root = Path(file).resolve().parents[2]
        if root not in site_dirs and str(root) not in roots:
            roots.append(str(root))
    return os.pathsep.join(roots)


def readme_config(readme: Path) -> str:
    """The KubeSchedulerConfiguration snippet of a baked README."""
    blocks = re.findall(r"```yaml\n(.*?)```", readme.read_text(), flags=re.S)
    configs = [b for b in blocks if "kind: KubeSchedulerConfiguration" in b]
    assert len(configs) == 1, f"{readme}: expected one KubeSchedulerConfiguration block"
    return str(configs[0])


def clean_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTEST_ADDOPTS", "KUBESCHED_LOAD_PLUGINS", "MYPYPATH")
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


# the baked, installed, checked projects ----------------------------------------------------------


@dataclass
class Project:
    combo: Combo
    path: Path
    name: str  # config name / class
    distribution: str
    results: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class Bakery:
    projects: dict[str, Project]
    plugins: dict[str, dict[str, Any]]  # `kubesched plugins --json`, by name
    timings: dict[str, float]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(
    project: Project, check: str, cmd: Sequence[str], cwd: Path, env: dict[str, str]
) -> None:
    t0 = time.perf_counter()
    project.results[check] = run(cmd, cwd=cwd, env=env)
    project.seconds[check] = time.perf_counter() - t0


def selected_combos(request: pytest.FixtureRequest) -> list[Combo]:
    """The combinations whose test was collected (all of them unless ``-k`` narrowed it)."""
    wanted = {
        item.callspec.id
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_baked_project" and hasattr(item, "callspec")
    }
    return [c for c in COMBOS if combo_id(c) in wanted]


@pytest.fixture(scope="module")
def bakery(
    cookies_session: Any, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Bakery]:
    timings: dict[str, float] = {}
    t_start = time.perf_counter()
    cpu_start = _children_cpu()
    ruff, mypy, kubesched = ruff_cmd(), mypy_cmd(), kubesched_cmd()
    pip_uninstall(installed_check_dists())

    t0 = time.perf_counter()
    projects: dict[str, Project] = {}
    for combo in selected_combos(request):
        ctx = combo_context(combo)
        result = cookies_session.bake(extra_context=ctx, template=str(TEMPLATE))
        assert result.exit_code == 0, f"{combo_id(combo)}: {result.exception!r}"
        path = Path(result.project_path)
        projects[combo_id(combo)] = Project(combo, path, camel(ctx["plugin_name"]), path.name)
    timings["bake"] = time.perf_counter() - t0

    dists = [p.distribution for p in projects.values()]
    try:
        cache = getattr(request.config, "cache", None)
        cache_dir = (
            cache.mkdir("template-mypy") if cache is not None else tmp_path_factory.mktemp("mypy")
        )
        env = clean_env()
        mypy_env = dict(env, MYPYPATH=mypy_path())

        def mypy_all() -> None:  # serially: one cache directory
            for p in projects.values():
                _timed(
                    p,
                    "mypy",
                    [*mypy, "--follow-imports=silent", "--cache-dir", str(cache_dir)],
                    p.path,
                    mypy_env,
                )

        t0 = time.perf_counter()
        listing: Future[subprocess.CompletedProcess[str]]
        tasks: list[Future[None]] = []
        # mypy and ruff need no install: they overlap with pip; then the tests and the listing
        with ThreadPoolExecutor(max_workers=(os.cpu_count() or 1) + 1) as pool:
            tasks.append(pool.submit(mypy_all))
            for p in projects.values():
                tasks.append(
                    pool.submit(
                        _timed, p, "ruff check", [*ruff, "check", "--no-cache", "."], p.path, env
                    )
                )
                tasks.append(
                    pool.submit(
                        _timed,
                        p,
                        "ruff format",
                        [*ruff, "format", "--check", "--no-cache", "."],
                        p.path,
                        env,
                    )
                )

            cmd = pip_install_cmd()
            for p in projects.values():
                cmd += ["-e", str(p.path)]
            installed = run(cmd)
            timings["pip install"] = time.perf_counter() - t0
            assert installed.returncode == 0, installed.stdout + installed.stderr

            listing = pool.submit(run, [*kubesched, "plugins", "--json"], None, env)
            for p in projects.values():
                config = (
                    p.path.parent / "readme-config.yaml"
                )  # outside the project: ruff/tox ignore it
                config.write_text(readme_config(p.path / "README.md"))
                validate = [*kubesched, "config", "validate", str(config)]
                tasks.append(pool.submit(_timed, p, "config validate", validate, p.path, env))
            for p in projects.values():
                pytest_cmd = [
                    sys.executable,
                    "-m",
                    "pytest",
                    str(p.path / "tests"),
                    "-q",
                    "-p",
                    "no:cacheprovider",
                ]
                # plugins of this environment that the baked tests do not use: a faster start
                pytest_cmd += ["-p", "no:hypothesispytest", "-p", "no:cookies"]
                tasks.append(pool.submit(_timed, p, "pytest", pytest_cmd, p.path, env))
        timings["install + checks"] = time.perf_counter() - t0
        for task in tasks:
            task.result()  # a check that could not run (e.g. timed out) fails here
        out = listing.result()
        assert out.returncode == 0, out.stderr
        plugins = {s["name"]: s for s in json.loads(out.stdout)}

        for check in ("pytest", "mypy"):
            timings[f"{check} (sum)"] = sum(p.seconds.get(check, 0.0) for p in projects.values())
        yield Bakery(projects, plugins, timings)
    finally:
        t0 = time.perf_counter()
        removed = pip_uninstall(dists)
        timings["pip uninstall"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - t_start
        timings["cpu of the subprocesses"] = _children_cpu() - cpu_start
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        if reporter is not None and capture is not None:
            summary = ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
            with capture.global_and_fixture_disabled():
                reporter.write_line(f"\ntemplate: {len(projects)} combinations baked: {summary}")
        if removed is not None and removed.returncode != 0:
            pytest.fail(f"pip uninstall failed: {removed.stderr}")


def _output(p: Project, check: str) -> str:
    r = p.results[check]
    return f"{p.path}: {' '.join(r.args)}\n{r.stdout}\n{r.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize("combo", COMBOS, ids=combo_id)
def test_baked_project(bakery: Bakery, combo: Combo) -> None:
    p = bakery.projects[combo_id(combo)]
    for check in ("pytest", "ruff check", "ruff format", "mypy", "config validate"):
        assert check in p.results, f"{check} did not run"
        assert p.results[check].returncode == 0, _output(p, check)
    assert " passed" in p.results["pytest"].stdout
    spec = bakery.plugins.get(p.name)
    assert spec is not None, f"kubesched plugins --json does not list {p.name}"
    assert "error" not in spec, spec["error"]
    assert spec["distribution"] == p.distribution
    assert spec["extension_points"] == expected_points(combo)
    assert spec["entry_point"] == f"{p.distribution.replace('-', '_')}:{p.name}"


# answers, names and files -----------------------------------------------------------------------


def test_no_extension_point_is_rejected(cookies: Any, capfd: pytest.CaptureFixture[str]) -> None:
    combo = dict.fromkeys(POINTS, False)
    result = cookies.bake(
        extra_context={"plugin_name": "Nothing At All", **combo}, template=str(TEMPLATE)
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, FailedHookException)
    assert "choose at least one extension point" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("plugin_name", "message"),
    [
        ("kubesched-gpu-pack", "leave out the 'kubesched' prefix"),
        ("3D Packing", "starting with a letter"),
        ("Node Name", "NodeName is the name of a default plugin"),
        ("Taint Toleration", "TaintToleration is the name of a default plugin"),
        ("!!!", "starting with a letter"),
    ],
)
def test_unusable_plugin_names_are_rejected(
    cookies: Any, capfd: pytest.CaptureFixture[str], plugin_name: str, message: str
) -> None:
    result = cookies.bake(extra_context={"plugin_name": plugin_name}, template=str(TEMPLATE))
    assert result.exit_code != 0
    assert isinstance(result.exception, FailedHookException)
    assert message in capfd.readouterr().err


def test_hook_knows_the_default_plugins() -> None:
    """The pre-gen hook's list of names a plugin must not take is the runtime's entry points."""
    hook = (TEMPLATE / "hooks" / "pre_gen_project.py").read_text()
    match = re.search(r"^BUILTIN = (\{.*?\})$", hook, flags=re.S | re.M)
    assert match is not None
    runtime = tomllib.loads((ROOT / "runtime" / "pyproject.toml").read_text())
    assert ast.literal_eval(match.group(1)) == set(
        runtime["project"]["entry-points"]["kubesched.plugins"]
    )


def test_tool_caches_are_not_baked(cookies: Any, tmp_path: Path) -> None:
    """A developer's checkout may hold tool caches inside the template; the post-gen hook drops them."""
    template = tmp_path / "template"
    shutil.copytree(TEMPLATE, template)
    project = next(template.glob("{{*"))
    for cache in ("__pycache__", ".ruff_cache/0.1", "src/.mypy_cache"):
        (project / cache).mkdir(parents=True)
        (project / cache / "x.bin").write_bytes(b"\x00\x01")
    result = cookies.bake(template=str(template))
    assert result.exit_code == 0, result.exception
    root = Path(result.project_path)
    assert [
        p.name for p in root.rglob("*") if p.name in ("__pycache__", ".ruff_cache", ".mypy_cache")
    ] == []
    assert (root / "pyproject.toml").is_file()


def test_default_answers(cookies: Any) -> None:
    result = cookies.bake(template=str(TEMPLATE))
    assert result.exit_code == 0, result.exception
    root = Path(result.project_path)
    assert root.name == "kubesched-node-name-score"
    assert (root / "src" / "kubesched_node_name_score" / "__init__.py").is_file()
    assert (root / "src" / "kubesched_node_name_score" / "py.typed").is_file()

    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["project"]["name"] == "kubesched-node-name-score"
    assert project["project"]["dependencies"] == ["kubesched-sdk>=0.1"]
    assert project["project"]["optional-dependencies"]["test"] == ["kubesched>=0.1", "pytest>=8"]
    assert project["project"]["entry-points"]["kubesched.plugins"] == {
        "NodeNameScore": "kubesched_node_name_score:NodeNameScore"
    }
    assert project["project"]["authors"] == [{"name": "Your Name", "email": "you@example.com"}]
    assert project["tool"]["mypy"]["strict"] is True
    assert "ruff" in project["tool"]

    module = (root / "src" / "kubesched_node_name_score" / "__init__.py").read_text()
    assert "class NodeNameScore:" in module and "class NodeNameScoreArgs:" in module
    assert "def score(" in module and "def normalize_score(" in module
    assert (
        "def filter(" not in module
        and "def reserve(" not in module
        and "def post_bind(" not in module
    )
    for path in root.rglob("*.py"):  # public APIs only: kubesched.sdk and kubesched.testing
        assert "kubesched.runtime" not in path.read_text(), path

    readme = (root / "README.md").read_text()
    assert "- name: NodeNameScore" in readme
    assert "kind: KubeSchedulerConfiguration" in readme

    containerfile = (root / "Containerfile").read_text().splitlines()
    assert "ARG KUBESCHED_IMAGE=kubesched:0.1.0" in containerfile
    assert "FROM ${KUBESCHED_IMAGE}" in containerfile
    assert any(line.startswith("COPY --chown=") for line in containerfile)
    assert any("pip install --no-cache-dir ." in line for line in containerfile)
    assert containerfile[-1] == "USER 65532:65532"

    tox = (root / "tox.ini").read_text()
    assert "env_list = py, lint, type" in tox


def test_awkward_answers_still_give_clean_code(cookies: Any) -> None:
    """A long name and a description with quotes, a backslash and more than a line: the
    generated code is still valid, ruff-clean and formatted (no install needed for that)."""
    result = cookies.bake(
        extra_context={
            "plugin_name": "gpu topology-aware bin_packing with fallback",
            "description": 'Packs "GPU" pods \\ tightly; '
            + "then spreads them out again when it has to. " * 4,
            "author_name": 'Ann "Quotes" O\'Neil',
            **dict.fromkeys(POINTS, True),
        },
        template=str(TEMPLATE),
    )
    assert result.exit_code == 0, result.exception
    root = Path(result.project_path)
    assert root.name == "kubesched-gpu-topology-aware-bin-packing-with-fallback"
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["project"]["authors"][0]["name"] == 'Ann "Quotes" O\'Neil'
    assert project["project"]["entry-points"]["kubesched.plugins"] == {
        "GpuTopologyAwareBinPackingWithFallback": (
            "kubesched_gpu_topology_aware_bin_packing_with_fallback:GpuTopologyAwareBinPackingWithFallback"
        )
    }
    for path in [*root.rglob("*.py")]:
        compile(path.read_text(), str(path), "exec")
    ruff = ruff_cmd()
    for args in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        r = run([*ruff, *args], cwd=root, env=clean_env())
        assert r.returncode == 0, r.stdout + r.stderr
