"""The language server: `evaldsl lsp` (pygls 2, over stdio); needs the `evaldsl[lsp]` extra.

Takes an editor's documents — `.eval` files, and YAML/JSON suites with DSL text under
`expect:` and in `assertions:` — and gives what an editor shows: the diagnostics
`evaldsl check` reports (debounced as the user types), hover docs from the vocabulary,
completion from the grammar's state at the cursor and from the case's recorded files,
formatting (`.eval`, the same code as `evaldsl fmt`), go-to-definition on a case's
source path, quick fixes (the diagnostics' own fixes: a known slip's corrected
statement, a did-you-mean's word) and the outline (the suite and its cases).

The parts: `documents` (buffers, positions, diagnostics in LSP terms: the one place
UTF-16 is converted), `analysis` (one buffer read once, the statement under the cursor,
what the case's files hold), `hover`, `completion`, `definition`, `actions` (quick
fixes), `symbols` (the outline), `framing` (messages read from the byte stream, bounded,
whatever it holds) and `server`. Run it with `evaldsl lsp` or `python -m
evaldsl.tools.lsp`.
"""
