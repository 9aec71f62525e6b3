"""The demo's plugins, written only against the seed documents' ``register(ctx)`` API.

They show each extension point: context injection (``pre_llm_call``), a request rewrite
(``llm_request``), an argument rewrite (``tool_request``), a policy block (``pre_tool_call``) and
an execution wrapper (``tool_execution``).
"""

from __future__ import annotations

import logging
import time
from typing import Any

BLOCKED_SUFFIXES = (".env", ".pem", ".key")
SLOW_TOOL_SECONDS = 1.0
logger = logging.getLogger("hermes_pipeline.demo")


def register(ctx: Any) -> None:
    """Entry point: the engine calls this once with its plugin context."""
    ctx.register_hook("pre_llm_call", add_workspace_hint)
    ctx.register_hook("pre_tool_call", block_secret_files)
    ctx.register_middleware("llm_request", tag_llm_request)
    ctx.register_middleware("tool_request", normalize_path)
    ctx.register_middleware("tool_execution", time_tool_execution)


def add_workspace_hint(**kwargs: Any) -> dict[str, str] | None:
    """Give the model a hint on the first turn only."""
    if kwargs.get("is_first_turn"):
        return {"context": "Hint: files ending in .env hold credentials and must not be read."}
    return None


def block_secret_files(**kwargs: Any) -> dict[str, str] | None:
    """Refuse reads of credential files before they run."""
    path = str((kwargs.get("args") or {}).get("path", ""))
    if kwargs.get("tool_name") == "read_file" and path.endswith(BLOCKED_SUFFIXES):
        return {"action": "block", "message": f"policy: {path} holds credentials"}
    return None


def tag_llm_request(**kwargs: Any) -> dict[str, Any]:
    """Tag every provider request with demo metadata (a complete replacement, never in place)."""
    request = dict(kwargs["request"])
    extra_body = dict(request.get("extra_body") or {})
    extra_body.setdefault("metadata", {})["hermes_middleware_demo"] = True
    request["extra_body"] = extra_body
    return {"request": request, "source": "middleware-demo", "reason": "tagged provider request"}


def normalize_path(**kwargs: Any) -> dict[str, Any] | None:
    """Strip a leading ``./`` from path arguments so policy and approval see the canonical path."""
    args = kwargs["args"]
    path = args.get("path")
    if isinstance(path, str) and path.startswith("./"):
        return {"args": {**args, "path": path[2:]}, "source": "middleware-demo", "reason": "normalized path"}
    return None


def time_tool_execution(**kwargs: Any) -> Any:
    """Wrap the real tool call; a slow call is logged, the result passes through unchanged."""
    started = time.monotonic()
    result = kwargs["next_call"](kwargs["args"])
    elapsed = time.monotonic() - started
    if elapsed > SLOW_TOOL_SECONDS:
        logger.info("tool %s took %.3fs", kwargs.get("tool_name"), elapsed)
    return result
