"""The code cache: attrs' methods for evaldsl's classes (and slotinit's `__init__`s) are
compiled at the first start and loaded at the next; what is loaded is what `compile`
gives (but for attrs' hash salt); a damaged, shared or foreign file is ignored; nothing
is written when Python writes no bytecode; other modules' classes are not cached."""

from __future__ import annotations

import linecache
import marshal
from pathlib import Path
from types import CodeType

import attrs
import pytest

from evaldsl.cache import compiled as codecache
from tests.clitools import code_cache_file, fresh_python, last_json

#: A start that imports what `run` and `compile` import, compiles a program, and says what
#: the cache did, and whether every cached method is the code `compile` gives for the
#: script attrs wrote in this process (kept in linecache), but for the salt.
START = r"""
import json, linecache, sys
from evaldsl.tools import cli
from evaldsl.runner import core, parallel
from evaldsl.reports import console
from evaldsl.suites.build import load_suite
import evaldsl
from evaldsl.cache import compiled as codecache
program = evaldsl.compile("tool a called once; answer matches /x/; steps < 3")
verdicts = [v.status for v in program.check([{"type": "tool.call", "name": "a"}]).verdicts]
print(json.dumps({"compiled": codecache.compiled_this_process(), "verdicts": verdicts}))
"""


def start(cache: Path, *, bytecode: bool = True, code: str = START) -> dict[str, object]:
    return last_json(fresh_python(code, cache, bytecode=bytecode))


def test_the_second_start_compiles_nothing(tmp_path: Path) -> None:
    first = start(tmp_path)
    assert isinstance(first["compiled"], int) and first["compiled"] > 80
    path = code_cache_file(tmp_path)
    assert path.stat().st_mode & 0o077 == 0 and path.parent.stat().st_mode & 0o777 == 0o700
    second = start(tmp_path)
    assert second == {**first, "compiled": 0}
    assert first["verdicts"] == ["pass", "fail", "pass"]


def test_loaded_methods_are_the_code_compile_gives(tmp_path: Path) -> None:
    start(tmp_path)
    check = (
        START
        + r"""
import attr, gc, marshal
from types import CodeType

def alike(x, y, salted):
    # a salt is an int; a class hashing no field has it folded into a tuple constant
    if isinstance(x, CodeType):
        return isinstance(y, CodeType) and same(x, y, salted)
    if type(x) is tuple and type(y) is tuple and len(x) == len(y):
        return all(alike(a, b, salted) for a, b in zip(x, y))
    return x == y or (salted and type(x) is int and type(y) is int)

def same(a, b, salted):
    if a.co_code != b.co_code or a.co_names != b.co_names or a.co_varnames != b.co_varnames:
        return False
    return alike(a.co_consts, b.co_consts, salted)

checked = 0
for cls in [c for c in gc.get_objects() if isinstance(c, type) and attr.has(c)]:
    if not cls.__module__.startswith("evaldsl."):
        continue
    for name in ("__eq__", "__hash__", "__repr__", "__init__"):
        method = cls.__dict__.get(name)
        code = getattr(method, "__code__", None)
        if code is None or not code.co_filename.startswith(("<attrs generated", "<evaldsl slot")):
            continue
        script = "".join(linecache.getlines(code.co_filename))
        if not script:  # slotinit's, which linecache does not hold: its text is its own
            continue
        fresh = compile(script, code.co_filename, "exec")
        made = next(c for c in fresh.co_consts if isinstance(c, CodeType) and c.co_name == name)
        assert same(code, made, name == "__hash__"), (cls, name)
        checked += 1
print(json.dumps({"checked": checked}))
"""
    )
    assert start(tmp_path, code=check)["checked"] > 150


def test_a_damaged_or_shared_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    first = start(tmp_path)
    path = code_cache_file(tmp_path)
    for damage in (b"", b"\x00garbage", marshal.dumps((1, "another python", {})), b"\xe3"):
        path.write_bytes(damage)
        assert start(tmp_path) == first  # compiled it all again, and wrote it whole
        assert start(tmp_path)["compiled"] == 0
    path.chmod(0o666)  # anyone could have written it: not loaded
    assert start(tmp_path)["compiled"] == first["compiled"]


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path) -> None:
    start(tmp_path, bytecode=False)
    assert not list(tmp_path.rglob("code-*"))


def test_a_process_that_makes_no_evaldsl_class_writes_nothing(tmp_path: Path) -> None:
    # pytest imports the plugin's module, so evaldsl, wherever evaldsl is installed: a
    # process that then uses attrs (its own classes go through the cache) but no evaldsl
    # class leaves no file; one that makes evaldsl's classes writes it
    untouched = (
        "import evaldsl, attr, json\n"
        "@attr.frozen\nclass Point:\n    x: int\n"
        "assert Point(1) == Point(1)\n"
        "from evaldsl.cache import compiled\n"
        "print(json.dumps({'compiled': compiled.compiled_this_process()}))\n"
    )
    made = start(tmp_path, code=untouched)["compiled"]
    assert isinstance(made, int) and made > 0  # attrs' own, compiled through the cache
    assert not list(tmp_path.rglob("code-*"))
    start(tmp_path)
    assert code_cache_file(tmp_path).exists()


def test_a_full_file_keeps_what_this_process_used(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"

    def key(name: str) -> str:  # as the cache keys an evaldsl class's methods
        return f"<attrs generated methods evaldsl.t.{name}>\0{name} = 1\n"

    kept = codecache.CodeCache(path, limit=3)
    for i in range(5):
        kept.code(key(f"k{i}"), f"x = {i}\n", "<test>")
    kept.save()
    later = codecache.CodeCache(path, limit=3)
    assert sorted(later.load()) == [key(f"k{i}") for i in range(5)]  # 5 used: all kept
    later.code(key("k1"), "x = 1\n", "<test>")
    later.code(key("new"), "y = 2\n", "<test>")
    assert later.compiled == 1
    later.save()  # 6 known, over the limit: only the 2 this process used
    assert sorted(codecache.CodeCache(path).load()) == [key("k1"), key("new")]
    namespace: dict[str, object] = {}
    exec(codecache.CodeCache(path).code(key("new"), "unused", "<test>"), namespace)
    assert namespace["y"] == 2
    other = codecache.CodeCache(tmp_path / "other.marshal")
    other.code("<attrs generated methods attr.validators.V>\0v", "v = 1\n", "<test>")
    other.save()  # attrs' own classes only: nothing of evaldsl's was made
    assert not (tmp_path / "other.marshal").exists()


def test_other_modules_classes_are_compiled_as_always() -> None:
    before = codecache.compiled_this_process()

    @attrs.frozen
    class Point:
        x: int
        y: int

    assert Point(1, 2) == Point(1, 2) and hash(Point(1, 2)) == hash(Point(1, 2))
    assert codecache.compiled_this_process() == before
    # the methods are attrs' own, in linecache under attrs' name for them
    code = Point.__eq__.__code__
    assert isinstance(code, CodeType) and linecache.getlines(code.co_filename)


@pytest.mark.parametrize("source", ["x = 1\n", "def f():\n    return 2\n"])
def test_compile_cached_gives_what_compile_gives(source: str) -> None:
    code = codecache.compile_cached(source, "<test compile_cached>")
    assert code.co_code == compile(source, "<test compile_cached>", "exec").co_code
    assert codecache.compile_cached(source, "<test compile_cached>") is code


def test_the_file_keeps_only_the_generated_passes_its_writer_used(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    method = "<attrs generated methods evaldsl.t.A>\0a = 1\n"

    def index_pass(n: int) -> str:  # as `codegen.compiled` keys a pass
        return f"{codecache.GENERATED_PASS}\0p = {n}\n"

    first = codecache.CodeCache(path)
    first.code(method, "a = 1\n", "<test>")
    first.code(index_pass(1), "p = 1\n", codecache.GENERATED_PASS)
    first.code(index_pass(2), "p = 2\n", codecache.GENERATED_PASS)
    first.save()
    assert sorted(codecache.CodeCache(path).load()) == sorted(
        [method, index_pass(1), index_pass(2)]
    )
    later = codecache.CodeCache(path)
    later.code(method, "unused", "<test>")
    later.code(index_pass(2), "unused", codecache.GENERATED_PASS)  # (loaded: not compiled)
    later.code(index_pass(3), "p = 3\n", codecache.GENERATED_PASS)
    assert later.compiled == 1
    later.save()  # the first pass, unused here, leaves; the class's method stays
    assert sorted(codecache.CodeCache(path).load()) == sorted(
        [method, index_pass(2), index_pass(3)]
    )


def test_a_generated_pass_is_compiled_at_the_first_start_only(tmp_path: Path) -> None:
    code = r"""
import json
from evaldsl.cache import compiled as codecache
from evaldsl.runs import codegen
source = "def index_pass():\n    return 7\n"
before = codecache.compiled_this_process()
scope = {}
exec(codegen.compiled(source), scope)
print(json.dumps({"compiled": codecache.compiled_this_process() - before,
                  "value": scope["index_pass"]()}))
"""
    assert start(tmp_path, code=code) == {"compiled": 1, "value": 7}
    assert start(tmp_path, code=code) == {"compiled": 0, "value": 7}


def test_a_process_keeps_at_most_passes_max_generated_passes(tmp_path: Path) -> None:
    cache = codecache.CodeCache(tmp_path / "code.marshal")
    for n in range(codecache.PASSES_MAX + 2):
        scope: dict[str, object] = {}
        key = f"{codecache.GENERATED_PASS}\0p = {n}\n"
        exec(cache.code(key, f"p = {n}\n", codecache.GENERATED_PASS), scope)
        assert scope["p"] == n  # (compiled, kept or not)
    assert cache.compiled == cache.passes == codecache.PASSES_MAX
    cache.code("<attrs generated methods evaldsl.t.A>\0a = 1\n", "a = 1\n", "<test>")
    assert cache.compiled == codecache.PASSES_MAX + 1  # (other code is still kept)
