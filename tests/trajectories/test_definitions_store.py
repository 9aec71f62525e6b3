"""Issue #27 item 9: the trajectory store writes each tool list and system prompt once per trajectory
(``extra.hermes.definitions``) and refers to it by hash in every step's ``llm_request``; replay, the
dashboard and redaction read the requests as they were sent."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from hermes_pipeline.dashboard.views_runs import _tree
from hermes_pipeline.demo.model_server import ScriptStep, ToolCallSpec
from hermes_pipeline.export.definitions import digest, is_ref
from hermes_pipeline.replay.recording import Recording
from hermes_pipeline.replay.redact import redact_document
from hermes_pipeline.schemas import load_schema

from ._support import record_reference_run

SCRIPT = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]),
          ScriptStep(content="They say oats.")]


def test_store_defines_tools_once_and_replay_reads_the_requests_as_sent(tmp_path: Path) -> None:
    path, sent = record_reference_run(tmp_path, SCRIPT)
    doc = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(load_schema("atif-1.7")).validate(doc)
    definitions = doc["extra"]["hermes"]["definitions"]
    requests = [s["extra"]["hermes"]["llm_request"] for s in doc["steps"] if s["source"] == "agent"]
    assert len(requests) == 2
    assert all(is_ref(r["body"]["tools"]) for r in requests)  # never the schemas themselves
    (ref,) = {r["body"]["tools"]["$ref"] for r in requests}
    assert definitions[ref] == sent[0]["tools"] and digest(sent[0]["tools"]) == ref  # once, and checkable
    description = json.dumps(sent[0]["tools"][0]["function"]["description"])
    assert path.read_text(encoding="utf-8").count(description) == 1  # the schema is written once
    recording = Recording.from_document(doc, path=str(path))
    for call, request in zip(recording.calls, sent, strict=True):
        assert call.request["body"]["tools"] == request["tools"]  # what the replay serves and compares
    page = _tree(doc)
    assert "$ref" not in page and "sha256:" not in page  # the dashboard shows the request as sent


def test_redaction_masks_the_definitions_too(tmp_path: Path) -> None:
    """A system prompt or tool description written once in the definitions is redacted like the steps."""
    path, _ = record_reference_run(tmp_path, SCRIPT)
    doc = json.loads(path.read_text(encoding="utf-8"))
    (ref,) = doc["extra"]["hermes"]["definitions"]
    doc["extra"]["hermes"]["definitions"][ref] = [{"type": "function", "function": {
        "name": "x", "description": "mail alice@example.com for access"}}]
    out = redact_document(doc, mode="mask")
    assert "alice@example.com" not in json.dumps(out)
