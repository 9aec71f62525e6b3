"""Nothing in the cwd (issue 11 item 3): default output locations live under the profile, and no file
exists before the first event is written (spec 04 FMT-35, hermes_pipeline decision; CFG-83)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.export.files import JsonlFileDestination
from hermes_pipeline.export.paths import default_output_directory
from hermes_pipeline.sinks.atof import build_atof_plugin, build_atof_sink


@pytest.fixture
def profile_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated cwd and HERMES_HOME; returns the HERMES_HOME."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes-home"))
    return tmp_path / "hermes-home"


def test_fmt_35_file_is_created_at_the_first_write_never_before(tmp_path: Path) -> None:
    """FMT-35: opening a file sink creates neither the directory nor the file; the first write does."""
    directory = tmp_path / "out"
    destination = JsonlFileDestination(directory, "events.jsonl")
    destination.open()
    assert not directory.exists()
    destination.write([b'{"a":1}\n'])
    assert (directory / "events.jsonl").read_bytes() == b'{"a":1}\n'
    destination.close()


def test_fmt_35_overwrite_truncates_an_existing_file_at_open_without_creating_a_missing_one(tmp_path: Path) -> None:
    """FMT-35: ``overwrite`` empties an existing file when the sink opens (a run that writes nothing
    leaves no stale events), and a missing file still appears only with the first event."""
    existing = tmp_path / "old.jsonl"
    existing.write_bytes(b'{"stale":true}\n')
    destination = JsonlFileDestination(tmp_path, "old.jsonl", mode="overwrite")
    destination.open()
    assert existing.read_bytes() == b""
    destination.write([b"{}\n"])
    destination.write([b"{}\n"])
    assert existing.read_bytes() == b"{}\n{}\n"  # truncated once, then appended
    destination.close()
    missing = JsonlFileDestination(tmp_path / "new", "e.jsonl", mode="overwrite")
    missing.open()
    assert not (tmp_path / "new").exists()
    missing.close()


def test_fmt_35_default_output_directory_is_hermes_home_telemetry(profile_home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-35: the default directory is ``$HERMES_HOME/telemetry`` (absolute), else ``~/.hermes/telemetry``."""
    assert default_output_directory() == profile_home.resolve() / "telemetry"
    assert default_output_directory(profile_home / "other") == profile_home.resolve() / "other" / "telemetry"
    monkeypatch.delenv("HERMES_HOME")
    monkeypatch.setenv("HOME", str(profile_home.parent / "user"))
    assert default_output_directory() == (profile_home.parent / "user").resolve() / ".hermes" / "telemetry"


def test_fmt_35_atof_file_sink_without_output_directory_writes_under_the_profile(profile_home: Path) -> None:
    """FMT-35: a file sink without ``output_directory`` writes ``hermes-events-<stamp>.jsonl`` under
    ``$HERMES_HOME/telemetry`` (not the cwd); nothing exists there until the first event."""
    cwd = Path.cwd()
    engine = Engine()
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file"}]})
    engine.add_plugin(plugin, name="atof")
    assert plugin.flush(10.0)
    assert not profile_home.exists() and list(cwd.iterdir()) == []
    host = Host(engine, model="m", provider="p")
    with host.session() as session, session.turn("hello") as turn:
        turn.complete("done")
    assert plugin.flush(10.0)
    files = sorted((profile_home / "telemetry").iterdir())
    assert len(files) == 1 and files[0].name.startswith("hermes-events-") and files[0].suffix == ".jsonl"
    assert all(json.loads(line)["kind"] for line in files[0].read_text(encoding="utf-8").splitlines())
    assert list(cwd.iterdir()) == []
    plugin.shutdown(10.0)


def test_cfg_83_explicit_relative_directory_still_resolves_against_the_cwd(profile_home: Path) -> None:
    """CFG-83: an explicit relative ``output_directory`` is resolved against the working directory; the
    default applies only when the key is absent (``default_dir`` overrides ``$HERMES_HOME``)."""
    sinks = [{"type": "file", "output_directory": "rel", "filename": "e.jsonl"},
             {"type": "file", "filename": "d.jsonl"}]
    sink = build_atof_sink({"enabled": True, "sinks": sinks}, default_dir=profile_home / "elsewhere")
    try:
        assert sink.destinations() == [f"atof.sinks[0]: file {Path.cwd() / 'rel' / 'e.jsonl'}",
                                       f"atof.sinks[1]: file {profile_home / 'elsewhere' / 'd.jsonl'}"]
    finally:
        sink.shutdown(5.0)
    assert list(Path.cwd().iterdir()) == []
