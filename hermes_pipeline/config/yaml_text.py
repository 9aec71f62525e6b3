"""Reading a profile's ``config.yaml`` as Hermes reads it: PyYAML's safe loader, in C when available.

The profile file belongs to the host (Hermes writes and reads it with PyYAML), so its values mean
here what they mean there (YAML 1.1 scalars). libyaml parses a full Hermes ``config.yaml`` (about
700 lines) in about 4 ms where a pure-Python loader takes 30-55 ms, which every host start-up would
pay. Editing the file keeps using ruamel.yaml, which keeps comments (:mod:`.profile_edit`); pipeline
files have their own loader (:mod:`.loader`).

One rule for repeated keys, whichever reader meets the file (``open_profile``, ``config get`` /
``set`` / ``validate``, the pipeline loader): a key written twice in one mapping is the
:class:`~hermes_pipeline.config.errors.ConfigError` ``config.duplicate_key`` naming the key path and
both lines (:func:`check_unique_keys`). Taking the last one silently would make the first line a
setting that looks active and is not; PyYAML would take it, ruamel.yaml would refuse it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError

__all__ = ["DUPLICATE_KEY", "check_unique_keys", "duplicate_key_in", "load_yaml_text"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUPLICATE_KEY = "config.duplicate_key"
_MERGE = "tag:yaml.org,2002:merge"


def _scalar_key(constructor: Any, node: yaml.Node) -> Any:
    """The value a scalar key node means (YAML 1.1: ``yes`` and ``true`` are the same key); ``None`` for
    keys that are not scalars (never compared)."""
    if not isinstance(node, yaml.ScalarNode) or node.tag == _MERGE:
        return None
    try:
        value = constructor.construct_object(node, deep=True)
        hash(value)
    except Exception:  # noqa: BLE001 - a key that cannot be constructed is the loader's own error
        return None
    return ("key", type(value) is bool, value)


def _walk(root: yaml.Node) -> Iterator[tuple[str, yaml.MappingNode]]:
    """Every mapping node under ``root`` with its dotted path (iterative: deep nesting cannot overflow)."""
    stack: list[tuple[str, yaml.Node]] = [("", root)]
    seen: set[int] = set()
    while stack:
        path, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            yield path, node
            for key_node, value_node in node.value:
                name = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
                stack.append((f"{path}.{name}" if path else str(name), value_node))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(node.value))


def duplicate_key_in(root: yaml.Node | None, source: str | Path | None = None) -> ConfigError | None:
    """The :data:`DUPLICATE_KEY` error of the first key written twice in one mapping under ``root``, or ``None``."""
    if root is None:
        return None
    constructor = yaml.constructor.SafeConstructor()
    for path, mapping in _walk(root):
        first: dict[Any, int] = {}
        for key_node, _ in mapping.value:
            key = _scalar_key(constructor, key_node)
            if key is None:
                continue
            line = key_node.start_mark.line + 1
            if key in first:
                dotted = f"{path}.{key_node.value}" if path else str(key_node.value)
                return ConfigError(
                    f"duplicate key {dotted!r}: written on line {first[key]} and again on line {line}; a key may "
                    "appear only once in a mapping (which one was meant is ambiguous): keep one of them",
                    path=source, line=line, key=dotted, code=DUPLICATE_KEY)
            first[key] = line
    return None


def check_unique_keys(text: str, source: str | Path | None = None) -> None:
    """Raise the :data:`DUPLICATE_KEY` :class:`ConfigError` when a mapping of the YAML ``text`` repeats a key.

    Text that is not YAML at all is left to the caller's own parser (nothing is raised here for it).
    """
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except Exception:  # noqa: BLE001 - not YAML (or too deep): the caller's parser reports it its own way
        return
    for node in nodes:
        error = duplicate_key_in(node, source)
        if error is not None:
            raise error


def load_yaml_text(text: str, source: str | Path | None = None) -> Any:
    """The document in ``text`` (``None`` when empty).

    Raises :class:`yaml.YAMLError` when it is not YAML, and the :data:`DUPLICATE_KEY`
    :class:`ConfigError` when a mapping repeats a key (one parse: the composed nodes are checked,
    then constructed).
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        error = duplicate_key_in(node, source)
        if error is not None:
            raise error
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
