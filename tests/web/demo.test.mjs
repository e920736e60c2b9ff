// Browser end-to-end test of the dashboard's demo page (/demo): one loop
// simulated in the page's own script. A visitor sets the target and the
// step limit and watches; the loop must stop at the target it is given, and
// a target changed while the loop runs must stop it there. Run by
// run_e2e.sh (which sets RATCHET, RATCHET_WEB_FIXTURE and RATCHET_ARTIFACTS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const RATCHET = process.env.RATCHET;
const FIXTURE = process.env.RATCHET_WEB_FIXTURE;
const ARTIFACTS = process.env.RATCHET_ARTIFACTS || join(process.cwd(), 'test-artifacts');
assert.ok(RATCHET && FIXTURE, 'set RATCHET and RATCHET_WEB_FIXTURE (run_e2e.sh does)');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];

let dir, server, browser, page, url;
const requests = [];

function serve(loopDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(RATCHET, ['serve', loopDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error('ratchet serve printed no URL: ' + out)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+\/)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error('ratchet serve exited ' + code)); });
  });
}

// The page's state, from its body data attributes.
const state = () => page.evaluate(() => ({ ...document.body.dataset }));

async function settle(opts) {
  for (const [id, value] of Object.entries(opts)) await page.fill('#' + id, String(value));
}

async function runToStop(timeout = 30000) {
  await page.waitForFunction(() => document.body.dataset.state === 'stopped', null, { timeout });
  return state();
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ratchet-demo-'));
  execFileSync(FIXTURE, [dir, '--experiments', '3'], { encoding: 'utf8' });
  ({ child: server, url } = await serve(dir));
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (e) => { throw e; });
  page.on('request', (r) => requests.push(r.url()));
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the demo stops at the target it is given', async () => {
  await page.goto(url + 'demo');
  await page.waitForSelector('body[data-ready="1"]');
  assert.equal((await state()).state, 'ready');
  await settle({ target: '1.9', limit: '400', seed: '3' });
  await page.fill('#speed', '100');
  await page.click('#start');
  const first = await runToStop();
  assert.match(first.stopReason, /^reached the target 1\.900: val_bpb /);
  assert.ok(parseFloat(first.best) <= 1.9, JSON.stringify(first));
  const n1 = parseInt(first.experiments, 10);
  assert.ok(n1 < 400, 'stopped by the target, not the limit');
  // It stopped as soon as the target was met: the last experiment is the
  // keep that met it, and the best before it was above the target.
  const history = await page.evaluate(() => window.ratchetDemo.history());
  assert.equal(history.length, n1);
  const keeps = history.filter((e) => e.status === 'keep');
  assert.equal(keeps.at(-1).id, n1, 'stopped right after the keep that met the target');
  assert.ok(keeps.at(-1).metric <= 1.9 && keeps.at(-2).metric > 1.9, JSON.stringify(keeps.slice(-2)));

  // A lower target: the same seeded loop goes further and stops there.
  await page.click('#reset');
  await settle({ target: '1.7' });
  await page.click('#start');
  const second = await runToStop();
  assert.match(second.stopReason, /^reached the target 1\.700/);
  assert.ok(parseFloat(second.best) <= 1.7);
  assert.ok(parseInt(second.experiments, 10) > n1, 'a lower target takes more experiments');
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'demo.png'), fullPage: true });
});

test('changing the target while the loop runs stops it at the new target', async () => {
  await page.click('#reset');
  await settle({ target: '0.5', limit: '1000', seed: '11' });
  await page.fill('#speed', '60');
  await page.click('#start');
  await page.waitForFunction(() => parseInt(document.body.dataset.experiments || '0', 10) >= 6);
  assert.equal((await state()).state, 'running');
  // Mid-run: hold it (an experiment may be in flight), set the target just
  // above the best so far, let it go on.
  await page.click('#pause');
  const held = await state();
  assert.equal(held.state, 'paused');
  const inFlight = (await page.evaluate(() => window.ratchetDemo.next())) !== 'check';
  const newTarget = (parseFloat(held.best) + 0.005).toFixed(3);
  await settle({ target: newTarget });
  await page.click('#pause');  // resume
  const stopped = await runToStop(10000);
  assert.match(stopped.stopReason, new RegExp('^reached the target ' + newTarget.replace('.', '\\.')));
  // It stops at the first check under the new target: after the experiment
  // that was in flight, if any, and no later.
  assert.equal(parseInt(stopped.experiments, 10), parseInt(held.experiments, 10) + (inFlight ? 1 : 0),
    JSON.stringify([held, inFlight, stopped]));
});

test('the step limit stops it when the target is out of reach', async () => {
  await page.click('#reset');
  await settle({ target: '0.5', limit: '25', seed: '5' });
  await page.fill('#speed', '100');
  await page.click('#start');
  const s = await runToStop();
  assert.equal(s.stopReason, 'reached the step limit (25 experiments)');
  assert.equal(s.experiments, '25');
  // The chart drew every experiment: kept, other and failed points.
  const drawn = await page.evaluate(() => ['.pts-kept', '.pts-other', '.pts-fail']
    .map((c) => (document.querySelector('#chart ' + c).getAttribute('d').match(/M/g) || []).length)
    .reduce((a, b) => a + b, 0));
  assert.equal(drawn, 25);
});

test('the demo needs nothing from the server beyond its own files', async () => {
  const paths = [...new Set(requests.filter((u) => u.startsWith('http')).map((u) => new URL(u).pathname))].sort();
  assert.deepEqual(paths, ['/demo', '/demo.css', '/demo.js', '/app.css'].sort());
});
