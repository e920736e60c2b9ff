// ratchet's demo page: one loop, simulated entirely here (no server state,
// no requests). A proposer draws a change to a model; the change "trains"
// under a fixed budget; the verifier measures val_bpb with noise; ratchet
// keeps the change when the measurement beats the best by more than
// min_delta, else reverts it. The loop stops at the first stop rule that
// fires: the target (checked before every experiment, so changing it while
// the loop runs stops it there), the step limit, or the circuit breaker.
// The page's state is in body data attributes, for tests and for CSS.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const MIN_DELTA = 0.001;
  const BREAKER = 6;  // failed experiments in a row
  const FLOOR = 1.0;  // what no change can beat
  const CHANGES = ['raise the learning rate', 'lower the learning rate', 'a wider MLP',
    'one more layer', 'one layer fewer', 'longer warmup', 'shorter warmdown', 'weight decay 0.1',
    'QK-norm', 'rotary embeddings', 'smaller batch', 'tie the embeddings', 'GELU for ReLU',
    'dropout 0.1', 'a larger vocabulary', 'gradient clipping at 1.0'];

  // mulberry32: a small seeded generator, so a seed replays the same loop.
  function rng(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6D2B79F5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  function normal(r) {
    const u = Math.max(r(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
  }

  let sim = null;  // the running simulation
  let timer = null;

  function settings() {
    return {
      target: parseFloat($('target').value),
      limit: Math.max(2, parseInt($('limit').value, 10) || 2),
      speed: parseInt($('speed').value, 10) || 1,
      seed: parseInt($('seed').value, 10) || 0,
    };
  }

  function fresh() {
    const s = settings();
    return { r: rng(s.seed), history: [], bestTrue: 2.2, best: null, failuresInRow: 0,
      phase: '', state: 'ready', reason: '' };
  }

  function setState(state, reason) {
    sim.state = state;
    sim.reason = reason || '';
    document.body.dataset.state = state;
    document.body.dataset.stopReason = reason || '';
    $('demo-state').textContent = state;
    $('demo-state').className = 'pill ' + (state === 'running' ? 'run' : state === 'stopped' ? 'ok' : '');
    $('stop-reason').textContent = state === 'stopped' ? 'stopped: ' + reason : '';
    $('start').disabled = state === 'running' || state === 'stopped';
    $('pause').disabled = state !== 'running' && state !== 'paused';
    $('pause').textContent = state === 'paused' ? 'resume' : 'pause';
  }

  // Which stop rule fires now, or ''. The target is read from the page each
  // time, so a new target applies to the running loop.
  function stopRule() {
    const s = settings();
    const n = sim.history.length;
    if (sim.best !== null && Number.isFinite(s.target) && sim.best.metric <= s.target)
      return 'reached the target ' + s.target.toFixed(3) + ': val_bpb ' + sim.best.metric.toFixed(4) +
        ' at #' + sim.best.id;
    if (n >= s.limit) return 'reached the step limit (' + s.limit + ' experiments)';
    if (sim.failuresInRow >= BREAKER) return 'circuit breaker: ' + BREAKER + ' failed experiments in a row';
    return '';
  }

  // One experiment, as the real engine does it: propose, train, verify, decide.
  function experiment() {
    const r = sim.r;
    const id = sim.history.length + 1;
    const e = { id, baseline: id === 1, change: id === 1 ? 'baseline' : CHANGES[Math.floor(r() * CHANGES.length)] };
    const roll = r();
    const gap = sim.bestTrue - FLOOR;
    e.trueValue = e.baseline ? sim.bestTrue : sim.bestTrue + normal(r) * (0.03 * gap + 0.004) - 0.012 * gap;
    e.trueValue = Math.max(FLOOR, e.trueValue);
    if (!e.baseline && roll < 0.06) { e.status = 'crash'; e.reason = 'the run exited 1 (a shape mismatch)'; }
    else if (!e.baseline && roll < 0.09) { e.status = 'timeout'; e.reason = 'killed at the timeout'; }
    else if (!e.baseline && roll < 0.11) { e.status = 'out_of_scope'; e.reason = 'changed the evaluator'; }
    else {
      e.metric = e.trueValue + normal(r) * 0.003;  // the verifier's noisy measurement
      if (e.baseline || e.metric < sim.best.metric - MIN_DELTA) e.status = 'keep';
      else e.status = 'discard';
    }
    return e;
  }

  function decide(e) {
    sim.history.push(e);
    if (e.status === 'keep') {
      sim.best = e;
      sim.bestTrue = e.trueValue;  // the branch advances
    }  // else the tree goes back to the best: nothing to undo here
    sim.failuresInRow = e.status === 'keep' || e.status === 'discard' ? 0 : sim.failuresInRow + 1;
  }

  function showPhase(phase, text, fill) {
    sim.phase = phase;
    document.body.dataset.phase = phase;
    const order = ['propose', 'train', 'verify', 'decide'];
    for (const li of document.querySelectorAll('#phases li')) {
      const i = order.indexOf(li.dataset.phase);
      li.className = li.dataset.phase === phase ? 'active' : i < order.indexOf(phase) ? 'done' : '';
    }
    $('now-text').textContent = text;
    $('budget-fill').style.width = (fill * 100).toFixed(0) + '%';
    $('budget-text').textContent = phase === 'train' ? 'training budget' : '';
  }

  function render() {
    const h = sim.history;
    $('stat-exp').textContent = h.length;
    $('stat-best').textContent = sim.best ? sim.best.metric.toFixed(4) : '-';
    $('stat-kept').textContent = h.filter((e) => e.status === 'keep').length;
    document.body.dataset.experiments = h.length;
    document.body.dataset.best = sim.best ? sim.best.metric.toFixed(6) : '';
    const rows = h.slice(-12).reverse().map((e) =>
      '<tr><td>' + e.id + '</td><td><span class="st st-' + e.status + '">' + e.status + '</span></td><td class="num">' +
      (e.metric === undefined ? '-' : e.metric.toFixed(4)) + '</td><td class="desc">' + e.change +
      (e.reason ? ' (' + e.reason + ')' : '') + '</td></tr>');
    $('demo-rows').innerHTML = rows.join('');
    drawChart();
  }

  function drawChart() {
    const W = 900, H = 300, L = 50, R = 10, T = 10, B = 24;
    const h = sim.history;
    const s = settings();
    const values = h.filter((e) => e.metric !== undefined).map((e) => e.metric);
    if (Number.isFinite(s.target)) values.push(s.target);
    let lo = values.length ? Math.min(...values) : 1.5, hi = values.length ? Math.max(...values) : 2.3;
    if (hi - lo < 0.05) { lo -= 0.025; hi += 0.025; }
    const pad = (hi - lo) * 0.08;
    lo -= pad; hi += pad;
    // The x axis grows with the loop, up to the step limit.
    const n = Math.max(2, h.length, Math.min(s.limit, Math.max(20, Math.ceil(h.length * 1.3))));
    const x = (i) => L + (W - L - R) * (i - 1) / (n - 1);
    const y = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
    const dot = (e, v) => 'M' + x(e.id).toFixed(1) + ' ' + y(v).toFixed(1) + 'm-3 0a3 3 0 1 0 6 0a3 3 0 1 0 -6 0';
    const kept = [], other = [], failed = [];
    let best = '', bestV = null;
    for (const e of h) {
      if (e.metric === undefined) failed.push(dot(e, hi - pad / 2));
      else (e.status === 'keep' ? kept : other).push(dot(e, e.metric));
      if (e.status === 'keep') bestV = e.metric;
      if (bestV !== null) best += (best ? 'L' : 'M') + x(e.id).toFixed(1) + ' ' + y(bestV).toFixed(1);
    }
    const parts = ['<svg viewBox="0 0 ' + W + ' ' + H + '" role="img" aria-label="val_bpb by experiment">',
      '<line class="axis" x1="' + L + '" y1="' + (H - B) + '" x2="' + (W - R) + '" y2="' + (H - B) + '"/>',
      '<text x="4" y="' + (T + 10) + '">' + hi.toFixed(3) + '</text>',
      '<text x="4" y="' + (H - B) + '">' + lo.toFixed(3) + '</text>',
      '<text x="' + (W - R - 120) + '" y="' + (H - 6) + '">experiment (of ' + s.limit + ')</text>'];
    if (Number.isFinite(s.target))
      parts.push('<line class="target" x1="' + L + '" x2="' + (W - R) + '" y1="' + y(s.target).toFixed(1) +
        '" y2="' + y(s.target).toFixed(1) + '"/>');
    parts.push('<path class="best" d="' + best + '"/>', '<path class="pts-other" d="' + other.join('') + '"/>',
      '<path class="pts-kept" d="' + kept.join('') + '"/>', '<path class="pts-fail" d="' + failed.join('') + '"/>',
      '</svg>');
    $('chart').innerHTML = parts.join('');
  }

  // The loop: each step is one phase; the speed sets the pause between them.
  function delay() { const v = settings().speed; return v >= 100 ? 0 : Math.round(600 / v); }

  function step(stage, e) {
    timer = null;
    if (sim.state !== 'running') return;
    const next = (s, x) => { sim.pending = [s, x]; timer = setTimeout(() => step(s, x), delay()); };
    if (stage === 'check') {
      const reason = stopRule();
      if (reason) { showPhase('', 'done', 0); setState('stopped', reason); render(); return; }
      const exp = experiment();
      showPhase('propose', exp.baseline ? '#1 the baseline: no change' : '#' + exp.id + ' proposing: ' + exp.change, 0);
      return next('train', exp);
    }
    if (stage === 'train') {
      showPhase('train', '#' + e.id + ' training under the budget', e.status === 'timeout' ? 1 : 0.7);
      return next('verify', e);
    }
    if (stage === 'verify') {
      showPhase('verify', '#' + e.id + (e.metric === undefined ? ' failed: ' + e.reason : ' measured val_bpb ' +
        e.metric.toFixed(4)), 1);
      return next('decide', e);
    }
    decide(e);
    showPhase('decide', '#' + e.id + ' ' + (e.status === 'keep' ? 'kept: the branch advances' :
      e.status + ': reverted to the best'), 1);
    render();
    next('check');
  }

  function start() {
    if (sim.state === 'ready') setState('running');
    step('check');
  }

  function reset() {
    if (timer) clearTimeout(timer);
    timer = null;
    sim = fresh();
    setState('ready');
    showPhase('', 'press start', 0);
    render();
  }

  $('start').addEventListener('click', start);
  $('reset').addEventListener('click', reset);
  $('pause').addEventListener('click', () => {
    if (sim.state === 'running') {
      if (timer) clearTimeout(timer);
      timer = null;
      setState('paused');
    } else if (sim.state === 'paused') {
      setState('running');
      step(...(sim.pending || ['check']));  // the experiment in flight goes on
    }
  });
  for (const id of ['target', 'limit']) $(id).addEventListener('input', () => { if (sim) drawChart(); });
  for (const id of ['seed']) $(id).addEventListener('change', reset);
  reset();
  // For tests and the curious: the simulated history so far.
  window.ratchetDemo = {
    history: () => sim.history.map((e) => ({ id: e.id, status: e.status, metric: e.metric })),
    next: () => (sim.pending ? sim.pending[0] : 'check'),  // the step the loop takes next
  };
  document.body.dataset.ready = '1';
})();
