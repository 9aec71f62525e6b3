"""The generated profile of issue #31 (2,000 Hermes sessions over 14 days, failures of every kind, skills
with versions, memory changes with reasons), built by the bench's own generator so that the tests and
``bench/bench_dashboard.py`` judge the same data."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_dashboard.py"


def build_issue_profile(root: Path, **kwargs: Any) -> dict[str, Any]:
    """``bench_dashboard.build_issue_profile`` (see there) under ``root``."""
    spec = importlib.util.spec_from_file_location("bench_dashboard", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made: dict[str, Any] = module.build_issue_profile(root, **kwargs)
    return made
