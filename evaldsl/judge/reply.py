"""The judge's replies: parse what came back, and turn a verdict into an outcome.

Takes the text of the judge's message (a JSON object, bare or in one ```json fence) and
gives a `JudgeReply`, or a `BadReply` error naming what came back (two fenced blocks are
one: which one is the verdict cannot be known); `verdict` gives the
assertion's `JudgeOutcome` for a reply and an optional threshold.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from evaldsl.jsontext import refuse_constant
from evaldsl.judge.protocol import JudgeOutcome
from evaldsl.language.verdicts import Status

SHOWN = 200  # characters of a bad reply quoted in an error message
_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n?(.*?)```", re.DOTALL | re.IGNORECASE)


@attrs.frozen
class JudgeReply:
    """A judge's verdict: `passed`, an optional `score` in [0, 1], and its reason; `file`:
    the cache file it was read from (None: the endpoint's answer); `model`: the model
    that answered, when the endpoint said."""

    passed: bool
    score: float | None = None
    reason: str = ""
    file: str | None = attrs.field(default=None, eq=False, repr=False)
    model: str | None = attrs.field(default=None, eq=False, repr=False)


class BadReply(ValueError):
    """What came back is not the verdict asked for; the message says what it was."""


def shorten(text: str, limit: int = SHOWN) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def quoted(text: str) -> str:
    """`text` shortened and JSON-quoted, for quoting a reply inside a message."""
    return json.dumps(shorten(text), ensure_ascii=False)


#: The fields of a verdict: one written twice leaves the verdict unknown.
VERDICT_KEYS = ("passed", "score", "reason")


class _Decoded(dict[str, Any]):
    """A decoded JSON object, with the verdict fields it wrote more than once."""

    twice: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Decoded:
    decoded = _Decoded(pairs)
    if len(decoded) < len(pairs):
        keys = [k for k, _ in pairs]
        decoded.twice = tuple(k for k in VERDICT_KEYS if keys.count(k) > 1)
    return decoded


def decode_verdict(text: str) -> Any:
    """`text` decoded as JSON for a verdict (a reply's, a cache file's): NaN and the
    infinities refused, and each object knowing which verdict fields it wrote twice
    (`json` keeps the last, so `{"passed": false, …, "passed": true}` passed).

    >>> decode_verdict('{"passed": false, "passed": true}').twice
    ('passed',)
    """
    return json.loads(text, parse_constant=refuse_constant, object_pairs_hook=_object)


def reply_from_object(value: Any, shown: str, what: str = "the reply") -> JudgeReply:
    """The verdict a decoded object holds; `BadReply` quoting `shown` if it is none (`what`
    names it in the message: the reply, or a cache file)."""
    if not isinstance(value, dict):
        raise BadReply(f"{what} is not a JSON object: {quoted(shown)}")
    twice = getattr(value, "twice", ())
    if twice:
        raise BadReply(
            f'{what} writes "{twice[0]}" twice: which one is the verdict cannot be known: '
            f"{quoted(shown)}"
        )
    passed = value.get("passed")
    if not isinstance(passed, bool):
        raise BadReply(f'{what} has no boolean "passed": {quoted(shown)}')
    score = value.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise BadReply(f'{what}\'s "score" is not a number: {quoted(shown)}')
        # (compared, never converted first: an integer past a float's range, `1` and 400
        # zeros, cannot be made a float; NaN and the infinities compare false or out of range)
        if not 0 <= score <= 1:
            number = shorten(repr(score), 24)
            raise BadReply(f'{what}\'s "score" {number} is not in [0, 1]: {quoted(shown)}')
        score = float(score)
    reason = value.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise BadReply(f'{what}\'s "reason" is not a string: {quoted(shown)}')
    return JudgeReply(passed, score, reason or "")


def parse_reply(content: str) -> JudgeReply:
    """Parse the judge's message: a JSON object, bare or inside a ```json fence.

    Raises ValueError naming what came back (shortened) when it is anything else.

    >>> parse_reply('```json\\n{"passed": true, "score": 0.8, "reason": "ok"}\\n```')
    JudgeReply(passed=True, score=0.8, reason='ok')
    """
    text = content.strip()
    fences = _FENCE.findall(text)
    if len(fences) > 1:
        # two verdicts, or a verdict and an example: which one is meant cannot be known
        raise BadReply(
            f"the reply holds {len(fences)} fenced blocks, not one verdict: {quoted(content)}"
        )
    if fences and not text.startswith("{"):
        text = fences[0].strip()
    try:
        value = decode_verdict(text)
    except ValueError:
        raise BadReply(f"the reply is not JSON: {quoted(content)}") from None
    except RecursionError:  # arrays nested deeper than Python's stack: no verdict either
        raise BadReply(f"the reply is nested too deep to be a verdict: {quoted(content)}") from None
    return reply_from_object(value, content)


def number_text(value: float) -> str:
    """A score or a threshold as messages write it: `1`, `0.7`."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def verdict(reply: JudgeReply, threshold: float | None) -> JudgeOutcome:
    """The assertion's outcome: score ≥ threshold (inclusive) with one, else `passed`.

    >>> verdict(JudgeReply(True, 0.7, "sunny"), 0.7).message
    'judge: PASS (score 0.7 ≥ 0.7) — sunny'
    >>> verdict(JudgeReply(True, None, ""), 0.5).status
    'error'
    """
    reason = f" — {reply.reason}" if reply.reason else ""
    if threshold is not None:
        if reply.score is None:
            where = f" cached in {reply.file}" if reply.file is not None else ""
            fix = (
                " (delete the file: --judge live with a key asks again)"
                if reply.file is not None
                else ""
            )
            return JudgeOutcome(
                "error",
                f"judge: the verdict{where} has no score, and a threshold "
                f"(>= {number_text(threshold)}) needs one{fix}{reason}",
            )
        ok = reply.score >= threshold
        sign = "≥" if ok else "<"
        shown = f"score {number_text(reply.score)} {sign} {number_text(threshold)}"
        status: Status = "pass" if ok else "fail"
    else:
        ok = reply.passed
        shown = f"score {number_text(reply.score)}" if reply.score is not None else ""
        status = "pass" if ok else "fail"
    detail = f" ({shown})" if shown else ""
    return JudgeOutcome(status, f"judge: {status.upper()}{detail}{reason}", reply.score)
