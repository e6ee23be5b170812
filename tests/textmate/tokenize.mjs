#!/usr/bin/env node
// Tokenize files with the evaldsl TextMate grammar, as VS Code does (vscode-textmate on
// the Oniguruma WASM build), and print the tokens as JSON.
//
//   node tokenize.mjs [--grammar PATH] FILE...
//
// Output: {"grammar": PATH, "files": [{"path": FILE, "lines": [{"line": 1, "text": "...",
//   "tokens": [{"start": 0, "end": 5, "text": "suite", "scopes": ["source.evaldsl", ...]}],
//   "stoppedEarly": false}]}]}
// Lines are numbered from 1 and columns count UTF-16 code units (as VS Code does). The
// rule stack is carried from line to line, so multi-line constructs behave as in the
// editor. One process tokenizes every file: the WASM start-up is paid once.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

import oniguruma from "vscode-oniguruma";
import vsctm from "vscode-textmate";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  let grammarPath = path.resolve(here, "..", "..", "grammar", "evaldsl.tmLanguage.json");
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--grammar") {
      grammarPath = path.resolve(argv[++i]);
    } else if (argv[i] === "-h" || argv[i] === "--help") {
      process.stdout.write("usage: node tokenize.mjs [--grammar PATH] FILE...\n");
      process.exit(0);
    } else {
      files.push(argv[i]);
    }
  }
  return { grammarPath, files };
}

async function loadGrammar(grammarPath) {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const onigLib = Promise.resolve({
    createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
    createOnigString: (s) => new oniguruma.OnigString(s),
  });
  const text = readFileSync(grammarPath, "utf8");
  // JSON.parse first: a syntax error then names its position plainly.
  const scopeName = JSON.parse(text).scopeName;
  const registry = new vsctm.Registry({
    onigLib,
    loadGrammar: async (name) => (name === scopeName ? vsctm.parseRawGrammar(text, grammarPath) : null),
  });
  const grammar = await registry.loadGrammar(scopeName);
  if (!grammar) throw new Error(`no grammar for ${scopeName} in ${grammarPath}`);
  return grammar;
}

function tokenizeText(grammar, text) {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  let ruleStack = vsctm.INITIAL;
  return lines.map((line, index) => {
    const result = grammar.tokenizeLine(line, ruleStack);
    ruleStack = result.ruleStack;
    const tokens = result.tokens
      .map((token) => ({
        start: token.startIndex,
        // the last token may run past the text (over the "\n" the tokenizer appends)
        end: Math.min(token.endIndex, line.length),
        text: line.slice(token.startIndex, Math.min(token.endIndex, line.length)),
        scopes: token.scopes,
      }))
      .filter((token) => token.end > token.start);
    return { line: index + 1, text: line, tokens, stoppedEarly: result.stoppedEarly };
  });
}

async function main() {
  const { grammarPath, files } = parseArgs(process.argv.slice(2));
  const grammar = await loadGrammar(grammarPath);
  const out = { grammar: grammarPath, files: [] };
  for (const file of files) {
    const text = readFileSync(file, "utf8").replace(/^\ufeff/, "");
    out.files.push({ path: file, lines: tokenizeText(grammar, text) });
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  process.stderr.write(`tokenize.mjs: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
