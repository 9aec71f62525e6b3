"""hermes-pipeline alerts run|daemon|test|status (spec 06 BOOK-45), including two evaluator
processes of one profile that must not send anything twice (BOOK-44)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from tests.alerts._support import llm, store
from tests.alerts.test_notifiers import http_receiver


def _profile(home: Path, notifiers: str = "[webhook]") -> None:
    (home / "config.yaml").write_text("observability:\n  audit:\n    enabled: true\n  alerts:\n    enabled: true\n"
                                      f"    notifiers: {notifiers}\n", encoding="utf-8")


def _seed_outage(home: Path) -> None:
    conn = store(home)
    now = datetime.now(timezone.utc)
    for i in range(10):
        llm(conn, now - timedelta(seconds=30 - i), status="error", error_type="http_503")
    conn.close()


def _env(home: Path, url: str) -> dict[str, str]:
    return {**os.environ, "HERMES_HOME": str(home), "HERMES_ALERTS_WEBHOOK_URL": url}


def test_book44_two_evaluator_processes_send_each_alert_once(tmp_path: Path) -> None:
    """BOOK-44: two `alerts run` processes of one profile at the same time: one notification in total."""
    _profile(tmp_path)
    _seed_outage(tmp_path)
    with http_receiver() as (url, received):
        procs = [subprocess.Popen([sys.executable, "-m", "hermes_pipeline.cli.main", "alerts", "run", "--json"],
                                  env=_env(tmp_path, url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    alerts = [r["json"] for r in received if r["json"]["kind"] != "digest"]
    assert [a["alerts"][0]["rule"] for a in alerts] == ["A-C3"]
    assert len([r for r in received if r["json"]["kind"] == "digest"]) <= 1
    reports = [json.loads(out) for out, _ in outs]
    assert sum(len([s for s in r["sent"] if s["kind"] != "digest"]) for r in reports) == 1


def test_book45_run_status_and_test(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """BOOK-45: `alerts run` sends, `alerts status --json` shows the alert, `alerts test` sends a sample."""
    _profile(tmp_path)
    _seed_outage(tmp_path)
    with http_receiver() as (url, received):
        monkeypatch.setenv("HERMES_ALERTS_WEBHOOK_URL", url)
        assert main(["alerts", "run", "--home", str(tmp_path)]) == 0
        assert "sent [critical] A-C3 LLM outage (llm)" in capsys.readouterr().out
        assert main(["alerts", "status", "--json", "--home", str(tmp_path)]) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["notifiers"] == ["webhook"] and status["sent_last_hour"] >= 1
        assert [(a["rule"], a["status"]) for a in status["alerts"]] == [("A-C3", "firing")]
        assert main(["alerts", "test", "a-m1", "--home", str(tmp_path)]) == 0
        assert main(["alerts", "test", "A-X9", "--home", str(tmp_path)]) == 2
    assert received[-1]["json"]["kind"] == "test" and received[-1]["json"]["severity"] == "medium"


def test_book45_unreachable_notifier_exits_1_and_keeps_the_alert(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _profile(tmp_path)
    _seed_outage(tmp_path)
    with http_receiver(status=503) as (url, _):
        monkeypatch.setenv("HERMES_ALERTS_WEBHOOK_URL", url)
        monkeypatch.setattr("hermes_pipeline.alerts.delivery.BACKOFF_S", (0.0, 0.0))
        assert main(["alerts", "run", "--home", str(tmp_path)]) == 1
    assert "NOT delivered (kept pending)" in capsys.readouterr().out
    assert main(["alerts", "status", "--json", "--home", str(tmp_path)]) == 0
    assert [a["status"] for a in json.loads(capsys.readouterr().out)["alerts"]] == ["pending"]


def test_alerts_disabled_or_no_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alerts", "run", "--home", str(tmp_path)]) == 0
    assert "observability.alerts.enabled is false" in capsys.readouterr().err
    _profile(tmp_path)
    assert main(["alerts", "run", "--home", str(tmp_path)]) == 1
    assert "no observability store" in capsys.readouterr().err
    assert not (tmp_path / "observability").exists()


def test_book45_daemon_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    """BOOK-45: `alerts daemon` loops and exits 0 on SIGTERM."""
    _profile(tmp_path)
    _seed_outage(tmp_path)
    with http_receiver() as (url, received):
        proc = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.cli.main", "alerts", "daemon",
                                 "--interval", "3600"], env=_env(tmp_path, url), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        assert "evaluating every" in proc.stdout.readline()
        assert proc.stdout.readline().startswith("sent [critical]")  # the first evaluation happened
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped" in out
    assert [r["json"]["alerts"][0]["rule"] for r in received if r["json"]["kind"] != "digest"] == ["A-C3"]
