"""Answer text and token usage of LLM responses.

Takes the `output` of an `llm.response` (or verydia `llm.invoke`) event, or the event itself,
and gives the plain answer text (`answer_text`) and the (input, output) token counts
(`usage_tokens`; a count that is negative or not a number is a `BadUsage`, which the readers
turn into the run's error: never 0, never a pass).

Answer text follows traceplay's `toText` (docs/language.md §6.6) in order: `None` → "";
a string → itself; OpenAI `choices[0].message.content` (a string, or its text parts joined
with "\\n"; `null`, a message that only calls tools, is ""; a message with no content but
a `refusal` gives the refusal: what the model said), else `choices[0].text`;
Anthropic `content` text blocks joined with "\\n"; Gemini's `candidates[0].content.parts`
text parts joined with nothing (thought parts left out: Google's SDKs' `.text`); a
Responses API body's `output_text` parts of its `message` items joined with nothing, as
OpenAI's SDK's `output_text` and the `openai` reader join them (its refusal parts when it
has none); a string `text` field; else the JSON text. Deliberate differences
(docs/language.md §6 wins): a streamed record `{"content": "..."}` gives its plain text,
where traceplay gives the record's JSON text, and so do Gemini and Responses API bodies
(a call-only one: ""); non-text blocks and parts (`tool_use`, images) are not in the
answer, and a tool-calls-only message has no text, where traceplay gives their JSON text.

The JSON text of a response that has no text is what JavaScript's `JSON.stringify`
writes (`evaldsl.language.jsjson`).
"""

from __future__ import annotations

import math
from typing import Any

from evaldsl.language.jsjson import js_json


def answer_text(output: Any, strict: bool = True) -> str:
    """The plain answer text of a response output (`strict`: a value JSON has no word for,
    which only events given in memory hold, is `NotJsonValue`, never tested as its Python
    text; a report shows it as that text).

    >>> answer_text({"choices": [{"message": {"content": "Hi"}}]})
    'Hi'
    >>> answer_text({"content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t"}]})
    'a'
    >>> answer_text({"content": "streamed", "usage": None})
    'streamed'
    >>> answer_text({"candidates": [{"content": {"parts": [{"text": "It is "}, {"text": "9"}]}}]})
    'It is 9'
    >>> answer_text({"object": "response", "output": [{"type": "message", "content": [
    ...     {"type": "output_text", "text": "Hi"}]}]})
    'Hi'
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
    return js_json(output, strict)


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
        return content  # a streamed record (docs/language.md §6; traceplay gives JSON here)
    candidates = output.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        return _candidate_text(candidates[0])  # (Gemini's; traceplay gives JSON here)
    items = output.get("output")
    if isinstance(items, list) and output.get("object") == "response":
        return _responses_text(items)  # (a Responses API body; traceplay gives JSON here)
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
        transcript = _transcript(message)
        if transcript and not content:
            return transcript  # the words of an audio reply (`is_transcript`)
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal and not content:
            return refusal  # what the model said instead of an answer (`is_refusal`)
        if content is None and "content" in message:
            return ""  # only tool calls: no text (never the body's JSON)
    text = choice.get("text")
    return text if isinstance(text, str) else None


#: The note when a refusal is a message's answer (said once for the trace).
REFUSAL_NOTE = "answer: the model's refusal (a message whose only text is its `refusal`)"


#: The note when an audio reply's transcript is a message's answer.
TRANSCRIPT_NOTE = (
    "answer: the transcript of the model's audio reply (`audio.transcript`: a message "
    "with no text content)"
)


def _first_message(output: Any) -> dict[str, Any] | None:
    """A Chat Completions response's `choices[0].message` (`None`: no such message)."""
    choices = output.get("choices") if isinstance(output, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, dict) else None


def _transcript(message: dict[str, Any]) -> str:
    """The transcript of a message's audio reply (`""`: none)."""
    audio = message.get("audio")
    said = audio.get("transcript") if isinstance(audio, dict) else None
    return said if isinstance(said, str) else ""


def is_refusal(output: Any) -> bool:
    """Whether a response output's answer is its refusal: a Chat Completions message with
    `refusal` text and no other text (`answer_text` gives the refusal).

    >>> is_refusal({"choices": [{"message": {"content": None, "refusal": "No."}}]})
    True
    """
    message = _first_message(output)
    if message is None or is_transcript(output):
        return False
    refusal = message.get("refusal")
    return isinstance(refusal, str) and bool(refusal) and not message.get("content")


def is_transcript(output: Any) -> bool:
    """Whether a response output's answer is the transcript of its audio reply: a Chat
    Completions message with `audio.transcript` text and no text content (`answer_text`
    gives the transcript).

    >>> is_transcript({"choices": [{"message": {"content": None, "audio": {"transcript": "Hi"}}}]})
    True
    """
    message = _first_message(output)
    return message is not None and bool(_transcript(message)) and not message.get("content")


def _candidate_text(candidate: dict[str, Any]) -> str:
    """A Gemini candidate's answer: its `content.parts`' text joined with nothing (as
    Google's SDKs' `.text` joins them), thought parts left out; a candidate with no
    text (only a `functionCall`, or blocked and without `content`) has `""`."""
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    out: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict) and part.get("thought") is not True:
            text = part.get("text")
            if isinstance(text, str):
                out.append(text)
    return "".join(out)


def _responses_text(items: list[Any]) -> str:
    """A Responses API body's answer: the `output_text` parts of its `message` items
    joined with nothing (OpenAI's SDK's `output_text`; the `openai` format's reader
    joins them so), else its `refusal` parts joined with "\\n"; no message: `""`."""
    texts: list[str] = []
    refusals: list[str] = []
    for item in items:
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        parts = item.get("content")
        for part in parts if isinstance(parts, list) else ():
            if not isinstance(part, dict):
                continue
            kind, text, refusal = part.get("type"), part.get("text"), part.get("refusal")
            if kind == "output_text" and isinstance(text, str):
                texts.append(text)
            elif kind == "refusal" and isinstance(refusal, str):
                refusals.append(refusal)
    return "".join(texts) if texts else "\n".join(refusals)


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


# --- usage ----------------------------------------------------------------------------------

#: The spellings of a usage object's two counts, in the order `usage_pair` tries them.
USAGE_FIELDS = (
    ("promptTokens", "completionTokens"),  # traceplay's normalised event-level usage
    ("prompt_tokens", "completion_tokens"),  # OpenAI
    ("input_tokens", "output_tokens"),  # Anthropic
    ("promptTokenCount", "candidatesTokenCount"),  # Gemini usageMetadata
    ("prompt_token_count", "candidates_token_count"),  # the same from Google's Python SDK
)

#: What Gemini counts beside its two, by the spelling of its input count: the tool-use
#: prompt (the tools' results fed back: input) and the thinking (output, as Google bills
#: it), four disjoint counts that `totalTokenCount` sums; `candidatesTokenCount` alone
#: left a thinking model's output out of `tokens` (most of it: 918 of 930 tokens).
GEMINI_MORE = {
    "promptTokenCount": ("toolUsePromptTokenCount", "thoughtsTokenCount"),
    "prompt_token_count": ("tool_use_prompt_token_count", "thoughts_token_count"),
}


class BadUsage(ValueError):
    """A token count that is negative or not a number (the message says which and what)."""


def token_count(value: Any, name: str = "token count") -> float:
    """A token count: a number ≥ 0 (a fraction is kept, as traceplay adds it: `2.5` tokens
    are over a budget of 2); a missing count (`None`) is 0.

    Anything else (`-5`, `"100"`, `true`, an object) is a `BadUsage`: traceplay would
    concatenate strings (docs/language.md §6.7), and counting them 0 would pass
    `tokens <= N` on a trace whose usage nobody can read.

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
        return int(value) if value.is_integer() else value
    if isinstance(value, float) and (math.isnan(value) or value == math.inf):
        # (NaN and Infinity are not negative: only an event list given in Python holds them)
        shown = "NaN" if math.isnan(value) else "Infinity"
        raise BadUsage(f"token usage `{name}` is {shown}: a count is a finite number")
    if isinstance(value, float):
        raise BadUsage(f"token usage `{name}` is {value!r}: a count cannot be negative")
    raise BadUsage(f"token usage `{name}` is {js_json(value)[:40]}, not a number")


#: What `usage_tokens` gives for a response that records no usage at all: (0, 0), this
#: very tuple, so that a pass can tell it from counts of 0 (`is NO_USAGE`) and know when
#: no response of a run recorded any (`TraceFacts.usage_unrecorded`).
NO_USAGE: tuple[float, float] = (0, 0)


def usage_tokens(event: dict[str, Any]) -> tuple[float, float]:
    """(input, output) tokens of one `llm.response` or `llm.invoke` event; `NO_USAGE`,
    (0, 0), when it records no usage (no count in any spelling the readers know).

    Event-level counts win: verydia `tokensIn`/`tokensOut`, then the event's `usage` (camelCase,
    snake_case or Anthropic names); only an event with none of them is read through its
    `output.usage` (or Gemini `output.usageMetadata`, whose tool-use prompt is input and
    thinking output: `GEMINI_MORE`). A missing field counts 0; a value that
    is negative or not a number (`"100"`, `true`) is a `BadUsage` (`token_count`), and so
    is a `usage` that is not an object (`"12000"`, `[5, 7]`).

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
    usage = event.get("usage")
    found = usage_pair(usage)
    if found is not None:
        return found
    if usage is not None and not isinstance(usage, dict):
        # `"usage": "12000"` would otherwise count 0 tokens and pass `tokens <= 100`
        raise BadUsage(f"token usage is {js_json(usage)[:40]}, not an object of counts")
    output = event.get("output")
    if isinstance(output, dict):
        found = usage_pair(output.get("usage"))
        if found is None:
            found = usage_pair(output.get("usageMetadata"))
        if found is None:  # (Google's Python SDK's spelling)
            found = usage_pair(output.get("usage_metadata"))
        if found is not None:
            return found
    return NO_USAGE


def usage_pair(usage: Any) -> tuple[float, float] | None:
    """(input, output) from a usage object in any of the known spellings, or `None`.

    >>> usage_pair({"prompt_tokens": 3, "completion_tokens": 4})
    (3, 4)
    >>> usage_pair({"total": 7}) is None
    True
    >>> usage_pair({"promptTokenCount": 8, "candidatesTokenCount": 12, "thoughtsTokenCount": 918})
    (8, 930)
    """
    if not isinstance(usage, dict):
        return None
    for prompt, completion in USAGE_FIELDS:
        if prompt in usage or completion in usage:
            used_in = token_count(usage.get(prompt), prompt)
            used_out = token_count(usage.get(completion), completion)
            more = GEMINI_MORE.get(prompt)
            if more is not None:  # Gemini's tool-use prompt and thinking
                used_in += token_count(usage.get(more[0]), more[0])
                used_out += token_count(usage.get(more[1]), more[1])
            return used_in, used_out
    return None


def normalized_usage(usage: Any) -> dict[str, float] | None:
    """traceplay's event-level `usage` (`promptTokens`, `completionTokens`) for a provider usage.

    >>> normalized_usage({"input_tokens": 9})
    {'promptTokens': 9, 'completionTokens': 0}
    """
    pair = usage_pair(usage)
    if pair is None:
        return None
    return {"promptTokens": pair[0], "completionTokens": pair[1]}


# --- prompt-cache tokens --------------------------------------------------------------------

#: Anthropic's prompt-cache counts in a usage object, beside `input_tokens` (which leaves
#: them out): the writes, of them those kept 1 hour (`cache_creation`'s split), the reads.
CACHE_WRITE = "cache_creation_input_tokens"
CACHE_READ = "cache_read_input_tokens"
CACHE_SPLIT = "cache_creation"
CACHE_1H = "ephemeral_1h_input_tokens"
_CACHE_5M = "ephemeral_5m_input_tokens"


def cache_counts(usage: dict[str, Any]) -> dict[str, float] | None:
    """The prompt-cache tokens of an Anthropic usage object, `{write5m, write1h, read}`
    (`prices.cache_premium` prices them), or `None` when it counts none. A count that is
    not a number ≥ 0, a `cache_creation` that is no object, or 1-hour writes beyond all
    the writes are a `BadUsage`: never a count taken as 0.

    >>> cache_counts({"input_tokens": 100, "cache_creation_input_tokens": 20,
    ...     "cache_read_input_tokens": 80})
    {'write5m': 20, 'write1h': 0, 'read': 80}
    >>> cache_counts({"input_tokens": 1, "cache_creation": {"ephemeral_5m_input_tokens": 3}})
    {'write5m': 3, 'write1h': 0, 'read': 0}
    """
    write = token_count(usage.get(CACHE_WRITE), CACHE_WRITE)
    read = token_count(usage.get(CACHE_READ), CACHE_READ)
    hour: float = 0
    split = usage.get(CACHE_SPLIT)
    if split is not None:
        if not isinstance(split, dict):
            shown = js_json(split)[:40]
            raise BadUsage(f"token usage `{CACHE_SPLIT}` is {shown}, not an object of counts")
        hour = token_count(split.get(CACHE_1H), f"{CACHE_SPLIT}.{CACHE_1H}")
        five = token_count(split.get(_CACHE_5M), f"{CACHE_SPLIT}.{_CACHE_5M}")
        if usage.get(CACHE_WRITE) is None:  # (the split alone says how many were written)
            write = five + hour
    if hour > write:
        raise BadUsage(
            f"token usage `{CACHE_SPLIT}.{CACHE_1H}` ({hour}) is more than its "
            f"`{CACHE_WRITE}` ({write}), the writes of both lifetimes"
        )
    if not (write or read):
        return None
    return {"write5m": write - hour, "write1h": hour, "read": read}


#: Where OpenAI counts the input tokens read from the prompt cache, beside the count of
#: input tokens they are among: a chat completion (and its stream's usage chunk), a
#: Responses API object (and the usage the Agents SDK records of either).
CHAT_CACHED = ("prompt_tokens_details", "prompt_tokens")
RESPONSES_CACHED = ("input_tokens_details", "input_tokens")


def openai_cached(usage: Any, details: str, prompt: str) -> dict[str, float] | None:
    """The input tokens an OpenAI usage object says were read from the prompt cache
    (`details.cached_tokens`, counted among `prompt`'s tokens, and billed at the model's
    cached-input price) as a response's `cacheTokens`, or None when it reads none. A count
    that is not a number ≥ 0, details that are no object, or more cached tokens than the
    input counts are a `BadUsage`: never a price taken for the full one. (OpenAI's
    `cache_write_tokens` beside them are billed as input: nothing apart.)

    >>> openai_cached({"prompt_tokens": 90, "prompt_tokens_details": {"cached_tokens": 64}},
    ...     *CHAT_CACHED)
    {'cached': 64}
    >>> openai_cached({"input_tokens": 9}, *RESPONSES_CACHED) is None
    True
    """
    if not isinstance(usage, dict):
        return None  # (none, or refused by the reader of its counts)
    found = usage.get(details)
    if found is None:
        return None
    if not isinstance(found, dict):
        shown = js_json(found)[:40]
        raise BadUsage(f"token usage `{details}` is {shown}, not an object of counts")
    cached = token_count(found.get("cached_tokens"), f"{details}.cached_tokens")
    if not cached:
        return None
    counted = token_count(usage.get(prompt), prompt)
    if cached > counted:
        raise BadUsage(
            f"token usage `{details}.cached_tokens` ({count_text(cached)}) is more than `{prompt}` "
            f"({count_text(counted)}), which counts them"
        )
    return {"cached": cached}


def count_text(count: float) -> str:
    """A token count as a message (or `inspect`) shows it: a whole number without `.0`.

    >>> count_text(64.0), count_text(2.5)
    ('64', '2.5')
    """
    return str(int(count)) if float(count).is_integer() else str(count)


def may_count_cache(output: Any) -> bool:
    """Whether a response's `output` is a provider body whose `usage` may count prompt-cache
    tokens (has one of their names: Anthropic's counts, OpenAI's details): the cheap test
    before `body_cache` reads them."""
    if type(output) is not dict:
        return False
    usage = output.get("usage")
    return type(usage) is dict and (
        CACHE_READ in usage
        or CACHE_WRITE in usage
        or CACHE_SPLIT in usage
        or CHAT_CACHED[0] in usage
        or RESPONSES_CACHED[0] in usage
    )


def body_cache(output: Any, used_in: float) -> tuple[float, dict[str, float] | None]:
    """A recorded response's input tokens and its prompt-cache tokens (`cacheTokens`, or
    `None`) when its `output` is the provider's body, as traceplay keeps it.

    An Anthropic body's `usage` counts the cache writes and reads apart from
    `input_tokens` (`cache_counts`), and traceplay's own `usage.promptTokens` is
    `input_tokens` alone. `used_in` is the input the event's counts give (`usage_tokens`);
    the cache tokens are added to it, as the Anthropic readers add them, unless it already
    counts them. An OpenAI body (a chat completion, a Responses API object) counts the
    tokens it read from the prompt cache among its input (`openai_cached`), as traceplay's
    `promptTokens` does: they are `{"cached": n}` of an input of `used_in` tokens. Input
    that is neither (whether the cache is in it nobody can tell) is a `BadUsage`, never a
    guess.

    >>> body_cache({"usage": {"input_tokens": 45, "cache_read_input_tokens": 1000}}, 45)
    (1045, {'write5m': 0, 'write1h': 0, 'read': 1000})
    >>> body_cache({"usage": {"prompt_tokens": 90,
    ...     "prompt_tokens_details": {"cached_tokens": 64}}}, 90)
    (90, {'cached': 64})
    >>> body_cache({"usage": {"input_tokens": 45}}, 45)
    (45, None)
    """
    usage = output.get("usage") if isinstance(output, dict) else None
    if not isinstance(usage, dict):
        return used_in, None
    cache = cache_counts(usage)
    if cache is None:
        return _openai_body_cache(usage, used_in)
    alone = token_count(usage.get("input_tokens"), "input_tokens")
    cached = alone + sum(cache.values())
    if used_in == alone:
        return cached, cache
    if used_in == cached:
        return used_in, cache
    raise BadUsage(
        f"input tokens ({used_in}) are neither its body's `usage.input_tokens` ({alone}) nor "
        f"those and its prompt-cache tokens ({cached}): whether they count the cache is unknown"
    )


def openai_usage_cached(usage: Any) -> dict[str, float] | None:
    """`openai_cached` of a usage object in either API's spelling: a chat completion's
    `prompt_tokens_details`, else a Responses API object's `input_tokens_details` (as the
    Agents SDK records both).

    >>> openai_usage_cached({"input_tokens": 9, "input_tokens_details": {"cached_tokens": 8}})
    {'cached': 8}
    """
    if not isinstance(usage, dict):
        return None
    return openai_cached(usage, *_openai_spelling(usage))


def _openai_spelling(usage: dict[str, Any]) -> tuple[str, str]:
    """Where a usage object counts its cached reads and its input, by its API's spelling
    (`CHAT_CACHED`, else `RESPONSES_CACHED`)."""
    return CHAT_CACHED if CHAT_CACHED[0] in usage else RESPONSES_CACHED


def _openai_body_cache(
    usage: dict[str, Any], used_in: float
) -> tuple[float, dict[str, float] | None]:
    """`body_cache` of an OpenAI body's `usage` (`openai_usage_cached`)."""
    cache = openai_usage_cached(usage)
    prompt = _openai_spelling(usage)[1]
    if cache is None:
        return used_in, None
    counted = token_count(usage.get(prompt), prompt)
    if used_in != counted:
        # the reads are among the body's input, which is not the input the event gives
        raise BadUsage(
            f"input tokens ({count_text(used_in)}) are not its body's `usage.{prompt}` "
            f"({count_text(counted)}), among which {count_text(cache['cached'])} were read "
            "from the prompt cache: which of them the event counts is unknown"
        )
    return used_in, cache
