"""`check --format github|sarif`: GitHub workflow commands and SARIF 2.1.0.

The GitHub commands are parsed back the way the Actions runner parses them (split, then
unescape) to show that nothing a path or a message holds can break a command. The SARIF
logs are validated against the official SARIF 2.1.0 JSON schema, vendored in
tests/data/sarif/ (see the README there), so the test needs no network.
"""

# No `from __future__ import annotations` here: it would clash with the imported
# `evaldsl.reports.annotations` module.
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import evaldsl
from evaldsl.language.diagnostics import CODES, Diagnostic
from evaldsl.reports import annotations
from evaldsl.suites.build import load_suite

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA_PATH = Path(__file__).parent / "data" / "sarif" / "sarif-schema-2.1.0.json"


def diag(
    message: str = 'unknown tool "get_wether"',
    *,
    code: str = "E301",
    severity: Any = None,
    path: str = "suite.eval",
    line: int = 3,
    column: int = 8,
    end_line: int | None = None,
    end_column: int | None = None,
    hint: str | None = None,
    source_line: str = "",
) -> Diagnostic:
    d = Diagnostic.in_file(
        path,
        code,
        message,
        line=line,
        column=column,
        hint=hint,
        source_line=source_line,
        severity=severity,
    )
    return Diagnostic(
        code=d.code,
        severity=d.severity,
        message=d.message,
        path=d.path,
        line=d.line,
        column=d.column,
        end_line=end_line if end_line is not None else d.end_line,
        end_column=end_column if end_column is not None else d.end_column,
        hint=d.hint,
        source_line=d.source_line,
    )


# -- GitHub workflow commands, parsed back as the runner does ---------------------------


def _unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(text: str) -> str:
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """`::name k=v,k=v::data` → (name, properties, data), unescaped (the runner's rules:
    the command ends at the first `::` after the start; properties split at `,`, each at
    its first `=`)."""
    assert line.startswith("::"), line
    end = line.index("::", 2)
    head, data = line[2:end], line[end + 2 :]
    name, _, props_text = head.partition(" ")
    props: dict[str, str] = {}
    for pair in props_text.split(","):
        key, eq, value = pair.partition("=")
        assert eq, f"property without `=` in {line!r}"
        props[key] = _unescape_property(value)
    return name, props, _unescape_data(data)


def test_github_command_for_one_diagnostic() -> None:
    text = annotations.render([diag()], "github")
    assert text == (
        "::error file=suite.eval,line=3,col=8,endLine=3,endColumn=9,title=evaldsl E301"
        '::unknown tool "get_wether"'
    )


@pytest.mark.parametrize(
    ("severity", "command"), [("error", "error"), ("warning", "warning"), ("info", "notice")]
)
def test_github_severity_becomes_the_command(severity: Any, command: str) -> None:
    name, _, _ = parse_command(annotations.render([diag(severity=severity)], "github"))
    assert name == command


def test_github_message_includes_the_hint() -> None:
    d = diag(hint="did you mean `get_weather`?")
    text = annotations.render([d], "github")
    assert "\n" not in text
    assert text.endswith('::unknown tool "get_wether"%0Ahint: did you mean `get_weather`?')
    assert parse_command(text)[2] == 'unknown tool "get_wether"\nhint: did you mean `get_weather`?'


@pytest.mark.parametrize(
    "message",
    [
        "100% sure",
        "a %0A that is text, not a newline",
        "two\nlines",
        "windows\r\nline end",
        "a :: in the message, and a, comma: here",
        "%25%%",
        "naïve ☔ \U0001f600",
    ],
)
def test_github_message_escaping_round_trips(message: str) -> None:
    text = annotations.render([diag(message, hint="50% off\r\nnow")], "github")
    assert "\n" not in text and "\r" not in text
    assert text.count("::") == 2 + message.count("::")
    _, props, data = parse_command(text)
    assert data == f"{message}\nhint: 50% off\r\nnow"
    assert props["title"] == "evaldsl E301"


def test_github_message_escapes_exactly() -> None:
    d = diag("50%\r\nx: y, z")
    data = annotations.render([d], "github").split("::", 2)[2]
    assert data == "50%25%0D%0Ax: y, z"  # `:` and `,` stay as they are in the message


@pytest.mark.parametrize(
    "path",
    ["dir/a,b.eval", "C:/work/suite.eval", "we:ird,na%me.yaml", "line\nbreak.eval", "ü.eval"],
)
def test_github_property_escaping_round_trips(path: str) -> None:
    text = annotations.render([diag(path=path)], "github")
    assert "\n" not in text
    head = text[2 : text.index("::", 2)]
    assert ":" not in head and head.count(",") == 5  # only the separators remain
    _, props, _ = parse_command(text)
    assert props["file"] == path
    assert props == {
        "file": path,
        "line": "3",
        "col": "8",
        "endLine": "3",
        "endColumn": "9",
        "title": "evaldsl E301",
    }


def test_github_property_escapes_exactly() -> None:
    assert annotations.escape_property("a:b,c%d\ne\rf") == "a%3Ab%2Cc%25d%0Ae%0Df"
    assert annotations.escape_data("a:b,c%d\ne\rf") == "a:b,c%25d%0Ae%0Df"


def test_github_paths_are_relative_to_the_base(tmp_path: Path) -> None:
    inside = tmp_path / "suites" / "a.eval"
    text = annotations.render([diag(path=str(inside))], "github", base=tmp_path)
    assert parse_command(text)[1]["file"] == "suites/a.eval"
    text = annotations.render([diag(path="./suites/../b.eval")], "github", base=tmp_path)
    assert parse_command(text)[1]["file"] == "b.eval"


def test_github_multi_line_span_has_no_columns() -> None:
    text = annotations.render([diag(line=2, column=5, end_line=4, end_column=3)], "github")
    _, props, _ = parse_command(text)
    assert props["line"] == "2" and props["endLine"] == "4"
    assert "col" not in props and "endColumn" not in props


def test_github_one_line_per_diagnostic_sorted() -> None:
    ds = [diag(path="b.eval", line=1), diag(path="a.eval", line=9), diag(path="a.eval", line=2)]
    lines = annotations.render(ds, "github").split("\n")
    assert [(parse_command(x)[1]["file"], parse_command(x)[1]["line"]) for x in lines] == [
        ("a.eval", "2"),
        ("a.eval", "9"),
        ("b.eval", "1"),
    ]


def test_unknown_format_is_an_error() -> None:
    with pytest.raises(ValueError, match="github, sarif"):
        annotations.render([], "xml")  # type: ignore[arg-type]


# -- SARIF, validated against the official schema -----------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> Any:
    schema = json.loads(SARIF_SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    # every format the installed checkers know (`uri`, `uri-reference` with
    # rfc3986-validator installed), not only draft-04's
    return cls(schema, format_checker=jsonschema.FormatChecker())


def validate(validator: Any, text: str) -> dict[str, Any]:
    log = json.loads(text)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    assert isinstance(log, dict)
    return log


def test_vendored_schema_is_the_official_one() -> None:
    schema = json.loads(SARIF_SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert schema["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"


def test_schema_rejects_a_broken_log(sarif_validator: Any) -> None:
    """The validator is live: a log missing `message` or with a bad level fails."""
    log = json.loads(annotations.render([diag()], "sarif"))
    del log["runs"][0]["results"][0]["message"]
    assert not sarif_validator.is_valid(log)
    log = json.loads(annotations.render([diag()], "sarif"))
    log["runs"][0]["results"][0]["level"] = "info"
    assert not sarif_validator.is_valid(log)
    log = json.loads(annotations.render([diag()], "sarif"))
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert not sarif_validator.is_valid(log)


def test_empty_sarif_log_validates(sarif_validator: Any) -> None:
    log = validate(sarif_validator, annotations.render([], "sarif"))
    run = log["runs"][0]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []


def test_sarif_shape(sarif_validator: Any, tmp_path: Path) -> None:
    ds = [
        diag(path=str(tmp_path / "suites" / "w.eval"), hint="did you mean `get_weather`?"),
        diag("assertion can never fail", code="W601", path="a.yaml", line=1, column=1),
        diag("unknown node", code="E302", path="a.yaml", line=5),
        diag("just so you know", code="E302", severity="info", path="a.yaml", line=7),
    ]
    log = validate(sarif_validator, annotations.render(ds, "sarif", base=tmp_path))
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "evaldsl" and driver["version"] == evaldsl.__version__
    assert driver["informationUri"] == annotations.INFORMATION_URI
    assert run["columnKind"] == "utf16CodeUnits"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == ["E301", "E302", "W601"]  # one per code used
    assert all(r["shortDescription"]["text"] == CODES[r["id"]] for r in rules)
    assert [r["defaultConfiguration"]["level"] for r in rules] == ["error", "error", "warning"]
    results = run["results"]
    assert len(results) == 4
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    by_line = {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        ): r
        for r in results
    }
    assert by_line[("a.yaml", 1)]["level"] == "warning"
    assert by_line[("a.yaml", 5)]["level"] == "error"
    assert by_line[("a.yaml", 7)]["level"] == "note"
    first = by_line[("suites/w.eval", 3)]
    assert first["message"]["text"] == (
        'unknown tool "get_wether"\nhint: did you mean `get_weather`?'
    )
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3,
        "startColumn": 8,
        "endLine": 3,
        "endColumn": 9,
    }


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("suite.eval", "suite.eval"),
        ("./dir/sub/../suite.eval", "dir/suite.eval"),
        ("dir/my suite.yaml", "dir/my%20suite.yaml"),
        ("c:suite.eval", "c%3Asuite.eval"),  # a `:` would read as a URI scheme
        ("a,b#c?.eval", "a%2Cb%23c%3F.eval"),
        ("météo/☔.eval", "m%C3%A9t%C3%A9o/%E2%98%94.eval"),
        ("<string>", "%3Cstring%3E"),
    ],
)
def test_sarif_uris_are_relative_posix_references(
    sarif_validator: Any, path: str, uri: str
) -> None:
    log = validate(sarif_validator, annotations.render([diag(path=path)], "sarif"))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == uri


def test_sarif_uri_outside_the_base_is_a_file_uri(sarif_validator: Any, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "x.eval"
    log = validate(
        sarif_validator,
        annotations.render([diag(path=str(outside))], "sarif", base=tmp_path / "repo"),
    )
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri["uri"] == outside.as_uri()


def test_sarif_uri_formats_are_checked(sarif_validator: Any) -> None:
    """With rfc3986-validator installed the `uri-reference` format is enforced too."""
    import rfc3986_validator  # noqa: F401  (a dev dependency: without it the format is unchecked)

    log = json.loads(annotations.render([diag()], "sarif"))
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = (
        "a b:c"
    )
    assert not sarif_validator.is_valid(log)


def test_sarif_columns_are_utf16_code_units(sarif_validator: Any) -> None:
    # `😀` is 1 code point and 2 UTF-16 code units; `é` is 1 and 1.
    line = 'answer contains "😀é" and tool get_wether called'
    column = line.index("get_wether") + 1
    d = diag(line=1, column=column, end_column=column + len("get_wether"), source_line=line)
    log = validate(sarif_validator, annotations.render([d], "sarif"))
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == column + 1
    assert region["endColumn"] == column + 1 + len("get_wether")
    prefix = line[: column - 1]
    assert region["startColumn"] - 1 == len(prefix.encode("utf-16-le")) // 2


def test_sarif_columns_without_line_text_or_past_the_end(sarif_validator: Any) -> None:
    plain = diag(line=2, column=4, end_column=6)
    past_end = diag(line=2, column=5, end_column=6, source_line="😀")  # the end of the line
    multi = diag(line=1, column=2, end_line=3, end_column=4, source_line="😀xyz")
    empty = diag(line=2, column=5, end_column=5, source_line="ab")  # an insertion point
    log = validate(sarif_validator, annotations.render([plain, past_end, multi, empty], "sarif"))
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in log["runs"][0]["results"]]
    assert regions == [
        {"startLine": 1, "startColumn": 3, "endLine": 3, "endColumn": 4},
        {"startLine": 2, "startColumn": 4, "endLine": 2, "endColumn": 6},
        # (one place and code: the shorter first, `diagnostics.sort_key`)
        {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 5},
        {"startLine": 2, "startColumn": 6, "endLine": 2, "endColumn": 7},
    ]


def test_sarif_clamps_impossible_positions(sarif_validator: Any) -> None:
    d = diag(line=0, column=0, end_line=0, end_column=0)
    log = validate(sarif_validator, annotations.render([d], "sarif"))
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}


def test_sarif_message_text_keeps_every_character(sarif_validator: Any) -> None:
    message = 'bad "quote" \\ back\nslash ☔ \U0001f600 %0A <tag> & ::'
    log = validate(sarif_validator, annotations.render([diag(message)], "sarif"))
    assert log["runs"][0]["results"][0]["message"]["text"] == message


# -- real diagnostics from the failing examples ------------------------------------------


FAILING = ["examples-failing/mistakes.yaml", "examples-failing/mistakes.eval"]


@pytest.fixture(scope="module")
def real_diagnostics() -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for name in FAILING:
        found.extend(load_suite(ROOT / name).diagnostics)
    assert len({d.code for d in found}) >= 3
    return found


def test_real_diagnostics_as_sarif(
    sarif_validator: Any, real_diagnostics: list[Diagnostic]
) -> None:
    log = validate(sarif_validator, annotations.render(real_diagnostics, "sarif", base=ROOT))
    results = log["runs"][0]["results"]
    assert len(results) == len(real_diagnostics)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris <= set(FAILING)
    assert any(r["ruleId"] == "E508" and "`path`" in r["message"]["text"] for r in results)


def test_real_diagnostics_as_github(real_diagnostics: list[Diagnostic]) -> None:
    lines = annotations.render(real_diagnostics, "github", base=ROOT).split("\n")
    assert len(lines) == len(real_diagnostics)
    wanted = sorted(
        (
            d.path if not Path(d.path).is_absolute() else Path(d.path).relative_to(ROOT).as_posix(),
            str(d.line),
            d.message + (f"\nhint: {d.hint}" if d.hint else ""),
        )
        for d in real_diagnostics
    )
    got = sorted((p["file"], p["line"], data) for _, p, data in map(parse_command, lines))
    assert got == wanted


def test_sarif_carries_a_diagnostics_fix_in_utf16_columns(sarif_validator: Any) -> None:
    """The did-you-mean of an unknown tool after an emoji: its fix replaces the name,
    at UTF-16 columns, and validates against the schema; a diagnostic without a fix has
    no `fixes`."""
    text = 'tools get_weather\nanswer contains "😀" and tool get_wether called\n'
    _, _, _, found = evaldsl.diagnose(text, "x.eval")
    (unknown,) = [d for d in found if d.code == "E301"]
    assert unknown.fix is not None and unknown.fix.text == "get_weather"
    bare = Diagnostic.in_file("x.eval", "E101", "no fix", source_line="x")
    log = validate(sarif_validator, annotations.render([unknown, bare], "sarif"))
    plain, fixed = sorted(log["runs"][0]["results"], key=lambda r: r["ruleId"])
    assert "fixes" not in plain
    (change,) = fixed["fixes"][0]["artifactChanges"]
    (replacement,) = change["replacements"]
    region = replacement["deletedRegion"]
    line = text.splitlines()[1]
    start = len(line[: line.index("get_wether")].encode("utf-16-le")) // 2 + 1
    assert (region["startLine"], region["startColumn"]) == (2, start)
    assert region["endColumn"] == start + len("get_wether")
    assert replacement["insertedContent"]["text"] == "get_weather"
    assert fixed["fixes"][0]["description"]["text"] == "did you mean `get_weather`?"


def test_github_cuts_a_huge_message_as_the_console_does_and_sarif_keeps_it() -> None:
    huge = "found the text " + "x" * 100_000
    d = Diagnostic.in_file("a.eval", "E205", huge, hint="y" * 100_000)
    (line,) = annotations.render([d], "github").splitlines()
    assert len(line) < 1_500 and "characters not shown" in line and "%0Ahint: yyy" in line
    sarif = json.loads(annotations.render([d], "sarif"))
    assert sarif["runs"][0]["results"][0]["message"]["text"] == f"{huge}\nhint: {'y' * 100_000}"
