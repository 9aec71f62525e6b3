"""``hermes-pipeline metrics`` subcommands (SM-57, SM-69, SM-70, SM-74)."""

from __future__ import annotations

import argparse
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hermes_pipeline.cli.metrics_cmd import add_parser
from hermes_pipeline.shared_metrics import MetricsStore
from hermes_pipeline.shared_metrics.consent import reconcile

from .conftest import Ingest
from .test_packages import add


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="hermes-pipeline")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return int(args.func(args))


def config(home: Path, **keys: object) -> None:
    lines = "".join(f"    {k}: {json.dumps(v)}\n" for k, v in keys.items())
    (home / "config.yaml").write_text(f"telemetry:\n  shared_metrics:\n{lines}", encoding="utf-8")


def test_status_without_a_store(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("metrics", "status", "--home", str(home)) == 0
    out = capsys.readouterr().out
    assert "collection: disabled" in out and "store:      none yet" in out
    assert not (home / "telemetry").exists()


def test_sm6_sm11_status_reads_only_yaml_booleans(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "config.yaml").write_text('telemetry:\n  shared_metrics:\n    enabled: "true"\n    send: true\n')
    assert cli("metrics", "status", "--home", str(home), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["enabled"], report["send"], report["sending"]) == (False, True, False)


def test_show_export_and_status(home: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_HOME", str(home))  # the default --home
    add(MetricsStore(home), "2026-09-01", n=3)
    assert cli("metrics", "show") == 0
    assert "hermes.tool_call.count" in capsys.readouterr().out
    assert cli("metrics", "export", "--now") == 0
    assert "created 1 package(s), wrote 1 file(s)" in capsys.readouterr().out
    assert cli("metrics", "package", "--now") == 0  # SM-57 spelling; nothing pending any more
    assert "created 0 package(s)" in capsys.readouterr().out
    assert cli("metrics", "status", "--json") == 0
    store = json.loads(capsys.readouterr().out)["store"]
    assert store["pending_counters"] == 0 and store["packages"]["unsent"] == 1 and store["outbox_files"] == 1


def test_export_without_a_store_is_an_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("metrics", "export", "--home", str(home)) == 1
    assert "no shared-metrics store" in capsys.readouterr().err


def test_sm70_send_needs_enabled_and_send(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config(home, enabled=True, send=False)
    assert cli("metrics", "send", "--home", str(home)) == 1
    assert "enabled and .send both true" in capsys.readouterr().err
    config(home, enabled=True, send=True, endpoint="http://ingest.example/v1")
    assert cli("metrics", "send", "--home", str(home)) == 1
    assert "https" in capsys.readouterr().err


def test_send_one_pass_to_a_loopback_server(home: Path, ingest: Ingest, capsys: pytest.CaptureFixture[str]) -> None:
    config(home, enabled=True, send=True, endpoint=ingest.url)
    store = MetricsStore(home)
    now = datetime.now(UTC)
    conn = store.connect()
    reconcile(conn, True, now - timedelta(days=3))  # consent recorded before the packaged period
    conn.close()
    yesterday = (now - timedelta(days=1)).date().isoformat()
    add(store, yesterday)
    assert cli("metrics", "export", "--home", str(home), "--now") == 0
    assert cli("metrics", "send", "--home", str(home)) == 0
    assert "sent 1, rejected 0, deferred 0" in capsys.readouterr().out
    assert len(ingest.received) == 1 and ingest.received[0].json["period_start"].startswith(yesterday)


def test_sm69_reset_needs_confirmation(home: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    add(MetricsStore(home), "2026-09-01")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli("metrics", "reset", "--home", str(home)) == 1
    assert "pass --yes" in capsys.readouterr().err
    assert (home / "telemetry" / "shared_metrics").exists()
    assert cli("metrics", "reset", "--home", str(home), "--yes") == 0
    assert not (home / "telemetry" / "shared_metrics").exists()
    add(MetricsStore(home), "2026-09-01")  # a fresh store (and later a new install_id) after a reset
    assert MetricsStore(home).exists()
