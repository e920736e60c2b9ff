// First load of the dashboard on a 10,000-experiment loop, against a
// 30-experiment loop in the same run (the machine is shared and noisy).
//   node bench/web/first_load.mjs BUILD/ratchet BUILD/src/web/ratchet_web_fixture [rounds=7]
// "First load": from navigation start until the page has fetched the state,
// drawn the chart and the first table page (window.__ratchetReadyMs), with
// nothing cached.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { chromium } = await import(join(here, '../../tests/web/node_modules/playwright-core/index.mjs'));
const [ratchet, fixture, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg || 7);

function serve(dir) {
  return new Promise((resolve, reject) => {
    const child = spawn(ratchet, ['serve', dir, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+\/)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error('ratchet serve exited ' + code)));
  });
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const loops = {};
for (const n of [30, 10000]) {
  const dir = mkdtempSync(join(tmpdir(), 'ratchet-bench-'));
  const t0 = Date.now();
  execFileSync(fixture, [dir, '--experiments', String(n), '--no-git', '--no-logs']);
  loops[n] = { dir, made_s: (Date.now() - t0) / 1000, ms: [], marks: [], bytes: 0 };
}
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
// One page per loop, kept open; each round navigates it away and back, so
// what is timed is the document's load (no HTTP cache: the server sends
// Cache-Control: no-store), not the start of a browser process. Rounds
// alternate between the loops so both see the same machine.
const servers = [];
for (const n of Object.keys(loops)) {
  const loop = loops[n];
  const { child, url } = await serve(loop.dir);
  servers.push(child);
  loop.url = url;
  loop.bytes = (await (await fetch(url + 'api/state')).arrayBuffer()).byteLength;
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  loop.page = await context.newPage();
}
for (let i = 0; i < rounds; i++) {
  for (const n of Object.keys(loops)) {
    const loop = loops[n];
    const page = loop.page;
    await page.goto('about:blank');
    await page.goto(loop.url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    loop.ms.push(await page.evaluate(() => window.__ratchetReadyMs));
    // Where the time went: the state received and parsed, the chart drawn.
    loop.marks.push(await page.evaluate(() => Object.fromEntries(
      performance.getEntriesByType('mark').map((m) => [m.name.replace('ratchet-', ''), Math.round(m.startTime)]))));
    const rows = await page.evaluate(() => document.body.dataset.rows);
    if (Number(rows) !== Number(n)) throw new Error(`page shows ${rows} rows, expected ${n}`);
  }
}
for (const child of servers) child.kill('SIGTERM');
await browser.close();
for (const loop of Object.values(loops)) rmSync(loop.dir, { recursive: true, force: true });
const m30 = median(loops[30].ms), m10k = median(loops[10000].ms);
console.log(`experiments  state JSON  first load (median of ${rounds}, ms)  all runs`);
for (const n of Object.keys(loops)) {
  const l = loops[n];
  console.log(`${String(n).padStart(11)}  ${(l.bytes / 1024).toFixed(0).padStart(7)} KiB  ${median(l.ms).toFixed(0).padStart(10)}  ${l.ms.map((x) => x.toFixed(0)).join(' ')}`);
}
for (const n of Object.keys(loops)) {
  const mk = loops[n].marks;
  const med = (k) => median(mk.map((m) => m[k]));
  console.log(`${n}: median ms since navigation: state parsed ${med('state')}, chart ${med('chart')}, table ${med('table')}`);
}
console.log(`load average while measuring: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')} on ${(await import('node:os')).cpus().length} cores`);
console.log(`ratio 10000/30: ${(m10k / m30).toFixed(2)}; 10,000 under one second: ${m10k < 1000 ? 'yes' : 'NO'}`);
process.exit(m10k < 1000 ? 0 : 1);
