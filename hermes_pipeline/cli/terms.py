"""The legend of the abbreviations the help texts use (kept apart so that building one command's parser imports
nothing of the others)."""

from __future__ import annotations

from typing import Final

TERMS: Final = ("Terms: ATOF = Agent Trajectory Observability Format, JSON-Lines event files; ATIF = Agent Trajectory "
                "Interchange Format, one JSON trajectory per agent run; OTLP = the OpenTelemetry protocol that "
                "carries traces to a collector; LLM = the language model the agent calls.")
"""Shown under the help of the commands whose texts use these terms."""

__all__ = ["TERMS"]
