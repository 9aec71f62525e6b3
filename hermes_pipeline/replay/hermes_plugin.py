"""The replay's side inside a Hermes process (spec 06 BOOK-31a): serve a recording to Hermes' own loop.

:mod:`.hermes_run` writes a one-file Hermes plugin into the isolated ``HERMES_HOME`` of a replay whose
``register(ctx)`` calls :func:`register` here. It reads the recording named by :data:`RECORDING_VARIABLE`,
installs a :class:`HermesReplay` on the engine of the hermes_pipeline bridge (so Hermes' ``llm_execution`` /
``tool_execution`` middleware reach it through the bridge, as any other middleware of the profile), fixes
the date Hermes writes into its system prompt to the recorded run's, and keeps a small JSON report of what
was served and where the run diverged at :data:`REPORT_VARIABLE` (rewritten after every call, so the report
is complete however Hermes leaves).

Hermes' provider adapters read the response by attribute (``response.choices[0].message``), so the
recorded response is rebuilt as the SDK object of the recorded ``api_mode`` (an ``openai``
``ChatCompletion``, an ``anthropic`` ``Message``; other shapes as attribute views of the same dict).
"""

from __future__ import annotations

import json
import os
import re
import threading
from datetime import date, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final

from ..export.atomic import write_atomically
from .codec import canonical_json, provider_response
from .errors import ReplayDivergence
from .recording import Recording
from .replay import Mode, Replay, ServedStep

__all__ = ["DATE_VARIABLE", "MODE_VARIABLE", "PATHS_VARIABLE", "RECORDING_VARIABLE", "REPORT_VARIABLE",
           "STATE_TOOLS", "WHATIF_VARIABLE", "HermesReplay", "register", "sdk_response", "seed_session"]

RECORDING_VARIABLE: Final = "HERMES_PIPELINE_REPLAY_RECORDING"
"""The recording (an ATIF file) the Hermes process serves."""
REPORT_VARIABLE: Final = "HERMES_PIPELINE_REPLAY_REPORT"
"""Where the Hermes process writes what it served (JSON)."""
MODE_VARIABLE: Final = "HERMES_PIPELINE_REPLAY_MODE"
"""``strict`` or ``lenient``."""
DATE_VARIABLE: Final = "HERMES_PIPELINE_REPLAY_DATE"
"""ISO timestamp of the recorded run's start: the "Conversation started" date of Hermes' system prompt."""
WHATIF_VARIABLE: Final = "HERMES_PIPELINE_REPLAY_WHATIF"
"""JSON ``{live_from, tools, overrides, workspace}`` of a what-if replay (``--live-from N``): from the N-th LLM
call on the model is called for real, with ``overrides`` (``temperature``, ``system_prompt``) applied to each
live request; ``tools`` ``live`` runs the live steps' tools (only on paths inside ``workspace``), ``recorded``
serves them the recorded result of the same call."""
PATHS_VARIABLE: Final = "HERMES_PIPELINE_REPLAY_PATHS"
"""JSON ``{replay path: recorded path}``: the isolated home, user home and working directory of the replay and
the ones the recorded run had. Hermes writes them into its system prompt; the replay compares the system
prompt with the recorded one as if the run were where it was recorded."""


def _view(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): _view(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_view(v) for v in value]
    return value


def sdk_response(response: dict[str, Any], api_mode: str) -> Any:
    """The provider SDK object Hermes' adapter for ``api_mode`` reads, built from a provider-shaped dict."""
    try:
        if api_mode == "chat_completions":
            from openai.types.chat import ChatCompletion

            return ChatCompletion.model_validate({**response, "created": 0, "model": str(response.get("model") or "")})
        if api_mode == "anthropic_messages":
            from anthropic.types import Message  # type: ignore[import-not-found,unused-ignore]

            return Message.model_validate({**response, "model": str(response.get("model") or "")})
    except Exception:  # an SDK missing or stricter than the recording: attribute views of the same data
        pass
    return _view(response)


class HermesReplay(Replay):
    """A :class:`~.replay.Replay` for Hermes: subagents served, SDK-shaped responses, a report file."""

    def __init__(self, recording: Recording, *, mode: Mode = "strict", report: Path | None = None,
                 paths: dict[str, str] | None = None, live_from: int | None = None, tools: str = "live",
                 overrides: dict[str, Any] | None = None, workspace: Path | None = None) -> None:
        super().__init__(recording, mode=mode, subagents="served", live_from=live_from)
        self.report = report
        self.paths = sorted((paths or {}).items(), key=lambda item: -len(item[0]))
        self.tools = tools
        self.overrides = dict(overrides or {})
        self.workspace = workspace
        self._by_call = _recorded_by_call(recording)
        self.state_errors: list[str] = []
        self._report_lock = threading.Lock()

    def live_request(self, request: Any) -> Any:
        """A live request with the what-if settings: the sampling temperature, the system prompt."""
        if not isinstance(request, dict):
            return request
        out = dict(request)
        if "temperature" in self.overrides:
            out["temperature"] = self.overrides["temperature"]
        prompt = self.overrides.get("system_prompt")
        messages = out.get("messages")
        if isinstance(prompt, str) and isinstance(messages, list):
            rest = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
            out["messages"] = [{"role": "system", "content": prompt}, *rest]
        return out

    def as_recorded(self, request: Any) -> Any:
        """A copy of Hermes' request whose system messages name the recorded paths instead of the replay's."""
        messages = request.get("messages") if isinstance(request, dict) else None
        if not self.paths or not isinstance(messages, list):
            return request
        out = []
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "system" \
                    and isinstance(message.get("content"), str):
                text = message["content"]
                for ours, theirs in self.paths:
                    text = text.replace(ours, theirs)
                message = {**message, "content": text}
            out.append(message)
        return {**request, "messages": out}

    def _stop(self, exc: ReplayDivergence) -> dict[str, Any]:
        """A final answer that ends Hermes' turn at a strict divergence (Hermes would retry a failed call)."""
        text = f"[replay stopped at LLM call {exc.step}: {exc.divergence_reason}]"
        return provider_response({"assistant_message": {"role": "assistant", "content": text},
                                  "finish_reason": "stop", "model": self.recording.model}, self._api_mode)

    @property
    def _api_mode(self) -> str:
        return self.calls[0].api_mode if self.calls else "chat_completions"

    def write_report(self, error: str | None = None) -> None:
        """Rewrite the report: steps served, divergences (and a failure of the plugin itself)."""
        if self.report is None:
            return
        data = {"llm_calls": self.llm_calls, "recorded_calls": len(self.calls),
                "steps": [step.__dict__ for step in self.steps],
                "divergences": [{"step": d.step, "reason": d.reason} for d in self.divergences], "error": error,
                "warnings": list(self.state_errors)}
        with self._report_lock:
            write_atomically(self.report, json.dumps(data).encode("utf-8"))

    def llm_execution(self, **kwargs: Any) -> Any:
        """Serve the recorded response as the SDK object Hermes expects (a live call gets the what-if
        settings and goes to the model)."""
        live_next = kwargs.get("next_call")
        live = self.live_request(kwargs.get("request"))
        if callable(live_next):
            kwargs = {**kwargs, "next_call": lambda _payload=None: live_next(live)}
        if "request" in kwargs:
            kwargs = {**kwargs, "request": self.as_recorded(kwargs["request"])}
        try:
            served = super().llm_execution(**kwargs)
        except ReplayDivergence as exc:
            served = self._stop(exc)
        finally:
            self.write_report()
        if isinstance(served, dict):
            return sdk_response(served, self._api_mode)
        return served

    def tool_execution(self, **kwargs: Any) -> Any:
        """Serve the recorded result (a text, as Hermes' tools return); in a live step, run the tool in the
        replay's workspace (``tools`` ``live``) or serve the recorded result of the same call (``recorded``)."""
        try:
            if self._live:
                served = self._live_tool(kwargs)
            else:
                self._apply_state(kwargs)
                served = super().tool_execution(**kwargs)
        finally:
            self.write_report()
        return served if isinstance(served, str) else json.dumps(served)

    def _apply_state(self, kwargs: dict[str, Any]) -> None:
        """In a what-if with live tools, also run a served call that changed the profile (a skill or memory write,
        :data:`STATE_TOOLS`) in the isolated profile, so that the live steps from N on find the skills and memory
        as the recorded run had left them (the model is still served the recorded result)."""
        call_id, name = kwargs.get("tool_call_id"), str(kwargs.get("tool_name") or "")
        if self.live_from is None or self.tools != "live" or name not in STATE_TOOLS:
            return
        if not isinstance(call_id, str) or call_id not in self.recording.tool_results:
            return
        next_call = kwargs.get("next_call")
        if not callable(next_call):
            return
        try:
            next_call(None)
        except Exception as exc:  # the recorded result is served anyway; the live steps may see an older state
            self.state_errors.append(f"the recorded {name} call {call_id} could not be applied to the replay "
                                     f"profile ({type(exc).__name__}: {str(exc)[:200]})")

    def _live_tool(self, kwargs: dict[str, Any]) -> Any:
        step, call_id, name = self._count, kwargs.get("tool_call_id"), str(kwargs.get("tool_name") or "")
        args = kwargs.get("args")
        if self.tools == "recorded":
            found = self.recording.tool_results.get(call_id) if isinstance(call_id, str) else None
            if found is None:
                found = self._by_call.get((name, canonical_json(args)))
            if found is not None:
                self.steps.append(ServedStep("tool", step, "recorded", tool_call_id=call_id))
                return found
            self.steps.append(ServedStep("tool", step, "missing", tool_call_id=call_id))
            return {"error": f"replay: no recorded result for this {name} call (--tools recorded serves only "
                             "calls the recorded run made)"}
        outside = _outside_paths(args, self.workspace)
        if outside:
            self.steps.append(ServedStep("tool", step, "refused", tool_call_id=call_id))
            return {"error": f"replay: live tools act only inside the replay's workspace; {outside[0]!r} is "
                             "outside it"}
        self.steps.append(ServedStep("tool", step, "live", tool_call_id=call_id))
        return kwargs["next_call"](None)


STATE_TOOLS: Final = ("skill_manage", "memory")
"""Hermes tools that change the profile (its skills, its memory): in a what-if with live tools, the served calls of
the steps before N are also run in the isolated profile (:meth:`HermesReplay.tool_execution`)."""


def _recorded_by_call(recording: Recording) -> dict[tuple[str, str], str]:
    """``(tool name, canonical arguments)`` → the recorded result of that call (the first of equal calls)."""
    out: dict[tuple[str, str], str] = {}
    for step in recording.document.get("steps") or []:
        if not isinstance(step, dict):
            continue
        for call in step.get("tool_calls") or []:
            if not isinstance(call, dict) or call.get("tool_call_id") not in recording.tool_results:
                continue
            arguments = call.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    pass
            out.setdefault((str(call.get("function_name") or ""), canonical_json(arguments)),
                           recording.tool_results[call["tool_call_id"]])
    return out


_PATH_KEYS: Final = ("path", "file_path", "filepath", "filename", "directory", "dir", "cwd", "workdir")


def _outside_paths(args: Any, workspace: Path | None) -> list[str]:
    """Path arguments of a live tool call that leave ``workspace`` (absolute elsewhere, or ``..`` out of it)."""
    if workspace is None or not isinstance(args, dict):
        return []
    root = workspace.resolve()
    out = []
    for key, value in args.items():
        if key.lower() in _PATH_KEYS and isinstance(value, str) and value:
            target = (root / Path(value).expanduser()).resolve()
            if target != root and root not in target.parents:
                out.append(value)
    return out


_STARTED_RE: Final = re.compile(r"^Conversation started: [A-Za-z]+, ([A-Za-z]+ \d{1,2}, \d{4})$", re.MULTILINE)
"""The day Hermes 0.19 writes into its system prompt (``agent.system_prompt``: ``Conversation started: Monday,
December 07, 2026``)."""


def _recorded_day(recorded_prompt: str | None, stamp: str) -> date | None:
    """The day the recorded system prompt said: its ``Conversation started:`` line, else the recording's first
    timestamp ``stamp`` in Hermes' own time zone (its ``timezone`` setting or ``HERMES_TIMEZONE``, else the
    machine's), as Hermes computed it; ``None`` when neither reads."""
    found = _STARTED_RE.search(recorded_prompt or "")
    if found is not None:
        try:
            return datetime.strptime(found.group(1), "%B %d, %Y").date()
        except ValueError:
            pass
    import hermes_time  # type: ignore[import-not-found,import-untyped,unused-ignore]

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(hermes_time.get_timezone()).date()
    except ValueError:
        return None


def _fix_date(recorded: date) -> None:
    """Make Hermes' clock (``hermes_time.now``, used for the system prompt's date) say the recorded day."""
    import hermes_time  # type: ignore[import-not-found,import-untyped,unused-ignore]

    real = hermes_time.now

    def now() -> datetime:
        current: datetime = real()
        return current.replace(year=recorded.year, month=recorded.month, day=recorded.day)

    hermes_time.now = now


_PROBE_LINE: Final = "Python toolchain: "
"""How Hermes 0.19's environment probe line starts (``tools.env_probe``; absent when the environment is clean)."""


def _fix_environment_probe(recorded_prompt: str | None) -> None:
    """Make Hermes' Python-toolchain probe give the line the recorded system prompt had (or none).

    The probe shells out with a short wait and leaves its line out when it is late, so the same machine gives
    a system prompt with or without it depending on load; the replay pretends the recorded environment."""
    if recorded_prompt is None:
        return
    line = next((text for text in recorded_prompt.splitlines() if text.startswith(_PROBE_LINE)), "")
    try:
        import tools.env_probe as probe  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except Exception:
        return
    probe.get_environment_probe_line = lambda *, force_refresh=False: line
    probe.warm_environment_probe_async = lambda *args, **kwargs: None


def register(ctx: Any) -> None:
    """The replay plugin's entry point inside Hermes: load the recording, attach the bridge with the replay."""
    from ..hermes import register as attach_bridge

    report = Path(os.environ[REPORT_VARIABLE]) if os.environ.get(REPORT_VARIABLE) else None
    replay: HermesReplay | None = None
    try:
        mode: Mode = "lenient" if os.environ.get(MODE_VARIABLE) == "lenient" else "strict"
        paths = json.loads(os.environ.get(PATHS_VARIABLE) or "{}")
        whatif = json.loads(os.environ.get(WHATIF_VARIABLE) or "{}")
        whatif = whatif if isinstance(whatif, dict) else {}
        replay = HermesReplay(Recording.from_file(os.environ[RECORDING_VARIABLE]), mode=mode, report=report,
                              paths={str(k): str(v) for k, v in paths.items()} if isinstance(paths, dict) else None,
                              live_from=whatif.get("live_from"), tools=str(whatif.get("tools") or "live"),
                              overrides=whatif.get("overrides") or {},
                              workspace=Path(whatif["workspace"]) if whatif.get("workspace") else None)
        day = _recorded_day(replay.recording.system_prompt, os.environ.get(DATE_VARIABLE) or "")
        if day is not None:
            _fix_date(day)
        _fix_environment_probe(replay.recording.system_prompt)
        installed: list[object] = []
        attach_bridge(ctx, prepare=lambda engine: installed.append(replay.install(engine)))
        replay.write_report(None if installed else "the hermes_pipeline bridge did not start in the replay profile")
    except Exception as exc:
        message = f"the replay plugin failed: {type(exc).__name__}: {str(exc)[:300]}"
        if replay is not None:
            replay.write_report(message)
        elif report is not None:
            write_atomically(report, json.dumps({"error": message}).encode("utf-8"))


def seed_session(path: str) -> None:
    """Write the recorded conversation before the replayed turn into the isolated home's Hermes session store.

    ``path`` is a JSON file ``{session_id, model, system_prompt, messages}`` written by :mod:`.hermes_run`;
    the replayed turn then resumes that session (``hermes chat --resume``), so Hermes sees the same history
    (and, as Hermes does on a resume, the system prompt stored with the session).
    """
    from hermes_state import SessionDB  # type: ignore[import-not-found,import-untyped,unused-ignore]

    seed = json.loads(Path(path).read_text(encoding="utf-8"))
    db = SessionDB()
    try:
        db.create_session(seed["session_id"], "cli", model=seed.get("model") or None,
                          system_prompt=seed.get("system_prompt") or None)
        for message in seed["messages"]:
            content = message.get("content")
            db.append_message(seed["session_id"], str(message.get("role")),
                              content=content if isinstance(content, str) or content is None else json.dumps(content),
                              tool_name=message.get("name"), tool_calls=message.get("tool_calls"),
                              tool_call_id=message.get("tool_call_id"))
    finally:
        db.close()
