"""The credential scrubber's cost on realistic text, in microseconds per KB of text it has not seen (issue #25).

Texts, each a few kilobytes, generated afresh for every call (the scrubber remembers texts it found clean, so a
repeated text would cost one set lookup):

- ``read_file result``: a JSON-encoded Hermes ``read_file`` tool result (numbered lines of code and config);
- ``terminal output``: a JSON-encoded ``terminal`` result (a test run, a listing, logs);
- ``web extract``: a JSON-encoded ``web_extract`` result (an article in markdown);
- ``chat request``: an LLM request body (chat completions: tool schemas, system / user / assistant / tool
  messages);

each clean and with a few planted secrets (``API_KEY=...``, a vendor key, a password in a JSON string). Beside
them, one pluggy hook call (the yardstick of every bench here) in the same process.

``--against REF`` (default ``main``) measures that revision's scrubber too, in a subprocess importing the
package exported from git (``git archive``), rounds alternated between the two, and prints both side by side.
Run: ``python bench/bench_scrub.py`` (``--help``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import per_call_thread_ns, pluggy_reference  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("the model reads a file and writes the answer to the user while the tool returns its output as text with "
         "numbers lines paths and names of functions classes tests configs servers requests responses errors "
         "warnings tokens keys sessions passwords authors basic bearer").split()


def _words(r: random.Random, n: int) -> str:
    return " ".join(r.choice(WORDS) for _ in range(n))


def _code_line(r: random.Random, i: int) -> str:
    ident = r.choice(["result", "items", "config", "client", "tokens", "path", "session", "value"])
    return r.choice([
        f"def {ident}_{i}(self, {ident}: str, max_tokens: int = {r.choice([256, 1024])}) -> dict:",
        f"    {ident} = self.{r.choice(WORDS)}.get('{r.choice(WORDS)}', {r.randint(0, 999)})",
        f"    return {{'{ident}': {ident}, 'count': len({ident}), 'temperature': 0.{r.randint(0, 9)}}}",
        f"    logger.info(\"{_words(r, 6)} %s\", {ident})",
        f"{ident.upper()}_TIMEOUT={r.randint(1, 600)}",
        f"# {_words(r, 9)}",
        f"    for i, {ident} in enumerate(sorted({ident}s, key=lambda x: x.{r.choice(WORDS)})):",
        f"        url = \"https://api.example.com/v{r.randint(1, 3)}/{r.choice(WORDS)}?page={r.randint(1, 9)}\"",
        "",
    ])


def read_file_result(r: random.Random, secrets: bool) -> str:
    lines = [_code_line(r, i) for i in range(110)]
    if secrets:
        lines[r.randrange(10, 40)] = f"API_KEY={_key(r)}"
        lines[r.randrange(50, 90)] = f"    client = Client(token=\"ghp_{_key(r, 36)}\")"
    content = "\n".join(f"{i + 1:>6}|{line}" for i, line in enumerate(lines))
    return json.dumps({"content": content, "total_lines": len(lines), "file_size": len(content),
                       "truncated": False, "is_binary": False, "is_image": False})


def terminal_output(r: random.Random, secrets: bool) -> str:
    lines = []
    for i in range(60):
        lines.append(r.choice([
            f"tests/test_{r.choice(WORDS)}.py::test_{r.choice(WORDS)}_{i} PASSED{' ' * r.randint(1, 20)}[{i}%]",
            f"-rw-r--r-- 1 user user {r.randint(100, 99999):>6} Dec  3 10:{r.randint(10, 59)} {r.choice(WORDS)}.py",
            f"2026-12-03T10:{r.randint(10, 59)}:{r.randint(10, 59)}Z INFO {_words(r, 8)}",
            f"commit {r.randbytes(20).hex()}",
            f"  {_words(r, 10)}",
        ]))
    if secrets:
        lines.insert(r.randrange(len(lines)), f"export DB_PASSWORD={_key(r, 16)}")
        lines.insert(r.randrange(len(lines)), f"postgres://app:{_key(r, 18)}@db.internal:5432/main")
    return json.dumps({"output": "\n".join(lines), "exit_code": 0, "error": None})


def web_extract(r: random.Random, secrets: bool) -> str:
    paragraphs = [f"## {_words(r, 4).title()}\n\n" + ". ".join(_words(r, r.randint(8, 20)).capitalize()
                                                                 for _ in range(r.randint(3, 6))) + "."
                  for _ in range(14)]
    if secrets:
        paragraphs.insert(r.randrange(len(paragraphs)), f"```\ncurl -H 'Authorization: Bearer {_key(r, 40)}' ...\n```")
    return json.dumps({"results": [{"url": f"https://docs.example.org/{r.choice(WORDS)}/{r.randint(1, 999)}",
                                    "title": _words(r, 5), "content": "\n\n".join(paragraphs)}]})


def chat_request(r: random.Random, secrets: bool) -> str:
    tools = [{"type": "function", "function": {
        "name": name, "description": _words(r, 25),
        "parameters": {"type": "object", "properties": {
            p: {"type": r.choice(["string", "integer", "boolean"]), "description": _words(r, 10)}
            for p in r.sample(["path", "offset", "limit", "command", "timeout", "query", "url", "pattern"], 4)},
            "required": ["path"]}}} for name in ("read_file", "write_file", "terminal", "search_files", "web_search",
                                                 "web_extract", "patch")]
    messages = [{"role": "system", "content": _words(r, 120)}, {"role": "user", "content": _words(r, 30)}]
    for i in range(3):
        messages.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{r.randbytes(6).hex()}", "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"/src/{r.choice(WORDS)}.py"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": _words(r, 60)})
    if secrets:
        messages.append({"role": "user", "content": f"use this key: sk-proj-{_key(r, 48)} and password: {_key(r, 14)}"})
    return json.dumps({"model": "anthropic/claude-sonnet-4", "messages": messages, "tools": tools,
                       "max_tokens": 4096, "temperature": 0.7, "stream": False})


def _key(r: random.Random, n: int = 24) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(r.choice(alphabet) for _ in range(n - 1)) + str(r.randint(0, 9))


KINDS: dict[str, Callable[[random.Random, bool], str]] = {
    "read_file result": read_file_result, "terminal output": terminal_output, "web extract": web_extract,
    "chat request": chat_request,
}


def measure(rounds: int, inner: int, seed: int) -> dict[str, float]:
    """Median over rounds of the thread-CPU microseconds per KB of each case (texts never seen before), and
    ``pluggy`` (one hook call's thread-CPU microseconds)."""
    from hermes_pipeline.engine.scrub import scrub_text

    r = random.Random(seed)
    cases = [(f"{kind}{' + secrets' if secrets else ''}", gen, secrets) for kind, gen in KINDS.items()
             for secrets in (False, True)]
    texts = {name: [[gen(r, secrets) for _ in range(inner)] for _ in range(rounds + 1)] for name, gen, secrets in cases}
    samples: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for k in range(rounds + 1):  # round 0 warms up
        for name, _, _ in cases:
            batch = texts[name][k]
            kb = sum(len(t) for t in batch) / 1024
            start = time.thread_time_ns()
            for text in batch:
                scrub_text(text)
            if k:
                samples[name].append((time.thread_time_ns() - start) / 1000 / kb)
    out = {name: statistics.median(values) for name, values in samples.items()}
    out["pluggy"] = per_call_thread_ns(pluggy_reference(), inner=2000, rounds=15) / 1000
    out["KB"] = statistics.mean(len(t) for name, _, _ in cases for t in texts[name][0]) / 1024
    return out


def _export(ref: str, into: Path) -> None:
    """The ``hermes_pipeline`` package of revision ``ref``, written under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "hermes_pipeline"], check=True,
                             capture_output=True).stdout
    with tempfile.TemporaryFile() as f:
        f.write(archive)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later: refuse links and paths out of ``into``
                tar.extractall(into, filter="data")
            else:  # our own git archive of one directory: its members are regular files under it
                tar.extractall(into)  # noqa: S202


def _worker(path: Path, rounds: int, inner: int, seed: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(path))
    proc = subprocess.run([sys.executable, __file__, "--worker", "--rounds", str(rounds), "--inner", str(inner),
                           "--seed", str(seed)], env=env, check=True, capture_output=True, text=True, cwd=path)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default="main", help="the revision to compare with (default main; '' for none)")
    parser.add_argument("--rounds", type=int, default=9, help="rounds per process, medians (default 9)")
    parser.add_argument("--inner", type=int, default=8, help="fresh texts per case and round (default 8)")
    parser.add_argument("--alternations", type=int, default=3, help="old/new process pairs, medians (default 3)")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.rounds, args.inner, args.seed)))
        return 0
    runs: dict[str, list[dict[str, float]]] = {"this tree": []}
    with tempfile.TemporaryDirectory(prefix="bench-scrub-") as tmp:
        paths = {"this tree": ROOT}
        if args.against:
            label = f"{args.against}"
            _export(args.against, Path(tmp))
            paths[label] = Path(tmp)
            runs[label] = []
        for i in range(args.alternations):
            for label, path in (paths.items() if i % 2 == 0 else reversed(list(paths.items()))):
                runs[label].append(_worker(path, args.rounds, args.inner, args.seed + i))
    labels = list(runs)
    merged = {label: {key: statistics.median(run[key] for run in runs[label]) for key in runs[label][0]}
              for label in labels}
    first = merged[labels[0]]
    print(f"scrub_text on first-seen text, thread CPU, us per KB (texts of {first['KB']:.1f} KB on average); "
          f"medians of {args.alternations} processes x {args.rounds} rounds x {args.inner} texts")
    header = f"{'case':<28}" + "".join(f"{label:>14}" for label in labels)
    header += f"{'pluggy calls/KB':>17}" if len(labels) == 1 else f"{'ratio':>8}{'pluggy calls/KB':>17}"
    print(header)
    for key in first:
        if key in ("pluggy", "KB"):
            continue
        row = f"{key:<28}" + "".join(f"{merged[label][key]:>14.2f}" for label in labels)
        if len(labels) > 1:
            row += f"{first[key] / merged[labels[1]][key]:>8.2f}"
        row += f"{first[key] / first['pluggy']:>17.1f}"
        print(row)
    print("one pluggy hook call (us):" + "".join(f"{merged[label]['pluggy']:>16.2f}" for label in labels))
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_scrub", main))
