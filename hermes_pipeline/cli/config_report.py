"""What ``config validate`` and ``config explain`` report, as lines of text or as JSON (``--json``).

Both commands work from the result of :func:`~hermes_pipeline.config.pipeline.load_pipeline`, the
function activation uses, so the report says what activation would do. Every problem is one line
of text, or one JSON object with ``severity``, ``code``, ``file``, ``line``, ``key``,
``component``, ``message`` and ``suggestion``. Values of headers and access keys are never shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from ..config.diagnostics import Diagnostic, Diagnostics
from ..config.discovery import Candidate
from ..config.errors import ConfigError
from ..config.keypath import KeyPath, format_path
from ..config.merge import leaf_paths
from ..config.pipeline import LoadedPipeline

REDACTED_PARENTS: Final = frozenset({"headers"})
REDACTED_KEYS: Final = frozenset({"access_key_id"})
REDACTED: Final = "<redacted>"


def redacted(path: KeyPath, value: Any) -> Any:
    """``value``, or :data:`REDACTED` for a header value or an access key."""
    if (len(path) >= 2 and path[-2] in REDACTED_PARENTS) or (path and path[-1] in REDACTED_KEYS):
        return REDACTED
    return value


def diagnostic_json(diag: Diagnostic) -> dict[str, Any]:
    """One diagnostic as a JSON object (``severity`` is ``info``, ``warning`` or ``error``)."""
    return {"severity": diag.level, "code": diag.code, "file": diag.source, "line": diag.line,
            "key": diag.key or diag.field, "component": diag.component, "message": diag.message,
            "suggestion": diag.suggestion}


def error_json(error: ConfigError) -> dict[str, Any]:
    """A load error that stopped the load before it became a diagnostic, as a JSON object."""
    return {"severity": "error", "code": error.code, "file": error.path, "line": error.line, "key": error.key,
            "component": None, "message": error.message, "suggestion": error.suggestion}


def unrecorded(diagnostics: Diagnostics, error: ConfigError | None) -> ConfigError | None:
    """``error`` when it is not already one of the recorded failures (a parse error, a bad version ...)."""
    if error is None or error in diagnostics.failures:
        return None
    if diagnostics.failures and error.message.startswith(diagnostics.failures[0].message):
        return None  # the summary of the recorded failures ("... (and 2 more errors)")
    return error


def problem_lines(diagnostics: Diagnostics, error: ConfigError | None) -> tuple[list[str], list[str]]:
    """``(warning lines, error lines)``: every finding, one line each; errors as ``file:line: key: message``."""
    notes = [str(d) for d in diagnostics.items if d.level != "error"]
    errors = [str(e) for e in diagnostics.failures]
    extra = unrecorded(diagnostics, error)
    if extra is not None:
        errors.append(str(extra))
    return notes, errors


STRICT_CODES: Final = ("unknown_component", "unknown_field", "unsupported_value", "endpoint_skipped")
"""Warnings that mean part of the file is not used (``config validate --strict`` fails on them)."""


def strict_problems(loaded: LoadedPipeline | None, diagnostics: Diagnostics) -> list[str]:
    """Why ``--strict`` refuses a file activation would accept: what is ignored, skipped or not exported."""
    count = sum(1 for d in diagnostics.items if d.level == "warning" and d.code.rsplit(".", 1)[-1] in STRICT_CODES)
    out = [f"{count} ignored or skipped item{'s' if count != 1 else ''} (see the warnings above)"] if count else []
    nothing = loaded.nothing_exported() if loaded is not None else None
    if nothing:
        out.append("nothing is exported")
    return out


def _components(loaded: LoadedPipeline | None) -> list[dict[str, Any]]:
    if loaded is None:
        return []
    out = [{"kind": c.kind, "enabled": c.enabled, "origin": c.resolved.origin if c.resolved else "unknown"}
           for c in loaded.components]
    out += [{"kind": d.id, "enabled": True, "origin": f"dynamic {d.kind}"} for d in loaded.dynamic]
    return out


def validate_json(target: Path, loaded: LoadedPipeline | None, diagnostics: Diagnostics,
                  error: ConfigError | None) -> dict[str, Any]:
    """The ``config validate --json`` document."""
    items = [diagnostic_json(d) for d in diagnostics.items]
    extra = unrecorded(diagnostics, error)
    if extra is not None:
        items.append(error_json(extra))
    return {
        "file": str(target),
        "valid": error is None,
        "layers": loaded.sources if loaded is not None else [],
        "components": _components(loaded),
        "wiring": loaded.wiring() if loaded is not None else [],
        "nothing_exported": loaded.nothing_exported() if loaded is not None else None,
        "diagnostics": items,
    }


def _value(data: Any, path: KeyPath) -> Any:
    for seg in path:
        data = data[seg]
    return data


def explain_keys(loaded: LoadedPipeline) -> list[dict[str, Any]]:
    """Every effective key with its value (redacted where needed) and the file:line it came from."""
    out = []
    for path in leaf_paths(loaded.merged.data):
        origin = loaded.merged.origin(path)
        value = redacted(path, _value(loaded.merged.data, path))
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = repr(value)
        out.append({"key": format_path(path), "value": value, "file": origin.source if origin else None,
                    "line": origin.line if origin else None})
    return out


def explain_json(target: Path | None, how: str | None, layers: Iterable[Candidate], legacy: list[str],
                 loaded: LoadedPipeline | None, diagnostics: Diagnostics,
                 error: ConfigError | None) -> dict[str, Any]:
    """The ``config explain --json`` document."""
    doc: dict[str, Any] = {
        "selected": str(target) if target is not None else None,
        "selected_by": how,
        "layers": [{"role": c.role, "status": c.status, "path": str(c.path), "located_by": c.located_by}
                   for c in layers],
        "legacy_variables_ignored": legacy,
        "valid": target is not None and error is None,
        "keys": explain_keys(loaded) if loaded is not None else [],
        "components": _components(loaded),
        "nothing_exported": loaded.nothing_exported() if loaded is not None else None,
        "diagnostics": validate_json(target, loaded, diagnostics, error)["diagnostics"] if target else [],
    }
    return doc


__all__ = ["STRICT_CODES", "diagnostic_json", "error_json", "explain_json", "explain_keys", "problem_lines",
           "redacted", "strict_problems", "unrecorded", "validate_json"]
