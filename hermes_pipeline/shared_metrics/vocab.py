"""The closed vocabularies, buckets and normalisers of the shared-metrics accounting (spec 05 §4-§6).

Every function here is total (SM-43): a value that cannot be mapped becomes ``unknown`` (or the
enum's documented fallback); a raw input string is never passed through.
"""

from __future__ import annotations

import re
from typing import Final

from ..engine.scrub import safe_scrub
from ..export.classify import TOOL_CATEGORIES as TOOL_CATEGORIES  # SM-25: by toolset, shared with the exporters
from ..export.classify import tool_category as tool_category
from ..export.surfaces import ENTRYPOINTS as ENTRYPOINTS  # SM-40..42: shared with the observability store
from ..export.surfaces import EXECUTION_SURFACES as EXECUTION_SURFACES
from ..export.surfaces import GATEWAY_PLATFORMS as GATEWAY_PLATFORMS
from ..export.surfaces import entrypoint as entrypoint
from ..export.surfaces import execution_surface as execution_surface

# ----------------------------------------------------------------------- closed enums: nothing else is valid (SM-40)

TASK_OUTCOMES: Final = frozenset({"cancelled", "failed", "success", "timed_out", "unknown"})
END_REASONS: Final = frozenset({"approval_denied", "completed", "failed", "guardrail_blocked", "iteration_limit",
                                "system_aborted", "timed_out", "unknown", "user_cancelled"})
TERMINATIONS: Final = frozenset({"none", "system_aborted", "timed_out", "unknown", "user_cancelled"})
TOOL_OUTCOMES: Final = frozenset({"blocked", "cancelled", "failed", "success", "timed_out", "unknown"})
TOOL_APPROVAL_OUTCOMES: Final = frozenset({"approved", "denied", "not_required", "timed_out", "unknown"})
APPROVAL_OUTCOMES: Final = frozenset({"approved", "denied", "timed_out", "unknown"})
ATTRIBUTIONS: Final = frozenset({"tool_call", "unattributed"})
SKILL_ACTIONS: Final = frozenset({"archived", "created", "edited", "installed", "patched", "restored", "stale"})
SKILL_PROVENANCES: Final = frozenset({"agent_created", "external", "installed", "local", "unknown"})
REUSE_STATES: Final = frozenset({"first_use", "reused"})
POST_PATCH_STATES: Final = frozenset({"no_new_patch", "not_applicable", "reused_after_patch"})
SETUP_MODES: Final = frozenset({"full", "interactive", "portal", "quick", "reset", "section", "unknown"})
SETUP_OUTCOMES: Final = frozenset({"cancelled", "failed", "success"})
SETUP_FAILURE_STAGES: Final = frozenset({"execution", "none", "unknown"})
OS_FAMILIES: Final = frozenset({"linux", "macos", "unknown", "windows"})
ARCHITECTURES: Final = frozenset({"arm", "arm64", "unknown", "x86", "x86_64"})
INSTALL_METHODS: Final = frozenset({"apt", "docker", "git", "home-manager", "homebrew", "nixos", "pip", "unknown"})

# --------------------------------------- count, duration and latency buckets, lower bound inclusive (SM-37..39)

COUNT_BUCKETS: Final = frozenset({"0", "1", "2", "3_to_5", "6_to_10", "gte_11"})
TOOL_RETRY_BUCKETS: Final = COUNT_BUCKETS | {"unknown"}
DURATION_BUCKETS: Final = frozenset({"lt_1s", "1s_to_5s", "5s_to_30s", "30s_to_2m", "2m_to_10m", "gte_10m"})
LATENCY_BUCKETS: Final = frozenset({"lt_100ms", "100ms_to_250ms", "250ms_to_500ms", "500ms_to_1s", "1s_to_2s",
                                    "2s_to_5s", "5s_to_10s", "10s_to_30s", "gte_30s", "unknown"})

_DURATION_EDGES: Final = ((1_000, "lt_1s"), (5_000, "1s_to_5s"), (30_000, "5s_to_30s"), (120_000, "30s_to_2m"),
                          (600_000, "2m_to_10m"))
_LATENCY_EDGES: Final = ((100, "lt_100ms"), (250, "100ms_to_250ms"), (500, "250ms_to_500ms"), (1_000, "500ms_to_1s"),
                         (2_000, "1s_to_2s"), (5_000, "2s_to_5s"), (10_000, "5s_to_10s"), (30_000, "10s_to_30s"))


def is_count(value: object) -> bool:
    """A non-boolean integer >= 0."""
    return type(value) is int and value >= 0


def count_bucket(n: int) -> str:
    """SM-37: ``0``, ``1``, ``2``, ``3_to_5``, ``6_to_10``, ``gte_11`` (negative counts as 0)."""
    if n <= 2:
        return str(max(n, 0))
    if n <= 5:
        return "3_to_5"
    return "6_to_10" if n <= 10 else "gte_11"


def retry_bucket(value: object) -> str:
    """SM-26: tool retries only from an explicit non-boolean integer >= 0, else ``unknown``."""
    return count_bucket(value) if is_count(value) else "unknown"  # type: ignore[arg-type]


def duration_bucket(ms: float) -> str:
    """SM-38: task duration bucket (lower bounds inclusive)."""
    for edge, name in _DURATION_EDGES:
        if ms < edge:
            return name
    return "gte_10m"


def latency_bucket(ms: float | None) -> str:
    """SM-39: tool latency bucket; ``unknown`` without a duration."""
    if ms is None:
        return "unknown"
    for edge, name in _LATENCY_EDGES:
        if ms < edge:
            return name
    return "gte_30s"


# ------------------------------------------- hook values to tool outcome and approval outcome (SM-24, SM-25)

_TOOL_STATUS: Final = {"ok": "success", "success": "success", "error": "failed", "failed": "failed",
                       "blocked": "blocked", "cancelled": "cancelled", "timeout": "timed_out",
                       "timed_out": "timed_out"}
_APPROVAL_CHOICE: Final = {"once": "approved", "session": "approved", "always": "approved", "approve": "approved",
                           "approved": "approved", "smart_approve": "approved", "deny": "denied",
                           "denied": "denied", "smart_deny": "denied", "timeout": "timed_out",
                           "timed_out": "timed_out"}


def _lower(value: object) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def tool_outcome(status: object) -> str:
    """SM-24: ``post_tool_call.status`` → tool ``outcome``."""
    return _TOOL_STATUS.get(_lower(status), "unknown")


def approval_outcome(choice: object) -> str:
    """SM-24: ``post_approval_response.choice`` → approval ``outcome`` (``cancelled`` → ``unknown``)."""
    return _APPROVAL_CHOICE.get(_lower(choice), "unknown")


# ------------------------------------- terminal state: outcome, end reason and termination of a task (SM-19)


def terminal_state(*, interrupted: object = False, completed: object = False, failed: object = False,
                   reason: object = None) -> tuple[str, str, str]:
    """SM-19: ``(outcome, end_reason, termination)``; the first matching row of the table wins."""
    why = _lower(reason)
    if interrupted is True or "interrupt" in why or "cancel" in why:
        return "cancelled", "user_cancelled", "user_cancelled"
    if "timeout" in why or "timed_out" in why:
        return "timed_out", "timed_out", "timed_out"
    if "max_iterations" in why or "budget_exhausted" in why:
        return "failed", "iteration_limit", "system_aborted"
    if "approval" in why and ("denied" in why or "rejected" in why):
        return "failed", "approval_denied", "none"
    if "guardrail" in why:
        return "failed", "guardrail_blocked", "system_aborted"
    if why == "system_aborted":
        return "failed", "system_aborted", "system_aborted"
    if completed is True:
        return "success", "completed", "none"
    if failed is True or why:
        return "failed", "failed", "none"
    return "unknown", "unknown", "unknown"


def exit_reason_of(error: BaseException | None) -> str | None:
    """SM-19: the ``turn_exit_reason`` an exception that ended the agent boundary maps to."""
    import asyncio

    if error is None:
        return None
    if isinstance(error, KeyboardInterrupt | InterruptedError | asyncio.CancelledError):
        return "interrupted_by_user"
    if isinstance(error, TimeoutError):
        return "timed_out"
    return "system_aborted"


# ----------------------------------- model and provider identifiers: stripped, lowercased, bounded (SM-44)

IDENTIFIER_RE: Final = re.compile(r"^[a-z0-9][a-z0-9._:/@+\-]*$")
MAX_MODEL_CHARS: Final = 256
MAX_PROVIDER_CHARS: Final = 64


def _identifier(value: object, limit: int) -> str:
    # The free-form identifiers (model, provider) pass the credential scrubber as well as the allowlist
    # pattern: a value the scrubber would redact (a key pasted as the model name) is ``unknown``. The
    # scrubber sees the original case, since key shapes are case-sensitive (``AKIA...``).
    if not isinstance(value, str) or safe_scrub(value.strip()) != value.strip():
        return "unknown"
    text = _lower(value)
    return text if text and len(text) <= limit and IDENTIFIER_RE.match(text) else "unknown"


def model_id(value: object) -> str:
    """SM-44: strip, lowercase; valid identifier of at most 256 characters, else ``unknown``."""
    return _identifier(value, MAX_MODEL_CHARS)


def provider_id(value: object) -> str:
    """SM-44: strip, lowercase; valid identifier of at most 64 characters, else ``unknown``."""
    return _identifier(value, MAX_PROVIDER_CHARS)


def valid_identifier(value: object, limit: int) -> bool:
    """Whether ``value`` already is a normalised identifier (or ``unknown``) within ``limit``."""
    return isinstance(value, str) and 0 < len(value) <= limit and IDENTIFIER_RE.match(value) is not None


# --------------------------- skill and setup dimensions: enum values, anything else unknown (SM-31, SM-32, SM-36)


def skill_provenance(value: object) -> str:
    """A skill provenance in the enum, else ``unknown``."""
    name = _lower(value)
    return name if name in SKILL_PROVENANCES else "unknown"


def skill_load_states(use_count: int, reused: bool, reuse_after_patch: bool) -> tuple[str, str, str] | None:
    """SM-32: ``(reuse_state, post_patch_state, use_count_bucket)``, or ``None`` for an invalid combination."""
    if reuse_after_patch and not reused:
        return None
    if reused != (use_count > 1) or use_count < 1:
        return None
    if not reused:
        return "first_use", "not_applicable", count_bucket(use_count)
    return "reused", "reused_after_patch" if reuse_after_patch else "no_new_patch", count_bucket(use_count)


def setup_mode(value: object) -> str:
    """SM-36: setup ``mode``; unknown → ``unknown``."""
    name = _lower(value)
    return name if name in SETUP_MODES else "unknown"


def setup_finish(outcome: object, failure_stage: object) -> tuple[str, str]:
    """SM-36: ``(outcome, failure_stage)``; unknown outcome → ``failed``, success forces ``none``."""
    result = _lower(outcome)
    result = result if result in SETUP_OUTCOMES else "failed"
    if result == "success":
        return result, "none"
    stage = _lower(failure_stage)
    return result, stage if stage in SETUP_FAILURE_STAGES else "unknown"
