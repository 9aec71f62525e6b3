"""The package passes its strict type check (``[tool.mypy] strict = true`` in ``pyproject.toml``).

The package ships ``py.typed``: plugin, sink and host authors type-check their code against these annotations,
so an annotation that lies (a value that can be ``None`` where the signature says it cannot, a variable that
holds two types) is a defect they inherit. Such a change fails here, with mypy's own report. The checker and
the stubs it reads are pinned in the ``typecheck`` extra, which ``scripts/test`` installs.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from ._repo import REPO


def _mypy(tmp_path: Path, *targets: str) -> tuple[int, list[str], str]:
    """Run the checker with the project's configuration (on its ``packages`` unless ``targets`` are given)."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (scripts/test installs the typecheck extra: pip install '.[typecheck]')")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary", "--hide-error-context", *targets],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, [line for line in done.stdout.splitlines() if ": error:" in line], done.stderr


def test_the_package_passes_mypy_strict(tmp_path: Path) -> None:
    code, errors, stderr = _mypy(tmp_path)
    assert code == 0 and not errors, \
        f"mypy --strict reported {len(errors)} error(s):\n" + "\n".join(errors[:40]) + stderr[-2000:]


def test_the_check_is_strict(tmp_path: Path) -> None:
    """The same command on a module with an unannotated function and a ``None`` used as a ``str``: both reported
    (the configuration is the strict one, and a failing check is seen as one)."""
    bad = tmp_path / "loose.py"
    bad.write_text("def untyped(x):\n    return x\n\n\ndef name(value: str | None) -> str:\n    return value\n",
                   encoding="utf-8")
    code, errors, _ = _mypy(tmp_path, str(bad))
    assert code == 1
    assert any("no-untyped-def" in line for line in errors), errors
    assert any("return-value" in line for line in errors), errors
