"""The demo exercises the observability store (issue 15 item 8; spec 06 §0: the demo enables it)."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

from hermes_pipeline.demo.run import SKILL, print_report, run_demo


def test_the_demo_creates_patches_loads_a_skill_writes_memory_and_reports_two_queries(tmp_path: Path) -> None:
    result = run_demo(tmp_path)
    assert [(r["version"], r["change_type"]) for r in result.store_queries["Q-S1"]] == [(2, "refine"), (1, "create")]
    assert result.store_queries["Q-S1"][1]["reason"] == "summaries are requested weekly"
    actors = {r["actor"]: r["change_count"] for r in result.store_queries["Q-M2"]}
    assert actors == {"skill-execution": 1, "user-direct": 1}  # the skill's memory write; the hand edit
    db = tmp_path / "hermes-home" / "observability" / "observability.sqlite3"
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT skill_name, outcome FROM skill_runs").fetchall() == [(SKILL, "success")]
    assert conn.execute("SELECT file_path, change_type FROM memory_changes WHERE actor = 'user-direct'").fetchall() \
        == [("memories/USER.md", "add")]
    runs = conn.execute("SELECT trajectory_id, outcome FROM task_runs ORDER BY id").fetchall()
    assert len(runs) == 3 and {o for _, o in runs} == {"success"}  # two turns and the reviewer's
    stored = {p.name[11:-5] for p in result.outputs["store"]}
    assert stored <= {t for t, _ in runs}  # task_runs.trajectory_id names the trajectory files (BOOK-3)
    conn.close()
    out = io.StringIO()
    print_report(result, out)
    text = out.getvalue()
    assert f"Q-S1 skill history of {SKILL!r}" in text and "Q-M2 who changes memory" in text
    assert "user-direct       1" in text
