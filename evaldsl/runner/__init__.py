"""The runner: cases → results."""

from evaldsl.runner.core import RunInterrupted, RunOptions, run_suites

__all__ = ["RunInterrupted", "RunOptions", "run_suites"]
