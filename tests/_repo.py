"""Where the checkout is, for tests that read files beside the code (README, docs, bench, scripts, pipelines).

One constant instead of ``Path(__file__).parents[n]`` in each test, so that a test module can move within
``tests/`` without its paths going wrong.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
"""The repository root (the directory holding ``pyproject.toml``)."""

TESTS = REPO / "tests"
"""The test tree."""

TEST_DATA = TESTS / "data"
"""Data files shared by the tests (recorded schemas, pipeline files)."""
