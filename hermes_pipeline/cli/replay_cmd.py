"""``hermes-pipeline replay``: run a recorded trajectory again and compare (spec 06 BOOK-31, BOOK-32).

    hermes-pipeline replay <id | path> [--live-from N] [--strict | --lenient] [--set KEY=VALUE ...]
                           [--skill NAME=PATH ...] [--memory FILE=PATH ...] [--tools live|recorded]
                           [--diff text|json] [--agent MODULE:FACTORY] [--output PATH]
    hermes-pipeline replay --batch [DIR|ID ...] [--since 7d] [--skill NAME] [--failed] [--workers N]
                           [--ab A B] [what-if options]

Exit codes: 0 identical, 1 diverged (with ``--batch``: any run diverged; with ``--ab``: any run changed outcome
between A and B), 2 bad input (nothing is written) or usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

PROG: Final = "hermes-pipeline replay"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("LLM calls are counted from 1")
    return value


def _one(args: argparse.Namespace, path: Path, store: Callable[[], Path], home: Path, output: Path | None) -> Any:
    from ..replay import Recording
    from ..replay.agents import load_agent
    from ..replay.errors import TrajectoryError
    from ..replay.hermes_run import is_hermes_recording, run_hermes_replay
    from ..replay.replay import Mode
    from ..replay.runner import parse_overrides, run_replay

    overrides = parse_overrides(args.set)
    agent = None if args.agent == "hermes" else load_agent(args.agent)
    try:
        recording = Recording.from_file(path, definitions_from=lambda: [store()])  # a store file copied elsewhere
    except (TypeError, KeyError, AttributeError, IndexError, ValueError, RecursionError) as exc:
        # a shape the load checks let through: still one line naming the file, never a traceback
        raise TrajectoryError(f"malformed trajectory ({type(exc).__name__})", path=str(path)) from None
    if args.agent == "hermes" or (args.agent is None and is_hermes_recording(recording)):
        # a run recorded from Hermes is replayed by Hermes' own loop (its skills, prompt and tools)
        from ..replay.whatif import replacement_files

        if overrides and args.live_from is None:
            raise TrajectoryError("--set changes the live steps of a Hermes replay: give --live-from N too "
                                  "(--skill / --memory change an offline replay)", key="--set")
        files = replacement_files(recording, args.skill or (), args.memory or ())
        # a what-if serves the steps before N even when their requests differ (the change shows from N on)
        mode: Mode = args.mode or ("lenient" if args.live_from is not None else "strict")
        try:
            return run_hermes_replay(recording, mode=mode, output=output,
                                     store=store() if output is None else None, home=home,
                                     live_from=args.live_from, overrides=overrides, tools=args.tools,
                                     files=files)
        except (TypeError, KeyError, AttributeError, IndexError, ValueError, RecursionError) as exc:
            raise TrajectoryError(f"the replay failed on this recording ({type(exc).__name__}: {exc})",
                                  path=str(path)) from None
    if args.skill or args.memory or args.tools != "live":
        raise TrajectoryError("--skill, --memory and --tools apply when Hermes replays the run (--agent hermes)",
                              key="--agent")
    try:
        return run_replay(recording, mode=args.mode or "strict", live_from=args.live_from, overrides=overrides,
                          agent=agent,
                          output=output, store=store() if output is None else None, home=home)
    except (TypeError, KeyError, AttributeError, IndexError, ValueError, RecursionError) as exc:
        # a recorded payload of a shape the load checks let through: one line naming the file
        raise TrajectoryError(f"the replay failed on this recording ({type(exc).__name__}: {exc})",
                              path=str(path)) from None


def _report(result: Any, fmt: str) -> None:
    for warning in result.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    for divergence in result.replay.divergences:
        print(f"{PROG}: divergence at agent step {divergence.step} (LLM call {divergence.step}): "
              f"{divergence.reason}", file=sys.stderr)
    if result.error:
        print(f"{PROG}: the agent stopped: {result.error}", file=sys.stderr)
    if result.path is not None:
        print(f"{PROG}: wrote {result.path}", file=sys.stderr)
    diverged = result.replay.diverged_at_step
    if fmt == "json":
        data = result.diff.to_json()
        data["replay"] = result.document.get("extra", {}).get("hermes", {}).get("replay")
        data["written"] = str(result.path) if result.path is not None else None
        data["error"] = result.error  # the agent's failure (a live provider error, say), as on stderr
        if diverged is not None and data["identical"]:
            data["verdict"] = f"diverged at agent step {diverged}"
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    text = result.diff.to_text()
    if diverged is not None and result.diff.identical:  # lenient: served anyway, but the requests differed
        text = text.rsplit("\n", 1)[0] + "\n" if "\n" in text else ""
        text += f"diverged at agent step {diverged} (requests differ; recorded responses served)"
    print(text)


def _exit_code(result: Any) -> int:
    return 0 if result.diff.identical and result.replay.diverged_at_step is None and not result.error else 1


def _replay(args: argparse.Namespace) -> int:
    from ..replay.errors import TrajectoryError
    from .trajectory_files import LazyStore, profile_home, resolve_trajectory

    home = profile_home(args.home)
    store = LazyStore(home)  # read from config.yaml only when an id or the default output needs it
    try:
        if args.batch is not None or args.ab or args.since or args.failed:
            return _batch(args, store, home)
        if len(args.trajectory) != 1:
            print(f"{PROG}: error: give one trajectory id or path (or --batch to replay a selection)",
                  file=sys.stderr)
            return 2
        path = resolve_trajectory(args.trajectory[0], store)
        result = _one(args, path, store, home, Path(args.output).expanduser() if args.output else None)
    except TrajectoryError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        if args.diff == "json":  # a script reading stdout still gets one JSON document, naming the error
            print(json.dumps({"error": str(exc), "path": exc.path, "step": exc.step, "key": exc.key,
                              "exit_code": 2}, indent=2, ensure_ascii=False))
        return 2
    _report(result, args.diff)
    return _exit_code(result)


def _batch(args: argparse.Namespace, store: Callable[[], Path], home: Path) -> int:
    """``--batch`` / ``--ab``: select, check every file, then replay them on the pool (:mod:`.replay_batch`)."""
    from ..replay.errors import TrajectoryError
    from ..replay.selection import Selection, parse_since, select, trajectory_files
    from .replay_batch import check_selection, run_ab, run_batch
    from .trajectory_files import resolve_trajectory

    items = [*([args.batch] if args.batch else []), *args.trajectory]
    selectors = [s for s in args.skill or [] if "=" not in s]  # --skill NAME selects; NAME=PATH replaces
    if len(selectors) > 1:
        raise TrajectoryError("--batch selects by one --skill NAME at a time", key="--skill")
    args.skill = [s for s in args.skill or [] if "=" in s]
    found: list[Path] = []
    for item in items or [None]:
        directory = Path(item).expanduser() if item is not None else store()
        if item is None or directory.is_dir():
            found.extend(trajectory_files(directory))
        else:
            found.append(resolve_trajectory(item, store))
    files = select(list(dict.fromkeys(found)), Selection(since=parse_since(args.since) if args.since else None,
                                                        skill=selectors[0] if selectors else None,
                                                        failed=bool(args.failed)),
                   definitions_from=lambda: [store()])
    check_selection(files)
    if args.output is None:
        store()  # read the store's place once, before the workers share it

    def one(options: argparse.Namespace, path: Path, output: Path | None) -> Any:
        return _one(options, path, store, home, output)

    if args.ab:
        return run_ab(args, files, one, (args.ab[0], args.ab[1]))
    return run_batch(args, files, one)


def add_parser(subparsers: Any) -> None:
    """Add the ``replay`` command."""
    from ..replay.agents import SETTINGS
    from .replay_batch import AB_HELP

    keys = "; ".join(f"{k}: {v}" for k, v in SETTINGS.items())
    replay = subparsers.add_parser(
        "replay", help="run a recorded trajectory again (offline from the recording) and diff the behaviour",
        description="Replay a trajectory of the store (by id) or a file: the agent (Hermes for a run recorded "
                    "from Hermes, else the reference agent, or --agent) runs the recorded turn in an isolated "
                    "temporary profile; every LLM call and tool "
                    "result is served from the recording (no network, no tool side effect) unless --live-from "
                    "says otherwise. The new run is written as a new trajectory with extra.hermes.replay, then "
                    "compared step by step with the recording.",
        epilog=f"--set keys: {keys}. The last line is the verdict: 'identical', or 'diverged at step k' (k counts "
               "the steps of the step-aligned diff, user steps included), or with --lenient 'diverged at agent "
               "step k' (k counts LLM calls, as --live-from does) when only the requests differed. Exit codes: 0 "
               "identical, 1 diverged, 2 bad input (nothing written). LLM = the language model the agent calls.")
    replay.add_argument("trajectory", nargs="*", metavar="ID|PATH", help="a trajectory id (or a unique prefix) "
                        "of the profile's store, or a trajectory file (with --batch: any number, or directories)")
    replay.add_argument("--live-from", type=_positive, metavar="N",
                        help="call the real provider and tools from the N-th LLM call on (needs --set base_url=...)")
    mode = replay.add_mutually_exclusive_group()
    mode.add_argument("--strict", dest="mode", action="store_const", const="strict",
                      help="stop at the first request that differs from the recording (default, but for a Hermes "
                           "what-if with --live-from, which serves the steps before N whatever their requests)")
    mode.add_argument("--lenient", dest="mode", action="store_const", const="lenient",
                      help="serve the recorded response anyway and record the divergence")
    replay.set_defaults(mode=None)
    replay.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a recorded setting "
                        "(repeatable): " + ", ".join(SETTINGS) + "; a Hermes replay takes model, base_url, api_key, "
                        "system_prompt, temperature (with --live-from)")
    replay.add_argument("--skill", action="append", metavar="NAME=PATH", help="Hermes replay: put PATH (a "
                        "SKILL.md, or a skill directory) in place of the recorded skill NAME (repeatable); with "
                        "--batch, --skill NAME alone selects the runs that used that skill")
    replay.add_argument("--memory", action="append", metavar="FILE=PATH", help="Hermes replay: put the file PATH in "
                        "place of the recorded memory file FILE (MEMORY.md, USER.md; repeatable)")
    replay.add_argument("--tools", choices=("live", "recorded"), default="live", help="Hermes replay, live steps "
                        "(--live-from): run the tools in the replay's temporary workspace (live, default), or serve "
                        "the recorded result of the same call so that only the model's behaviour changes")
    replay.add_argument("--diff", choices=("text", "json"), default="text", help="diff output format")
    replay.add_argument("--json", dest="diff", action="store_const", const="json", help="the same as --diff json")
    batch = replay.add_argument_group("batch and A/B (regression over recorded runs)")
    batch.add_argument("--batch", nargs="?", const="", metavar="DIR|ID", help="replay a selection on a pool of "
                       "workers: the given ids, paths and directories, else every run of the profile's store, "
                       "filtered by --since / --skill NAME / --failed; one line per run (verdict, first divergence, "
                       "answer changed, token and cost deltas) and a summary. Exit 0 all identical, 1 some "
                       "diverged, 2 bad input")
    batch.add_argument("--since", metavar="AGE", help="with --batch: runs started within AGE (30m, 12h, 7d, 2w)")
    batch.add_argument("--failed", action="store_true", help="with --batch: runs whose turn ended in error or "
                       "with a failed tool call")
    batch.add_argument("--workers", type=_positive, metavar="N", help="with --batch / --ab: replays at a time "
                       "(default: the machine's cores)")
    batch.add_argument("--ab", nargs=2, metavar=("A", "B"), help=AB_HELP + ". Exit 0 no run changed outcome, "
                       "1 some did, 2 bad input")
    replay.add_argument("--agent", metavar="hermes|reference|MODULE:FACTORY", help="the agent to run: 'hermes' "
                        "(Hermes' own agent loop in an isolated copy of the profile; the default for runs recorded "
                        "from Hermes), 'reference' (the reference agent; the default for other recordings), an entry "
                        "point of hermes_pipeline.agents, or MODULE:FACTORY")
    replay.add_argument("--output", metavar="PATH", help="where to write the new trajectory (with --batch: a "
                        "directory); default: the profile's trajectory store")
    replay.add_argument("--home", metavar="DIR", help="the profile directory (default: $HERMES_HOME, else ~/.hermes)")
    replay.set_defaults(func=_replay)
