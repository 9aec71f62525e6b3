"""Schema-version constants injected into every payload (OBS-14, MW-9)."""

from typing import Final

TELEMETRY_SCHEMA_VERSION: Final = "hermes.observer.v1"
"""Value of ``telemetry_schema_version`` in every observer and middleware payload."""

MIDDLEWARE_SCHEMA_VERSION: Final = "hermes.middleware.v1"
"""Value of ``middleware_schema_version`` in every middleware call."""

PACKAGE_VERSION: Final = "0.1.0"
"""This package's version (``hermes_pipeline.__version__``; the one in ``pyproject.toml``), stated at the
bottom of the layers so that every layer may read it without importing the package root."""

PROJECT_NAME: Final = "hermes_pipeline"
"""The pluggy project name used by :data:`hookspec` and :data:`hookimpl` (OBS-9)."""

COMPONENT_ENTRY_POINT_GROUP: Final = "hermes_pipeline.components"
"""Entry-point group in which component plugins are published (spec 03 §15)."""
