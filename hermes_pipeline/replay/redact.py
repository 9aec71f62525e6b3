"""A shareable copy of a trajectory (spec 06 BOOK-36).

``mask`` replaces, in every content field, what the built-in detectors and the caller's patterns
find with ``[REDACTED:<detector>]`` — the marker never echoes any part of the match:

- ``credential``: everything the engine's credential scrubber recognises
  (:func:`hermes_pipeline.engine.scrub.scrub_text`: API keys and tokens with common prefixes such as
  ``sk-``, ``pk-lf-``, ``sk-lf-``, ``ghp_``, ``xoxb-``, ``AKIA``; ``Bearer`` / ``Basic`` credentials;
  JWTs; PEM private keys; ``scheme://user:pass@`` URL credentials; ``KEY=VALUE`` shapes), and the
  ``<redacted>`` markers the exporters already wrote;
- ``email``, ``phone`` and ``home_path`` (``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>``):
  detectors of this command only, stricter than what the exporters scrub;
- ``pattern``: each ``--pattern`` regular expression.

``summary`` replaces every content field (messages, reasoning, tool arguments, observation
contents, LLM payloads, the final output) with ``[SUMMARY chars=<n> sha256=<hex>]``; such a file
cannot be replayed. Both record ``extra.hermes.redaction = {mode, detectors, patterns,
replacements, redacted_at}`` and stay valid ATIF v1.7.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any, Final

from ..engine.scrub import MARKER_RE, scrub_text
from ..export.definitions import DEFINITIONS_KEY

__all__ = ["DETECTORS", "compile_patterns", "redact_document"]

_EMAIL: Final = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PHONE: Final = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,3}(?![\w])"
    r"|(?<![\w+])\+\d{8,15}(?!\w)")
_HOME: Final = re.compile(r"(?:/home/|/Users/)[^/\s\"'<>:]+|[A-Za-z]:\\\\?Users\\\\?[^\\\s\"'<>:]+|~[A-Za-z0-9._-]+")

DETECTORS: Final = ("credential", "email", "phone", "home_path")


def _phone_like(match: re.Match[str]) -> bool:
    digits = sum(ch.isdigit() for ch in match.group(0))
    return 7 <= digits <= 15 and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", match.group(0))


def compile_patterns(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    """Compile ``--pattern`` values.

    Raises:
        ValueError: naming the pattern that is not a valid regular expression.
    """
    out = []
    for pattern in patterns:
        try:
            out.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"--pattern {pattern!r} is not a valid regular expression: {exc}") from None
    return out


class _Masker:
    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self.patterns = patterns
        self.replacements = 0

    def __call__(self, text: str) -> str:
        # every marker (those the exporters already wrote and those found now) becomes the shareable one, which
        # says nothing of which secret it hid
        text, n = MARKER_RE.subn("[REDACTED:credential]", scrub_text(text))
        self.replacements += n
        for pattern in self.patterns:
            text, n = pattern.subn("[REDACTED:pattern]", text)
            self.replacements += n
        text, n = _EMAIL.subn("[REDACTED:email]", text)
        self.replacements += n
        text, n = _HOME.subn("[REDACTED:home_path]", text)
        self.replacements += n

        def phone(match: re.Match[str]) -> str:
            if not _phone_like(match):
                return match.group(0)
            self.replacements += 1
            return "[REDACTED:phone]"

        return _PHONE.sub(phone, text)


def _summary(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"[SUMMARY chars={len(text)} sha256={digest}]"


def _walk_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {key: _walk_strings(item, fn) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk_strings(item, fn) for item in value]
    return value


def _content_fields(doc: dict[str, Any], mask: Callable[[Any], Any], whole: Callable[[Any], Any],
                    arguments: Callable[[Any], Any]) -> None:
    """Apply ``mask`` (strings) / ``whole`` (any value) to the content fields of ``doc`` and its subagents."""
    for step in doc.get("steps") or []:
        if not isinstance(step, dict):
            continue
        for key in ("message", "reasoning_content"):
            if key in step:
                step[key] = whole(step[key])
        for call in step.get("tool_calls") or []:
            if isinstance(call, dict) and "arguments" in call:
                call["arguments"] = arguments(call["arguments"])
                if isinstance(call.get("extra"), dict) and "raw_arguments" in call["extra"]:
                    call["extra"]["raw_arguments"] = whole(call["extra"]["raw_arguments"])
        observation = step.get("observation")
        for result in (observation.get("results") if isinstance(observation, dict) else None) or []:
            if isinstance(result, dict) and "content" in result:
                result["content"] = whole(result["content"])
            if isinstance(result, dict):
                _messages(_hermes_extra(result), whole)
        hermes = _hermes_extra(step)
        if isinstance(hermes, dict):
            for key in ("llm_request", "llm_response"):
                if key in hermes:
                    hermes[key] = whole(hermes[key])
            _messages(hermes, whole)
            for attempt in hermes.get("failed_attempts") or []:
                if isinstance(attempt, dict):
                    for key, item in list(attempt.items()):
                        if isinstance(item, str) and key not in ("timestamp",):
                            attempt[key] = mask(item)
    hermes = (doc.get("extra") or {}).get("hermes") if isinstance(doc.get("extra"), dict) else None
    if isinstance(hermes, dict) and isinstance(hermes.get(DEFINITIONS_KEY), dict):  # the requests' system prompts
        hermes[DEFINITIONS_KEY] = {ref: whole(value) for ref, value in hermes[DEFINITIONS_KEY].items()}
    if isinstance(hermes, dict) and "final_output" in hermes:
        hermes["final_output"] = whole(hermes["final_output"])
    for child in doc.get("subagent_trajectories") or []:
        if isinstance(child, dict):
            _content_fields(child, mask, whole, arguments)


def _hermes_extra(item: dict[str, Any]) -> dict[str, Any] | None:
    extra = item.get("extra")
    hermes = extra.get("hermes") if isinstance(extra, dict) else None
    return hermes if isinstance(hermes, dict) else None


def _messages(hermes: dict[str, Any] | None, whole: Callable[[Any], Any]) -> None:
    """Every ``*message`` field of a step's or a result's ``extra.hermes`` (``error_message``, ...) is content."""
    for key in list(hermes or ()):
        if key.endswith("message") and isinstance(hermes[key], str):  # type: ignore[index]
            hermes[key] = whole(hermes[key])  # type: ignore[index]


def redact_document(doc: dict[str, Any], *, mode: str = "mask", patterns: Iterable[str] = (),
                    now: datetime | None = None) -> dict[str, Any]:
    """A redacted copy of ``doc`` (see the module docstring); ``doc`` is not changed.

    Raises:
        ValueError: an unknown mode or an invalid pattern.
    """
    if mode not in ("mask", "summary"):
        raise ValueError(f"--mode must be 'mask' or 'summary', not {mode!r}")
    pattern_texts = list(patterns)
    compiled = compile_patterns(pattern_texts)
    out = copy.deepcopy(doc)
    count = 0
    if mode == "mask":
        masker = _Masker(compiled)
        masked: Callable[[Any], Any] = lambda value: _walk_strings(value, masker)  # noqa: E731
        _content_fields(out, masker, masked, masked)
        count = masker.replacements
    else:
        counter = [0]

        def whole(value: Any) -> Any:
            if value is None or value == "":
                return value
            counter[0] += 1
            return _summary(value)

        def arguments(value: Any) -> Any:
            if not value:
                return value
            counter[0] += 1
            return {"_summary": _summary(value)}

        _content_fields(out, lambda text: whole(text), whole, arguments)
        count = counter[0]
        out.setdefault("extra", {}).setdefault("hermes", {})["content"] = "summary"
    # Whatever field a recording adds later, no credential stays in it: every other string of the document
    # passes the credential scrubber too (which changes nothing else, so ids and timestamps stay as they are).
    found = [0]

    def credentials(text: str) -> str:
        masked, n = MARKER_RE.subn("[REDACTED:credential]", scrub_text(text))
        found[0] += n
        return masked if n else text

    out = {key: _walk_strings(item, credentials) for key, item in out.items()}
    count += found[0]
    hermes = out.setdefault("extra", {}).setdefault("hermes", {})
    hermes["redaction"] = {"mode": mode, "detectors": list(DETECTORS) + (["pattern"] if compiled else []),
                           "patterns": pattern_texts, "replacements": count,
                           "redacted_at": (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")}
    return out
