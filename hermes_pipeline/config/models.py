"""Typed models of a validated pipeline document (spec 03 §4–§6).

Loading, layering and policy handling work on plain data (so that a warning can drop a key and
let its default apply); the result is then frozen into these pydantic models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .policy import Policy


class ComponentEntry(BaseModel):
    """One ``[[components]]`` entry."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: str
    enabled: bool = True
    config: dict[str, Any] = Field(default_factory=dict)


class DynamicRecord(BaseModel):
    """One ``[[plugins.dynamic]]`` record: exactly ``manifest`` and ``config`` (CFG-22)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    manifest: str
    config: dict[str, Any] = Field(default_factory=dict)


class PluginsTable(BaseModel):
    """The ``plugins`` table: ``dynamic`` records and the (unenforced) trust ``policy``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    dynamic: list[DynamicRecord] = Field(default_factory=list)
    policy: dict[str, Any] | None = None


class PipelineDocument(BaseModel):
    """A validated, merged pipeline document (TOML and YAML give the same model, CFG-34)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal[1] = 1
    components: list[ComponentEntry] = Field(default_factory=list)
    policy: Policy = Field(default_factory=Policy)
    plugins: PluginsTable | None = None
