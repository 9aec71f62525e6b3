"""Bad trajectory and event files through every reader (issue #26): a typed one-line error naming the file (and
the field, where there is one), never a traceback, never a hang.

The readers: ``trajectory show``, ``trajectory diff``, ``trajectory redact``, ``trace show``, ``replay`` (called
in-process through the CLI's ``main``; a few through real subprocesses) and the dashboard's run and diff pages
(called through its routes). The files are generated (hypothesis) from a real recorded run and a real ATOF
event file: truncated, a wrong type at a random field, a key removed, nesting deeper than the readers accept,
bytes that are not UTF-8, not JSON at all, JSON that is not a trajectory; plus the special files a path can
name: a FIFO, a directory, ``/dev/zero`` and a symlink to it, a file over the size limit, an empty file.
BOOK-31, BOOK-32, BOOK-36, BOOK-37 (the trajectory commands' bad input), FMT-22 (the ATOF reader).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.cli.main import main
from hermes_pipeline.dashboard.server import Dashboard
from hermes_pipeline.dashboard.sources import Sources
from hermes_pipeline.demo.model_server import ScriptStep, ToolCallSpec
from hermes_pipeline.readers.files import MAX_DEPTH, InputFileError, read_limited

from ._support import record_reference_run

SCRIPT = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]),
          ScriptStep(content="They say oats.")]
EXAMPLES = int(os.environ.get("BAD_FILES_EXAMPLES", "3000"))
TID = "01a23b54-f516-7b2b-8053-257a3232b37d"
"""The id the generated files are stored under for the dashboard."""


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real recorded run (ATIF, with LLM payloads) and a real ATOF event file, and a scratch directory."""
    from hermes_pipeline.sink_testing import capture_export

    root = tmp_path_factory.mktemp("bad-files")
    recorded, _ = record_reference_run(root, SCRIPT)
    atof = capture_export({"version": 4, "atof": {"enabled": True, "sinks": [
        {"type": "file", "filename": "events.jsonl"}]}}, root / "atof")
    home = root / "home"
    (home / "trajectories").mkdir(parents=True)
    (home / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n")
    work = root / "work"
    work.mkdir()
    return {"atif": json.loads(recorded.read_bytes()), "atif_path": recorded, "atof": atof.jsonl("events.jsonl"),
            "home": home, "work": work}


# --------------------------------------------------------------------------------------------- the readers


def _cli(*argv: str) -> tuple[int, str]:
    """``hermes-pipeline *argv`` in-process: exit code and stderr (an exception fails the test as it is)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, err.getvalue()


def _readers(seeds: dict[str, Any], path: Path) -> Iterator[tuple[str, Callable[[], tuple[int, str]]]]:
    home = str(seeds["home"])
    good = str(seeds["atif_path"])
    out = str(seeds["work"] / "redacted.json")
    yield "trajectory show", lambda: _cli("trajectory", "show", str(path), "--content", "--home", home)
    yield "trajectory show --json", lambda: _cli("trajectory", "show", str(path), "--json", "--content", "--home", home)
    yield "trajectory diff", lambda: _cli("trajectory", "diff", good, str(path), "--home", home)
    yield "trajectory redact", lambda: _cli("trajectory", "redact", str(path), "-o", out, "--home", home)
    yield "trace show", lambda: _cli("trace", "show", str(path), "--no-color")
    yield "trace show --json", lambda: _cli("trace", "show", str(path), "--json", "--slowest", "3")
    yield "replay", lambda: _cli("replay", str(path), "--output", str(seeds["work"] / "replayed.json"),
                                 "--home", home)


def _check_cli(name: str, code: int, err: str, path: Path) -> None:
    """A reader either answered (the damage left the file usable: exit 0, or 1 for a diff or replay that
    diverged) or refused it with one error line naming the file; never a traceback."""
    assert "Traceback" not in err, f"{name}: {err}"
    errors = [line for line in err.splitlines() if ": error: " in line]
    if not errors:
        assert code in (0, 1), f"{name} exited {code} without an error line: {err!r}"
        return
    assert code in (1, 2) and len(errors) == 1, f"{name} exited {code}: {err!r}"
    assert str(path) in errors[0], f"{name}: the error does not name the file: {errors[0]}"


def _dashboard(seeds: dict[str, Any]) -> Dashboard:
    home = seeds["home"]
    return Dashboard(Sources(home=home, state_db=home / "state.db", store_db=home / "store.sqlite3",
                             trajectories=home / "trajectories", skills=home / "skills", memory_dirs=()))


def _check_dashboard(seeds: dict[str, Any], write: Callable[[Path], None]) -> None:
    """The run page and the diff page of the file as the store holds it: shown (200), or 'too large' or
    'damaged' (422), never a 404 or a 500."""
    store = seeds["home"] / "trajectories"
    target = store / f"2026-12-03-{TID}.json"
    for old in store.iterdir():
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        else:
            old.unlink()
    write(target)
    app = _dashboard(seeds)
    for route in (f"/trajectories/{TID}", f"/trajectories/{TID}/diff/{TID}"):
        response = app.respond(route)
        assert response.status in (200, 422), (route, response.status)
        if response.status == 422:
            body = response.body.decode()
            assert "too large" in body or "damaged" in body, body


# --------------------------------------------------------------------------------------------- generated files


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field path of a JSON value (the root excluded)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*at, key)
            yield from _paths(child, (*at, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*at, index)
            yield from _paths(child, (*at, index))


def _replace(doc: Any, at: tuple[Any, ...], value: Any) -> Any:
    doc = json.loads(json.dumps(doc))
    node = doc
    for part in at[:-1]:
        node = node[part]
    if value is _DELETE:
        del node[at[-1]]
    else:
        node[at[-1]] = value
    return doc


_DELETE = object()
WRONG: list[Any] = [None, 0, -1, 1.5, True, "", "x", [], [1, "a"], {}, {"a": 1}, [[]], [{}], {"steps": []},
                    2 ** 70, "2026-99-99T99:99:99Z", _DELETE]


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for n in range(depth):
        value = [value] if n % 2 else {"k": value}
    return value


@st.composite
def bad_file(draw: st.DrawFn, seeds: dict[str, Any]) -> bytes:
    """One generated bad (or borderline) trajectory or event file."""
    kind = draw(st.sampled_from(["truncated", "wrong_type", "wrong_type", "wrong_type", "deep", "deep_text",
                                 "not_utf8", "garbage", "not_trajectory", "atof_wrong_type", "atof_truncated",
                                 "atof_deep"]))
    atif: dict[str, Any] = seeds["atif"]
    text = json.dumps(atif).encode()
    lines = [json.dumps(event) for event in seeds["atof"]]
    rnd = random.Random(draw(st.integers(0, 2 ** 32)))
    if kind == "truncated":
        return text[:rnd.randrange(len(text))]
    if kind == "wrong_type":
        paths = list(_paths(atif))
        doc = atif
        for _ in range(draw(st.integers(1, 3))):
            at = rnd.choice(paths)
            try:
                doc = _replace(doc, at, rnd.choice(WRONG))
            except (KeyError, IndexError, TypeError):
                pass
        return json.dumps(doc).encode()
    if kind == "deep":
        at = rnd.choice(list(_paths(atif)))
        return json.dumps(_replace(atif, at, _nested(rnd.randrange(MAX_DEPTH - 20, 1200)))).encode()
    if kind == "deep_text":  # deeper than the JSON parser itself goes
        depth = rnd.randrange(1000, 100_000)
        return b'{"schema_version": "ATIF-v1.7", "steps": [' + b"[" * depth + b"]" * depth + b"]}"
    if kind == "not_utf8":
        at = rnd.randrange(len(text))
        return text[:at] + bytes([rnd.randrange(0x80, 0x100)]) + text[at:]
    if kind == "garbage":
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400)))
    if kind == "not_trajectory":
        return json.dumps(rnd.choice([[], "text", 3, None, {"schema_version": "ATIF-v1.7"},
                                      {"schema_version": "ATIF-v1.7", "steps": {}},
                                      {"schema_version": 7, "steps": []}])).encode()
    events = [json.loads(line) for line in lines]
    if kind == "atof_wrong_type":
        index = rnd.randrange(len(events))
        at = rnd.choice(list(_paths(events[index])))
        events[index] = _replace(events[index], at, rnd.choice(WRONG))
        return "\n".join(json.dumps(event) for event in events).encode()
    if kind == "atof_truncated":
        whole = "\n".join(lines).encode()
        return whole[:rnd.randrange(len(whole))]
    index = rnd.randrange(len(events))
    events[index]["data"] = _nested(rnd.randrange(MAX_DEPTH - 20, 1200))
    return "\n".join(json.dumps(event) for event in events).encode()


@pytest.mark.timeout(1800)
def test_generated_bad_files_give_a_typed_error_through_every_reader(seeds: dict[str, Any]) -> None:
    """≥ 3,000 generated bad files, each through every reader: a one-line error naming the file, or (when the
    damage left it usable) a normal answer; never a traceback, never a hang (the timeout guards)."""
    path = seeds["work"] / "bad.json"
    seen = {"files": 0, "refused": 0}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=bad_file(seeds))
    def check(data: bytes) -> None:
        seen["files"] += 1
        path.write_bytes(data)
        for name, call in _readers(seeds, path):
            code, err = call()
            _check_cli(name, code, err, path)
            seen["refused"] += name == "trajectory show" and ": error: " in err
        _check_dashboard(seeds, lambda target: target.write_bytes(data))

    check()
    assert seen["files"] >= EXAMPLES
    assert seen["refused"] >= EXAMPLES // 2, seen  # the files are bad indeed: most are refused


# --------------------------------------------------------------------------------------------- special files


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _dev_zero_link(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _huge(path: Path) -> None:
    with open(path, "wb") as fh:  # sparse: over the limit without writing it
        fh.truncate(1024 ** 3)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


SPECIAL = {"fifo": _fifo, "directory": _directory, "dev_zero_link": _dev_zero_link, "huge": _huge, "empty": _empty}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_special_files_give_a_typed_error_through_every_reader(kind: str, seeds: dict[str, Any],
                                                               tmp_path: Path) -> None:
    """A FIFO never blocks a reader, ``/dev/zero`` is never read whole, a directory, a file over the limit and
    an empty file are refused with a one-line error naming the file; the dashboard says 'too large' or
    'damaged' (issue #26)."""
    path = tmp_path / "special.json"
    SPECIAL[kind](path)
    for name, call in _readers(seeds, path):
        code, err = call()
        assert code in (1, 2), f"{name} accepted a {kind}: {err}"
        _check_cli(name, code, err, path)
    _check_dashboard(seeds, SPECIAL[kind])
    if kind == "huge":
        assert "too large" in _dashboard(seeds).respond(f"/trajectories/{TID}").body.decode()


def test_dev_zero_itself_is_refused_before_any_read() -> None:
    with pytest.raises(InputFileError, match="not a regular file") as caught:
        read_limited("/dev/zero", 10)
    assert caught.value.path == "/dev/zero" and caught.value.kind == "unreadable"


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "grows.json"
    path.write_bytes(b"x" * 100)
    assert read_limited(path, 100) == b"x" * 100
    with pytest.raises(InputFileError, match="too large") as caught:
        read_limited(path, 99)
    assert caught.value.kind == "too_large"


def test_depth_and_type_errors_name_the_file_and_the_field(seeds: dict[str, Any], tmp_path: Path) -> None:
    """The field of a wrong type, or of nesting too deep, is named by its path."""
    path = tmp_path / "typed.json"
    doc = json.loads(json.dumps(seeds["atif"]))
    doc["steps"][1]["tool_calls"] = "read_file"
    path.write_text(json.dumps(doc))
    code, err = _cli("trajectory", "show", str(path), "--home", str(seeds["home"]))
    assert code == 2 and str(path) in err and "steps[1].tool_calls" in err and "expected an array" in err
    doc = json.loads(json.dumps(seeds["atif"]))
    doc["steps"][0]["extra"] = {"deep": _nested(900)}  # valid JSON, 900 deep: the redact case of the issue
    path.write_text(json.dumps(doc))
    code, err = _cli("trajectory", "redact", str(path), "-o", str(tmp_path / "out.json"), "--home", str(seeds["home"]))
    assert code == 2 and str(path) in err and "steps[0].extra.deep" in err and "nested more than" in err
    assert not (tmp_path / "out.json").exists()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("argv", [("trajectory", "show"), ("trajectory", "redact"), ("trace", "show"), ("replay",)])
def test_a_fifo_in_a_real_process_gives_one_line_and_exits(argv: tuple[str, ...], seeds: dict[str, Any],
                                                           tmp_path: Path) -> None:
    """The reproducer of the issue, as a user runs it: a FIFO given to a reader in a real process."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    env = {**os.environ, "HERMES_HOME": str(seeds["home"])}
    ran = subprocess.run([sys.executable, "-m", "hermes_pipeline.cli.main", *argv, str(fifo)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode in (1, 2) and "Traceback" not in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1 and str(fifo) in ran.stderr and "regular file" in ran.stderr


def test_the_dashboard_says_damaged_or_too_large_for_a_run_it_cannot_show(seeds: dict[str, Any]) -> None:
    """A truncated run file is 'damaged', one over the dashboard's limit 'too large' (422), never the 404 'no
    trajectory' of an unknown id (issue #26)."""
    from hermes_pipeline.dashboard.queries import MAX_TRAJECTORY_BYTES

    text = json.dumps(seeds["atif"]).encode()

    def truncated(target: Path) -> None:
        target.write_bytes(text[: len(text) // 2])

    def over_the_limit(target: Path) -> None:
        with open(target, "wb") as fh:
            fh.truncate(MAX_TRAJECTORY_BYTES + 1)

    for write, said in ((truncated, "is damaged"), (over_the_limit, "is too large to show")):
        _check_dashboard(seeds, write)
        response = _dashboard(seeds).respond(f"/trajectories/{TID}")
        assert response.status == 422 and said in response.body.decode()
    assert _dashboard(seeds).respond("/trajectories/01a23b54-f516-7b2b-8053-000000000000").status == 404


def test_an_atof_line_with_a_wrong_type_names_the_line_and_the_field(seeds: dict[str, Any], tmp_path: Path) -> None:
    """FMT-22's reader: one line of an event file with ``data`` of the wrong type is named, with its field."""
    events = [dict(event) for event in seeds["atof"]]
    events[2]["data"] = ["not", "an", "object"]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(event) for event in events))
    code, err = _cli("trace", "show", str(path))
    assert code == 1 and f"{path}: line 3: field data: expected an object, found an array" in err
