// Browser end-to-end test of `ratchet serve`: a recorded loop of 30
// experiments, Debian's chromium driven by Playwright. Run by run_e2e.sh
// (which sets RATCHET, RATCHET_WEB_FIXTURE and RATCHET_ARTIFACTS).
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

// Chromium as root in a container: no sandbox, no GPU, nothing phoning home.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];

let dir, server, browser, page, url, summary;

function fixture(...args) {
  return JSON.parse(execFileSync(FIXTURE, [dir, ...args], { encoding: 'utf8' }));
}

// Starts `ratchet serve` on a free port; resolves with the URL it prints.
function serve(loopDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(RATCHET, ['serve', loopDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error('ratchet serve printed no URL: ' + out + err)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+\/)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }); }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error('ratchet serve exited ' + code + ': ' + err)); });
  });
}

// Every point drawn: each "M" of the three point paths is one experiment.
async function chartCounts() {
  return page.evaluate(() => {
    const n = (sel) => {
      const el = document.querySelector('#chart ' + sel);
      return el ? (el.getAttribute('d').match(/M/g) || []).length : -1;
    };
    return { other: n('.pts-other'), kept: n('.pts-kept'), failed: n('.pts-fail'),
      labels: document.querySelectorAll('#chart text.label').length };
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ratchet-e2e-'));
  summary = fixture('--experiments', '30');
  ({ child: server, url } = await serve(dir));
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on('pageerror', (e) => { throw e; });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the chart shows 30 experiments and the kept ones', async () => {
  assert.equal(summary.experiments, 30);
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  const c = await chartCounts();
  assert.equal(c.other + c.kept + c.failed, 30, JSON.stringify(c));
  assert.equal(c.kept, summary.kept, JSON.stringify(c));
  assert.equal(c.failed, summary.failed, JSON.stringify(c));
  assert.ok(c.labels >= 1, 'kept experiments are labelled');
  assert.equal(await page.locator('#rows tr').count(), 30);
  const kept = await page.locator('[data-stat="kept"] b').textContent();
  assert.equal(Number(kept), summary.kept - 1, 'kept count excludes the baseline');
});

test('a click shows the diff, the metrics and the log', async () => {
  await page.locator('#status-filter').selectOption('keep');
  await page.locator('#rows tr').first().click();
  await page.waitForSelector('#detail pre.diff', { timeout: 15000 });
  const diff = await page.locator('#detail pre.diff').textContent();
  assert.match(diff, /train\.cfg/);
  assert.match(diff, /\+lr = /);
  assert.match(await page.locator('#detail').textContent(), /val_bpb/);
  assert.match(await page.locator('#detail pre.log').textContent(), /val_bpb: /);
  // Its learning curve beside the one of the keep it was proposed from.
  assert.equal(await page.locator('#detail svg.curve polyline.curve-mine').count(), 1);
  assert.equal(await page.locator('#detail svg.curve polyline.curve-ref').count(), 1);
  const points = await page.locator('#detail svg.curve polyline.curve-mine').getAttribute('points');
  assert.equal(points.trim().split(' ').length, 10, 'one vertex per recorded point');
  assert.match(await page.locator('#detail svg.curve').textContent(), /loss/);
  await page.locator('#detail').screenshot({ path: join(ARTIFACTS, 'detail.png') });
  await page.locator('#detail-close').click();
  await page.locator('#status-filter').selectOption('');
});

test('the table sorts by a column and filters by text', async () => {
  await page.locator('th[data-key="m:val_bpb"]').click();
  const first = await page.locator('#rows tr').first().locator('td').nth(2).textContent();
  const values = await page.$$eval('#rows tr', (trs) =>
    trs.map((tr) => parseFloat(tr.children[2].textContent)).filter((v) => !Number.isNaN(v)));
  assert.equal(Number(first), Math.min(...values), 'ascending by val_bpb');
  await page.locator('#filter').fill('baseline');
  assert.equal(await page.locator('#rows tr').count(), 1);
  await page.locator('#filter').fill('');
  await page.locator('th[data-key="id"]').click();  // back to newest first
  await page.locator('th[data-key="id"]').click();
});

test('an appended experiment and the live status appear without a reload', async () => {
  await page.evaluate(() => { window.__noReload = true; });
  fixture('--append', 'appended by the e2e test', '--metric', '0.5');
  await page.waitForSelector('body[data-rows="31"]', { timeout: 30000 });
  const c = await chartCounts();
  assert.equal(c.other + c.kept + c.failed, 31);
  assert.equal(c.kept, summary.kept + 1);
  assert.ok(await page.evaluate(() => window.__noReload === true), 'the page was not reloaded');
  assert.match(await page.locator('#rows tr').first().textContent(), /appended by the e2e test/);

  fixture('--live-pid', String(process.pid), '--live-id', '32', '--live-phase', 'running');
  await page.waitForFunction(() => /experiment #32/.test(document.getElementById('now-text').textContent),
    null, { timeout: 30000 });
  assert.equal(await page.locator('#phases li.active').textContent(), 'run');
  assert.match(await page.locator('#progress').textContent(), /step 5/);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
});
