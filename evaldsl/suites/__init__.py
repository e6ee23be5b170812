"""Suites: `.eval`, YAML and JSON suite files → checked, compiled cases.

The parts: `model` (drafts, cases, suites), the front ends `evalfile`, `yamlfile`
(with `objects` for traceplay and cycgraph objects, and `yamlguard` for what composed YAML
may hold) and `datasets` (verydia rows),
`templates` (`each` rows), `files` (finding and reading suite files), `build`
(expansion, checking, compiling), `convert` (a draft back to `.eval` text) and `schema`.
`load_suite` and `discover` are the entry points.
"""

from evaldsl.suites.build import load_suite
from evaldsl.suites.files import discover
from evaldsl.suites.model import Case, Suite

__all__ = ["Case", "Suite", "discover", "load_suite"]
