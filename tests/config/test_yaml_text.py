"""The profile's ``config.yaml`` is read as Hermes reads it (PyYAML's safe loader), by one function.

Hermes writes and reads ``config.yaml`` with ``yaml.safe_load``; the profile settings and the bridge's
profile facts read it through :func:`hermes_pipeline.config.yaml_text.load_yaml_text` (libyaml when
present), so a value means the same to both (CFG-64a: the profile's settings come from that file).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.config.profile_config import load_profile_settings, read_yaml_mapping
from hermes_pipeline.config.yaml_text import load_yaml_text
from hermes_pipeline.hermes.facts import read_profile

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.text(max_size=20),
                    st.sampled_from(["yes", "no", "on", "off", "0755", "1:30", "~", "null", "1e3", "2026-12-02"]))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(st.text(min_size=1, max_size=8), inner,
                                                                          max_size=4)), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(documents, st.booleans())
def test_load_yaml_text_reads_every_document_as_yaml_safe_load(doc: object, flow: bool) -> None:
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=True)
    assert load_yaml_text(text) == yaml.safe_load(text)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["yes", "no", "on", "off", "0755", "1:30", "'yes'", "true", "2026-12-02"]))
def test_hand_written_scalars_mean_what_they_mean_to_hermes(scalar: str) -> None:
    text = f"plugins:\n  enabled: [hermes_pipeline]\nvalue: {scalar}\n"
    assert load_yaml_text(text) == yaml.safe_load(text)


def test_profile_settings_and_bridge_facts_read_yes_as_hermes_does(tmp_path: Path) -> None:
    """``enabled: yes`` is true to Hermes (YAML 1.1), so it is true to the profile settings and to the bridge."""
    (tmp_path / "config.yaml").write_text(
        "plugins:\n  enabled: [hermes_pipeline]\nobservability:\n  trajectories:\n    enabled: yes\n", "utf-8")
    assert yaml.safe_load((tmp_path / "config.yaml").read_text("utf-8"))["observability"]["trajectories"]["enabled"] is True
    assert read_yaml_mapping(tmp_path / "config.yaml")[0]["observability"]["trajectories"]["enabled"] is True
    assert read_profile(tmp_path).trajectories is True
    assert load_profile_settings(tmp_path).trajectories.enabled is True


def test_not_yaml_is_a_named_problem_not_an_exception(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("plugins: [unclosed\n", "utf-8")
    data, problem = read_yaml_mapping(tmp_path / "config.yaml")
    assert data == {} and problem is not None and "not valid YAML" in problem
    assert read_profile(tmp_path).error is not None
