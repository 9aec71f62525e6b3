"""The session guard of ``tests/conftest.py`` that fails the run when the tests leave a file in the
working tree or the working directory (issue 11 item 3: nothing is written where nobody asked)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import _files, _gained


def test_guard_flags_exporter_output_left_in_the_tree(tmp_path: Path) -> None:
    """A file new at the top level, in a new top-level directory, or of a non-source type anywhere
    counts; the skipped cache directories do not."""
    (tmp_path / "hermes_pipeline").mkdir()
    (tmp_path / "hermes_pipeline" / "core.py").write_text("")
    before = _files(tmp_path)
    (tmp_path / "hermes-events-20261130T042805Z.jsonl").write_text("")
    (tmp_path / "telemetry").mkdir()
    (tmp_path / "telemetry" / "events.jsonl").write_text("")
    (tmp_path / "hermes_pipeline" / "hermes-atif-x.jsonl").write_text("")
    (tmp_path / "hermes_pipeline" / "__pycache__").mkdir()
    (tmp_path / "hermes_pipeline" / "__pycache__" / "core.pyc").write_text("")
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / ".pytest_cache" / "v").write_text("")
    assert _gained(tmp_path, before) == ["hermes-events-20261130T042805Z.jsonl", "hermes_pipeline/hermes-atif-x.jsonl",
                                         "telemetry/events.jsonl"]


def test_guard_lets_source_files_added_to_existing_directories_pass(tmp_path: Path) -> None:
    """Source files another developer adds to an existing package directory while the suite runs are
    not the tests' doing; a source file at the top level still counts."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    before = _files(tmp_path)
    (tmp_path / "tests" / "test_b.py").write_text("")
    (tmp_path / "tests" / "notes.md").write_text("")
    (tmp_path / "plugins.toml").write_text("")
    assert _gained(tmp_path, before) == ["plugins.toml"]


def test_guard_leaves_a_virtual_environment_in_the_checkout_alone(tmp_path: Path) -> None:
    """A ``.venv`` (or any directory holding ``pyvenv.cfg``) inside the checkout is the user's environment: packages
    a program the tests start installs into it are not files the tests left in the tree; a lookalike directory
    without ``pyvenv.cfg`` still counts."""
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "env-lookalike").mkdir()
    before = _files(tmp_path)
    (tmp_path / ".venv" / "bin").mkdir()
    (tmp_path / ".venv" / "bin" / "edge-tts").write_text("")
    (tmp_path / "env-lookalike" / "bin").mkdir()
    (tmp_path / "env-lookalike" / "bin" / "tool").write_text("")
    assert _gained(tmp_path, before) == ["env-lookalike/bin/tool"]
