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

One rule for nesting, too: libyaml's composer recurses once per nested collection without a limit, so a file of
50,000 nested ``[`` (100 KB) would kill the process with SIGSEGV. Before any loader builds a document, its
nesting is measured in one linear pass (:func:`~hermes_pipeline.config.yaml_depth.yaml_too_deep`, which never
counts a bracket in a quoted scalar, a comment or a block scalar); deeper than
:data:`~hermes_pipeline.config.yaml_depth.MAX_NESTING` (200) is the :class:`ConfigError` :data:`TOO_DEEP`
("nesting too deep") naming the file and the line (:func:`check_depth`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from .yaml_depth import MAX_NESTING, nesting_message, yaml_too_deep
from .errors import ConfigError

__all__ = ["DUPLICATE_KEY", "MAX_NESTING", "TOO_DEEP", "check_depth", "check_unique_keys", "duplicate_key_in",
           "load_yaml_text"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUPLICATE_KEY = "config.duplicate_key"
TOO_DEEP = "config.too_deep"
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


def check_depth(text: str, source: str | Path | None = None, *, code: str = TOO_DEEP) -> None:
    """Raise a :class:`ConfigError` (``code``, "nesting too deep", naming ``source`` and the line) when the YAML
    ``text`` nests deeper than :data:`MAX_NESTING` collections (see the module docstring); linear in the text."""
    line = yaml_too_deep(text, MAX_NESTING)
    if line is not None:
        raise ConfigError(nesting_message(line, MAX_NESTING), path=source, line=line, code=code)


def check_unique_keys(text: str, source: str | Path | None = None, *, too_deep_code: str = TOO_DEEP) -> None:
    """Raise the :data:`DUPLICATE_KEY` :class:`ConfigError` when a mapping of the YAML ``text`` repeats a key, and
    the ``too_deep_code`` one when it nests too deep (:func:`check_depth`, checked first).

    Text that is not YAML at all is left to the caller's own parser (nothing is raised here for it).
    """
    check_depth(text, source, code=too_deep_code)
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

    Raises :class:`yaml.YAMLError` when it is not YAML, the :data:`TOO_DEEP` :class:`ConfigError` when it
    nests deeper than :data:`MAX_NESTING` (:func:`check_depth`, before libyaml composes it), and the
    :data:`DUPLICATE_KEY` :class:`ConfigError` when a mapping repeats a key (one parse: the composed nodes are
    checked, then constructed).
    """
    check_depth(text, source)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        error = duplicate_key_in(node, source)
        if error is not None:
            raise error
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
