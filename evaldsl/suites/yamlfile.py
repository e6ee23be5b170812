"""YAML and JSON suites → a `SuiteDraft`, with exact positions.

Takes the text of a YAML or JSON suite (traceplay's format, cycgraph-style objects,
evaldsl's `expect:` blocks) and gives a `SuiteDraft`. YAML is only ever loaded safely,
as YAML 1.2 like traceplay's loader (`evaldsl.yaml12`: `on` is text, `1e3` a number).
Composing keeps every node's position, so a problem in a field, or a syntax error inside
DSL text under `expect:`, is reported at its own line and column in the YAML file.

Suite keys: `suite` (or `name`), `description`, `tools`, `nodes`, `judge` (a model name or
`{model: …}`), `timeout`, `expect` (suite-level assertions), `cases`. Case keys: `name`,
one source (`cassette`, `state`, `trace` with `format`, `run` with `input`, `dataset` with
`run`), `each`, `timeout`, `expect` (DSL: one string, a list of strings or a block) and
`assertions` (traceplay and cycgraph objects, or DSL strings), `description`, `metadata`.

Before any value is built the composed document goes through `yamlguard.check_yaml`: a
tag that is not plain data, a recursive alias, nesting past the limit and an alias bomb
are diagnostics at their line (E510). Inside one case, that case is not read (it is an
error case) and the others are; anywhere else, the suite is not read further. A duplicate
key or a tagged scalar that does not hold its tag (`yaml12.problems`) is its case's error
when inside one, else the suite's.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Collection, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import yaml

from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic, did_you_mean
from evaldsl.language.jsjson import js_json
from evaldsl.language.limits import timeout_problem
from evaldsl.language.source import Position, Source, Span
from evaldsl.language.values import MISSING
from evaldsl.runs.detect import dataset_said, is_dataset
from evaldsl.suites.model import CaseDraft, Layout, Snippet, SourceSpec, SuiteDraft
from evaldsl.suites.objects import Place, object_to_dsl, renaming, unknown_field
from evaldsl.suites.places import PathPlace, TextPlace
from evaldsl.suites.templates import render_value
from evaldsl.suites.yaml12 import compose, construct, problems
from evaldsl.suites.yaml12 import fields as node_fields
from evaldsl.suites.yamlguard import YamlProblem, check_yaml
from evaldsl.suites.yamlplaces import line_starts, node_end, scalar_runs, yaml_lines
from evaldsl.suites.yamltraps import (
    comment_cut,
    json_error,
    misread_mapping,
    reader_error,
    strict_loads,
    yaml_error,
)
from evaldsl.syntax.literals import duration_text
from evaldsl.syntax.outline import UNBOUNDED_TIMEOUT
from evaldsl.syntax.parser import parse

SUITE_KEYS = {
    "$schema",
    "suite",
    "name",
    "description",
    "tools",
    "nodes",
    "judge",
    "timeout",
    "expect",
    "cases",
}
CASE_KEYS = {
    "name",
    "description",
    "metadata",
    "tags",
    "cassette",
    "state",
    "trace",
    "format",
    "run",
    "input",
    "dataset",
    "each",
    "timeout",
    "expect",
    "assertions",
}
_SOURCES = ("cassette", "state", "trace", "run", "dataset")
#: A bare `timeout` of this many seconds or more is said (W511): more likely milliseconds.
LARGE_BARE_TIMEOUT = 1000


class _Doc:
    """A composed YAML document: plain values from nodes, positions, source lines."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.lines = yaml_lines(text)  # numbered as the marks of `compose` number them
        # where things are written, for editors (the draft's `layout`)
        self.texts: list[TextPlace] = []
        self.case_lines: list[tuple[int, int]] = []
        self.paths: list[PathPlace] = []
        self.case: int | None = None  # the 0-based index of the case being read
        self.suite_line: int | None = None  # the key that names the suite
        self.starts: list[int] | None = None  # where each line starts, once a snippet asks

    def note_text(self, node: yaml.Node) -> None:
        """Note where a scalar of DSL text is (an empty item too: one being typed)."""
        if isinstance(node, yaml.ScalarNode) and str(node.tag).rsplit(":", 1)[-1] in (
            "str",
            "null",
        ):
            start, end = node.start_mark, node.end_mark
            self.texts.append(
                TextPlace(self.case, node.style, start.line, start.column, end.line, end.column)
            )

    def layout(self) -> Layout:
        return Layout(tuple(self.texts), tuple(self.case_lines), tuple(self.paths), self.suite_line)

    def value(self, node: yaml.Node) -> Any:
        return construct(node)  # never raises: `check_yaml` refused what cannot be built

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""

    def pos(self, node: yaml.Node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def error(
        self, node: yaml.Node | None, code: str, message: str, hint: str | None = None
    ) -> Diagnostic:
        if node is None:
            return Place(self.path, 1, 1, {}, self.line_text).error(None, code, message, hint)
        line, column = self.pos(node)
        place = Place(self.path, line, column, {}, self.line_text, end=node_end(node))
        return place.error(None, code, message, hint)

    def unknown_key(
        self,
        knode: yaml.Node,
        key: str,
        known: Collection[str],
        what: str,
        present: Mapping[str, tuple[yaml.Node, yaml.Node]],
    ) -> Diagnostic:
        """E508 for a key that is not one of `known`, with the did-you-mean as an edit of
        the key's text when that is the key as written on one line: plain, or quoted
        without escapes (a JSON suite's keys); renaming it changes nothing else of the
        YAML. Any other key is left to the hint, and so is a guess the mapping already
        has among its keys (`present`, the mapping's fields): renamed, the key would be
        written twice (E504)."""
        guess, message, hint = unknown_field(key, known, what)
        if key == "timeout_ms" and "timeout" in known:
            # cycgraph's milliseconds: renamed to `timeout`, its 5000 would be seconds
            ms = self.value(present[key][1])
            whole = isinstance(ms, (int, float)) and not isinstance(ms, bool)
            shown = f"{int(ms)}ms" if whole and 0 < ms < 1e15 and ms == int(ms) else "60000ms"
            hint = (
                "cycgraph's `timeout_ms` counts milliseconds, and a bare `timeout` number "
                f"seconds: write `timeout: {shown}`"
            )
            return self.error(knode, "E508", message, hint)
        found = self.error(knode, "E508", message, hint)
        fix = renaming(self.key_text(knode, key), key, guess, present)
        return found if fix is None else attrs.evolve(found, fix=fix)

    def key_text(self, knode: yaml.Node, key: str) -> tuple[int, int] | None:
        """Where key `key`'s text is (1-based line and column) when the key is written as
        itself on one line: plain, or quoted without escapes (a JSON suite's keys), so
        that renaming it there changes nothing else of the YAML; else None."""
        if not isinstance(knode, yaml.ScalarNode):
            return None
        start, end = knode.start_mark, knode.end_mark
        quotes = 2 if knode.style in ('"', "'") else 0
        if knode.style not in ("", None, '"', "'") or start.line != end.line:
            return None
        if end.column - start.column != len(key) + quotes:  # (an escape, or a key not text)
            return None
        line, column = self.pos(knode)
        return line, column + quotes // 2

    def place(self, node: yaml.Node) -> Place:
        fields = node_fields(node)
        positions = {key: self.pos(knode) for key, (knode, _) in fields.items()}
        texts = {key: at for key, (knode, _) in fields.items() if (at := self.key_text(knode, key))}
        ends = {key: at for key, (knode, _) in fields.items() if (at := node_end(knode))}
        line, column = self.pos(node)
        return Place(
            self.path, line, column, positions, self.line_text, texts, ends, node_end(node)
        )

    def fixed_source(self, text: str, node: yaml.Node, last: yaml.Node | None = None) -> Source:
        """A Source for `text` made from `node` (through `last`, when it goes on to
        another node: a source's key and its value): each of its diagnostics marks them
        whole when they are written on one line, else their first character."""
        line, column = self.pos(node)
        last = node if last is None else last
        end = node_end(last) if last.end_mark.line == node.start_mark.line else None
        return Source(
            text,
            self.path,
            fixed=Position(line, column),
            host_lines=self.lines,
            fixed_end=None if end is None else Position(*end),
        )

    def snippet_source(self, node: yaml.ScalarNode) -> Source:
        """A Source for DSL text held by a scalar, mapping each character to its place in
        the file (`yamlplaces`); where that cannot be told, each line to where it starts."""
        if self.starts is None:
            self.starts = line_starts(self.text)
        runs = scalar_runs(self.text, self.starts, node)
        if runs is not None:
            return Source(node.value, self.path, runs=runs, host_lines=self.lines)
        text = node.value
        line0, col0 = node.start_mark.line, node.start_mark.column
        offsets = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        if node.style in ("|", ">"):
            # block scalars: content starts on the next line, at the block's indentation
            indent = 0
            for i in range(line0 + 1, len(self.lines)):  # no slice: a copy per snippet
                raw = self.lines[i]
                if raw.strip():
                    indent = len(raw) - len(raw.lstrip(" "))
                    break
            runs = [(at, line0 + 2 + i, indent + 1) for i, at in enumerate(offsets)]
        else:
            first = col0 + (1 if node.style in ('"', "'") else 0)
            runs = [(0, line0 + 1, first + 1)]
            runs += [(at, line0 + 1 + i, 1) for i, at in enumerate(offsets) if i]
        return Source(text, self.path, runs=runs, host_lines=self.lines)


def holds_a_dataset(text: str) -> bool:
    """Whether YAML (or JSON) text is a verydia dataset's rows (False when it cannot be
    read as plain data)."""
    try:
        root = compose(text)
    except (yaml.YAMLError, RecursionError):
        return False
    ok = isinstance(root, yaml.SequenceNode) and not check_yaml(root)
    return ok and is_dataset(construct(root))


def _recorded(p: Path) -> str:
    """The hint for a JSON file that reads as no suite: it may be a recording."""
    return (
        f"a recording is named in a suite, in a case: `cassette: {p.name}` (or `trace: "
        f"{p.name}`); `evaldsl inspect {p.name}` shows what it holds"
    )


def _invalid(
    doc: _Doc, line: int, column: int, message: str, hint: str | None, code: str = "E504"
) -> Diagnostic:
    """E504 for text YAML (or JSON) cannot read, or read as something else than meant."""
    return Place(doc.path, line, column, {}, doc.line_text).error(None, code, message, hint)


#: The keys that make a mapping a suite (`is_suite_text`): one misspelt is said by name.
_OWN_KEYS = ("cases", "suite", "expect")


def _no_suite_keys(
    doc: _Doc, root: yaml.Node, top: dict[str, tuple[yaml.Node, yaml.Node]], message: str, hint: str
) -> Diagnostic:
    """E504 for a mapping none of whose keys is a suite's; where one of them is a suite's
    own key misspelt (`casez:`, `Suite:`: `cases` first), it is marked, the hint names
    the key meant and the quick fix renames it (a suite mistyped, not another tool's file)."""
    # (a close guess only: `state:`, `steps:`, `tasks:` of another tool's file are no
    # suite's keys misspelt)
    guesses = {did_you_mean(key.lower(), _OWN_KEYS, 0.8): key for key in reversed(list(top))}
    for guess in _OWN_KEYS:
        key = guesses.get(guess)
        if key is not None:
            knode = top[key][0]
            found = doc.error(knode, "E504", message, f"did you mean `{guess}:`?")
            fix = renaming(doc.key_text(knode, key), key, guess, top)
            return found if fix is None else attrs.evolve(found, fix=fix)
    return doc.error(root, "E504", message, hint)


def yaml_draft(text: str, path: str) -> SuiteDraft:
    """Read a YAML or JSON suite into a draft; problems become diagnostics, never raises."""
    p = Path(path)
    is_json = p.suffix.lower() == ".json"  # (`b.JSON` too)
    doc = _Doc(text, path)
    empty = SuiteDraft(p.stem, path, p.parent)
    try:
        if is_json:
            # JSON.parse reads traceplay's .json suites: what it refuses (comments, single
            # quotes, trailing commas, text after the document) is refused here too
            strict_loads(text.removeprefix("\ufeff"))
        root = compose(text)
    except json.JSONDecodeError as err:
        return attrs.evolve(empty, diagnostics=(_invalid(doc, *json_error(err)),))
    except yaml.MarkedYAMLError as err:
        return attrs.evolve(empty, diagnostics=(_invalid(doc, *yaml_error(err, text, path)),))
    except yaml.reader.ReaderError as err:
        return attrs.evolve(empty, diagnostics=(_invalid(doc, *reader_error(err, text)),))
    except yaml.YAMLError as err:
        return attrs.evolve(
            empty, diagnostics=(Diagnostic.in_file(path, "E504", f"invalid YAML: {err}"),)
        )
    refused = check_yaml(root)
    # a refused construct inside one case keeps that case from running, not the others
    broken = _refused_cases(root, refused) if refused else {}
    if broken is None:
        return attrs.evolve(empty, diagnostics=tuple(_refusal(doc, p) for p in refused))
    readable = _without_cases(root, broken)
    if isinstance(root, yaml.SequenceNode) and is_dataset(doc.value(root)):
        message, hint = dataset_said(p.name, "a suite")
        return attrs.evolve(empty, diagnostics=(doc.error(root, "E504", message, hint),))
    if root is None or not isinstance(root, yaml.MappingNode):
        return attrs.evolve(
            empty,
            diagnostics=(
                doc.error(
                    root,
                    "E504",
                    "a suite is a mapping with a `cases:` list",
                    _recorded(p) if is_json else "add `cases:` with a case",
                ),
            ),
        )
    top = node_fields(root)
    if top and not SUITE_KEYS.intersection(top):
        # (no key is a suite's: a recording or another tool's file, said once, not as an
        # unknown field for each of its keys)
        shown = ", ".join(f"`{key}`" for key in list(top)[:3]) + (", …" if len(top) > 3 else "")
        message = f"this is not an evaldsl suite: none of its keys ({shown}) is a suite's"
        hint = _recorded(p) if is_json else "a suite has `cases:` (a list of cases)"
        if {"version", "suites", "summary"} <= top.keys():  # (what `--json` writes)
            message = "this is an evaldsl run's JSON report (`--json`), not a suite"
            hint = f"run the suites it reports on; `evaldsl diff {p.name} OTHER.json` compares runs"
            return attrs.evolve(empty, diagnostics=(doc.error(root, "E504", message, hint),))
        return attrs.evolve(empty, diagnostics=(_no_suite_keys(doc, root, top, message, hint),))
    diags: list[Diagnostic] = []
    # a problem inside a case is that case's (it alone does not run), any other the suite's
    in_cases = _CaseFinder(_cases_node(root))
    for problem in problems(readable):
        # JSON.parse (traceplay's reader of .json suites) keeps the last duplicate key
        code = "W505" if problem.duplicate and is_json else "E504"
        said = doc.error(problem.node, code, problem.message, problem.hint)
        in_cases.own(problem.node, diags).append(said)
    for key, (knode, _) in top.items():
        # (an `x-` key holds what other keys refer to, its anchors, as in Compose files:
        # traceplay ignores keys it does not read, and a suite may keep anchors there)
        if key not in SUITE_KEYS and not key.startswith(EXTENSION_PREFIX):
            diags.append(doc.unknown_key(knode, key, SUITE_KEYS, "a suite field", top))

    def text_field(name: str) -> str | None:
        if name not in top:
            return None
        value = doc.value(top[name][1])
        if isinstance(value, str):
            return value
        diags.append(doc.error(top[name][1], "E507", f"`{name}` must be a string"))
        return None

    def names_field(name: str) -> frozenset[str] | None:
        if name not in top:
            return None
        value = doc.value(top[name][1])
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if "" not in value:
                return frozenset(value)
            # (an empty name declares nothing a call could have: a slip, as the schema says)
            node = top[name][1]
            items = node.value if isinstance(node, yaml.SequenceNode) else [node]
            empty = next((n for n in items if doc.value(n) == ""), node)
            diags.append(
                doc.error(empty, "E507", f"`{name}` holds an empty name", "remove it or name one")
            )
            return None
        diags.append(doc.error(top[name][1], "E507", f"`{name}` must be a list of names"))
        return None

    suite_name = text_field("suite") or text_field("name") or p.stem
    named = top.get("suite") or top.get("name")
    doc.suite_line = named[0].start_mark.line if named is not None else None
    judge_model = None
    if "judge" in top:
        judge = doc.value(top["judge"][1])
        model = judge.get("model") if isinstance(judge, dict) else judge
        # (a misspelt key beside `model` was dropped unsaid, and an empty name ran the
        # default model unsaid)
        others = [k for k in judge if k != "model"] if isinstance(judge, dict) else []
        if isinstance(model, str) and model.strip() and not others:
            judge_model = model
        else:
            judge_said = "`judge` is a model name or {model: …}"
            if others:
                judge_said += f": {', '.join(f'`{k}`' for k in others)} is no key of it"
            elif isinstance(model, str):
                judge_said += ": the name is empty"
            diags.append(doc.error(top["judge"][1], "E507", judge_said))
    timeout = _timeout(doc, top.get("timeout"), diags)
    header = _expect(doc, top["expect"][1], diags) if "expect" in top else []

    cases: list[CaseDraft] = []
    if "cases" not in top:
        diags.append(
            doc.error(root, "E504", "a suite needs a `cases:` list", "add `cases:` with a case")
        )
    else:
        cnode = top["cases"][1]
        if not isinstance(cnode, yaml.SequenceNode):
            diags.append(doc.error(cnode, "E507", "`cases` must be a list of cases"))
        elif not cnode.value:  # (beside other suites it would vanish from the run unsaid)
            message = f'`cases` is empty: suite "{suite_name}" runs nothing'
            hint = "give it a case (`- name: …`), or remove the file"
            diags.append(doc.error(cnode, "W510", message, hint))
        else:
            for i, item in enumerate(cnode.value, 1):
                doc.case = i - 1
                end = item.end_mark
                # (a block item ends where the next begins: at `  - ` of the next line)
                before = doc.line_text(end.line + 1)[: end.column].strip(" -")
                last = end.line - (1 if not before else 0)
                doc.case_lines.append((item.start_mark.line, max(last, item.start_mark.line)))
                if i - 1 in broken:
                    cases.append(_refused_case(doc, item, i, broken[i - 1]))
                    continue
                inside = in_cases.found.get(i - 1, [])
                cases.append(_case(doc, item, i, diags, bool(header), inside))
    return SuiteDraft(
        name=suite_name,
        path=path,
        base_dir=p.parent,
        tools=names_field("tools"),
        nodes=names_field("nodes"),
        judge_model=judge_model,
        timeout=timeout,
        header=tuple(header),
        cases=tuple(cases),
        diagnostics=tuple(diags),
        layout=doc.layout(),
        notes=_notes(
            {k: doc.value(v) for k, (_, v) in top.items() if k in _SUITE_NOTES}, _SUITE_NOTES
        ),
    )


def _refusal(doc: _Doc, problem: YamlProblem) -> Diagnostic:
    """E510 for a construct `check_yaml` refuses (a tag, a recursive alias, a bomb)."""
    return Diagnostic.in_file(
        doc.path,
        "E510",
        problem.message,
        line=problem.line,
        column=problem.column,
        hint=problem.hint,
        source_line=doc.line_text(problem.line),
    )


def _cases_node(root: yaml.Node | None) -> yaml.SequenceNode | None:
    """The suite's `cases:` list, when it is one."""
    entry = node_fields(root).get("cases")
    return entry[1] if entry is not None and isinstance(entry[1], yaml.SequenceNode) else None


def _refused_cases(
    root: yaml.Node | None, refused: list[YamlProblem]
) -> dict[int, list[YamlProblem]] | None:
    """The cases (0-based) that hold what `check_yaml` refused, each with its problems;
    None when the rest of the document is refused too (then no value of it is built)."""
    cnode = _cases_node(root)
    if cnode is None:
        return None
    broken = {i: found for i, item in enumerate(cnode.value) if (found := check_yaml(item))}
    if not broken or check_yaml(_without_cases(root, broken)):
        return None  # (an alias into a refused case from outside it, a tag in the header)
    return broken


def _without_cases(root: yaml.Node | None, broken: Collection[int]) -> yaml.Node | None:
    """The document without the cases `broken` (0-based): the part whose values are built."""
    cnode = _cases_node(root)
    if not broken or cnode is None or not isinstance(root, yaml.MappingNode):
        return root
    kept = [item for i, item in enumerate(cnode.value) if i not in broken]
    pruned = yaml.SequenceNode(cnode.tag, kept, cnode.start_mark, cnode.end_mark)
    value = [(k, pruned if v is cnode else v) for k, v in root.value]
    return yaml.MappingNode(root.tag, value, root.start_mark, root.end_mark)


def _refused_case(doc: _Doc, node: yaml.Node, index: int, refused: list[YamlProblem]) -> CaseDraft:
    """A case holding a construct `check_yaml` refuses: none of its values is built, and it
    does not run (its name, when written as plain text, is kept for the report)."""
    name_node = node_fields(node).get("name", (None, None))[1]
    name = f"case #{index}"
    if isinstance(name_node, yaml.ScalarNode) and str(name_node.tag).endswith(":str"):
        name = name_node.value or name
    line, _ = doc.pos(node)
    own = tuple(_refusal(doc, p) for p in refused)
    return CaseDraft(name, doc.path, line, None, diagnostics=own)


class _CaseFinder:
    """Which case of the `cases:` list a node is inside, by position."""

    def __init__(self, cnode: yaml.SequenceNode | None) -> None:
        items = cnode.value if cnode is not None else []
        self.starts = [(n.start_mark.line, n.start_mark.column) for n in items]
        self.ends = [(n.end_mark.line, n.end_mark.column) for n in items]
        self.found: dict[int, list[Diagnostic]] = {}  # each case's own problems

    def own(self, node: yaml.Node, suite: list[Diagnostic]) -> list[Diagnostic]:
        """The list a problem at `node` goes to: its case's, or else `suite`."""
        at = (node.start_mark.line, node.start_mark.column)
        i = bisect.bisect_right(self.starts, at) - 1
        if i < 0 or at >= self.ends[i]:
            return suite
        return self.found.setdefault(i, [])


def _timeout(
    doc: _Doc, entry: tuple[yaml.Node, yaml.Node] | None, diags: list[Diagnostic]
) -> float | None:
    if entry is None:
        return None
    value = doc.value(entry[1])
    seconds: float | None = None
    bare = isinstance(value, (int, float)) and not isinstance(value, bool)
    if bare:
        seconds = float(value)
    elif isinstance(value, str):
        seconds = duration_text(value.strip())  # as the grammar reads one: `1e3s` is not
    if seconds is None:
        diags.append(
            doc.error(
                entry[1],
                "E507",
                "`timeout` is a duration such as 30s (or seconds)",
                "write digits and a unit: 30s, 500ms, 1.5m, 1h (no exponent)",
            )
        )
        return None
    problem = timeout_problem(seconds)
    if problem is not None:  # `0s`, `-1`, `.inf`: never "the default"
        diags.append(doc.error(entry[1], "E210", problem, "a duration such as 30s"))
        return None
    if bare and seconds >= LARGE_BARE_TIMEOUT:
        # a number is seconds here (the schema says so), but milliseconds to a cycgraph
        # user (`timeout_ms`): `timeout: 5000` would wait 83 minutes, so it is said
        shown = int(seconds) if seconds.is_integer() else seconds
        diags.append(
            doc.error(
                entry[1],
                "W511",
                f"`timeout: {shown}` is {shown} seconds (about {seconds / 60:.0f} minutes): "
                "a bare number is seconds",
                f"write `{shown}s` if you mean it, or `{shown}ms` for milliseconds",
            )
        )
    return seconds


def _expect(doc: _Doc, node: yaml.Node, diags: list[Diagnostic]) -> list[Snippet]:
    """DSL text: one string, a block, or a list of strings."""
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    snippets = []
    for item in items:
        doc.note_text(item)
        if not isinstance(item, yaml.ScalarNode) or not isinstance(doc.value(item), str):
            misread = (
                misread_mapping(item, doc.text) if isinstance(item, yaml.MappingNode) else None
            )
            if misread is not None:
                diags.append(_invalid(doc, *misread, code="E507"))
                continue
            message = "`expect` holds evaldsl text: a string or a list of strings"
            diags.append(doc.error(item, "E507", message))
            continue
        snippets.append(_dsl(doc, item, diags))
    return snippets


def _dsl(doc: _Doc, node: yaml.ScalarNode, diags: list[Diagnostic]) -> Snippet:
    source = doc.snippet_source(node)
    parsed = parse(source.text, doc.path, start="statements", source=source)
    cut = comment_cut(doc.text, doc.starts or [], node) if parsed.diagnostics else None
    end = (node.end_mark.line + 1, node.end_mark.column)  # the value's last character
    for d in parsed.diagnostics:
        if cut is not None and d.is_error and (d.end_line, d.end_column) >= end:
            # an error at the end of a value YAML cut at ` #`: the cut is the problem
            message = "YAML ends an unquoted value at ` #`: the rest of the line is a comment"
            written = doc.line_text(cut[0])[node.start_mark.column :].rstrip()
            hint = "quote the expression: '" + written.replace("'", "''") + "'"
            diags.append(_invalid(doc, *cut, message, hint))
            cut = None
        else:
            diags.append(d)
    exprs = tuple(s for s in parsed.program.statements if isinstance(s, ast.EXPR_TYPES))
    return Snippet(exprs, source)


def _object(doc: _Doc, item: yaml.Node, value: Any) -> tuple[Snippet, tuple[Diagnostic, ...]]:
    """A traceplay or cycgraph object as a snippet of evaldsl text (no assertions when it
    cannot be converted), and the problems met."""
    text, problems = object_to_dsl(value, doc.place(item))
    notes = _notes(value, _OBJECT_NOTES) if isinstance(value, dict) else ()
    if text is None:
        return Snippet((), doc.fixed_source("", item), notes=notes), tuple(problems)
    src = doc.fixed_source(text, item)
    parsed = parse(text, doc.path, start="statements", source=src)
    exprs = tuple(s for s in parsed.program.statements if isinstance(s, ast.EXPR_TYPES))
    return Snippet(exprs, src, notes=notes), (*problems, *parsed.diagnostics)


#: The fields of a suite, a case and an assertion object that no assertion reads, kept
#: by `evaldsl convert` as comments (`evaluator_agent_id` is also said ignored, W506).
_SUITE_NOTES = ("description",)
#: A suite's keys of its own, which evaldsl does not read (`x-base: &base {…}`): YAML's
#: anchors kept apart from the cases that use them.
EXTENSION_PREFIX = "x-"
_CASE_NOTES = ("description", "tags", "metadata")
_OBJECT_NOTES = ("description", "evaluator_agent_id")


def _notes(fields: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, ...]:
    """`key: value` for each of `keys` written (a value that is not text as JSON)."""
    return tuple(
        f"{key}: {value if isinstance(value, str) else js_json(value)}"
        for key in keys
        if key in fields and (value := fields[key]) is not None
    )


def _rendered(
    doc: _Doc, item: yaml.Node, row: dict[str, Any]
) -> tuple[Snippet, tuple[Diagnostic, ...]]:
    """An object of a case with `each`, rendered for one row and converted."""
    return _object(doc, item, render_value(doc.value(item), row))


def _case(
    doc: _Doc,
    node: yaml.Node,
    index: int,
    diags: list[Diagnostic],
    header: bool,
    inside: list[Diagnostic],
) -> CaseDraft:
    """Case `index` (1-based) of the suite; `inside`: the YAML problems inside it."""
    line, _ = doc.pos(node)
    if not isinstance(node, yaml.MappingNode):
        problem = doc.error(
            node, "E507", f"case #{index} must be a mapping with `name:` and a source"
        )
        return CaseDraft(f"case #{index}", doc.path, line, None, diagnostics=(*inside, problem))
    own: list[Diagnostic] = list(inside)
    fields = node_fields(node)
    for key, (knode, _) in fields.items():
        if key not in CASE_KEYS and key != "kind":
            own.append(doc.unknown_key(knode, key, CASE_KEYS, "a case field", fields))
    name = f"case #{index}"
    if "name" in fields:
        name_node = fields["name"][1]
        name_value = doc.value(name_node)
        if isinstance(name_value, str) and name_value.strip():
            name = name_value
        elif isinstance(name_value, (int, float)) and not isinstance(name_value, bool):
            name = str(name_node.value)  # `name: 42` is "42", as written (the schema agrees)
        elif name_value is None or (isinstance(name_value, str) and not name_value.strip()):
            # (blanks alone are no name: a report line of no name to find the case by)
            # (`case #N` in its place hid a name left out by mistake; no `name:` gives it)
            hint = 'write the name, or remove `name:` for "case #N"'
            own.append(doc.error(name_node, "E507", "`name` is empty", hint))
        else:
            own.append(doc.error(name_node, "E507", "`name` must be text", 'name: "…"'))

    def path_of(key: str) -> tuple[str | None, yaml.Node | None]:
        if key not in fields:
            return None, None
        key_node, value_node = fields[key]
        value = doc.value(value_node)
        start, end = value_node.start_mark, value_node.end_mark
        doc.paths.append(
            PathPlace(
                index - 1,
                key,
                key_node.start_mark.line,
                start.line,
                value if isinstance(value, str) else None,
                (key_node.start_mark.column, key_node.end_mark.column),
                (start.column, end.column if end.line == start.line else None),
            )
        )
        if isinstance(value, str) and value:
            return value, fields[key][0]
        own.append(doc.error(fields[key][1], "E507", f"`{key}` must be a non-empty string"))
        return None, None

    source: SourceSpec | None = None
    dataset: SourceSpec | None = None
    present = [k for k in _SOURCES if k in fields]
    if len([k for k in present if k != "dataset"]) > 1:
        second = [k for k in present if k != "dataset"][1]
        own.append(
            doc.error(
                fields[second][0],
                "E503",
                f'case "{name}" has both `{present[0]}` and `{second}`; a case runs against '
                "one source",
                "split it into two cases",
            )
        )
    for key in present:
        value, key_node = path_of(key)
        if value is None or key_node is None:
            continue
        fmt = None
        if key == "trace" and "format" in fields:
            raw = doc.value(fields["format"][1])
            if isinstance(raw, str):
                fmt = raw
            else:
                own.append(doc.error(fields["format"][1], "E507", "`format` must be a name"))
        src = doc.fixed_source(f"{key} {value}", key_node, fields[key][1])
        if key == "run":
            spec = SourceSpec("run", target=value, source=src)
        else:
            spec = SourceSpec(key, value, None, fmt, src)  # type: ignore[arg-type]
        if key == "dataset":
            dataset = spec
        elif source is None:
            source = spec
    if source is None and dataset is None and not present:  # (a source written wrong: said)
        own.append(
            doc.error(
                node,
                "E503",
                f'case "{name}" has no source',
                "add `cassette: path.jsonl`, `state: path.json`, `run: package.module:function` "
                "or `dataset: rows.json` with `run:`",
            )
        )

    # fields of another source than the case's, refused as `.eval` refuses their lines
    if "input" in fields and "run" not in fields:
        own.append(
            doc.error(
                fields["input"][0],
                "E206",
                "`input` is the input of a `run` target, and this case has none",
                "add `run: package.module:function`, or remove `input`",
            )
        )
    if "timeout" in fields and "run" not in fields and present:
        # (a timeout bounds a `run` target's call: on a recording it bounded nothing, unsaid)
        own.append(doc.error(fields["timeout"][0], "W514", *UNBOUNDED_TIMEOUT))
    if "format" in fields and "trace" not in fields:
        found = next((k for k in present if k != "dataset"), None)
        said = f"a `{found}` case" if found else "this case"
        own.append(
            doc.error(
                fields["format"][0],
                "E206",
                f"`format` names the format of a `trace:` file, and {said} has none",
                "write `trace: FILE` with `format: NAME`, or remove `format` (a `cassette:` "
                "file's format is detected)",
            )
        )

    each = None
    if "each" in fields:
        rows = doc.value(fields["each"][1])
        if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
            each = tuple(rows)
        else:
            own.append(
                doc.error(
                    fields["each"][1],
                    "E507",
                    f'case "{name}" has an invalid `each`: expected a list of row objects',
                    "each: [{city: Paris}, {city: Tokyo}]",
                )
            )

    snippets: list[Snippet] = []
    before = len(own)  # problems before those of the assertions
    if "expect" in fields:
        snippets.extend(_expect(doc, fields["expect"][1], own))
    if "assertions" in fields:
        anode = fields["assertions"][1]
        if not isinstance(anode, yaml.SequenceNode):
            own.append(doc.error(anode, "E507", "`assertions` must be a list"))
        else:
            for item in anode.value:
                doc.note_text(item)
                if isinstance(item, yaml.ScalarNode) and isinstance(doc.value(item), str):
                    snippets.append(_dsl(doc, item, own))
                    continue
                misread = (
                    misread_mapping(item, doc.text) if isinstance(item, yaml.MappingNode) else None
                )
                if misread is not None:  # DSL text with an unquoted `: `, not an object
                    own.append(_invalid(doc, *misread, code="E507"))
                    continue
                snippet, problems = _object(doc, item, doc.value(item))
                # with `each`, traceplay renders the object for each row, then reads it:
                # each row's case is converted again (`template`), and reports its own
                # problems; the template's warnings may be about a placeholder only
                own.extend(d for d in problems if each is None or d.is_error)
                snippets.append(attrs.evolve(snippet, template=partial(_rendered, doc, item)))
    if "assertions" not in fields and "expect" not in fields and dataset is None and not header:
        # traceplay rejects such a case (`… missing an "assertions" array`)
        own.append(
            doc.error(
                node,
                "E506",
                f'case "{name}" has no `assertions:` list',
                "add `assertions:` (traceplay and cycgraph objects) or `expect:` (evaldsl text)",
            )
        )
    elif (
        not any(s.exprs for s in snippets)
        and dataset is None
        and not header
        # a case whose assertions did not read says so: not also "always passes" (as
        # `.eval` leaves W504 out beside a syntax error)
        and not any(d.is_error for d in own[before:])
    ):
        own.append(
            doc.error(
                node,
                "W504",
                f'case "{name}" has no assertions: it checks nothing '
                "(a case without assertions passes when its run succeeds)",
                "add `expect:` text or `assertions:`",
            )
        )
    timeout = _timeout(doc, fields.get("timeout"), own)
    input_value = doc.value(fields["input"][1]) if "input" in fields else MISSING
    return CaseDraft(
        name=name,
        path=doc.path,
        line=line,
        source=source,
        input=input_value,
        each=each,
        timeout=timeout,
        snippets=tuple(snippets),
        dataset=dataset,
        diagnostics=tuple(own),
        notes=_notes(
            {k: doc.value(v) for k, (_, v) in fields.items() if k in _CASE_NOTES}, _CASE_NOTES
        ),
    )


__all__ = ["Span", "yaml_draft"]
