"""hermes_pipeline's own structured log: JSON Lines in ``$HERMES_HOME/logs/hermes-pipeline.jsonl`` (BOOK-47)."""

from __future__ import annotations

from .jsonl import JsonLinesFormatter, LogHandle, attach_for_profile, attach_jsonl_log, event_id

__all__ = ["JsonLinesFormatter", "LogHandle", "attach_for_profile", "attach_jsonl_log", "event_id"]
