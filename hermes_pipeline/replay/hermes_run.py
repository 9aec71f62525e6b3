"""Replaying a Hermes recording with Hermes itself (spec 06 BOOK-31, BOOK-31a, BOOK-33).

:func:`run_hermes_replay` rebuilds, in a temporary directory, an isolated ``HERMES_HOME`` from the
recording and the profile it came from (read only, never written): the profile's ``config.yaml`` with
the recorded model; the skills, memory and persona file (``SOUL.md``) *as the run started with them* (the
recording names each file by hash, and the texts were kept once per content when it was recorded,
:mod:`~..export.blobs`; a recording from before that gets the profile's current ones, with a warning);
``--skill`` / ``--memory`` files in place of recorded ones (:mod:`.hermes_home`); and a one-file replay plugin
(:mod:`.hermes_plugin`) that attaches the hermes_pipeline bridge with the replay's two execution
middlewares; the trajectory store of that home records the new run. It then runs ``hermes chat -Q -q
<recorded user message>`` there, with a minimal environment (no provider keys, no pipeline file, the
provider endpoint and any HTTP proxy pointing at a closed loopback port): every LLM response and tool
result is served from the recording through the bridge, so Hermes contacts no provider and runs no tool.
The new run is then compared with the recording, its subagents left out: a delegation is served its
recorded result (Hermes runs top-level delegations in the background, where their calls cannot be matched
one by one), so only the top-level run is Hermes' again.

A what-if replay (``live_from=N``) serves the first N-1 LLM calls and from the N-th on lets Hermes call the
model at ``--set base_url`` for real (with ``--set model / system_prompt / temperature``); the live steps'
tools run in the replay's temporary workspace (``tools="live"``, a path argument outside it is refused) or
are served the recorded result of the same call (``tools="recorded"``, so only the model's behaviour
changes).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from ..export.atomic import write_atomically
from ..export.jsonenc import indented
from ..readers.definitions import expand_trajectory
from .diff import diff_trajectories
from .errors import TrajectoryError
from .hermes_home import PLUGIN_NAME, isolated_home
from .hermes_plugin import DATE_VARIABLE, MODE_VARIABLE, PATHS_VARIABLE, RECORDING_VARIABLE, REPORT_VARIABLE, \
    WHATIF_VARIABLE
from .recording import Recording
from .replay import Divergence, Mode, Replay, ServedStep

__all__ = ["INSTALL_HINT", "PLUGIN_NAME", "is_hermes_recording", "isolated_home", "require_hermes",
           "run_hermes_replay"]

INSTALL_HINT: Final = "pip install 'hermes_pipeline[hermes]'  (or: pip install 'hermes-agent==0.19.0')"
TIMEOUT: Final = 600.0
"""Seconds a replayed Hermes run may take before it is stopped (a served run takes Hermes' start-up)."""
_KEPT_ENV: Final = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT")

_HERMES_SESSION_ID: Final = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{6}$")
"""How Hermes Agent names its sessions (``20261203_105402_911385``); other hosts on this package use UUIDs."""


def is_hermes_recording(recording: Recording) -> bool:
    """Whether Hermes Agent ran the recorded run: ``agent.name`` ``hermes`` (the trajectory store's name for
    every host) and the session id Hermes gave it (``extra.hermes.session_id`` in Hermes' own format)."""
    agent = recording.document.get("agent")
    if not isinstance(agent, Mapping) or str(agent.get("name") or "").lower() != "hermes":
        return False
    extra = recording.document.get("extra")
    hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
    session = hermes.get("session_id") if isinstance(hermes, Mapping) else None
    return isinstance(session, str) and _HERMES_SESSION_ID.match(session) is not None


def require_hermes() -> None:
    """Check that Hermes Agent can run here.

    Raises:
        TrajectoryError: ``hermes-agent`` is not installed (the message gives the install command).
    """
    try:
        found = importlib.util.find_spec("hermes_cli.main")  # located, not imported: the CLI stays quick
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise TrajectoryError("this replay runs Hermes Agent, which is not installed in this Python "
                              f"({sys.executable}); install it with: {INSTALL_HINT} - or replay with another agent "
                              "(--agent reference)", key="--agent") from None


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released: a connection there is refused at once)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


_RECORDED_PATHS: Final = (("user", re.compile(r"^User home directory: (.+)$", re.M)),
                          ("workspace", re.compile(r"^Current working directory: (.+)$", re.M)),
                          ("home", re.compile(r"profiles \(if any\) live under (.+?)/profiles/")))
"""Where Hermes 0.19's system prompt names the user's home, the working directory and ``HERMES_HOME``."""


def recorded_paths(recording: Recording, temp: Path, source: Path | None) -> dict[str, str]:
    """``{replay path: recorded path}`` for the directories Hermes names in its system prompt (read from the
    recorded system prompt; the recorded profile's home when the prompt does not name it)."""
    prompt = recording.system_prompt or ""
    out: dict[str, str] = {}
    for name, pattern in _RECORDED_PATHS:
        match = pattern.search(prompt)
        if match is not None:
            out[str(temp / name)] = match.group(1).strip()
        elif name == "home" and source is not None:
            out[str(temp / name)] = str(source)
    return out


def _small_trust_store(temp: Path) -> str:
    """A CA file holding the first certificate of the usual bundle (``certifi``), written under ``temp``."""
    path = temp / "ca.pem"
    try:
        import certifi

        text = Path(certifi.where()).read_text(encoding="ascii", errors="ignore")
        end = text.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")
        path.write_text(text[text.index("-----BEGIN CERTIFICATE-----"):end] + "\n", encoding="ascii")
    except (ImportError, OSError, ValueError):
        return os.environ.get("SSL_CERT_FILE", "")
    return str(path)


def _environment(temp: Path, home: Path, recording: Recording, mode: Mode, port: int,
                 source: Path | None, whatif: Mapping[str, Any] | None = None) -> dict[str, str]:
    env = {key: os.environ[key] for key in _KEPT_ENV if key in os.environ}
    package_root = str(Path(__file__).resolve().parents[2])  # this hermes_pipeline, not another one
    proxy = f"http://127.0.0.1:{port}"
    start = next((str(s.get("timestamp")) for s in recording.document.get("steps") or []
                  if isinstance(s, Mapping) and s.get("timestamp")), "")
    env.update(HOME=str(temp / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
               PYTHONPATH=os.pathsep.join([package_root, *filter(None, [os.environ.get("PYTHONPATH")])]),
               HTTP_PROXY=proxy, HTTPS_PROXY=proxy, ALL_PROXY=proxy, http_proxy=proxy, https_proxy=proxy,
               NO_PROXY="", no_proxy="",
               **{RECORDING_VARIABLE: str(temp / "recording.json"), REPORT_VARIABLE: str(temp / "report.json"),
                  MODE_VARIABLE: mode, DATE_VARIABLE: start,
                  PATHS_VARIABLE: json.dumps(recorded_paths(recording, temp, source))})
    if not whatif:
        # an offline run opens no TLS connection (every call is served, every proxy is a closed port), yet
        # Hermes' start-up builds some thirty HTTP clients, each loading the whole CA bundle (about a second
        # of CPU): a one-certificate trust store leaves that work out of every replay of a batch
        env["SSL_CERT_FILE"] = _small_trust_store(temp)
    if whatif:
        env[WHATIF_VARIABLE] = json.dumps(dict(whatif))
        live_host = urlsplit(str(whatif.get("base_url") or "")).hostname
        if live_host:  # the live model alone is reached directly; everything else still meets the closed port
            env["NO_PROXY"] = env["no_proxy"] = live_host
    return env


def _resume(temp: Path, recording: Recording, env: dict[str, str], timeout: float) -> list[str]:
    """``["--resume", ID]`` after writing the recorded conversation before the turn into the isolated home's
    session store (``[]`` for a first turn)."""
    history = recording.history
    if not history:
        return []
    found = recording.document.get("extra", {}).get("hermes", {}).get("session_id")
    session_id = str(found) if isinstance(found, str) and found else f"replay_{recording.trajectory_id[:8]}"
    seed = temp / "session.json"
    seed.write_text(json.dumps({"session_id": session_id, "model": recording.model,
                                "system_prompt": recording.system_prompt, "messages": history}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "import sys; from hermes_pipeline.replay.hermes_plugin import "
                           "seed_session; seed_session(sys.argv[1])", str(seed)], cwd=temp / "workspace", env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        tail = " / ".join(done.stderr.strip().splitlines()[-2:])
        raise TrajectoryError(f"the conversation before the turn could not be given to Hermes: {tail}",
                              path=recording.path)
    return ["--resume", session_id]


def _new_run(directory: Path, recording: Recording) -> dict[str, Any] | None:
    """The new run's trajectory among the files the isolated store wrote (the one with the recorded question)."""
    documents = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            # its definitions back from the isolated store's sidecar, which goes with the temporary home
            documents.append(expand_trajectory(doc, path) if isinstance(doc, dict) else doc)
        except (OSError, ValueError):
            continue
    for doc in documents:
        users = [s.get("message") for s in doc.get("steps") or []
                 if isinstance(s, Mapping) and s.get("source") == "user"]
        if users and users[0] == recording.user_message:
            return dict(doc)
    return dict(documents[-1]) if documents else None


def _replay_of(recording: Recording, mode: Mode, report: Mapping[str, Any]) -> Replay:
    """A :class:`~.replay.Replay` holding what the Hermes process served (for the report and exit code)."""
    replay = Replay(recording, mode=mode, subagents="served")
    for step in report.get("steps") or []:
        if isinstance(step, Mapping):
            replay.steps.append(ServedStep(str(step.get("kind") or ""), int(step.get("step") or 0),
                                           str(step.get("source") or ""), step.get("tool_call_id"),
                                           step.get("request_sha256")))
    for item in report.get("divergences") or []:
        if isinstance(item, Mapping):
            replay.divergences.append(Divergence(int(item.get("step") or 0), str(item.get("reason") or "")))
    return replay


def _turn_error(doc: Mapping[str, Any]) -> str:
    """``": the turn failed: TYPE: MESSAGE"`` from the new run's own record of its failed turn (a live model's
    provider error, say: the model name the endpoint does not know), ``""`` when it has none."""
    for step in doc.get("steps") or []:
        extra = step.get("extra") if isinstance(step, Mapping) else None
        hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
        if isinstance(hermes, Mapping) and hermes.get("turn_status") == "error":
            kind, message = hermes.get("error_type"), str(hermes.get("error_message") or "")
            text = f"{kind}: {message}" if kind else message
            return f": the turn failed: {text[:400]}" if text else ""
    return ""


def _top_level(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in doc.items() if key != "subagent_trajectories"}


HERMES_SETTINGS: Final = ("model", "base_url", "api_key", "system_prompt", "temperature")
"""The ``--set`` keys a Hermes replay applies (the model and its endpoint through the replay profile's
``config.yaml``; the system prompt and temperature on each live request)."""
TOOL_MODES: Final = ("live", "recorded")


def run_hermes_replay(recording: Recording, *, mode: Mode = "strict", output: Path | None = None,
                      store: Path | None = None, home: Path | None = None, timeout: float = TIMEOUT,
                      live_from: int | None = None, overrides: Mapping[str, Any] | None = None,
                      tools: str = "live", files: Mapping[str, Path] | None = None) -> Any:
    """Replay ``recording`` with Hermes' own loop (see the module docstring); a :class:`~.runner.ReplayResult`.

    Args:
        home: the profile the run was recorded in (its config and the skill and memory texts kept when the run
            was recorded are read, never changed).
        live_from: from this LLM call on, the model at ``overrides["base_url"]`` is called for real.
        overrides: ``--set`` values (keys of :data:`HERMES_SETTINGS`).
        tools: in live steps, ``live`` runs the tools in the replay's workspace, ``recorded`` serves the
            recorded result of the same call.
        files: files put in place of the recorded ones in the replay profile (``--skill`` / ``--memory``),
            by path relative to the profile.

    Raises:
        TrajectoryError: Hermes is not installed, the recording cannot be served, a setting is not one a Hermes
            replay has, or the profile cannot be read.
    """
    from .runner import ReplayResult, check_recording, truncation_warnings

    require_hermes()
    settings = dict(overrides or {})
    unknown = sorted(set(settings) - set(HERMES_SETTINGS))
    if unknown:
        raise TrajectoryError(f"--set {unknown[0]}: not a setting of a Hermes replay (known: "
                              f"{', '.join(HERMES_SETTINGS)})", key=unknown[0])
    if tools not in TOOL_MODES:
        raise TrajectoryError(f"--tools {tools!r}: use 'live' or 'recorded'", key="--tools")
    if live_from is not None and not settings.get("base_url"):
        raise TrajectoryError("--live-from calls the model for real: give its endpoint with --set base_url=URL",
                              key="--live-from")
    check_recording(recording, live_from)
    port = _closed_port()
    temp = Path(tempfile.mkdtemp(prefix="hermes-replay-"))
    try:
        hermes_home = temp / "home"
        source = home if home is not None and home.is_dir() else None
        for name in ("workspace", "user"):
            (temp / name).mkdir()
        warnings = isolated_home(hermes_home, recording, source, port, settings if live_from is not None else {},
                                 files)
        (temp / "recording.json").write_text(json.dumps(recording.document), encoding="utf-8")
        whatif = {"live_from": live_from, "tools": tools, "base_url": settings.get("base_url"),
                  "workspace": str(temp / "workspace"),
                  "overrides": {k: settings[k] for k in ("temperature", "system_prompt") if k in settings}} \
            if live_from is not None else None
        env = _environment(temp, hermes_home, recording, mode, port, source, whatif)
        command = [sys.executable, "-c", "import sys; from hermes_cli.main import main; sys.exit(main())",
                   "chat", "-Q", *_resume(temp, recording, env, timeout), "-q", recording.user_message]
        try:
            done = subprocess.run(command, cwd=temp / "workspace", env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TrajectoryError(f"Hermes did not finish the replayed run within {timeout:.0f} s",
                                  path=recording.path) from None
        try:
            report = json.loads((temp / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            report = {"error": "the replay plugin did not load in Hermes (no report)"}
        document = _new_run(hermes_home / "trajectories", recording)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    replay = _replay_of(recording, mode, report)
    error = report.get("error")
    if document is None:
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        raise TrajectoryError(f"Hermes did not run a turn (exit {done.returncode}): "
                              f"{error or ' / '.join(tail) or 'no output'}", path=recording.path)
    if done.returncode != 0 and not error and not replay.divergences:
        error = f"hermes exited with {done.returncode}" + _turn_error(document)
    document.setdefault("extra", {}).setdefault("hermes", {})["replay"] = {
        "of": recording.trajectory_id, "live_from_step": live_from, "mode": mode, "agent": "hermes",
        "tools": tools if live_from is not None else "recorded", "settings": sorted(settings),
        "files": sorted(files or {}),
        "subagents": "served", "diverged_at_step": replay.diverged_at_step}
    target = output if output is not None else (store / f"replay-{document.get('session_id', 'run')}.json"
                                                if store is not None else None)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomically(target, indented(document))
    answer = document.get("extra", {}).get("hermes", {}).get("final_output")
    return ReplayResult(recording, replay, document, target,
                        diff_trajectories(_top_level(recording.document), _top_level(document)),
                        answer if isinstance(answer, str) else None, error,
                        [*truncation_warnings(recording), *warnings,
                         *(str(w) for w in report.get("warnings") or [] if isinstance(w, str))])
