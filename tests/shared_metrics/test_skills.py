"""Skill lifecycle and load counters derived from ``skills/.usage.json`` (SM-31..SM-33)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from hermes_pipeline import Engine
from hermes_pipeline.shared_metrics import SharedMetrics, SkillReporter

from .conftest import rows


def test_sm31_sm32_smoke_sequence(home: Path, metrics: SharedMetrics) -> None:
    """SM-31 / SM-32: Smoke sequence."""
    skills = SkillReporter(home, metrics=metrics)
    skills.created("SKILL_CANARY")
    uses = [skills.loaded("SKILL_CANARY"), skills.loaded("SKILL_CANARY")]
    skills.patched("SKILL_CANARY")
    uses.append(skills.loaded("SKILL_CANARY"))
    for step in (skills.edited, skills.stale, skills.restored, skills.archived, skills.restored):
        step("SKILL_CANARY")
    skills.installed("INSTALLED_SKILL_CANARY")
    assert [(u.use_count, u.reused, u.reuse_after_patch) for u in uses] == [(1, False, False), (2, True, False),
                                                                             (3, True, True)]
    assert metrics.flush()
    lifecycle = {(r["dimensions"]["action"], r["dimensions"]["provenance"]): r["value"]
                 for r in rows(metrics.store, "hermes.skill.lifecycle.count")}
    assert lifecycle == {("created", "agent_created"): 1, ("patched", "agent_created"): 1,
                         ("edited", "agent_created"): 1, ("stale", "agent_created"): 1,
                         ("restored", "agent_created"): 2, ("archived", "agent_created"): 1,
                         ("installed", "installed"): 1}
    loads = {(d["reuse_state"], d["post_patch_state"], d["use_count_bucket"])
             for d in (r["dimensions"] for r in rows(metrics.store, "hermes.skill.load.count"))}
    assert loads == {("first_use", "not_applicable", "1"), ("reused", "no_new_patch", "2"),
                     ("reused", "reused_after_patch", "3_to_5")}
    metrics.export_due(force=True)
    blob = b"".join(p.read_bytes() for p in (home / "telemetry").rglob("*") if p.is_file())
    assert b"SKILL_CANARY" not in blob  # SM-33 (also covers INSTALLED_SKILL_CANARY)
    state = json.loads((home / "skills" / ".usage.json").read_text())
    assert state["skills"]["SKILL_CANARY"]["use_count"] == 3  # the host's own state keeps the exact count


def test_sm32_only_the_first_use_after_a_patch_is_reused_after_patch(home: Path, metrics: SharedMetrics) -> None:
    """SM-32: Only the first use after a patch is reused after patch."""
    skills = SkillReporter(home, metrics=metrics)
    skills.created("s")
    flags = []
    for action in ("load", "patch", "load", "load", "patch", "patch", "load", "load"):
        if action == "load":
            flags.append(skills.loaded("s").reuse_after_patch)
        else:
            skills.patched("s")
    assert flags == [False, True, False, True, False]


def test_sm31_failed_mutations_emit_nothing(home: Path, metrics: SharedMetrics) -> None:
    skills = SkillReporter(home, metrics=metrics)
    skills.report("patched", "s", success=False)
    assert not metrics.on_skill_lifecycle("deleted", "s")  # outside the closed action enum
    assert not metrics.on_skill_lifecycle("loaded", "s", use_count=1, reused=False, reuse_after_patch=True)
    assert metrics.flush()
    assert rows(metrics.store, "hermes.skill.lifecycle.count") == []
    assert rows(metrics.store, "hermes.skill.load.count") == []


def test_sm32_usage_state_is_updated_transactionally(home: Path) -> None:
    """SM-32: Concurrent loads never lose an update: each sees a distinct use count."""
    skills = [SkillReporter(home) for _ in range(8)]
    seen: list[int] = []
    lock = threading.Lock()

    def load(reporter: SkillReporter) -> None:
        for _ in range(10):
            use = reporter.loaded("shared-skill")
            with lock:
                seen.append(use.use_count)

    threads = [threading.Thread(target=load, args=(r,)) for r in skills]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == list(range(1, 81))


def test_sm17_skill_events_reach_other_listeners_of_the_engine(home: Path) -> None:
    """SM-17: Skill events reach other listeners of the engine."""
    engine = Engine()
    received: list[dict[str, Any]] = []
    engine.register_hook("on_skill_lifecycle", lambda **kw: received.append(kw))
    SkillReporter(home, engine=engine).installed("x")
    assert [(r["action"], r["skill_name"], r["provenance"]) for r in received] == [("installed", "x", "installed")]
