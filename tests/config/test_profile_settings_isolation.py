"""Profile settings that cannot reach outside the profile, one rule for repeated YAML keys, and a warning for a
misspelt top-level key (look-alike letters included) (spec 03 CFG-64a, CFG-69; spec 06 §0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.config import ConfigError
from hermes_pipeline.config.loader import parse_yaml
from hermes_pipeline.config.profile_config import load_profile_settings
from hermes_pipeline.config.profile_edit import get_value
from hermes_pipeline.config.profile_paths import profile_path_problem
from hermes_pipeline.config.suggest import fold_confusables
from hermes_pipeline.config.yaml_text import DUPLICATE_KEY, check_unique_keys

PATH_KEYS = ("observability.trajectories.dir", "observability.logs.path", "observability.audit.skills_dir")

segment = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd"), max_codepoint=0x7F),
                  min_size=1, max_size=6)
escaping = st.one_of(
    st.builds(lambda p: "/" + "/".join(p), st.lists(segment, min_size=1, max_size=3)),
    st.builds(lambda p: "~/" + "/".join(p), st.lists(segment, max_size=3)),
    st.builds(lambda d, p: f"{d}:\\" + "\\".join(p), st.sampled_from("CDz"), st.lists(segment, max_size=3)),
    st.builds(lambda a, b, sep: sep.join([*a, "..", *b]), st.lists(segment, max_size=2), st.lists(segment, max_size=2),
              st.sampled_from(["/", "\\", "//"])),
)


@given(escaping)
def test_paths_leaving_the_profile_are_refused(path: str) -> None:
    """Absolute, home, drive and '..' paths are refused by the profile path rule."""
    assert profile_path_problem(path) is not None


@given(st.lists(segment, min_size=1, max_size=4), st.sampled_from(["/", "\\"]))
def test_relative_paths_inside_the_profile_are_accepted(parts: list[str], sep: str) -> None:
    """A relative path without '..' stays accepted (the defaults among them)."""
    assert profile_path_problem(sep.join(parts)) is None
    assert profile_path_problem("logs/hermes-pipeline.jsonl") is None


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(PATH_KEYS), path=escaping)
def test_open_profile_keeps_the_default_and_config_get_set_refuse(tmp_path: Path, key: str, path: str) -> None:
    """trajectories.dir, logs.path, skills_dir: a path leaving the profile is never used; the warning names
    the key and the file."""
    home = tmp_path / "h"
    home.mkdir(exist_ok=True)
    section, leaf = key.split(".")[1:]
    (home / "config.yaml").write_text(f"observability:\n  {section}:\n    {leaf}: {path!r}\n", encoding="utf-8")
    loaded = load_profile_settings(home, log=False)
    problems = [d for d in loaded.diagnostics if d.field == key]
    assert problems and problems[0].source == str(home / "config.yaml")
    assert loaded.trajectories.dir == "trajectories" and loaded.observability.log_path == "logs/hermes-pipeline.jsonl"
    assert loaded.observability.skills_dir == "skills"


def test_memory_dirs_entry_leaving_the_profile_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("observability:\n  audit:\n    memory_dirs: [memories, ../other]\n",
                                          encoding="utf-8")
    loaded = load_profile_settings(tmp_path, log=False)
    assert loaded.observability.memory_dirs == ("memories",)
    assert any(d.field == "observability.audit.memory_dirs" and "entry 2" in d.message for d in loaded.diagnostics)


# ---------------------------------------------------------------- repeated keys

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.lists(names, max_size=3, unique=True), key=names, between=st.lists(names, max_size=3, unique=True),
       depth=st.integers(0, 2))
def test_repeated_key_is_one_error_everywhere_naming_both_lines(tmp_path: Path, prefix: list[str], key: str,
                                                                 between: list[str], depth: int) -> None:
    """A key written twice in one mapping: check_unique_keys, the pipeline YAML loader, config get and open_profile
    all give the config.duplicate_key error with both line numbers."""
    prefix = [p for p in prefix if p != key]
    between = [b for b in between if b != key and b not in prefix]
    indent = "  " * depth
    lines = [f"n{i}:" for i in range(depth)]
    lines = [("  " * i) + line for i, line in enumerate(lines)]
    body = [f"{indent}{p}: 1" for p in prefix] + [f"{indent}{key}: 1"] + [f"{indent}{b}: 2" for b in between] + \
        [f"{indent}{key}: 3"]
    text = "\n".join(lines + body) + "\n"
    first = len(lines) + len(prefix) + 1
    second = first + len(between) + 1
    with pytest.raises(ConfigError) as info:
        check_unique_keys(text, "f.yaml")
    error = info.value
    assert error.code == DUPLICATE_KEY and error.line == second
    assert f"line {first}" in error.message and f"line {second}" in error.message
    with pytest.raises(ConfigError) as loader_info:
        parse_yaml(text, Path("pipeline.yaml"))
    assert loader_info.value.message == error.message
    home = tmp_path / "h"
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as get_info:
        get_value(home, "observability.trajectories.dir")
    assert get_info.value.message == error.message
    loaded = load_profile_settings(home, log=False)
    assert [d.line for d in loaded.diagnostics if d.code == DUPLICATE_KEY] == [second]


def test_yaml_11_spellings_of_one_key_are_the_same_key() -> None:
    with pytest.raises(ConfigError):
        check_unique_keys("a:\n  yes: 1\n  true: 2\n")
    check_unique_keys("a:\n  1: x\n  true: y\n<<: {b: 1}\nb: 2\n")  # different keys; a merge key is no repeat


# ---------------------------------------------------------------- top-level did-you-mean


@pytest.mark.parametrize("written", ["оbservability", "οbservability", "ｏｂｓｅｒｖａｂｉｌｉｔｙ", "Observability",
                                     "observabilty", "tеlеmеtry", "plugіns"])
def test_misspelt_top_level_key_is_warned_with_did_you_mean(tmp_path: Path, written: str) -> None:
    """A top-level key that reads as one of this schema's (Cyrillic, Greek, full-width letters, case, a typo)
    gets a config.unknown_key warning naming the key it resembles; the agent's own keys get none."""
    (tmp_path / "config.yaml").write_text(f"{written}:\n  x: 1\nmodel: m\ntoolsets: [a]\nterminal: {{}}\n",
                                          encoding="utf-8")
    found = [d for d in load_profile_settings(tmp_path, log=False).diagnostics if d.code == "config.unknown_key"]
    assert [d.field for d in found] == [written]
    assert found[0].suggestion in ("observability", "telemetry", "plugins")
    assert fold_confusables(written).replace("observabilty", "observability") == found[0].suggestion
