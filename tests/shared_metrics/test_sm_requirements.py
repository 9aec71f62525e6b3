"""Shared-metrics rules (spec 05) that no other test file names: allowed values, closed enums,
per-profile scope and ``install_id``, local-only latency samples, split periods, at-least-once delivery,
and running without a pipeline file or the native runtime.

Each test names the requirement it proves; the rule is restated in its docstring.
"""

from __future__ import annotations

import json
import random
import re
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.profile import open_profile
from hermes_pipeline.shared_metrics import HttpxTransport, ManualClock, MetricsStore, SharedMetrics
from hermes_pipeline.shared_metrics import attach_shared_metrics, validate_package
from hermes_pipeline.shared_metrics import packages as pk
from hermes_pipeline.shared_metrics import sender as sd
from hermes_pipeline.shared_metrics import store as st
from hermes_pipeline.shared_metrics import vocab
from hermes_pipeline.shared_metrics.clock import stamp
from hermes_pipeline.shared_metrics.consent import reconcile, windows
from hermes_pipeline.shared_metrics.report import store_status
from hermes_pipeline.shared_metrics.schemas import load_package_schema

from tests._spec import SPEC_DIR
from ..config.conftest import Env, env, process  # noqa: F401  (fixtures: isolated HOME / HERMES_HOME, process engine)
from .conftest import RESOURCE, T0, TOOLSETS, response, rows, totals
from .test_packages import add, payloads

SPEC = SPEC_DIR / "05-shared-metrics.md"
CANARY = "CANARY_c4n4ry"


def run_task(host: Host, metrics: SharedMetrics, *, tool: str = "read_file", prompt: str = "q") -> None:
    """One task: an LLM call answered with a tool call, the tool, an approval, a final answer."""
    with host.session() as session, session.turn(prompt) as turn:
        call = {"id": "c1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
        turn.call_llm({"model": "m", "messages": []}, lambda req: response(None, [call]))

        def body(**kw: Any) -> str:
            with turn.approval(f"run {CANARY}") as approval:
                approval.resolve("once")
            return f"result {CANARY}"

        turn.call_tool(tool, {"path": f"/home/{CANARY}"}, body, tool_call_id="c1")
        turn.call_llm({"model": "m", "messages": []}, lambda req: response(f"answer {CANARY}"))
        turn.complete(f"answer {CANARY}")
    assert metrics.flush()


def _schema_enums() -> dict[str, set[str]]:
    """Every ``enum`` of the v2 package schema, by the name of the property or definition holding it."""
    found: dict[str, set[str]] = {}

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            if "enum" in node:
                found.setdefault(key, set()).update(node["enum"])
            for k, v in node.items():
                walk(v, k if k not in ("properties", "$defs", "items", "anyOf", "oneOf", "allOf") else key)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)

    walk(load_package_schema("hermes.shared_metrics.v2"), "")
    return found


def test_sm_2_packages_hold_only_allowed_values(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-2: package values are only the closed enums and buckets, normalised model and provider
    identifiers, the bounded client resource, the random ``install_id`` and envelope fields. A package
    built from tasks with free text, paths and a custom tool name validates against the closed v2
    schema, and every string in it is an enum member, an identifier, or an envelope value."""
    run_task(mhost, metrics)
    run_task(mhost, metrics, tool="my_tool", prompt=f"second {CANARY}")
    result = metrics.export_due(force=True)
    assert result.error is None and result.created
    enums = set().union(*_schema_enums().values()) | vocab.COUNT_BUCKETS | vocab.DURATION_BUCKETS
    names = {m["name"] for p in payloads(metrics.store) for m in p["metrics"]}
    assert {"hermes.tool_call.count", "hermes.task_run.finished", "hermes.model_route.count"} <= names
    for payload in payloads(metrics.store):
        validate_package(payload, expect="hermes.shared_metrics.v2")  # raises PackageInvalid when not
        assert CANARY.lower() not in json.dumps(payload).lower()
        envelope = {payload[k] for k in ("schema_version", "package_id", "install_id", "period_start",
                                        "period_end", "generated_at")}
        for metric in payload["metrics"]:
            for key, value in metric["dimensions"].items():
                if key in ("model", "provider"):
                    assert vocab.IDENTIFIER_RE.match(value) or value == "unknown", (key, value)
                else:
                    assert value in enums, (metric["name"], key, value)
        assert set(payload["resource"].values()) <= enums | {payload["resource"]["hermes_version"]}
        assert all(isinstance(v, str) for v in envelope)


# The closed enums of spec 05 §5 (SM-40), one line each as the table gives them.
SPEC_ENUMS: dict[str, set[str]] = {
    "execution_surface": {"api", "batch", "cli", "desktop", "gateway", "other", "python", "scheduled_task", "tui",
                          "unknown"},
    "entrypoint": {"api", "background", "batch", "delegated", "gateway_message", "interactive", "other", "python",
                   "scheduled_task", "unknown"},
    "task outcome": {"cancelled", "failed", "success", "timed_out", "unknown"},
    "end_reason": {"approval_denied", "completed", "failed", "guardrail_blocked", "iteration_limit", "system_aborted",
                   "timed_out", "unknown", "user_cancelled"},
    "termination": {"none", "system_aborted", "timed_out", "unknown", "user_cancelled"},
    "tool outcome": {"blocked", "cancelled", "failed", "success", "timed_out", "unknown"},
    "approval_outcome (tool counter)": {"approved", "denied", "not_required", "timed_out", "unknown"},
    "approval outcome (approval counter)": {"approved", "denied", "timed_out", "unknown"},
    "attribution": {"tool_call", "unattributed"},
    "tool_category": {"browser", "code_execution", "communication", "computer_use", "delegation", "file",
                      "home_automation", "mcp", "media", "memory", "other", "planning", "project", "scheduler",
                      "skill", "terminal", "unknown", "web"},
    "skill action": {"archived", "created", "edited", "installed", "patched", "restored", "stale"},
    "skill provenance": {"agent_created", "external", "installed", "local", "unknown"},
    "reuse_state": {"first_use", "reused"},
    "post_patch_state": {"no_new_patch", "not_applicable", "reused_after_patch"},
    "setup mode": {"full", "interactive", "portal", "quick", "reset", "section", "unknown"},
    "setup outcome": {"cancelled", "failed", "success"},
    "setup failure_stage": {"execution", "none", "unknown"},
    "os_family": {"linux", "macos", "unknown", "windows"},
    "architecture": {"arm", "arm64", "unknown", "x86", "x86_64"},
    "install_method (v2)": {"apt", "docker", "git", "home-manager", "homebrew", "nixos", "pip", "unknown"},
}

VOCAB_ENUMS: dict[str, frozenset[str]] = {
    "execution_surface": vocab.EXECUTION_SURFACES, "entrypoint": vocab.ENTRYPOINTS,
    "task outcome": vocab.TASK_OUTCOMES, "end_reason": vocab.END_REASONS, "termination": vocab.TERMINATIONS,
    "tool outcome": vocab.TOOL_OUTCOMES, "approval_outcome (tool counter)": vocab.TOOL_APPROVAL_OUTCOMES,
    "approval outcome (approval counter)": vocab.APPROVAL_OUTCOMES, "attribution": vocab.ATTRIBUTIONS,
    "tool_category": vocab.TOOL_CATEGORIES,
    "skill action": vocab.SKILL_ACTIONS, "skill provenance": vocab.SKILL_PROVENANCES,
    "reuse_state": vocab.REUSE_STATES, "post_patch_state": vocab.POST_PATCH_STATES, "setup mode": vocab.SETUP_MODES,
    "setup outcome": vocab.SETUP_OUTCOMES, "setup failure_stage": vocab.SETUP_FAILURE_STAGES,
    "os_family": vocab.OS_FAMILIES, "architecture": vocab.ARCHITECTURES,
    "install_method (v2)": vocab.INSTALL_METHODS,
}


def test_sm_40_closed_enums_are_exactly_the_spec_table() -> None:
    """SM-40: the closed enums are exact strings and nothing else: the vocabulary the projection
    checks against is exactly the spec's table (and, when the spec is present, the table in it
    is the one copied here)."""
    if SPEC.is_file():
        text = SPEC.read_text(encoding="utf-8")
        table = text[text.index("**SM-40**"):text.index("**SM-41**")]
        from_spec = {}
        for line in table.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 2 and cells[1].startswith("`"):
                from_spec[cells[0].replace("`", "")] = set(re.findall(r"`([^`]+)`", cells[1]))
        assert from_spec == SPEC_ENUMS
    for name, values in SPEC_ENUMS.items():
        assert set(VOCAB_ENUMS[name]) == values, name


def test_sm_9_collection_runs_without_pipeline_file_exporters_or_native_runtime(
        env: Env, process: Engine, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """SM-9: shared metrics run when no ``plugins.toml`` is selected, without any observability
    exporter and without the native NeMo Relay runtime: a profile whose ``config.yaml`` enables
    collection counts a tool call with nothing else configured."""
    monkeypatch.setitem(sys.modules, "nemo_relay", None)
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    env.hermes_home.mkdir(parents=True, exist_ok=True)
    (env.hermes_home / "config.yaml").write_text("telemetry:\n  shared_metrics:\n    enabled: true\n")
    profile = open_profile(env.hermes_home)
    try:
        assert "shared_metrics" in profile.consumers
        assert process.plugins.names() == []  # no pipeline component, no exporter
        with profile.host(model="m", platform="cli").session() as session, session.turn("q") as turn:
            turn.call_tool("read_file", {"path": "x"}, lambda path: "ok")
        assert profile.consumers["shared_metrics"].flush()
        assert totals(MetricsStore(env.hermes_home), "hermes.tool_call.count") == 1
    finally:
        profile.close()


def test_sm_8_reload_switches_collection_off_and_on(env: Env, process: Engine,  # noqa: F811
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """SM-8: the collection gate follows the profile's cached ``config.yaml``; after an explicit reload with
    ``enabled: false`` the metrics subscriber is detached and counters stop (local state kept), and a reload
    with ``enabled: true`` attaches one again."""
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    env.hermes_home.mkdir(parents=True, exist_ok=True)
    config = env.hermes_home / "config.yaml"
    config.write_text("telemetry:\n  shared_metrics:\n    enabled: true\n")
    profile = open_profile(env.hermes_home)

    def one_tool_call() -> None:
        with profile.host(model="m", platform="cli").session() as session, session.turn("q") as turn:
            turn.call_tool("read_file", {"path": "x"}, lambda path: "ok")

    try:
        one_tool_call()
        assert profile.consumers["shared_metrics"].flush()
        assert totals(MetricsStore(env.hermes_home), "hermes.tool_call.count") == 1
        config.write_text("telemetry:\n  shared_metrics:\n    enabled: false\n")
        assert profile.settings.shared_metrics.enabled is True  # cached until the explicit reload
        profile.reload()
        assert "shared_metrics" not in profile.consumers
        one_tool_call()
        assert totals(MetricsStore(env.hermes_home), "hermes.tool_call.count") == 1  # kept, not growing
        config.write_text("telemetry:\n  shared_metrics:\n    enabled: true\n")
        profile.reload()
        one_tool_call()
        assert profile.consumers["shared_metrics"].flush()
        assert totals(MetricsStore(env.hermes_home), "hermes.tool_call.count") == 2
    finally:
        profile.close()


def test_sm_10_one_store_install_id_and_consent_table_per_home(tmp_path: Path) -> None:
    """SM-10: one store, one ``install_id`` and one consent-window table per ``HERMES_HOME``; two
    profiles in one process stay isolated: each counts only its own tasks, and their ids and consent
    windows differ."""
    process = Engine()
    homes = [tmp_path / "alpha", tmp_path / "beta"]
    handles = []
    for home in homes:
        home.mkdir()
        handle = attach_shared_metrics(process.child(), home, enabled=True, clock=ManualClock(T0),
                                       toolsets=TOOLSETS, resource=RESOURCE)
        assert handle is not None
        handles.append(handle)
    try:
        for handle, n in zip(handles, (1, 3), strict=True):
            host = Host(handle.engine, platform="cli", model="m")
            for _ in range(n):
                run_task(host, handle)
        assert [totals(h.store, "hermes.task_run.finished") for h in handles] == [1, 3]
        assert handles[0].store.directory != handles[1].store.directory
        ids = [store_status(h.store)["install_id"] for h in handles]
        assert all(ids) and ids[0] != ids[1]
        conn = handles[0].store.connect()
        reconcile(conn, True, T0)
        conn.close()
        opened = []
        for h in handles:
            conn = h.store.connect()
            opened.append(len(windows(conn)))
            conn.close()
        assert opened == [1, 0]
    finally:
        for h in handles:
            h.close()


def test_sm_50_latency_samples_stay_local(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-50: ``local_latency_samples`` exist only for local p50/p90 summaries: they are recorded and
    summarised by the status report, but never packaged or sent."""
    for _ in range(3):
        run_task(mhost, metrics)
    conn = metrics.store.connect()
    samples = conn.execute("SELECT COUNT(*) FROM local_latency_samples").fetchone()[0]
    conn.close()
    assert samples > 0
    latency = store_status(metrics.store)["latency_ms"]
    assert any(v["p50"] is not None for v in latency.values())
    assert metrics.export_due(force=True).created
    text = json.dumps(payloads(metrics.store))
    assert "latency_samples" not in text and "p50" not in text and "duration_ms" not in text
    for package in payloads(metrics.store):
        assert {m["name"] for m in package["metrics"]} <= {m["name"] for m in rows_names(metrics.store)}


def rows_names(store: MetricsStore) -> list[dict[str, str]]:
    return [{"name": r["metric_name"]} for r in rows(store)]


def test_sm_58_one_period_split_across_packages_of_two_days(home: Path) -> None:
    """SM-58: one period may be split across packages created on different days (the head on day D,
    the tail on D+1); summing the packages of the period gives the counters, and the latched
    ``hermes.client.active`` appears at most once per (period, resource)."""
    store = MetricsStore(home)
    day = "2026-09-01"

    def active(now: Any) -> bool:
        conn = store.connect()
        with st.transaction(conn):
            latched = st.client_active(conn, now, RESOURCE)
        conn.close()
        return latched

    assert active(T0)
    add(store, day, n=2)
    head = pk.package_and_export(store, T0 + timedelta(hours=1), force=True)
    assert active(T0 + timedelta(hours=5)) is False  # latched for 24 hours
    add(store, day, n=3)
    tail = pk.package_and_export(store, T0 + timedelta(days=1), force=True)
    assert head.error is None and tail.error is None and head.created and tail.created
    packages = [p for p in payloads(store) if p["period_start"].startswith(day)]
    assert len(packages) == 2 and len({p["generated_at"][:10] for p in packages}) == 2
    tools = sum(m["value"] for p in packages for m in p["metrics"] if m["name"] == "hermes.tool_call.count")
    assert tools == 5
    active_entries = [m for p in packages for m in p["metrics"] if m["name"] == "hermes.client.active"]
    assert len(active_entries) == 1 and active_entries[0]["value"] == 1


def test_sm_66_and_sm_67_install_id_is_random_per_home_and_stable(tmp_path: Path) -> None:
    """SM-66 / SM-67: every package carries ``install_id``, a random UUID v4 generated locally (not
    derived from host, path or user: two homes with identical content get different ids); its scope
    is one ``HERMES_HOME``, and it is the same in every package of that profile."""
    ids: list[set[str]] = []
    for name in ("one", "two"):
        home = tmp_path / name
        home.mkdir()
        store = MetricsStore(home)
        for offset, period in enumerate(("2026-09-01", "2026-09-02", "2026-09-03")):
            add(store, period)
            assert pk.package_and_export(store, T0 + timedelta(days=2, minutes=offset), force=True).created
        found = {p["install_id"] for p in payloads(store)}
        assert len(payloads(store)) == 3 and len(found) == 1
        ids.append(found)
    (a,), (b,) = ids
    assert a != b
    for value in (a, b):
        assert uuid.UUID(value).version == 4 and str(uuid.UUID(value)) == value


def test_sm_84_a_lost_response_gives_a_byte_identical_duplicate(home: Path) -> None:
    """SM-84: delivery is at least once: when the response to a POST is lost after the server got
    the body, the retry sends the package again, byte-identical, and the package ends up sent."""
    store = MetricsStore(home)
    conn = store.connect()
    reconcile(conn, True, T0 - timedelta(days=1))
    conn.close()
    add(store, "2026-09-01")
    assert pk.package_and_export(store, T0, force=True).exported
    bodies: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(request.content)
        if len(bodies) == 1:
            raise httpx.ReadTimeout("response lost")
        return httpx.Response(202, content=b'{"ok": true}')

    url = "https://ingest.example.test/v1/packages"
    sender = sd.Sender(store, endpoint=url, consent=lambda: (True, True, url),
                       clock=ManualClock(T0 + timedelta(days=1, hours=2)),
                       transport=HttpxTransport(httpx.MockTransport(handler)), rng=random.Random(1),
                       sleep=lambda s: None)
    assert sender.run_pass()["sent"] == 1
    assert len(bodies) == 2 and bodies[0] == bodies[1]


def test_sm_75_claims_one_due_row_at_a_time_oldest_first_with_a_lease(home: Path) -> None:
    """SM-75: a claim takes one exported, unsent or pending row whose ``next_attempt_at`` is due,
    oldest ``created_at`` first; it sets ``send_state = 'pending'``, counts the attempt, leases the
    row for 300 s and gives it a fresh UUID v4 ``claim_token``; a row whose next attempt lies in the
    future is not claimed."""
    store = MetricsStore(home)
    conn = store.connect()
    reconcile(conn, True, T0 - timedelta(days=5))  # consent since before every period
    conn.close()
    for index, period in enumerate(("2026-09-01", "2026-08-31", "2026-08-30")):
        add(store, period)
        assert pk.package_and_export(store, T0 + timedelta(minutes=index), force=True).exported
    now = T0 + timedelta(days=1, hours=2)

    def table() -> dict[str, dict[str, Any]]:
        conn = store.connect()
        conn.row_factory = lambda c, r: dict(zip([d[0] for d in c.description], r, strict=True))
        found = {r["period_start"][:10]: r for r in conn.execute("SELECT * FROM package_outbox").fetchall()}
        conn.close()
        return found

    later = stamp(now + timedelta(hours=1))
    conn = store.connect()
    with st.transaction(conn):
        conn.execute("UPDATE package_outbox SET send_state = 'pending', next_attempt_at = ? "
                     "WHERE period_start LIKE '2026-08-31%'", (later,))
    conn.close()
    seen: list[tuple[str, dict[str, Any]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        period = json.loads(request.content)["period_start"][:10]
        seen.append((period, table()[period]))
        return httpx.Response(202, content=b"{}")

    url = "https://ingest.example.test/v1/packages"
    sender = sd.Sender(store, endpoint=url, consent=lambda: (True, True, url), clock=ManualClock(now),
                       transport=HttpxTransport(httpx.MockTransport(handler)), rng=random.Random(1),
                       sleep=lambda s: None)
    assert sender.run_pass()["sent"] == 2
    assert [period for period, _ in seen] == ["2026-09-01", "2026-08-30"]  # by created_at; 08-31 not due
    tokens = set()
    for _, row in seen:
        assert row["send_state"] == "pending" and row["send_attempts"] == 1
        assert row["next_attempt_at"] == stamp(now + timedelta(seconds=300))
        assert uuid.UUID(row["claim_token"]).version == 4
        tokens.add(row["claim_token"])
    assert len(tokens) == 2
    assert table()["2026-08-31"]["send_attempts"] == 0 and table()["2026-08-31"]["next_attempt_at"] == later
