"""One word per concept (issue #29 item 6), read from the package's text: the word "projection" names only the
OpenTelemetry renderings of the scope stream (spec 04 §4: the ``gen_ai``, ``full`` and ``openinference``
projections, and the spec's config key ``mark_projection``), never the hook → scope-event mapping, which is the
scope plugin / scope tracker / scope kinds / scope stream (glossary: ``docs/architecture.md``, "Words").

A line of ``hermes_pipeline/`` that says "projection" passes only when its module renders OTLP spans
(:data:`SPEC_SENSE`), the word is the spec's key ``mark_projection``, or the line keeps a former public name
alive as a deprecated alias (:data:`FORMER_NAMES`: the former name, quoted or as an identifier, in a module
that declares it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from tests._repo import REPO

PACKAGE = REPO / "hermes_pipeline"
TEXT_SUFFIXES = frozenset({".py", ".toml", ".md", ".yaml", ".yml", ".json", ".sql", ".txt", ".html", ".js"})

SPEC_SENSE: Mapping[str, str] = {
    "sinks/otel/__init__.py": "one module per projection (spec 04 §4)",
    "sinks/otel/genai.py": "the gen_ai projection (spec 04 §4.2)",
    "sinks/otel/full.py": "the full projection (spec 04 §4.5)",
    "sinks/otel/openinference.py": "the openinference projection (spec 04 §4.6)",
    "sinks/otel/attrs.py": "attributes shared by the projections (spec 04 §4.1, §4.4)",
    "sinks/otel/messages.py": "message attributes of the gen_ai and openinference projections",
    "sinks/otel/state.py": "options every projection reads (spec 04 §4)",
    "sinks/otel/spans.py": "the span builder routing each endpoint's projection",
    "sinks/otel/config.py": "an endpoint's type is its projection (spec 04 §4, §4.9)",
    "sinks/otel/langfuse.py": "Langfuse takes the gen_ai projection (FMT-75)",
    "sinks/otel/metrics_recorder.py": "the trace projection's operation-name rule",
    "cli/config_reference.py": "the documented endpoint type: a projection (spec 04 §4.9)",
    "config/templates/phoenix.toml": "which projection the Phoenix recipe uses",
    "config/templates/mlflow.toml": "which projection the MLflow recipe uses",
}
"""Modules (relative to ``hermes_pipeline/``) where "projection" is the spec's word for an OTLP rendering."""

SPEC_KEYS = re.compile(r"\bmark_projection\b")
"""Configuration keys the spec defines (spec 03 §7, spec 04 §4.5): kept as they are in users' files."""

FORMER_NAMES: Mapping[str, frozenset[str]] = {
    "profile/profiles.py": frozenset({"shared_projection"}),          # Profile.stream
    "profile/stream.py": frozenset({"projection"}),                   # SharedStream.scope_plugin
    "components/observability.py": frozenset({"projection"}),         # ObservabilityComponent.scope_plugin
    "components/observability_sinks.py": frozenset({"projection"}),   # AttachedSinks.scope_plugin
    "sinks/trajectory_store/consumer.py": frozenset({"projection", "shared_projection"}),  # StoreHandle.stream
    "sinks/observability_store/consumer.py": frozenset({"projection", "shared_projection"}),
}
"""Deprecated aliases (``hermes_pipeline/_deprecated.py``) by module: the former names they keep working."""


def former_name_uses(names: Iterable[str]) -> re.Pattern[str]:
    """A former name as code names it: quoted (``"projection"``), in double backquotes, or an identifier
    that is the whole former name (``shared_projection``); never the bare word inside prose."""
    alternatives = []
    for name in names:
        quoted = rf"[\"'`]{{1,2}}{re.escape(name)}[\"'`]{{1,2}}"
        alternatives.append(quoted if "_" not in name else rf"{quoted}|\b{re.escape(name)}\b")
    return re.compile("|".join(alternatives))


def stray_uses(files: Mapping[str, str]) -> list[str]:
    """``module:line: text`` of every use of "projection" outside the allowed senses in ``files``
    (module path relative to the package → text)."""
    found = []
    for module, text in sorted(files.items()):
        if module in SPEC_SENSE:
            continue
        former = former_name_uses(FORMER_NAMES.get(module, ()))
        for number, line in enumerate(text.splitlines(), 1):
            rest = SPEC_KEYS.sub("", line)
            if FORMER_NAMES.get(module):
                rest = former.sub("", rest)
            if "projection" in rest.lower():
                found.append(f"{module}:{number}: {line.strip()}")
    return found


def package_texts(package: Path = PACKAGE) -> dict[str, str]:
    return {path.relative_to(package).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(package.rglob("*"))
            if path.suffix in TEXT_SUFFIXES and path.is_file() and "__pycache__" not in path.parts}


def test_projection_names_only_the_otel_renderings() -> None:
    stray = stray_uses(package_texts())
    assert stray == [], ("'projection' is the OpenTelemetry renderings' word (spec 04 §4); the hook -> scope-event "
                         "mapping is the scope plugin / scope tracker / scope kinds / scope stream (docs/architecture.md"
                         ", Words). Rename, or list a new OTel rendering module in SPEC_SENSE:\n" + "\n".join(stray))


def test_the_allowlists_name_real_modules() -> None:
    """An allowlist entry whose module moved or lost the word would silently allow nothing (or too much)."""
    texts = package_texts()
    assert [m for m in SPEC_SENSE if "projection" not in texts.get(m, "").lower()] == []
    assert [m for m in FORMER_NAMES if "projection" not in texts.get(m, "")] == []


def test_the_check_catches_the_old_sense_and_spares_the_allowed_ones() -> None:
    files = {
        "export/new_module.py": '"""Each hook is projected by the hook projection."""\n',
        "profile/stream.py": '__getattr__ = renamed_attributes("SharedStream", {"projection": "scope_plugin"})\n'
                             '# the projection of the profile\n',
        "sinks/trajectory_store/consumer.py": "    stream = renamed_keyword(x, former, 'shared_projection', 'stream', s)\n"
                                              "    former name ``shared_projection`` still works\n",
        "sinks/otel/genai.py": '"""The ``gen_ai`` projection."""\n',
        "sinks/atof/sink.py": 'MARKS = {"mark_projection": "event"}\n',
        "sinks/otel/quick_endpoint.py": "# fed by the profile's projection\n",
    }
    assert stray_uses(files) == [
        'export/new_module.py:1: """Each hook is projected by the hook projection."""',
        "profile/stream.py:2: # the projection of the profile",
        "sinks/otel/quick_endpoint.py:1: # fed by the profile's projection",
    ]
