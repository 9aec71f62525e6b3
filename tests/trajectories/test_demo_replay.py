"""The demo records into its profile's trajectory store and both recorded turns replay identically offline
(spec 06 §0: the demo enables the store; BOOK-31, BOOK-33)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.demo.run import print_report, run_demo

from ._support import no_network


def test_book_31_33_the_demo_run_replays_identically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-31 / BOOK-33: the demo's two turns (a retried provider error, a policy block, middleware, an
    approval and a subagent) are in the store; the report prints the replay command; with networking
    disabled each turn replays ``identical`` (exit 0) with the reference agent."""
    result = run_demo(tmp_path / "demo")
    store = result.outputs["store"]
    assert len(store) == 2
    report = io.StringIO()
    print_report(result, report)
    home = tmp_path / "demo" / "hermes-home"
    assert f"replay:  hermes-pipeline replay {store[0].name[11:-5]} --home {home}" in report.getvalue()
    for path in store:
        with no_network() as attempts:
            code = main(["replay", path.name[11:-5], "--home", str(home), "--output", str(tmp_path / path.name)])
        out = capsys.readouterr().out
        assert attempts == [] and code == 0 and out.splitlines()[-1] == "identical", out
