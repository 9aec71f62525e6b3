"""Parse a pipeline file (TOML or YAML, CFG-33) into plain data plus a key-path → line map.

TOML is parsed with :mod:`tomllib`; YAML with ruamel.yaml's safe loader (no tags, no object
construction, aliases expanded, exactly one document, CFG-35). Whatever goes wrong, the only
exception that leaves this module is :class:`ConfigError`.
"""

from __future__ import annotations

import io
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from .errors import ConfigError
from .files import read_config_text
from .keypath import KeyPath, format_path

MAX_DEPTH: Final = 64
MAX_NODES: Final = 200_000
YAML_SUFFIXES: Final = (".yaml", ".yml")

_TOML_LINE: Final = re.compile(r"at line (\d+)")
_BARE_KEY: Final = re.compile(r'\s*(?:[A-Za-z0-9_\-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')\s*')


@dataclass
class ParsedFile:
    """One parsed pipeline or manifest file."""

    source: Path
    format: Literal["toml", "yaml"]
    data: dict[str, Any]
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_for(self, path: KeyPath) -> int | None:
        """The line that defines ``path``, or of its nearest ancestor the parser located."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


def is_yaml_name(path: str | Path) -> bool:
    """``True`` for names ending in ``.yaml`` / ``.yml`` (CFG-33); everything else is TOML."""
    return str(path).lower().endswith(YAML_SUFFIXES)


def read_text(path: Path) -> str:
    """Read a UTF-8 regular file below the size limit; every failure is a :class:`ConfigError` naming the path.

    A FIFO, a device, a directory or an oversized file is refused before it can block or fill
    memory (:mod:`.files`).
    """
    return read_config_text(path)


def parse_file(path: Path, *, allow_yaml: bool = True) -> ParsedFile:
    """Read and parse ``path``: YAML when its name says so and ``allow_yaml``, else TOML."""
    text = read_text(path)
    if allow_yaml and is_yaml_name(path):
        return parse_yaml(text, path)
    return parse_toml(text, path)


# --------------------------------------------------------------------------- TOML


def parse_toml(text: str, source: Path) -> ParsedFile:
    """Parse TOML text; errors carry the line tomllib reports."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        message = _TOML_LINE.sub("", str(exc)).replace("()", "").strip().rstrip(".") or "invalid TOML"
        raise ConfigError(f"TOML parse error: {message}", path=source,
                          line=int(match.group(1)) if match else None) from None
    except RecursionError:
        raise ConfigError("TOML parse error: nesting too deep", path=source) from None
    except Exception as exc:  # tomllib should raise only TOMLDecodeError; stay typed regardless
        raise ConfigError(f"TOML parse error: {type(exc).__name__}", path=source) from None
    check_structure(data, source)
    return ParsedFile(source, "toml", data, toml_lines(text))


def _split_key(text: str) -> KeyPath | None:
    """Split a dotted TOML key (``a."b.c".d``) into segments; ``None`` when it is not a key."""
    segments: list[str | int] = []
    pos = 0
    while pos <= len(text):
        match = _BARE_KEY.match(text, pos)
        if match is None or not match.group(0).strip():
            return None
        token = match.group(0).strip()
        segments.append(token[1:-1] if token[0] in "\"'" else token)
        pos = match.end()
        if pos == len(text):
            return tuple(segments)
        if text[pos] != ".":
            return None
        pos += 1
    return None


def toml_lines(text: str) -> dict[KeyPath, int]:
    """Best-effort map of key paths (with array-of-tables indices) to the line defining them.

    tomllib reports no positions for valid documents, so this scans headers and ``key =`` lines.
    Lines inside multi-line strings are skipped; keys inside inline tables are not located (their
    nearest located ancestor is used instead).
    """
    lines: dict[KeyPath, int] = {}
    counts: dict[KeyPath, int] = {}
    current: KeyPath = ()
    in_string: str | None = None

    def resolve(header: KeyPath) -> KeyPath:
        out: KeyPath = ()
        for seg in header:
            out = (*out, seg)
            if out in counts:
                out = (*out, counts[out] - 1)
        return out

    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if in_string is not None:
            if in_string in stripped:
                in_string = None
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("[["):
            key = _split_key(stripped[2:].split("]]", 1)[0])
            if key is None:
                continue
            table = resolve(key[:-1]) + (key[-1],)
            index = counts.get(table, 0)
            counts[table] = index + 1
            current = (*table, index)
            lines.setdefault(table, number)
            lines[current] = number
        elif stripped.startswith("["):
            key = _split_key(stripped[1:].split("]", 1)[0])
            if key is not None:
                current = resolve(key)
                lines.setdefault(current, number)
        elif "=" in stripped:
            lhs, rhs = stripped.split("=", 1)
            key = _split_key(lhs)
            if key is not None:
                lines.setdefault((*current, *key), number)
            for quote in ('"""', "'''"):
                if rhs.count(quote) % 2 == 1:
                    in_string = quote
    return lines


# --------------------------------------------------------------------------- YAML


def parse_yaml(text: str, source: Path) -> ParsedFile:
    """Parse YAML text with the safe loader: exactly one document, string keys, no tags."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from .yaml_text import check_unique_keys

    # the one rule for repeated keys (yaml_text): both lines named; and for nesting (before any loader recurses)
    check_unique_keys(text, source, too_deep_code="pipeline.invalid")
    yaml = YAML(typ="safe", pure=True)
    try:
        data = yaml.load(io.StringIO(text))
        node = yaml.compose(io.StringIO(text)) if data is not None else None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        if "could not determine a constructor" in problem or "tag" in problem:
            problem = "language-specific tags are not allowed (safe YAML only)"
        raise ConfigError(f"YAML parse error: {problem}", path=source,
                          line=mark.line + 1 if mark is not None else None) from None
    except YAMLError as exc:
        raise ConfigError(f"YAML parse error: {type(exc).__name__}", path=source) from None
    except RecursionError:
        raise ConfigError("YAML parse error: nesting too deep", path=source) from None
    except Exception as exc:  # the pure loader can raise plain errors on odd input
        raise ConfigError(f"YAML parse error: {type(exc).__name__}", path=source) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the document must be a mapping at the top level", path=source, line=1)
    lines: dict[KeyPath, int] = {}
    if node is not None:
        _yaml_lines(node, (), lines, [0])
    check_structure(data, source, lines)
    return ParsedFile(source, "yaml", data, lines)


def _yaml_lines(node: Any, path: KeyPath, out: dict[KeyPath, int], budget: list[int]) -> None:
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    budget[0] += 1
    if budget[0] > MAX_NODES or len(path) > MAX_DEPTH:
        return
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node.value, str) else str(key_node.value)
            out.setdefault((*path, key), key_node.start_mark.line + 1)
            _yaml_lines(value_node, (*path, key), out, budget)
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            out.setdefault((*path, index), item.start_mark.line + 1)
            _yaml_lines(item, (*path, index), out, budget)


# --------------------------------------------------------------------------- structure


def check_structure(data: Any, source: Path, lines: dict[KeyPath, int] | None = None) -> None:
    """Reject non-string mapping keys, nesting deeper than :data:`MAX_DEPTH` and documents with
    more than :data:`MAX_NODES` nodes (alias bombs, self-referencing aliases)."""
    budget = [0]
    stack: list[tuple[Any, KeyPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        budget[0] += 1
        if budget[0] > MAX_NODES:
            raise ConfigError(f"document too large (more than {MAX_NODES} values after expanding aliases)",
                              path=source)
        if len(path) > MAX_DEPTH:
            raise ConfigError(f"nesting deeper than {MAX_DEPTH} levels", path=source,
                              key=format_path(path[:8]) + "...")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    line = (lines or {}).get(path)
                    raise ConfigError(f"mapping keys must be strings, found a key of type {type(key).__name__}",
                                      path=source, line=line, key=format_path(path) or None)
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
