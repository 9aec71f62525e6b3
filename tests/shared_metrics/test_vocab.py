"""Buckets, enums and normalisers (SM-19, SM-24, SM-25, SM-37..SM-45)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export import classify
from hermes_pipeline.shared_metrics import vocab as v
from hermes_pipeline.shared_metrics.resource import (
    normalise_architecture,
    normalise_install_method,
    normalise_os,
    normalise_version,
)


@pytest.mark.parametrize(("n", "bucket"), [(0, "0"), (1, "1"), (2, "2"), (3, "3_to_5"), (5, "3_to_5"),
                                           (6, "6_to_10"), (10, "6_to_10"), (11, "gte_11"), (10_000, "gte_11")])
def test_sm37_count_buckets(n: int, bucket: str) -> None:
    assert v.count_bucket(n) == bucket


@pytest.mark.parametrize(("value", "bucket"), [(0, "0"), (4, "3_to_5"), (True, "unknown"), (-1, "unknown"),
                                               (None, "unknown"), ("2", "unknown"), (2.0, "unknown")])
def test_sm26_tool_retry_bucket_only_from_explicit_non_boolean_integers(value: object, bucket: str) -> None:
    """SM-26: Tool retry bucket only from explicit non boolean integers."""
    assert v.retry_bucket(value) == bucket


@pytest.mark.parametrize(("ms", "bucket"), [(0, "lt_1s"), (999, "lt_1s"), (1_000, "1s_to_5s"), (4_999, "1s_to_5s"),
                                            (5_000, "5s_to_30s"), (30_000, "30s_to_2m"), (119_999, "30s_to_2m"),
                                            (120_000, "2m_to_10m"), (600_000, "gte_10m")])
def test_sm38_duration_buckets_lower_bound_inclusive(ms: int, bucket: str) -> None:
    """SM-38: Duration buckets lower bound inclusive."""
    assert v.duration_bucket(ms) == bucket


@pytest.mark.parametrize(("ms", "bucket"), [(None, "unknown"), (0, "lt_100ms"), (99, "lt_100ms"),
                                            (100, "100ms_to_250ms"), (250, "250ms_to_500ms"), (500, "500ms_to_1s"),
                                            (1_000, "1s_to_2s"), (2_000, "2s_to_5s"), (5_000, "5s_to_10s"),
                                            (10_000, "10s_to_30s"), (30_000, "gte_30s")])
def test_sm39_latency_buckets(ms: int | None, bucket: str) -> None:
    """SM-39: Latency buckets."""
    assert v.latency_bucket(ms) == bucket


@given(st.integers(min_value=0, max_value=10**9))
def test_sm37_sm38_sm39_buckets_always_in_their_closed_enums(n: int) -> None:
    """SM-37 / SM-38 / SM-39: Buckets always in their closed enums."""
    assert v.count_bucket(n) in v.COUNT_BUCKETS
    assert v.duration_bucket(n) in v.DURATION_BUCKETS
    assert v.latency_bucket(n) in v.LATENCY_BUCKETS


@pytest.mark.parametrize(("status", "outcome"), [("ok", "success"), ("SUCCESS", "success"), ("error", "failed"),
                                                 ("failed", "failed"), ("blocked", "blocked"),
                                                 ("cancelled", "cancelled"), ("timeout", "timed_out"),
                                                 ("timed_out", "timed_out"), ("weird", "unknown"), (None, "unknown")])
def test_sm24_tool_outcome(status: object, outcome: str) -> None:
    assert v.tool_outcome(status) == outcome


@pytest.mark.parametrize(("choice", "outcome"), [("once", "approved"), ("session", "approved"), ("always", "approved"),
                                                 ("approve", "approved"), ("smart_approve", "approved"),
                                                 ("deny", "denied"), ("smart_deny", "denied"),
                                                 ("timeout", "timed_out"), ("cancelled", "unknown"),
                                                 ("maybe", "unknown"), ("", "unknown")])
def test_sm24_approval_outcome(choice: str, outcome: str) -> None:
    assert v.approval_outcome(choice) == outcome


@pytest.mark.parametrize(("toolset", "category"), [
    (None, "unknown"), ("", "unknown"), ("file", "file"), ("Terminal", "terminal"), ("web", "web"),
    ("mcp-github", "mcp"), ("browser_use", "browser"), ("image_gen", "media"), ("tts", "media"),
    ("vision", "media"), ("homeassistant", "home_automation"), ("clarify", "planning"), ("todo", "planning"),
    ("kanban", "planning"), ("session_search", "memory"), ("cronjob", "scheduler"), ("skills", "skill"),
    ("x_search", "web"), ("discord_admin", "communication"), ("slack", "communication"),
    ("hermes-yuanbao", "communication"), ("acme-custom", "other"), ("my_plugin_tools", "other"),
])
def test_sm25_tool_category_from_toolset(toolset: str | None, category: str) -> None:
    assert v.tool_category(toolset) == category


@given(st.text(max_size=40))
def test_sm25_sm43_tool_category_is_total_and_never_echoes_custom_names(name: str) -> None:
    """SM-25 / SM-43: Tool category is total and never echoes custom names."""
    assert v.tool_category(name) in v.TOOL_CATEGORIES


_TOOLSETS = st.one_of(st.sampled_from(["file", "Terminal", " mcp-x ", "browser_use", "slack", "todo", "acme", ""]),
                      st.text(max_size=12), st.none())


@given(st.lists(_TOOLSETS, max_size=40))
def test_sm25_a_remembered_toolset_category_is_the_rules_answer(toolsets: list[str | None]) -> None:
    """SM-25: the category of a toolset seen before (remembered) is what the rules give, every time it is asked."""
    for toolset in toolsets + toolsets:
        assert v.tool_category(toolset) == classify._category(toolset)


def test_sm25_the_remembered_toolset_categories_stay_bounded() -> None:
    for i in range(3000):
        assert v.tool_category(f"mcp-{i}") == "mcp"
    assert 0 < len(classify._categories) <= 1024
    assert v.tool_category("mcp-0") == "mcp" and v.tool_category("file") == "file"


@pytest.mark.parametrize(("platform", "surface"), [("cli", "cli"), ("TUI", "tui"), ("desktop", "desktop"),
                                                   ("api_server", "api"), ("api", "api"), ("cron", "scheduled_task"),
                                                   ("scheduler", "scheduled_task"), ("batch", "batch"),
                                                   ("python", "python"), ("gateway", "gateway"),
                                                   ("telegram", "gateway"), ("discord", "gateway"),
                                                   ("", "unknown"), (None, "unknown"), ("my-host", "other")])
def test_sm41_execution_surface(platform: object, surface: str) -> None:
    """SM-41: Execution surface."""
    assert v.execution_surface(platform) == surface


def test_sm42_entrypoint_declared_delegated_then_surface() -> None:
    """SM-42: Entrypoint declared delegated then surface."""
    assert v.entrypoint("cli", declared="background") == "background"
    assert v.entrypoint("cli", declared="nonsense") == "interactive"
    assert v.entrypoint("gateway", delegated=True) == "delegated"
    assert [v.entrypoint(s) for s in ("cli", "desktop", "tui", "gateway", "api", "scheduled_task", "batch",
                                      "python", "other", "unknown")] == [
        "interactive", "interactive", "interactive", "gateway_message", "api", "scheduled_task", "batch", "python",
        "other", "unknown"]


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"interrupted": True, "completed": True}, ("cancelled", "user_cancelled", "user_cancelled")),
    ({"reason": "interrupted_by_user"}, ("cancelled", "user_cancelled", "user_cancelled")),
    ({"reason": "Cancelled"}, ("cancelled", "user_cancelled", "user_cancelled")),
    ({"reason": "timeout"}, ("timed_out", "timed_out", "timed_out")),
    ({"reason": "timed_out", "completed": True}, ("timed_out", "timed_out", "timed_out")),
    ({"reason": "max_iterations"}, ("failed", "iteration_limit", "system_aborted")),
    ({"reason": "budget_exhausted"}, ("failed", "iteration_limit", "system_aborted")),
    ({"reason": "approval_denied"}, ("failed", "approval_denied", "none")),
    ({"reason": "approval rejected"}, ("failed", "approval_denied", "none")),
    ({"reason": "guardrail_block"}, ("failed", "guardrail_blocked", "system_aborted")),
    ({"reason": "system_aborted"}, ("failed", "system_aborted", "system_aborted")),
    ({"completed": True, "reason": "completed"}, ("success", "completed", "none")),
    ({"failed": True}, ("failed", "failed", "none")),
    ({"reason": "error"}, ("failed", "failed", "none")),
    ({}, ("unknown", "unknown", "unknown")),
])
def test_sm19_terminal_state_table_first_match_wins(kwargs: dict[str, object], expected: tuple[str, str, str]) -> None:
    assert v.terminal_state(**kwargs) == expected


def test_sm19_exception_to_exit_reason() -> None:
    import asyncio

    assert v.exit_reason_of(None) is None
    assert v.exit_reason_of(KeyboardInterrupt()) == "interrupted_by_user"
    assert v.exit_reason_of(InterruptedError()) == "interrupted_by_user"
    assert v.exit_reason_of(asyncio.CancelledError()) == "interrupted_by_user"
    assert v.exit_reason_of(TimeoutError()) == "timed_out"
    assert v.exit_reason_of(ValueError("x")) == "system_aborted"


@pytest.mark.parametrize(("raw", "model"), [("NVIDIA/Nemotron-3-Ultra", "nvidia/nemotron-3-ultra"),
                                            ("  gpt-4.1-mini-2025-04-14 ", "gpt-4.1-mini-2025-04-14"),
                                            ("", "unknown"), (None, "unknown"), ("has space", "unknown"),
                                            ("-leading-dash", "unknown"), ("x" * 257, "unknown"),
                                            ("m" * 256, "m" * 256), ("https://host/v1?q=1", "unknown")])
def test_sm44_model_identifiers(raw: object, model: str) -> None:
    """SM-44: Model identifiers."""
    assert v.model_id(raw) == model


def test_sm44_provider_identifiers_bounded_at_64() -> None:
    """SM-44: Provider identifiers bounded at 64."""
    assert v.provider_id("OpenRouter") == "openrouter"
    assert v.provider_id("p" * 64) == "p" * 64
    assert v.provider_id("p" * 65) == "unknown"


@given(st.text(max_size=300))
def test_sm3_sm43_model_normaliser_is_total_and_output_is_a_valid_identifier(raw: str) -> None:
    """SM-3 / SM-43: Model normaliser is total and output is a valid identifier."""
    out = v.model_id(raw)
    assert out == "unknown" or (v.IDENTIFIER_RE.match(out) and out == raw.strip().lower())


@pytest.mark.parametrize(("fn", "raw", "out"), [
    (normalise_os, "linux", "linux"), (normalise_os, "darwin", "macos"), (normalise_os, "win32", "windows"),
    (normalise_os, "cygwin", "windows"), (normalise_os, "freebsd13", "unknown"),
    (normalise_architecture, "AMD64", "x86_64"), (normalise_architecture, "x64", "x86_64"),
    (normalise_architecture, "aarch64", "arm64"), (normalise_architecture, "i686", "x86"),
    (normalise_architecture, "armv7l", "arm"), (normalise_architecture, "riscv64", "unknown"),
    (normalise_install_method, "nix", "nixos"), (normalise_install_method, "home-manager", "home-manager"),
    (normalise_install_method, "conda", "unknown"),
    (normalise_version, "0.11.0", "0.11.0"), (normalise_version, "/home/alice/src", "unknown"),
    (normalise_version, "", "unknown"), (normalise_version, "1" * 65, "unknown"),
    (normalise_version, "host.example.com build", "unknown"),
])
def test_sm45_resource_fields_normalised_never_raw(fn: object, raw: str, out: str) -> None:
    assert fn(raw) == out  # type: ignore[operator]


def test_sm32_skill_load_states() -> None:
    """SM-32: Skill load states."""
    assert v.skill_load_states(1, False, False) == ("first_use", "not_applicable", "1")
    assert v.skill_load_states(2, True, False) == ("reused", "no_new_patch", "2")
    assert v.skill_load_states(3, True, True) == ("reused", "reused_after_patch", "3_to_5")
    assert v.skill_load_states(1, False, True) is None  # reuse_after_patch without reused is invalid
    assert v.skill_load_states(2, False, False) is None


def test_sm36_setup_normalisation() -> None:
    assert v.setup_mode("QUICK") == "quick"
    assert v.setup_mode("wizard") == "unknown"
    assert v.setup_finish("success", "execution") == ("success", "none")
    assert v.setup_finish("exploded", None) == ("failed", "unknown")
    assert v.setup_finish("cancelled", "execution") == ("cancelled", "execution")
