"""The JSON Schema of YAML and JSON suites, for editors and for `evaldsl schema`.

Takes nothing; gives the schema that `grammar/evaldsl-suite.schema.json` holds (draft-07,
the draft every YAML and JSON language server reads): every suite and case key, `expect`
text, `assertions` as one of the traceplay `kind:` objects, the cycgraph `type:` objects
or a string of evaldsl text, each object closed (`additionalProperties: false`) so that an
editor flags `path:` where `jsonPath:` is meant. The file is read from the source tree,
or from inside the installed wheel (package `evaldsl.grammar`), like the grammar.

A YAML suite opts in with a first-lines comment, read by yaml-language-server:

    # yaml-language-server: $schema=../../grammar/evaldsl-suite.schema.json

The schema says what is well formed; `evaldsl check` says the rest (unknown tools, DSL
syntax, types), with the same field checks and better messages.

    >>> schema = suite_schema()
    >>> schema["required"], sorted(schema["definitions"]["case"]["properties"])[:3]
    (['cases'], ['assertions', 'cassette', 'dataset'])
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

SCHEMA_FILE = "evaldsl-suite.schema.json"
#: Where the schema is in a source checkout (`grammar/` beside the package).
TREE_PATH = Path(__file__).resolve().parents[2] / "grammar" / SCHEMA_FILE


def schema_text() -> str:
    """The schema file's text, exactly as shipped: from the source tree when run from a
    checkout, else from the installed package `evaldsl.grammar`."""
    if TREE_PATH.is_file():
        return TREE_PATH.read_text(encoding="utf-8")
    return resources.files("evaldsl.grammar").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def suite_schema() -> dict[str, Any]:
    """The schema as a dict (a fresh copy each call: callers may change it)."""
    loaded = json.loads(schema_text())
    if not isinstance(loaded, dict):  # pragma: no cover - the shipped file is an object
        raise ValueError(f"{SCHEMA_FILE} does not hold a JSON object")
    return loaded


def schema_command(out: TextIO) -> int:
    """`evaldsl schema`: print the schema (redirect it to a file to keep a copy)."""
    text = schema_text()
    out.write(text if text.endswith("\n") else text + "\n")
    return 0
