#!/usr/bin/env python3
"""Smoke test of shared metrics end to end (spec 05 SM-94, SM-95, SM-96), loopback only.

1. An isolated ``HERMES_HOME`` whose ``config.yaml`` enables collection (``send`` off) and a
   workspace with an input file containing ``TOOL_RESULT_CANARY``.
2. The deterministic OpenAI-compatible model (``ScriptedModelServer``) on 127.0.0.1: it answers a
   request without a tool message with one ``read_file`` call (id ``TOOL_CALL_CANARY``), otherwise
   ``RESPONSE_CANARY``.
3. One real turn of the reference agent (``PROMPT_CANARY``) through ``Host`` with the real
   ``read_file`` tool; skill transitions through ``SkillReporter`` (create, load, load, patch, load,
   edit, stale, restore, archive, restore, install).
4. Shut the runtime down, force one package, then check the SQLite counters, validate every
   package against the closed schema, check the pseudonymous ``hermes.client.active`` counter and
   scan every byte under ``$HERMES_HOME/telemetry`` for the canaries.

Prints a short report; exits 1 on any failed check. ``--home DIR`` keeps the state in DIR.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.demo.agent import ReferenceAgent  # noqa: E402
from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec  # noqa: E402
from hermes_pipeline.demo.openai_client import ChatCompletionsClient  # noqa: E402
from hermes_pipeline.demo.tools import Workspace  # noqa: E402
from hermes_pipeline.shared_metrics import (  # noqa: E402
    MetricsStore,
    SkillReporter,
    attach_shared_metrics,
    package_errors,
    read_profile_consent,
)
from hermes_pipeline.shared_metrics.clock import SystemClock  # noqa: E402
from hermes_pipeline.shared_metrics.packages import package_and_export  # noqa: E402
from hermes_pipeline.shared_metrics.report import counter_rows  # noqa: E402

MODEL = "MODEL_CANARY"
CANARIES = ("PROMPT_CANARY", "RESPONSE_CANARY", "TOOL_CALL_CANARY", "TOOL_RESULT_CANARY", "SKILL_CANARY",
            "INSTALLED_SKILL_CANARY")
TOOLSETS = {"read_file": "file", "write_file": "file", "list_files": "file", "delegate": "delegation"}
EXPECTED_NAMES = {"hermes.client.active", "hermes.model_route.count", "hermes.skill.lifecycle.count",
                  "hermes.skill.load.count", "hermes.task_run.finished", "hermes.task_run.started",
                  "hermes.tool_call.count", "hermes.client.first_usable", "hermes.client.first_successful_task"}


class Checks:
    """Collects pass/fail lines."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.lines: list[str] = []

    def check(self, name: str, ok: bool, detail: object = "") -> None:
        self.lines.append(f"  {'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if not ok and detail != "" else ""))
        if not ok:
            self.failed.append(name)


def model_script(input_path: str) -> list[Callable[[dict[str, Any]], ScriptStep]]:
    def reply(body: dict[str, Any]) -> ScriptStep:
        if not any(m.get("role") == "tool" for m in body.get("messages", [])):
            return ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": input_path}, id="TOOL_CALL_CANARY")],
                              prompt_tokens=40, completion_tokens=8)
        return ScriptStep(content="RESPONSE_CANARY", finish_reason="stop", prompt_tokens=60, completion_tokens=4)

    return [reply, reply]


def run(home: Path, workspace: Path, checks: Checks, *, leak: bool = False) -> None:
    (workspace / "input.txt").write_text("TOOL_RESULT_CANARY\n", encoding="utf-8")
    for name in ("SKILL_CANARY", "INSTALLED_SKILL_CANARY"):
        (home / "skills" / name).mkdir(parents=True, exist_ok=True)
        (home / "skills" / name / "SKILL.md").write_text(f"# {name}\n", encoding="utf-8")
    with ScriptedModelServer(model_script("input.txt"), model=MODEL) as server:
        (home / "config.yaml").write_text(
            f"model:\n  default: {MODEL}\n  provider: custom\n  base_url: {server.base_url}\n"
            "  api_mode: chat_completions\n  api_key: dummy-key\n"
            "telemetry:\n  shared_metrics:\n    enabled: true\n    send: false\n", encoding="utf-8")
        consent = read_profile_consent(home)  # the gate comes from the profile's own file (SM-6)
        engine = Engine().child()
        metrics = attach_shared_metrics(engine, home, enabled=consent.enabled, send=consent.send,
                                        endpoint=consent.endpoint, toolsets=TOOLSETS)
        checks.check("collection enabled from config.yaml", metrics is not None)
        if metrics is None:
            return
        host = Host(engine, platform="cli", model=MODEL, provider="custom", base_url=server.base_url,
                    api_mode="chat_completions")
        agent = ReferenceAgent(host, ChatCompletionsClient(server.base_url, api_key="dummy-key", timeout=10.0),
                               Workspace(workspace).tools(), max_iterations=2)
        with host.session() as session:
            answer = agent.run_turn(session, "PROMPT_CANARY")
        skills = SkillReporter(home, metrics=metrics, engine=engine)
        skills.created("SKILL_CANARY")
        skills.loaded("SKILL_CANARY")
        skills.loaded("SKILL_CANARY")
        skills.patched("SKILL_CANARY")
        skills.loaded("SKILL_CANARY")
        for step in (skills.edited, skills.stale, skills.restored, skills.archived, skills.restored):
            step("SKILL_CANARY")
        skills.installed("INSTALLED_SKILL_CANARY")
        metrics.close()  # shut the runtime down (flushes every counter)
        requests = server.requests
    forced = package_and_export(MetricsStore(home), SystemClock().now(), force=True)  # SM-57
    checks.check("forced package run", forced.error is None, forced.error)
    if leak:  # self-test of the scanner: must make the smoke fail
        (home / "telemetry" / "shared_metrics" / "leak.txt").write_text("PROMPT_CANARY")
    verify(home, answer, requests, checks)


def verify(home: Path, answer: str, requests: list[dict[str, Any]], checks: Checks) -> None:
    text = [json.dumps(r) for r in requests]
    checks.check("model server saw exactly 2 requests", len(requests) == 2, len(requests))
    checks.check("first request carries PROMPT_CANARY", bool(text) and "PROMPT_CANARY" in text[0])
    checks.check("second request carries the real read_file result",
                 len(text) > 1 and "TOOL_CALL_CANARY" in text[1] and "TOOL_RESULT_CANARY" in text[1])
    checks.check("answer contains RESPONSE_CANARY", "RESPONSE_CANARY" in answer, answer)
    store = MetricsStore(home)
    rows = counter_rows(store)
    by_name: dict[str, list[tuple[dict[str, Any], int]]] = {}
    for row in rows:
        by_name.setdefault(row["metric_name"], []).append((json.loads(row["dimensions_json"]), row["value"]))
    checks.check("counter names", set(by_name) == EXPECTED_NAMES, sorted(set(by_name) ^ EXPECTED_NAMES))
    checks.check("hermes.client.active: one row {} = 1", by_name.get("hermes.client.active") == [({}, 1)],
                 by_name.get("hermes.client.active"))
    for latched in ("hermes.client.first_usable", "hermes.client.first_successful_task"):
        checks.check(f"{latched} = 1", by_name.get(latched) == [({}, 1)], by_name.get(latched))
    checks.check("hermes.model_route.count", by_name.get("hermes.model_route.count") == [
        ({"model": MODEL.lower(), "provider": "custom"}, 2)], by_name.get("hermes.model_route.count"))
    checks.check("hermes.task_run.started", by_name.get("hermes.task_run.started") == [
        ({"entrypoint": "interactive", "execution_surface": "cli"}, 1)], by_name.get("hermes.task_run.started"))
    finished = by_name.get("hermes.task_run.finished", [])
    expected_task = {"end_reason": "completed", "outcome": "success", "termination": "none",
                     "entrypoint": "interactive", "execution_surface": "cli", "model_call_count_bucket": "2",
                     "tool_call_count_bucket": "1", "retry_count_bucket": "0"}
    checks.check("hermes.task_run.finished", len(finished) == 1 and finished[0][1] == 1 and all(
        finished[0][0].get(k) == v for k, v in expected_task.items()) and "duration_bucket" in finished[0][0], finished)
    tools = by_name.get("hermes.tool_call.count", [])
    expected_tool = {"approval_outcome": "not_required", "outcome": "success", "retry_count_bucket": "unknown",
                     "tool_category": "file"}
    checks.check("hermes.tool_call.count", len(tools) == 1 and tools[0][1] == 1 and all(
        tools[0][0].get(k) == v for k, v in expected_tool.items())
        and tools[0][0].get("latency_bucket") not in (None, "unknown"), tools)
    actions = {d["action"] for d, _ in by_name.get("hermes.skill.lifecycle.count", [])}
    checks.check("skill lifecycle actions", actions == {"archived", "created", "edited", "installed", "patched",
                                                        "restored", "stale"}, sorted(actions))
    loads = {(d["reuse_state"], d["post_patch_state"], d["use_count_bucket"])
             for d, _ in by_name.get("hermes.skill.load.count", [])}
    checks.check("skill load states", loads == {("first_use", "not_applicable", "1"), ("reused", "no_new_patch", "2"),
                                                ("reused", "reused_after_patch", "3_to_5")}, sorted(loads))
    checks.check("every counter packaged", all(r["packaged_value"] == r["value"] for r in rows))
    files = sorted(store.outbox.glob("*.json"))
    checks.check("at least one package file", len(files) >= 1)
    install_ids = set()
    for path in files:
        payload = json.loads(path.read_text(encoding="utf-8"))
        problems = package_errors(payload)
        checks.check(f"{path.name} validates against {payload.get('schema_version')}",
                     not problems and payload.get("schema_version") == "hermes.shared_metrics.v2", problems[:2])
        checks.check(f"{path.name} resource has exactly four keys", sorted(payload.get("resource", {})) == [
            "architecture", "hermes_version", "install_method", "os_family"])
        install_ids.add(payload.get("install_id"))
    pseudonym = next(iter(install_ids), "")
    checks.check("one random install_id (UUID v4) across packages", len(install_ids) == 1
                 and uuid.UUID(str(pseudonym)).version == 4, install_ids)
    blob = b"".join(p.read_bytes() for p in (home / "telemetry").rglob("*") if p.is_file())
    leaked = [c for c in CANARIES if c.encode() in blob]
    checks.check(f"no canary in any of {sum(1 for p in (home / 'telemetry').rglob('*') if p.is_file())} files "
                 "under telemetry/", not leaked, leaked)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", help="use (and keep) this HERMES_HOME instead of a temporary one")
    parser.add_argument("--self-test-leak", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="hermes-smoke-"))
    home = Path(args.home).expanduser() if args.home else scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    workspace = scratch / "workspace"
    workspace.mkdir()
    checks = Checks()
    try:
        run(home, workspace, checks, leak=args.self_test_leak)
    except Exception as exc:  # report, do not hide
        checks.check("smoke run", False, f"{type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(scratch if not args.home else workspace, ignore_errors=True)
    print("shared-metrics smoke test (spec 05 SM-94/95)")
    print("\n".join(checks.lines))
    print(f"{'PASS' if not checks.failed else 'FAIL'}: {len(checks.lines) - len(checks.failed)} of "
          f"{len(checks.lines)} checks passed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
