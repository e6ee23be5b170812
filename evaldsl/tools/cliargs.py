"""The `evaldsl` command line's options: takes the arguments, gives the parsed namespace.

Each command's options are declared by a function of its own (`COMMANDS`, in the order
`--help` lists them). `parser(command)` builds the top-level parser with that command
only, when the first argument names one: argparse makes an `ArgumentParser` for every
sub-command, and each asks `gettext` for its translations (environment lookups and a
`stat` per language) and a help formatter per option, ~6 ms for all twelve, paid by every
start before this. The arguments of a named command are parsed by its own parser alone,
so the namespace, the usage and every error are the same with or without the others
(`tests/test_cliargs.py` compares them); `--help`, `--version`, no command or an unknown
one get the whole parser.

The help formatter is given the terminal's width as `shutil.get_terminal_size` gives it,
read with `os` alone (`evaldsl.terminal`): argparse imports `shutil` for it (and `shutil`
imports `bz2`, `lzma` and `fnmatch`, ~3.5 ms) at the first option declared.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import cast

from evaldsl.judge.modes import MODES
from evaldsl.terminal import terminal_columns


class _Parser(argparse.ArgumentParser):
    """The top-level parser (and, as argparse makes them of their parent's class, each
    command's). Its epilog, the language at a glance and the exit codes, is read from the
    vocabulary tables when help is printed, not at every start (`--version` loads none),
    and shown by the commands it is about (`WITH_EPILOG`) and the top level."""

    #: The commands' own parsers, by name (the top level's; empty for a command's).
    commands: dict[str, argparse.ArgumentParser] = {}  # noqa: RUF012 (set per instance)
    #: Whether `--help` ends with the language at a glance and the exit codes.
    with_epilog = True

    def format_help(self) -> str:
        if self.epilog is None and self.with_epilog:
            import textwrap

            self.epilog = (
                _vocabulary_summary()
                + "\n\n"
                + textwrap.fill(
                    "Exit codes: 0 all passed; 1 a case failed or errored, no case ran, or check "
                    "found an error; 2 bad usage or unreadable input; 130 interrupted (Ctrl-C); "
                    "143 stopped by SIGTERM.",
                    width=92,
                )
            )
        return super().format_help()

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, but an unknown option is refused by its command's parser (its usage,
        not the top level's), with the option it is likely a slip of."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = self.commands.get(getattr(parsed, "command", None) or "", self)
            command.error(
                f"unrecognized arguments: {' '.join(extra)}{_near_option(extra, command)}"
            )
        return parsed

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's own, but for the width, which it reads through `shutil` (see above);
        # it makes one to check each option's metavar as the option is declared
        formatter = cast("type[argparse.HelpFormatter]", self.formatter_class)
        return formatter(prog=self.prog, width=terminal_columns() - 2)


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: with `command` (a name of `COMMANDS`) that command's
    options only, else every command's."""
    from evaldsl.version import __version__

    top = _Parser(
        prog="evaldsl",
        description="Check what AI agents and workflows did, in a terse, typed assertion language.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"evaldsl {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND")
    top.commands = {}
    for name, (help_text, declare) in COMMANDS.items():
        if command is None or name == command:
            # (raw: the epilog's paragraphs, the language and the exit codes, stay apart)
            made = sub.add_parser(
                name, help=help_text, formatter_class=argparse.RawDescriptionHelpFormatter
            )
            declare(made)
            if isinstance(made, _Parser):
                made.with_epilog = name in WITH_EPILOG
            top.commands[name] = made
    return top


def _near_option(given: list[str], command: argparse.ArgumentParser) -> str:
    """`; did you mean --json?` for the first unknown option near one of `command`'s."""
    import difflib
    import re

    known = sorted(set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", command.format_usage())))
    for word in given:
        name = word.partition("=")[0]
        if name.startswith("-"):
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            if near:
                return f" (did you mean {near[0]}?)"
    return ""


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """`argv` (None: the process's arguments) parsed, as `parser().parse_args` parses
    them; argparse's errors exit 2 with the usage, as ever."""
    args = sys.argv[1:] if argv is None else list(argv)
    named = args[0] if args and args[0] in COMMANDS else None
    return parser(named).parse_args(args)


def _run(run: argparse.ArgumentParser) -> None:
    run.add_argument("paths", nargs="+", metavar="PATH")
    run.add_argument("--json", metavar="FILE", help="write the JSON report here")
    run.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here")
    run.add_argument("--markdown", metavar="FILE", help="write a Markdown summary here")
    run.add_argument(
        "--html", metavar="FILE", help="write a self-contained HTML report here (opens offline)"
    )
    run.add_argument(
        "--fail-under",
        type=_score,
        metavar="SCORE",
        help="exit 1 when the overall score is below SCORE (0-1)",
    )
    run.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="run cases in N processes, or auto: one per CPU (same report as a serial run)",
    )
    run.add_argument(
        "-k",
        dest="select",
        type=_selection,
        metavar="PATTERN",
        help="only cases whose 'suite::case' name contains PATTERN (globs, 'not', 'and', 'or' "
        "and parentheses work)",
    )
    shown = run.add_mutually_exclusive_group()
    shown.add_argument(
        "-q", "--quiet", action="store_true", help="print only failures and the summary"
    )
    shown.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every assertion of every case, with its found value uncut, and its metrics",
    )
    run.add_argument("--no-color", action="store_true", help="never color the output")
    _judge_options(run)
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="check and plan only: say how many cases and judge calls would run",
    )
    recording = run.add_mutually_exclusive_group()
    recording.add_argument(
        "--history",
        metavar="DB",
        type=_database,
        help="record the run in this SQLite file (default .evaldsl/history.sqlite)",
    )
    recording.add_argument("--no-history", action="store_true", help="do not record the run")


def _check(check: argparse.ArgumentParser) -> None:
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument(
        "--format", default="full", choices=["full", "concise", "json", "github", "sarif"]
    )
    # (unset: `diagnostics.MAX_SHOWN`, read by the command: every start builds this parser
    # for `--version` and `--help`, which load none of the language)
    check.add_argument(
        "--max-diagnostics",
        type=_count,
        metavar="N",
        help="print at most N diagnostics as text (default 100; 0: all)",
    )
    _judge_options(check)


def _score_command(score: argparse.ArgumentParser) -> None:
    score.add_argument("program", metavar="PROGRAM", help="a .eval file without `case` lines")
    score.add_argument(
        "traces",
        nargs="+",
        metavar="TRACES",
        help="files, folders, quoted globs, or - for one trace per line on standard input",
    )
    score.add_argument("--format", default="text", choices=["text", "json", "jsonl"])
    score.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="score in N processes, or auto: one per CPU",
    )
    score.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="score on the Dask cluster at ADDRESS, or on a LocalCluster of N workers "
        "started for the run with local[:N] (needs evaldsl[dask])",
    )
    score.add_argument(
        "--batch-size",
        type=lambda text: _whole(text, "a number of traces per task ≥ 1", least=1),
        metavar="N",
        help="traces per task",
    )
    score.add_argument(
        "--samples",
        type=_samples,
        default=3,
        metavar="K",
        help="failing traces shown per assertion",
    )
    _judge_options(score)


def _convert(convert: argparse.ArgumentParser) -> None:
    convert.add_argument("path", metavar="PATH")


def _fmt(fmt: argparse.ArgumentParser) -> None:
    fmt.add_argument("paths", nargs="+", metavar="PATH")
    fmt.add_argument("--check", action="store_true", help="only say which files would change")
    fmt.add_argument("--diff", action="store_true", help="print a diff instead of writing")


def _inspect(inspect: argparse.ArgumentParser) -> None:
    inspect.add_argument(
        "trace", metavar="TRACE", help="a recording: a cassette, a trace or a state file"
    )
    inspect.add_argument(
        "--code",
        action="store_true",
        help="TRACE is a suite: print the generated pass each of its cases runs",
    )
    inspect.add_argument("--as", dest="as_format", metavar="FORMAT", help="name the format")
    # (no default: given with --code, it is refused)
    inspect.add_argument("--format", choices=["text", "json"], help="text (the default) or json")


_DB_HELP = "the history database (default .evaldsl/history.sqlite)"


def _history(history: argparse.ArgumentParser) -> None:
    history.add_argument("paths", nargs="*", metavar="PATH", help="only suites at or under PATH")
    history.add_argument("--format", default="text", choices=["text", "json"])
    history.add_argument(
        "--last",
        type=lambda text: _whole(text, "a number of runs ≥ 1", least=1),
        default=20,
        metavar="N",
        help="the last N runs",
    )
    history.add_argument("--history", metavar="DB", type=_database, help=_DB_HELP)


def _diff(diff: argparse.ArgumentParser) -> None:
    diff.add_argument(
        "runs", nargs="*", metavar="RUN", help="a run id, last, last~N, or a --json report file"
    )
    diff.add_argument("--format", default="text", choices=["text", "json", "markdown"])
    diff.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when an assertion regressed"
    )
    diff.add_argument(
        "--min-change",
        type=_percentage,
        default=0.0,
        metavar="PCT",
        help="list only metrics that moved by at least PCT percent",
    )
    diff.add_argument("--history", metavar="DB", type=_database, help=_DB_HELP)


def _mutate(mutate: argparse.ArgumentParser) -> None:
    mutate.add_argument("paths", nargs="+", metavar="PATH")
    mutate.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    mutate.add_argument(
        "--max-mutants", type=int, default=50, metavar="N", help="at most N mutants a case"
    )
    mutate.add_argument("--format", default="text", choices=["text", "json"])
    mutate.add_argument(
        "--fail-under", type=_score, metavar="SCORE", help="exit 1 when the score is below SCORE"
    )
    mutate.add_argument(
        "-k", dest="select", type=_selection, metavar="PATTERN", help="only matching cases"
    )
    mutate.add_argument(
        "--judge",
        choices=["off", "live"],
        default="off",
        help="judge assertions: off (default; skipped) or live (each mutant judged)",
    )
    mutate.add_argument("--judge-cache", metavar="DIR", type=_path, help="judge cache folder")


def _no_options(_: argparse.ArgumentParser) -> None:
    """A command without options of its own (`-h` only)."""


def _lsp(lsp: argparse.ArgumentParser) -> None:
    # editors' clients (vscode-languageclient with TransportKind.stdio) add --stdio to the
    # command; stdio is the only transport, so the flag is accepted and changes nothing
    lsp.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")


def _finite(text: str) -> float:
    """The number `text` writes if it is finite, else NaN (which every range refuses)."""
    try:
        value = float(text)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) else math.nan


def _score(text: str) -> float:
    """A `--fail-under` score: a finite number from 0 to 1 (`nan`, `inf` are refused)."""
    value = _finite(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"--fail-under takes a score between 0 and 1, not {text}")
    return value


def _percentage(text: str) -> float:
    """A `--min-change` percentage: a finite number ≥ 0 (`nan`, under which no move is
    "at least" it, hid every metric; `inf` hides every one: refused too)."""
    value = _finite(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"--min-change takes a percentage ≥ 0, not {text}")
    return value


def _path(text: str) -> str:
    """A file or folder path: not empty (an empty one would name the working folder, or
    be taken for no path at all and the default used)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file or folder; name one")
    return text


def _database(text: str) -> str:
    """A `--history` database: a file path (`_path`), never `-`, which every other option
    reads as standard output, where a database was made in a file named `-`."""
    if text == "-":
        raise argparse.ArgumentTypeError(
            "a history is an SQLite file, not standard output (-); name a file, or give "
            "--no-history"
        )
    return _path(text)


def _jobs(text: str) -> int:
    """A `-j` count: a whole number ≥ 1, or `auto` for the CPUs this process may use."""
    if text.strip().lower() == "auto":
        return usable_cpus()
    return _whole(text, "a number of processes ≥ 1, or auto (one per CPU)", least=1)


def _selection(text: str) -> str:
    """A `-k` pattern, as written, once it reads (`runner.selection`; loaded only when a
    command has a `-k`)."""
    from evaldsl.runner.selection import problem

    why = problem(text)
    if why is not None:
        raise argparse.ArgumentTypeError(
            f"{why}: combine name parts with and, or, not and parentheses, as pytest's -k does"
        )
    return text


def _samples(text: str) -> int:
    """A `--samples` count: a whole number ≥ 0 (0: no failing trace shown)."""
    return _whole(text, "how many failing traces to show per assertion, a whole number ≥ 0")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system has one), at least 1."""
    # A container or `taskset` may allow fewer CPUs than the machine has; os.cpu_count
    # would count them all and start workers that only take turns.
    affinity = getattr(os, "sched_getaffinity", None)
    count = len(affinity(0)) if affinity is not None else os.cpu_count()
    return max(1, count or 1)


def _count(text: str) -> int:
    """A `--max-diagnostics` count: a whole number ≥ 0."""
    return _whole(text, "a whole number ≥ 0 (0: no limit)")


def _whole(text: str, takes: str, least: int = 0) -> int:
    """A whole number ≥ `least`, else an error saying what the option `takes`."""
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"takes {takes}, not {text}")
    return value


def _vocabulary_summary() -> str:
    """The language at a glance, from the vocabulary table (`evaldsl vocabulary` has docs)."""
    import textwrap

    from evaldsl.language.vocabulary import SUBJECTS
    from evaldsl.predicates.registry import PREDICATES

    subjects = ", ".join(s.syntax for s in SUBJECTS.values())
    predicates = "; ".join(p.syntax for p in PREDICATES.values())
    wrap = textwrap.TextWrapper(width=92, subsequent_indent="  ")
    return "\n".join(
        [
            wrap.fill("subjects: " + subjects),
            wrap.fill("predicates: " + predicates),
            "combine with not, and, or and parentheses; `evaldsl vocabulary` explains each",
        ]
    )


def _judge_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--judge",
        choices=list(MODES),
        default=None,
        help="LLM judge: live (default; calls the endpoint on a cache miss), frozen "
        "(a cache miss is an error: for CI), off (skip judge assertions)",
    )
    p.add_argument(
        "--judge-cache",
        metavar="DIR",
        type=_path,
        help="judge cache folder (default .evaldsl/judge-cache; a traceplay cache "
        "folder works too)",
    )


#: The commands whose `--help` ends with the language at a glance and the exit codes:
#: those that read assertions and exit by their verdicts.
WITH_EPILOG = frozenset({"run", "check", "score"})

# Each command: its line in `--help`, and the function declaring its options.
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "run": ("run suites (files or folders) and report", _run),
    "check": ("parse and check suites; nothing is executed", _check),
    "score": (
        "apply one program to many traces (files, folders, globs, - for JSONL on stdin)",
        _score_command,
    ),
    "convert": ("print a YAML or JSON suite as an equivalent .eval file", _convert),
    "fmt": ("format .eval files in the one canonical layout", _fmt),
    "inspect": ("print what evaldsl reads from a trace or state, as assertions see it", _inspect),
    "history": (
        "recorded runs over time: pass rate and score per suite, flaky assertions",
        _history,
    ),
    "diff": ("what changed between two runs (default: the last two)", _diff),
    "mutate": ("mutation testing: which changes to the recorded runs the suites notice", _mutate),
    "schema": ("print the JSON Schema of YAML/JSON suites", _no_options),
    "lsp": ("run the language server over stdio (needs evaldsl[lsp])", _lsp),
    "vocabulary": ("print every subject, predicate and line of the language", _no_options),
}
