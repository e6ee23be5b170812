"""Syntax: evaldsl text → AST nodes and syntax diagnostics (Lark stays inside).

The parts: `grammar` (the Lark parsers made from `grammar/evaldsl.lark`), `build` (the
AST built during the parse), `drive` (the fast parse loop, guarded by the Lark version),
`recovery` (cutting text into statements after an error), `wording` (errors in the
user's words), `parser` (the entry point, `parse`), `literals` (string, number and
duration values), `tokens` (evaldsl's own tokens for editors) and `outline` (a program's
header and cases).
"""
