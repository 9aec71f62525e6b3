"""The kept skill, memory and persona texts (``observability/blobs``) are swept by the store's retention (spec 06
BOOK-48, BOOK-29): a text no kept ``skill_history`` row and no kept recording refers to, unused for a day, is
deleted; one anything kept refers to, or written or used since a day before the sweep started, never is."""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.cli.main import main
from hermes_pipeline.export import blobs as blob_module
from hermes_pipeline.export.blobs import BLOB_DIR, UNUSED_GRACE_S, blob_path, keep_file, keep_snapshot_files, sweep
from hermes_pipeline.sinks.observability_store import connect, sqlite_utc, store_path
from hermes_pipeline.sinks.observability_store.blob_sweep import referenced_by_files, sweep_blobs
from hermes_pipeline.sinks.observability_store.retention import retain

DAY = 86400.0
OLD = time.time() - 10 * DAY


def _blob(home: Path, text: str, *, mtime: float | None = OLD) -> str:
    """Keep ``text`` as a blob (last used at ``mtime``); its hash."""
    sha = hashlib.sha256(text.encode()).hexdigest()
    path = blob_path(home, sha)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return sha


def _ago(days: float) -> str:
    return sqlite_utc(int((time.time() - days * DAY) * 1_000_000))


def _row(home: Path, shas: list[str], *, age_days: float, version: int) -> None:
    """A ``skill_history`` row of ``age_days`` whose files are ``shas`` (schema 6 ``files``)."""
    conn = connect(store_path(home))
    with conn:
        conn.execute("INSERT INTO skill_history (skill_name, version, change_type, changed_at, files) "
                     "VALUES ('s', ?, 'refine', ?, ?)",
                     (version, _ago(age_days), json.dumps({f"f{i}.md": s for i, s in enumerate(shas)})))
    conn.close()


def _in_use(home: Path) -> None:
    """A run of yesterday: the store is in use, its newest row vouches for the clock (BOOK-49)."""
    conn = connect(store_path(home))
    with conn:
        conn.execute("INSERT INTO task_runs (ended_at, outcome) VALUES (?, 'success')", (_ago(1),))
    conn.close()


def _recording(home: Path, shas: list[str]) -> Path:
    """A trajectory in the profile's store whose context snapshot names ``shas`` (a skill, memory, persona)."""
    directory = home / "trajectories"
    directory.mkdir(exist_ok=True)
    context: dict[str, Any] = {"skills": [{"name": "k", "files": {f"f{i}.md": s for i, s in enumerate(shas[1:])}}],
                               "memory": [], "persona": {"path": "SOUL.md", "sha256": shas[0]} if shas else None}
    path = directory / f"{time.strftime('%Y-%m-%d', time.gmtime())}-{uuid.uuid4()}.json"
    path.write_text(json.dumps({"schema_version": "ATIF-v1.4", "extra": {"hermes": {"context": context}}}),
                    encoding="utf-8")
    return path


def _present(home: Path) -> set[str]:
    return {p.name for p in (home / BLOB_DIR).glob("??/*")}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["kept row", "expired row", "kept recording", "deleted recording",
                                           "nothing"]), st.booleans()), min_size=1, max_size=12),
       st.data())
def test_book_48_after_the_sweep_every_referenced_text_exists_and_no_unreferenced_old_one(
        tmp_path: Path, texts: list[tuple[str, bool]], data: st.DataObject) -> None:
    """BOOK-48 / BOOK-29 (property): over random texts referred to by kept or expired store rows, kept or
    deleted recordings, or nothing, some used recently: after retention every text a kept row or recording
    refers to is there, every unreferenced one unused for a day is gone, and recent ones stay."""
    home = tmp_path / uuid.uuid4().hex
    home.mkdir()
    _in_use(home)
    kept: set[str] = set()
    recent: set[str] = set()
    old_unreferenced: set[str] = set()
    for i, (referrer, used_recently) in enumerate(texts):
        sha = _blob(home, f"text {i}", mtime=None if used_recently else OLD)
        (recent if used_recently else old_unreferenced).add(sha)
        if referrer == "kept row":
            _row(home, [sha], age_days=data.draw(st.floats(0, 300)), version=i + 1)
            kept.add(sha)
        elif referrer == "expired row":
            _row(home, [sha], age_days=400, version=i + 1)
        elif referrer == "kept recording":
            _recording(home, [sha])
            kept.add(sha)
        elif referrer == "deleted recording":
            _recording(home, [sha]).unlink()
    old_unreferenced -= kept
    recent -= kept
    report = retain(home, boot=None)
    present = _present(home)
    assert kept <= present and recent <= present
    assert not old_unreferenced & present
    assert report.blobs.deleted == len(old_unreferenced) and report.blobs.skipped is None
    assert report.blobs.referenced == len(kept) and report.blobs.recent == len(recent)


def test_book_48_a_dry_run_counts_and_deletes_nothing_and_the_cli_reports_the_sweep(
        tmp_path: Path, capsys: Any) -> None:
    """BOOK-48: ``prune --dry-run --json`` counts the texts it would delete; ``prune`` deletes them and says so."""
    keep = _blob(tmp_path, "kept")
    gone = _blob(tmp_path, "orphan")
    _recording(tmp_path, [keep])
    assert main(["prune", "--dry-run", "--json", "--home", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["blobs"] == {"deleted": 1, "referenced": 1, "recent": 0, "failed": 0, "skipped": None}
    assert _present(tmp_path) == {keep, gone}
    assert main(["prune", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "deleted 1 kept skill/memory text(s) nothing refers to any more (1 referenced" in out
    assert _present(tmp_path) == {keep}


def test_book_48_nothing_is_swept_when_a_recording_cannot_be_read(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What an unreadable recording refers to is unknown: no text is deleted, and the report says why."""
    from hermes_pipeline.sinks.observability_store import blob_sweep

    orphan = _blob(tmp_path, "orphan")
    unreadable = _recording(tmp_path, [])

    def scan(path: Path, out: set[bytes]) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(blob_sweep, "_scan", scan)
    counts = sweep_blobs(tmp_path)
    assert unreadable.exists() and counts.deleted == 0
    assert counts.skipped == "a recording cannot be read (Permission denied)"
    assert _present(tmp_path) == {orphan}


def test_book_48_a_profile_config_that_does_not_load_sweeps_nothing(tmp_path: Path) -> None:
    orphan = _blob(tmp_path, "orphan")
    (tmp_path / "config.yaml").write_text("observability: [unclosed\n", encoding="utf-8")
    counts = sweep_blobs(tmp_path)
    assert counts.deleted == 0 and counts.skipped and "config.yaml" in counts.skipped
    assert _present(tmp_path) == {orphan}


def test_book_48_no_text_is_swept_on_a_clock_retention_does_not_trust(tmp_path: Path) -> None:
    """BOOK-49: a prune on an untrusted clock deletes no row and no text."""
    _row(tmp_path, [], age_days=1, version=1)
    assert retain(tmp_path, boot=None).blobs.skipped is None  # a trusted prune: the ledger remembers it
    orphan = _blob(tmp_path, "orphan")
    report = retain(tmp_path, now=time.time() - 30 * DAY, boot=None)  # the clock went back a month
    assert report.blobs.skipped == "a clock retention cannot trust" and report.blobs.deleted == 0
    assert orphan in _present(tmp_path)


def test_book_29_a_text_named_again_by_a_snapshot_is_marked_used_and_kept(tmp_path: Path) -> None:
    """A text a new snapshot names is touched (its ``mtime`` is the last use): nothing kept refers to it yet
    (the run's trajectory comes at its end), but the sweep keeps it."""
    (tmp_path / "SOUL.md").write_text("You are kind.", encoding="utf-8")
    sha = hashlib.sha256(b"You are kind.").hexdigest()
    _blob(tmp_path, "You are kind.")
    context = {"persona": {"path": "SOUL.md", "sha256": sha}}
    assert keep_snapshot_files(tmp_path, context) == {"kept": 0, "present": 1, "not_kept": 0}
    counts = sweep(tmp_path, set(), time.time())
    assert counts.recent == 1 and counts.deleted == 0 and sha in _present(tmp_path)
    path = blob_path(tmp_path, sha)
    assert path is not None
    os.utime(path, (OLD, OLD))
    assert sweep(tmp_path, set(), time.time()).deleted == 1  # unused for a day and unreferenced: it goes


def test_book_29_a_text_written_after_the_sweep_started_is_never_deleted(tmp_path: Path) -> None:
    """Whatever the sweep marked, a text written at or after its start (or within the day before) is kept."""
    started = time.time()
    sha = _blob(tmp_path, "fresh", mtime=started + 1)
    assert sweep(tmp_path, set(), started).recent == 1 and sha in _present(tmp_path)


def _locked_elsewhere(home: Path) -> bool:
    """Whether another holder has the blobs' lock (a second open file description cannot take it)."""
    import fcntl

    fd = os.open(home / blob_module.LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_book_29_the_touch_and_the_deletion_both_happen_under_the_lock(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot's touch of a kept text and the sweep's deletion take the same lock, so they never interleave:
    either the touch comes first (the sweep then sees a fresh ``mtime``) or the deletion does (the snapshot
    finds the text gone and writes it again)."""
    source = tmp_path / "SOUL.md"
    source.write_text("You are kind.", encoding="utf-8")
    sha = _blob(tmp_path, "You are kind.")
    seen: list[tuple[str, bool]] = []
    real_touch, real_unlink = blob_module._touch, os.unlink

    def touch(path: Path) -> bool:
        seen.append(("touch", _locked_elsewhere(tmp_path)))
        return real_touch(path)

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        seen.append(("unlink", _locked_elsewhere(tmp_path)))
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(blob_module, "_touch", touch)
    monkeypatch.setattr(blob_module.os, "unlink", unlink)
    assert keep_file(tmp_path, source, sha) is None  # kept before: touched
    assert keep_snapshot_files(tmp_path, {"persona": {"path": "SOUL.md", "sha256": sha}})["present"] == 1
    path = blob_path(tmp_path, sha)
    assert path is not None
    os.utime(path, (OLD, OLD))
    assert sweep(tmp_path, set(), time.time()).deleted == 1
    assert seen == [("touch", True), ("touch", True), ("unlink", True)]
    assert keep_file(tmp_path, source, sha) is True  # gone: written again
    assert sha in _present(tmp_path)


def test_the_mark_finds_a_hash_across_two_read_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_pipeline.sinks.observability_store import blob_sweep

    monkeypatch.setattr(blob_sweep, "_CHUNK", 7)
    sha = hashlib.sha256(b"x").hexdigest()
    (tmp_path / "t.json").write_text(json.dumps({"a": "pad", "sha256": sha}), encoding="utf-8")
    assert referenced_by_files([tmp_path]) == {sha}


def test_the_grace_is_a_day() -> None:
    assert UNUSED_GRACE_S == DAY


def test_book_48_29_a_kept_run_still_replays_identical_after_the_sweep(tmp_path: Path, capsys: Any) -> None:
    """BOOK-48 / BOOK-29 / BOOK-33: a real Hermes run is recorded, its profile then changed (the replay needs the
    kept texts), every text aged past the grace and an orphan added: ``prune`` deletes the orphan only, and
    the run replays ``identical``."""
    from tests.replay._hermes import HERMES, record, replay

    if HERMES is None:
        pytest.skip("hermes-agent is not installed")
    recorded = record(tmp_path, ["Noted."], "Remember nothing.")
    try:
        home = recorded.home
        (home / "memories" / "MEMORY.md").write_text("The user prefers long answers.\n", encoding="utf-8")
        (home / "SOUL.md").write_text("You are a terse assistant.", encoding="utf-8")
        orphan = _blob(home, "a skill version nothing refers to any more")
        for path in (home / BLOB_DIR).glob("??/*"):
            os.utime(path, (OLD, OLD))
        needed = _present(home) - {orphan}
        assert needed
        assert main(["prune", "--json", "--home", str(home)]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["blobs"]["deleted"] == 1 and report["blobs"]["skipped"] is None
        assert _present(home) == needed
        done = replay([str(recorded.path), "--home", str(home), "--output", str(tmp_path / "r.json")], tmp_path)
        assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
        assert "warning" not in done.stderr, done.stderr
    finally:
        recorded.server.close()


def test_book_48_the_store_sweeps_when_it_starts(tmp_path: Path) -> None:
    """BOOK-48: the cleanup at the store's start (and every 24 hours) sweeps the texts too, after its rows."""
    from ._support import store

    _in_use(tmp_path)
    kept = _blob(tmp_path, "kept")
    gone = _blob(tmp_path, "orphan")
    _recording(tmp_path, [kept])
    with store(tmp_path) as (_, handle):
        assert handle.flush()
        assert handle.sink.store_writer.blobs_swept == 1
    assert _present(tmp_path) == {kept} and gone not in _present(tmp_path)
