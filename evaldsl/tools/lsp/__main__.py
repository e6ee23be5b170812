"""`python -m evaldsl.tools.lsp`: the language server over stdio."""

from evaldsl.tools.lsp.server import main

raise SystemExit(main())  # 0 after shutdown then exit, 1 otherwise (LSP), as `evaldsl lsp`
