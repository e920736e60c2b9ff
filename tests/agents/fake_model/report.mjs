// Reads the fake model server's request log (server.mjs --log) for a test.
//   node report.mjs LOG usage N [PRICES]   "INPUT OUTPUT COST" the server sent experiment N:
//                                          input counts cache reads and writes;
//                                          PRICES is JSON {model: [in, out, cache_read,
//                                          cache_write]} in USD per million tokens
//   node report.mjs LOG models N           the models experiment N's calls asked for, one a line
//   node report.mjs LOG prompt N           the user's message of experiment N, as the CLI sent it
//   node report.mjs LOG calls N            how many calls experiment N made (answered or not)
//   node report.mjs LOG tool-result N TEXT  exit 0 when a tool result of experiment N contains TEXT
//   node report.mjs LOG hung-closed N      exit 0 when every call of N the server held open was
//                                          closed by the client (it is gone)
import fs from 'node:fs';

const [log, what, n, arg] = process.argv.slice(2);
const entries = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const calls = entries.filter((e) => e.api && e.experiment === Number(n));

function fail(message) {
  console.error(`report.mjs: ${message}`);
  process.exit(1);
}

if (what === 'usage') {
  const prices = arg ? JSON.parse(arg) : {};
  let input = 0, output = 0, cost = 0;
  for (const c of calls) {
    if (!c.usage) continue;
    const u = c.usage;
    input += u.input + u.cache_read + u.cache_write;
    output += u.output;
    const p = prices[c.model];
    if (arg && !p) fail(`no price for ${c.model}`);
    if (p) cost += (u.input * p[0] + u.output * p[1] + u.cache_read * p[2] + u.cache_write * p[3]) / 1e6;
  }
  console.log(`${input} ${output} ${cost.toFixed(6)}`);
} else if (what === 'models') {
  console.log([...new Set(calls.map((c) => c.model))].join('\n'));
} else if (what === 'prompt') {
  const first = calls.find((c) => c.kind === 'main' && c.prompt !== undefined);
  if (!first) fail(`no prompt recorded for experiment ${n}`);
  process.stdout.write(first.prompt);
} else if (what === 'calls') {
  console.log(calls.length);
} else if (what === 'tool-result') {
  process.exit(calls.some((c) => (c.tool_results || []).some((r) => r.text.includes(arg))) ? 0 : 1);
} else if (what === 'hung-closed') {
  const hung = calls.filter((c) => c.answer === 'hang').map((c) => c.seq);
  const closed = new Set(entries.filter((e) => e.closed).map((e) => e.seq));
  process.exit(hung.length > 0 && hung.every((s) => closed.has(s)) ? 0 : 1);
} else {
  fail(`unknown question ${what}`);
}
