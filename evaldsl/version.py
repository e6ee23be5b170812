"""The version of evaldsl (read by the command, the reports and the run history)."""

__version__ = "0.1.0"
