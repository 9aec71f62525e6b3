"""Running an agent under a replay, isolated (spec 06 BOOK-31, BOOK-33).

:func:`run_replay` checks the recording (nothing is written for bad input), builds the effective
settings (recorded configuration, then ``--set`` overrides), runs the agent on a private engine with
the replay's middlewares and the trajectory store's ATIF output (kept in memory), with a temporary
workspace for the agent's tools, and writes the new run as a new trajectory carrying
``extra.hermes.replay = {of, live_from_step, mode, diverged_at_step}``. No pipeline file and no
profile is read: the replay's engine has only the replay and the store's output.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.core import Engine
from ..export.atomic import write_atomically
from ..export.jsonenc import indented
from ..host import Host
from ..host.snapshot import EXTERNAL_SKILLS, context_snapshot
from .agents import SETTINGS, AgentFactory, AgentRun, reference_agent
from .diff import TrajectoryDiff, diff_trajectories
from .errors import ReplayDivergence, TrajectoryError
from .recording import Recording
from .replay import Mode, Replay

__all__ = ["ReplayResult", "parse_overrides", "recorded_settings", "run_replay", "snapshot_warnings"]

CLOSE_DEADLINE = 5.0
"""Seconds the replay's store has to write the new run when the agent is done (as the trajectory store's)."""


@dataclass
class ReplayResult:
    """The outcome of one replay."""

    recording: Recording
    replay: Replay
    document: dict[str, Any]
    """The new run's trajectory (with ``extra.hermes.replay``)."""
    path: Path | None
    """Where it was written."""
    diff: TrajectoryDiff
    answer: str | None = None
    error: str | None = None
    """An agent failure other than a divergence (e.g. a live provider error)."""
    warnings: list[str] = field(default_factory=list)


def _scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` strings → settings (JSON scalars parsed: ``0.2`` is a number).

    Raises:
        TrajectoryError: not ``KEY=VALUE``, or a key the replay does not have (naming it and the known keys).
    """
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise TrajectoryError(f"--set expects KEY=VALUE, not {item!r}", key=key or item)
        if key not in SETTINGS:
            raise TrajectoryError(f"--set {key}: no such replay setting (known: {', '.join(SETTINGS)})", key=key)
        out[key] = _scalar(value)
    return out


def recorded_settings(recording: Recording) -> dict[str, Any]:
    """The recorded configuration: model, provider, system prompt, and temperature / max_tokens of the
    first request when it had them."""
    body = recording.calls[0].request.get("body") if isinstance(recording.calls[0].request, Mapping) else None
    body = body if isinstance(body, Mapping) else {}
    settings: dict[str, Any] = {"model": recording.model, "provider": recording.context.get("provider") or "replay",
                                "system_prompt": recording.system_prompt}
    for key in ("temperature", "max_tokens"):
        if body.get(key) is not None:
            settings[key] = body[key]
    return settings


def truncation_warnings(recording: Recording) -> list[str]:
    """A note when the recording says some of its values were cut to the export bound (``max_value_chars``):
    a tool result served from it is the cut text, not what the agent saw."""
    cut = recording.truncated_values
    if not cut:
        return []
    return [f"{cut} recorded value(s) were cut to the export bound (max_value_chars) when the run was recorded: "
            "steps that use them are replayed with the cut text, not byte for byte"]


def _where(entry: Mapping[str, Any], name: str) -> str:
    """A snapshot entry's name, under its ``root`` for an external skill."""
    root = entry.get("root")
    return f"{root}/{entry.get(name)}" if isinstance(root, str) else str(entry.get(name))


def snapshot_warnings(recording: Recording, home: Path | None) -> list[str]:
    """What differs between the recorded skill / memory hashes and the profile at ``home`` now."""
    recorded = recording.context
    if home is None or not recorded or ("skills" not in recorded and "memory" not in recorded):
        return []
    current = context_snapshot(home)
    out = []
    for key, label, name in (("skills", "skills", "name"), (EXTERNAL_SKILLS, "external skills", "name"),
                             ("memory", "memory files", "path")):
        if key not in recorded:
            continue
        old = {_where(e, name): e.get("sha256") for e in recorded.get(key) or [] if isinstance(e, Mapping)}
        new = {_where(e, name): e.get("sha256") for e in current.get(key) or []}
        changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        if changed:
            out.append(f"the {label} differ from the recording's snapshot ({', '.join(changed[:5])}"
                       f"{', ...' if len(changed) > 5 else ''}): live steps run against the current ones")
    return out


def check_recording(recording: Recording, live_from: int | None) -> None:
    """Refuse a recording a replay cannot serve before anything runs (truncated payloads).

    Raises:
        TrajectoryError: naming the file and the step.
    """
    for call in recording.truncated_calls():
        if live_from is None or call.index < live_from:
            raise TrajectoryError("the recorded LLM response was truncated by the sanitizer "
                                  "(HERMES_PLUGIN_PAYLOAD_MAX_CHARS), so this step cannot be served; replay "
                                  f"with --live-from {call.index} or record with a larger limit",
                                  path=recording.path, step=call.step_id)
    if live_from is not None and live_from > len(recording.calls) + 1:
        raise TrajectoryError(f"--live-from {live_from}: the recording has only {len(recording.calls)} LLM calls",
                              path=recording.path, key="--live-from")


class _CapturedStore:
    """The trajectory store's output kept in memory: the store's ATIF configuration (the same documents, but
    with their tool lists and system prompts inline rather than in a sidecar) on a scope plugin of its own, with the
    files it would write collected by name instead of
    written to disk and read back (the new run is written once, where it belongs, by :func:`run_replay`)."""

    def __init__(self, engine: Engine, directory: Path) -> None:
        from ..export.scope_hooks import ScopePlugin
        from ..sinks.atif import build_atif_sink
        from ..sinks.trajectory_store import store_atif_config

        self.files: dict[str, bytes] = {}
        # the new run's file stands alone (written to --output or into the store): definitions inline, whole
        # histories
        config = {**store_atif_config(directory), "shared_definitions": False, "llm_history": "full"}
        self.sink: Any = build_atif_sink(config, base_dir=directory, default_dir=directory,
                                         on_invalid="skip", ignore_unknown_keys=True, destinations={"local": self})
        self.scope_plugin = ScopePlugin((self.sink,), deferred=True)
        self.engine = engine
        self.plugin_name = engine.add_plugin(self.scope_plugin, name=f"hermes.replay.store.{id(self):x}")

    def describe(self) -> str:
        return "replay output (in memory)"

    def write(self, batch: list[Any]) -> None:
        """The ATIF sink's local destination: keep each trajectory file's bytes (a later one of the same name
        replaces it, as a file would be)."""
        for item in batch:
            self.files[Path(item.name).name] = item.content

    def close(self) -> None:
        """Make what is queued into scope events, end open runs (partial trajectories), drain the writer."""
        try:
            self.engine.remove_plugin(self.plugin_name)
            self.scope_plugin.shutdown(CLOSE_DEADLINE)
        finally:
            self.sink.shutdown(CLOSE_DEADLINE)


def run_replay(recording: Recording, *, mode: Mode = "strict", live_from: int | None = None,
               overrides: Mapping[str, Any] | None = None, agent: AgentFactory | None = None,
               output: Path | None = None, store: Path | None = None, home: Path | None = None) -> ReplayResult:
    """Replay ``recording`` with ``agent`` (the reference agent by default) and write the new run.

    Args:
        output: the new trajectory's path; else ``store/<date>-<uuid>.json``; with neither it is not written.
        home: the profile whose current skill and memory hashes are compared with the snapshot.

    Raises:
        TrajectoryError: the recording cannot be served (checked before anything runs).
    """
    check_recording(recording, live_from)
    settings = {**recorded_settings(recording), **dict(overrides or {})}
    engine = Engine()
    temp = Path(tempfile.mkdtemp(prefix="hermes-replay-"))
    try:  # the temporary directory is only the agent's workspace: it goes as soon as the agent is done
        workspace = temp / "workspace"
        workspace.mkdir()
        capture = _CapturedStore(engine, temp / "trajectories")
        replay = Replay(recording, mode=mode, live_from=live_from).install(engine)
        host = Host(engine, platform="replay", model=str(settings.get("model") or ""),
                    provider=str(settings.get("provider") or ""), base_url=str(settings.get("base_url") or ""),
                    api_mode=recording.api_mode)
        context = {**recording.context, **({"model": settings["model"]} if settings.get("model") else {})}
        answer: str | None = None
        error: str | None = None
        try:
            answer = (agent or reference_agent)(AgentRun(host, recording, settings, workspace, dict(context)))
        except ReplayDivergence:
            pass  # recorded in replay.divergences
        except Exception as exc:  # a live provider or agent failure: the run is written as it went
            error = f"{type(exc).__name__}: {str(exc)[:300]}"
        finally:
            replay.uninstall()
            capture.close()
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    if not capture.files:
        raise TrajectoryError("the agent did not run a turn, so there is nothing to compare", path=recording.path)
    name = max(capture.files)
    document: dict[str, Any] = json.loads(capture.files[name])
    document.setdefault("extra", {}).setdefault("hermes", {})["replay"] = {
        "of": recording.trajectory_id, "live_from_step": live_from, "mode": mode,
        "diverged_at_step": replay.diverged_at_step}
    target = output if output is not None else (store / name if store is not None else None)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomically(target, indented(document))
    return ReplayResult(recording, replay, document, target, diff_trajectories(recording.document, document),
                        answer, error, [*truncation_warnings(recording), *snapshot_warnings(recording, home)])
