"""Daily delta packages, the closed schemas and export (SM-4, SM-45, SM-53..SM-62, SM-97)."""

from __future__ import annotations

import copy
import json
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.shared_metrics import MetricsStore, package_errors, validate_package
from hermes_pipeline.shared_metrics import packages as pk
from hermes_pipeline.shared_metrics import store as st
from hermes_pipeline.shared_metrics.clock import stamp
from hermes_pipeline.shared_metrics.consent import marks
from hermes_pipeline.shared_metrics.schemas import V1, V2, load_package_schema

from .conftest import RESOURCE, T0, rows

EXAMPLE: dict[str, Any] = {  # spec 05 §17
    "generated_at": "2026-09-01T10:15:05.412307Z", "install_id": "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f",
    "metrics": [
        {"dimensions": {}, "name": "hermes.client.active", "type": "counter", "value": 1},
        {"dimensions": {"model": "gpt-4.1-mini-2025-04-14", "provider": "openai"}, "name": "hermes.model_route.count",
         "type": "counter", "value": 2},
        {"dimensions": {"duration_bucket": "1s_to_5s", "end_reason": "completed", "entrypoint": "interactive",
                        "execution_surface": "cli", "model_call_count_bucket": "2", "outcome": "success",
                        "retry_count_bucket": "0", "termination": "none", "tool_call_count_bucket": "1"},
         "name": "hermes.task_run.finished", "type": "counter", "value": 1},
        {"dimensions": {"entrypoint": "interactive", "execution_surface": "cli"}, "name": "hermes.task_run.started",
         "type": "counter", "value": 1},
        {"dimensions": {"approval_outcome": "not_required", "latency_bucket": "lt_100ms", "outcome": "success",
                        "retry_count_bucket": "unknown", "tool_category": "file"}, "name": "hermes.tool_call.count",
         "type": "counter", "value": 1}],
    "package_id": "b7e2c9a4-5d1f-4e3a-9c8b-7a6f5e4d3c2b", "period_end": "2026-09-02T00:00:00.000000Z",
    "period_start": "2026-09-01T00:00:00.000000Z",
    "resource": {"architecture": "x86_64", "hermes_version": "0.11.0", "install_method": "pip", "os_family": "linux"},
    "schema_version": "hermes.shared_metrics.v2"}

TOOL = '{"approval_outcome":"not_required","latency_bucket":"lt_100ms","outcome":"success",' \
       '"retry_count_bucket":"unknown","tool_category":"file"}'


def add(store: MetricsStore, period: str, metric: str = "hermes.tool_call.count", dims: str = TOOL, n: int = 1) -> None:
    conn = store.connect()
    with st.transaction(conn):
        st.increment(conn, period, metric, dims, n, RESOURCE)
    conn.close()


def payloads(store: MetricsStore) -> list[dict[str, Any]]:
    conn = store.connect()
    found = [json.loads(r[0]) for r in conn.execute(
        "SELECT payload_json FROM package_outbox ORDER BY created_at, period_start")]
    conn.close()
    return found


@pytest.fixture
def store(home: Path) -> MetricsStore:
    return MetricsStore(home)


# --------------------------------------------------------------------------- schemas


def test_sm59_sm62_worked_example_validates_and_schemas_are_closed() -> None:
    """SM-59 / SM-62: Worked example validates and schemas are closed."""
    validate_package(EXAMPLE, expect=V2)

    def objects(node: Any) -> list[dict[str, Any]]:
        found = []
        if isinstance(node, dict):
            if node.get("type") == "object":
                found.append(node)
            for value in node.values():
                found += objects(value)
        elif isinstance(node, list):
            for value in node:
                found += objects(value)
        return found

    for version in (V1, V2):
        schema = load_package_schema(version)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert all(o.get("additionalProperties") is False for o in objects(schema)), version


def test_sm59_shipped_schemas_equal_the_spec() -> None:
    """SM-59: Shipped schemas equal the spec."""
    import re

    from tests._spec import spec_text

    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", spec_text("05-shared-metrics.md"), re.S)
              if '"$id": "urn:hermes-agent:schema:shared-metrics' in b]
    assert {b["$id"]: b for b in blocks} == {load_package_schema(v)["$id"]: load_package_schema(v) for v in (V1, V2)}


@pytest.mark.parametrize("mutate", [
    lambda p: p.update(extra=1),
    lambda p: p["resource"].update(hostname="box"),
    lambda p: p["resource"].update(os_family="haiku"),
    lambda p: p["resource"].pop("install_method"),
    lambda p: p.update(period_start="yesterday"),
    lambda p: p.update(package_id="not-a-uuid"),
    lambda p: p["metrics"][0].update(value=2),
    lambda p: p["metrics"][1]["dimensions"].update(model="Upper Case"),
    lambda p: p["metrics"][2]["dimensions"].update(session_id="s1"),
    lambda p: p["metrics"][4]["dimensions"].update(tool_category="read_file"),
    lambda p: p["metrics"].append({"name": "hermes.other", "type": "counter", "dimensions": {}, "value": 1}),
    lambda p: p.update(metrics=[]),
    lambda p: p.update(schema_version=V1),
])
def test_sm4_sm62_invalid_packages_are_rejected(mutate: Any) -> None:
    bad = copy.deepcopy(EXAMPLE)
    mutate(bad)
    assert package_errors(bad)


def test_sm62_large_packages_use_the_same_closed_schema() -> None:
    big = copy.deepcopy(EXAMPLE)
    big["metrics"] = [{"name": "hermes.model_route.count", "type": "counter", "value": 1,
                       "dimensions": {"model": f"m-{i}", "provider": "p"}} for i in range(100)]
    assert package_errors(big) == []
    big["metrics"][70]["dimensions"]["extra"] = "x"
    assert any("metrics/70" in e for e in package_errors(big))
    big["metrics"][70] = {"name": "hermes.unknown", "type": "counter", "value": 1, "dimensions": {}}
    assert package_errors(big)


def test_sm61_sm97_legacy_v1_files_still_validate_against_v1() -> None:
    """SM-61 / SM-97: Legacy v1 files still validate against v1."""
    legacy = {"schema_version": V1, "package_id": "0b7e2c9a-5d1f-4e3a-9c8b-7a6f5e4d3c2b",
              "install_id": EXAMPLE["install_id"], "period_start": "2026-05-01T00:00:00Z",
              "period_end": "2026-05-02T00:00:00Z", "generated_at": "2026-05-02T08:00:00Z",
              "resource": {"hermes_version": "0.9.0"},
              "metrics": [{"name": "hermes.model_call.count", "type": "counter", "value": 3, "dimensions": {
                  "call_role": "primary", "cost_bucket": "zero", "input_token_bucket": "1k_to_4k",
                  "latency_bucket": "1s_to_2s", "locality": "remote", "model_family": "gpt", "outcome": "success",
                  "output_token_bucket": "1_to_1k", "provider_family": "direct", "retry_count_bucket": "0"}}]}
    assert package_errors(legacy) == []
    as_v2 = dict(legacy, schema_version=V2)
    assert package_errors(as_v2)  # v1 content is not a v2 package


# --------------------------------------------------------------------------- packaging


def test_sm53_sm54_packaging_is_due_once_per_utc_day(store: MetricsStore) -> None:
    add(store, "2026-08-31")
    add(store, "2026-09-01", n=2)
    result = pk.package_and_export(store, T0)
    assert result.due and len(result.created) == 2 and sorted(result.exported) == sorted(result.created)
    add(store, "2026-09-01")
    assert not pk.package_and_export(store, T0 + timedelta(hours=5)).due
    nxt = pk.package_and_export(store, T0 + timedelta(days=1))
    assert nxt.due and len(nxt.created) == 1
    assert [p["metrics"][0]["value"] for p in payloads(store)] == [1, 2, 1]  # SM-97: only new deltas
    for row in rows(store):
        assert row["packaged_value"] == row["value"]


def test_sm54_package_contents(store: MetricsStore) -> None:
    add(store, "2026-09-01", "hermes.task_run.started", '{"entrypoint":"interactive","execution_surface":"cli"}', 3)
    add(store, "2026-09-01", "hermes.client.active", "{}", 1)
    add(store, "2026-09-01")
    conn = store.connect()
    due, (package_id,) = pk.create_packages(conn, T0)
    install_id = st.get_state(conn, "install_id")
    assert marks(conn)["data"] == "2026-09-02T00:00:00.000000Z"  # consent P10
    conn.close()
    (payload,) = payloads(store)
    assert payload["package_id"] == package_id and payload["install_id"] == install_id
    assert (payload["period_start"], payload["period_end"], payload["generated_at"]) == (
        "2026-09-01T00:00:00.000000Z", "2026-09-02T00:00:00.000000Z", stamp(T0))
    assert payload["resource"] == RESOURCE.as_dict()
    assert [m["name"] for m in payload["metrics"]] == sorted(m["name"] for m in payload["metrics"])
    assert {m["name"]: m["value"] for m in payload["metrics"]} == {
        "hermes.client.active": 1, "hermes.task_run.started": 3, "hermes.tool_call.count": 1}
    validate_package(payload, expect=V2)


def test_sm45_sm97_tampered_resource_is_rejected_and_nothing_is_committed(
        store: MetricsStore, caplog: pytest.LogCaptureFixture) -> None:
    add(store, "2026-09-01")
    conn = store.connect()
    conn.execute("UPDATE counter_aggregates SET os_family = 'host.example.com'")
    conn.close()
    with caplog.at_level("ERROR", logger="hermes_pipeline.shared_metrics"):
        result = pk.package_and_export(store, T0)
    assert result.error and "validation" in result.error and not result.created
    assert any("rolled back" in r.message for r in caplog.records)
    assert payloads(store) == [] and list(store.outbox.iterdir()) == []
    assert rows(store)[0]["packaged_value"] == 0


def test_sm54_sm97_two_concurrent_packaging_runs_commit_one_delta(store: MetricsStore) -> None:
    add(store, "2026-09-01", n=7)
    store.connect().close()
    barrier = threading.Barrier(6)
    created: list[list[str]] = []

    def run() -> None:
        conn = store.connect()
        barrier.wait()
        while True:
            try:
                created.append(pk.create_packages(conn, T0, force=True)[1])
                break
            except st.StoreBusy:
                continue
        conn.close()

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(len(c) for c in created) == [0, 0, 0, 0, 0, 1]
    assert [p["metrics"][0]["value"] for p in payloads(store)] == [7]


def test_sm23_sm60_legacy_model_call_counters_drain_without_loss(store: MetricsStore) -> None:
    """SM-23 / SM-60: Legacy model call counters drain without loss."""
    v2_shape = {"call_role": "primary", "locality": "remote", "model_family": "gpt", "outcome": "success",
                "provider_family": "direct"}
    v1_shape = {**v2_shape, "cost_bucket": "zero", "input_token_bucket": "1k_to_4k", "latency_bucket": "1s_to_2s",
                "output_token_bucket": "1_to_1k", "retry_count_bucket": "0"}
    add(store, "2026-08-31", pk.LEGACY_MODEL_CALL, pk.canonical(v2_shape), 4)
    add(store, "2026-08-31", pk.LEGACY_MODEL_CALL, pk.canonical(v1_shape), 3)
    result = pk.package_and_export(store, T0)
    assert result.error is None
    (payload,) = payloads(store)
    assert payload["metrics"] == [{"name": pk.LEGACY_MODEL_CALL, "type": "counter", "dimensions": v2_shape,
                                   "value": 7}]
    assert all(r["packaged_value"] == r["value"] for r in rows(store))


# --------------------------------------------------------------------------- export


def test_sm55_file_format_and_atomic_rename(store: MetricsStore) -> None:
    add(store, "2026-09-01")
    (package_id,) = pk.package_and_export(store, T0).exported
    path = store.outbox / f"{package_id}.json"
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert [p.name for p in store.outbox.iterdir()] == [path.name]  # no temporary left behind
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_sm55_sm97_export_retry_reuses_package_id_and_bytes(store: MetricsStore,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    add(store, "2026-09-01")
    real = pk.write_atomically

    def failing(directory: Path, name: str, data: bytes) -> Path:
        (directory / f".{name}.crashed.tmp").write_bytes(data[: len(data) // 2])  # a crash leftover
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pk, "write_atomically", failing)
    first = pk.package_and_export(store, T0)
    assert first.created and not first.exported and "export failed" in (first.error or "")
    conn = store.connect()
    (payload_json, exported_at) = conn.execute("SELECT payload_json, exported_at FROM package_outbox").fetchone()
    conn.close()
    assert exported_at is None
    monkeypatch.setattr(pk, "write_atomically", real)
    second = pk.package_and_export(store, T0 + timedelta(minutes=1))
    assert second.exported == first.created and not second.created
    assert [p.name for p in store.outbox.iterdir()] == [f"{first.created[0]}.json"]
    assert (store.outbox / f"{first.created[0]}.json").read_bytes() == pk.file_bytes(payload_json)


def test_sm56_package_files_are_never_rewritten(store: MetricsStore) -> None:
    add(store, "2026-09-01")
    (package_id,) = pk.package_and_export(store, T0).exported
    path = store.outbox / f"{package_id}.json"
    before = (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino)
    add(store, "2026-09-01")
    pk.package_and_export(store, T0 + timedelta(days=1))
    assert (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino) == before
    assert len(list(store.outbox.glob("*.json"))) == 2
