"""What each configuration key does, in plain words: the text half of ``docs/configuration.md``.

The key names and their types come from the key tables the validator uses (the ``observability``
component's :mod:`~hermes_pipeline.components.observability_keys` and each sink's ``config.py``, the records of the
pipeline document, the ``request_defaults`` tables and the profile's ``KNOWN_KEYS``); defaults come
from the sinks' configuration dataclasses where they hold them. This module only adds what code
cannot say: the effect of each key and the defaults that are not a plain value. A test fails when a
key of those tables has no entry here, or an entry here names no key (:mod:`.docgen` builds the page).

Each entry is ``key -> (default text or None, effect)``; ``None`` takes the default from code.
"""

from __future__ import annotations

from typing import Final

from ..config.alert_settings import DESCRIPTIONS as ALERT_DESCRIPTIONS

Entry = tuple[str | None, str]

DOCUMENT: Final[dict[str, Entry]] = {
    "version": ("1", "Format version of the file; only 1 exists. Checked per file, before layering."),
    "components": ("[]", "The `[[components]]` entries, one per kind, activated in file order."),
    "policy": ("the defaults below", "What to do with unknown kinds, unknown keys and unsupported values (table "
                                     "below)."),
    "plugins": ("absent", "Holds `[[plugins.dynamic]]` manifests and the (not enforced) trust `policy`; read only "
                          "from the selected file."),
}
POLICY: Final[dict[str, Entry]] = {
    "unknown_component": (None, "A `kind` that resolves to nothing: `ignore` skips it, `warn` skips it with a "
                                "warning, `error` fails the load."),
    "unknown_field": (None, "A key nobody recognises (top level, component entry, component config)."),
    "unsupported_value": (None, "A recognised key with a wrong type or value. An invalid value inside one "
                                "destination entry of `observability` skips only that entry, whatever this says."),
}
COMPONENT: Final[dict[str, Entry]] = {
    "kind": ("required", "The component kind: built-in `observability` or `request_defaults`, an entry point of "
                         "the `hermes_pipeline.components` group, or a `[[plugins.dynamic]]` plugin id."),
    "enabled": (None, "`false` keeps the component validated but never activated; in the selected file it "
                      "switches off a component inherited from the user or system file."),
    "config": ("{}", "The component's own configuration; its keys depend on `kind` (sections below)."),
}
PLUGINS: Final[dict[str, Entry]] = {
    "dynamic": ("[]", "Manifest-backed plugins (`[[plugins.dynamic]]`), loaded in file order."),
    "policy": ("absent", "NeMo Relay's gateway trust policy tables; accepted with a warning and not enforced "
                         "(integrity digests are always verified)."),
}
DYNAMIC: Final[dict[str, Entry]] = {
    "manifest": ("required", "Path of a `relay-plugin.toml`, relative to the file that declares it; `python` "
                             "manifests are verified against their sha256 before anything is imported."),
    "config": ("{}", "Configuration handed to the plugin (JSON-compatible values only)."),
}

OBSERVABILITY: Final[dict[str, Entry]] = {
    "version": ("required", "Must be 4."),
    "enable_full_payloads": ("false", "Opens the content gate for network destinations (OTLP, ATOF streams, ATIF "
                                      "storage): prompts, answers, arguments and results are sent as they are."),
    "content_summary": ("\"preview\"", "What replaces content while the gate is closed: `preview` (the first "
                                       "200 characters, length and SHA-256), `digest` (length and SHA-256) or "
                                       "`off` (the field is removed)."),
    "atof": ("absent", "ATOF event streams (JSON Lines files and HTTP streams); a missing section is off."),
    "atif": ("absent", "ATIF trajectories, one file per top-level agent run; a missing section is off."),
    "opentelemetry": ("absent", "OTLP trace export (and Langfuse); a missing section is off."),
    "policy": ("the global policy", "The component's own `unknown_field` / `unsupported_value`; a global "
                                    "`[policy]` value that differs from its default wins over them."),
    "redact_credentials": ("true", "`false` turns the exporters' credential scrubber off: credentials in prompts, "
                                   "tool arguments and results reach every destination as they are (a warning at "
                                   "every activation)."),
    "max_value_chars": ("1000000", "The longest string value any exporter of the component writes, in characters "
                                   "(at least 1000): a longer one (a huge tool result) is cut and ends with "
                                   "`...[truncated N chars]`; the event says how many of its values were cut "
                                   "(`hermes.truncated_values`)."),
    "max_queue_bytes": ("67108864 (64 MiB) for the publication queue",
                        "The most bytes (estimated from the events' text) a queue between the agent and an "
                        "exporter holds, beside its `max_queue_size` in events. Unset, it bounds the publication "
                        "queue (the agent's side), the queue of each third-party sink and of each worker process "
                        "at 64 MiB; set, it also bounds each `atof.sinks[]` writer, the `atif` writer and the "
                        "`opentelemetry` span builder's event queue (left to "
                        "their event count by default: estimating every event costs CPU that only a sink stalled "
                        "with kilobyte events would repay). An event that does not fit is dropped and counted like "
                        "one past `max_queue_size` (`pipeline.events_dropped_bytes`, `dropped_queue_bytes`)."),
}
COMPONENT_POLICY: Final[dict[str, Entry]] = {
    "unknown_field": ("\"warn\"", "Unknown keys inside this component's config."),
    "unsupported_value": ("\"error\"", "Wrong types or values inside this component's config."),
}
WORKER: Final = ("\"thread\"", "Where the section's exporter runs: `thread` (in the agent's process), "
                               "`process` (a child process of its own, on another core) or `process:NAME` (one "
                               "child shared by every section naming NAME).")
ATOF: Final[dict[str, Entry]] = {
    "enabled": (None, "Switches the section on; an enabled section needs at least one sink."),
    "llm_history": (None, "`delta`: an LLM start event carries only the messages new since the previous call; "
                          "`full`: the whole conversation every time."),
    "sinks": ("[]", "The sinks; every event goes to every sink (`type = \"file\"` or `\"stream\"`, below)."),
    "worker": WORKER,
}
ATOF_FILE: Final[dict[str, Entry]] = {
    "type": ("required", "`file`: a JSON Lines file."),
    "max_queue_size": (None, "Events buffered for this sink before new ones are dropped (and counted); "
                             "the component's `max_queue_bytes`, when set, bounds the same queue in bytes."),
    "output_directory": ("$HERMES_HOME/telemetry", "Directory of the file; relative paths resolve against the "
                                                    "working directory at activation."),
    "filename": ("hermes-events-<UTC timestamp at activation>.jsonl", "File name; `{date}` in it rotates the file "
                 "daily (UTC). Each day's file reads on its own: its first LLM start carries the whole history, and a "
                 "batch encoded before midnight but written after it goes to the day it was encoded for."),
    "mode": (None, "`append` to an existing file or `overwrite` it at activation."),
    "content": (None, "`full` keeps content in the local file; `summary` writes what the closed gate would."),
    "retention_days": ("keep forever", "With `{date}` files: delete this sink's files older than N days."),
}
ATOF_STREAM: Final[dict[str, Entry]] = {
    "type": ("required", "`stream`: events sent over the network."),
    "max_queue_size": (None, "Events buffered for this sink before new ones are dropped (and counted); "
                             "the component's `max_queue_bytes`, when set, bounds the same queue in bytes."),
    "name": ("absent", "A unique, non-blank name for this stream (used in logs and counters)."),
    "url": ("required", "Destination URL: http(s) for `http_post` and `ndjson`, ws(s) for `websocket`."),
    "transport": (None, "`http_post` (one JSON array per batch) or `ndjson`; `websocket` is validated but "
                        "not available in this build."),
    "headers": ("{}", "Static request headers (no secrets: use `header_env`)."),
    "header_env": ("{}", "Header name -> name of the environment variable holding the whole value; an unset "
                         "or blank variable skips the sink with a warning."),
    "timeout_millis": (None, "Per-request timeout."),
    "field_name_policy": (None, "`preserve` keeps dotted keys; `replace_dots` writes `_` instead of `.`."),
}
ATIF: Final[dict[str, Entry]] = {
    "enabled": (None, "Switches trajectory export on."),
    "agent_name": (None, "`agent.name` of every trajectory."),
    "agent_version": ("the host's Hermes version, else this package's", "`agent.version` of every trajectory."),
    "model_name": (None, "`agent.model_name` when no call-level model is known."),
    "tool_definitions": ("absent", "ATIF tool metadata copied into `agent.tool_definitions`."),
    "extra": ("absent", "Agent metadata copied into `agent.extra`."),
    "output_directory": ("$HERMES_HOME/telemetry", "Directory of the trajectory files (also the local recovery "
                                                   "copy when remote storage fails)."),
    "filename_template": ("\"hermes-atif-{session_id}.json\"", "File name; must contain `{session_id}`; may use "
                                                               "`{date}` and `{metadata.<path>:-fallback}`."),
    "storage": ("absent", "Remote destinations (`type = \"s3\"` or `\"http\"`, below); needs "
                          "`enable_full_payloads = true`."),
    "max_queue_size": (None, "Events buffered for the trajectory writer before drops; the component's "
                             "`max_queue_bytes`, when set, bounds the same queue in bytes."),
    "group_by": (None, "`agent`: one trajectory per top-level agent run; `turn`: one per turn."),
    "worker": WORKER,
    "include_llm_payloads": (None, "Write the sanitized LLM request and response on agent steps "
                                   "(`extra.hermes.llm_request` / `llm_response`, needed for replay)."),
    "include_system_prompt": (None, "Write a `system` step 1 with the system prompt of the first request."),
    "shared_definitions": (None, "Keep tool lists and system prompts once in `definitions/` beside the files, "
                                 "shared by every trajectory there (`extra.hermes.shared_definitions`); "
                                 "the trajectory store's setting. Not with `storage`."),
    "llm_history": (None, "`delta`: each agent step's `llm_request` holds only what its history adds to the "
                          "previous step's (`extra.hermes.messages_offset`; the trajectory store's setting); "
                          "`full`: whole."),
    "include_observed_events": (None, "Copy the raw events of the trajectory to root `extra.observed_events`."),
    "retention_days": ("keep forever", "Delete trajectory files of this section older than N days."),
}
ATIF_S3: Final[dict[str, Entry]] = {
    "type": ("required", "`s3`: an S3-compatible bucket (validated; not available in this build)."),
    "bucket": ("required", "Bucket name."),
    "key_prefix": ("\"\"", "Object key prefix (a trailing `/` is added)."),
    "access_key_id": ("env AWS_ACCESS_KEY_ID", "Access key id."),
    "region": ("env AWS_REGION", "Region."),
    "endpoint_url": ("env AWS_ENDPOINT_URL", "Endpoint of an S3-compatible service."),
    "allow_http": ("env AWS_ALLOW_HTTP", "Allow plain http to the endpoint."),
    "secret_access_key_var": ("\"AWS_SECRET_ACCESS_KEY\"", "Name of the variable holding the secret key."),
    "session_token_var": ("\"AWS_SESSION_TOKEN\"", "Name of the variable holding a session token."),
}
ATIF_HTTP: Final[dict[str, Entry]] = {
    "type": ("required", "`http`: each trajectory is POSTed as JSON."),
    "endpoint": ("required", "Destination http(s) URL."),
    "headers": ("{}", "Static request headers (no secrets: use `header_env`)."),
    "header_env": ("{}", "Header name -> environment variable holding the whole value."),
    "timeout_millis": (None, "Per-request timeout."),
}
OTEL: Final[dict[str, Entry]] = {
    "enabled": (None, "Switches OTLP export on; needs a trace endpoint, listed here or given by "
                      "`OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`."),
    "sampling_rate": ("`OTEL_TRACES_SAMPLER`, else 1.0",
                      "Fraction of turns exported (decided per turn, deterministically); wins over "
                      "`OTEL_TRACES_SAMPLER`."),
    "always_sample_errors": (None, "Also export an unsampled turn that contains an error."),
    "endpoints": ("[]", "Trace endpoints (below); destinations of different `type` must differ."),
    "traces": ("[]", "Alias of `endpoints` (use one of them)."),
    "logs": ("absent", "OTLP logs: validated; an enabled section is refused by this build (traces only)."),
    "metrics": ("absent", "OTLP metrics (the BOOK-2 instruments, counted from the events) over OTLP/HTTP."),
    "file_sinks": ("[]", "OTLP JSON files: validated; refused when the section is enabled (not in this build)."),
    "worker": WORKER,
    "ids": ("\"random\"", "`random`: random trace and span ids (W3C, the SDK); `uuid`: derived from the scope "
                          "UUIDs (reproducible). The UUIDs stay in `hermes.trajectory_id` either way."),
    "propagate_traceparent": ("true", "`Turn.trace_headers()` gives the W3C `traceparent` of the turn for the "
                                      "host's provider requests."),
}
_SIGNAL: Final[dict[str, Entry]] = {
    "endpoint": ("required", "OTLP/HTTP URL; a bare host:port gets `/v1/traces` appended, other paths are used "
                             "as written."),
    "transport": ("\"http_binary\"", "`http_binary` (OTLP/HTTP protobuf); `http_json` and `grpc` are validated "
                                     "but not available in this build."),
    "headers": ("{}", "Static request headers (no secrets: use `header_env` or `basic_auth_env`)."),
    "header_env": ("{}", "Header name -> environment variable holding the whole value; an unset variable skips "
                         "the endpoint with a warning."),
    "resource_attributes": ("{}", "Extra resource attributes; each wins over the same one in "
                                  "`OTEL_RESOURCE_ATTRIBUTES`."),
    "service_name": ("`OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else "
                     "\"hermes-agent\"", "`service.name` of the resource."),
    "service_namespace": ("absent", "`service.namespace` of the resource."),
    "service_version": ("absent", "`service.version` of the resource."),
    "instrumentation_scope": (None, "Instrumentation scope name of the spans."),
    "timeout_millis": (None, "Per-export request timeout (429 and 5xx answers are retried inside it)."),
}
TRACE_ENDPOINT: Final[dict[str, Entry]] = {
    **_SIGNAL,
    "type": ("required", "Projection: `gen_ai` (OpenTelemetry GenAI conventions; also for Langfuse), `full` or "
                         "`openinference`."),
    "agent_name": (None, "`gen_ai.agent.name` of agent spans."),
    "transport": ("\"http_binary\"", "`http_binary` (OTLP/HTTP protobuf), `http_json` (OTLP/HTTP JSON) or `grpc` "
                                     "(OTLP/gRPC, the URL as given; needs the `grpc` extra)."),
    "timeout_millis": ("`OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`, else 10000", "One request's timeout; a request "
                       "that times out or gets 429/502/503/504 is retried with backoff inside "
                       "`export_timeout_millis`."),
    "export_timeout_millis": ("env `OTEL_BSP_EXPORT_TIMEOUT`, else 30000", "One batch's export, retries "
                              "included (`Retry-After` honoured)."),
    "compression": ("`OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION`, else \"none\"", "`gzip` compresses request "
                    "bodies (`Content-Encoding: gzip`)."),
    "max_queue_size": ("env `OTEL_BSP_MAX_QUEUE_SIZE`, else 10000", "Completed spans buffered before drops."),
    "max_export_batch_size": ("env `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, else 512", "Spans per request; at most "
                                                                                "`max_queue_size`."),
    "scheduled_delay_millis": ("env `OTEL_BSP_SCHEDULE_DELAY`, else 5000", "Longest wait before a partial batch "
                                                                          "is sent."),
    "basic_auth_env": ("absent", "`{username = \"ENV\", password = \"ENV\"}`: builds `Authorization: Basic` from "
                                 "two variables at activation (Langfuse: public and secret key)."),
    "derive_signals": ("true (false for Langfuse URLs)", "Whether `logs` / `metrics` may derive their endpoint "
                                                         "from this one."),
    "mark_projection": ("\"inherit\"", "`full` / `openinference`: marks as span events (`inherit`, `event`) or as "
                                       "zero-length spans (`tool`)."),
    "mark_exclude_names": (None, "`full` / `openinference`: mark names never exported."),
    "attribute_mappings": ("[]", "`full` / `openinference`: `{key, alias}` pairs copying an attribute under "
                                 "another name."),
    "promote_metadata_prefixes": ("[]", "Event metadata keys with these prefixes become span attributes."),
    "trace_grouping": ("\"turn\"", "`turn`: one trace per turn, rooted at the turn's span (`invoke_agent` in "
                                   "`gen_ai`), subagents inside it, no session span, `session.id` and "
                                   "`gen_ai.conversation.id` on every span (how Phoenix, Langfuse and LangSmith "
                                   "group turns into sessions); `session`: one trace per session, rooted at the "
                                   "session span (NeMo Relay's shape)."),
}
SIGNAL_ENDPOINT: Final[dict[str, Entry]] = {key: (default, effect.replace("`/v1/traces`", "the signal's path"))
                                            for key, (default, effect) in _SIGNAL.items()}
LOGS: Final[dict[str, Entry]] = {
    "enabled": ("false", "OTLP logs (marks as log records); refused by this build when true."),
    "endpoints": ("derived from the trace endpoints", "Signal endpoints; an explicit empty list clears inherited "
                                                      "ones."),
    "minimum_severity": ("\"info\"", "Lowest severity exported."),
    "max_queue_size": ("2048", "Records buffered before drops."),
    "max_export_batch_size": ("512", "Records per request."),
    "scheduled_delay_millis": ("1000", "Longest wait before a partial batch is sent."),
}
METRICS: Final[dict[str, Entry]] = {
    "enabled": ("false", "Export the OTLP metrics `hermes.agent.*` and `gen_ai.client.*` (see docs/alerts.md)."),
    "endpoints": ("derived from the trace endpoints", "Signal endpoints; an explicit empty list clears inherited "
                                                      "ones."),
    "export_interval_millis": ("60000", "Interval between exports."),
    "temporality": ("\"cumulative\"", "Aggregation temporality."),
    "max_instruments": ("256", "Most instruments kept."),
    "cardinality_limit": ("2000", "Most attribute sets per instrument."),
    "include_skill_names": ("false", "Put skill names on metric attributes."),
}
OTEL_FILE_SINK: Final[dict[str, Entry]] = {
    "type": ("required", "`file`."),
    "output_directory": ("$HERMES_HOME/telemetry", "Directory of the file."),
    "filename": ("required", "File name."),
    "format": ("\"json_lines\"", "OTLP JSON, one export batch per line."),
    "retention_days": ("keep forever", "Delete files older than N days."),
}

REQUEST_DEFAULTS: Final[dict[str, Entry]] = {
    "llm": ("{}", "Keys filled into LLM requests that lack them (`llm_request` middleware); rows below."),
    "tools": ("{}", "Tool name -> table of default arguments filled into that tool's calls (`tool_request` "
                    "middleware)."),
    "policy": ("the global policy", "The component's own `unknown_field` / `unsupported_value`."),
}
REQUEST_LLM_EFFECT: Final = "Default for the OpenAI-compatible request key `{key}` (never overwrites a set value)."

PROFILE: Final[dict[str, Entry]] = {
    "telemetry.shared_metrics.enabled": (None, "Collect this profile's aggregate, allowlisted counters locally."),
    "telemetry.shared_metrics.send": (None, "Send packages already written (needs `enabled` and an `endpoint`); "
                                            "re-read before every package."),
    "telemetry.shared_metrics.endpoint": ("none (nothing is sent)", "Ingestion URL: https, or http on localhost."),
    "gateway.telemetry.session_segments.on_compaction": (None, "Start a new session segment at the next turn "
                                                               "after a context compaction."),
    "gateway.telemetry.session_segments.max_turns": (None, "Start a new session segment every N turns; 0 never."),
    "plugins.hook_callback_timeout": (None, "Hang protection: seconds an observer callback may run (0 off, at most "
                                            "600); the first profile of a process decides."),
    "observability.trajectories.enabled": (None, "Record every run of this profile as an ATIF trajectory in the "
                                                 "store (full sanitized content, replayable)."),
    "observability.trajectories.dir": (None, "The trajectory store directory, relative to `$HERMES_HOME`."),
    "observability.trajectories.retention_days": (None, "Trajectories older than this are pruned at start and "
                                                        "every 24 hours; 0 keeps them."),
    "observability.dashboard.host": (None, "Address `hermes-pipeline dashboard` binds when `--host` is not given "
                                           "(a non-loopback address also needs `--allow-remote`)."),
    "observability.dashboard.port": (None, "Port `hermes-pipeline dashboard` listens on when `--port` is not given."),
    "observability.dashboard.jaeger_url": ("none (no trace links)", "Base URL of a Jaeger UI (e.g. "
                                           "`http://localhost:16686`): the dashboard links each run to its trace "
                                           "there."),
    "observability.environment": (None, "`development` or `production`: the default trace sampling rate (1.0 or "
                                        "0.1) of the quick OTel endpoint and of pipeline trace endpoints without one."),
    "observability.audit.enabled": (None, "Keep the local observability store `observability/observability.sqlite3` "
                                          "(skill history, memory audit, task runs, LLM calls, skill runs)."),
    "observability.audit.memory_dirs": (None, "Directories (relative to `$HERMES_HOME`) whose `*.md` files are "
                                              "audited, out-of-band edits included."),
    "observability.audit.skills_dir": (None, "The skills directory (relative to `$HERMES_HOME`), rescanned for "
                                             "`SKILL.md` edits."),
    "observability.audit.excerpt_chars": (None, "Longest memory excerpt kept in `memory_changes`, in characters."),
    "observability.memory_tools": (None, "Tool name to `memory.retrieve` or `memory.update`: classifies memory tools "
                                         "(spans and `memory_changes` rows)."),
    "observability.pricing": ("none (cost unknown)", "USD per million `input`, `output`, `cache_read` tokens per "
                                                     "`provider/model`, for `cost_usd` when the provider reports none."),
    "observability.otel_enabled": (None, "Export traces to one `gen_ai` OTLP endpoint (the quick settings)."),
    "observability.otel_endpoint": (None, "OTLP/HTTP base URL of the quick endpoint (`/v1/traces` is appended)."),
    "observability.otel_service_name": (None, "`service.name` of the quick endpoint."),
    "observability.trace_sampling_rate": ("by environment (1.0 / 0.1)", "Fraction of turns the quick endpoint "
                                                                        "exports."),
    "observability.retention.runs_days": (None, "Store rows of task runs, LLM calls, skill runs and resolved alerts "
                                                "older than this are pruned; 0 keeps them."),
    "observability.retention.history_days": (None, "Skill history and memory audit rows older than this are pruned; "
                                                   "0 keeps them."),
    "observability.logs.path": (None, "The JSON Lines log of hermes_pipeline, relative to `$HERMES_HOME`."),
    "observability.max_value_chars": ("the component's `max_value_chars`, else 1000000", "The longest string value the profile's stores (trajectory store, "
                                            "observability store, quick OTel endpoint) and its JSON Lines log keep, "
                                            "in characters (at least 1000): a longer one is cut and ends with "
                                            "`...[truncated N chars]`; a trajectory with a cut value says so in "
                                            "`extra.hermes.truncated_values` (it cannot be replayed byte for byte)."),
    "observability.max_queue_bytes": ("67108864 (64 MiB) for the profile's publication queue",
                                      "The most bytes (estimated from the events' text) a queue between the agent "
                                      "and the profile's stores and quick OTel endpoint holds, beside its count. "
                                      "Unset, it bounds the profile's own publication queue at 64 MiB and leaves "
                                      "the consumers' event queues to their count; set, it bounds those too. An "
                                      "event that does not fit is dropped and counted (`dropped_queue_bytes`)."),
    **ALERT_DESCRIPTIONS,
}

ENVIRONMENT: Final[dict[str, str]] = {
    "HERMES_NEMO_RELAY_PLUGINS_TOML": "Selects the pipeline file (TOML, or YAML by extension); unset, no pipeline "
                                      "file is read at all.",
    "HERMES_HOME": "The profile directory (default `~/.hermes`): `config.yaml` and default output locations.",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "Trace URL used as is, when the enabled `opentelemetry` section lists no "
                                          "trace endpoint.",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "Base URL (`v1/traces` appended), same condition; the per-signal variable wins.",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS, OTEL_EXPORTER_OTLP_HEADERS":
        "`k=v,...` (percent-encoded) headers of that environment endpoint only, never of endpoints listed in the "
        "file (warned about then); the per-signal variable replaces the generic one.",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, OTEL_EXPORTER_OTLP_TIMEOUT": "Timeout of the environment endpoint in "
                                                                    "milliseconds (default 10000).",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL": "Only `http/protobuf` is exported; `grpc` "
                                                                      "or `http/json` refuses the environment "
                                                                      "endpoint.",
    "OTEL_SERVICE_NAME": "`service.name` where `endpoints[].service_name` is not set.",
    "OTEL_RESOURCE_ATTRIBUTES": "`k=v,...` (percent-encoded) resource attributes under "
                                "`endpoints[].resource_attributes`; its `service.name` loses to `OTEL_SERVICE_NAME`.",
    "OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG": "`always_on`, `always_off`, `traceidratio` (+ probability, "
                                                    "default 1), `parentbased_*` (the same: the turn is the root); "
                                                    "the turn sampling rate where `sampling_rate` is not set.",
    "OTEL_SDK_DISABLED": "`true` (any case): no span is exported (ATOF and ATIF are not affected).",
    "OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_SCHEDULE_DELAY":
        "Batch defaults of trace endpoints that do not set them.",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "`true` / `SPAN_ONLY` / `SPAN_AND_EVENT` opens the OTLP "
                                                          "content gate like `enable_full_payloads`.",
}
"""Environment variables read at activation. Invalid OTEL_* values are ignored with a warning naming the
variable; an empty value is the same as unset."""
