"""The real Hermes Agent through the bridge: one run, one id (issue #27, deliverable 4).

``hermes chat -Q -q`` against the scripted model server, ATOF + ATIF + OTLP from the pipeline file and
the observability store and trajectory store on from the profile's ``observability.*`` keys. The
exported ATIF ``trajectory_id``, the trajectory store's file id, OTLP ``hermes.trajectory_id`` and
``task_runs.trajectory_id`` are the same id; ``trajectory show`` and the dashboard find the run by that
id and by a unique prefix of it (FMT-42, FMT-67, BOOK-27, BOOK-31).
"""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

from hermes_pipeline.cli.main import main as cli
from hermes_pipeline.dashboard.server import Dashboard
from hermes_pipeline.dashboard.sources import load_sources
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.sinks.trajectory_store import STORE_NAME
from tests.test_hermes_bridge_e2e import (_config, _hermes, _pipeline, _scopes, _start_model_server, _stop,
                                          _wait_for_spans, pytestmark, receiver, workdir)

__all__ = ["pytestmark", "receiver", "workdir"]  # the fixtures and the skip mark of the bridge e2e tests

STORE_KEYS = textwrap.dedent("""\
    observability:
      audit:
        enabled: true
      trajectories:
        enabled: true
    """)


def test_exported_trajectory_store_otlp_and_dashboard_share_one_id(tmp_path: Path, workdir: Path,
                                                                   receiver: OTLPReceiver, capsys) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent(f"""\
        steps:
          - tool_calls: [{{name: read_file, arguments: {{path: {workdir / 'notes.txt'}}}, id: call_read}}]
          - "Your notes say: buy milk."
        """), encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    home = tmp_path / "hermes"
    try:
        _config(home, port, enabled=["hermes_pipeline"])
        with (home / "config.yaml").open("a", encoding="utf-8") as fh:
            fh.write(STORE_KEYS)
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "What do my notes say?", out)
    finally:
        _stop(server)
    assert run.returncode == 0, run.stderr[-2000:]

    (exported,) = run.trajectories()
    tid = exported["trajectory_id"]
    assert exported["session_id"] == tid and (out / f"hermes-atif-{tid}.json").is_file()
    (turn,) = _scopes(run.events(), "agent.run")
    assert turn["uuid"] == tid  # the run's scope
    (stored,) = [p for p in (home / "trajectories").iterdir() if STORE_NAME.fullmatch(p.name)]
    assert STORE_NAME.fullmatch(stored.name).group("id") == tid  # type: ignore[union-attr]
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        assert [r[0] for r in db.execute("select trajectory_id from task_runs")] == [tid]
    _wait_for_spans(receiver, "execute_tool", 1)
    spans = receiver.spans_named("invoke_agent") + receiver.spans_named("chat") + receiver.spans_named("execute_tool")
    assert spans and {s.attributes.get("hermes.trajectory_id") for s in spans} == {tid}
    user = next(s for s in exported["steps"] if s["source"] == "user")
    assert user["extra"]["hermes"]["trajectory_id"] == tid

    # every command and page: the full id and a unique prefix of it
    for ref in (tid, tid[:8], tid[:6].upper()):
        assert cli(["trajectory", "show", ref, "--home", str(home), "--json"]) == 0, capsys.readouterr().err
        assert str(stored) in capsys.readouterr().out
        page = Dashboard(load_sources(home)).respond(f"/trajectories/{ref}")
        assert page.status == 200 and tid.encode() in page.body
    assert Dashboard(load_sources(home)).respond(f"/trajectories/{tid}/diff/{tid[:8]}").status == 200
