"""The test tree mirrors the package (issue 29 item 7): the tests of ``hermes_pipeline/<path>`` are in
``tests/<path>/``, so that the proof of a module is found by its path; only the tests that span packages
(requirement coverage, quick start, five pillars, layering, the canary sweep, the tree guards) stay at the top.
"""

from __future__ import annotations

from pathlib import Path

from tests._repo import REPO, TESTS

PACKAGE = REPO / "hermes_pipeline"

SPANNING = frozenset({
    "test_canary_everywhere.py",    # every field of every hook, through every sink and store
    "test_docs_links.py",           # README.md and docs/
    "test_five_pillars.py",         # the demo across the five pillars
    "test_layering.py",             # import arrows between all packages
    "test_structure.py",            # layers, circles, sinks importing sinks, module strings: all packages
    "test_pipeline_files.py",       # tests/data/pipelines, shared by tests of several packages
    "test_quick_start.py",          # the README's commands and .ci/run
    "test_requirements_coverage.py",
    "test_sink_testing.py",         # hermes_pipeline/testing.py and sink_testing.py (top-level modules)
    "test_stop_signal.py",          # hermes_pipeline/_stop_signal.py (a top-level module)
    "test_testing_fakes.py",        # hermes_pipeline/testing.py
    "test_tree_layout.py",
    "test_types.py",                # mypy --strict over every package
    "test_vocabulary.py",           # one word per concept across every package
    "test_working_tree_guard.py",   # tests/conftest.py
})
"""Test modules allowed directly in ``tests/``: each tests something that is no one package."""

OTHER_DIRECTORIES = frozenset({
    "data",          # shared data files, not tests
    "bench",         # mirrors bench/ (the benchmarks' own helpers)
    "trajectories",  # the trajectory store and replay together (sinks/trajectory_store + replay)
    "integration",   # tests that span packages, when they need a directory of their own
})
"""Top-level directories of ``tests/`` that do not mirror a package directory, and why."""


def _test_directories() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*") if p.is_dir() and "__pycache__" not in p.parts
                  and p.relative_to(TESTS).parts[0] != "data" and not p.name.startswith("."))


def test_flat_test_modules_are_only_those_spanning_packages() -> None:
    flat = sorted(p.name for p in TESTS.glob("test_*.py"))
    misplaced = [name for name in flat if name not in SPANNING]
    assert misplaced == [], (f"{misplaced}: put a test of hermes_pipeline/<path> in tests/<path>/ (create the "
                             "directory with an empty __init__.py); only tests spanning packages stay in tests/ "
                             "(SPANNING)")


def test_every_test_directory_mirrors_a_package_directory() -> None:
    strays = []
    for directory in _test_directories():
        relative = directory.relative_to(TESTS)
        if relative.parts[0] in OTHER_DIRECTORIES:
            continue
        if not (PACKAGE / relative).is_dir():
            strays.append(relative.as_posix())
    assert strays == [], f"tests/{strays}: no hermes_pipeline/ directory of that path (mirror the package)"


def test_every_test_directory_is_a_package() -> None:
    """``__init__.py`` everywhere, so that two ``test_config.py`` in different directories do not collide."""
    missing = [d.relative_to(TESTS).as_posix() for d in _test_directories() if not (d / "__init__.py").is_file()]
    assert missing == []
