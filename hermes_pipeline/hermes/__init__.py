"""The Hermes Agent bridge: a Hermes plugin that runs Hermes' hooks and middleware through hermes_pipeline.

Published in Hermes' ``hermes_agent.plugins`` entry-point group as ``hermes_pipeline``; Hermes
loads it when ``hermes_pipeline`` is listed under ``plugins.enabled`` in the profile's
``config.yaml`` (``hermes-pipeline hermes install`` does that) and calls :func:`register`.

:func:`register` opens the hermes_pipeline profile of the same ``HERMES_HOME`` (so the pipeline file
named by ``HERMES_NEMO_RELAY_PLUGINS_TOML`` and the profile's own settings apply), and attaches a
:class:`~.bridge.Bridge`. It registers nothing when nothing in hermes_pipeline would listen (no
pipeline file, no first-party consumer), so Hermes then behaves exactly as without it; and it
refuses to export when Hermes' bundled NeMo Relay plugin is enabled in the same profile and reads
the same pipeline file (two producers would interleave in the same destinations).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .facts import BRIDGE_PLUGIN, PIPELINE_VARIABLE, RELAY_PLUGIN, RegistryToolsets, hermes_version, read_profile

if TYPE_CHECKING:
    from ..engine.core import Engine
    from .bridge import Bridge
    from .facts import HermesProfile

__all__ = ["active_bridge", "register", "relay_conflict_message"]

logger: Final = logging.getLogger("hermes_pipeline.hermes")
_lock = threading.Lock()
_active: Bridge | None = None


def relay_conflict_message(config_path: Path, pipeline_file: str) -> str:
    """The error logged when the bridge refuses to export beside Hermes' NeMo Relay plugin."""
    return (f"hermes_pipeline: Hermes' bundled NeMo Relay plugin ({RELAY_PLUGIN}) and the hermes_pipeline bridge "
            f"({BRIDGE_PLUGIN}) are both enabled in {config_path} and both read the pipeline file "
            f"{PIPELINE_VARIABLE}={pipeline_file}; two producers would write the same destinations, so the "
            f"hermes_pipeline bridge exports nothing and registers no hooks or middleware in this process. "
            f"Fix: keep one of them - `hermes plugins disable {RELAY_PLUGIN}`, or remove {BRIDGE_PLUGIN} from "
            f"plugins.enabled - then restart Hermes. `hermes-pipeline hermes doctor` shows the wiring.")


def _home() -> Path:
    try:
        from hermes_constants import get_hermes_home  # type: ignore[import-not-found,import-untyped,unused-ignore]

        return Path(get_hermes_home())
    except Exception:
        from .facts import hermes_home

        return hermes_home()


def active_bridge() -> Bridge | None:
    """The bridge attached in this process, if any."""
    return _active


def _shutdown(bridge: Bridge) -> None:
    bridge.close("shutdown")


PAYLOAD_LIMIT_VARIABLE = "HERMES_PLUGIN_PAYLOAD_MAX_CHARS"
"""Hermes' bound of one hook payload's JSON, in characters (``run_agent._hook_payload_max_chars``)."""
PAYLOAD_LIMIT = 16_000_000
"""What the bridge asks for: whole requests (each string value is still bounded by ``max_value_chars``)."""


def register(ctx: Any, prepare: Callable[[Engine], object] | None = None) -> None:
    """Hermes' plugin entry point: attach the bridge (fail-open: a failure leaves Hermes unchanged).

    ``prepare`` (not passed by Hermes) is given the profile's engine before the bridge decides what to
    register with Hermes: a caller that runs Hermes for its own purpose (the replay's plugin) installs
    its middleware there, so that the bridge forwards Hermes' execution middleware to it.

    The profile is opened here, synchronously, so that every hook and middleware Hermes fires
    afterwards reaches the engine. (Opening it on a background thread was measured: with the
    interpreter lock shared, it cost Hermes as much wall time as opening it here.)
    """
    global _active
    try:
        with _lock:
            if _active is not None:  # Hermes rediscovering plugins: the first bridge stays
                _active.attach(ctx)
                return
            home = _home()
            facts = read_profile(home)
            if facts.error:  # a FIFO, a device, too large, too deep, not YAML: said at once, never waited for
                logger.warning("hermes_pipeline: the Hermes bridge cannot read %s (%s); it reads it as empty",
                               facts.config_path, facts.error)
            pipeline_file = os.environ.get(PIPELINE_VARIABLE, "").strip()
            if pipeline_file and facts.relay_enabled:
                logger.error(relay_conflict_message(facts.config_path, pipeline_file))
                return
            if not pipeline_file and not facts.profile_consumers():
                return  # nothing in hermes_pipeline would listen: Hermes runs exactly as without the bridge
            bridge = _open(home, facts, prepare)
            if bridge is not None and bridge.attach(ctx):
                _active = bridge
                # Hermes cuts a hook payload over 50,000 characters to a text preview: past a few turns
                # every request (its ~45 KB of tool schemas included) would reach the bridge as an
                # unreplayable string that no definition can shorten. The bridge bounds every value
                # itself (max_value_chars), so it asks for whole payloads unless the user set the limit.
                os.environ.setdefault(PAYLOAD_LIMIT_VARIABLE, str(PAYLOAD_LIMIT))
    except Exception as exc:
        logger.warning("hermes_pipeline: the Hermes bridge could not start (%s: %s); Hermes runs without it",
                       type(exc).__name__, str(exc)[:200])


def _open(home: Path, facts: HermesProfile, prepare: Callable[[Engine], object] | None = None) -> Bridge | None:
    """Open the hermes_pipeline profile of ``home`` and build the bridge; ``None`` when nothing would listen."""
    from ..profile import open_profile
    from .bridge import Bridge
    from .context import TurnContext
    from .normalise import HermesNormaliser

    profile = open_profile(home)
    registry = RegistryToolsets()
    normaliser = HermesNormaliser(approval_timeout=facts.approval_timeout, agent_version=hermes_version(),
                                  toolset_of=registry.get, definition_of=registry.definition,
                                  generation=registry.generation)
    if prepare is not None:
        prepare(profile.engine)
    bridge = Bridge(profile.engine, normaliser, snapshot=TurnContext(home))
    if not bridge.hooks_to_register():
        return None  # the pipeline registered nothing (e.g. it failed): forward nothing
    atexit.register(_shutdown, bridge)
    bridge.on_exit = _release_all  # one-shot mode skips atexit (see .bridge)
    _record_write_approvals(profile)
    _watch_tool_skill_writes(profile, normaliser)
    return bridge


def _watch_tool_skill_writes(profile: Any, normaliser: Any) -> None:
    """With the observability store on: skills the agent changes with ``write_file``, ``patch``, ``terminal`` or
    ``execute_code`` are its own changes, read around the call by the store's skill probe (BOOK-19)."""
    probe = getattr(getattr(profile, "consumers", {}).get("observability_store"), "probe", None)
    if probe is not None and callable(getattr(probe, "file_tool_changes", None)):
        normaliser.tool_skill_writes = probe.file_tool_changes


def _record_write_approvals(profile: Any) -> None:
    """Inside Hermes, with the observability store on: record ``/skills`` and ``/memory`` approve / deny of staged
    writes (:mod:`.write_approvals`)."""
    import sys

    staged = getattr(getattr(profile, "consumers", {}).get("observability_store"), "staged", None)
    if staged is None or "hermes_cli" not in sys.modules:
        return
    try:
        from .write_approvals import install

        install(staged)
    except Exception as exc:
        logger.warning("hermes_pipeline: approved and denied staged writes are not recorded (%s: %s)",
                       type(exc).__name__, str(exc)[:200])


def _release_all() -> None:
    from ..profile import release_all

    release_all()
