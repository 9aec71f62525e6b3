"""``hermes-pipeline hooks``: the observer hooks and middleware kinds of the contract, as text or JSON.

    hermes-pipeline hooks [--fields] [--json]

The text lists one hook a line (name, family, hang class and flags) and ends with a legend of the
abbreviations; ``--json`` prints the same catalogue as one JSON document (every field of every hook,
whatever ``--fields`` says).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Final

LEGEND: Final = (
    "legend:",
    "  family       the part of the agent loop the hook reports on (session, turn, request = one provider "
    "attempt, tool, approval, human_input, subagent; extension = hooks added by hermes_pipeline; "
    "hermes = hooks only Hermes Agent fires, forwarded by its bridge)",
    "  hang class   what happens when hang protection is on (plugins.hook_callback_timeout > 0) and a callback "
    "does not finish in time:",
    "               B = the callback is abandoned and the agent goes on (fail-open);",
    "               C = the callback is abandoned and the tool call is blocked (fail-closed)",
    "  gated        the host builds the payload only when a plugin listens (it checks has_hook first)",
    "  return used  what callbacks return changes the agent's behaviour; other hooks only observe",
    "  middleware   a middleware kind: rewrites a request or wraps an execution (not an observer hook)",
)
HANG_CLASSES: Final = {"B": "bounded, fail-open: a callback that times out is abandoned and the agent goes on",
                       "C": "bounded, fail-closed: a callback that times out is abandoned and the tool call is "
                            "blocked"}


def catalogue() -> dict[str, Any]:
    """The hook catalogue as JSON-compatible data: observer hooks, middleware kinds and the legend's terms."""
    from ..contract.hooks import MIDDLEWARE_FIELDS, OBSERVER_HOOKS
    from ..contract.versions import MIDDLEWARE_SCHEMA_VERSION, TELEMETRY_SCHEMA_VERSION

    return {
        "observer_contract": TELEMETRY_SCHEMA_VERSION,
        "middleware_contract": MIDDLEWARE_SCHEMA_VERSION,
        "hooks": [{"name": info.name, "family": info.family, "hang_class": info.hang_class, "gated": info.must_gate,
                   "return_used": info.return_used, "fields": list(info.fields)}
                  for info in OBSERVER_HOOKS.values()],
        "middleware": [{"kind": kind, "fields": list(fields)} for kind, fields in MIDDLEWARE_FIELDS.items()],
        "hang_classes": dict(HANG_CLASSES),
    }


def _hooks(args: argparse.Namespace) -> int:
    data = catalogue()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    for hook in data["hooks"]:
        flags = ", ".join(f for f, on in (("gated", hook["gated"]), ("return used", hook["return_used"])) if on)
        print(f"{hook['name']:<26} {hook['family']:<12} hang class {hook['hang_class']}"
              f"{'  (' + flags + ')' if flags else ''}")
        if args.fields:
            print("    " + ", ".join(hook["fields"]))
    for entry in data["middleware"]:
        print(f"middleware {entry['kind']:<15} middleware")
        if args.fields:
            print("    " + ", ".join(entry["fields"]))
    print()
    print("\n".join(LEGEND))
    return 0


def add_parser(subparsers: Any) -> None:
    """Add the ``hooks`` command to the ``hermes-pipeline`` sub-command parsers."""
    hooks = subparsers.add_parser(
        "hooks", help="list the observer hooks and middleware kinds of the contract",
        description="List the observer hooks (name, family, hang class, whether the payload is gated and whether "
                    "returns are used) and the middleware kinds; a legend explains each term.")
    hooks.add_argument("--fields", action="store_true", help="also list each hook's payload fields")
    hooks.add_argument("--json", action="store_true",
                       help="print the catalogue as JSON (every hook with all its fields), for scripts")
    hooks.set_defaults(func=_hooks)


__all__ = ["LEGEND", "add_parser", "catalogue"]
