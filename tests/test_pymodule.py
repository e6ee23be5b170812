"""What a run target's module binds, read without running it (evaldsl.check.pymodule),
and what `check` says of a target whose module or function is not there."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from evaldsl.check.pymodule import Unparsable, module_names
from evaldsl.runner import run_suites
from evaldsl.suites import load_suite


def _names(tmp_path: Path, source: str) -> frozenset[str] | Unparsable | None:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return module_names(path)


def test_every_way_a_top_level_binds_a_name(tmp_path: Path) -> None:
    found = _names(
        tmp_path,
        """
        import os.path, json as j
        from typing import Any, cast as c
        def f(x):
            inner = 1
            return [y for y in x]
        async def g(): ...
        class K:
            attr = 1
        a = b = 1
        (t1, [t2, *t3]) = 1, (2, 3)
        n: int = 0
        m: int
        if os:
            in_if = 1
        else:
            in_else = 2
        try:
            in_try = 1
        except ImportError as caught:
            in_except = 1
        for loop_var in []:
            pass
        with open("x") as opened:
            pass
        while (walrus := 0):
            pass
        [(in_comp := y) for y in range(2)]
        match 1:
            case [first, *rest]: pass
            case {"k": v, **others}: pass
        """,
    )
    assert isinstance(found, frozenset)
    assert found == {
        "os", "j", "Any", "c", "f", "g", "K", "a", "b", "t1", "t2", "t3", "n", "m",
        "in_if", "in_else", "in_try", "caught", "in_except", "loop_var", "opened",
        "walrus", "in_comp", "first", "rest", "v", "others",
    }  # fmt: skip
    # what a function, a class or a comprehension binds is its own
    assert not found & {"inner", "attr", "y", "x"}


@pytest.mark.parametrize(
    "source",
    [
        "from helpers import *\n",
        "def __getattr__(name):\n    return print\n",
        "def install():\n    global late\n    late = print\n",
        "globals()['late'] = print\n",
        "vars()['late'] = print\n",
        "exec('def late(): pass')\n",
        "import sys\nsetattr(sys.modules[__name__], 'late', print)\n",
        "import sys\nsys.modules[__name__].__dict__['late'] = print\n",
        "class K:\n    def make(self):\n        globals()['late'] = print\n",
    ],
)
def test_a_module_that_binds_names_out_of_sight_is_not_judged(tmp_path: Path, source: str) -> None:
    assert _names(tmp_path, source) is None


def test_a_syntax_error_is_where_python_puts_it(tmp_path: Path) -> None:
    found = _names(tmp_path, "def f():\n    return (1,\n")
    assert isinstance(found, Unparsable)
    assert (found.line, found.column) == (2, 12) and "never closed" in found.message


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    assert _names(tmp_path, "a = 1\n") == {"a"}
    assert _names(tmp_path, "a = 1\nbb = 2\n") == {"a", "bb"}


def _check(tmp_path: Path, target: str) -> list[tuple[str, str, str | None]]:
    suite = tmp_path / "s.eval"
    suite.write_text(f'case "c"\nrun {target}\noutput == 1\n', encoding="utf-8")
    return [(d.code, d.message, d.hint) for d in load_suite(suite).diagnostics]


def test_check_finds_a_targets_function_missing_without_running_its_module(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "__init__.py").write_text("from agent.tools import helper\n", encoding="utf-8")
    (agent / "tools.py").write_text("print('ran')\ndef helper(): ...\n", encoding="utf-8")
    (agent / "main.py").write_text(
        "import sys\nprint('ran', file=sys.stderr)\nsys.exit(3)\n"
        "def answer(prompt):\n    return 1\n",
        encoding="utf-8",
    )
    (agent / "broken.py").write_text("def answer(prompt:\n    return 1\n", encoding="utf-8")
    assert _check(tmp_path, "agent.main:answer") == []
    assert _check(tmp_path, "agent:helper") == []  # bound by a package's import
    assert _check(tmp_path, "agent:main") == []  # a submodule
    assert _check(tmp_path, "agent.main:answr") == [
        (
            "E509",
            "module `agent.main` has no `answr` for run target `agent.main:answr`",
            "did you mean `agent.main:answer`?",
        )
    ]
    assert _check(tmp_path, "agent.main:respond") == [
        (
            "E509",
            "module `agent.main` has no `respond` for run target `agent.main:respond`",
            f"{agent / 'main.py'} defines no `respond` at its top level",
        )
    ]
    assert _check(tmp_path, "agent.mian:answer") == [
        (
            "E509",
            "cannot find module `agent.mian` for run target `agent.mian:answer`",
            "did you mean `agent.main:answer`?",
        )
    ]
    ((code, message, hint),) = _check(tmp_path, "agent.broken:answer")
    assert code == "E509" and hint == "the module's syntax error stops its import"
    assert message.startswith("cannot import `agent.broken` for run target `agent.broken:answer`: ")
    assert message.endswith(f"{agent / 'broken.py'}:1:11: '(' was never closed")


def test_a_target_whose_module_is_no_modules_name_is_refused_by_check(tmp_path: Path) -> None:
    # `..agent` was found as agent.py, then a TypeError in Python's words when run ("the
    # 'package' argument is required to perform a relative import"); `agent.py` said only
    # where it looked
    (tmp_path / "agent.py").write_text("def answer(x=None):\n    return 1\n", encoding="utf-8")
    for target in ("..agent:answer", "agent.:answer", "agent..x:answer"):
        suite = tmp_path / "s.yaml"
        suite.write_text(
            f'cases:\n  - {{name: c, run: "{target}", assertions: [output == 1]}}\n',
            encoding="utf-8",
        )
        module = target.partition(":")[0]
        assert [(d.code, d.message, d.hint) for d in load_suite(suite).diagnostics] == [
            (
                "E509",
                f"`{target}` is not a target: `{module}` is not a module's name",
                "write run package.module:function, the module as an import statement names it",
            )
        ]
    assert _check(tmp_path, "agent.py:answer") == [
        (
            "E509",
            "cannot find module `agent.py` for run target `agent.py:answer`",
            "did you mean `agent:answer`?",
        )
    ]


def test_the_run_names_a_near_function_where_check_could_not_tell(tmp_path: Path) -> None:
    (tmp_path / "late.py").write_text(
        "def answer(prompt):\n    return 1\n\nglobals().update()\n", encoding="utf-8"
    )
    suite = tmp_path / "s.eval"
    suite.write_text(
        'case "near"\nrun late:answr\noutput == 1\n\ncase "far"\nrun late:zzz\noutput == 1\n',
        encoding="utf-8",
    )
    loaded = load_suite(suite)
    assert list(loaded.diagnostics) == []  # globals(): check says nothing
    near, far = run_suites([loaded]).cases
    assert near.error == (
        "module 'late' has no 'answr' (run target 'late:answr'); did you mean 'answer'?"
    )
    assert far.error == "module 'late' has no 'zzz' (run target 'late:zzz')"
