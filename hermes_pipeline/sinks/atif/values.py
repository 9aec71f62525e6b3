"""Small pure value mappings of the ATIF exporter (spec 04 §3.3-§3.6): metrics, arguments, message text.

Used by :mod:`~hermes_pipeline.sinks.atif.steps` on the ATIF writer thread; functions only read their inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...export.content import HISTORY_KEYS, canonical_json
from ...export.jsonenc import loads_exact

_TOTALS: Final = (("prompt_tokens", "total_prompt_tokens"), ("completion_tokens", "total_completion_tokens"),
                  ("cached_tokens", "total_cached_tokens"), ("cost_usd", "total_cost_usd"))


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one."""
    return value if (type(value) is dict or isinstance(value, Mapping)) else {}


_NUMBERS: Final = (int, float)


def _is_number(value: Any) -> bool:
    """An int or float that is not a bool. The exact types are looked at first, and a tuple rather than
    ``int | float``, which would build a new union object at every call (several per LLM call's metrics)."""
    cls = type(value)
    return cls is int or cls is float or (cls is not bool and isinstance(value, _NUMBERS))


def step_metrics(usage: Any) -> dict[str, Any] | None:
    """ATIF step ``metrics`` from normalised ATOF usage (§3.6); ``None`` when nothing is known."""
    if not (type(usage) is dict or isinstance(usage, Mapping)):
        return None
    out: dict[str, Any] = {}
    if _is_number(usage.get("input_tokens")):
        out["prompt_tokens"] = usage["input_tokens"]
    if _is_number(usage.get("output_tokens")):
        out["completion_tokens"] = usage["output_tokens"]
    read, write = usage.get("cache_read_tokens"), usage.get("cache_write_tokens")
    read = read if _is_number(read) else None
    write = write if _is_number(write) else None
    if read is not None or write is not None:
        out["cached_tokens"] = (read or 0) + (write or 0)
    if _is_number(usage.get("cost_usd")):
        out["cost_usd"] = usage["cost_usd"]
    extra: dict[str, Any] = {}
    if _is_number(usage.get("reasoning_tokens")) and usage["reasoning_tokens"]:
        extra["reasoning_tokens"] = usage["reasoning_tokens"]
    if write:  # the split of cached_tokens only says something when cache writes happened
        extra["cache_read_tokens"] = read or 0
        extra["cache_write_tokens"] = write
    if extra:
        out["extra"] = extra
    return out or None


def final_metrics(steps: list[dict[str, Any]], failed_attempts: int) -> dict[str, Any] | None:
    """``final_metrics`` (§3.6): sums over the steps that carry each field; ``None`` when no step has metrics."""
    measured = [metrics for step in steps
                if type(metrics := step.get("metrics")) is dict or isinstance(metrics, Mapping)]
    if not measured:
        return None
    out: dict[str, Any] = {}
    for key, total in _TOTALS:
        values = [m[key] for m in measured if key in m]
        if values:
            out[total] = sum(values)
    out["total_steps"] = len(steps)
    if failed_attempts:
        out["extra"] = {"failed_attempts": failed_attempts}
    return out


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """``(arguments object, raw string when it was not a JSON object)`` (§3.4)."""
    if type(raw) is str and raw.strip():  # JSON text, what a model sends: no look for a mapping first
        return _parsed(raw)
    if type(raw) is dict or isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if isinstance(raw, str):
        return _parsed(raw)
    return {}, canonical_json(raw)


def _parsed(raw: str) -> tuple[dict[str, Any], str | None]:
    try:
        value = loads_exact(raw)
    except ValueError:
        return {}, raw
    return (value, None) if isinstance(value, dict) else ({}, raw)


def text_of(content: Any) -> str:
    """Assistant text: a string as is; the text parts of a content list joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(p for p in parts if p)
    return ""


def raw_calls(message: Mapping[str, Any]) -> list[Any]:
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        return calls
    content = message.get("content")
    if isinstance(content, list):
        return [p for p in content if (type(p) is dict or isinstance(p, Mapping)) and p.get("type") == "tool_use"]
    return []


def system_prompt(request: Any, api_mode: Any) -> str | None:
    """The system instructions of a sanitized request ``{"method", "body"}``, if it carries any."""
    body = request.get("body") if (type(request) is dict or isinstance(request, Mapping)) else None
    if not (type(body) is dict or isinstance(body, Mapping)):
        return None
    for key in ("system", "instructions"):
        text = text_of(body.get(key))
        if text:
            return text
    history = body.get(HISTORY_KEYS.get(str(api_mode), "messages"))
    if isinstance(history, list):
        texts = [text_of(m.get("content")) for m in history if isinstance(m, Mapping) and m.get("role") == "system"]
        joined = "\n\n".join(t for t in texts if t)
        return joined or None
    return None


def reasoning_effort(request: Any) -> Any:
    body = request.get("body") if (type(request) is dict or isinstance(request, Mapping)) else None
    if not (type(body) is dict or isinstance(body, Mapping)):
        return None
    effort = body.get("reasoning_effort")
    if effort is None and isinstance(body.get("reasoning"), Mapping):
        effort = body["reasoning"].get("effort")
    return effort if isinstance(effort, str) or _is_number(effort) else None
