"""Issue #27 item 9: the trajectory store keeps each tool list and system prompt once for all its trajectories,
in its ``definitions/`` sidecar (content-addressed, ``extra.hermes.shared_definitions`` lists what a file
refers to), and refers to it by hash in every step's ``llm_request``; replay, the dashboard and redaction read
the requests as they were sent; a missing or damaged sidecar file is a typed error naming that file."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from hermes_pipeline.dashboard.views_runs import _tree
from hermes_pipeline.demo.model_server import ScriptStep, ToolCallSpec
from hermes_pipeline.export.definitions import digest, is_ref
from hermes_pipeline.readers.definitions import DefinitionFileError, expand_trajectory
from hermes_pipeline.replay.errors import TrajectoryError
from hermes_pipeline.replay.recording import Recording, load_trajectory
from hermes_pipeline.replay.redact import redact_document
from hermes_pipeline.schemas import load_schema

from ._support import record_reference_run

SCRIPT = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]),
          ScriptStep(content="They say oats.")]


def test_store_keeps_tools_once_in_its_sidecar_and_replay_reads_the_requests_as_sent(tmp_path: Path) -> None:
    path, sent = record_reference_run(tmp_path, SCRIPT)
    doc = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(load_schema("atif-1.7")).validate(doc)
    assert "definitions" not in doc["extra"]["hermes"]
    shared = doc["extra"]["hermes"]["shared_definitions"]
    requests = [s["extra"]["hermes"]["llm_request"] for s in doc["steps"] if s["source"] == "agent"]
    assert len(requests) == 2
    assert all(is_ref(r["body"]["tools"]) for r in requests)  # never the schemas themselves
    (ref,) = {r["body"]["tools"]["$ref"] for r in requests}
    assert ref in shared and digest(sent[0]["tools"]) == ref
    sidecar = path.parent / "definitions" / f"{ref.removeprefix('sha256:')}.json"
    assert "sha256:" + hashlib.sha256(sidecar.read_bytes()).hexdigest() == ref  # checkable against its name
    assert json.loads(sidecar.read_bytes()) == sent[0]["tools"]
    description = json.dumps(sent[0]["tools"][0]["function"]["description"])
    assert description not in path.read_text(encoding="utf-8")  # the schema is not in the trajectory file
    recording = Recording.from_file(path)
    for call, request in zip(recording.calls, sent, strict=True):
        assert call.request["body"] == request  # what the replay serves and compares: the request as sent
    page = _tree(load_trajectory(path))
    assert "$ref" not in page and "sha256:" not in page  # the dashboard shows the request as sent


def test_a_second_run_reuses_the_sidecar_files(tmp_path: Path) -> None:
    """The second run of the same agent in the same store adds a trajectory file and no definition file."""
    first, _ = record_reference_run(tmp_path, SCRIPT)
    sidecar = first.parent / "definitions"
    before = sorted(p.name for p in sidecar.iterdir())
    first.rename(tmp_path / "first.json")  # the helper returns the store's only trajectory file
    second, sent = record_reference_run(tmp_path, SCRIPT)
    assert second.parent == sidecar.parent and sorted(p.name for p in sidecar.iterdir()) == before
    assert Recording.from_file(second).calls[0].request["body"] == sent[0]


def test_redaction_masks_the_definitions_too(tmp_path: Path) -> None:
    """A system prompt or tool description kept in the sidecar is redacted like the steps (the reader
    brings it back into the document first)."""
    path, _ = record_reference_run(tmp_path, SCRIPT)
    doc = load_trajectory(path)
    (ref,) = doc["extra"]["hermes"]["definitions"]
    doc["extra"]["hermes"]["definitions"][ref] = [{"type": "function", "function": {
        "name": "x", "description": "mail alice@example.com for access"}}]
    out = redact_document(doc, mode="mask")
    assert "alice@example.com" not in json.dumps(out)


def _sidecar_file(path: Path) -> Path:
    doc = json.loads(path.read_text(encoding="utf-8"))
    ref = doc["extra"]["hermes"]["shared_definitions"][0]
    return path.parent / "definitions" / f"{ref.removeprefix('sha256:')}.json"


@pytest.mark.parametrize(("fault", "said"), [("missing", "no such file"), ("corrupt", "damaged"),
                                             ("directory", "is a directory"), ("no_sidecar", "no such file")])
def test_a_missing_or_damaged_sidecar_is_a_typed_error_naming_the_file(tmp_path: Path, fault: str, said: str) -> None:
    """Every reader (replay / trajectory commands through load_trajectory, the dashboard) says which definition
    file is missing or damaged and which field referred to it; no traceback, no half-resolved request."""
    path, _ = record_reference_run(tmp_path, SCRIPT)
    target = _sidecar_file(path)
    if fault == "missing":
        target.unlink()
    elif fault == "corrupt":
        target.write_bytes(target.read_bytes()[:-7] + b"garbage")
    elif fault == "directory":
        target.unlink()
        target.mkdir()
    else:
        shutil.rmtree(target.parent)
    with pytest.raises(TrajectoryError) as caught:
        load_trajectory(path)
    message = str(caught.value)
    assert str(target) in message and "extra.hermes.shared_definitions[" in message
    reason = message.rsplit("):", 1)[-1]  # after the file names (the test's own directory says "damaged")
    assert said in reason
    doc = json.loads(path.read_text(encoding="utf-8"))
    with pytest.raises(DefinitionFileError) as direct:
        expand_trajectory(doc, path)
    assert direct.value.path == str(target) and direct.value.referenced_by == str(path)


def test_a_damaged_sidecar_reference_list_is_named(tmp_path: Path) -> None:
    """``shared_definitions`` that is not a list of references is a typed error naming the field."""
    path, _ = record_reference_run(tmp_path, SCRIPT)
    doc = json.loads(path.read_text(encoding="utf-8"))
    for bad in ("sha256:abc", ["../../etc/passwd"], [7]):
        copy = json.loads(json.dumps(doc))
        copy["extra"]["hermes"]["shared_definitions"] = bad
        with pytest.raises(DefinitionFileError) as caught:
            expand_trajectory(copy, path)
        assert caught.value.field is not None and caught.value.field.startswith("extra.hermes.shared_definitions")


def test_retention_deletes_only_the_definitions_no_trajectory_refers_to(tmp_path: Path) -> None:
    """BOOK-37 with the sidecar: pruning deletes a definition once no remaining trajectory file refers to it and
    it has not been used for a day; one a kept trajectory refers to, or one just written (its trajectory not yet
    renamed into place), stays. Clocks injected: file times are set relative to the injected ``now``."""
    import os
    import uuid
    from datetime import datetime, timezone

    from hermes_pipeline.sinks.trajectory_store import prune_store

    day, now = 86400.0, datetime(2026, 12, 3, 12, tzinfo=timezone.utc).timestamp()
    store, sidecar = tmp_path / "trajectories", tmp_path / "trajectories" / "definitions"
    sidecar.mkdir(parents=True)
    values = {name: [{"name": name, "description": name * 300}] for name in ("a", "b", "c", "d")}
    refs = {name: digest(value) for name, value in values.items()}
    for name, value in values.items():
        path = sidecar / f"{refs[name].removeprefix('sha256:')}.json"
        path.write_bytes(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())
        assert digest(value) == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        stamp = now - (60 if name == "d" else 200 * day)
        os.utime(path, (stamp, stamp))

    def run(age_days: int, *names: str) -> Path:
        date = datetime.fromtimestamp(now - age_days * day, tz=timezone.utc).date()
        path = store / f"{date}-{uuid.uuid4()}.json"
        path.write_text(json.dumps({"extra": {"hermes": {"shared_definitions": sorted(refs[n] for n in names)}}}))
        return path

    old, young = run(120, "a", "b"), run(2, "b")
    assert prune_store(store, 90, now=now, boot=("boot-id", 1000.0)) == [old]
    left = {p.name for p in sidecar.iterdir()}
    assert left == {f"{refs[n].removeprefix('sha256:')}.json" for n in ("b", "d")}  # a and c had no referrer
    assert young.exists()


def test_the_dashboard_says_which_definition_file_is_missing(tmp_path: Path) -> None:
    """The run page of a store file whose sidecar file is gone says "damaged" with that file's name, no 500."""
    from hermes_pipeline.dashboard.queries import _read

    path, _ = record_reference_run(tmp_path, SCRIPT)
    target = _sidecar_file(path)
    target.unlink()
    doc, problem = _read(path)
    assert doc is None and problem is not None and problem["kind"] == "damaged"
    assert str(target) in problem["reason"] and "no such file" in problem["reason"]
