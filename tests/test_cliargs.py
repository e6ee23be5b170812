"""The command line's parser built for the command being run is the whole parser's equal:
the same namespace, usage, help and errors for every command (evaldsl.tools.cliargs)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
from collections.abc import Callable

import pytest

from evaldsl.terminal import terminal_columns
from evaldsl.tools import cliargs

# Per command: arguments that parse, and arguments that argparse refuses or answers itself
# (help, a missing positional, an unknown option, a bad choice or value, extra arguments).
ARGV: dict[str, list[list[str]]] = {
    "run": [
        ["run", "a.eval", "b", "--json", "r.json", "-j", "2", "-k", "not x", "-q", "--no-color"],
        ["run", "s", "--fail-under", "0.5", "--judge", "frozen", "--judge-cache", "c", "--dry-run"],
        ["run", "s", "--history", "h.sqlite"],
        ["run", "s", "--history", "h", "--no-history"],
        ["run", "s", "--fail-under", "nan"],
        ["run", "s", "-j", "two"],
        ["run", "s", "-j", "0"],
        ["run", "s", "-j", "auto"],
        ["run"],
        ["run", "--help"],
    ],
    "check": [
        ["check", "a.eval", "--format", "sarif", "--judge", "off"],
        ["check", "a.eval", "--format", "xml"],
        ["check", "a.eval", "--nope"],
        ["check", "-h"],
    ],
    "score": [
        ["score", "p.eval", "t/*.json", "-", "--format", "jsonl", "--dask", "local:2"],
        ["score", "p.eval", "t", "--batch-size", "10", "--samples", "1", "-j", "2"],
        ["score", "p.eval"],
    ],
    "convert": [["convert", "s.yaml"], ["convert", "a", "b"], ["convert"]],
    "fmt": [["fmt", "a.eval", "--check", "--diff"], ["fmt"]],
    "inspect": [["inspect", "t.json", "--as", "otel", "--format", "json"], ["inspect", "--code"]],
    "history": [
        ["history"],
        ["history", "p", "--last", "3", "--format", "json"],
        ["history", "--last", "x"],
    ],
    "diff": [
        ["diff", "last~1", "last", "--min-change", "5", "--fail-on-regression"],
        ["diff", "--min-change", "x"],
    ],
    "mutate": [
        ["mutate", "p", "--seed", "3", "--judge", "live", "-k", "c", "--fail-under", "1"],
        ["mutate", "p", "--judge", "frozen"],
    ],
    "schema": [["schema"], ["schema", "x"]],
    "lsp": [["lsp"], ["lsp", "--stdio"], ["lsp", "--tcp"]],
    "vocabulary": [["vocabulary"], ["vocabulary", "--help"]],
}  # fmt: skip


def _outcome(parser_command: str | None, argv: list[str]) -> tuple[object, str, str]:
    """What `parser(parser_command)` gives for `argv`: see `_parsed`."""
    return _parsed(cliargs.parser(parser_command).parse_args, argv)


def _parsed(
    parse: Callable[[list[str]], argparse.Namespace], argv: list[str]
) -> tuple[object, str, str]:
    """What `parse(argv)` gives: the namespace or the exit code, and what was printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(parse(argv))
        except SystemExit as stop:
            result = ("exit", stop.code)
    return result, out.getvalue(), err.getvalue()


def test_every_command_is_declared_and_listed() -> None:
    help_text = cliargs.parser().format_help()
    assert list(ARGV) == list(cliargs.COMMANDS)
    for name, (line, _) in cliargs.COMMANDS.items():
        assert f"    {name}" in help_text and line.split()[0] in help_text


@pytest.mark.parametrize("command", list(ARGV))
def test_a_commands_own_parser_is_the_whole_parsers_equal(command: str) -> None:
    for argv in ARGV[command]:
        assert _outcome(command, argv) == _outcome(None, argv), argv


def test_parse_builds_the_whole_parser_for_anything_but_a_command() -> None:
    for argv in (["--version"], ["-h"], [], ["chek", "x"], ["--judge", "off", "check", "x"]):
        assert _outcome(None, argv) == _parsed(cliargs.parse, argv), argv


@pytest.mark.parametrize("command", list(ARGV))
def test_parse_gives_what_the_whole_parser_gives(command: str) -> None:
    for argv in ARGV[command]:
        assert _parsed(cliargs.parse, argv) == _outcome(None, argv), argv


@pytest.mark.parametrize("columns", [None, "120", "33", "0", "-5", "wide", ""])
def test_the_help_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("LINES", raising=False)
    assert terminal_columns() == shutil.get_terminal_size().columns
    # help is wrapped as argparse wraps it with its own formatter (which asks shutil)
    ours = [_outcome(None, ["--help"]), _outcome("run", ["run", "--help"])]
    monkeypatch.delattr(type(cliargs.parser()), "_get_formatter")
    assert ours == [_outcome(None, ["--help"]), _outcome("run", ["run", "--help"])]


@pytest.mark.parametrize("command", ["run", "score"])
def test_jobs_auto_is_one_process_per_cpu_this_process_may_use(
    monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    positional = ["s"] if command == "run" else ["p.eval", "t"]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    for spelt in ("auto", "AUTO", " auto"):
        assert cliargs.parse([command, *positional, "-j", spelt]).jobs == 3
    assert cliargs.usable_cpus() == 3
    for refused in ("0", "-2", "1.5", "all"):
        result, _, err = _parsed(cliargs.parse, [command, *positional, "-j", refused])
        assert result == ("exit", 2) and f"or auto (one per CPU), not {refused}" in err


@pytest.mark.parametrize(
    ("argv", "usage", "refused"),
    [
        (["run", "s", "--jsn", "r.json"], "run", "--jsn r.json (did you mean --json?)"),
        (["check", "--formt", "json", "s"], "check", "--formt (did you mean --format?)"),
        (["run", "s", "--zzzzzz"], "run", "--zzzzzz"),
    ],
)
def test_an_unknown_option_is_refused_by_its_command_with_the_near_one(
    argv: list[str], usage: str, refused: str
) -> None:
    for parse in (cliargs.parse, cliargs.parser().parse_args):
        result, _, err = _parsed(parse, argv)
        assert result == ("exit", 2)
        assert err.startswith(f"usage: evaldsl {usage} "), err
        assert err.rstrip().endswith(f"unrecognized arguments: {refused}"), err


def test_lsp_takes_stdio_as_editors_clients_add_it() -> None:
    # vscode-languageclient adds --stdio to the command (TransportKind.stdio): the default
    assert cliargs.parse(["lsp", "--stdio"]).command == "lsp"
    assert _parsed(cliargs.parse, ["lsp", "--tcp"])[0] == ("exit", 2)


@pytest.mark.parametrize("command", [None, "run", "score"])
def test_the_help_keeps_its_epilogs_paragraphs(command: str | None) -> None:
    argv = ["--help"] if command is None else [command, "--help"]
    _, out, _ = _parsed(cliargs.parse, argv)
    assert "\nsubjects: " in out and "\npredicates: " in out
    assert "\n\nExit codes: 0 all passed;" in out


@pytest.mark.parametrize(
    "command", ["schema", "lsp", "convert", "fmt", "inspect", "history", "diff", "mutate"]
)
def test_the_help_of_a_command_that_reads_no_assertions_has_no_epilog(command: str) -> None:
    """The language at a glance and the run's exit codes ended every command's help."""
    _, out, _ = _parsed(cliargs.parse, [command, "--help"])
    assert "subjects: " not in out and "Exit codes:" not in out
    assert out.startswith(f"usage: evaldsl {command}")
