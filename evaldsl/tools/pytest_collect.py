"""pytest collectors and items for evaldsl suites, registered by the plugin once it is on.

Takes the suite files pytest walks past and gives one `SuiteFile` collector per file and
one `CaseItem` per case, named as `evaldsl run` names them (an `each` row or a dataset
row is its own item, with its id: `weather.eval::each city #1 [city=Xiamen]`; a `::` in a
name is written `: :`, as pytest splits ids there). Only the pipeline's public functions
are used: `read_draft`, `check_suite` and `compile_suite` read, check and compile a file
(as `load_suite`, keeping each case's own diagnostics), `begin_case` runs one case (up
to its judge's answers), and the console renderer shows why one failed.

- A case with check errors (its own: a typo, a bad regex, a missing recording) is an
  item that fails with them, as `evaldsl run` reports it (`not run: 1 check error
  (first: …)`), and the file's other cases run. Errors no case carries (the suite-level
  assertions', a file that is no suite or cannot be read) are a collection error of the
  file listing every diagnostic. Warnings become pytest warnings at their file and line;
  where the warning filters make them errors (`-W error`, `filterwarnings = error`), a
  case's own fail that case, not run, and one no case carries is a collection error of
  the file listing it.
- A case fails with the console's report of each failing assertion (source line, caret,
  found, expected), or of the run's crash; a case whose assertions all skipped is skipped
  with their reason; its score is a `user_properties` entry (JUnit `<property>`).
- Items carry the `evaldsl` marker, plus `evaldsl_judge` (uses the LLM judge) and
  `evaldsl_live` (calls a Python target), so `-m` selects them; `-k` (which also
  matches the suite's name), `--lf` and pytest-xdist work as for any test.
- A case that asks the judge begins the next ones this session runs that ask it too
  (recorded cases only, `waiting.MAX_JUDGING` in all), so their questions are on their
  way while it waits for its own answers, as `evaldsl run` overlaps them. Not in a
  pytest-xdist worker, which is given its items one by one.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import os
import re
import warnings
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from evaldsl.gcpause import paused_gc
from evaldsl.judge.config import JudgeConfigError
from evaldsl.judge.plan import judge_from_options
from evaldsl.judge.protocol import Judge
from evaldsl.language.diagnostics import Diagnostic, render, sort_key
from evaldsl.language.printable import visible
from evaldsl.language.reading import YAML_SUFFIXES
from evaldsl.reports import ConsoleReporter, outcome
from evaldsl.runner import waiting
from evaldsl.runner.core import begin_case
from evaldsl.runner.live import is_live
from evaldsl.runner.readings import SharedReadings
from evaldsl.runner.results import AssertionResult, CaseResult
from evaldsl.runs.heldfiles import held_value, hold, reading_once
from evaldsl.suites import Case, Suite
from evaldsl.suites.build import check_suite, compile_suite
from evaldsl.suites.files import is_suite_file, read_draft

if TYPE_CHECKING:  # live targets' worker processes: loaded for a live case only
    from evaldsl.runner.targets import TargetWorkers


class EvalDslWarning(UserWarning):
    """A warning `evaldsl check` reports for a collected suite (W301, W504, …)."""


class CaseFailed(Exception):
    """A case that failed or errored; carries its result for the failure report."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.name)
        self.result = result


#: The command-line option naming the judge's cache folder (`evaldsl run --judge-cache`).
CACHE_OPTION = "--evaldsl-judge-cache"


class SuiteCollector:
    """The plugin's hooks once it is on: which files are suites, and the session's judge
    (built once per process from `--evaldsl-judge` and `--evaldsl-judge-cache`)."""

    #: The name the plugin registers it under.
    NAME = "evaldsl-suites"

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._judge: Judge | None = None
        self._workers: TargetWorkers | None = None
        # the run the last reading held (a recording read whole by a case's check, for
        # that case's run: `runs.heldruns`), carried from reading to reading
        self._held: object = None

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A reading of recordings (`heldfiles.reading_once`: a file's collection, a
        case's run) holding the run the last one held, as one `evaldsl run` holds it
        from a case's check to its run: a large JSON recording was read again by each
        case's run, a collection apart. (Small files are kept for one reading only: a
        test may rewrite one between the collection and a case's run.)"""
        with reading_once():
            if self._held is not None:  # (within an outer reading: its own stays)
                hold(self._held)
                self._held = None
            try:
                yield
            finally:
                # (None when a run took it, or a live target or a larger file let go of it)
                self._held = held_value()

    def workers(self) -> TargetWorkers:
        """The target workers of this process's live cases, made at the first one and
        kept for the session (one worker kept between the cases of a suite folder, as
        `evaldsl run` keeps it, not one started and stopped for each case)."""
        if self._workers is None:
            from evaldsl.runner.targets import TargetWorkers

            self._workers = TargetWorkers()
        return self._workers

    def pytest_sessionstart(self) -> None:
        # the judge's settings checked before anything is collected: a usage error (not
        # at configure, where `pytest --help` would stop at them too)
        self.judge()

    def pytest_sessionfinish(self) -> None:
        self._held = None
        workers, self._workers = self._workers, None
        if workers is not None:
            workers.close()

    def judge(self) -> Judge:
        """The judge every suite of this process shares (its cache and its settings):
        `pytest.UsageError` when they cannot be used (asked when the session starts, so
        it stops before collecting, as `evaldsl run` stops before running)."""
        if self._judge is None:
            given = self.config.getoption("evaldsl_judge_cache")
            if given == "":  # (else the folder pytest started in, written into)
                raise pytest.UsageError(
                    f"{CACHE_OPTION} '': an empty path names no folder; name the judge's "
                    "cache folder"
                )
            # a folder given on the command line is relative to where pytest started;
            # the default belongs to the project, so it sits under the rootdir
            cache = (
                self.config.invocation_params.dir / given
                if given is not None
                else self.config.rootpath / ".evaldsl" / "judge-cache"
            )
            try:
                self._judge = judge_from_options(self.config.getoption("evaldsl_judge"), str(cache))
            except JudgeConfigError as err:  # (a traceback in every suite file's collection)
                said = str(err)  # (`--judge-cache` is the CLI's name of the option)
                if said.startswith("--judge-cache "):
                    said = CACHE_OPTION + said.removeprefix("--judge-cache")
                raise pytest.UsageError(said) from None
        return self._judge

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # the judged, recorded cases this session runs, in the order it runs them (`-k`,
        # `--lf` and reordering plugins have had their say): each begins the next ones
        if hasattr(self.config, "workerinput"):  # a pytest-xdist worker: not its order
            return
        ahead = [
            item
            for item in session.items
            if isinstance(item, CaseItem) and item.case.judged and not is_live(item.case)
        ]
        for position, item in enumerate(ahead):
            item.ahead = (ahead, position)

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        if not wants(file_path, self.config, named=parent.session.isinitpath(file_path)):
            return None
        return SuiteFile.from_parent(parent, path=file_path)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        # A skip raised in `runtest` would be reported at this module's line: point it
        # at the case's `case` line instead, as pytest does for its own skip markers.
        if isinstance(item, CaseItem) and report.skipped and call.excinfo is not None:
            reason = str(getattr(call.excinfo.value, "msg", call.excinfo.value))
            report.longrepr = (shown_path(item.path, self.config), item.case.line, reason)
        return report


def collector(config: pytest.Config) -> SuiteCollector:
    """The plugin's hooks of this session (registered once it is on)."""
    plugin = config.pluginmanager.get_plugin(SuiteCollector.NAME)
    assert isinstance(plugin, SuiteCollector)
    return plugin


def wants(file_path: Path, config: pytest.Config, *, named: bool) -> bool:
    """Whether a file is a suite to collect: every `.eval` file (but an Inspect AI log,
    a ZIP archive of the same extension); a YAML or JSON file that an `evaldsl_suites`
    glob matches, or that was named on the command line."""
    if file_path.suffix.lower() == ".eval":
        return is_suite_file(file_path)
    if file_path.suffix.lower() not in YAML_SUFFIXES:
        return False
    if named:
        return True
    return any(_matches(file_path, glob, config.rootpath) for glob in _globs(config))


def _globs(config: pytest.Config) -> list[str]:
    value: Any = config.getini("evaldsl_suites")
    return [str(v) for v in value]


def _matches(path: Path, glob: str, root: Path) -> bool:
    """A glob without `/` matches the file name; one with `/` the path relative to the
    rootdir (`*` crosses folders, as in `fnmatch`): as pytest walked to it (a folder of
    the rootdir that is a symbolic link to shared suites: `suites/*.yaml` names them,
    where their resolved path is outside the rootdir), or with links resolved.

    >>> _matches(Path("/p/suites/s.yaml"), "suites/*.yaml", Path("/p"))
    True
    """
    pattern = glob.removeprefix("./")
    relatives = []
    for given, base in ((path.absolute(), root.absolute()), (path.resolve(), root.resolve())):
        try:
            relatives.append(given.relative_to(base).as_posix())
        except ValueError:
            continue
    return any(fnmatch.fnmatch(r, pattern) for r in relatives or [path.as_posix()])


def shown_path(path: str | os.PathLike[str], config: pytest.Config) -> str:
    """A path as pytest shows paths: relative to where pytest was started, if under it."""
    target = Path(path)
    try:
        return target.relative_to(config.invocation_params.dir).as_posix()
    except ValueError:
        return str(target)


def item_name(case_name: str) -> str:
    """A case's name as its item's name: pytest splits node ids at `::`, so each `::` is
    written `: :` (an id printed can be given back on the command line); control
    characters are written as escapes, as pytest writes them in its own parameters' ids
    (pytest prints ids as they are: an escape sequence in a name acted on the terminal).

    >>> item_name("lookup::retry")
    'lookup: :retry'
    >>> item_name("a:::b")
    'a: : :b'
    >>> print(item_name("clear\\x1b[2J\\rnow"))
    clear\\x1b\\x5b2J\\x0dnow
    """
    return bracketed(visible(re.sub(r":(?=:)", ": ", case_name), newlines=False))


def bracketed(name: str) -> str:
    """A name pytest reads back as it is: pytest takes a node id's first `[` for the start
    of its parameters, which it closes with a `]` at the end, so a name holding `[` but
    not ending in `]` was shown in the summary and written in JUnit XML with a `]` added
    (`x [a] y]`, an id that finds nothing); its `[`s are written `\\x5b`, as control
    characters are written, and a row's `[city=Tokyo]` is kept.

    >>> print(bracketed("retry [slow] path"), bracketed("each city #1 [city=Tokyo]"))
    retry \\x5bslow] path each city #1 [city=Tokyo]
    """
    if "[" in name and not name.endswith("]"):
        return name.replace("[", "\\x5b")
    return name


def item_names(case_names: Iterable[str]) -> list[str]:
    """The items' names of a suite's cases, one each: twins get `(2)`, `(3)`, skipping a
    name another case already has (a case written `ok (2)` beside two cases `ok`), so each
    case has a node id of its own and `--lf` or a node id on the command line finds it alone.

    >>> item_names(["ok (2)", "ok", "ok", "a::b", "a: :b"])
    ['ok (2)', 'ok', 'ok (3)', 'a: :b', 'a: :b (2)']
    >>> print(*item_names(["row [x=1]", "row [x=1]"]), sep=" | ")
    row [x=1] | row \\x5bx=1] (2)
    """
    escaped = [item_name(n) for n in case_names]
    taken = set(escaped)
    seen: Counter[str] = Counter()
    names = []
    for name in escaped:
        seen[name] += 1
        if seen[name] > 1:
            # (a twin's ` (2)` ends the name: a `[` in it is then written `\\x5b`)
            while bracketed(f"{name} ({seen[name]})") in taken:
                seen[name] += 1
            name = bracketed(f"{name} ({seen[name]})")
            taken.add(name)
        names.append(name)
    return names


class SuiteFile(pytest.File):
    """One suite file: its cases, or a collection error listing its check errors."""

    def collect(self) -> Iterator[CaseItem]:
        plugin = collector(self.config)
        # each small recording read once for the whole file, as `evaldsl run` and `check`
        # read it (`runs.heldfiles`): else each case reads its recording again to check it
        # (checked and compiled as `load_suite` does, keeping the check: each case's own
        # diagnostics, in the order of the suite's cases)
        with plugin.reading(), paused_gc(long_lived=True):
            checked = check_suite(read_draft(self.path))
            suite = compile_suite(checked, judge=plugin.judge())
        owned = [c.diagnostics for c in checked.cases]
        carried = {d for own in owned for d in own}
        diagnostics = [self.shown(d) for d in suite.diagnostics]
        # An error a case carries is that case's: it cannot run (its `error` says why, as
        # `evaldsl run` reports it) and its item fails, while the file's other cases run.
        # One no case carries (the header's, a file that is no suite, an unreadable one)
        # stops every case of the file: a collection error of the file.
        if any(d.is_error and d not in carried for d in suite.diagnostics):
            errors = [d for d in diagnostics if d.is_error]
            warned = len(diagnostics) - len(errors)
            head = (
                f"{len(errors)} check error{'s' if len(errors) != 1 else ''}"
                f"{f', {warned} warning' + ('s' if warned != 1 else '') if warned else ''}"
                f" in {shown_path(self.path, self.config)}: no case of this file was run"
            )
            raise self.CollectError(f"{head}\n{render(diagnostics)}")
        # (a case's errors are its item's failure, not warnings as well)
        raised = [
            d
            for d, said in zip(suite.diagnostics, diagnostics, strict=True)
            if not said.is_error and not self.warned(said)
        ]
        # `-W error` or `filterwarnings = error` made those warnings errors: a case's own
        # are its item's failure, as its errors are; one no case carries stops the file
        made = {d for d in raised if d in carried}
        raised = [self.shown(d) for d in raised if d not in made]
        if raised:
            count = f"{len(raised)} warning{'s' if len(raised) != 1 else ''}"
            # (the cases' check errors are said too: no item is left to say them)
            errors = [d for d in diagnostics if d.is_error]
            also = f", and {len(errors)} check error{'s' if len(errors) != 1 else ''}"
            head = (
                f"{count} in {shown_path(self.path, self.config)}, made errors by the "
                f"warning filters (-W error, filterwarnings){also if errors else ''}: no case "
                "of this file was run"
            )
            listed = [d for d in diagnostics if d.is_error or d in raised]
            raise self.CollectError(f"{head}\n{render(listed)}")
        # `-k weather` selects the cases of suite "weather", as `evaldsl run -k` does
        self.extra_keyword_matches.add(suite.name)
        # cases on one recording read it once, as `evaldsl run` reads it (a case
        # deselected by `-k` leaves its reading's facts with this file's items)
        shared = SharedReadings((suite, case) for case in suite.cases)
        names = item_names(c.name for c in suite.cases)
        for case, name, own in zip(suite.cases, names, owned, strict=True):
            yield CaseItem.from_parent(
                self,
                name=name,
                # the id pytest would read back from the `--lf` cache or a command line:
                # built from the name, a row's `[city=Tokyo]` is its parameters there
                nodeid=f"{self.nodeid}::{name}",
                suite=suite,
                case=case,
                readings=shared,
                errors=tuple(self.shown(d) for d in sorted(own, key=sort_key) if d.is_error),
                made_errors=tuple(self.shown(d) for d in sorted(own, key=sort_key) if d in made),
            )

    def warned(self, d: Diagnostic) -> bool:
        """Give a warning of the suite as a pytest warning at its own line (where
        `self.warn` would say the file's line 0): False when the warning filters made it
        an exception, which would leave the plugin's frame as a collection error's
        traceback and every warning after it unsaid."""
        try:
            warnings.warn_explicit(
                EvalDslWarning(render([d])),
                category=None,
                filename=str(self.config.invocation_params.dir / d.path),
                lineno=d.line,
            )
        except EvalDslWarning:
            return False
        return True

    def shown(self, d: Diagnostic) -> Diagnostic:
        return attrs.evolve(d, path=shown_path(d.path, self.config))


class CaseItem(pytest.Item):
    """One case of a suite, run by `begin_case` when pytest runs the item (or begun by
    the judged case before it, `begin_next`)."""

    def __init__(
        self,
        *,
        suite: Suite,
        case: Case,
        readings: SharedReadings | None = None,
        errors: tuple[Diagnostic, ...] = (),
        made_errors: tuple[Diagnostic, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.suite = suite
        self.case = case
        self.readings = readings
        # the case's check errors (it cannot run: its failure shows each, as `check` does)
        self.errors = errors
        # its check warnings the warning filters made errors (`-W error`): it is not run
        self.made_errors = made_errors
        # the judged cases of the session and this one's place among them, and this case
        # begun by the one before it (`pytest_collection_finish`, `runtest`)
        self.ahead: tuple[list[CaseItem], int] | None = None
        self.begun: CaseResult | waiting.Waiting | None = None
        # pytest-lsp's `pytest_runtest_call` reads `funcargs` of every item in the session
        self.funcargs: dict[str, Any] = {}
        self.add_marker("evaldsl")
        if case.judged:
            self.add_marker("evaldsl_judge")
        if case.source is not None and case.source.kind == "run":
            self.add_marker("evaldsl_live")

    def runtest(self) -> None:
        if self.made_errors and self.case.error is None:
            count = len(self.made_errors)
            pytest.fail(
                f"not run: {count} check warning{'s' if count != 1 else ''} made "
                f"error{'s' if count != 1 else ''} by the warning filters (-W error, "
                f"filterwarnings)\n{render(self.made_errors)}",
                pytrace=False,
            )
        begun, self.begun = self.begun, None
        if begun is None:
            workers = None
            if is_live(self.case):
                workers = collector(self.config).workers()
            with collector(self.config).reading():  # (the run its check read, if held)
                begun = begin_case(self.case, self.suite, workers, readings=self.readings)
        if not isinstance(begun, CaseResult):  # its answers are on their way: meanwhile,
            self.begin_next()  # the next cases' questions go too
        result = begun if isinstance(begun, CaseResult) else begun.finish()
        self.user_properties.append(("evaldsl_score", f"{result.score:.3f}"))
        kind = outcome(result)
        if kind == "skipped":
            reasons = dict.fromkeys(a.message for a in result.assertions if a.message)
            pytest.skip("; ".join(reasons) or "every assertion was skipped")
        if kind in ("failed", "error"):
            raise CaseFailed(result)

    def begin_next(self) -> None:
        """Begin the judged cases that come next in the session (up to
        `waiting.MAX_JUDGING`, this one counted), each holding its run's facts and its
        questions on their way until pytest runs it."""
        if self.ahead is None:
            return
        items, position = self.ahead
        for item in items[position + 1 : position + waiting.MAX_JUDGING]:
            if item.begun is None:
                with collector(self.config).reading():
                    item.begun = begin_case(item.case, item.suite, readings=item.readings)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> Any:
        if not isinstance(excinfo.value, CaseFailed):
            return super().repr_failure(excinfo, style)
        result = excinfo.value.result
        # paths as pytest shows them: the suite was loaded by its absolute path
        here = f"{self.config.invocation_params.dir}{os.sep}"
        shown = attrs.evolve(
            result,
            error=result.error.replace(here, "") if result.error is not None else None,
            assertions=tuple(
                attrs.evolve(
                    a, path=shown_path(a.path, self.config), message=a.message.replace(here, "")
                )
                for a in result.assertions
            ),
        )
        if shown.error is not None:  # the run crashed, or never ran: nothing was checked
            # (a target's message is its text: shown, never acted on, as the console does)
            said = f"error: {visible(shown.error)}"
            return f"{said}\n{render(self.errors)}" if self.errors else said
        counted = [a for a in result.assertions if a.status != "skip"]
        out = io.StringIO()
        out.write(f"{bad_counts(counted)} (score {result.score:.2f})\n")
        ConsoleReporter(out, color=False).problems(shown)
        return out.getvalue().rstrip("\n")

    def reportinfo(self) -> tuple[Path, int, str]:
        names = f"{self.suite.name} › {self.case.name}"  # (a failure's title)
        return self.path, self.case.line - 1, visible(names, newlines=False)


def bad_counts(counted: Sequence[AssertionResult]) -> str:
    """`N of M assertions failed`, saying errored for the ones that errored (a crashed
    check is no failed expectation).

    >>> from evaldsl.runner.results import AssertionResult as A
    >>> def a(s): return A("x", "x.eval", 1, 1, s, "")
    >>> bad_counts([a("error")]), bad_counts([a("fail"), a("error"), a("pass")])
    ('1 of 1 assertions errored', '1 of 3 assertions failed, 1 errored')
    """
    failed = sum(1 for a in counted if a.status == "fail")
    errored = sum(1 for a in counted if a.status == "error")
    if failed and errored:
        return f"{failed} of {len(counted)} assertions failed, {errored} errored"
    if errored:
        return f"{errored} of {len(counted)} assertions errored"
    return f"{failed} of {len(counted)} assertions failed"
