"""``python -m hermes_pipeline.demo.model_server``: the scripted model server on its own.

Serves a script file (:mod:`hermes_pipeline.demo.model_script`) on a loopback address until SIGTERM
or SIGINT, so that any OpenAI-compatible client (the Hermes Agent included) can run offline
against it. The first line on stdout is ``listening on <base_url> (port <port>, ...)``, flushed at
once; with ``--port 0`` it carries the port the system chose.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .._stop_signal import StopSignal
from .model_script import ScriptError, load_script
from .model_server import ScriptedModelServer

__all__ = ["build_parser", "main"]

_DEFAULT_MODEL = "hermes-demo-1"
_EPILOG = """\
script file (JSON, or YAML with .yaml/.yml): a list of steps, one per chat request, in order:
  - "Hello!"                          a text reply (shorthand)
  - {content: "text"}                 a text reply; optional finish_reason, prompt_tokens, completion_tokens
  - {tool_calls: [{name: read_file, arguments: {path: notes.txt}, id: call_1}]}
  - {error_status: 503, error_message: overloaded, retry_after: 0}
                                      an HTTP error (429/5xx are retried by OpenAI clients)
  or a mapping {model: NAME, steps: [...]}. After the last step every reply is "(script exhausted)".

The server answers POST /v1/chat/completions (streaming when the request has "stream": true, with
the usage chunk when stream_options.include_usage is true) and GET /v1/models. It binds loopback
addresses only and stops cleanly on SIGTERM or SIGINT (Ctrl-C).

example:
  python -m hermes_pipeline.demo.model_server --script steps.yaml --port 0
  # prints: listening on http://127.0.0.1:54321/v1 (port 54321, 3 steps, model hermes-demo-1)
  OPENAI_BASE_URL=http://127.0.0.1:54321/v1 OPENAI_API_KEY=unused your-client ...
"""


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser (its ``--help`` documents the script format)."""
    parser = argparse.ArgumentParser(
        prog="python -m hermes_pipeline.demo.model_server",
        description="A deterministic OpenAI-compatible chat-completions server replaying a script.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", required=True, type=Path, metavar="FILE",
                        help="the script file (JSON or YAML; format below)")
    parser.add_argument("--port", type=int, default=0, metavar="N",
                        help="TCP port to listen on; 0 (default) picks a free one and prints it")
    parser.add_argument("--host", default="127.0.0.1",
                        help="loopback address to bind (default 127.0.0.1; also localhost or ::1)")
    parser.add_argument("--model", default=None, metavar="NAME",
                        help=f"model name in replies (default: the script's 'model', else {_DEFAULT_MODEL})")
    parser.add_argument("--record", type=Path, default=None, metavar="FILE",
                        help="on shutdown, write every request body received to FILE as a JSON list")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGTERM/SIGINT; returns the exit status (0 clean, 2 bad arguments or script)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        steps, script_model = load_script(args.script)
    except ScriptError as exc:
        parser.error(str(exc))
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be between 0 and 65535, not {args.port}")
    model = args.model or script_model or _DEFAULT_MODEL
    try:
        server = ScriptedModelServer(steps, model=model, host=args.host, port=args.port)
    except ValueError as exc:
        parser.error(str(exc))
    except OSError as exc:
        print(f"model_server: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    with StopSignal() as stop:
        try:
            print(f"listening on {server.base_url} (port {server.port}, {len(steps)} steps, model {model})",
                  flush=True)
            stop.wait()
        finally:
            server.close()
    if args.record is not None:
        args.record.write_text(json.dumps(server.requests, indent=1) + "\n", encoding="utf-8")
    print(f"stopped after {len(server.requests)} requests", flush=True)
    return 0
