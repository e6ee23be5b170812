"""Results over time: every run recorded in SQLite, runs over time, the diff of two runs.

The parts: `snapshots` (a report, or a `--json` report file, as comparable assertions with
stable identities), `store` (the SQLite history, versioned with migrations), `trends`
(`evaldsl history`: pass rate and score per suite over time, the assertions that flip) and
`diff` (`evaldsl diff`: regressions, fixes, added and removed assertions, metric deltas).
"""
