// The ratchet dashboard. Loads the loop once (/api/state), then listens to
// /api/events (server-sent events) and fetches only the rows that changed.
// The chart follows the same rules as src/web/chart.cc (`ratchet plot`):
// keep the two in step.
'use strict';
(function () {
  const token = new URLSearchParams(location.search).get('token') || '';
  const withToken = (url) =>
    token ? url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token) : url;
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) =>
    ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

  const VALUE_STATUSES = new Set(['keep', 'discard', 'gate_failed', 'pruned']);
  const PAGE = 100;
  const LABEL_CHARS = 30;
  const LABEL_TRIES = 200;  // as in chart.cc: only the latest keeps are labelled
  const MAX_LABELS = 40;

  let loop = {};
  let sessions = [];
  let rows = [];          // one object per experiment, ordered by id
  let metricNames = [];   // every metric seen, primary first
  let live = null;
  let skew = 0;           // server clock - browser clock, seconds
  let version = -1;
  let model = null;       // the chart model last drawn, for hovering
  let geom = null;
  const view = { sort: 'id', dir: -1, page: 0, filter: '', status: '', selected: 0 };

  // ---------------------------------------------------------------- data

  async function fetchJson(url) {
    const r = await fetch(withToken(url), { cache: 'no-store' });
    if (!r.ok) throw new Error(url + ': HTTP ' + r.status + ' ' + (await r.text()));
    return r.json();
  }

  function ingest(state) {
    loop = state.loop;
    sessions = state.sessions;
    live = state.live;
    skew = state.now - Date.now() / 1000;
    version = state.version;
    // The primary metric first (it is the `metric` column), then the others.
    if (loop.metric && !metricNames.includes(loop.metric)) metricNames.unshift(loop.metric);
    for (const name of state.metric_names) {
      if (!metricNames.includes(name)) metricNames.push(name);
    }
    rows = rows.filter((r) => r.id < state.from);
    const c = state.cols;
    const baselines = new Set(state.baseline_ids);
    // A row's metrics stay in the columns they came in (no object per row):
    // `mi` maps a metric name to its column, `i` is the row's index there.
    const mi = new Map(state.metric_names.map((name, j) => [name, c.metrics[j]]));
    for (let i = 0; i < state.n; i++) {
      const id = c.id[i];
      rows.push({
        id: id, phase: state.phases[c.phase[i]], status: state.statuses[c.status[i]],
        metric: c.metric[i], desc: c.desc[i],
        start: c.start[i] === null ? 0 : state.t0 + c.start[i] / 10, dur: c.dur[i],
        cost: c.cost ? c.cost[i] : 0, baseline: baselines.has(id), mi: mi, i: i,
      });
    }
  }

  // The first row that may still change: everything before it is final.
  function firstOpen() {
    for (const r of rows) if (r.phase !== 'done') return r.id;
    return rows.length ? rows[rows.length - 1].id + 1 : 1;
  }

  let loading = null;
  let again = false;
  async function refresh(full) {
    if (loading) { again = true; return loading; }
    loading = (async () => {
      try {
        const state = await fetchJson('/api/state?from=' + (full ? 1 : firstOpen()));
        performance.mark('ratchet-state');
        ingest(state);
        performance.mark('ratchet-ingest');
        renderAll();
      } catch (e) {
        setConn('error: ' + e.message, 'bad');
      }
    })();
    await loading;
    loading = null;
    if (again) { again = false; return refresh(false); }
  }

  function connect() {
    const es = new EventSource(withToken('/api/events'));
    es.onopen = () => setConn('live', 'ok');
    es.onerror = () => setConn('reconnecting', 'bad');
    es.addEventListener('ledger', (e) => {
      if (JSON.parse(e.data).version !== version) refresh(false);
    });
    es.addEventListener('live', (e) => {
      live = JSON.parse(e.data);
      renderNow();
      renderStats();
    });
  }

  function setConn(text, cls) {
    const el = $('conn');
    el.textContent = text;
    el.className = 'pill ' + (cls || '');
  }

  // ---------------------------------------------------------------- helpers

  const decided = (r) => r.status !== '' || r.phase === 'decided' || r.phase === 'done';
  const hasValue = (r) => r.metric !== null && Number.isFinite(r.metric) &&
    (VALUE_STATUSES.has(r.status) || (r.baseline && r.status === '' && decided(r)));
  const isKept = (r) => r.status === 'keep' || r.baseline;
  const statusName = (r) => (r.baseline ? 'baseline' : (r.status || r.phase));

  function fmtNum(v) {
    if (v === null || v === undefined || !Number.isFinite(v)) return '';
    if (Number.isInteger(v) && Math.abs(v) < 1e9) return String(v);
    return String(Number(v.toPrecision(6)));
  }
  function fmtDur(s) {
    if (!s || s < 0) return '';
    if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + String(Math.round(s % 60)).padStart(2, '0') + 's';
    return Math.floor(s / 3600) + 'h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm';
  }
  // One formatter: toLocaleString() with options builds a new one per call
  // (milliseconds each).
  const timeFormat = new Intl.DateTimeFormat(undefined,
    { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  function fmtTime(t) {
    return t ? timeFormat.format(new Date(t * 1000)) : '';
  }
  function truncate(s, n) {
    const chars = Array.from(s);
    return chars.length > n ? chars.slice(0, n).join('') + '\u2026' : s;
  }
  const textWidth = (s, size) => 0.58 * size * Array.from(s).length;

  function niceTicks(lo, hi, count) {
    const ticks = [];
    if (!(hi > lo)) return ticks;
    const raw = (hi - lo) / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    let step = mag;
    for (const m of [2, 5, 10]) {
      if (Math.abs((hi - lo) / (m * mag) - count) < Math.abs((hi - lo) / step - count)) step = m * mag;
    }
    for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
      ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    }
    return { ticks, step };
  }
  function fmtTick(v, step) {
    return v.toFixed(Math.min(12, Math.max(0, -Math.floor(Math.log10(step) + 1e-9))));
  }

  // ---------------------------------------------------------------- chart

  function buildModel() {
    const m = { marks: [], failures: [], best: [], xMin: 1, xMax: 2, yLo: 0, yHi: 1 };
    let lastId = 0;
    for (const r of rows) {
      if (!decided(r)) continue;
      lastId = Math.max(lastId, r.id);
      if (hasValue(r)) {
        const mark = { id: r.id, value: r.metric, kept: isKept(r), row: r };
        if (mark.kept) m.best.push([r.id, r.metric]);
        m.marks.push(mark);
      } else {
        m.failures.push({ id: r.id, row: r });
      }
    }
    m.xMax = Math.max(lastId, 2);
    const all = [];
    const core = [];
    for (const mk of m.marks) { all.push(mk.value); if (mk.kept) core.push(mk.value); }
    const target = loop.target;
    if (target !== null && target !== undefined) core.push(target);
    if (!all.length) {
      const t = (target !== null && target !== undefined) ? target : 0.5;
      m.yLo = t - 0.5; m.yHi = t + 0.5;
      return m;
    }
    all.sort((a, b) => a - b);
    core.push(all[Math.floor(0.05 * (all.length - 1))]);
    core.push(all[Math.floor(0.95 * (all.length - 1))]);
    let lo = Math.min(...core);
    let hi = Math.max(...core);
    let span = hi - lo;
    if (span <= 0) span = Math.max(Math.abs(hi) * 0.1, 1e-9);
    lo = Math.max(lo - 0.5 * span, Math.min(all[0], lo));
    hi = Math.min(hi + 0.5 * span, Math.max(all[all.length - 1], hi));
    if (hi - lo <= 0) { lo -= span * 0.5; hi += span * 0.5; }
    const pad = (hi - lo) * 0.06;
    m.yLo = lo - pad;
    m.yHi = hi + pad;
    return m;
  }

  function drawChart() {
    model = buildModel();
    const box = $('chart');
    const width = Math.max(480, box.clientWidth || 960);
    const height = 440;
    const left = 72, right = 20, top = 40, bottom = 70;
    const px0 = left, px1 = width - right, py0 = top, py1 = height - bottom;
    const bandY = py1 + 22;
    const X = (id) => px0 + (id - model.xMin) / Math.max(1, model.xMax - model.xMin) * (px1 - px0);
    const Y = (v) => {
      v = Math.min(model.yHi, Math.max(model.yLo, v));
      return py1 - (v - model.yLo) / (model.yHi - model.yLo) * (py1 - py0);
    };
    geom = { X, Y, bandY, px0, px1, py0, py1, width, height };
    const f = (v) => Math.round(v * 10) / 10;
    const out = [];
    out.push(`<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" font-size="11">`);
    const metric = loop.metric || 'metric';
    const better = loop.goal === 'max' ? 'higher' : 'lower';
    out.push(`<text x="${px0}" y="24" font-size="15" font-weight="bold">${esc(metric)} by experiment (${better} is better)</text>`);
    // Axes and grid.
    out.push('<g class="axes">');
    const yt = niceTicks(model.yLo, model.yHi, 6);
    for (const t of yt.ticks || []) {
      out.push(`<path d="M${f(px0)} ${f(Y(t))} H${f(px1)}" stroke="#e3e6ea"/>`);
      out.push(`<text x="${f(px0 - 8)}" y="${f(Y(t) + 4)}" text-anchor="end" fill="#555">${fmtTick(t, yt.step)}</text>`);
    }
    const xt = niceTicks(model.xMin, model.xMax, 10);
    for (const t of xt.ticks || []) {
      if (t !== Math.floor(t)) continue;
      out.push(`<path d="M${f(X(t))} ${f(py1)} v5" stroke="#555"/>`);
      out.push(`<text x="${f(X(t))}" y="${f(py1 + 44)}" text-anchor="middle" fill="#555">${t}</text>`);
    }
    out.push(`<path d="M${f(px0)} ${f(py0)} V${f(py1)} H${f(px1)}" stroke="#555" fill="none"/>`);
    out.push(`<text x="${f((px0 + px1) / 2)}" y="${height - 4}" text-anchor="middle" fill="#555" font-size="12">experiment</text>`);
    out.push(`<text x="8" y="${f(bandY + 4)}" fill="#d73027">failed</text>`);
    out.push('</g>');
    if (loop.target !== null && loop.target !== undefined) {
      const y = f(Y(loop.target));
      out.push(`<g class="target"><path d="M${f(px0)} ${y} H${f(px1)}" stroke="#3f6fb5" stroke-width="1.5" stroke-dasharray="6 4"/>`);
      out.push(`<text x="${f(px1 - 4)}" y="${f(Y(loop.target) - 5)}" text-anchor="end" fill="#3f6fb5">target</text></g>`);
    }
    if (model.best.length) {
      let d = '';
      model.best.forEach(([id, v], i) => {
        if (i === 0) d += `M${f(X(id))} ${f(Y(v))}`;
        else d += ` H${f(X(id))} V${f(Y(v))}`;
      });
      d += ` H${f(X(model.xMax))}`;
      out.push(`<path class="best" d="${d}" stroke="#1b5e20" stroke-width="2" fill="none"/>`);
    }
    // Points: one path per kind (a round-capped zero-length segment per
    // point), so ten thousand experiments are three DOM nodes, not 10,000.
    let other = '', kept = '', fail = '';
    let nOther = 0, nKept = 0;
    for (const mk of model.marks) {
      const seg = `M${f(X(mk.id))} ${f(Y(mk.value))}h0`;
      if (mk.kept) { kept += seg; nKept++; } else { other += seg; nOther++; }
    }
    for (const fl of model.failures) {
      const x = X(fl.id), y = bandY;
      fail += `M${f(x - 3.5)} ${f(y - 3.5)}l7 7m-7 0l7 -7`;
    }
    out.push(`<path class="pts-other" data-n="${nOther}" d="${other}" stroke="#9aa5b1" stroke-width="6" stroke-linecap="round" fill="none"/>`);
    out.push(`<path class="pts-fail" data-n="${model.failures.length}" d="${fail}" stroke="#d73027" stroke-width="1.6" fill="none"/>`);
    out.push(`<path class="pts-kept-halo" d="${kept}" stroke="#fff" stroke-width="13" stroke-linecap="round" fill="none"/>`);
    out.push(`<path class="pts-kept" data-n="${nKept}" d="${kept}" stroke="#1a9850" stroke-width="10" stroke-linecap="round" fill="none"/>`);
    // Labels of kept experiments, latest first, where they overlap nothing.
    const taken = [];
    for (const mk of model.marks) {
      if (mk.kept) taken.push([X(mk.id) - 5, Y(mk.value) - 5, X(mk.id) + 5, Y(mk.value) + 5]);
    }
    const spots = [[8, -8, 's'], [8, 16, 's'], [-8, -8, 'e'], [-8, 16, 'e'], [8, -22, 's'], [-8, 30, 'e']];
    out.push('<g class="labels">');
    let tries = 0, placed = 0;
    for (let i = model.marks.length - 1; i >= 0; i--) {
      const mk = model.marks[i];
      if (!mk.kept || !mk.row.desc) continue;
      if (++tries > LABEL_TRIES || placed >= MAX_LABELS) break;
      const text = truncate(mk.row.desc, LABEL_CHARS);
      const size = 11, w = textWidth(text, size), h = size + 2;
      const x = X(mk.id), y = Y(mk.value);
      for (const [dx, dy, anchor] of spots) {
        const x0 = anchor === 's' ? x + dx : x + dx - w;
        const b = [x0, y + dy - size, x0 + w, y + dy - size + h];
        if (b[0] < px0 || b[2] > px1 + 1 || b[1] < py0 || b[3] > py1) continue;
        if (taken.some((t) => b[0] < t[2] && t[0] < b[2] && b[1] < t[3] && t[1] < b[3])) continue;
        taken.push(b);
        placed++;
        out.push(`<text class="label" data-id="${mk.id}" x="${f(x + dx)}" y="${f(y + dy)}" fill="#1b5e20" text-anchor="${anchor === 's' ? 'start' : 'end'}">${esc(text)}</text>`);
        break;
      }
    }
    out.push('</g>');
    // Legend.
    const lx = px1 - 330, ly = 22;
    out.push(`<g class="legend" fill="#555"><path d="M${lx} ${ly - 4}h0" stroke="#1a9850" stroke-width="10" stroke-linecap="round"/><text x="${lx + 9}" y="${ly}">kept</text>`);
    out.push(`<path d="M${lx + 58} ${ly - 4}h0" stroke="#9aa5b1" stroke-width="6" stroke-linecap="round"/><text x="${lx + 66}" y="${ly}">discarded</text>`);
    out.push(`<path d="M${lx + 136.5} ${ly - 7.5}l7 7m-7 0l7 -7" stroke="#d73027" stroke-width="1.6"/><text x="${lx + 148}" y="${ly}">failed</text>`);
    out.push(`<path d="M${lx + 200} ${ly - 4}h22" stroke="#1b5e20" stroke-width="2"/><text x="${lx + 226}" y="${ly}">best</text>`);
    if (loop.target !== null && loop.target !== undefined) {
      out.push(`<path d="M${lx + 266} ${ly - 4}h22" stroke="#3f6fb5" stroke-width="1.5" stroke-dasharray="6 4"/><text x="${lx + 292}" y="${ly}">target</text>`);
    }
    out.push('</g>');
    if (view.selected) {
      const r = rows.find((x) => x.id === view.selected);
      if (r && decided(r)) {
        const y = hasValue(r) ? Y(r.metric) : bandY;
        out.push(`<circle class="selected" cx="${f(X(r.id))}" cy="${f(y)}" r="9" fill="none" stroke="#222" stroke-width="1.5"/>`);
      }
    }
    out.push('</svg>');
    const svg = out.join('');
    performance.mark('ratchet-svg-text');
    box.innerHTML = svg;
  }

  // The experiment under the mouse: nearest drawn point within 12 pixels.
  function hit(evt) {
    if (!model || !geom) return null;
    const svg = $('chart').firstChild;
    const rect = svg.getBoundingClientRect();
    const sx = (evt.clientX - rect.left) * geom.width / rect.width;
    const sy = (evt.clientY - rect.top) * geom.height / rect.height;
    let best = null, bestD = 144;
    const consider = (id, y, row) => {
      const dx = geom.X(id) - sx, dy = y - sy, d = dx * dx + dy * dy;
      if (d < bestD) { bestD = d; best = row; }
    };
    for (const mk of model.marks) consider(mk.id, geom.Y(mk.value), mk.row);
    for (const fl of model.failures) consider(fl.id, geom.bandY, fl.row);
    return best;
  }

  function onChartMove(evt) {
    const r = hit(evt);
    const tip = $('tooltip');
    if (!r) { tip.hidden = true; return; }
    tip.hidden = false;
    tip.textContent = '#' + r.id + ' ' + statusName(r) + (r.metric !== null ? ' ' + fmtNum(r.metric) : '') +
      (r.desc ? ': ' + r.desc : '');
    const box = $('chart-box').getBoundingClientRect();
    tip.style.left = Math.min(evt.clientX - box.left + 12, box.width - 300) + 'px';
    tip.style.top = (evt.clientY - box.top + 12) + 'px';
  }

  // ---------------------------------------------------------------- now

  const PHASE_STEP = { proposing: 'propose', committed: 'build', building: 'build',
    running: 'run', verifying: 'verify', decided: 'decide', done: 'decide' };
  const STEPS = ['propose', 'build', 'run', 'verify', 'decide'];

  function renderNow() {
    const now = Date.now() / 1000 + skew;
    const running = live && live.alive && live.phase !== 'stopped';
    const st = $('loop-state');
    const stop = stopReason();
    if (running) { st.textContent = 'running'; st.className = 'pill run'; }
    else if (stop) { st.textContent = 'stopped: ' + stop; st.className = 'pill'; }
    else { st.textContent = 'not running'; st.className = 'pill'; }
    const step = running ? PHASE_STEP[live.phase] : null;
    const at = STEPS.indexOf(step);
    document.querySelectorAll('#phases li').forEach((li, i) => {
      li.className = i === at ? 'active' : (at >= 0 && i < at ? 'done' : '');
    });
    let text = '';
    let frac = 0, over = false, barText = '';
    if (running && live.experiment_id) {
      text = 'experiment #' + live.experiment_id + ' \u2014 ' + live.phase + ' for ' +
        fmtDur(now - live.phase_started_at);
      if (live.run_started_at > 0 && live.budget_s > 0) {
        const el = now - live.run_started_at;
        frac = el / live.budget_s;
        over = el > live.budget_s;
        barText = fmtDur(el) + ' of ' + fmtDur(live.budget_s) + ' budget' +
          (live.timeout_s ? ' (killed at ' + fmtDur(live.timeout_s) + ')' : '');
      }
    } else if (running) {
      text = 'between experiments';
    } else {
      text = live && live.pid && !live.alive ? 'ratchet run (pid ' + live.pid + ') is not running' : 'no loop running';
    }
    $('now-text').textContent = text;
    $('budget-fill').style.width = Math.min(100, frac * 100).toFixed(1) + '%';
    $('budget-fill').className = over ? 'over' : '';
    $('budget-text').textContent = barText;
    $('progress').textContent = running && live.progress ? live.progress : '';
  }

  function stopReason() {
    if (live && live.stop_reason) return live.stop_reason;
    const last = sessions.length ? sessions[sessions.length - 1] : null;
    return last && last[3] ? last[3] : '';
  }

  // ---------------------------------------------------------------- stats

  function renderStats() {
    let done = 0, kept = 0, failed = 0, cost = 0;
    let baseline = null, best = null;
    for (const r of rows) {
      cost += r.cost || 0;
      if (!decided(r)) continue;
      if (r.baseline) { if (hasValue(r)) { baseline = r.metric; best = r.metric; } continue; }
      done++;
      if (r.status === 'keep') { kept++; if (hasValue(r)) best = r.metric; }
      if (!hasValue(r)) failed++;
    }
    const now = Date.now() / 1000 + skew;
    let wall = 0;
    for (const s of sessions) wall += Math.max(0, (s[2] || now) - s[1]);
    const stats = [
      ['experiments', String(done) + (loop.max_experiments ? ' / ' + loop.max_experiments : '')],
      ['kept', String(kept)],
      ['keep rate', done ? (100 * kept / done).toFixed(1) + '%' : '\u2013'],
      ['failed', String(failed)],
      ['best ' + (loop.metric || ''), best === null ? '\u2013' : fmtNum(best) +
        (baseline !== null && baseline !== 0 && best !== baseline
          ? ' (' + ((best - baseline) / Math.abs(baseline) * 100).toFixed(2) + '%)' : '')],
      ['wall time', fmtDur(wall) + (loop.wall_s ? ' / ' + fmtDur(loop.wall_s) : '')],
    ];
    if (cost > 0 || loop.max_cost_usd) {
      stats.push(['proposer cost', '$' + cost.toFixed(2) + (loop.max_cost_usd ? ' / $' + loop.max_cost_usd : '')]);
    }
    const stop = stopReason();
    if (stop) stats.push(['stopped because', stop]);
    $('stats').innerHTML = stats.map(([k, v]) =>
      `<div class="stat" data-stat="${esc(k)}"><b>${esc(v)}</b><span>${esc(k)}</span></div>`).join('');
  }

  // ---------------------------------------------------------------- table

  function metricOf(r, name) {
    if (name === loop.metric) return r.metric;
    const col = r.mi.get(name);
    const v = col ? col[r.i] : null;
    return v === undefined ? null : v;
  }

  function columns() {
    const cols = [
      { key: 'id', label: '#', num: true, get: (r) => r.id },
      { key: 'status', label: 'status', get: (r) => statusName(r) },
    ];
    metricNames.slice(0, 6).forEach((name) => {
      cols.push({ key: 'm:' + name, label: name, num: true, get: (r) => metricOf(r, name) });
    });
    if (!metricNames.length) cols.push({ key: 'metric', label: loop.metric || 'metric', num: true, get: (r) => r.metric });
    cols.push({ key: 'desc', label: 'description', get: (r) => r.desc });
    cols.push({ key: 'dur', label: 'duration', num: true, get: (r) => r.dur });
    cols.push({ key: 'start', label: 'started', num: true, get: (r) => r.start });
    return cols;
  }

  function filtered() {
    let text = view.filter.trim().toLowerCase();
    let status = view.status;
    const m = /(^|\s)status:(\S+)/.exec(text);
    if (m) { status = m[2]; text = text.replace(m[0], '').trim(); }
    return rows.filter((r) => (!status || statusName(r) === status) &&
      (!text || String(r.id) === text || r.desc.toLowerCase().includes(text) || statusName(r).includes(text)));
  }

  function renderTable() {
    const cols = columns();
    $('thead').innerHTML = cols.map((c) =>
      `<th data-key="${esc(c.key)}" class="${view.sort === c.key ? (view.dir > 0 ? 'asc' : 'desc') : ''}">${esc(c.label)}</th>`).join('');
    const list = filtered();
    const col = cols.find((c) => c.key === view.sort) || cols[0];
    // Rows arrive in id order: the default view (by id) needs no sort.
    if (col.key === 'id') {
      if (view.dir < 0) list.reverse();
    } else list.sort((a, b) => {
      const x = col.get(a), y = col.get(b);
      if (x === y) return (a.id - b.id) * view.dir;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * view.dir;
    });
    const pages = Math.max(1, Math.ceil(list.length / PAGE));
    view.page = Math.min(view.page, pages - 1);
    const slice = list.slice(view.page * PAGE, (view.page + 1) * PAGE);
    $('rows').innerHTML = slice.map((r) => '<tr data-id="' + r.id + '"' + (r.id === view.selected ? ' class="selected"' : '') + '>' +
      cols.map((c) => {
        const v = c.get(r);
        if (c.key === 'status') return `<td><span class="st st-${esc(v)}">${esc(v)}</span></td>`;
        if (c.key === 'desc') return `<td class="desc">${esc(v)}</td>`;
        if (c.key === 'dur') return `<td class="num">${fmtDur(v)}</td>`;
        if (c.key === 'start') return `<td>${fmtTime(v)}</td>`;
        return `<td class="num">${c.num ? fmtNum(v) : esc(v)}</td>`;
      }).join('') + '</tr>').join('');
    $('table-count').textContent = list.length + ' of ' + rows.length;
    $('page').textContent = ' ' + (view.page + 1) + ' / ' + pages + ' ';
    const statuses = new Set(rows.map(statusName));
    const sel = $('status-filter');
    const have = new Set(Array.from(sel.options).map((o) => o.value));
    for (const s of Array.from(statuses).sort()) {
      if (!have.has(s)) sel.insertAdjacentHTML('beforeend', `<option value="${esc(s)}">${esc(s)}</option>`);
    }
  }

  // ---------------------------------------------------------------- detail

  function diffHtml(text) {
    return text.split('\n').map((line) => {
      const cls = line.startsWith('@@') ? 'hunk' : line.startsWith('+') && !line.startsWith('+++') ? 'add'
        : line.startsWith('-') && !line.startsWith('---') ? 'del' : '';
      return cls ? `<span class="${cls}">${esc(line)}</span>` : esc(line);
    }).join('\n');
  }

  // The first full run's learning curve (the preflight's when that is all
  // it ran) beside the one of the keep it was proposed from, as an SVG.
  function curveOf(runs) {
    const full = (runs || []).find((r) => r.attempt === 1) || (runs || [])[0];
    return full && full.curve && full.curve.length ? full.curve : null;
  }

  function curveKey(mine, theirs) {
    const keys = new Set();
    for (const p of mine.concat(theirs || [])) for (const k of Object.keys(p.v || {})) keys.add(k);
    if (loop.curve_key && keys.has(loop.curve_key)) return loop.curve_key;
    for (const k of ['loss', 'train_loss', 'val_loss']) if (keys.has(k)) return k;
    return [...keys].filter((k) => k !== 'elapsed' && k !== 'step')[0] || [...keys][0] || '';
  }

  function curveSvg(id, mine, refId, theirs) {
    const key = curveKey(mine, theirs);
    const lines = [[mine, 'mine', '#' + id]];
    if (theirs && theirs.length) lines.push([theirs, 'ref', '#' + refId]);
    const pts = lines.map(([c]) => c.filter((p) => typeof (p.v || {})[key] === 'number')
      .map((p) => [p.t, p.v[key]]));
    const all = pts.flat();
    if (!key || !all.length) return '';
    const W = 360, H = 160, L = 48, R = 8, T = 8, B = 22;
    const t1 = Math.max(loop.budget_s || 0, ...all.map((p) => p[0])) || 1;
    let lo = Math.min(...all.map((p) => p[1])), hi = Math.max(...all.map((p) => p[1]));
    if (hi === lo) { hi += 0.5; lo -= 0.5; }
    const x = (t) => L + (t / t1) * (W - L - R);
    const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
    const paths = pts.map((p, i) => p.length ? `<polyline class="curve-${lines[i][1]}" fill="none" points="${
      p.map(([t, v]) => x(t).toFixed(1) + ',' + y(v).toFixed(1)).join(' ')}"><title>${esc(lines[i][2])}</title></polyline>` : '');
    const legend = lines.map(([, cls, name], i) =>
      `<tspan class="curve-${cls}-label" dx="${i ? 12 : 0}">— ${esc(name)}</tspan>`).join('');
    return `<svg class="curve" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(key)} over time">` +
      `<line class="axis" x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}"/><line class="axis" x1="${L}" y1="${T}" x2="${L}" y2="${H - B}"/>` +
      `<text x="${L - 4}" y="${T + 8}" text-anchor="end">${esc(fmtNum(hi))}</text>` +
      `<text x="${L - 4}" y="${H - B}" text-anchor="end">${esc(fmtNum(lo))}</text>` +
      `<text x="${W - R}" y="${H - 6}" text-anchor="end">${esc(fmtDur(t1))}</text>` +
      `<text x="${L + 4}" y="${H - 6}">${esc(key)} ${legend}</text>` + paths.join('') + '</svg>';
  }

  async function openDetail(id) {
    view.selected = id;
    const panel = $('detail');
    const body = $('detail-body');
    panel.hidden = false;
    body.innerHTML = '<p class="note">loading #' + id + '\u2026</p>';
    drawChart();
    renderTable();
    let d;
    try {
      d = await fetchJson('/api/experiment/' + id);
    } catch (e) {
      body.innerHTML = '<p class="note">' + esc(e.message) + '</p>';
      return;
    }
    if (view.selected !== id) return;
    const e = d.experiment;
    const kv = (pairs) => '<dl class="kv">' + pairs.filter((p) => p[1] !== '' && p[1] !== null && p[1] !== undefined)
      .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('') + '</dl>';
    const html = [];
    html.push(`<h2>#${e.id} <span class="st st-${esc(e.baseline ? 'baseline' : e.status || e.phase)}">${esc(e.baseline ? 'baseline' : e.status || e.phase)}</span></h2>`);
    html.push(`<p>${esc(e.description)}</p>`);
    html.push(kv([['reason', e.reason], ['hypothesis', e.hypothesis], ['proposer', e.proposer],
      ['parent', e.parent_commit], ['candidate', e.candidate_commit], ['diff stat', e.diff_stat],
      ['started', fmtTime(e.started_at)], ['propose / build / run', fmtDur(e.propose_s) + ' / ' + fmtDur(e.build_s) + ' / ' + fmtDur(e.run_s)],
      ['exit', e.signal ? 'signal ' + e.signal : e.exit_code], ['peak memory', e.peak_rss_mb ? fmtNum(e.peak_rss_mb) + ' MB' : ''],
      ['params', e.params && typeof e.params === 'object' ? JSON.stringify(e.params) : e.params], ['mechanisms', (e.mechanisms || []).join(', ')]]));
    html.push('<h3>metrics</h3>');
    const metrics = Object.entries(e.metrics || {});
    html.push(metrics.length ? kv(metrics.map(([k, v]) => [k, fmtNum(v) + (k === loop.metric && e.metric_n > 1 ? ' \u00b1 ' + fmtNum(e.metric_stddev) + ' (n=' + e.metric_n + ')' : '')])) : '<p class="note">no metrics</p>');
    if (d.runs && (d.runs.length > 1 || (d.runs[0] && d.runs[0].attempt === 0))) {
      html.push('<h3>runs</h3>' + kv(d.runs.map((r) => [r.attempt === 0 ? 'preflight' : '#' + r.attempt + ' ' + r.purpose,
        (r.metric === null ? 'no metric' : fmtNum(r.metric)) + ', ' + fmtDur(r.wall_s) + (r.timed_out ? ', timed out' : '')])));
    }
    const mine = curveOf(d.runs);
    if (mine) {
      html.push('<h3>learning curve</h3>');
      html.push(curveSvg(e.id, mine, d.reference && d.reference.id, d.reference && d.reference.curve));
    }
    html.push('<h3>diff</h3>');
    html.push(d.diff.error ? `<p class="note diff-missing">${esc(d.diff.error)}</p>`
      : `<pre class="diff">${diffHtml(d.diff.text)}</pre>` + (d.diff.truncated ? '<p class="note">diff truncated</p>' : ''));
    html.push('<h3>log</h3>');
    html.push(d.log.error ? `<p class="note">${esc(d.log.error)}</p>`
      : (d.log.truncated ? '<p class="note">last ' + d.log.text.length + ' bytes of ' + esc(d.log.path) + '</p>' : '') +
        `<pre class="log">${esc(d.log.text)}</pre>`);
    body.innerHTML = html.join('');
  }

  // ---------------------------------------------------------------- wiring

  function renderAll() {
    $('loop-name').textContent = loop.name || '';
    document.title = 'ratchet \u2014 ' + (loop.name || '');
    drawChart();
    performance.mark('ratchet-chart');
    renderNow();
    renderStats();
    renderTable();
    performance.mark('ratchet-table');
    document.body.dataset.version = String(version);
    document.body.dataset.rows = String(rows.length);
    if (!document.body.dataset.ready) {
      window.__ratchetReadyMs = performance.now();
      document.body.dataset.ready = '1';
    }
  }

  function wire() {
    $('chart').addEventListener('mousemove', onChartMove);
    $('chart').addEventListener('mouseleave', () => { $('tooltip').hidden = true; });
    $('chart').addEventListener('click', (evt) => { const r = hit(evt); if (r) openDetail(r.id); });
    $('rows').addEventListener('click', (evt) => {
      const tr = evt.target.closest('tr');
      if (tr) openDetail(Number(tr.dataset.id));
    });
    $('thead').addEventListener('click', (evt) => {
      const th = evt.target.closest('th');
      if (!th) return;
      if (view.sort === th.dataset.key) view.dir = -view.dir; else { view.sort = th.dataset.key; view.dir = 1; }
      renderTable();
    });
    $('filter').addEventListener('input', (evt) => { view.filter = evt.target.value; view.page = 0; renderTable(); });
    $('status-filter').addEventListener('change', (evt) => { view.status = evt.target.value; view.page = 0; renderTable(); });
    $('prev').addEventListener('click', () => { view.page = Math.max(0, view.page - 1); renderTable(); });
    $('next').addEventListener('click', () => { view.page += 1; renderTable(); });
    $('detail-close').addEventListener('click', () => { $('detail').hidden = true; view.selected = 0; drawChart(); renderTable(); });
    let resize = 0;
    window.addEventListener('resize', () => { clearTimeout(resize); resize = setTimeout(drawChart, 100); });
    setInterval(() => { if (live && live.alive) renderNow(); }, 1000);
  }

  wire();
  refresh(true).then(connect);
})();
