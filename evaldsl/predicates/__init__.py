"""Predicates: one module per family, each declaring everything every stage needs.

A family module (`counts`, `calls`, `compare`, `contains`, `lists`, `emptiness`, `types`,
`text`, `keys`, `judge`, `budget`, `cites`) declares its AST node classes' vocabulary
entries, the parser's build rules for its grammar rules, its check rule, its compiled form
and its printed form, as one `Family` (`base.py`). `registry.py` gathers them into the
table the parser, the checker, the compiler, the formatter, hover, completion and
`evaldsl vocabulary` read, and proves it complete when it is imported.
"""
