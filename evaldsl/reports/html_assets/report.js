// The evaldsl HTML report: reads the JSON block and builds the page.
// Every string from a suite or a run goes into the DOM through textContent (never
// innerHTML), so an answer holding markup shows as text. The case list renders only the
// rows on screen (fixed-height rows in a scrolled box), so 10,000 cases stay quick.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("evaldsl-data").textContent);
  const S = DATA.strings;
  const str = (i) => (i === null || i === undefined ? null : S[i]);
  const OUTCOMES = ["passed", "failed", "error", "skipped"];
  const ICON = { passed: "✓", failed: "✗", error: "!", skipped: "○" };
  const WORD = { passed: "passed", failed: "failed", error: "errored", skipped: "skipped" };
  const METRICS = [["latency"], ["step", "steps"], ["tool call", "tool calls"], ["input token", "input tokens"], ["output token", "output tokens"], ["cost"], ["guard", "guards"]];
  const ROW = 34;
  const OVERSCAN = 8;

  // ---- small helpers --------------------------------------------------------------

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, ...children) {
    for (const child of children) if (child) parent.appendChild(child);
    return parent;
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return "–";
    return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
  }
  function count(n) { return Number(n).toLocaleString("en-US"); }
  function pct(x) { return `${(x * 100).toFixed(1)}%`; }
  // as reports/common.py's money(): cents, or two significant digits under a cent,
  // written out without an exponent and without trailing zeros ($0.005, $0.00000015)
  function money(x) {
    if (x === 0 || Math.abs(x) >= 0.01) return `$${x.toFixed(2)}`;
    const r = Number(x.toPrecision(2));
    const digits = Math.min(100, 1 - Math.floor(Math.log10(Math.abs(r))));
    return `$${r.toFixed(digits).replace(/0+$/, "")}`;
  }
  function plural(n, word) { return `${count(n)} ${word}${n === 1 ? "" : "s"}`; }
  // a case whose assertions were all skipped was not tested: the pass rate leaves it out
  function tested(list) { return list.filter((c) => c.outcome !== "skipped").length; }
  // Labels cut to `room` characters, keeping their start and end; a label that would then
  // read as another's (suites of one name, in files that differ mid-path) keeps the part
  // where it differs from the others instead of its end.
  function elide(texts, room) {
    const cut = texts.map((t) => {
      if (t.length <= room) return t;
      const tail = Math.floor((room - 1) / 2);
      return t.slice(0, room - 1 - tail) + "…" + t.slice(t.length - tail);
    });
    return cut.map((c, i) => {
      const t = texts[i];
      if (c === t || cut.filter((o) => o === c).length < 2) return c;
      let at = 0; // where t first differs from another label
      for (const o of texts) {
        if (o === t) continue;
        let k = 0;
        while (k < t.length && t[k] === o[k]) k++;
        at = Math.max(at, k);
      }
      const head = Math.floor(room / 3);
      const width = room - head - 1;
      const from = Math.min(Math.max(head, at - Math.floor(width / 3)), t.length - width);
      const end = from + width < t.length;
      return t.slice(0, head) + "…" + t.slice(from, from + width - (end ? 1 : 0)) + (end ? "…" : "");
    });
  }
  function metricText(index, value) {
    if (index === 0) return duration(value);
    if (index === 5) return money(value);
    return count(value);
  }

  // ---- the model: cases flattened once -----------------------------------------------

  const suites = DATA.suites.map((suite, si) => ({
    index: si,
    name: str(suite.name),
    path: str(suite.path),
    diagnostics: suite.diagnostics,
    cases: suite.cases.map((c, ci) => ({ ...c, si, ci, nameText: str(c.name) })),
  }));
  const cases = suites.flatMap((s) => s.cases);
  // what the search box looks in: names, assertion texts, messages, the run's error
  for (const c of cases) {
    const parts = [suites[c.si].name, c.nameText, str(c.error) || ""];
    for (const a of c.assertions) parts.push(str(a[0]), str(a[5]));
    c.haystack = parts.join("\n").toLowerCase();
  }

  const state = { filter: "all", terms: [], rows: [], selected: null };

  // ---- header, cards, chart, problems ---------------------------------------------

  function header() {
    const sum = DATA.summary;
    document.getElementById("title").textContent = DATA.title === "evaldsl report" ? "report" : DATA.title;
    const meta = document.getElementById("meta");
    meta.textContent = `${plural(suites.length, "suite")} · ${plural(sum.cases, "case")} · ${duration(sum.duration_ms)} · generated ${DATA.generated} · evaldsl ${DATA.evaldsl}`;
    const o = sum.outcomes;
    document.title = `${DATA.title}: ${o.passed} passed, ${o.failed + o.error} not${o.skipped ? `, ${o.skipped} skipped` : ""}${sum.interrupted ? `, ${sum.not_run.length} not run (interrupted)` : ""}`;
  }

  function cards() {
    const sum = DATA.summary;
    const o = sum.outcomes;
    const box = document.getElementById("cards");
    const card = (label, big, sub, id) => {
      const c = add(el("div", "card"), el("h2", "", label), el("div", "big", big));
      if (id) c.id = id;
      if (sub) c.appendChild(el("div", "sub", sub));
      box.appendChild(c);
      return c;
    };
    const n = sum.cases - o.skipped;
    const of = o.skipped ? `${count(o.passed)} of ${plural(n, "tested case")} passed, ${count(o.skipped)} skipped` : `${count(o.passed)} of ${plural(n, "case")} passed`;
    const rate = card("Pass rate", n ? pct(sum.pass_rate) : "–", of, "card-rate");
    rate.querySelector(".big").className = "big " + (sum.pass_rate >= 0.999 ? "c-pass" : sum.pass_rate >= 0.5 ? "c-error" : "c-fail");
    rate.appendChild(meter([[o.passed, "b-pass"], [o.failed, "b-fail"], [o.error, "b-error"], [o.skipped, "b-skip"]]));
    card("Score", sum.overall_score.toFixed(2), "mean of the case scores", "card-score");
    const tally = (pairs) => {
      const t = el("div", "tally");
      for (const [n, label, cls] of pairs) {
        const item = el("span", cls);
        item.dataset.count = label;
        add(item, el("b", "", count(n)), document.createTextNode(` ${label}`));
        t.appendChild(item);
      }
      return t;
    };
    const cs = card("Cases", count(sum.cases), null, "card-cases");
    cs.appendChild(tally([[o.passed, "passed", "c-pass"], [o.failed, "failed", "c-fail"], [o.error, "errored", "c-error"], [o.skipped, "skipped", "c-skip"]]));
    const a = sum.assertions;
    const as = card("Assertions", count(a.pass + a.fail + a.skip + a.error), null, "card-assertions");
    as.appendChild(tally([[a.pass, "passed", "c-pass"], [a.fail, "failed", "c-fail"], [a.error, "errored", "c-error"], [a.skip, "skipped", "c-skip"]]));
    const broken = sum.suites_with_errors;
    card("Duration", duration(sum.duration_ms), `${plural(suites.length, "suite")}${broken ? `, ${broken} with check errors` : ""}`, "card-duration");
    if (sum.interrupted) {
      // a run Ctrl-C stopped: not a clean one, and the cases it did not reach are named
      const names = sum.not_run.map(([s, c]) => `${str(s)} › ${str(c)}`);
      const stopped = card("Interrupted", count(names.length), `${sum.interrupted}${names.length ? ": " + names.slice(0, 20).join(", ") + (names.length > 20 ? ", …" : "") : ""}`, "card-interrupted");
      stopped.querySelector(".big").className = "big c-fail";
    }
    const m = sum.metrics;
    const tokens = (m.input_tokens || 0) + (m.output_tokens || 0);
    const usage = [];
    if (m.steps !== null) usage.push(plural(m.steps, "step"));
    if (m.tool_calls !== null) usage.push(plural(m.tool_calls, "tool call"));
    if (m.cost !== null) usage.push(`cost ${money(m.cost)}`);
    card("Tokens", count(tokens), usage.join(" · ") || "no usage recorded", "card-tokens");
  }

  function meter(parts) {
    const total = parts.reduce((n, [v]) => n + v, 0) || 1;
    const m = el("div", "meter");
    for (const [v, cls] of parts) {
      if (!v) continue;
      const seg = el("span", cls);
      seg.style.width = `${(v / total) * 100}%`;
      m.appendChild(seg);
    }
    return m;
  }

  function chart() {
    const box = document.getElementById("chart");
    const shown = suites.filter((s) => s.cases.length || s.diagnostics.length);
    if (!shown.length) { box.appendChild(el("div", "muted", "No suites.")); return; }
    // drawn at the box's own width, so text keeps its size; twin names get their file
    const names = {};
    for (const s of shown) names[s.name] = (names[s.name] || 0) + 1;
    const width = Math.max(box.clientWidth, 280);
    const rowH = 26, valueW = 104, labelW = Math.min(190, Math.round(width * 0.4));
    const barW = width - labelW - valueW;
    const chartSvg = svg("svg", { width, height: shown.length * rowH, viewBox: `0 0 ${width} ${shown.length * rowH}`, role: "img", "aria-label": "pass rate per suite" });
    const room = Math.floor(labelW / 7.2);
    const labels = elide(shown.map((s) => (names[s.name] > 1 ? `${s.name} · ${s.path.split(/[\\/]/).pop()}` : s.name)), room);
    shown.forEach((s, i) => {
      const passed = s.cases.filter((c) => c.outcome === "passed").length;
      const n = tested(s.cases);
      const rate = n ? passed / n : 0;
      const y = i * rowH;
      const label = svg("text", { x: 0, y: y + 17, class: "label" }, labels[i]);
      label.appendChild(svg("title", {}, `${s.name} (${s.path})`));
      chartSvg.appendChild(label);
      chartSvg.appendChild(svg("rect", { x: labelW, y: y + 7, width: barW, height: 12, rx: 6, class: "track" }));
      const color = rate >= 0.999 ? "var(--pass)" : rate >= 0.5 ? "var(--error)" : "var(--fail)";
      if (rate > 0) {
        const bar = svg("rect", { x: labelW, y: y + 7, width: Math.max(barW * rate, 6), height: 12, rx: 6 });
        bar.style.fill = color;
        chartSvg.appendChild(bar);
      }
      const value = n ? `${Math.round(rate * 100)}% · ${count(passed)}/${count(n)}` : s.cases.length ? "all skipped" : "not run";
      chartSvg.appendChild(svg("text", { x: width, y: y + 17, class: "value", "text-anchor": "end" }, value));
    });
    box.appendChild(chartSvg);
  }

  function problems() {
    const all = suites.flatMap((s) => s.diagnostics.map((d) => ({ s, d })));
    if (!all.length) return;
    const errors = all.filter(({ d }) => d[0] === "error").length;
    const warnings = all.length - errors;
    const box = document.getElementById("problems");
    box.hidden = false;
    if (!errors) box.style.borderLeftColor = "var(--error)";
    const files = new Set(all.map(({ s }) => s.index)).size;
    document.getElementById("problems-summary").textContent =
      `Check problems: ${plural(errors, "error")}, ${plural(warnings, "warning")} in ${plural(files, "suite")} (cases with errors were not run)`;
    const list = document.getElementById("problems-list");
    for (const { d } of all) list.appendChild(diagnostic(d));
  }

  function diagnostic(d) {
    const [severity, code, message, path, line, column, source, start, end, hint] = d;
    const box = el("div", `diag ${severity}`);
    const head = add(el("div", "a-head"), el("span", `pill ${severity}`, `${severity} ${code}`), el("span", "", str(message)));
    head.appendChild(el("span", "a-loc", `${str(path)}:${line}:${column}`));
    box.appendChild(head);
    if (str(source)) box.appendChild(sourceBlock(line, str(source), start, end));
    if (str(hint)) box.appendChild(el("div", "hint", str(hint)));
    return box;
  }

  // ---- the source line with its caret span, as the console shows it ------------------

  function sourceBlock(line, text, start, end) {
    const chars = Array.from(text.replace(/\t/g, " "));
    const gutter = String(line);
    const pre = el("pre", "src");
    add(pre, el("span", "gut", `${gutter} | `), el("span", "", chars.slice(0, start).join("")));
    add(pre, el("span", "hl", chars.slice(start, end).join("")), el("span", "", chars.slice(end).join("")));
    pre.appendChild(document.createTextNode("\n"));
    add(pre, el("span", "gut", `${" ".repeat(gutter.length)} | `), el("span", "pad", chars.slice(0, start).join("")));
    pre.appendChild(el("span", "carets", "^".repeat(Math.max(end - start, 1))));
    return pre;
  }

  // ---- filters, search and the virtual list --------------------------------------------

  function matches(c) {
    if (state.filter !== "all" && c.outcome !== state.filter) return false;
    for (const term of state.terms) if (!c.haystack.includes(term)) return false;
    return true;
  }

  function rebuild() {
    const rows = [];
    let shownCases = 0;
    for (const s of suites) {
      const visible = s.cases.filter(matches);
      const broken = s.diagnostics.some((d) => d[0] === "error");
      const suiteMatches = state.terms.every((t) => s.name.toLowerCase().includes(t) || s.path.toLowerCase().includes(t));
      // a suite that ran nothing still shows, with its problems, under all and errored
      const keepEmpty = !s.cases.length && (state.filter === "all" || (state.filter === "error" && broken)) && suiteMatches;
      if (!visible.length && !keepEmpty) continue;
      rows.push({ kind: "suite", suite: s, shown: visible.length });
      for (const c of visible) rows.push({ kind: "case", c });
      shownCases += visible.length;
    }
    state.rows = rows;
    document.getElementById("spacer").style.height = `${rows.length * ROW}px`;
    document.getElementById("empty").hidden = rows.length > 0;
    document.getElementById("shown").textContent =
      `Showing ${count(shownCases)} of ${plural(cases.length, "case")}`;
    for (const button of document.querySelectorAll("#filters button")) {
      button.setAttribute("aria-pressed", String(button.dataset.filter === state.filter));
    }
    render();
  }

  function render() {
    const list = document.getElementById("list");
    const first = Math.max(0, Math.floor(list.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(state.rows.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + OVERSCAN);
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) frag.appendChild(rowNode(state.rows[i], i));
    document.getElementById("rows").replaceChildren(frag);
  }

  function rowNode(row, i) {
    const node = el("div", `row ${row.kind}`);
    node.style.top = `${i * ROW}px`;
    node.setAttribute("role", "option");
    if (row.kind === "suite") {
      const s = row.suite;
      const passed = s.cases.filter((c) => c.outcome === "passed").length;
      const name = el("span", "name", s.name);
      name.title = s.path;
      add(node, name);
      const errors = s.diagnostics.filter((d) => d[0] === "error").length;
      if (errors) node.appendChild(el("span", "tag", plural(errors, "check error")));
      node.appendChild(el("span", "num", s.cases.length ? `${passed}/${tested(s.cases)} passed` : "not run"));
      node.dataset.suite = String(s.index);
      if (state.selected && state.selected.kind === "suite" && state.selected.suite === s) node.classList.add("selected");
      return node;
    }
    const c = row.c;
    node.dataset.case = `${c.si}.${c.ci}`;
    node.dataset.outcome = c.outcome;
    const name = el("span", "name", c.nameText);
    name.title = c.nameText;
    add(node, el("span", `icon ${c.outcome}`, ICON[c.outcome]), name, el("span", "num", c.score.toFixed(2)), el("span", "num ms", duration(c.ms)));
    if (state.selected && state.selected.c === c) {
      node.classList.add("selected");
      node.setAttribute("aria-selected", "true");
    }
    return node;
  }

  function select(row, scroll) {
    state.selected = row;
    if (row && row.kind === "case") history.replaceState(null, "", `#case-${row.c.si}-${row.c.ci}`);
    render();
    showDetail();
    if (scroll && row) {
      const i = state.rows.findIndex((r) => (row.kind === "case" ? r.c === row.c : r.suite === row.suite));
      const list = document.getElementById("list");
      if (i >= 0 && (i * ROW < list.scrollTop || (i + 1) * ROW > list.scrollTop + list.clientHeight)) {
        list.scrollTop = Math.max(0, i * ROW - list.clientHeight / 2);
      }
    }
  }

  function move(step) {
    const caseRows = state.rows.filter((r) => r.kind === "case");
    if (!caseRows.length) return;
    const at = caseRows.findIndex((r) => state.selected && r.c === state.selected.c);
    const next = caseRows[Math.min(Math.max(at + step, 0), caseRows.length - 1)];
    select(next, true);
  }

  // ---- details ------------------------------------------------------------------------

  function showDetail() {
    const box = document.getElementById("detail");
    box.replaceChildren();
    const row = state.selected;
    if (!row) { box.appendChild(el("div", "muted", "Select a case to see its assertions.")); return; }
    if (row.kind === "suite") return suiteDetail(box, row.suite);
    const c = row.c;
    const s = suites[c.si];
    const head = add(el("div", "d-head"), el("span", `pill ${c.outcome}`, WORD[c.outcome]));
    const titles = add(el("div"), el("h1", "", c.nameText), el("div", "d-sub", `${s.name} · ${s.path}`));
    head.appendChild(titles);
    box.appendChild(head);
    const chips = el("div", "chips");
    const chip = (label, value) => add(chips, add(el("span", "chip"), el("b", "", value), document.createTextNode(` ${label}`)));
    chip("score", c.score.toFixed(2));
    chip("to run", duration(c.ms));
    c.metrics.forEach((value, i) => {
      if (value !== null) chip(METRICS[i][value === 1 || METRICS[i].length === 1 ? 0 : 1], metricText(i, value));
    });
    box.appendChild(chips);
    if (c.error !== null) box.appendChild(el("div", "crash", `error: ${str(c.error)}`));
    if (c.assertions.length) {
      const bad = c.assertions.filter((a) => a[4] === "fail" || a[4] === "error").length;
      box.appendChild(el("h3", "", `Assertions · ${bad ? `${bad} of ${c.assertions.length} failed` : `${c.assertions.length}`}`));
      const list = el("ol", "assertions");
      for (const a of c.assertions) list.appendChild(assertion(a));
      box.appendChild(list);
    }
    if (c.timeline) box.appendChild(timeline(c.timeline));
  }

  function assertion(a) {
    const [text, path, line, column, status, message, found, expected, source, start, end, judge] = a;
    const item = el("li", `a ${status}`);
    item.dataset.status = status;
    add(item, add(el("div", "a-head"), el("span", `pill ${status}`, status), el("code", "", str(text)), el("span", "a-loc", `${str(path)}:${line}:${column}`)));
    const failing = status === "fail" || status === "error";
    if (judge) {
      item.appendChild(judgeBlock(judge, status));
    } else if (str(message) && str(message) !== str(text)) {
      item.appendChild(el("div", "a-msg", str(message)));
    }
    if (failing && str(source)) item.appendChild(sourceBlock(line, str(source), start, end));
    if (failing && (found !== null || expected !== null)) {
      const fe = el("dl", "fe");
      add(fe, el("dt", "", "found"), add(el("dd", "found"), el("code", "", str(found))));
      add(fe, el("dt", "", "expected"), add(el("dd", "expected"), el("code", "", str(expected))));
      item.appendChild(fe);
    }
    return item;
  }

  function judgeBlock(judge, status) {
    const [score, threshold, reason] = judge;
    const box = el("div", "judge");
    const left = el("div");
    const label = score === null ? "no score" : `score ${score}${threshold !== null ? (score >= threshold ? " ≥ " : " < ") + threshold : ""}`;
    left.appendChild(el("div", "", `judge: ${label}`));
    if (score !== null) {
      const gauge = el("div", "gauge");
      const fill = el("span", status === "pass" ? "b-pass" : status === "fail" ? "b-fail" : "b-error");
      fill.style.width = `${Math.min(Math.max(score, 0), 1) * 100}%`;
      gauge.appendChild(fill);
      if (threshold !== null) {
        const tick = el("i");
        tick.style.left = `${Math.min(Math.max(threshold, 0), 1) * 100}%`;
        tick.title = `threshold ${threshold}`;
        gauge.appendChild(tick);
      }
      left.appendChild(gauge);
    }
    add(box, left, el("div", "reason", str(reason)));
    return box;
  }

  function timeline(data) {
    const [truncated, steps] = data;
    const frag = document.createDocumentFragment();
    if (truncated && !steps.length) {
      frag.appendChild(el("h3", "", "Timeline"));
      frag.appendChild(el("div", "note", `Left out: the report keeps ${DATA.event_limit.toLocaleString("en-US")} events in all, and the cases before this one used them up.`));
      return frag;
    }
    // every event shown (message, LLM call, tool call, guard, error), not the `steps` metric
    frag.appendChild(el("h3", "", `Timeline · ${plural(steps.length, "event")}`));
    if (!steps.length) { frag.appendChild(el("div", "note", "The recording has no events this report reads.")); return frag; }
    const end = Math.max(1, ...steps.map((st) => (st[2] || 0) + (st[3] || 0)));
    const grid = el("div", "timeline");
    for (const [kind, name, at, ms, sent, got, error] of steps) {
      const cls = error ? " t-err" : "";
      add(grid, el("div", `t-at${cls}`, at === null ? "" : `+${duration(at)}`));
      add(grid, add(el("div", cls.trim()), el("span", `kind ${kind}`, kind)));
      const nameCell = el("div", `t-name${cls}`, str(name));
      nameCell.title = str(name);
      grid.appendChild(nameCell);
      const barCell = el("div", `t-bar${cls}`);
      if (at !== null) {
        const bar = el("span", `bar-${error ? "error" : kind}`);
        bar.style.left = `${(at / end) * 100}%`;
        bar.style.width = `${((ms || 0) / end) * 100}%`;
        bar.title = ms === null ? `at +${duration(at)}` : `${duration(ms)} from +${duration(at)}`;
        barCell.appendChild(bar);
      }
      grid.appendChild(barCell);
      const io = el("div", `t-io${cls}`);
      if (str(sent)) io.appendChild(el("span", "sent", str(sent)));
      if (str(sent) && str(got)) io.appendChild(document.createTextNode(" → "));
      if (str(got)) io.appendChild(el("span", "got", str(got)));
      io.title = [str(sent), str(got)].filter(Boolean).join(" → ");
      grid.appendChild(io);
    }
    frag.appendChild(grid);
    if (truncated) frag.appendChild(el("div", "note", "The recording has more events than the report keeps."));
    return frag;
  }

  function suiteDetail(box, s) {
    const passed = s.cases.filter((c) => c.outcome === "passed").length;
    const head = add(el("div", "d-head"), el("span", "pill info", "suite"));
    add(head, add(el("div"), el("h1", "", s.name), el("div", "d-sub", s.path)));
    box.appendChild(head);
    const chips = el("div", "chips");
    for (const o of OUTCOMES) {
      const n = s.cases.filter((c) => c.outcome === o).length;
      add(chips, add(el("span", "chip"), el("b", "", count(n)), document.createTextNode(` ${WORD[o]}`)));
    }
    box.appendChild(chips);
    if (!s.cases.length) box.appendChild(el("div", "note", "No case of this suite ran."));
    else box.appendChild(el("div", "note", `${passed} of ${plural(tested(s.cases), "tested case")} passed.`));
    if (s.diagnostics.length) {
      box.appendChild(el("h3", "", `Check problems · ${s.diagnostics.length}`));
      for (const d of s.diagnostics) box.appendChild(diagnostic(d));
    }
  }

  // ---- wiring -------------------------------------------------------------------------

  function counts() {
    const n = { all: cases.length, failed: 0, error: 0, skipped: 0, passed: 0 };
    for (const c of cases) n[c.outcome] += 1;
    for (const button of document.querySelectorAll("#filters button")) {
      button.querySelector(".count").textContent = count(n[button.dataset.filter]);
    }
  }

  function start() {
    header();
    cards();
    chart();
    problems();
    counts();
    const list = document.getElementById("list");
    list.addEventListener("scroll", () => window.requestAnimationFrame(render), { passive: true });
    window.addEventListener("resize", () => window.requestAnimationFrame(render));
    list.addEventListener("click", (event) => {
      const node = event.target.closest(".row");
      if (!node) return;
      const i = Math.round(parseFloat(node.style.top) / ROW);
      select(state.rows[i], false);
    });
    document.getElementById("filters").addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) return;
      state.filter = button.dataset.filter;
      list.scrollTop = 0;
      rebuild();
    });
    let pending = 0;
    document.getElementById("search").addEventListener("input", (event) => {
      window.clearTimeout(pending);
      pending = window.setTimeout(() => {
        state.terms = event.target.value.toLowerCase().split(/\s+/).filter(Boolean);
        list.scrollTop = 0;
        rebuild();
      }, 60);
    });
    document.addEventListener("keydown", (event) => {
      const typing = event.target instanceof HTMLInputElement;
      if (event.key === "/" && !typing) { event.preventDefault(); document.getElementById("search").focus(); return; }
      if (typing && event.key !== "Escape") return;
      if (event.key === "Escape") { event.target.blur && event.target.blur(); return; }
      if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); move(1); }
      if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); move(-1); }
    });
    rebuild();
    // the case named in the address, else the first failure, else the first case
    const named = /^#case-(\d+)-(\d+)$/.exec(location.hash);
    const wanted = named && suites[+named[1]] && suites[+named[1]].cases[+named[2]];
    const first = wanted || cases.find((c) => c.outcome === "failed") || cases.find((c) => c.outcome === "error") || cases[0];
    if (first) select({ kind: "case", c: first }, true);
    else if (suites.length) select({ kind: "suite", suite: suites[0] }, false);
    else showDetail();
    document.body.dataset.ready = "true";
  }

  start();
})();
