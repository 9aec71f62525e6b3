"""Layering rules checked on the source: no layer imports the package root or a higher layer's private
names, and each fact is stated once."""

from __future__ import annotations

import ast
import importlib.metadata
from pathlib import Path

import hermes_pipeline
from hermes_pipeline.contract.versions import PACKAGE_VERSION

PACKAGE = Path(hermes_pipeline.__file__).resolve().parent


def _imports(path: Path) -> list[tuple[int, str | None, list[str]]]:
    """``(level, module, names)`` of every ``from ... import`` in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.level, node.module, [alias.name for alias in node.names])
            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]


def test_the_version_is_stated_below_the_config_layer_and_matches_the_distribution() -> None:
    assert hermes_pipeline.__version__ == PACKAGE_VERSION == importlib.metadata.version("hermes_pipeline")
    for layer in ("contract", "engine", "host", "config", "export"):
        for path in (PACKAGE / layer).rglob("*.py"):
            depth = len(path.relative_to(PACKAGE).parts)  # "from .. import" in a/b.py is the root
            for level, module, names in _imports(path):
                assert not (level == depth and module is None), f"{path} imports the package root: {names}"


def test_the_host_reads_the_engine_only_through_its_documented_view() -> None:
    """The host checks ``engine.hook_listeners`` / ``engine.middleware_listeners`` (read-only views),
    never the engine's private names."""
    for path in (PACKAGE / "host").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        private = sorted({node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                          and isinstance(node.value, ast.Attribute) and node.value.attr == "engine"
                          and node.attr.startswith("_")}
                         | {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                            and isinstance(node.value, ast.Name) and node.value.id == "engine"
                            and node.attr.startswith("_")})
        assert not private, f"{path} reads the engine's private {private}"


def test_the_plugin_set_and_the_middleware_runners_never_import_the_engine() -> None:
    """They receive what they need (registries, ``add_entry``, a failure reporter), as pluggy's HookCaller
    receives ``hook_execute``: no import circle with ``engine/core.py``."""
    for name in ("plugins.py", "contexts.py", "middleware.py", "registry.py"):
        for level, module, _ in _imports(PACKAGE / "engine" / name):
            assert not (level == 1 and module == "core"), f"engine/{name} imports engine/core.py"


def _string_collections(path: Path) -> list[tuple[int, frozenset[str]]]:
    """``(line, keys)`` of every dict, set, tuple or list literal in ``path`` whose keys/items are all strings."""
    out: list[tuple[int, frozenset[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        items = node.keys if isinstance(node, ast.Dict) else \
            node.elts if isinstance(node, ast.Set | ast.Tuple | ast.List) else None
        if items and all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items):
            out.append((node.lineno, frozenset(item.value for item in items)))  # type: ignore[union-attr]
    return out


def test_each_sinks_keys_are_stated_once_in_its_own_package() -> None:
    """A sink's keys, removed keys and entry keys live in its package's ``config.py`` only: no other
    module of the package holds a literal with the same set of keys (a second copy that could drift).
    ``cli/config_reference.py`` is the prose reference keyed by those names; ``test_docgen`` fails when
    it and the statement disagree."""
    from hermes_pipeline.sinks.atif import config as atif
    from hermes_pipeline.sinks.atof import config as atof
    from hermes_pipeline.sinks.otel import config as otel

    common = frozenset({"type", "max_queue_size", "enabled", "worker"})
    statements = {"atof keys": frozenset(atof.KEYS), "atof removed keys": frozenset(atof.REMOVED_KEYS),
                  "atof file sink keys": frozenset(atof.FILE_SINK) - common,
                  "atof stream sink keys": frozenset(atof.STREAM_SINK) - common,
                  "atif keys": frozenset(atif.KEYS) - common, "atif s3 keys": frozenset(atif.S3_STORAGE) - common,
                  "atif http keys": frozenset(atif.HTTP_STORAGE) - common,
                  "opentelemetry keys": frozenset(otel.KEYS) - common,
                  "opentelemetry trace endpoint keys": frozenset(otel.TRACE_ENDPOINT) - common,
                  "opentelemetry signal endpoint keys": frozenset(otel.SIGNAL_ENDPOINT) - common,
                  "opentelemetry logs keys": frozenset(otel.LOGS) - common,
                  "opentelemetry metrics keys": frozenset(otel.METRICS) - common,
                  "opentelemetry file sink keys": frozenset(otel.FILE_SINK) - common,
                  "opentelemetry removed keys": frozenset(otel.REMOVED_KEYS)}
    home = {PACKAGE / "sinks" / "atof" / "config.py", PACKAGE / "sinks" / "atif" / "config.py",
            PACKAGE / "sinks" / "otel" / "config.py",
            PACKAGE / "cli" / "config_reference.py"}
    copies = [f"{path.relative_to(PACKAGE)}:{line} repeats the {what}"
              for path in sorted(PACKAGE.rglob("*.py")) if path not in home
              for line, keys in _string_collections(path)
              for what, stated in statements.items()
              if len(stated) >= 3 and (stated <= keys if len(stated) >= 5 else stated == keys - common)]
    assert not copies, copies


MODULE_LINES = 400
"""Issue #13: no module over about 400 lines without a reason at its top."""


def test_every_module_over_400_lines_says_why_at_its_top() -> None:
    """A module longer than :data:`MODULE_LINES` states, in its docstring, why it is kept whole (a
    sentence such as "Over 400 lines on purpose: ..."); a long module without one fails here."""
    import re

    reason = re.compile(r"\b(over|longer)\b[^.]{0,60}\b(on purpose|for a reason)\b", re.IGNORECASE)
    silent = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= MODULE_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not reason.search(doc):
            silent.append(f"{path.relative_to(PACKAGE)} ({text.count(chr(10))} lines)")
    assert silent == [], f"modules over {MODULE_LINES} lines without a reason at the top: {silent}"
