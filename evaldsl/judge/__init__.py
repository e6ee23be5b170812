"""The LLM judge: decide `X judged "rubric"` through an OpenAI-compatible chat endpoint.

Takes (text, rubric, model, threshold) and gives a `JudgeOutcome` (the `Judge` protocol of
`protocol.py`), reading a content-addressed cache before any network call. docs/language.md §7 is
the contract; docs/language.md §7 (traceplay) the precedent, kept where it is good:

- the cache key is traceplay's, `sha256(JSON.stringify({answer, rubric, model, apiBase}))`,
  so `.traceplay/judge-cache` can be reused, and its `{"passed", "reason"}` files are read;
- a cache hit needs neither the network nor a key (traceplay checked the key first);
- the URL keeps the base URL's path (`…/v1/chat/completions`; traceplay dropped `/v1`);
- the HTTP status is checked, 5xx / 429 / timeouts are retried with backoff a bounded
  number of times, and everything that is not the JSON verdict asked for is an error
  naming what came back: a judge assertion never passes by accident;
- the API key never appears in a message, a log record, a cache file or a repr.

Modes: `live` (cache, then the endpoint), `frozen` (cache only: a miss is an error, for CI),
`off` (every judge assertion skips). `plan` counts the calls a run would make and
`LLMJudge.prefetch` makes them concurrently, so later per-assertion calls are cache hits
while the report keeps source order:

    recorder = RecordingJudge()
    evaldsl.compile(text, judge=recorder).check(run)      # notes (text, rubric, model)
    judge = LLMJudge(JudgeConfig.from_env(mode="live"))   # or "frozen" in CI
    total, cached = judge.plan(recorder.requests)
    judge.prefetch(recorder.requests)                     # concurrent, bounded
    evaldsl.compile(text, judge=judge).check(run)         # every judge call is a hit

The parts: `protocol` (what the rest of evaldsl calls), `modes` (the modes' names, which
the command line and the pytest plugin declare their options from), `config` (settings),
`cache` (keys and files), `reply` (parsing replies, outcomes), `secrets` (the key in every
form a reply can echo it in), `client` (the endpoint, bounded replies, retries,
redaction), `plan` (recording, counting and prefetching a run's questions).
"""
