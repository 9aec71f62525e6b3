"""Where the specification is, for the few tests that compare shipped text with it.

The specification is not in the repository (it is kept beside it: ``shared/spec`` next to the checkout or
next to the local repository it was cloned from, or wherever ``$HERMES_PIPELINE_SPEC`` says); the lookup is
``scripts/requirements_coverage.py``'s, so the script and the tests agree. Where it cannot be found, those
comparisons are skipped with :data:`MISSING`, which says why and how to point at it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "requirements_coverage.py"


def _load_script() -> ModuleType:
    if "requirements_coverage" in sys.modules:
        return sys.modules["requirements_coverage"]
    spec = importlib.util.spec_from_file_location("requirements_coverage", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["requirements_coverage"] = module
    spec.loader.exec_module(module)
    return module


coverage = _load_script()
SPEC_DIR: Path = coverage.DEFAULT_SPEC
PRESENT: bool = SPEC_DIR.is_dir() and any(SPEC_DIR.glob("*.md"))
MISSING = (f"the specification is not in the repository and was not found beside it "
           f"({', '.join(str(p) for p in coverage.spec_candidates())}); set {coverage.SPEC_ENV} to its directory "
           "to compare against it")


def spec_text(name: str) -> str:
    """The text of ``name`` (e.g. ``05-shared-metrics.md``) of the specification; skips the test without it."""
    path = SPEC_DIR / name
    if not path.is_file():
        pytest.skip(MISSING)
    return path.read_text(encoding="utf-8")
