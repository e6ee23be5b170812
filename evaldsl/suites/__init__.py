"""Suites: `.eval`, YAML and JSON suite files → checked, compiled cases."""

from evaldsl.suites.core import Case, Suite, discover, load_suite

__all__ = ["Case", "Suite", "discover", "load_suite"]
