"""The ATOF lines and ATIF files of fixed streams are the bytes the writers made before the writer-thread work
(issue #29), checked in under ``tests/data/writer_golden`` (inputs and outputs; see ``tests/sinks/_golden.py``):
FMT-14 and FMT-25 (ATOF lines, history delta), FMT-43, FMT-44, FMT-46, FMT-48 and FMT-52 (ATIF documents by
session and by turn, delta histories, system steps, subagents, idless calls, out-of-order timestamps)."""

from __future__ import annotations

import pytest

from tests.sinks._golden import ATIF_CONFIGS, DIRECTORY, SEEDS, load, outputs


@pytest.mark.parametrize("name", [f"seed{seed}" for seed in SEEDS])
def test_fmt_46_writers_make_the_golden_bytes(name: str) -> None:
    """FMT-14, FMT-25, FMT-46, FMT-52: every output byte for byte, the ATOF file and each ATIF configuration."""
    made = outputs(load(name))
    assert sorted(made) == sorted(["atof.jsonl", *(f"{config}.json" for config in ATIF_CONFIGS)])
    for suffix, content in made.items():
        assert content == (DIRECTORY / f"{name}.{suffix}").read_bytes(), suffix
