// One JSON request per line on stdin, one JSON answer per line on stdout:
//   {"regex": PATTERN, "texts": [..]}  -> {"error": MESSAGE|null, "found": [bool, ..]}
//       new RegExp(PATTERN) (no flags, as traceplay and cycgraph compile it), .test each text
//   {"yaml": TEXT}                      -> {"error": MESSAGE|null, "value": VALUE}
//       the npm `yaml` package's parse(TEXT), as traceplay reads suites; numbers that JSON
//       cannot hold are written {"number": "Infinity" | "-Infinity" | "NaN"}
import { createInterface } from 'node:readline';
import { parse } from 'yaml';

function plain(value) {
  if (typeof value === 'number' && !Number.isFinite(value)) return { number: String(value) };
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function answer(request) {
  if ('regex' in request) {
    try {
      const re = new RegExp(request.regex);
      return { error: null, found: request.texts.map((t) => re.test(t)) };
    } catch (err) {
      return { error: String(err.message), found: [] };
    }
  }
  try {
    return { error: null, value: plain(parse(request.yaml)) };
  } catch (err) {
    return { error: String(err.message), value: null };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(JSON.stringify(answer(JSON.parse(line))) + '\n');
}
