"""Every example in the README runs: Python blocks execute, evaldsl blocks parse and check,
YAML suites load, shell commands exit as the README says, and shown output is real."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evaldsl.api import diagnose
from evaldsl.suites.yamlfile import yaml_draft
from tests.clitools import run_evaldsl

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", README, flags=re.S | re.M)


def blocks(kind: str) -> list[str]:
    return [body for lang, body in BLOCKS if lang == kind]


evaldsl = run_evaldsl


def test_readme_opens_with_the_two_commands() -> None:
    first = BLOCKS[0][1]
    assert "make run" in first and "make test" in first
    assert README.index("make run") < README.index("## ")


@pytest.mark.parametrize("code", blocks("python"))
def test_python_blocks_run(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize("text", blocks("eval"))
def test_eval_blocks_parse_and_check(text: str) -> None:
    _, _, _, diags = diagnose(text, "README.eval")
    assert [d for d in diags if d.is_error] == []


@pytest.mark.parametrize("text", blocks("yaml"))
def test_yaml_blocks_load(text: str) -> None:
    data = yaml.safe_load(text)
    if isinstance(data, dict) and "cases" in data:
        draft = yaml_draft(text, str(ROOT / "examples" / "weather" / "README.yaml"))
        problems = [d for d in draft.diagnostics if d.is_error]
        problems += [d for c in draft.cases for d in c.diagnostics if d.is_error]
        assert problems == []


def shell_commands() -> list[tuple[str, int]]:
    found = []
    for body in blocks("sh"):
        for line in body.splitlines():
            command, _, comment = line.partition("#")
            command = command.strip()
            if not command.startswith("evaldsl ") or re.search(r"PATH|\[|\.\.\.", command):
                continue
            m = re.search(r"exits (\d)", comment)
            found.append((command, int(m.group(1)) if m else 0))
    return found


@pytest.mark.parametrize(("command", "code"), shell_commands())
def test_shell_commands_exit_as_documented(command: str, code: int) -> None:
    result = evaldsl(*command.split()[1:])
    assert result.returncode == code, result.stdout + result.stderr


def test_shown_output_is_real() -> None:
    # The score examples: the traces in the order a shell expands `traces/*.json`, and
    # the exported JSONL piped in on standard input.
    production = ROOT / "examples-production"
    traces = sorted(str(p.relative_to(ROOT)) for p in (production / "traces").glob("*.json"))
    command = ["score", "examples-production/checks.eval", "-", "--format", "jsonl"]
    piped = subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", *command],
        input=(production / "exported.jsonl").read_text(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    real = (
        evaldsl("run", "examples-failing/failures.eval").stdout
        + evaldsl("check", "examples-failing/mistakes.eval").stdout
        + evaldsl("inspect", "tests/fixtures/realworld/openai-chat-stream/stream.sse").stdout
        + evaldsl(
            "diff", "examples-failing/diff/before.json", "examples-failing/diff/after.json"
        ).stdout
        + evaldsl("mutate", "examples/research/research.eval").stdout
        + evaldsl("score", "examples-production/checks.eval", *traces).stdout
        + piped.stdout
    )
    squeeze = re.compile(r"[ \t]+")
    real = squeeze.sub(" ", real)
    for body in blocks("text"):
        for line in body.splitlines():
            if line.strip():
                assert squeeze.sub(" ", line.rstrip()) in real, line


def test_the_predicate_list_names_every_predicate() -> None:
    """README's list of predicates is checked against the predicate table: a predicate
    added to the language is listed, and nothing listed is gone."""
    from evaldsl.predicates.registry import PREDICATES

    text = README
    start = text.index("\nPredicates: ")
    listed = text[start : text.index("\n\n", start)].replace("\n", " ")
    codes = re.findall(r"`([^`]+)`", listed)
    for spec in PREDICATES.values():
        head = spec.syntax.split(" [")[0].split(" VALUE")[0].split(' "')[0].split(" /")[0]
        assert any(head in code for code in codes), f"README does not list `{spec.syntax}`"
    known = " ".join(spec.syntax for spec in PREDICATES.values())
    for code in codes:
        first = code.split()[0]
        assert first in known or first in ("no", "every", "node", "tokens"), code


def test_the_synopsis_names_every_option_of_every_command() -> None:
    """`## Running and reports` opens with each command's line: every option `--help`
    lists is on it (`run --no-color`, `check --judge`, `score --batch-size` were not)."""
    from evaldsl.tools import cliargs

    start = README.index("## Running and reports")
    synopsis = README[start : README.index("```\n", README.index("```\n", start) + 4)]
    lines = {}
    for line in synopsis.splitlines():
        if line.startswith("evaldsl "):
            command = line.split()[1]
            lines[command] = lines.get(command, "") + line
        elif line.startswith(" ") and lines:
            lines[command] += line
    for name, command in cliargs.parser().commands.items():
        usage = " ".join(command.format_usage().split())
        for option in re.findall(r"\[(-[\w-]+)", usage.replace("| ", "[")):
            if option != "-h":
                said = rf"(?<![\w-]){re.escape(option)}(?![\w-])"
                assert re.search(said, lines[name]), (name, option)
