"""What evaldsl makes once and keeps for later starts, in the user's private cache folder.

`folder` is the folder (`$XDG_CACHE_HOME/evaldsl`, private, read only when private);
`compiled` keeps compiled code there (attrs' methods for evaldsl's classes), and
`regexes` the code of compiled regexes (the lexer's) in the same file. The parser's
tables, when the shipped ones do not fit, are kept there too (`syntax/tables.py`).
"""
