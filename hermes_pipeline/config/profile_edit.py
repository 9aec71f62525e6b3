"""Editing a profile's ``config.yaml`` in ruamel.yaml round-trip mode: comments, key order,
quoting and indentation survive; only the changed value differs.

Only keys of the profile schema (:data:`~.profile_config.KNOWN_KEYS`) are written, each checked
against its type first; an unknown key (a typo) or a key of a feature this version does not have
is refused with :class:`UnknownProfileKeyError` ("did you mean ..."), unless ``force`` writes it
as a forward-compatible key.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .files import read_optional_text
from .profile_config import CONFIG_NAME, DEFAULTS, KNOWN_KEYS, suggest_key, unavailable_reason
from .yaml_text import check_unique_keys


class UnknownProfileKeyError(ConfigError):
    """A key that this version's profile schema does not have (a typo, or a feature not available
    in this version); :attr:`suggestion` is the closest known key, if any."""

    def __init__(self, key: str, message: str, suggestion: str | None = None) -> None:
        super().__init__(message, key=key, code="config.unknown_key")
        self.suggestion = suggestion


WRITE_HINT = "pass --force to write it anyway as a forward-compatible key"
READ_HINT = "pass --force to print what the file holds anyway"


def check_key(key: str, *, hint: str = WRITE_HINT) -> None:
    """Raise :class:`UnknownProfileKeyError` unless ``key`` is a key of the profile schema; the
    message ends with ``hint`` (how to go ahead anyway)."""
    split_key(key)
    if key in KNOWN_KEYS:
        return
    reason = unavailable_reason(key)
    if reason is not None:
        raise UnknownProfileKeyError(key, f"{reason}; {hint}")
    closest = suggest_key(key)
    known = ", ".join(KNOWN_KEYS)
    raise UnknownProfileKeyError(
        key, f"not a config.yaml key this version reads ({f'did you mean {closest}? ' if closest else ''}known "
             f"keys: {known}); {hint}", closest)


def split_key(key: str) -> list[str]:
    """``a.b.c`` → ``["a", "b", "c"]``; :class:`ConfigError` for empty or unprintable segments
    (control characters such as NEL would not survive a YAML round trip)."""
    parts = key.split(".")
    if not key or any(not p.strip() or p != p.strip() or not p.isprintable() for p in parts):
        raise ConfigError("expected a dotted key such as telemetry.shared_metrics.enabled", key=key,
                          code="config.invalid_key")
    return parts


def parse_scalar(text: str, *, tables: bool = False) -> Any:
    """Parse ``text`` as one YAML scalar (``true`` → bool, ``5`` → int, ``'5'`` → str); with ``tables``
    a YAML flow mapping or list (``{a/b: {input: 1, output: 2}}``) is accepted too."""
    from ruamel.yaml import YAML

    try:
        value = YAML(typ="safe", pure=True).load(text)
    except Exception:
        raise ConfigError("VALUE is not a valid YAML scalar", code="config.invalid_value") from None
    if tables and isinstance(value, dict | list):
        return value
    if isinstance(value, dict | list):
        raise ConfigError("VALUE must be a scalar (string, number, boolean or null), not a mapping or list",
                          code="config.invalid_value")
    if value is not None and not isinstance(value, str | int | float | bool):
        raise ConfigError(f"VALUE of type {type(value).__name__} is not supported; quote it to set a string",
                          code="config.invalid_value")
    return value


def guess_indent(text: str) -> tuple[int, int]:
    """``(mapping_indent, sequence_dash_offset)`` used by ``text`` (defaults 2 and 0)."""
    mapping = 0
    offset: int | None = None
    keys: list[int] = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        column = len(line) - len(stripped)
        if stripped.startswith("- ") or stripped == "-":
            if offset is None:
                parents = [k for k in keys if k < column]
                offset = column - parents[-1] if parents else column
            continue
        if ":" in stripped:
            keys = [k for k in keys if k < column] + [column]
            if column > 0 and (mapping == 0 or column < mapping):
                mapping = column
    return mapping or 2, offset or 0


def _yaml(text: str) -> tuple[Any, Any]:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    mapping, offset = guess_indent(text)
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    check_unique_keys(text, CONFIG_NAME)  # the one rule for repeated keys (yaml_text), as open_profile applies it
    try:
        data = yaml.load(text) if text.strip() else None
    except Exception as exc:
        raise ConfigError(f"{CONFIG_NAME} is not valid YAML ({type(exc).__name__}); fix it by hand first",
                          code="config.invalid_file") from None
    return yaml, data


def get_value(home: Path, key: str, *, force: bool = False) -> tuple[bool, Any]:
    """``(present, value)`` of ``key`` in ``<home>/config.yaml``; known keys fall back to their default.

    A key outside the schema raises :class:`UnknownProfileKeyError` (nothing reads it, so printing
    its value would suggest it has an effect), unless ``force`` reads it as written.
    """
    parts = split_key(key)
    if not force:
        check_key(key, hint=READ_HINT)
    path = home / CONFIG_NAME
    text = read_optional_text(path, code="config.invalid_file")  # a FIFO or bad UTF-8 is a typed error
    _, data = _yaml(text)
    node: Any = data
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return (True, DEFAULTS[key]) if key in DEFAULTS else (False, None)
        node = node[part]
    return True, node


def set_value(home: Path, key: str, value: Any, *, force: bool = False) -> Path:
    """Set ``key`` to ``value`` in ``<home>/config.yaml`` (created if missing) and return its path.

    Known keys are validated first (:data:`KNOWN_KEYS`); other keys raise
    :class:`UnknownProfileKeyError` unless ``force`` writes them unchecked. A :class:`ConfigError`
    leaves the file untouched.
    """
    from ruamel.yaml.comments import CommentedMap

    parts = split_key(key)
    if not force:
        check_key(key)
    check = KNOWN_KEYS.get(key)
    problem = check(value) if check is not None else None
    if problem:
        raise ConfigError(f"invalid value: {problem}", key=key, code="config.invalid_value")
    path = home / CONFIG_NAME
    text = read_optional_text(path, code="config.invalid_file")  # a FIFO or bad UTF-8 is a typed error
    yaml, data = _yaml(text)
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        raise ConfigError(f"{CONFIG_NAME} does not contain a mapping at the top level", path=path,
                          code="config.invalid_file")
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = CommentedMap()
            node[part] = child
        elif not isinstance(child, dict):
            raise ConfigError(f"cannot set below {'.'.join(parts[:depth + 1])}: it holds a value, not a mapping",
                              path=path, key=key, code="config.invalid_key")
        node = child
    node[parts[-1]] = value
    out = io.StringIO()
    yaml.dump(data, out)
    _atomic_write(path, out.getvalue())
    return path


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
