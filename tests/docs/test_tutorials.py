"""The tutorials in ``docs/tutorials/`` run as written.

Each tutorial is executed top to bottom in a fresh temporary directory, the way a reader would
follow it in one terminal:

* a fenced block whose info string names a file (```` ```yaml file=cluster.yaml ````) is written
  to that path (relative to the directory the commands are in when the block is reached), so a
  later block of the same name replaces the file, as an edit would;
* every ```` ```sh ```` block is run with ``bash`` (``set -euo pipefail``) with ``$REPO`` set to
  the repository root, ``$OPENB`` to the directory of the openb trace's CSV files (``$OPENB`` if
  set, else :data:`OPENB`) and this interpreter's scripts directory first on ``PATH``; ``cd`` and
  exported variables carry over to the next block, as in one shell;
* a ```` ```text ```` block right after a ``sh`` block is its expected output: every non-empty
  line of it (except ``...``) must appear, in order, in the command's output (stdout and stderr),
  each as part of one line, ignoring runs of whitespace (so table padding does not matter);
* the block must exit with code 0, or with ``exit=N`` from its info string
  (```` ```sh exit=2 ````);
* ```` ```sh cleanup ```` blocks run at the end, always, even when a step failed (uninstall what
  the tutorial installed, stop what it started);
* ``timeout=SECONDS`` bounds a block (default :data:`DEFAULT_TIMEOUT`);
* ``requires=controlplane`` marks the blocks that need a real kube-apiserver (built from Go
  modules, see ``tests/e2e/controlplane``). The tutorial runs once without them, and once more,
  whole, as an ``e2e`` test that is skipped only where the control plane cannot be had (no Go and
  no prebuilt binaries), as the e2e tests are.

Other fenced blocks (plain ``yaml``, ``python`` ...) are illustrations and are not run.
Rendered Markdown hides info strings, so the prose before each file block must name the file in
backticks (the tutorials caption them: **`cluster.yaml`**); ``docs/tutorials/README.md`` must
link every tutorial.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS_DIR = ROOT / "docs" / "tutorials"
DEFAULT_TIMEOUT = 300.0
#: the openb trace (never copied into the repository), beside the checkout on the test machines
OPENB = Path("/work/shared/traces/openb")  # where this machine keeps it (not beside a clone: CI's is in /tmp)
#: what each ``requires=`` value needs, checked (and provided) by the test before running
REQUIREMENTS = ("controlplane",)

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


# parsing ------------------------------------------------------------------------------------------


@dataclass
class Block:
    """One fenced block of a Markdown file."""

    lang: str
    options: dict[str, str]
    body: str
    line: int  # 1-based line of the opening fence
    before: str = ""  # the prose between the previous block and this one


@dataclass
class FileStep:
    path: str
    content: str
    line: int
    requires: str | None = None


@dataclass
class CommandStep:
    script: str
    line: int
    timeout: float = DEFAULT_TIMEOUT
    exit_code: int = 0
    cleanup: bool = False
    requires: str | None = None
    expected: list[str] | None = None
    expected_line: int | None = None


Step = FileStep | CommandStep


@dataclass
class Tutorial:
    path: Path
    steps: list[Step] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.stem

    def requirements(self) -> list[str]:
        found = {s.requires for s in self.steps if s.requires}
        return [r for r in REQUIREMENTS if r in found]


def parse_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    prose: list[str] = []
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        fence = m.group("fence")
        words = m.group("info").split()
        lang = words[0] if words else ""
        options: dict[str, str] = {}
        for w in words[1:]:
            key, sep, value = w.partition("=")
            options[key] = value if sep else "true"
        indent = len(m.group("indent"))
        body: list[str] = []
        j = i + 1
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        while j < len(lines) and not closing.match(lines[j]):
            # strip up to the opening fence's indentation, as CommonMark does
            body.append(re.sub(rf"^ {{0,{indent}}}", "", lines[j]) if indent else lines[j])
            j += 1
        if j == len(lines):
            raise ValueError(f"line {i + 1}: fenced block is never closed")
        blocks.append(
            Block(lang, options, "\n".join(body) + "\n" if body else "", i + 1, "\n".join(prose))
        )
        prose = []
        i = j + 1
    return blocks


def parse_tutorial(path: Path) -> Tutorial:
    tutorial = Tutorial(path)
    previous: Block | None = None
    for block in parse_blocks(path.read_text(encoding="utf-8")):
        where = f"{path.name}:{block.line}"
        requires = block.options.get("requires")
        if requires is not None and requires not in REQUIREMENTS:
            raise ValueError(
                f"{where}: unknown requires={requires} (known: {', '.join(REQUIREMENTS)})"
            )
        if "file" in block.options:
            name = block.options["file"]
            if not name or name == "true" or Path(name).is_absolute() or ".." in Path(name).parts:
                raise ValueError(
                    f"{where}: file= needs a relative path inside the working directory"
                )
            tutorial.steps.append(FileStep(name, block.body, block.line, requires))
        elif block.lang == "sh":
            unknown = set(block.options) - {"timeout", "exit", "cleanup", "requires"}
            if unknown:
                raise ValueError(f"{where}: unknown sh block option(s) {sorted(unknown)}")
            tutorial.steps.append(
                CommandStep(
                    block.body,
                    block.line,
                    timeout=float(block.options.get("timeout", DEFAULT_TIMEOUT)),
                    exit_code=int(block.options.get("exit", "0")),
                    cleanup="cleanup" in block.options,
                    requires=requires,
                )
            )
        elif block.lang == "text":
            step = tutorial.steps[-1] if tutorial.steps else None
            if (
                previous is None
                or previous.lang != "sh"
                or "file" in previous.options
                or not isinstance(step, CommandStep)
                or step.expected is not None
            ):
                raise ValueError(
                    f"{where}: a text block (expected output) must come right after a sh block"
                )
            step.expected = [
                ln
                for ln in block.body.splitlines()
                if ln.strip() and ln.strip() not in ("...", "…")
            ]
            step.expected_line = block.line
        previous = block
    if not any(isinstance(s, CommandStep) for s in tutorial.steps):
        raise ValueError(f"{path.name}: no sh block to run")
    return tutorial


# checking output ------------------------------------------------------------------------------------


def _norm(line: str) -> str:
    return " ".join(line.split())


def missing_expected(expected: list[str], output: str) -> str | None:
    """The first expected line not found (in order) in ``output``, or None when all are."""
    actual = [_norm(ln) for ln in output.splitlines()]
    pos = 0
    for want in expected:
        w = _norm(want)
        for k in range(pos, len(actual)):
            if w in actual[k]:
                pos = k + 1
                break
        else:
            return want
    return None


def test_expected_output_matching_is_ordered_and_ignores_padding() -> None:
    out = "│ default/web   │ node-a │ Scheduled │\n│ default/db │ node-b │ Scheduled │\n"
    assert missing_expected(["│ default/web │ node-a │", "default/db │ node-b"], out) is None
    assert missing_expected(["default/db", "default/web"], out) == "default/web"
    assert missing_expected(["node-c"], out) == "node-c"
    assert missing_expected(["Scheduled", "Scheduled", "Scheduled"], out) == "Scheduled"


def test_parser_reads_files_commands_and_expected_output(tmp_path: Path) -> None:
    md = tmp_path / "t.md"
    md.write_text(
        "# T\n\n```yaml file=a/b.yaml\nx: 1\n```\n\n```sh timeout=5\necho hi\n```\n\n"
        "```text\nhi\n\n...\n```\n\n```python\nprint('not run')\n```\n\n"
        "```sh cleanup\necho bye\n```\n",
        encoding="utf-8",
    )
    t = parse_tutorial(md)
    assert [type(s).__name__ for s in t.steps] == ["FileStep", "CommandStep", "CommandStep"]
    assert t.steps[0] == FileStep("a/b.yaml", "x: 1\n", 3)
    cmd = t.steps[1]
    assert isinstance(cmd, CommandStep) and cmd.expected == ["hi"] and cmd.timeout == 5
    assert isinstance(t.steps[2], CommandStep) and t.steps[2].cleanup
    md.write_text("```text\norphan\n```\n```sh\ntrue\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must come right after a sh block"):
        parse_tutorial(md)


# running --------------------------------------------------------------------------------------------


def tutorial_paths() -> list[Path]:
    return sorted(p for p in TUTORIALS_DIR.glob("*.md") if p.name != "README.md")


@pytest.mark.parametrize("path", tutorial_paths(), ids=lambda p: p.stem)
def test_file_blocks_are_named_in_the_text(path: Path) -> None:
    """Rendered Markdown hides the info string: the prose before a file block must name the
    file (in backticks), so that a reader knows where to put it."""
    unnamed = [
        f"line {b.line}: {b.options['file']}"
        for b in parse_blocks(path.read_text(encoding="utf-8"))
        if "file" in b.options and f"`{b.options['file']}`" not in b.before
    ]
    assert not unnamed, (
        f"{path.name}: name these files in the text just before their block: {unnamed}"
    )


def block_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "COLUMNS",
            "LINES",
            "FORCE_COLOR",
            "KUBECONFIG",
            "KUBESCHED_LOAD_PLUGINS",
            "KUBESCHED_TRACE",
            "KUBESCHED_CONTROLPLANE_DIR",
        )
        and not k.startswith("PYTEST_")
    }
    scripts = sysconfig.get_path("scripts")
    env["PATH"] = os.pathsep.join([scripts, env.get("PATH", "")])
    env["REPO"] = str(ROOT)
    env["OPENB"] = os.environ.get("OPENB") or str(OPENB)
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHON"] = sys.executable
    return env


@dataclass
class Outcome:
    step: CommandStep
    code: int | None  # None: timed out
    output: str


class Session:
    """One shell session across blocks: cwd and exported variables carry over."""

    def __init__(self, workdir: Path, state: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.state = state
        self.env = env
        state.mkdir(parents=True, exist_ok=True)
        (state / "cwd").write_text(str(workdir))

    @property
    def cwd(self) -> Path:
        return Path((self.state / "cwd").read_text().strip())

    def write_file(self, step: FileStep) -> None:
        target = self.cwd / step.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(step.content, encoding="utf-8")

    def run(self, step: CommandStep) -> Outcome:
        env_file = self.state / "env"
        cwd_file = self.state / "cwd"
        q = shlex.quote
        script = (
            "set -euo pipefail\n"
            f"if [ -f {q(str(env_file))} ]; then . {q(str(env_file))}; fi\n"
            f'cd "$(cat {q(str(cwd_file))})"\n'
            f"{step.script}\n"
            f"export -p > {q(str(env_file))}.new && mv {q(str(env_file))}.new {q(str(env_file))}\n"
            f"pwd > {q(str(cwd_file))}\n"
        )
        proc = subprocess.Popen(
            ["bash", "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
            cwd=self.workdir,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=step.timeout)
        except subprocess.TimeoutExpired:
            # the block's own process group (it was started in a new session): its children too
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    out, _ = proc.communicate(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
            else:
                out = b""
            return Outcome(step, None, (out or b"").decode(errors="replace"))
        return Outcome(step, proc.returncode, out.decode(errors="replace"))


def check(tutorial: Tutorial, outcome: Outcome) -> str | None:
    """A failure message for this block's outcome, or None."""
    step = outcome.step
    path = tutorial.path.relative_to(ROOT) if tutorial.path.is_relative_to(ROOT) else tutorial.path
    where = f"{path}:{step.line}"
    shown = f"$ {step.script.strip()}\n--- output ---\n{outcome.output}--- end ---"
    if outcome.code is None:
        return f"{where}: timed out after {step.timeout:g}s\n{shown}"
    if outcome.code != step.exit_code:
        return f"{where}: exit code {outcome.code}, expected {step.exit_code}\n{shown}"
    if step.expected:
        missing = missing_expected(step.expected, outcome.output)
        if missing is not None:
            return (
                f"{where}: expected output (line {step.expected_line}) not found, in order: "
                f"{missing.strip()!r}\n{shown}"
            )
    return None


def provide(requirement: str) -> None:
    """Make the requirement available before the tutorial runs, or skip."""
    if requirement == "controlplane":
        here = ROOT / "tests" / "e2e" / "controlplane"
        if str(here) not in sys.path:
            sys.path.insert(0, str(here))
        from controlplane import AssetsUnavailable, ensure_assets

        try:
            ensure_assets()  # builds once (minutes) where Go is present; a failed build is an error
        except AssetsUnavailable as e:
            pytest.skip(f"control plane unavailable: {e}")


def run_tutorial(tutorial: Tutorial, tmp_path: Path, with_requirements: set[str]) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    session = Session(workdir, tmp_path / "shell-state", block_env(tmp_path))
    steps = [s for s in tutorial.steps if s.requires is None or s.requires in with_requirements]
    failure: str | None = None
    for step in steps:
        if isinstance(step, CommandStep) and step.cleanup:
            continue
        if isinstance(step, FileStep):
            session.write_file(step)
            continue
        failure = check(tutorial, session.run(step))
        if failure:
            break
    cleanup_failures = []
    for step in steps:
        if isinstance(step, CommandStep) and step.cleanup:
            problem = check(tutorial, session.run(step))
            if problem:
                cleanup_failures.append(problem)
    problems = ([failure] if failure else []) + [f"cleanup: {p}" for p in cleanup_failures]
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


def _params() -> list[object]:
    params: list[object] = []
    for path in tutorial_paths():
        tutorial = parse_tutorial(path)
        params.append(pytest.param(tutorial, (), id=tutorial.name))
        for req in tutorial.requirements():
            params.append(
                pytest.param(
                    tutorial,
                    (req,),
                    id=f"{tutorial.name}-{req}",
                    marks=[pytest.mark.e2e, pytest.mark.slow],
                )
            )
    return params


@pytest.mark.parametrize(("tutorial", "requirements"), _params())
def test_tutorial(tutorial: Tutorial, requirements: tuple[str, ...], tmp_path: Path) -> None:
    for req in requirements:
        provide(req)
    run_tutorial(tutorial, tmp_path, set(requirements))


def test_index_lists_every_tutorial() -> None:
    index = (TUTORIALS_DIR / "README.md").read_text(encoding="utf-8")
    linked = re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", index)
    names = {p.name for p in tutorial_paths()}
    assert names, "no tutorials found"
    assert names <= set(linked), (
        f"docs/tutorials/README.md does not link {sorted(names - set(linked))}"
    )
    broken = [link for link in linked if not (TUTORIALS_DIR / link).is_file()]
    assert not broken, f"docs/tutorials/README.md links missing files: {broken}"
