"""A run's replays on its page, a replay's original on its own (issue #31 item 5, issue #28 item 5; spec 06
BOOK-31a, BOOK-33 for replay and its diff, BOOK-38 for the run page).

A run recorded by the reference agent is replayed for real (``replay.runner.run_replay`` into the profile's
trajectory store): the run page lists the replay with its verdict and a compare link; the replay's page links
to its original and offers "compare with the original". A Hermes replay is written as ``replay-<session>.json``
(not a store name): it is listed and reachable by its id all the same. The same in headless Chromium on the
generated profile of 2,000 sessions is ``test_dashboard_questions.test_a_run_and_its_replay_in_two_clicks``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.dashboard import Dashboard, load_sources
from hermes_pipeline.dashboard.replays import ReplayIndex


def _body(app: Dashboard, route: str, status: int = 200) -> str:
    response = app.respond(route)
    assert response.status == status, (route, response.status, response.body[-300:])
    return response.body.decode()


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from hermes_pipeline.demo.model_server import ScriptStep, ToolCallSpec
    from hermes_pipeline.replay import Recording
    from hermes_pipeline.replay.runner import run_replay

    from ..trajectories._support import record_reference_run

    tmp = tmp_path_factory.mktemp("replayed")
    script = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]),
              ScriptStep(content="Your notes say: oats, apples.")]
    recorded, _ = record_reference_run(tmp / "recorded", script)
    home = tmp / "home"
    home.mkdir()
    shutil.copytree(recorded.parent, home / "trajectories")  # with the definitions the run file refers to
    original = home / "trajectories" / recorded.name
    result = run_replay(Recording.from_file(original), store=home / "trajectories")
    assert result.path is not None and result.path.parent == home / "trajectories"
    # a Hermes replay of the same run, named as Hermes' replay names it (another verdict: a changed answer)
    doc = json.loads(result.path.read_text(encoding="utf-8"))
    hermes_id = "0f0f0f0f-0000-7000-8000-00000000beef"
    doc["trajectory_id"] = hermes_id
    doc["steps"][-1]["message"] = "The notes say nothing."
    doc["extra"]["hermes"]["replay"] = {"of": original.name[11:47], "live_from_step": None, "mode": "strict",
                                        "agent": "hermes", "subagents": "served", "diverged_at_step": 2}
    (home / "trajectories" / "replay-20261203_101010_abcdef.json").write_text(json.dumps(doc, indent=2))
    return {"home": home, "original": original.name[11:47], "replay": result.path.name[11:47],
            "hermes_replay": hermes_id}


def test_a_run_page_lists_its_replays_with_verdict_and_compare_links(replayed: dict[str, Any]) -> None:
    """BOOK-33: each replay with its agent, mode, verdict and a link to the comparison; a changed answer says so."""
    app = Dashboard(load_sources(replayed["home"]))
    page = _body(app, f"/trajectories/{replayed['original']}")
    assert "replays of this run (2):" in page
    original, replay, hermes = replayed["original"], replayed["replay"], replayed["hermes_replay"]
    assert re.search(rf'<a href="/trajectories/{replay}">{replay[:8]}</a> \(reference, strict, [0-9-]{{10}}\): '
                     r"<b>identical</b>", page)
    assert re.search(rf'<a href="/trajectories/{hermes}">{hermes[:8]}</a> \(hermes, strict\): <b>diverged at '
                     r"step 3</b> — requests differ from agent step 2", page)  # the answer changed
    for rid in (replay, hermes):
        assert f'href="/trajectories/{original}/diff/{rid}">compare with this replay</a>' in page
        diff = _body(app, f"/trajectories/{original}/diff/{rid}")
        assert "Diff of two runs" in diff


def test_a_replay_links_to_its_original_and_compares_with_it(replayed: dict[str, Any]) -> None:
    """A replay's page (a store file, or Hermes' ``replay-<session>.json`` found by its id or a prefix of it)
    names its original and offers "compare with the original"."""
    app = Dashboard(load_sources(replayed["home"]))
    original = replayed["original"]
    for rid in (replayed["replay"], replayed["hermes_replay"], replayed["hermes_replay"][:10]):
        page = _body(app, f"/trajectories/{rid}")
        assert f'this run replays <a href="/trajectories/{original}">{original}</a>' in page
        assert re.search(rf'href="/trajectories/{original}/diff/{replayed["hermes_replay"] if rid[:4] == "0f0f" else rid}'
                         r'">compare with the original</a>', page)
        assert "replays of this run" not in page


def test_the_index_reads_each_file_once_and_ignores_lookalikes(tmp_path: Path) -> None:
    """A run whose text mentions a replay is not one (only the document's own ``extra.hermes.replay`` counts); a
    damaged file is skipped; a classified file is not read again."""
    directory = tmp_path / "trajectories"
    directory.mkdir()
    lookalike = {"schema_version": "ATIF-v1.7", "session_id": "s", "trajectory_id": "11111111-1111-4111-8111-111111111111",
                 "agent": {"name": "a"}, "steps": [{"step_id": 1, "source": "user", "message":
                                                    '"replay": {"of": "22222222-2222-4222-8222-222222222222"}'}]}
    (directory / "2026-12-01-11111111-1111-4111-8111-111111111111.json").write_text(json.dumps(lookalike))
    (directory / "2026-12-01-33333333-3333-4333-8333-333333333333.json").write_text(
        '{"extra": {"hermes": {"replay": {"of": "22222222-2222-4222-8222-222222222222"}}}')  # damaged
    index = ReplayIndex(directory)
    assert index.replays_of("22222222-2222-4222-8222-222222222222") == []
    calls: list[str] = []
    original = index._classify
    index._classify = lambda name: calls.append(name) or original(name)  # type: ignore[method-assign]
    index.refresh()
    assert calls == []  # every name was classified on the first pass



def test_a_fifo_or_a_link_named_like_a_run_is_never_read(tmp_path: Path) -> None:
    """A FIFO never blocks the index (opened non-blocking, refused by ``fstat``); a link is not followed."""
    import os
    import threading

    directory = tmp_path / "trajectories"
    directory.mkdir()
    os.mkfifo(directory / "2026-12-01-44444444-4444-4444-8444-444444444444.json")
    secret = tmp_path / "elsewhere.json"
    secret.write_text('{"extra": {"hermes": {"replay": {"of": "22222222-2222-4222-8222-222222222222"}}}}')
    (directory / "2026-12-01-55555555-5555-4555-8555-555555555555.json").symlink_to(secret)
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(ReplayIndex(directory).refresh()), daemon=True)
    worker.start()
    worker.join(30)
    assert result == [{}]


def test_a_run_written_after_the_first_page_is_found(replayed: dict[str, Any], tmp_path: Path) -> None:
    """The cached listing of the trajectory directory follows it: a file added later is found by its id and
    prefix, a file removed is gone."""
    home = tmp_path / "home"
    shutil.copytree(replayed["home"], home)
    app = Dashboard(load_sources(home))
    original = next((home / "trajectories").glob(f"*-{replayed['original']}.json"))
    new_id = "0a0a0a0a-1111-4111-8111-000000000001"
    _body(app, f"/trajectories/{new_id}", 404)
    copy = home / "trajectories" / f"2026-12-03-{new_id}.json"
    doc = json.loads(original.read_text(encoding="utf-8"))
    doc["trajectory_id"] = new_id
    copy.write_text(json.dumps(doc))
    assert "Run 0a0a0a0a" in _body(app, f"/trajectories/{new_id}") and "Run 0a0a0a0a" in _body(app, "/trajectories/0a0a0a0a")
    copy.unlink()
    _body(app, f"/trajectories/{new_id}", 404)
