"""Scriptable CLI: ``--json`` for ``trace show`` and ``hooks`` carries what the text shows, and every
``--help`` speaks plain words (no spec section numbers, a legend for each abbreviation). Issue #11 item 8."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.cli.main import build_parser, main
from hermes_pipeline.cli.trace_cmd import main as trace_main

from tests.readers.trace.test_show import files  # noqa: F401 - the module-scoped fixture writing real ATOF / ATIF files

SPEC_REFERENCE = re.compile(r"\bspec\s*0?\d|§|\b(?:OBS|MW|CFG|FMT|SM|BOOK)-\d+")


def _walk(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _walk(sub, f"{name} {sub_name}")


def test_every_help_text_is_free_of_spec_section_numbers_and_requirement_ids() -> None:
    """No "(spec 05)", "§" or requirement id in the --help of any command or subcommand."""
    seen = []
    for name, parser in _walk(build_parser(), "hermes-pipeline"):
        text = parser.format_help()
        assert not SPEC_REFERENCE.search(text), f"{name} --help: {SPEC_REFERENCE.search(text)}"
        seen.append(name)
    assert {"hermes-pipeline hooks", "hermes-pipeline trace show", "hermes-pipeline metrics status",
            "hermes-pipeline config validate"} <= set(seen)


LEGEND = {"ATOF": "ATOF = Agent Trajectory Observability Format", "ATIF": "ATIF = Agent Trajectory Interchange Format",
          "OTLP": "OTLP = the OpenTelemetry protocol", "LLM": "LLM = the language model"}


def test_every_help_that_uses_an_abbreviation_explains_it() -> None:
    """A legend for every abbreviation: each --help that says ATOF, ATIF, OTLP or LLM spells it out itself."""
    checked = 0
    for name, parser in _walk(build_parser(), "hermes-pipeline"):
        text = " ".join(parser.format_help().split())
        for abbreviation, legend in LEGEND.items():
            if re.search(rf"\b{abbreviation}\b", text):
                checked += 1
                assert legend in text, f"{name} --help uses {abbreviation} without explaining it"
    assert checked >= 6


def test_hooks_text_ends_with_a_legend_for_hang_class_gated_and_return_used(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`hooks` prints "hang class B/C", "(gated)" and "(return used)": each is explained in the legend."""
    assert main(["hooks"]) == 0
    out = capsys.readouterr().out
    legend = out.split("\nlegend:\n", 1)[1]
    assert "hang class B" in out and "(gated" in out and "return used" in out
    assert "B = the callback is abandoned and the agent goes on (fail-open)" in legend
    assert "C = the callback is abandoned and the tool call is blocked (fail-closed)" in legend
    assert "gated  " in legend and "return used  " in legend


def test_hooks_json_carries_the_same_catalogue_as_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    """`hooks --json` parses and holds, for every hook line of `hooks --fields`, its family, hang class, flags and
    fields; and every middleware kind with its fields."""
    assert main(["hooks", "--fields"]) == 0
    text = capsys.readouterr().out.split("\n\nlegend:")[0].splitlines()
    assert main(["hooks", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["observer_contract"] == "hermes.observer.v1" and set(data["hang_classes"]) == {"B", "C"}
    rows = iter(text)
    for hook in data["hooks"]:
        line, fields = next(rows), next(rows)
        assert line.split()[:4] == [hook["name"], hook["family"], "hang", "class"]
        assert line.split()[4] == hook["hang_class"]
        assert ("gated" in line) is hook["gated"] and ("return used" in line) is hook["return_used"]
        assert fields.strip().split(", ") == (hook["fields"] or [""])
    for entry in data["middleware"]:
        line, fields = next(rows), next(rows)
        assert line.split()[:2] == ["middleware", entry["kind"]]
        assert fields.strip().split(", ") == entry["fields"]
    assert next(rows, None) is None


def _nodes(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        yield node
        yield from _nodes(node["children"])


@pytest.mark.parametrize("kind", ["atof", "atif"])
def test_trace_show_json_carries_the_tree_of_the_text(files: tuple[Path, Path], kind: str,  # noqa: F811
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`trace show --json` parses; it has one node per tree line, in the same order, with the same label, the
    same slowest / heaviest marks and problem statuses, the same problem counts and the same --slowest list."""
    path = files[0] if kind == "atof" else files[1]
    assert trace_main(["show", str(path), "--no-color", "--slowest", "3"]) == 0
    text = capsys.readouterr().out
    assert trace_main(["show", str(path), "--json", "--slowest", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == kind.upper() and data["summary"] == text.splitlines()[0]
    tree = text.split("\nproblems: ")[0].splitlines()[1:]
    nodes = list(_nodes(data["roots"]))
    assert len(nodes) == len(tree) > 5
    for node, row in zip(nodes, tree):
        assert node["label"] in row
        assert ("◀ slowest" in row) is ("slowest" in node["flags"])
        assert ("◀ heaviest" in row) is ("heaviest" in node["flags"])
        if node["problem"] and node["problem"] != "OPEN":
            assert f"✗ {node['problem']}" in row
        if node["tokens"] is not None:
            assert f"tokens in {node['tokens_in'] or 0} / out {node['tokens_out'] or 0}" in row
    problems = text.split("\nproblems: ")[1].splitlines()[0]
    assert problems == ", ".join(f"{count} {name}" for name, count in data["problems"].items())
    ranking = text.split("scope(s):\n")[1].splitlines()
    assert [r.split(maxsplit=3)[-1] for r in ranking] == [s["label"] for s in data["slowest"]]
