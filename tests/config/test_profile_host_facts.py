"""Issue #12 item 2 through ``open_profile()``: a host's agent version and toolsets reach the profile's
shared metrics (SM-25 ``tool_category``, SM-45 ``resource.hermes_version``), which before recorded
every tool as ``unknown`` and this package's version."""

from __future__ import annotations

import json
import sqlite3

from hermes_pipeline import Engine, __version__
from hermes_pipeline.profile import open_profile

from .conftest import Env


def _tool_rows(db: object) -> list[tuple[str, dict[str, str], int]]:
    with sqlite3.connect(str(db)) as conn:
        found = conn.execute("select hermes_version, dimensions_json, value from counter_aggregates "
                             "where metric_name = 'hermes.tool_call.count'").fetchall()
    return [(version, json.loads(dims), value) for version, dims, value in found]


def test_profile_host_toolsets_and_agent_version_reach_shared_metrics(env: Env, process: Engine) -> None:
    """#12.2 / SM-25 / SM-45 / CFG-85: ``profile.host(agent_version=, toolsets=)`` → the profile's counters."""
    home = env.root / "profile"
    home.mkdir()
    (home / "config.yaml").write_text("telemetry:\n  shared_metrics:\n    enabled: true\n", encoding="utf-8")
    profile = open_profile(home)
    try:
        host = profile.host(model="m", agent_version="0.19.0",
                            toolsets={"read_file": "file", "terminal": "terminal", "deploy": "acme"})
        with host.session() as session, session.turn("hi") as turn:
            for i, name in enumerate(("read_file", "terminal", "deploy", "not_registered")):
                turn.call_tool(name, {}, lambda: "ok", tool_call_id=f"c{i}")
            turn.complete("done")
        assert profile.consumers["shared_metrics"].flush(10)
    finally:
        profile.close()
    found = _tool_rows(home / "telemetry" / "shared_metrics" / "metrics.sqlite3")
    assert sorted(dims["tool_category"] for _, dims, _ in found) == ["file", "other", "terminal", "unknown"]
    assert {version for version, _, _ in found} == {"0.19.0"} != {__version__}
