"""The frozen records of a validated pipeline document (spec 03 §4-§6, CFG-34): what the validator accepted,
as typed values; anything else is a ``ConfigError`` naming the document, never a half-built record."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.config import ConfigError, PipelineDocument, Policy
from hermes_pipeline.config.models import ComponentEntry, DynamicRecord

levels = st.sampled_from(["ignore", "warn", "error"])
policies = st.fixed_dictionaries({}, optional={"unknown_component": levels, "unknown_field": levels,
                                               "unsupported_value": levels})
components = st.lists(st.fixed_dictionaries({"kind": st.text(min_size=1, max_size=12)},
                                            optional={"enabled": st.booleans(),
                                                      "config": st.dictionaries(st.text(max_size=5), st.integers(),
                                                                                max_size=3)}), max_size=4)
dynamic = st.lists(st.fixed_dictionaries({"manifest": st.text(min_size=1, max_size=20)},
                                         optional={"config": st.dictionaries(st.text(max_size=5), st.booleans(),
                                                                             max_size=2)}), max_size=3)
documents = st.fixed_dictionaries({}, optional={"version": st.just(1), "components": components, "policy": policies,
                                                "plugins": st.fixed_dictionaries({}, optional={"dynamic": dynamic})})


@settings(max_examples=200, deadline=None)
@given(documents)
def test_a_valid_document_becomes_records_holding_the_same_values(data: dict[str, Any]) -> None:
    doc = PipelineDocument.from_data(data)
    assert doc.version == 1
    assert doc.components == [ComponentEntry(c["kind"], c.get("enabled", True), c.get("config", {}))
                              for c in data.get("components", [])]
    assert doc.policy == Policy(**data.get("policy", {}))
    if "plugins" in data:
        assert doc.plugins is not None
        assert doc.plugins.dynamic == [DynamicRecord(r["manifest"], r.get("config", {}))
                                       for r in data["plugins"].get("dynamic", [])]
    else:
        assert doc.plugins is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.version = 2  # type: ignore[misc]


@pytest.mark.parametrize("data", [
    {"version": 2}, {"version": True}, {"extra": 1}, {"components": [{"kind": 3}]},
    {"components": [{"kind": "x", "enabled": "yes"}]}, {"components": [{"kind": "x", "bogus": 1}]},
    {"components": [{"enabled": True}]}, {"policy": {"unknown_field": "loud"}}, {"policy": {"strictness": "warn"}},
    {"plugins": {"dynamic": [{"manifest": "m", "sha": "x"}]}}, {"plugins": {"policy": "all"}}, {"plugins": []},
])
def test_anything_else_is_a_config_error_naming_the_file(data: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as info:
        PipelineDocument.from_data(data, path="plugins.toml")
    assert info.value.code == "pipeline.invalid" and "plugins.toml" in str(info.value)


@given(st.text(max_size=8).filter(lambda s: s not in ("ignore", "warn", "error")))
def test_a_policy_level_outside_the_three_is_refused(level: str) -> None:
    with pytest.raises(ValueError, match="expected one of ignore, warn, error"):
        Policy(unknown_field=level)  # type: ignore[arg-type]
