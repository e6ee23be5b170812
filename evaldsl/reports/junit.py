"""JUnit XML report: a `Report` as the test-result file CI systems read.

Takes a `Report` and gives JUnit XML in the common Ant/Surefire dialect that Jenkins,
GitLab and the GitHub Actions test reporters read:

- `<testsuites>` holds one `<testsuite>` per suite file (`name`, `file`, `tests`,
  `failures`, `errors`, `skipped`, `time` in seconds), and the totals but `skipped`;
- one `<testcase>` per case (`classname` = suite name, with its file when suites of other
  files share it: `common.suite_labels`; `name` = case name, `time`);
- a case gets at most one outcome element, the first that applies:
  `<error>` when its run crashed or an assertion errored, `<failure>` when an assertion
  failed, `<skipped>` when every assertion was skipped. The element's text lists each
  failing or erroring assertion as `path:line:col: <text>`, its message, found, expected;
- a case chosen to run that did not (Ctrl-C stopped the run first) gets a `<testcase>`
  with an `<error type="interrupted">`: an error, not `<skipped>`, because CI shows a
  skipped test as not failing (GitHub's test reporters list it as neutral, Jenkins keeps
  the build green), and a run cut short must not look like a clean one;
- a suite whose loading or checking found errors gets one more `<testcase>` named after
  the file, with an `<error>` holding the rendered diagnostics, unless every case of the
  suite already is an error for them (not run for its check errors): the errors are then
  counted once, by the cases, and the rendered diagnostics go to the suite's
  `<system-out>`, where warnings only go too.

Counts always match the elements, so `failures + errors + skipped <= tests`. Only the
attributes Jenkins' xUnit schema (junit-10.xsd) allows are written, so the file passes
its validation as well as GitLab's and the GitHub Actions reporters' parsers.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from evaldsl.language.diagnostics import render
from evaldsl.reports import common
from evaldsl.runner.results import CaseResult, Report, SuiteResult
from evaldsl.suites.build import check_errors_of

# Characters XML 1.0 forbids anywhere (C0 controls but tab, LF and CR; lone surrogates;
# U+FFFE and U+FFFF). ElementTree escapes markup but writes these as they are, which
# makes a file no parser accepts: they are written as escapes instead.
_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

#: The `<testsuites name>` every report carries.
TOOL_NAME = "evaldsl"


def clean(text: str) -> str:
    """`text` with the characters XML 1.0 forbids written as escapes (`\\x1b`, `\\ud800`):
    a case named with a lone surrogate keeps its name, readable, in a file any parser takes.

    >>> print(clean("a\\x00b\\x1bc\\ud800"))
    a\\x00b\\x1bc\\ud800
    """
    return _FORBIDDEN.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def to_junit_text(report: Report) -> str:
    """The `--junit` report: an XML declaration and `<testsuites>`, ending in a newline.

    >>> to_junit_text(Report(suites=(), duration_ms=0.0)).splitlines()[1][:30]
    '<testsuites name="evaldsl" tes'
    """
    root = to_element(report)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def to_element(report: Report) -> ET.Element:
    """The `<testsuites>` element of a report."""
    root = ET.Element("testsuites", {"name": TOOL_NAME})
    # No `skipped` total here: Jenkins' schema does not allow one on <testsuites>.
    totals = dict.fromkeys(("tests", "failures", "errors"), 0)
    labels = common.suite_labels(report.suites)  # (suites of one name: with their files)
    for suite in report.suites:
        element = _suite(suite, labels[suite.path])
        root.append(element)
        for key in totals:
            totals[key] += int(element.get(key, "0"))
    for key, count in totals.items():
        root.set(key, str(count))
    root.set("time", common.seconds(report.duration_ms))
    return root


def _suite(suite: SuiteResult, label: str) -> ET.Element:
    element = ET.Element(
        "testsuite",
        {"name": clean(label), "file": clean(suite.path)},
    )
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    key_of = {"failed": "failures", "error": "errors", "skipped": "skipped"}
    for case in suite.cases:
        element.append(_case(label, case))
        counts["tests"] += 1
        kind = common.outcome(case)
        if kind in key_of:
            counts[key_of[kind]] += 1
    for name in suite.not_run:
        element.append(_not_run_case(label, name))
        counts["tests"] += 1
        counts["errors"] += 1
    if suite.errors and not _told_by_cases(suite):
        element.append(_diagnostics_case(suite, label))
        counts["tests"] += 1
        counts["errors"] += 1
    elif suite.diagnostics:
        out = ET.SubElement(element, "system-out")
        out.text = clean(render(suite.diagnostics))
    for key, count in counts.items():
        element.set(key, str(count))
    element.set("time", common.seconds(suite.duration_ms))
    return element


def _told_by_cases(suite: SuiteResult) -> bool:
    """Whether the suite's check errors are already its cases' errors, so that one more
    testcase would count the same errors again (its diagnostics go to `<system-out>`):
    every case was not run for them (the header's), or the cases not run for check errors
    of their own (`not run: 1 check error (first: …)`) count them all, the others having
    run (a case deselected by `-k` tells none: then the testcase says them)."""
    if not suite.cases:
        return False
    if all(
        c.error is not None and c.error.startswith("not run") and not c.assertions
        for c in suite.cases
    ):
        return True
    return sum(check_errors_of(c.error) for c in suite.cases) >= len(suite.errors)


def _case(label: str, case: CaseResult) -> ET.Element:
    element = ET.Element(
        "testcase",
        {
            "classname": clean(label),
            "name": clean(case.name),
            "time": common.seconds(case.duration_ms),
        },
    )
    kind = common.outcome(case)
    if kind == "passed":
        return element
    if kind == "skipped":
        reasons = {a.message for a in case.assertions if a.message}
        child = ET.SubElement(element, "skipped")
        child.set("message", clean("; ".join(sorted(reasons)) or "every assertion was skipped"))
        return element
    child = ET.SubElement(element, "error" if kind == "error" else "failure")
    child.set("type", "crash" if case.error is not None else "assertion")
    child.set("message", clean(_message(case)))
    child.text = clean(_details(case))
    return element


def _not_run_case(label: str, name: str) -> ET.Element:
    """A case the run did not reach (Ctrl-C stopped it first), as an error."""
    element = ET.Element(
        "testcase", {"classname": clean(label), "name": clean(name), "time": "0.000"}
    )
    child = ET.SubElement(element, "error")
    child.set("type", "interrupted")
    child.set("message", common.NOT_RUN)
    return element


def _message(case: CaseResult) -> str:
    """One line for the outcome's `message`: the crash, or the first problem and a count,
    each at most `common.VALUE_LIMIT` characters and saying how many more it had."""
    if case.error is not None:
        return common.headline(case.error.splitlines()[0]) if case.error else "the run crashed"
    found = common.problems(case)
    if not found:
        return "the case did not pass"
    first = found[0].message.splitlines()[0] if found[0].message else found[0].text
    more = len(found) - 1
    # cut as the console's headline is; the element's text keeps the whole message
    return common.headline(first) + (f" (and {more} more)" if more else "")


def _details(case: CaseResult) -> str:
    """The outcome's text: the crash, then each failing or erroring assertion."""
    blocks: list[str] = []
    if case.error is not None:
        blocks.append(f"error: {case.error}")
    for a in common.problems(case):
        lines = [f"{common.location(a)}: {a.text}", f"  {a.status}: {a.message}"]
        if common.has_values(a):
            lines.append(f"  found: {common.found(a, None)}")
            lines.append(f"  expected: {common.expected(a, None)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _diagnostics_case(suite: SuiteResult, label: str) -> ET.Element:
    element = ET.Element(
        "testcase",
        {"classname": clean(label), "name": clean(suite.path), "time": "0.000"},
    )
    errors = suite.errors
    first = errors[0]
    more = len(errors) - 1
    child = ET.SubElement(element, "error")
    child.set("type", "load" if first.code.startswith("E5") else "check")
    child.set(
        "message",
        clean(first.brief + (f" (and {more} more)" if more else "")),
    )
    child.text = clean(render(suite.diagnostics))
    return element
