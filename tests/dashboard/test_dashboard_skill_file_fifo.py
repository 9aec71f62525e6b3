"""The skills page never waits on a ``SKILL.md`` that is no regular file (a FIFO stands in for a file on a home that
stopped answering): the page answers, the skill listed without its front matter (BOOK-30, OBS-61)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.dashboard import queries_pages


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_a_fifo_named_skill_md_gives_no_front_matter_and_no_wait(tmp_path: Path) -> None:
    fifo = tmp_path / "SKILL.md"
    os.mkfifo(fifo)
    out: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: out.setdefault("meta", queries_pages._front_matter(fifo)), daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), "reading the front matter of a FIFO waited for a writer"
    assert out["meta"] == {}


def test_a_regular_skill_md_gives_its_front_matter(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("---\nname: deploy\ndescription: 'Ship the app'\n---\n# Deploy\n" + "x" * 40_000,
                     encoding="utf-8")
    assert queries_pages._front_matter(skill) == {"name": "deploy", "description": "Ship the app"}
    plain = tmp_path / "other.md"
    plain.write_text("\n# Rotate keys\nsteps\n", encoding="utf-8")
    assert queries_pages._front_matter(plain) == {"description": "Rotate keys"}
