"""Judge settings: where the endpoint is, how hard to try, where verdicts are cached.

Takes the environment (`EVALDSL_JUDGE_API_KEY`, `EVALDSL_JUDGE_BASE_URL`,
`EVALDSL_JUDGE_MODEL`) and overrides, and gives a validated `JudgeConfig`; also the
defaults and the words messages use to say how to enable the judge.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from evaldsl.cache.regexes import regex
from evaldsl.judge.modes import MODES, JudgeMode
from evaldsl.judge.protocol import Judge
from evaldsl.runs.model import given

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_CACHE_DIR = Path(".evaldsl/judge-cache")
ENV_API_KEY = "EVALDSL_JUDGE_API_KEY"
ENV_BASE_URL = "EVALDSL_JUDGE_BASE_URL"
ENV_MODEL = "EVALDSL_JUDGE_MODEL"
ENABLE_HINT = f"set {ENV_API_KEY} (and optionally {ENV_BASE_URL}, {ENV_MODEL})"
OFF_MESSAGE = "judge assertions are off (--judge off)"
NO_KEY_MESSAGE = f"judge: skipped, no API key and no cached verdict: {ENABLE_HINT} to run it"


def _optional_key(value: str | None) -> str | None:
    # A key pasted with a trailing newline is common; an empty variable means "no key".
    return (value.strip() or None) if value is not None else None


#: Visible ASCII: what an HTTP header (`Authorization: Bearer KEY`) can carry.
_HEADER_SAFE = regex(r"[\x21-\x7e]+")


def _check_key(instance: Any, attribute: Any, value: str | None) -> None:
    # Found before anything runs, as a bad base URL is, not by each judge assertion. The
    # key is never echoed, nor the character (a part of it).
    if value is not None and _HEADER_SAFE.fullmatch(value) is None:
        raise JudgeConfigError(
            f"{ENV_API_KEY} cannot be used: it holds a space, a control character or a "
            "character that is not ASCII, which an HTTP header cannot carry (copy the key "
            "again: only visible ASCII is allowed)"
        )


def _base_url(value: str) -> str:
    return value.strip().rstrip("/")


def _path(value: str | os.PathLike[str]) -> Path:
    return Path(value)


class JudgeConfigError(ValueError):
    """A judge setting that cannot be used (the CLI says it and exits 2)."""


def base_url_problem(value: str) -> str | None:
    """Why a judge base URL cannot be used, or None: an http(s) URL with a host, and
    without a user name, a password, a query or a fragment (the key goes in
    `EVALDSL_JUDGE_API_KEY`; `/chat/completions` is added to the path).

    >>> base_url_problem("http://127.0.0.1:8080/v1") is None
    True
    >>> base_url_problem("https://user:pw@host/v1")
    'it must not hold a user name or password (put the key in EVALDSL_JUDGE_API_KEY)'
    """
    if value == DEFAULT_BASE_URL:
        return None  # checked here, not parsed: `check` and `run` need no HTTP client
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return "it holds spaces or control characters"
    import httpx  # only a URL that was set is parsed (see above)

    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, ValueError, TypeError) as why:
        return f"it is not a URL ({why})"
    if url.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not url.host:
        return "it has no host"
    if url.port is not None and not 0 < url.port < 65536:
        return f"its port {url.port} is not a port (1 to 65535)"
    if url.userinfo:
        return f"it must not hold a user name or password (put the key in {ENV_API_KEY})"
    if url.query or url.fragment or "?" in value or "#" in value:
        return "it must not have a query or a fragment (`/chat/completions` is added to its path)"
    return None


def _check_base_url(instance: Any, attribute: Any, value: str) -> None:
    problem = base_url_problem(value)
    if problem is not None:
        # the URL is not echoed whole: it may hold a password
        shown = value.split("@")[-1] if "@" in value else value
        raise JudgeConfigError(f"{ENV_BASE_URL} cannot be used: {problem}: {shown!r}")


def _check_cache_dir(instance: Any, attribute: Any, value: Path) -> None:
    # A file where the folder should be would fail every write, each with its own warning,
    # after the judge was paid for: refused before anything runs. (The first part of the
    # path that exists is looked at: `afile/sub` cannot be made either.)
    for part in (value, *value.parents):
        try:
            mode = os.stat(part).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as err:  # (`Path.exists` raised for a name too long: a traceback)
            why = err.strerror or type(err).__name__
            where = "it" if part == value else str(part)
            raise JudgeConfigError(
                f"--judge-cache {value}: {where} cannot be looked at ({why}); name a folder"
            ) from None
        if not stat.S_ISDIR(mode):
            where = "that is a file" if part == value else f"{part} is a file"
            raise JudgeConfigError(f"--judge-cache {value}: {where}; name a folder")
        return


def _positive(instance: Any, attribute: Any, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name} must be a positive number of seconds, got {value!r}")


def _non_negative(instance: Any, attribute: Any, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{attribute.name} must be ≥ 0 seconds, got {value!r}")


@attrs.frozen
class JudgeConfig:
    """How to reach the judge, how hard to try, and where its verdicts are cached.

    `retries` is how many times a timeout, a 5xx or a 429 is retried after the first
    attempt; the wait doubles from `backoff` seconds up to `max_backoff` (a server's
    `Retry-After` is honoured up to `retry_after_cap`). The key is left out of the repr.

    >>> JudgeConfig(api_key="sk-secret").chat_url
    'https://api.openai.com/v1/chat/completions'
    >>> "sk-secret" in repr(JudgeConfig(api_key="sk-secret"))
    False
    """

    api_key: str | None = attrs.field(
        default=None, repr=False, converter=_optional_key, validator=_check_key
    )
    base_url: str = attrs.field(
        default=DEFAULT_BASE_URL, converter=_base_url, validator=_check_base_url
    )
    model: str = DEFAULT_MODEL
    timeout: float = attrs.field(default=30.0, validator=_positive)
    retries: int = attrs.field(
        default=3, validator=[attrs.validators.ge(0), attrs.validators.le(10)]
    )
    backoff: float = attrs.field(default=0.5, validator=_non_negative)
    max_backoff: float = attrs.field(default=8.0, validator=_non_negative)
    retry_after_cap: float = attrs.field(default=30.0, validator=_non_negative)
    mode: JudgeMode = attrs.field(default="live", validator=attrs.validators.in_(MODES))
    cache_dir: Path = attrs.field(
        default=DEFAULT_CACHE_DIR, converter=_path, validator=_check_cache_dir
    )
    max_concurrency: int = attrs.field(
        default=8, validator=[attrs.validators.ge(1), attrs.validators.le(256)]
    )

    @property
    def chat_url(self) -> str:
        """The chat-completions URL: the base URL's path (`/v1`) is kept."""
        return f"{self.base_url}/chat/completions"

    @property
    def fetches_ahead(self) -> bool:
        """Whether questions go to the endpoint before they are asked: live, with a key."""
        return self.mode == "live" and self.api_key is not None

    def skips_unasked(self) -> str | None:
        """The message every question is skipped with when that is known without the
        judge's client (its cache keys, its HTTP client and their imports, ~10% of a small
        run): off, or live without a key while the cache folder does not exist (no verdict
        can be cached there, none fetched). None when the client must answer.

        >>> JudgeConfig(mode="off").skips_unasked()
        'judge assertions are off (--judge off)'
        >>> JudgeConfig(api_key="sk-0123456789abcdef", cache_dir="/nonexistent").skips_unasked()
        """
        if self.mode == "off":
            return OFF_MESSAGE
        if self.mode == "live" and self.api_key is None and self.caches_nothing():
            return NO_KEY_MESSAGE
        return None

    def caches_nothing(self) -> bool:
        """Whether no verdict is cached: the cache folder does not exist (asked without
        the client, which reads the folder's files)."""
        return not os.path.lexists(self.cache_dir)

    def model_for(self, model: str | None) -> str:
        """The model a question is put to: its own, else the configured one."""
        return model or self.model

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ, **overrides: Any) -> JudgeConfig:
        """Read `EVALDSL_JUDGE_API_KEY`, `…_BASE_URL` and `…_MODEL`, then apply overrides.

        An override of None is ignored, so a CLI can pass its unset options through.

        >>> config = JudgeConfig.from_env({"EVALDSL_JUDGE_MODEL": "m"}, mode="frozen", timeout=None)
        >>> config.model, config.mode, config.timeout, config.api_key
        ('m', 'frozen', 30.0, None)
        """
        unknown = sorted(set(overrides) - set(attrs.fields_dict(cls)))
        if unknown:
            raise TypeError(f"unknown judge setting(s): {', '.join(unknown)}")
        values: dict[str, Any] = {
            "api_key": environ.get(ENV_API_KEY) or None,
            "base_url": environ.get(ENV_BASE_URL, "").strip() or DEFAULT_BASE_URL,
            "model": environ.get(ENV_MODEL, "").strip() or DEFAULT_MODEL,
        }
        values.update({name: v for name, v in overrides.items() if v is not None})
        return cls(**values)


def judge_argument(judge: object) -> Judge | None:
    """`judge` when it is None or callable as a `Judge`; otherwise the `TypeError` (for
    `compile(judge=…)` and `load_suite(judge=…)`: a wrong one failed at the first judge
    assertion, deep inside).

    >>> judge_argument(None) is None
    True
    """
    if judge is None or callable(judge):
        return judge
    raise TypeError(
        f"judge= takes a judge to call (e.g. evaldsl.judge.client.LLMJudge()) or None, not "
        f'{given(judge)}: a model is named in the statement (`judged "rubric" by "model"`)'
        " or in the judge's configuration"
    )
