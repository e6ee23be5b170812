"""The runner: cases → results."""

from evaldsl.runner.core import RunOptions, run_suites

__all__ = ["RunOptions", "run_suites"]
