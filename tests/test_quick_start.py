"""The README's Quick start is what CI runs: two one-line commands (the demo, the tests), and ``.ci/run`` runs
exactly the second one, so a fresh machine that follows the README gets what CI gets (issue 26).

``scripts/test`` installs every test dependency itself, so it must be an executable bash script that stops at
the first error and hands its arguments to pytest.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def quick_start_commands() -> list[str]:
    """The fenced shell blocks of the README's ``## Quick start`` section, each as its text."""
    section = REPO.joinpath("README.md").read_text(encoding="utf-8").split("\n## Quick start\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", section, re.S)]


def ci_commands() -> list[str]:
    """The commands of ``.ci/run`` that do something: not comments, not the shell options or the ``cd``."""
    lines = [line.strip() for line in REPO.joinpath(".ci", "run").read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line and not line.startswith("#") and not line.startswith("set ")
            and not line.startswith("cd ")]


def test_quick_start_has_two_one_line_commands_the_demo_and_the_tests() -> None:
    """The Quick start shows exactly two commands, one line each: the demo and the test script."""
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands), commands
    assert commands[0] == "pip install . && hermes-pipeline demo"
    assert commands[1] == "scripts/test"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """``.ci/run`` runs the README's test command and nothing else (no extra installs CI alone would get)."""
    assert ci_commands() == [quick_start_commands()[1]]


def test_the_test_script_is_executable_strict_and_passes_arguments_to_pytest() -> None:
    """``scripts/test`` is an executable bash script under ``set -euo pipefail`` ending in pytest with ``"$@"``;
    it installs the extras whose packages the tests import and names none that pyproject.toml lacks."""
    import tomllib

    script = REPO / "scripts" / "test"
    text = script.read_text(encoding="utf-8")
    assert os.access(script, os.X_OK) and text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert text.rstrip().splitlines()[-1] == 'exec "$PYTHON" -m pytest "$@"'
    extras = re.search(r"EXTRAS='\.\[([^\]]+)\]'", text)
    assert extras is not None
    declared = tomllib.loads(REPO.joinpath("pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]
    wanted = extras.group(1).split(",")
    assert set(wanted) <= set(declared) and {"test", "hermes", "bench", "dashboard-test"} <= set(wanted)


def test_processes_the_tests_start_import_the_code_under_test(tmp_path: Path) -> None:
    """A process a test starts outside the checkout (``hermes``, its gateway) finds this checkout's package before
    any copy installed into the environment: without the interpreter's own site directories it still resolves
    ``hermes_pipeline`` to the repository, so an older ``pip install .`` cannot answer for the code under test."""
    import subprocess
    import sys

    probe = "import importlib.util as u; print(u.find_spec('hermes_pipeline').origin)"
    child = subprocess.run([sys.executable, "-S", "-c", probe], cwd=tmp_path, env=os.environ,
                           capture_output=True, text=True, check=True)
    assert Path(child.stdout.strip()).resolve() == REPO / "hermes_pipeline" / "__init__.py"


def test_the_test_script_replaces_another_copy_of_the_package(tmp_path: Path) -> None:
    """``scripts/test`` reinstalls (editable) when an interpreter started elsewhere would import a copy of the
    package other than this checkout: its check runs that interpreter from ``/`` and compares the file it loads."""
    script = REPO.joinpath("scripts", "test").read_text(encoding="utf-8")
    check = re.search(r"\(cd / && \"\$PYTHON\" -c '([^']+)' \\\n\s+\"\$PWD/hermes_pipeline/__init__\.py\"\)", script)
    assert check is not None and 'pip install -q -e "$EXTRAS"' in script
    import subprocess
    import sys

    other = tmp_path / "other" / "hermes_pipeline"
    other.mkdir(parents=True)
    other.joinpath("__init__.py").write_text("", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(other.parent)}
    ours = str(REPO / "hermes_pipeline" / "__init__.py")
    stale = subprocess.run([sys.executable, "-c", check.group(1), ours], cwd="/", env=env)
    assert stale.returncode != 0
    env["PYTHONPATH"] = str(REPO)
    assert subprocess.run([sys.executable, "-c", check.group(1), ours], cwd="/", env=env).returncode == 0
