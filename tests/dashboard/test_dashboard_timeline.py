"""A run's timeline: real durations (LLM latency, tool time, waiting for approval), tokens and cost per step
(issue #31), not the gap to the next step."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_pipeline.dashboard.timeline import segments, timeline_html
from hermes_pipeline.dashboard.views_runs import trajectory_view


def _doc() -> dict[str, Any]:
    result = {"source_call_id": "c1", "content": "ok",
              "extra": {"hermes": {"status": "ok", "duration_ms": 800, "approval": {"waited_ms": 500}}}}
    return {"steps": [
        {"step_id": 1, "source": "user", "message": "go", "timestamp": "2026-12-01T10:00:00.000000Z"},
        {"step_id": 2, "source": "agent", "message": "", "timestamp": "2026-12-01T10:00:02.000000Z",
         "metrics": {"prompt_tokens": 300, "completion_tokens": 100},
         "tool_calls": [{"tool_call_id": "c1", "function_name": "terminal", "arguments": {}}],
         "observation": {"results": [result]}},
        {"step_id": 3, "source": "agent", "message": "done", "timestamp": "2026-12-01T10:00:05.000000Z",
         "metrics": {"prompt_tokens": 500, "completion_tokens": 100}}]}


def test_each_segment_has_its_real_duration() -> None:
    """The first LLM call took 2 s, the tool 0.8 s (0.5 s of it waiting for approval), the second LLM call
    the 2.2 s after the tool ended, not the 3 s between the two steps."""
    parts = {(p["step"], p["kind"]): p for p in segments(_doc())}
    assert parts[(2, "llm")]["end"] - parts[(2, "llm")]["start"] == pytest.approx(2.0)
    assert parts[(2, "tool")]["end"] - parts[(2, "tool")]["start"] == pytest.approx(0.8)
    assert parts[(2, "approval")]["end"] - parts[(2, "approval")]["start"] == pytest.approx(0.5)
    assert parts[(3, "llm")]["start"] == pytest.approx(2.8) and parts[(3, "llm")]["end"] == pytest.approx(5.0)
    assert parts[(3, "llm")]["tokens"] == 600


def test_the_timeline_shares_the_runs_cost_by_tokens_and_the_tree_shows_llm_latency() -> None:
    html = timeline_html(_doc(), 1.0)
    assert "≈ $0.40" in html and "≈ $0.60" in html and "2200 ms" in html and "800 ms" in html
    page = trajectory_view({"id": "r", "doc": _doc(), "run": {"cost_usd": 1.0}})
    assert "LLM 2200 ms" in page and "LLM 3000 ms" not in page and "<h2>Timeline</h2>" in page
