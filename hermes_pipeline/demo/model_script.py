"""The script file of the stand-alone model server: which reply each chat request gets, in order.

A script is a JSON file (``.json``) or a YAML file (``.yaml`` / ``.yml``): either a list of steps,
or a mapping ``{"model": NAME, "steps": [...]}``. Request *n* gets step *n*; once the steps are used
up every request gets ``(script exhausted)`` with ``finish_reason = "stop"``. A step is one of::

    - "Hello!"                              # shorthand: an assistant text reply
    - content: "Here are your notes."       # a text reply (content may be combined with tool_calls)
      finish_reason: stop                   # optional; default tool_calls when there are calls, else stop
      prompt_tokens: 52                     # optional token counts; default: deterministic estimates
      completion_tokens: 16
    - tool_calls:                           # an assistant message with tool calls
        - name: read_file
          arguments: {path: notes.txt}      # an object (sent JSON-encoded) or a string (sent verbatim)
          id: call_notes                    # optional; default call_0001, call_0002, ...
    - error_status: 503                     # an HTTP error instead of a reply (400-599): 429/5xx are
      error_message: overloaded             #   retried by OpenAI clients, so a 503 step scripts a retry
      error_type: overloaded_error          # optional; default derived from the status
      error_code: null                      # optional
      retry_after: 0                        # optional; seconds, sent as the Retry-After header

Unknown keys and wrong types are refused with :class:`ScriptError`, naming the step. YAML needs
``ruamel.yaml`` (a dependency of this package); JSON needs nothing beyond the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from .model_server import ScriptStep, ToolCallSpec

__all__ = ["ScriptError", "load_script", "parse_script"]

_STEP_KEYS: Final = frozenset({"content", "tool_calls", "finish_reason", "prompt_tokens", "completion_tokens",
                               "error_status", "error_message", "error_type", "error_code", "retry_after"})
_CALL_KEYS: Final = frozenset({"name", "arguments", "id"})
_STRINGS: Final = ("content", "finish_reason", "error_message", "error_type", "error_code")
_INTEGERS: Final = ("prompt_tokens", "completion_tokens", "error_status")


class ScriptError(ValueError):
    """A script file that cannot be used: the message names the file, the step and what is wrong."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _tool_call(raw: object, where: str) -> ToolCallSpec:
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: a tool call must be a mapping with 'name' and 'arguments'")
    unknown = sorted(set(raw) - _CALL_KEYS)
    if unknown:
        raise ScriptError(f"{where}: unknown tool-call keys {unknown}; allowed: {sorted(_CALL_KEYS)}")
    name, arguments, call_id = raw.get("name"), raw.get("arguments", {}), raw.get("id")
    if not isinstance(name, str) or not name:
        raise ScriptError(f"{where}: 'name' must be a non-empty string")
    if not isinstance(arguments, Mapping | str):
        raise ScriptError(f"{where}: 'arguments' must be an object or a string")
    if call_id is not None and not isinstance(call_id, str):
        raise ScriptError(f"{where}: 'id' must be a string")
    args: dict[str, Any] | str = arguments if isinstance(arguments, str) else json.loads(json.dumps(arguments))
    return ToolCallSpec(name, args, call_id)


def _step(raw: object, where: str) -> ScriptStep:
    if isinstance(raw, str):
        return ScriptStep(content=raw)
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: a step must be a text or a mapping, not {type(raw).__name__}")
    unknown = sorted(set(raw) - _STEP_KEYS)
    if unknown:
        raise ScriptError(f"{where}: unknown keys {unknown}; allowed: {sorted(_STEP_KEYS)}")
    for key in _STRINGS:
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ScriptError(f"{where}: {key!r} must be a string")
    for key in _INTEGERS:
        if raw.get(key) is not None and not _is_int(raw[key]):
            raise ScriptError(f"{where}: {key!r} must be an integer")
    retry_after = raw.get("retry_after")
    if retry_after is not None and (not isinstance(retry_after, int | float) or isinstance(retry_after, bool)):
        raise ScriptError(f"{where}: 'retry_after' must be a number of seconds")
    calls = raw.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ScriptError(f"{where}: 'tool_calls' must be a list")
    fields: dict[str, Any] = {k: raw[k] for k in _STRINGS + _INTEGERS if raw.get(k) is not None}
    try:
        return ScriptStep(tool_calls=[_tool_call(c, f"{where}, tool call {i}") for i, c in enumerate(calls)],
                          retry_after=retry_after, **fields)
    except ValueError as exc:
        if isinstance(exc, ScriptError):
            raise
        raise ScriptError(f"{where}: {exc}") from None


def parse_script(data: object, source: str = "script") -> tuple[list[ScriptStep], str | None]:
    """Steps and model name (``None``: not set) of an already parsed script document."""
    model: object = None
    steps = data
    if isinstance(data, Mapping):
        unknown = sorted(set(data) - {"model", "steps"})
        if unknown:
            raise ScriptError(f"{source}: unknown top-level keys {unknown}; allowed: ['model', 'steps']")
        model, steps = data.get("model"), data.get("steps", [])
        if model is not None and (not isinstance(model, str) or not model):
            raise ScriptError(f"{source}: 'model' must be a non-empty string")
    if not isinstance(steps, list):
        raise ScriptError(f"{source}: a script is a list of steps, or a mapping with 'steps'")
    return [_step(raw, f"{source}: step {i}") for i, raw in enumerate(steps)], model if isinstance(model, str) else None


def load_script(path: str | Path) -> tuple[list[ScriptStep], str | None]:
    """Read a JSON or YAML script file (see the module docstring): its steps and model name."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{file}: cannot read the script: {exc.strerror or exc}") from None
    try:
        if file.suffix.lower() in (".yaml", ".yml"):
            from ruamel.yaml import YAML

            data: object = YAML(typ="safe", pure=True).load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # any parser error: say where, without a traceback
        raise ScriptError(f"{file}: not valid {'YAML' if file.suffix.lower() in ('.yaml', '.yml') else 'JSON'}:"
                          f" {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    return parse_script(data if data is not None else [], str(file))
