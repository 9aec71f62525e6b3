"""The YAML nesting pre-scan (spec 03 CFG-35 YAML parsing, CFG-7 a selected file that fails to load; fault
review D6): a document nested deeper than ``MAX_NESTING`` collections is a typed ``ConfigError`` naming the file
and line ("nesting too deep") before libyaml's recursive composer sees it; anything shallower is accepted, and a
bracket in a quoted scalar, a comment or a block scalar is never counted."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.config.errors import ConfigError
from hermes_pipeline.config.yaml_depth import MAX_NESTING, yaml_too_deep
from hermes_pipeline.config.yaml_text import TOO_DEEP, check_unique_keys, load_yaml_text

NOISE = ["'[[[{{'", '"[{ \\" [["', "'it''s [ {'"]


def _render(depth: int, styles: list[str], noise: str, indent: int = 0) -> str:
    """A value nested ``depth`` collections deep, each level in the style ``styles[level % len]``: ``flow_seq``,
    ``flow_map``, ``block_map``, ``block_seq`` (block only outside flow); leaves are quoted scalars holding
    brackets."""
    if depth == 0:
        return noise
    style = styles[depth % len(styles)]
    pad = " " * indent
    if style == "block_map" and "\n" not in pad:
        inner = _render(depth - 1, styles, noise, indent + 2)
        return f"\n{pad}  k: {inner}" if not inner.startswith("\n") else f"\n{pad}  k:{inner}"
    if style == "block_seq":
        inner = _render(depth - 1, styles, noise, indent + 2)
        return f"\n{pad}  - {inner.lstrip()}" if not inner.startswith("\n") else f"\n{pad}  -{inner}"
    inner = _flow(depth - 1, styles, noise)
    return f"[{inner}, {noise}]" if style in ("flow_seq", "block_map") else f"{{a: {inner}, b: {noise}}}"


def _flow(depth: int, styles: list[str], noise: str) -> str:
    if depth == 0:
        return noise
    inner = _flow(depth - 1, styles, noise)
    return f"[{inner}]" if styles[depth % len(styles)] in ("flow_seq", "block_seq") else f"{{a: {inner}}}"


def _true_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_true_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_true_depth(v) for v in value), default=0)
    return 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(depth=st.integers(min_value=1, max_value=MAX_NESTING + 40),
       styles=st.lists(st.sampled_from(["flow_seq", "flow_map", "block_map", "block_seq"]), min_size=1, max_size=4),
       noise=st.sampled_from(NOISE), comment=st.booleans(), block_scalar=st.booleans())
def test_accepted_iff_nested_at_most_the_limit(depth: int, styles: list[str], noise: str, comment: bool,
                                               block_scalar: bool) -> None:
    """CFG-35: the pre-scan refuses exactly the documents deeper than ``MAX_NESTING`` (1 level is the top
    mapping); brackets in quoted scalars, comments and block scalars never count."""
    body = _render(depth - 1, styles, noise, 0)
    text = f"top:{body}\n" if body.startswith("\n") else f"top: {body}\n"
    if comment:
        text = "# [[[[[[[[ {{{{{{ " * 50 + "\n" + text
    if block_scalar:
        text += "doc: |\n  " + "[" * (MAX_NESTING * 2) + "\n  {{{{\nfold: >-\n  " + "{" * (MAX_NESTING * 2) + "\n"
    expected = _true_depth(yaml.load(text, Loader=yaml.SafeLoader)) if depth < 500 else depth
    too_deep = yaml_too_deep(text)
    assert (too_deep is not None) == (expected > MAX_NESTING), (expected, text[:300])
    if expected > MAX_NESTING:
        with pytest.raises(ConfigError) as caught:
            load_yaml_text(text, "config.yaml")
        assert caught.value.code == TOO_DEEP and "nesting too deep" in str(caught.value)
        assert "config.yaml" in str(caught.value) and caught.value.line is not None
    else:
        assert load_yaml_text(text, "config.yaml") == yaml.load(text, Loader=yaml.SafeLoader)


@pytest.mark.parametrize("text", ["a: " + "[" * 150 + "x" + "]" * 150 + "\n",
                                  "a: '" + "[" * 5000 + "'\n", "# " + "[" * 5000 + "\na: 1\n",
                                  "a: |\n  " + "{" * 5000 + "\n", 'a: "' + "{[" * 3000 + '"\n',
                                  "- " * 150 + "x\n"])
def test_shallow_yaml_with_many_brackets_is_accepted(text: str) -> None:
    """CFG-35: quoted, commented and block-scalar brackets are text, not nesting."""
    assert yaml_too_deep(text) is None
    check_unique_keys(text, "config.yaml")


def test_a_pipeline_file_too_deep_is_the_pipeline_error_naming_the_file(tmp_path: Path) -> None:
    """CFG-7: a YAML pipeline file nested too deep fails to load with a typed error naming it (no recursion)."""
    from hermes_pipeline.config.loader import parse_file

    path = tmp_path / "pipeline.yaml"
    path.write_text("version: 1\nx: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        parse_file(path)
    assert "nesting too deep" in str(caught.value) and str(path) in str(caught.value)
    assert caught.value.line == 2


DEEP = "[" * 50_000 + "]" * 50_000
CHILD = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from hermes_pipeline.profile import open_profile
    from hermes_pipeline.config.yaml_text import load_yaml_text
    which, path = sys.argv[1], Path(sys.argv[2])
    if which == "load":
        try:
            load_yaml_text(path.read_text(), path)
        except Exception as exc:
            print("ERROR", exc)
    else:
        open_profile(path.parent)
    print("RETURNED")
""")


@pytest.mark.parametrize(("which", "where"), [("load", "config.yaml"), ("profile", "config.yaml"),
                                              ("profile", "managed.yaml"), ("engine", "pipeline.yaml")])
def test_50000_deep_yaml_is_a_clear_error_not_a_signal(tmp_path: Path, which: str, where: str) -> None:
    """CFG-7 / CFG-35: 50,000 nested ``[`` (100 KB, under the 1 MiB cap) in ``config.yaml``, the managed overlay
    or a YAML pipeline file: the process ends normally with an error naming the file (it died of SIGSEGV)."""
    home = tmp_path / "home"
    home.mkdir()
    path = (home if where == "config.yaml" else tmp_path) / where
    path.write_text(("version: 1\nx: " if where == "pipeline.yaml" else "observability: ") + DEEP + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OTEL_"))}
    env.update(HERMES_HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "user"),
               HERMES_PIPELINE_SYSTEM_PLUGINS_TOML=str(tmp_path / "none"))
    code, arg = CHILD, str(home / "config.yaml")
    if where == "managed.yaml":
        env["HERMES_MANAGED_CONFIG"] = str(path)
    if which == "engine":
        env["HERMES_NEMO_RELAY_PLUGINS_TOML"] = str(path)
        code = "from hermes_pipeline import get_engine\nget_engine()\nprint('RETURNED')\n"
    proc = subprocess.run([sys.executable, "-c", code, which, arg], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-1500:])
    assert "RETURNED" in proc.stdout
    said = proc.stdout + proc.stderr
    assert "nesting too deep" in said and where in said
