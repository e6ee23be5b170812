"""`python -m evaldsl.tools.lsp`: the language server over stdio."""

from evaldsl.tools.lsp.server import main

main()
