"""Answer text and token usage of LLM responses.

Takes the `output` of an `llm.response` (or verydia `llm.invoke`) event, or the event itself,
and gives the plain answer text (`answer_text`), JavaScript-compatible JSON text (`js_json`)
and the (input, output) token counts (`usage_tokens`; a count that is negative or not a
number is a `BadUsage`, which the readers turn into the run's error: never 0, never a pass).

Answer text follows traceplay's `toText` (seed-semantics §3.3) in order: `None` → "";
a string → itself; OpenAI `choices[0].message.content` (a string, or its text parts joined
with "\\n"; `null`, a message that only calls tools, is ""), else `choices[0].text`;
Anthropic `content` text blocks joined with "\\n"; a string `text` field; else the JSON
text. Deliberate differences (LANGUAGE.md §6 wins): a streamed record `{"content": "..."}`
gives its plain text, where traceplay gives the record's JSON text; non-text blocks and
parts (`tool_use`, images) are not in the answer, and a tool-calls-only message has no
text, where traceplay gives their JSON text.

JSON text is what JavaScript's `JSON.stringify` writes, because the seeds compared and
hashed that text (seed-semantics §5.1): compact separators, non-ASCII kept, integral
floats as integers (`1.0` → `1`), other numbers in JavaScript's shortest form (`1e-7`, not
`1e-07`), NaN and infinities as `null`, and integer-like object keys first in ascending
order, as JavaScript objects keep them.
"""

from __future__ import annotations

import json
import math
from typing import Any

_MAX_INDEX_KEY = 2**32 - 2  # JavaScript array indices: canonical integers 0 .. 2**32 - 2


def answer_text(output: Any) -> str:
    """The plain answer text of a response output.

    >>> answer_text({"choices": [{"message": {"content": "Hi"}}]})
    'Hi'
    >>> answer_text({"content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t"}]})
    'a'
    >>> answer_text({"content": "streamed", "usage": None})
    'streamed'
    >>> answer_text({"score": 1.0})
    '{"score":1}'
    """
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        found = _dict_text(output)
        if found is not None:
            return found
    return js_json(output)


def _dict_text(output: dict[str, Any]) -> str | None:
    """The text a response object carries, or `None` to fall back to its JSON text."""
    choices = output.get("choices")
    if isinstance(choices, list) and choices:
        text = _choice_text(choices[0])
        if text is not None:
            return text
    content = output.get("content")
    if isinstance(content, list):
        return _text_parts(content)
    if isinstance(content, str):
        return content  # a streamed record (LANGUAGE.md §6; traceplay gives JSON here)
    text = output.get("text")
    if isinstance(text, str):
        return text
    return None


def _choice_text(choice: Any) -> str | None:
    if not isinstance(choice, dict):
        return None
    message = choice.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return _text_parts(content)
        if content is None and "content" in message:
            return ""  # only tool calls: no text (never the body's JSON)
    text = choice.get("text")
    return text if isinstance(text, str) else None


def _text_parts(parts: list[Any]) -> str:
    """Text blocks and parts (strings, or `{"type": "text", "text": …}`) joined with "\\n";
    other blocks (tool_use, images, thinking) are not answer text."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type", "text") in ("text", "output_text"):
            text = part.get("text")
            if isinstance(text, str):
                out.append(text)
    return "\n".join(out)


# --- JavaScript's JSON.stringify ----------------------------------------------------------


def js_json(value: Any) -> str:
    """`JSON.stringify(value)` as JavaScript writes it.

    Written without recursion: a trace may hold JSON nested as deep as its decoder allows
    (1,024 levels), deeper than Python's own stack.

    >>> js_json({"b": [1.0, 0.5, 1e-7], "2": True, "1": None, "é": "x"})
    '{"1":null,"2":true,"b":[1,0.5,1e-7],"é":"x"}'
    """
    out: list[str] = []
    # Work items: a value to write, or a literal piece of text (punctuation, a key).
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            out.append(item)
        elif isinstance(item, dict):
            out.append("{")
            stack.append((True, "}"))
            items = _js_key_order(item)
            for i in range(len(items) - 1, -1, -1):
                key, child = items[i]
                stack.append((False, child))
                stack.append((True, ("," if i else "") + _js_string(key) + ":"))
        elif isinstance(item, list | tuple):
            out.append("[")
            stack.append((True, "]"))
            for i in range(len(item) - 1, -1, -1):
                stack.append((False, item[i]))
                if i:
                    stack.append((True, ","))
        else:
            out.append(_scalar(item))
    return "".join(out)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    # Live targets may return values JSON has no word for (dates, sets): show their text
    # rather than fail the whole answer.
    return _js_string(str(value))


def _js_key_order(value: dict[Any, Any]) -> list[tuple[str, Any]]:
    """Items in JavaScript's property order: integer-like keys ascending, then the rest."""
    items = [(k if isinstance(k, str) else str(k), v) for k, v in value.items()]
    indexed = [(k, v) for k, v in items if _is_index_key(k)]
    if not indexed:
        return items
    indexed.sort(key=lambda kv: int(kv[0]))
    return indexed + [(k, v) for k, v in items if not _is_index_key(k)]


def _is_index_key(key: str) -> bool:
    if not key.isdigit() or not key.isascii():
        return False
    return (key == "0" or not key.startswith("0")) and int(key) <= _MAX_INDEX_KEY


def _js_string(s: str) -> str:
    # The stdlib escapes exactly the characters JSON.stringify escapes, with the same
    # short forms (\n, \t, ...) and \u00XX for the other control characters.
    text = json.dumps(s, ensure_ascii=False)
    if _has_surrogate(text):
        # JSON.stringify escapes lone surrogates (well-formed JSON.stringify, ES2019).
        text = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def js_number(x: float) -> str:
    """A float as JavaScript's `Number.prototype.toString` writes it.

    >>> [js_number(v) for v in (1.0, -0.0, 0.1, 1e21, 1.5e-7, 123456789012.5)]
    ['1', '0', '0.1', '1e+21', '1.5e-7', '123456789012.5']
    """
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr() gives the shortest digits that round-trip, the same digits JavaScript picks;
    # only where the decimal point goes and when to use an exponent differ.
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    significant = (whole + frac).lstrip("0")
    # `point`: how many digits stand before the decimal point (JavaScript's n, with x =
    # 0.d1d2... * 10**n); every leading zero dropped moves it one place left.
    point = len(whole) + int(exp or 0) - (len(whole + frac) - len(significant))
    digits = significant.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-")
        body += str(abs(e))
    return sign + body


# --- usage ----------------------------------------------------------------------------------

_USAGE_FIELDS = (
    ("promptTokens", "completionTokens"),  # traceplay's normalised event-level usage
    ("prompt_tokens", "completion_tokens"),  # OpenAI
    ("input_tokens", "output_tokens"),  # Anthropic
    ("promptTokenCount", "candidatesTokenCount"),  # Gemini usageMetadata
)


class BadUsage(ValueError):
    """A token count that is negative or not a number (the message says which and what)."""


def token_count(value: Any, name: str = "token count") -> int:
    """A token count: a whole number ≥ 0 (a float is rounded); a missing count (`None`) is 0.

    Anything else (`-5`, `"100"`, `true`, an object) is a `BadUsage`: seed-semantics §5.7
    says traceplay would concatenate strings; counting them 0 would pass `tokens <= N` on a
    trace whose usage nobody can read.

    >>> token_count(120), token_count(7.0), token_count(None)
    (120, 7, 0)
    >>> token_count("100", "promptTokens")
    Traceback (most recent call last):
    ...
    evaldsl.runs.text.BadUsage: token usage `promptTokens` is "100", not a number
    """
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise BadUsage(f"token usage `{name}` is {value}: a count cannot be negative")
        return value
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return round(value)
    if isinstance(value, float):
        raise BadUsage(f"token usage `{name}` is {value!r}: a count cannot be negative")
    raise BadUsage(f"token usage `{name}` is {js_json(value)[:40]}, not a number")


def usage_tokens(event: dict[str, Any]) -> tuple[int, int]:
    """(input, output) tokens of one `llm.response` or `llm.invoke` event; (0, 0) without usage.

    Event-level counts win: verydia `tokensIn`/`tokensOut`, then the event's `usage` (camelCase,
    snake_case or Anthropic names); only an event with none of them is read through its
    `output.usage` (or Gemini `output.usageMetadata`). A missing field counts 0; a value that
    is negative or not a number (`"100"`, `true`) is a `BadUsage` (`token_count`).

    >>> usage_tokens({"type": "llm.response", "usage": {"promptTokens": 120}})
    (120, 0)
    >>> usage_tokens({"type": "llm.response", "output": {"usage": {"input_tokens": 5}}})
    (5, 0)
    """
    if "tokensIn" in event or "tokensOut" in event:
        return (
            token_count(event.get("tokensIn"), "tokensIn"),
            token_count(event.get("tokensOut"), "tokensOut"),
        )
    found = usage_pair(event.get("usage"))
    if found is not None:
        return found
    output = event.get("output")
    if isinstance(output, dict):
        found = usage_pair(output.get("usage"))
        if found is None:
            found = usage_pair(output.get("usageMetadata"))
        if found is not None:
            return found
    return 0, 0


def usage_pair(usage: Any) -> tuple[int, int] | None:
    """(input, output) from a usage object in any of the known spellings, or `None`.

    >>> usage_pair({"prompt_tokens": 3, "completion_tokens": 4})
    (3, 4)
    >>> usage_pair({"total": 7}) is None
    True
    """
    if not isinstance(usage, dict):
        return None
    for prompt, completion in _USAGE_FIELDS:
        if prompt in usage or completion in usage:
            return token_count(usage.get(prompt), prompt), token_count(
                usage.get(completion), completion
            )
    return None


def normalized_usage(usage: Any) -> dict[str, int] | None:
    """traceplay's event-level `usage` (`promptTokens`, `completionTokens`) for a provider usage.

    >>> normalized_usage({"input_tokens": 9})
    {'promptTokens': 9, 'completionTokens': 0}
    """
    pair = usage_pair(usage)
    if pair is None:
        return None
    return {"promptTokens": pair[0], "completionTokens": pair[1]}
