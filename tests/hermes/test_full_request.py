"""The bridge records Hermes' full request history, credentials scrubbed, never cut (spec 06 BOOK-29,
BOOK-31a), and replay tells Hermes' recordings from other hosts' (BOOK-31a)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import safe_scrub
from hermes_pipeline.hermes.payloads import full_request
from hermes_pipeline.replay.hermes_run import is_hermes_recording
from hermes_pipeline.replay.recording import Recording

REDACTED = re.compile(r"<redacted(:[0-9a-f]{4,})?>")
CUT = {"method": "POST", "body": {"model": "m", "messages": [{"role": "system", "content": "x...[truncated 9 chars]"}],
                                  "max_tokens": 5}}

texts = st.text(max_size=40) | st.builds(lambda n: "long prompt " * n, st.integers(700, 1200))
messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool"]),
                                           "content": texts}), max_size=5)


@settings(max_examples=60, deadline=None)
@given(messages)
def test_book_31a_the_history_is_kept_whole_and_scrubbed(history: list[dict[str, str]]) -> None:
    """BOOK-31a: every message of the request is kept with its whole text (past the sanitizer's 8,000
    characters too), each string as the scrubber gives it; the other body keys stay as Hermes gave them."""
    out = full_request(CUT, history, "chat_completions", "m")
    assert isinstance(out, dict) and out["body"]["model"] == "m" and out["body"]["max_tokens"] == 5
    assert out["body"]["messages"] == [{"role": safe_scrub(m["role"]), "content": safe_scrub(m["content"])}
                                       for m in history]


def test_book_31a_credentials_are_scrubbed_and_a_preview_envelope_is_replaced() -> None:
    """BOOK-31a: a secret in the history is redacted, a sensitive key's value too; when Hermes cut the whole
    request to a preview, the recorded body keeps the model and the full history; Responses' ``input``."""
    secret = "sk-proj-" + "a1B2c3D4" * 6
    history = [{"role": "user", "content": f"my key is {secret}", "api_key": "plain"}]
    out = full_request({"_truncated": True, "preview": "..."}, history, "codex_responses", "gpt")
    assert isinstance(out, dict)
    (message,) = out["body"]["input"]
    assert secret not in str(out) and REDACTED.search(message["content"]) and REDACTED.fullmatch(message["api_key"])
    assert out["body"]["model"] == "gpt"
    assert full_request(CUT, None, "chat_completions") is CUT  # no raw history: the request as it was


def _doc(session_id: str) -> dict[str, object]:
    return {"schema_version": "ATIF-v1.7", "agent": {"name": "hermes", "version": "1"},
            "extra": {"hermes": {"session_id": session_id}},
            "steps": [{"step_id": 1, "source": "agent", "message": "hi",
                       "extra": {"hermes": {"llm_request": {"body": {"messages": []}}, "llm_response": {}}}}]}


def test_book_31a_hermes_recordings_are_told_by_hermes_session_ids() -> None:
    """BOOK-31a: a session id in Hermes' format means Hermes recorded the run (replayed by Hermes by default);
    the store's other hosts (the reference agent: UUIDs) are replayed by the reference agent."""
    assert is_hermes_recording(Recording.from_document(_doc("20261203_105402_911385")))
    assert not is_hermes_recording(Recording.from_document(_doc("01a23b8a-3b7c-7a61-9461-a57c89ce925e")))
