"""``hermes-pipeline trajectory``: the profile's trajectory store (spec 06 BOOK-32, BOOK-36, BOOK-37).

    hermes-pipeline trajectory list [--since DATE|Nd] [--json]
    hermes-pipeline trajectory show <id | path> [--content] [--json]
    hermes-pipeline trajectory diff A B [--diff text|json]
    hermes-pipeline trajectory redact <id | path> [-o OUT] [--mode mask|summary] [--pattern REGEX ...] [--in-place]
    hermes-pipeline trajectory prune [--older-than 90d] [--dry-run] [--json]

Every sub-command takes ``--home DIR`` (default ``$HERMES_HOME``). Exit codes: 0 done (``diff``:
identical), 1 ``diff``: diverged, 2 bad input or usage (nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Final

from .terms import TERMS

PROG: Final = "hermes-pipeline trajectory"


MALFORMED: Final = (TypeError, KeyError, AttributeError, IndexError, ValueError, RecursionError)
"""What reading a document of a shape the load checks let through can raise: reported in one line."""


def _fail(command: str, exc: Exception | str) -> int:
    print(f"{PROG} {command}: error: {exc}", file=sys.stderr)
    return 2


def _malformed(path: Path, exc: Exception) -> str:
    return f"{path}: malformed trajectory ({type(exc).__name__}); 'trace show' or a JSON viewer shows what is there"


def _store(args: argparse.Namespace) -> tuple[Path, Path]:
    from .trajectory_files import profile_home, store_directory

    home = profile_home(args.home)
    return home, store_directory(home)


def _since(text: str) -> date:
    from ..sinks.trajectory_store import parse_age

    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    try:
        return datetime.now(timezone.utc).date() - timedelta(days=parse_age(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date (2026-11-01) or an age (7d, 2w), not {text!r}") from None


def _summary_row(path: Path) -> dict[str, Any]:
    from ..replay.diff import final_answer
    from ..replay.recording import load_trajectory
    from ..sinks.trajectory_store import STORE_NAME, trajectory_date

    match = STORE_NAME.fullmatch(path.name)
    row: dict[str, Any] = {"id": match.group("id") if match else path.stem, "date": trajectory_date(path).isoformat(),
                           "path": str(path)}
    try:
        doc = load_trajectory(path)
    except Exception as exc:
        row["error"] = str(exc)
        return row
    hermes = doc.get("extra", {}).get("hermes", {})
    row.update({"steps": len(doc.get("steps", [])), "model": doc.get("agent", {}).get("model_name"),
                "partial": "notes" in doc, "final_answer": final_answer(doc),
                "replay_of": (hermes.get("replay") or {}).get("of"),
                "redaction": (hermes.get("redaction") or {}).get("mode")})
    return row


def _list(args: argparse.Namespace) -> int:
    from ..sinks.trajectory_store import store_files, trajectory_date

    _, store = _store(args)
    files = [p for p in store_files(store) if args.since is None or trajectory_date(p) >= args.since]
    rows = [_summary_row(p) for p in files]
    if args.json:
        print(json.dumps({"store": str(store), "trajectories": rows}, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no trajectories in {store}")
        return 0
    for row in rows:
        answer = (row.get("final_answer") or "").replace("\n", " ")
        flags = "".join(f" [{f}]" for f in ("partial" if row.get("partial") else "",
                                             f"replay of {row['replay_of'][:8]}" if row.get("replay_of") else "",
                                             row.get("redaction") or "") if f)
        print(f"{row['date']}  {row['id']}  {row.get('steps', '?'):>3} steps  {row.get('model') or '-'}  "
              f"{json.dumps(answer[:60], ensure_ascii=False)}{flags}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from ..readers.trace import TraceFileError, load_trace, render_trace, trace_data
    from ..replay.errors import TrajectoryError
    from ..replay.recording import load_trajectory
    from .trajectory_files import resolve_trajectory

    _, store = _store(args)
    try:
        path = resolve_trajectory(args.trajectory, store)
        doc = load_trajectory(path, definitions_from=[store])
        trace = load_trace(path)
    except (TrajectoryError, TraceFileError) as exc:
        return _fail("show", exc)
    try:
        if args.json:
            data: dict[str, Any] = {"path": str(path), "tree": trace_data(trace)}
            if args.content:
                data["trajectory"] = doc
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            text = render_trace(trace, color=False) + ("\n" + _content_text(doc) if args.content else "")
    except MALFORMED as exc:  # a shape the checks let through: still one line, never a traceback
        return _fail("show", _malformed(path, exc))
    sys.stdout.write(text)
    return 0


def _content_text(doc: dict[str, Any], depth: int = 0) -> str:
    pad = "  " * depth
    lines: list[str] = []
    for step in doc.get("steps", []):
        lines.append(f"{pad}[{step.get('step_id')}] {step.get('source')}: {step.get('message') or ''}")
        for call in step.get("tool_calls") or []:
            lines.append(f"{pad}    -> {call.get('function_name')}({json.dumps(call.get('arguments'), ensure_ascii=False)})"
                         f"  id={call.get('tool_call_id')}")
        for result in (step.get("observation") or {}).get("results") or []:
            if "content" in result:
                lines.append(f"{pad}    <- {result.get('source_call_id')}: {result['content']}")
    for child in doc.get("subagent_trajectories") or []:
        lines.append(f"{pad}subagent {child.get('trajectory_id')}:")
        lines.append(_content_text(child, depth + 1).rstrip("\n"))
    final = doc.get("extra", {}).get("hermes", {}).get("final_output")
    if final is not None and depth == 0:
        lines.append(f"final output: {final}")
    return "\n".join(lines) + "\n"


def _diff(args: argparse.Namespace) -> int:
    from ..replay.diff import diff_trajectories
    from ..replay.errors import TrajectoryError
    from ..replay.recording import load_trajectory
    from .trajectory_files import resolve_trajectory

    _, store = _store(args)
    try:
        old = load_trajectory(resolve_trajectory(args.a, store), definitions_from=[store])
        new = load_trajectory(resolve_trajectory(args.b, store), definitions_from=[store])
    except TrajectoryError as exc:
        return _fail("diff", exc)
    try:
        result = diff_trajectories(old, new)
    except MALFORMED as exc:
        return _fail("diff", _malformed(Path(f"{args.a} or {args.b}"), exc))
    print(json.dumps(result.to_json(), indent=2, ensure_ascii=False) if args.diff == "json" else result.to_text())
    return 0 if result.identical else 1


def _redact(args: argparse.Namespace) -> int:
    from ..export.atomic import write_atomically
    from ..export.jsonenc import indented
    from ..replay.errors import TrajectoryError
    from ..replay.recording import load_trajectory
    from ..replay.redact import redact_document
    from .trajectory_files import resolve_trajectory

    _, store = _store(args)
    try:
        if args.in_place and args.output:
            raise TrajectoryError("give either -o OUT or --in-place, not both")
        path = resolve_trajectory(args.trajectory, store)
        doc = load_trajectory(path, definitions_from=[store])
        redacted = redact_document(doc, mode=args.mode, patterns=args.pattern or ())
    except (TrajectoryError, ValueError) as exc:
        return _fail("redact", exc)
    except MALFORMED as exc:
        return _fail("redact", _malformed(path, exc))
    target = path if args.in_place else (Path(args.output).expanduser() if args.output
                                         else path.with_name(path.name.removesuffix(".json") + ".redacted.json"))
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomically(target, indented(redacted))
    info = redacted["extra"]["hermes"]["redaction"]
    print(f"wrote {target} ({info['mode']}: {info['replacements']} replacement(s))")
    return 0


def _prune(args: argparse.Namespace) -> int:
    from ..config.profile_config import load_profile_settings
    from ..sinks.trajectory_store import parse_age
    from ..sinks.trajectory_store.prune import prune_with_verdict

    home, store = _store(args)
    try:
        days = parse_age(args.older_than) if args.older_than else \
            load_profile_settings(home, log=False).trajectories.retention_days
    except ValueError as exc:
        return _fail("prune", exc)
    removed, verdict = prune_with_verdict(store, days, dry_run=args.dry_run)
    # the clock cannot be trusted: nothing deleted (docs/retention-clock.md)
    if verdict is not None and not verdict.trusted:
        print(f"{PROG} prune: retention skipped, nothing deleted: {verdict.reason}", file=sys.stderr)
    if args.json:
        print(json.dumps({"store": str(store), "older_than_days": days, "dry_run": args.dry_run,
                          "files": [str(p) for p in removed],
                          "clock": verdict.as_json() if verdict is not None else None}, indent=2))
    else:
        verb = "would delete" if args.dry_run else "deleted"
        for path in removed:
            print(f"{verb} {path}")
        print(f"{verb} {len(removed)} trajectory file(s) older than {days} day(s) in {store}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add the ``trajectory`` command and its sub-commands."""
    top = subparsers.add_parser("trajectory", help="browse, compare, redact and prune the trajectory store",
                                description="The profile's trajectory store ($HERMES_HOME/trajectories, on with "
                                            "observability.trajectories.enabled: true in config.yaml): one ATIF "
                                            "file per run, <YYYY-MM-DD>-<run id>.json.", epilog=TERMS)
    commands = top.add_subparsers(dest="trajectory_command", metavar="SUBCOMMAND")

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--home", metavar="DIR", help="the profile directory (default: $HERMES_HOME, else ~/.hermes)")

    p = commands.add_parser("list", epilog=TERMS, help="the store's trajectories: date, id, steps, model, final answer")
    p.add_argument("--since", type=_since, metavar="DATE|AGE", help="only runs on or after a date (2026-11-01) or "
                   "within an age (7d, 2w)")
    p.add_argument("--json", action="store_true", help="one JSON document, for scripts")
    common(p)
    p.set_defaults(func=_list)
    p = commands.add_parser("show", epilog=TERMS, help="the tree of one trajectory (as trace show), --content for every message")
    p.add_argument("trajectory", metavar="ID|PATH")
    p.add_argument("--content", action="store_true", help="also print every message, tool call and tool result in full")
    p.add_argument("--json", action="store_true", help="the tree as JSON (with --content: the document too)")
    common(p)
    p.set_defaults(func=_show)
    p = commands.add_parser("diff", epilog=TERMS, help="compare two trajectories step by step (exit 0 identical, 1 diverged)",
                            description="Step-aligned comparison: source, message text (unified diff), tool calls "
                                        "(name and canonical arguments), observations, final answer and token "
                                        "totals; the last line is 'identical' or 'diverged at step k'.")
    p.add_argument("a", metavar="A", help="the old trajectory (id or path)")
    p.add_argument("b", metavar="B", help="the new trajectory (id or path)")
    p.add_argument("--diff", choices=("text", "json"), default="text", help="output format")
    common(p)
    p.set_defaults(func=_diff)
    p = commands.add_parser("redact", epilog=TERMS, help="write a shareable copy with secrets and personal data masked",
                            description="Mask credentials (API keys and tokens, Bearer/Basic, JWTs, PEM keys, URL "
                                        "credentials), e-mail addresses, phone numbers, home-directory paths and "
                                        "every --pattern with [REDACTED:<detector>], or (--mode summary) replace "
                                        "all content with [SUMMARY chars=N sha256=...] (such a copy cannot be "
                                        "replayed). The output is valid ATIF with extra.hermes.redaction.")
    p.add_argument("trajectory", metavar="ID|PATH")
    p.add_argument("-o", "--output", metavar="OUT", help="the copy (default: <name>.redacted.json beside the original)")
    p.add_argument("--mode", choices=("mask", "summary"), default="mask", help="mask matches (default) or summarise "
                   "all content")
    p.add_argument("--pattern", action="append", metavar="REGEX", help="also mask this regular expression (repeatable)")
    p.add_argument("--in-place", action="store_true", help="replace the original instead of writing a copy")
    common(p)
    p.set_defaults(func=_redact)
    p = commands.add_parser("prune", epilog=TERMS, help="delete the store's trajectories older than the retention",
                            description="Delete store files (named <YYYY-MM-DD>-<uuid>.json, nothing else) whose run "
                                        "is older than --older-than (default: observability.trajectories."
                                        "retention_days, 90). Also done automatically at start and every 24 h.")
    p.add_argument("--older-than", metavar="AGE", help="e.g. 90d or 12w")
    p.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    p.add_argument("--json", action="store_true", help="one JSON document, for scripts")
    common(p)
    p.set_defaults(func=_prune)

    def usage(args: argparse.Namespace) -> int:
        top.print_help(sys.stderr)
        return 2

    top.set_defaults(func=usage)
