"""Record the real-payload workload of ``bench_real_payloads.py`` from a real Hermes session (issue #29 item 8).

Runs the installed ``hermes`` command (``hermes chat -Q -q``, hermes-agent 0.19) in a throw-away
``HERMES_HOME`` against the project's scripted model server on 127.0.0.1 (no network), in a work
directory holding a multi-KB markdown file, a Python module, a JSON and an ini file with planted secrets (an
OpenAI-style project key, an AWS access key id, a GitHub token, a database URL with a password, an SMTP
password; one more in the user's prompt and a bearer token in a ``terminal`` command). Hermes masks some of them
in its tool results itself; the others reach the pipeline raw, as they would in a real session. The script makes Hermes call its own ``read_file`` and ``terminal`` tools, so the
tool results are what Hermes really returns (kilobytes, JSON-wrapped), and every LLM request carries
Hermes' real system prompt, message history and tool schemas.

The model server keeps every request body Hermes sent; the fixture is built from them:

- ``request``: the last request without its ``messages`` (model, ``tools`` schemas, sampling options);
- ``messages``: the last request's messages (each earlier request's messages are a prefix of them);
- ``calls``: per LLM call, how many messages it sent and the reply (a chat completion) it got; the tool
  calls of a reply with the arguments Hermes parsed and the result text it sent back to the model.

Written as ``bench/data/real_payloads.json.gz`` (gzip'd JSON, a few tens of KB). Rerun to refresh it
after a Hermes upgrade: ``python bench/record_real_payloads.py`` (``--out FILE``).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "data" / "real_payloads.json.gz"

# Planted secrets (fake, of real formats): the bench checks that none of them reaches an output.
SECRETS = {
    "openai": "sk-proj-Xq7vT2mB9kLp4RzW8nYc3HdF6jGs1AeU5oIv0tQx",
    "aws": "AKIAZ7QK3PLM9WRT4XNB",
    "github": "ghp_4fKd93LmQz7TnB2xYc8RvW1pHs6JaE0gUo5i",
    "database": "S3cr3t-Pa55w0rd-db",
    "prompt": "sk-live-51HqLmZ8xTyV3nWk9PbRc2DfG7sJe4AuY6oQi1",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWxlYXNlLWJvdCJ9.kP9qX2mZ7vL4nR8tW1yB6cD3fG5hJ0sA",
    "config": "Tr0ub4dor-and-3-horses",
}

PROMPT = (f"Review deploy_notes.md and service.py, check what is in the workspace and the settings, then tell me "
          f"what still blocks the release. (If you need the staging key it is {SECRETS['prompt']}.)")


def workspace(work: Path) -> None:
    """The files Hermes' tools read: kilobytes of ordinary text with the planted secrets among them."""
    sections = []
    for n in range(1, 13):
        sections.append(textwrap.dedent(f"""\
            ## Step {n}: {['build', 'test', 'package', 'sign', 'upload', 'migrate', 'smoke', 'canary', 'rollout',
                           'monitor', 'announce', 'retro'][n - 1]}

            - owner: team-{n % 4}; expected duration {5 * n} minutes; rollback plan in runbook section {n}.
            - Run `make stage-{n}` from the repository root and check the dashboard panel "release/{n}".
            - TODO: confirm the alert thresholds for stage {n} with the on-call engineer before the freeze.
            """))
    notes = "# Deployment notes for release 4.2\n\n" + "\n".join(sections) + textwrap.dedent(f"""\

        ## Credentials (to be moved to the vault)

        OPENAI_API_KEY={SECRETS['openai']}
        AWS_ACCESS_KEY_ID={SECRETS['aws']}
        GITHUB_TOKEN={SECRETS['github']}
        """)
    (work / "deploy_notes.md").write_text(notes, encoding="utf-8")
    functions = "\n\n".join(textwrap.dedent(f'''\
        def handler_{n}(request: dict) -> dict:
            """Handle route /v1/resource/{n}: validate, load, transform and answer."""
            payload = request.get("body") or {{}}
            if "id" not in payload:  # TODO: return a typed error instead of a dict
                return {{"status": 400, "error": "missing id"}}
            record = STORE.get(payload["id"], {{}})
            return {{"status": 200, "resource": {n}, "record": dict(record, seen=True)}}''') for n in range(1, 16))
    (work / "service.py").write_text('"""The release service."""\n\nSTORE: dict = {}\n\n\n' + functions + "\n",
                                     encoding="utf-8")
    (work / "release.json").write_text(json.dumps({
        "release": "4.2", "channels": ["stable", "beta"], "smtp": {"host": "mail.internal", "user": "release-bot",
                                                                   "password": SECRETS["config"]},
        "stages": [{"name": f"stage-{n}", "timeout_s": 60 * n, "approvers": ["a", "b"]} for n in range(1, 13)]},
        indent=2) + "\n", encoding="utf-8")
    (work / "settings.ini").write_text(textwrap.dedent(f"""\
        [database]
        url = postgres://release:{SECRETS['database']}@db.internal:5432/release
        pool_size = 10

        [service]
        workers = 4
        log_level = info
        """), encoding="utf-8")


def script(work: Path) -> list[ScriptStep]:
    return [
        ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": str(work / "deploy_notes.md")}, "call_notes"),
                               ToolCallSpec("read_file", {"path": str(work / "service.py")}, "call_service")]),
        ScriptStep(tool_calls=[ToolCallSpec("terminal", {"command": "ls -la"}, "call_ls")]),
        ScriptStep(tool_calls=[ToolCallSpec("terminal", {"command": "grep -rn TODO ."}, "call_grep"),
                               ToolCallSpec("terminal", {"command": "cat settings.ini"}, "call_settings")]),
        ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": str(work / "settings.ini")}, "call_ini"),
                               ToolCallSpec("read_file", {"path": str(work / "release.json")}, "call_release")]),
        ScriptStep(tool_calls=[ToolCallSpec("terminal", {"command": "curl -s -m 1 -H 'Authorization: Bearer "
                                                         f"{SECRETS['bearer']}' http://127.0.0.1:9/health "
                                                         "|| echo 'health endpoint unreachable'"}, "call_health")]),
        ScriptStep(content=textwrap.dedent("""\
            Three things still block release 4.2:

            1. Every stage in deploy_notes.md still has an open TODO about alert thresholds; they need the
               on-call engineer's sign-off before the freeze.
            2. service.py returns untyped error dicts from all fifteen handlers (the TODO on each one).
            3. Credentials are still in plain text: the notes hold an OpenAI key, an AWS key id and a GitHub
               token, and settings.ini holds the database password. Move them to the vault and rotate them.

            Everything else (build, packaging, the workspace layout) looks ready.""")),
    ]


def record(out: Path) -> dict[str, Any]:
    hermes = shutil.which("hermes")
    if hermes is None:
        raise SystemExit("the hermes command is not installed: pip install '.[hermes]'")
    with tempfile.TemporaryDirectory(prefix="record-real-") as tmp:
        root = Path(tmp)
        work, home, user = root / "work", root / "hermes", root / "user"
        for path in (work, home, user):
            path.mkdir()
        workspace(work)
        with ScriptedModelServer(script(work), model="hermes-demo-1") as server:
            (home / "config.yaml").write_text(textwrap.dedent(f"""\
                model:
                  provider: custom
                  default: hermes-demo-1
                  base_url: {server.base_url}
                  api_key: unused
                auxiliary:
                  title_generation:
                    enabled: false
                telemetry:
                  shared_metrics:
                    enabled: false
                """), encoding="utf-8")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
            env.update(HOME=str(user), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
            proc = subprocess.run([hermes, "chat", "-Q", "-q", PROMPT], cwd=work, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=300)
            requests = server.requests
        if proc.returncode != 0:
            raise SystemExit(f"hermes exited {proc.returncode}: {proc.stderr[-2000:]}")
        fixture = build_fixture(requests, script(work))
        text = json.dumps(fixture).replace(str(work), "/home/dev/release")  # no temporary path in the fixture
        fixture = json.loads(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(json.dumps(fixture, separators=(",", ":")).encode(), mtime=0))
    return fixture


def build_fixture(requests: list[dict[str, Any]], steps: list[ScriptStep]) -> dict[str, Any]:
    """The compact fixture (see the module docstring) from the recorded request bodies."""
    if len(requests) != len(steps):
        raise SystemExit(f"expected {len(steps)} LLM requests, Hermes sent {len(requests)}")
    last = requests[-1]
    messages = last["messages"]
    calls = []
    for index, request in enumerate(requests):
        sent = request["messages"]
        if sent != messages[:len(sent)]:
            raise SystemExit(f"request {index}: its messages are not a prefix of the last request's")
        following = messages[len(sent)] if index + 1 < len(requests) else None
        usage = {"prompt_tokens": sum(len(json.dumps(m)) for m in sent) // 4, "completion_tokens": 40 + 20 * index}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if following is not None:  # Hermes put the assistant reply it got into the next request's history
            reply = {key: following[key] for key in ("role", "content", "tool_calls") if key in following}
            results = {m["tool_call_id"]: m["content"] for m in messages[len(sent) + 1:] if m.get("role") == "tool"}
            tools = [{"id": c["id"], "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"]),
                      "result": results[c["id"]]} for c in reply.get("tool_calls") or []]
        else:
            reply, tools = {"role": "assistant", "content": steps[index].content}, []
        finish = "tool_calls" if tools else "stop"
        calls.append({"messages": len(sent), "tools": tools, "response": {
            "id": f"chatcmpl-{index + 1:04d}", "object": "chat.completion", "created": 1_700_000_000 + index,
            "model": last.get("model", "hermes-demo-1"),
            "choices": [{"index": 0, "message": reply, "logprobs": None, "finish_reason": finish}], "usage": usage}})
    user = next(m["content"] for m in messages if m.get("role") == "user")
    return {"hermes_version": importlib.metadata.version("hermes-agent"), "user_message": user,
            "request": {k: v for k, v in last.items() if k != "messages"}, "messages": messages, "calls": calls,
            "secrets": sorted(SECRETS.values())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=FIXTURE, help=f"fixture file (default {FIXTURE})")
    args = parser.parse_args(argv)
    fixture = record(args.out)
    tools = [t for call in fixture["calls"] for t in call["tools"]]
    print(f"recorded hermes-agent {fixture['hermes_version']}: {len(fixture['calls'])} LLM calls, {len(tools)} tool "
          f"calls (results {', '.join(str(len(t['result'])) for t in tools)} chars), {len(fixture['messages'])} "
          f"messages, {len(json.dumps(fixture['request'].get('tools', [])))} chars of tool schemas; "
          f"{args.out.stat().st_size:,} bytes written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
