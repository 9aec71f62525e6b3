"""The real Hermes Agent: what the bridge does without a pipeline file (issue #27, deliverables 8 and 10).

``hermes chat -Q -q`` against the scripted model server with ``HERMES_NEMO_RELAY_PLUGINS_TOML`` unset:
with no profile consumer on, the bridge writes nothing and ``hermes-pipeline hermes doctor`` exits 1
naming the reason; with only ``observability.audit.enabled`` set through ``config set``, the bridge
records the run in the observability store and ``doctor`` says ready (exit 0). The README's table says
exactly this (CFG-85, BOOK-16).
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main as cli
from tests.hermes.test_bridge_e2e import _config, _hermes, _start_model_server, _stop, pytestmark, workdir

__all__ = ["pytestmark", "workdir"]  # the fixture and the skip mark of the bridge e2e tests


def _run(tmp_path: Path, home: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent('steps:\n  - "hello there"\n'), encoding="utf-8")
    server, port = _start_model_server(script)
    try:
        _config(home, port, enabled=["hermes_pipeline"])
        if (tmp_path / "keys").exists():
            for key in (tmp_path / "keys").read_text(encoding="utf-8").split():
                assert cli(["config", "set", key, "true", "--home", str(home)]) == 0
        run = _hermes(tmp_path, home, None, "hi", tmp_path / "out")
    finally:
        _stop(server)
    assert run.returncode == 0 and "hello there" in run.stdout, run.stderr[-2000:]


def _doctor(home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict]:  # type: ignore[type-arg]
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    capsys.readouterr()
    code = cli(["hermes", "doctor", "--home", str(home), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_nothing_configured_nothing_written_and_doctor_says_why(tmp_path: Path, workdir: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "hermes"
    _run(tmp_path, home)
    assert not (home / "observability").exists() and not (home / "trajectories").exists()
    assert not (home / "logs" / "hermes-pipeline.jsonl").exists()
    code, report = _doctor(home, capsys, monkeypatch)
    assert code == 1 and report["exports"] is False and report["reason"] == "no_pipeline_no_consumer"


def test_audit_key_alone_records_the_run(tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "hermes"
    (tmp_path / "keys").write_text("observability.audit.enabled", encoding="utf-8")
    _run(tmp_path, home)
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        assert [r[0] for r in db.execute("select outcome from task_runs")] == ["success"]
    assert not (home / "trajectories").exists()  # only what was switched on
    code, report = _doctor(home, capsys, monkeypatch)
    assert code == 0 and report["exports"] is True and report["reason"] is None
