// engine/report/html/report.js — the page of proflint's HTML report (inlined by the binary with
// uPlot and the data). Charts are uPlot; the timeline is drawn on a canvas here because uPlot has
// no lane/interval view. Text from the profile is only ever set as textContent, never as HTML.
(function () {
  'use strict';
  const errors = [];
  window.addEventListener('error', (e) => errors.push(String(e.message || e)));
  const cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));
  const origError = console.error.bind(console);
  console.error = function (...args) { errors.push(args.map(String).join(' ')); origError(...args); };

  const DATA = JSON.parse(document.getElementById('pf-data').textContent);
  const app = document.getElementById('app');
  app.textContent = '';
  // Test hook (tests/html/check_html.py): what was drawn, read back by the self-test below.
  const state = { charts: {}, timeline: null, selected: null };
  window.__proflint = state;

  // ---- helpers ----
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    if (attrs) for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'cls') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  function fmtNs(ns) {
    if (ns === null || ns === undefined || !isFinite(ns)) return '–';
    const a = Math.abs(ns);
    const p = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
    if (a >= 1e9) return p(ns / 1e9) + ' s';
    if (a >= 1e6) return p(ns / 1e6) + ' ms';
    if (a >= 1e3) return p(ns / 1e3) + ' µs';
    return Math.round(ns) + ' ns';
  }
  const fmtPct = (x) => (x === null || x === undefined || !isFinite(x) ? '–' : (100 * x).toFixed(1) + '%');
  function fmtBytes(b) {
    if (b === null || b === undefined) return '–';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : String(b)) + ' ' + u[i];
  }
  const fmtInt = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'));

  const CAT = [
    ['kernel_tc', 'kernels, Tensor Core', '#2e7d32'], ['kernel_other', 'kernels, other', '#81c784'],
    ['communication', 'communication', '#8e24aa'], ['memcpy', 'memcpy', '#f9a825'], ['memset', 'memset', '#ffcc80'],
    ['runtime', 'CUDA runtime/launch', '#e53935'], ['dataloader', 'dataloader', '#1e88e5'], ['cpu', 'CPU ops', '#90a4ae'],
    ['idle', 'idle', '#e0e0e0']];
  const CLS_COLORS = ['#2e7d32', '#81c784', '#8e24aa', '#f9a825', '#ffb74d', '#e57373', '#64b5f6', '#9575cd', '#4db6ac',
    '#bcaaa4', '#ba68c8'];
  const PALETTE = ['#1565c0', '#c62828', '#2e7d32', '#ef6c00', '#6a1b9a', '#00838f', '#5d4037', '#ad1457'];

  function section(id, title) {
    const s = el('section', { id });
    s.append(el('h2', { text: title }));
    app.append(s);
    return s;
  }
  // Charts in a .grid sit two to a row on wide screens.
  function chartWidth(container) {
    const w = Math.max(320, Math.min(container.clientWidth || 640, 1350));
    return container.classList.contains('grid') && w >= 1000 ? Math.floor((w - 24) / 2) : w;
  }
  const INT_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

  // Registers a uPlot chart under a stable id: the self-test checks its series and pixels.
  function makeChart(id, parent, opts, data) {
    const holder = el('div', { cls: 'chart', id: 'chart-' + id });
    parent.append(holder);
    opts.width = opts.width || chartWidth(parent);
    opts.height = opts.height || 260;
    const u = new uPlot(opts, data, holder);
    state.charts[id] = u;
    return u;
  }

  // Stacked bars: `cats` [[key, label, color, values[]]...] drawn on x positions 0..n-1. uPlot draws
  // series in order, so the tallest running sum goes first and each smaller one paints over it.
  function stackedBars(id, parent, title, xLabels, cats, yFmt) {
    const n = xLabels.length;
    const cum = [];
    let run = new Array(n).fill(0);
    for (const c of cats) { run = run.map((v, i) => v + (c[3][i] || 0)); cum.push(run); }
    const series = [{ label: 'x', value: (u, v) => (v === null || v === undefined ? '' : xLabels[v] || '') }];
    const data = [xLabels.map((_, i) => i)];
    for (let k = cats.length - 1; k >= 0; k--) {
      const c = cats[k];
      series.push({ label: c[1], fill: c[2], stroke: c[2], width: 0, paths: uPlot.paths.bars({ size: [0.8, 80] }),
        points: { show: false }, value: (u, v, si, idx) => (idx === null || idx === undefined ? '–' : yFmt(c[3][idx] || 0)) });
      data.push(cum[k]);
    }
    // Every bar labelled while they fit; beyond, uPlot picks integer ticks.
    const xAxis = { values: (u, ticks) => ticks.map((t) => (Number.isInteger(t) && t >= 0 && t < n ? xLabels[t] : '')) };
    if (n <= 40) xAxis.splits = () => xLabels.map((_, i) => i);
    else xAxis.incrs = INT_INCRS;
    return makeChart(id, parent, {
      title, series, legend: { live: true },
      scales: { x: { time: false, range: [-0.6, n - 0.4] }, y: { range: (u, mn, mx) => [0, mx > 0 ? mx * 1.05 : 1] } },
      axes: [xAxis, { values: (u, t) => t.map(yFmt), size: 70 }],
    }, data);
  }

  // ---- analysis page ----
  function renderAnalysis() {
    const summary = (DATA.summary && DATA.summary.traces) || [];
    const analysis = DATA.analysis;
    app.append(el('h1', { text: 'proflint report' }));
    app.append(el('div', { cls: 'muted small', text: 'proflint ' + DATA.version + ' · ' + summary.map((t) => t.path).join(', ') }));
    const toc = el('nav', { cls: 'toc' });
    const has = (k) => summary.some((t) => t[k]);
    for (const [h, t, show] of [['findings', 'Findings', true], ['breakdown', 'Time breakdown', true], ['steps', 'Step time', true],
      ['overtime', 'Utilization over time', true], ['system', 'System view', has('system_view')], ['host', 'Host threads', has('host_activity')],
      ['graphs', 'CUDA graphs & compiled regions', has('cuda_graphs') || has('torch_compile')],
      ['tables', 'Op types & kernels', true], ['timeline', 'Timeline', true]])
      if (show) toc.append(el('a', { href: '#' + h, text: t }));
    app.append(toc);
    renderHeader(summary, analysis);
    renderReductions();
    renderFindings(analysis);
    renderBreakdown(summary);
    renderSteps(summary);
    renderOverTime();
    renderSystemView(summary);
    renderHostActivity(summary);
    renderGraphs(summary);
    renderTables();
    renderTimeline();
  }

  function renderHeader(summary, analysis) {
    for (const t of summary) {
      const box = el('div');
      const gpus = t.devices.map((d) => 'GPU ' + d.device_id + (d.name ? ' ' + d.name : '')).join(', ') || 'no GPU work';
      const bits = [t.format + (t.format_version ? ' ' + t.format_version : ''), t.framework || 'framework unknown',
        t.workload || null, t.rank !== null && t.rank !== undefined ? 'rank ' + t.rank + (t.world_size ? ' of ' + t.world_size : '') : null]
        .filter(Boolean).join(' · ');
      box.append(el('h3', { text: 'Trace ' + t.trace_id + ': ' + t.path }), el('div', { cls: 'muted small', text: bits + ' · ' + gpus }));
      const cards = el('div', { cls: 'cards' });
      const card = (k, v) => cards.append(el('div', { cls: 'card' }, el('div', { cls: 'v', text: v }), el('div', { cls: 'k', text: k })));
      card('wall time', fmtNs(t.wall_ns));
      if (t.startup_ns > 0) card('start-up', fmtNs(t.startup_ns));
      const it = t.iterations || {};
      card('iterations (' + (it.source || 'none') + ')', fmtInt(it.count || 0));
      if (it.count) card('median step', fmtNs(it.median_ns));
      for (const d of t.devices) {
        card('GPU ' + d.device_id + ' utilization', fmtPct(d.gpu_utilization));
        card('GPU ' + d.device_id + ' Tensor Core share', fmtPct(d.tensor_core_share));
      }
      card('events', fmtInt(t.event_count));
      box.append(cards);
      app.append(box);
    }
    const problems = analysis.findings.length, diags = analysis.diagnostics.length;
    const saving = analysis.findings.reduce((a, f) => a + (f.estimated_savings_ns || 0), 0);
    app.append(el('div', { cls: 'cards' },
      el('div', { cls: 'card' }, el('div', { cls: 'v', text: String(problems) }), el('div', { cls: 'k', text: 'findings' })),
      el('div', { cls: 'card' }, el('div', { cls: 'v', text: fmtNs(saving) }), el('div', { cls: 'k', text: 'estimated savings, summed (overlaps removed)' })),
      el('div', { cls: 'card' }, el('div', { cls: 'v', text: String(diags) }), el('div', { cls: 'k', text: 'diagnostics about the profile' }))));
  }

  function renderReductions() {
    const n = el('div', { cls: 'notice' });
    n.append(el('b', { text: 'What this page reduces: ' }));
    const ul = el('ul');
    for (const t of DATA.traces)
      ul.append(el('li', { text: 'Over-time series of trace ' + t.trace_id + ': ' + t.series.bins + ' bins of ' + fmtNs(t.series.bin_ns) +
        ' (utilization = busy share of each bin; samples averaged, memory = peak per bin).' }));
    for (const t of DATA.traces)
      if (t.system)
        ul.append(el('li', { text: 'System view of trace ' + t.trace_id + ': the sampling logs in ' + t.system.bins + ' bins of ' + fmtNs(t.system.bin_ns) +
          ' (activity averaged, memory = peak per bin).' }));
    const views = DATA.timeline.views;
    ul.append(el('li', { text: 'Timeline: ' + views.length + ' window(s) (' + views.map((v) => v.label).join('; ') +
      '), chosen for the findings\' evidence and the median and slowest steady steps; other iterations are not drawn.' }));
    ul.append(el('li', { text: 'Tables: ' + DATA.kernels.rows.length + ' of ' + DATA.kernels.total + ' kernels and ' +
      DATA.op_types.rows.length + ' of ' + DATA.op_types.total + ' op types, by GPU time.' }));
    for (const r of DATA.reductions) ul.append(el('li', { text: r }));
    n.append(ul);
    app.append(n);
  }

  function whereText(f, h) {
    const s = f.scope || {};
    const parts = [];
    if (s.trace_id !== undefined && s.trace_id !== null) parts.push('trace ' + s.trace_id);
    if (s.rank !== undefined && s.rank !== null) parts.push('rank ' + s.rank);
    if (s.device_id !== undefined && s.device_id !== null) parts.push('GPU ' + s.device_id);
    if (s.iter_first !== undefined && s.iter_first !== null)
      parts.push(s.iter_last !== undefined && s.iter_last !== null && s.iter_last !== s.iter_first
        ? 'iterations ' + s.iter_first + '–' + s.iter_last : 'iteration ' + s.iter_first);
    else if (h && h.iteration !== null && h.iteration !== undefined) parts.push('iteration ' + h.iteration);
    if (h && h.time_ns) parts.push(fmtNs(h.time_ns[0]) + ' – ' + fmtNs(h.time_ns[1]) + ' after the capture start');
    if (h && h.rows_cited) parts.push(h.rows_found + ' of ' + h.rows_cited + ' cited events located');
    return parts.join(' · ') || 'whole profile';
  }

  const findingEls = [];
  function renderFindings(analysis) {
    const s = section('findings', 'Findings');
    const all = analysis.findings.concat(analysis.diagnostics);
    if (!all.length) s.append(el('p', { text: 'No findings.' }));
    all.forEach((f, i) => {
      // Highlights follow the ranked order of the analysis: problems, then diagnostics.
      const h = DATA.highlights[i] || null;
      const sev = f.severity || 'info';
      const box = el('div', { cls: 'finding sev-' + sev, id: 'finding-' + i, 'data-index': String(i) });
      const head = el('div', { cls: 'head' },
        el('span', { cls: 'muted', text: i < analysis.findings.length ? '#' + (i + 1) : 'diagnostic' }),
        el('span', { cls: 'badge ' + sev, text: sev }), el('span', { cls: 'title', text: f.title }),
        el('code', { cls: 'muted', text: f.id }),
        el('span', { cls: 'est', text: f.estimated_savings_ns ? '≈ ' + fmtNs(f.estimated_savings_ns) + ' (' + fmtPct(f.savings_share) + ')' : '' }));
      box.append(head);
      box.append(el('p', {}, el('span', { cls: 'lbl', text: 'Problem: ' }), f.problem));
      box.append(el('p', {}, el('span', { cls: 'lbl', text: 'Fix: ' }), f.recommendation));
      if (f.savings_method) box.append(el('p', { cls: 'small muted' }, el('span', { cls: 'lbl', text: 'Estimate: ' }), f.savings_method));
      const where = el('p', { cls: 'where small' }, el('span', { cls: 'lbl', text: 'Where: ' }), whereText(f, h), ' ');
      if (h && h.view !== null && h.view !== undefined)
        where.append(el('button', { cls: 'link', text: 'show in timeline', onclick: (e) => { e.stopPropagation(); selectFinding(i, true); } }));
      box.append(where);
      const det = el('details', { onclick: (e) => e.stopPropagation() }, el('summary', { text: 'Evidence' }),
        el('pre', { text: JSON.stringify(f.evidence, null, 2) }));
      box.append(det);
      box.addEventListener('click', () => selectFinding(i, false));
      s.append(box);
      findingEls.push(box);
    });
  }

  function selectFinding(i, scroll) {
    findingEls.forEach((e, k) => e.classList.toggle('selected', k === i));
    state.selected = i;
    const h = DATA.highlights[i];
    if (state.timeline) state.timeline.highlight(h && h.view !== null && h.view !== undefined ? h : null);
    if (scroll) document.getElementById('timeline').scrollIntoView({ behavior: 'smooth' });
  }

  function renderBreakdown(summary) {
    const s = section('breakdown', 'Time breakdown');
    s.append(el('p', { cls: 'muted small', text: 'Each bar adds up to the wall time it covers: a priority sweep gives every instant one category (derivation.md).' }));
    const labels = [], devs = [];
    for (const t of summary) for (const d of t.devices) {
      labels.push((summary.length > 1 ? 't' + t.trace_id + ' ' : '') + 'GPU ' + d.device_id);
      devs.push(d.breakdown_ns || {});
    }
    const grid = el('div', { cls: 'grid' });
    s.append(grid);
    if (devs.length) {
      const cats = CAT.filter(([k]) => devs.some((d) => d[k] > 0)).map(([k, l, c]) => [k, l, c, devs.map((d) => d[k] || 0)]);
      stackedBars('breakdown-gpus', grid, 'Per GPU, whole capture', labels, cats, fmtNs);
    }
    for (const t of DATA.traces) for (const b of t.iterations.breakdown) {
      if (!t.iterations.ordinal.length) continue;
      const cats = CAT.filter(([k]) => b.categories[k] && b.categories[k].some((v) => v > 0))
        .map(([k, l, c]) => [k, l, c, b.categories[k]]);
      const xl = t.iterations.ordinal.map(String);
      stackedBars('breakdown-iter-t' + t.trace_id + '-d' + b.device_id, grid,
        'Per iteration, ' + (DATA.traces.length > 1 ? 'trace ' + t.trace_id + ' ' : '') + (b.device_id >= 0 ? 'GPU ' + b.device_id : 'host'), xl, cats, fmtNs);
    }
  }

  function renderSteps(summary) {
    const s = section('steps', 'Step time per iteration');
    const grid = el('div', { cls: 'grid' });
    s.append(grid);
    const withIters = DATA.traces.filter((t) => t.iterations.ordinal.length);
    if (!withIters.length) s.append(el('p', { text: 'No iterations were found (no ProfilerStep, key node or NVTX step markers): see the bad-iteration-range and emit-nvtx-missing pages.' }));
    for (const t of withIters) {
      const it = t.iterations;
      const ms = it.dur_ns.map((v) => v / 1e6);
      const warm = ms.map((v, i) => (i < it.warmup ? v : null));
      const out = ms.map((v, i) => (it.outliers.includes(i) ? v : null));
      makeChart('steps-t' + t.trace_id, grid, {
        title: 'Trace ' + t.trace_id + ': step time (warm-up: ' + it.warmup + ', outliers: ' + it.outliers.length + ')',
        scales: { x: { time: false } },
        series: [{ label: 'iteration' }, { label: 'step', stroke: '#1565c0', width: 1.5, value: (u, v) => fmtNs(v * 1e6) },
          { label: 'warm-up', stroke: '#ef6c00', width: 0, points: { show: true, size: 9, fill: '#ef6c00' }, paths: () => null, value: (u, v) => (v === null ? '–' : fmtNs(v * 1e6)) },
          { label: 'outlier', stroke: '#c62828', width: 0, points: { show: true, size: 9, fill: '#c62828' }, paths: () => null, value: (u, v) => (v === null ? '–' : fmtNs(v * 1e6)) }],
        axes: [{ incrs: INT_INCRS }, { values: (u, v) => v.map((x) => fmtNs(x * 1e6)), size: 70 }],
      }, [it.ordinal, ms, warm, out]);
    }
    if (withIters.length > 1) {
      // Several traces (ranks of one job, or repeated runs): one line each. Steps line up by their
      // number (ProfilerStep#N) when every trace numbers them, else by iteration ordinal.
      const byNumber = withIters.every((t) => t.iterations.number.every((v) => v !== null));
      const keysOf = (t) => (byNumber ? t.iterations.number : t.iterations.ordinal);
      const x = [...new Set(withIters.flatMap(keysOf))].sort((a, b) => a - b);
      const column = (t, values) => {
        const at = new Map(keysOf(t).map((key, i) => [key, i]));
        return x.map((key) => (at.has(key) && values[at.get(key)] !== undefined ? values[at.get(key)] / 1e6 : null));
      };
      const xLabel = byNumber ? 'step' : 'iteration';
      const series = [{ label: xLabel }], data = [x];
      withIters.forEach((t, k) => {
        const sm = summary.find((q) => q.trace_id === t.trace_id) || {};
        series.push({ label: sm.rank !== null && sm.rank !== undefined ? 'rank ' + sm.rank : 'trace ' + t.trace_id,
          stroke: PALETTE[k % PALETTE.length], width: 1.5, value: (u, v) => (v === null ? '–' : fmtNs(v * 1e6)) });
        data.push(column(t, t.iterations.dur_ns));
      });
      makeChart('steps-ranks', grid, { title: 'Step time per trace (rank)', scales: { x: { time: false } }, series,
        axes: [{ incrs: INT_INCRS }, { values: (u, v) => v.map((q) => fmtNs(q * 1e6)), size: 70 }] }, data);
      // What each rank spent waiting per step. Ranks of a job aligned on their collectives: the
      // time each spent in its collectives before the last rank arrived (the wait a late peer
      // causes). Otherwise a proxy from the per-iteration breakdown of the first GPU:
      // communication not hidden by compute plus idle.
      const aligned = withIters.every((t) => t.iterations.collective);
      const wseries = [{ label: xLabel }], wdata = [x];
      withIters.forEach((t, k) => {
        wseries.push({ label: series[k + 1].label, stroke: PALETTE[k % PALETTE.length], width: 1.5, value: (u, v) => (v === null ? '–' : fmtNs(v * 1e6)) });
        if (aligned) { wdata.push(column(t, t.iterations.collective.wait_ns)); return; }
        const b = t.iterations.breakdown[0];
        const cats = b ? b.categories : {};
        wdata.push(column(t, t.iterations.dur_ns.map((_, i) => ((cats.communication || [])[i] || 0) + ((cats.idle || [])[i] || 0))));
      });
      makeChart('waits-ranks', grid, { title: aligned ? 'Waiting for the last rank per step (collectives, clocks aligned)' : 'Waiting per step and rank (communication + idle)',
        scales: { x: { time: false } }, series: wseries,
        axes: [{ incrs: INT_INCRS }, { values: (u, v) => v.map((q) => fmtNs(q * 1e6)), size: 70 }] }, wdata);
    }
  }

  // Vertical lines at iteration starts, drawn under the series.
  function boundaryHook(startsSec) {
    return { drawAxes: [(u) => {
      const ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = 'rgba(0,0,0,0.18)';
      ctx.setLineDash([4, 4]);
      ctx.lineWidth = 1;
      for (const x of startsSec) {
        const px = Math.round(u.valToPos(x, 'x', true));
        if (px < u.bbox.left || px > u.bbox.left + u.bbox.width) continue;
        ctx.beginPath(); ctx.moveTo(px, u.bbox.top); ctx.lineTo(px, u.bbox.top + u.bbox.height); ctx.stroke();
      }
      ctx.restore();
    }] };
  }

  function renderOverTime() {
    const s = section('overtime', 'GPU utilization and Tensor Core share over time');
    const grid = el('div', { cls: 'grid' });
    s.append(grid);
    for (const t of DATA.traces) {
      const se = t.series;
      if (!se.devices.length && !se.samples.length) continue;
      const x = Array.from({ length: se.bins }, (_, i) => ((i + 0.5) * se.bin_ns) / 1e9);
      const starts = se.iteration_starts_ns.map((v) => v / 1e9);
      if (se.devices.length) {
        const series = [{ label: 's' }], data = [x];
        se.devices.forEach((d, k) => {
          series.push({ label: 'GPU ' + d.device_id + ' utilization', stroke: PALETTE[k % PALETTE.length], width: 1.5, value: (u, v) => fmtPct(v) });
          data.push(d.utilization);
          series.push({ label: 'GPU ' + d.device_id + ' Tensor Core share', stroke: PALETTE[k % PALETTE.length], dash: [5, 3], width: 1.5, spanGaps: false, value: (u, v) => fmtPct(v) });
          data.push(d.tensor_core_share);
        });
        makeChart('util-t' + t.trace_id, grid, {
          title: 'Trace ' + t.trace_id + ' (bins of ' + fmtNs(se.bin_ns) + '; dashed lines: iteration starts)',
          scales: { x: { time: false }, y: { range: [0, 1.02] } }, series, hooks: boundaryHook(starts),
          axes: [{ values: (u, v) => v.map((q) => q.toFixed(q < 1 ? 2 : 1) + ' s') }, { values: (u, v) => v.map((q) => Math.round(q * 100) + '%') }],
        }, data);
      }
      // GPU samples grouped by unit (memory in bytes, counters as recorded).
      const groups = new Map();
      for (const smp of se.samples) {
        const key = smp.unit === 'bytes' ? 'memory' : smp.name;
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(smp);
      }
      let g = 0;
      for (const [key, list] of groups) {
        const series = [{ label: 's' }], data = [x];
        list.forEach((smp, k) => {
          series.push({ label: (smp.device_id !== null ? 'GPU ' + smp.device_id + ' ' : 'host ') + smp.name, stroke: PALETTE[k % PALETTE.length],
            width: 1.5, value: (u, v) => (v === null ? '–' : smp.unit === 'bytes' ? fmtBytes(v) : String(+v.toFixed(3))) });
          data.push(smp.values);
        });
        makeChart('samples-t' + t.trace_id + '-' + g++, grid, {
          title: 'Trace ' + t.trace_id + ': ' + key, scales: { x: { time: false } }, series, hooks: boundaryHook(starts),
          axes: [{ values: (u, v) => v.map((q) => q.toFixed(q < 1 ? 2 : 1) + ' s') },
            { values: (u, v) => v.map((q) => (key === 'memory' ? fmtBytes(q) : String(+q.toFixed(2)))), size: 70 }],
        }, data);
      }
    }
  }

  // ---- evidence beside the trace: sampling logs, host threads, CUDA graphs and compiled regions ----
  // Each section is drawn only when some trace has its facts (docs/html-report.md).
  const traceLabel = (tid) => (DATA.traces.length > 1 ? 'Trace ' + tid + ': ' : '');
  const fmtSec = (u, v) => v.map((q) => q.toFixed(q < 1 ? 2 : 1) + ' s');

  function renderSystemView(summary) {
    const withView = summary.filter((t) => t.system_view);
    if (!withView.length) return;
    const s = section('system', 'System view (sampling logs)');
    s.append(el('p', { cls: 'muted small', text: 'GPU activity and memory occupancy over the whole job from the sampling logs (nvidia-smi, dmon, DCGM, ' +
      'the PyTorch memory timeline, nsys GPU metrics), and the operator and module times of operator logs (docs/samples.md).' }));
    for (const sm of withView) {
      const v = sm.system_view;
      const t = DATA.traces.find((q) => q.trace_id === sm.trace_id) || {};
      const sys = t.system;
      s.append(el('h3', { text: traceLabel(sm.trace_id) + v.sources.join(', ') }));
      if (v.gpus.length) {
        const cards = el('div', { cls: 'cards' });
        const card = (k, val) => cards.append(el('div', { cls: 'card' }, el('div', { cls: 'v', text: val }), el('div', { cls: 'k', text: k })));
        card('sampled', fmtNs(v.end_ns - v.start_ns));
        for (const g of v.gpus) {
          if (g.gpu_active_percent) card('GPU ' + g.device_id + ' average activity', g.gpu_active_percent.mean.toFixed(1) + '%');
          if (g.memory_used_bytes) card('GPU ' + g.device_id + ' peak memory', fmtBytes(g.memory_used_bytes.max) +
            (g.memory_total_bytes ? ' (' + fmtPct(g.memory_used_bytes.max / g.memory_total_bytes) + ')' : ''));
        }
        s.append(cards);
      }
      if (sys) {
        const grid = el('div', { cls: 'grid' });
        s.append(grid);
        const x = Array.from({ length: sys.bins }, (_, i) => ((i + 0.5) * sys.bin_ns) / 1e9);
        const starts = sys.iteration_starts_ns.map((q) => q / 1e9);
        for (const g of sys.gpus) {
          const series = [{ label: 's' }], data = [x];
          const pct = (u, q) => (q === null || q === undefined ? '–' : q.toFixed(1) + '%');
          if (g.activity) {
            series.push({ label: 'GPU activity (' + g.activity.metric + ')', stroke: '#1565c0', width: 1.5, spanGaps: true, value: pct });
            data.push(g.activity.values);
          }
          if (g.sm_active) {
            series.push({ label: 'SM active', stroke: '#2e7d32', width: 1.5, spanGaps: true, value: pct });
            data.push(g.sm_active.values);
          }
          const bytes = g.memory && g.memory.unit === 'bytes';
          if (g.memory) {
            series.push({ label: bytes ? 'memory used (' + g.memory.metric + ')' : 'memory occupancy (' + g.memory.metric + ' of ' + fmtBytes(g.memory_total_bytes) + ')',
              stroke: '#c62828', width: 1.5, spanGaps: true, scale: bytes ? 'bytes' : 'y', value: bytes ? (u, q) => fmtBytes(q) : pct });
            data.push(g.memory.values);
          }
          const axes = [{ values: fmtSec }, { scale: 'y', values: (u, v) => v.map((q) => Math.round(q) + '%') }];
          if (bytes) axes.push({ scale: 'bytes', side: 1, grid: { show: false }, size: 70, values: (u, v) => v.map(fmtBytes) });
          makeChart('system-t' + sm.trace_id + '-d' + g.device_id, grid, {
            title: traceLabel(sm.trace_id) + 'GPU ' + g.device_id + (g.name ? ' ' + g.name : '') + ' over the job (bins of ' + fmtNs(sys.bin_ns) + ')' +
              (starts.length ? '; dashed lines: iteration starts' : ''),
            scales: Object.assign({ x: { time: false }, y: { range: [0, 102] } }, bytes ? { bytes: { range: (u, mn, mx) => [0, mx > 0 ? mx * 1.05 : 1] } } : {}),
            series, axes, hooks: boundaryHook(starts),
          }, data);
        }
        s.append(el('p', { cls: 'muted small', text: 'Seconds from the first sample; activity and SM active: mean per bin; memory: peak per bin.' +
          (sys.aligned ? ' The samples are on the trace\'s clock.' : ' The samples are not aligned with a trace: no iteration starts.') }));
      }
      if (v.operators.length) {
        s.append(el('h3', { text: traceLabel(sm.trace_id) + 'Operator and module times (operator logs)' }));
        const totals = new Map(v.operators.filter((o) => o.module === null).map((o) => [o.operator, o.time_ns]));
        dataTable(s, 'table-operators-t' + sm.trace_id, [
          { label: 'operator', text: true, key: (r) => r.operator, show: (r) => r.operator },
          { label: 'module', text: true, key: (r) => r.module || '', show: (r) => r.module || '(total)' },
          { label: 'time', key: (r) => r.time_ns, show: (r) => fmtNs(r.time_ns) },
          { label: 'share of the operator', key: (r) => (totals.get(r.operator) ? r.time_ns / totals.get(r.operator) : -1),
            show: (r) => (totals.get(r.operator) ? fmtPct(r.time_ns / totals.get(r.operator)) : '–') },
          { label: 'log lines', key: (r) => r.count, show: (r) => fmtInt(r.count) }], v.operators.map((o) => Object.assign({ 0: o.operator }, o)));
      }
    }
  }

  const HOST_CATS = [['io', 'blocked in I/O', '#1e88e5'], ['wait', 'blocked waiting (poll, futex, locks)', '#8e24aa'],
    ['sleep', 'sleeping', '#f9a825'], ['other', 'idle, launching threads not blocked', '#e0e0e0']];
  function renderHostActivity(summary) {
    const withHost = summary.filter((t) => t.host_activity);
    if (!withHost.length) return;
    const s = section('host', 'Host threads while the GPU idled');
    s.append(el('p', { cls: 'muted small', text: 'What the threads that launch each GPU\'s work did while it idled in its steady window: ' +
      'blocking OS calls (nsys OS runtime tracing) and sampled functions (nsys CPU sampling), as io-bound-input and cpu-hotspot-idle measure them.' }));
    for (const sm of withHost) {
      const h = sm.host_activity;
      s.append(el('h3', { text: traceLabel(sm.trace_id) + fmtInt(h.os_calls_recorded) + ' OS runtime calls, ' + fmtInt(h.cpu_samples_recorded) + ' CPU samples recorded' }));
      if (!h.devices.length) { s.append(el('p', { text: 'No GPU ran work in this trace.' })); continue; }
      const grid = el('div', { cls: 'grid' });
      s.append(grid);
      if (h.os_calls_recorded > 0) {
        const val = (d, k) => (k === 'other' ? Math.max(0, d.gpu_idle_ns - d.blocked_ns) : d.blocked_by_category_ns[k] || 0);
        const cats = HOST_CATS.filter(([k]) => h.devices.some((d) => val(d, k) > 0)).map(([k, l, c]) => [k, l, c, h.devices.map((d) => val(d, k))]);
        if (cats.length)
          stackedBars('host-t' + sm.trace_id, grid, traceLabel(sm.trace_id) + 'GPU-idle time by what the launching threads did', h.devices.map((d) => 'GPU ' + d.device_id), cats, fmtNs);
        const rows = [];
        for (const d of h.devices) for (const c of d.os_calls) rows.push(Object.assign({ 0: c.name, device_id: d.device_id }, c));
        s.append(el('h3', { text: 'Blocking OS calls during GPU-idle time' }));
        dataTable(s, 'table-oscalls-t' + sm.trace_id, [
          { label: 'call', text: true, key: (r) => r.name, show: (r) => r.name },
          { label: 'GPU', key: (r) => r.device_id, show: (r) => String(r.device_id) },
          { label: 'category', text: true, key: (r) => r.category, show: (r) => r.category },
          { label: 'calls', key: (r) => r.calls, show: (r) => fmtInt(r.calls) },
          { label: 'GPU-idle time inside', key: (r) => r.gpu_idle_ns, show: (r) => fmtNs(r.gpu_idle_ns) },
          { label: 'longest', key: (r) => r.longest_ns, show: (r) => fmtNs(r.longest_ns) }], rows);
      }
      if (h.cpu_samples_recorded > 0) {
        const rows = [];
        for (const d of h.devices) for (const f of d.cpu_hotspots) rows.push(Object.assign({ 0: f.function, device_id: d.device_id, idle: d.cpu_samples_while_idle }, f));
        s.append(el('h3', { text: 'CPU hotspots during GPU-idle time' }));
        s.append(el('p', { cls: 'muted small', text: h.devices.map((d) => 'GPU ' + d.device_id + ': ' + fmtInt(d.cpu_samples_while_idle) + ' of ' +
          fmtInt(d.cpu_samples_in_window) + ' samples of its launching threads in GPU-idle time' + (d.cpu_sample_period_ns ? ', one every ' + fmtNs(d.cpu_sample_period_ns) : '')).join('; ') }));
        dataTable(s, 'table-hotspots-t' + sm.trace_id, [
          { label: 'function', text: true, key: (r) => r.function, show: (r) => r.function },
          { label: 'module', text: true, key: (r) => r.module || '', show: (r) => r.module || '–' },
          { label: 'GPU', key: (r) => r.device_id, show: (r) => String(r.device_id) },
          { label: 'samples', key: (r) => r.samples, show: (r) => fmtInt(r.samples) },
          { label: 'share of idle samples', key: (r) => r.samples / (r.idle || 1), show: (r) => fmtPct(r.samples / (r.idle || 1)) }], rows);
      }
    }
  }

  function renderGraphs(summary) {
    const withGraphs = summary.filter((t) => t.cuda_graphs || t.torch_compile);
    if (!withGraphs.length) return;
    const s = section('graphs', 'CUDA graphs and compiled regions');
    for (const sm of withGraphs) {
      const t = DATA.traces.find((q) => q.trace_id === sm.trace_id) || {};
      if (sm.cuda_graphs) {
        s.append(el('h3', { text: traceLabel(sm.trace_id) + sm.cuda_graphs.length + ' CUDA graph(s) replayed' }));
        const opsOf = (g) => ((t.graph_ops || {})[String(g.graph_id)] || []);
        const attributed = (g) => {
          if (!g.capture_in_trace) return 'capture not in the trace: kernels named graph ' + g.graph_id + ', node N';
          const ops = opsOf(g);
          if (!ops.length) return 'captured in the trace; nodes not matched to ops';
          return ops.slice(0, 5).map((o) => o.op + ' ×' + o.nodes + ' ' + fmtNs(o.gpu_time_per_replay_ns)).join(', ') + (ops.length > 5 ? ', … ' + (ops.length - 5) + ' more' : '');
        };
        dataTable(s, 'table-graphs-t' + sm.trace_id, [
          { label: 'graph', key: (r) => r.graph_id, show: (r) => String(r.graph_id) + (r.id_source === 'recorded' ? '' : ' (numbered by proflint)') },
          { label: 'GPU', key: (r) => r.device_id ?? -1, show: (r) => (r.device_id === null ? '–' : String(r.device_id)) },
          { label: 'replays', key: (r) => r.replays, show: (r) => fmtInt(r.replays) },
          { label: 'kernels per replay', key: (r) => r.kernels_per_replay, show: (r) => fmtInt(r.kernels_per_replay) },
          { label: 'GPU time per replay', key: (r) => r.gpu_time_per_replay_ns, show: (r) => fmtNs(r.gpu_time_per_replay_ns) },
          { label: 'span per replay', key: (r) => r.span_per_replay_ns, show: (r) => fmtNs(r.span_per_replay_ns) },
          { label: 'GPU time', key: (r) => r.gpu_time_ns, show: (r) => fmtNs(r.gpu_time_ns) },
          { label: 'attributed ops (nodes, GPU time per replay)', text: true, key: (r) => attributed(r), show: (r) => attributed(r) }],
        sm.cuda_graphs.map((g) => Object.assign({ 0: 'graph ' + g.graph_id }, g)));
      }
      const c = sm.torch_compile;
      if (c) {
        const kinds = Object.entries(c.triton_time_by_kind_ns).map(([k, v]) => k + ' ' + fmtNs(v)).join(', ');
        s.append(el('h3', { text: traceLabel(sm.trace_id) + 'torch.compile: ' + c.regions + ' compiled region(s)' +
          (c.iterations_with_regions ? ' in ' + c.iterations_with_regions + ' iteration(s)' : '') + ', ' + c.graph_breaks + ' graph break(s)' }));
        s.append(el('p', { cls: 'small', text: c.triton_kernels + ' Triton kernel(s), ' + fmtNs(c.triton_time_ns) + (kinds ? ' (' + kinds + ')' : '') +
          '; inside regions, ' + c.other_kernels + ' non-Triton kernel(s), ' + fmtNs(c.other_time_ns) + ', from ' + c.fallback_ops + ' eager fallback or library op(s).' }));
        if (c.by_region.length) {
          const grid = el('div', { cls: 'grid' });
          s.append(grid);
          const labels = c.by_region.map((r) => r.name + (r.pass === 'bwd' ? ' (bwd)' : ''));
          stackedBars('compiled-t' + sm.trace_id, grid, traceLabel(sm.trace_id) + 'GPU time per compiled region: Triton vs fallback kernels', labels,
            [['triton', 'Triton kernels', '#2e7d32', c.by_region.map((r) => r.triton_time_ns)],
              ['other', 'fallback / library kernels', '#e53935', c.by_region.map((r) => r.other_time_ns)]], fmtNs);
          dataTable(s, 'table-regions-t' + sm.trace_id, [
            { label: 'region', text: true, key: (r) => r.name, show: (r) => r.name },
            { label: 'pass', text: true, key: (r) => r.pass, show: (r) => r.pass },
            { label: 'instances', key: (r) => r.instances, show: (r) => fmtInt(r.instances) },
            { label: 'Triton kernels', key: (r) => r.triton_kernels, show: (r) => fmtInt(r.triton_kernels) },
            { label: 'Triton time', key: (r) => r.triton_time_ns, show: (r) => fmtNs(r.triton_time_ns) },
            { label: 'fallback kernels', key: (r) => r.other_kernels, show: (r) => fmtInt(r.other_kernels) },
            { label: 'fallback time', key: (r) => r.other_time_ns, show: (r) => fmtNs(r.other_time_ns) },
            { label: 'fallback ops', key: (r) => r.fallback_ops, show: (r) => fmtInt(r.fallback_ops) },
            { label: 'graph breaks before', key: (r) => r.graph_breaks, show: (r) => fmtInt(r.graph_breaks) }],
          c.by_region.map((r) => Object.assign({ 0: r.name }, r)));
        }
      }
    }
  }

  // A sortable, filterable table over rows of plain values.
  function dataTable(parent, id, cols, rows) {
    const filter = el('input', { cls: 'filter', type: 'search', placeholder: 'filter by name…', 'aria-label': 'filter ' + id });
    const table = el('table', { cls: 'data', id });
    const thead = el('thead'), tbody = el('tbody');
    const tr = el('tr');
    let sortCol = -1, asc = false;
    cols.forEach((c, i) => {
      const th = el('th', { cls: c.text ? 'txt' : '', text: c.label, title: 'sort' });
      th.addEventListener('click', () => { if (sortCol === i) asc = !asc; else { sortCol = i; asc = !!c.text; } draw(); });
      tr.append(th);
    });
    thead.append(tr);
    table.append(thead, tbody);
    function draw() {
      const q = filter.value.trim().toLowerCase();
      let list = q ? rows.filter((r) => String(r[0]).toLowerCase().includes(q)) : rows.slice();
      if (sortCol >= 0) {
        const k = cols[sortCol].key;
        list.sort((a, b) => { const x = k(a), y = k(b); const c = x < y ? -1 : x > y ? 1 : 0; return asc ? c : -c; });
      }
      [...thead.querySelectorAll('th')].forEach((th, i) => { th.classList.toggle('sorted', i === sortCol); th.classList.toggle('asc', i === sortCol && asc); });
      tbody.textContent = '';
      const frag = document.createDocumentFragment();
      for (const r of list) {
        const row = el('tr');
        for (const c of cols) row.append(el('td', { cls: c.text ? 'txt' : '', text: c.show(r) }));
        frag.append(row);
      }
      tbody.append(frag);
      table.dataset.rows = String(list.length);
    }
    filter.addEventListener('input', draw);
    parent.append(filter, el('div', { cls: 'tablewrap' }, table));
    draw();
  }

  function renderTables() {
    const s = section('tables', 'Op types and kernels');
    s.append(el('h3', { text: 'Op types' }), el('p', { cls: 'muted small',
      text: 'Calls and CPU time count every op of the type (including the ops it calls); GPU time counts each kernel once, at the innermost op it is attributed to. Click a header to sort.' }));
    const o = DATA.op_types.rows;
    dataTable(s, 'table-ops', [
      { label: 'op type', text: true, key: (r) => r[0], show: (r) => r[0] },
      { label: 'calls', key: (r) => r[1], show: (r) => fmtInt(r[1]) },
      { label: 'CPU time', key: (r) => r[2], show: (r) => fmtNs(r[2]) },
      { label: 'kernels', key: (r) => r[3], show: (r) => fmtInt(r[3]) },
      { label: 'GPU time', key: (r) => r[4], show: (r) => fmtNs(r[4]) },
      { label: 'Tensor Core share', key: (r) => (r[4] ? r[5] / r[4] : -1), show: (r) => (r[4] ? fmtPct(r[5] / r[4]) : '–') },
      { label: 'TC eligible', key: (r) => (r[6] ? 1 : 0), show: (r) => (r[6] ? 'yes' : 'no') }], o);
    s.append(el('h3', { text: 'Kernels' }));
    const k = DATA.kernels.rows;
    dataTable(s, 'table-kernels', [
      { label: 'kernel', text: true, key: (r) => r[0], show: (r) => r[0] },
      { label: 'category', key: (r) => r[1], show: (r) => r[1] },
      { label: 'Tensor Core', key: (r) => (r[2] ? 1 : 0), show: (r) => (r[2] ? 'yes' : 'no') },
      { label: 'calls', key: (r) => r[3], show: (r) => fmtInt(r[3]) },
      { label: 'GPU time', key: (r) => r[4], show: (r) => fmtNs(r[4]) },
      { label: 'mean', key: (r) => r[4] / r[3], show: (r) => fmtNs(r[4] / r[3]) },
      { label: 'min', key: (r) => r[5], show: (r) => fmtNs(r[5]) },
      { label: 'max', key: (r) => r[6], show: (r) => fmtNs(r[6]) }], k);
  }

  // ---- timeline ----
  const ROW_H = 14, LANE_PAD = 6, GUTTER = 190, AXIS_H = 22;

  function renderTimeline() {
    const s = section('timeline', 'Timeline');
    const T = DATA.timeline;
    if (!T.views.length) { s.append(el('p', { text: 'Nothing to draw.' })); return; }
    s.append(el('p', { cls: 'muted small', text: 'One iteration at a time. Wheel: zoom at the cursor; drag: pan; double-click: whole window. Click a finding to highlight its evidence (red outlines, yellow band).' }));
    const select = el('select', { 'aria-label': 'window' });
    T.views.forEach((v, i) => select.append(el('option', { value: String(i), text: v.label + ' · ' + fmtInt(v.events) + ' events' })));
    const info = el('span', { cls: 'muted small' });
    const legend = el('div', { cls: 'legend' });
    T.classes.forEach((c, i) => legend.append(el('span', {}, el('i', { style: 'background:' + CLS_COLORS[i] }), c)));
    legend.append(el('span', {}, el('i', { style: 'background:rgba(255,213,0,.45)' }), 'selected finding'));
    const reset = el('button', { text: 'whole window' });
    const toEv = el('button', { text: 'zoom to evidence' });
    s.append(el('div', { cls: 'tl-controls' }, el('label', {}, 'Window: ', select), reset, toEv, info), legend);
    const wrap = el('div', { cls: 'tl-wrap' });
    const canvas = el('canvas', { id: 'timeline-canvas' });
    wrap.append(canvas);
    s.append(wrap);
    const tip = el('div', { cls: 'tl-tip' });
    document.body.append(tip);

    const decoded = new Map();
    function decode(vi) {
      if (decoded.has(vi)) return decoded.get(vi);
      const v = T.views[vi];
      let y = AXIS_H;
      const lanes = v.lanes.map((l) => {
        const n = l.s.length, st = new Float64Array(n), du = new Float64Array(n);
        let t = 0, maxDur = 0;
        for (let i = 0; i < n; i++) { t += l.s[i]; st[i] = t; du[i] = l.d[i]; if (l.d[i] > maxDur) maxDur = l.d[i]; }
        // Per row, the indices of its events (sorted by start), for drawing and hit tests.
        const rows = Array.from({ length: l.rows }, () => []);
        for (let i = 0; i < n; i++) rows[l.r[i]].push(i);
        const lane = { label: l.label, device: l.device_id, st, du, n: l.n, c: l.c, rowOf: l.r, rows: rows.map((r) => Int32Array.from(r)), maxDur, y, h: l.rows * ROW_H + LANE_PAD };
        y += lane.h;
        return lane;
      });
      const out = { view: v, lanes, height: y + 4 };
      decoded.set(vi, out);
      return out;
    }

    const tl = { vi: 0, x0: 0, x1: 1, hl: null, lastDraw: null };
    state.timeline = tl;
    function setView(vi, keepRange) {
      tl.vi = vi;
      select.value = String(vi);
      const d = decode(vi);
      if (!keepRange) { tl.x0 = 0; tl.x1 = Math.max(1, d.view.t1_ns - d.view.t0_ns); }
      info.textContent = d.view.label + (d.view.truncated ? ' (cut at the event budget)' : '');
      draw();
    }
    function lowerBound(arr, idx, t) {  // first k with arr[idx[k]] >= t
      let lo = 0, hi = idx.length;
      while (lo < hi) { const m = (lo + hi) >> 1; if (arr[idx[m]] < t) lo = m + 1; else hi = m; }
      return lo;
    }
    function draw() {
      const d = decode(tl.vi);
      const dpr = window.devicePixelRatio || 1;
      const W = Math.max(400, wrap.clientWidth || 1000), H = d.height;
      if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
        canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
        canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
      }
      const ctx = canvas.getContext('2d');
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, W, H);
      const plotW = W - GUTTER, k = plotW / (tl.x1 - tl.x0);
      const px = (t) => GUTTER + (t - tl.x0) * k;
      ctx.font = '11px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      // Evidence band under the events.
      const hl = tl.hl && tl.hl.view === tl.vi ? tl.hl : null;
      let bandDrawn = false;
      if (hl && hl.band_ns) {
        const a = Math.max(GUTTER, px(hl.band_ns[0])), b = Math.min(W, Math.max(px(hl.band_ns[1]), a + 2));
        if (b > GUTTER && a < W) { ctx.fillStyle = 'rgba(255,213,0,0.28)'; ctx.fillRect(a, AXIS_H, b - a, H - AXIS_H); bandDrawn = true; }
      }
      const hlLanes = new Set(hl ? hl.lanes : []);
      let drawn = 0;
      d.lanes.forEach((l, li) => {
        ctx.fillStyle = hlLanes.has(li) ? 'rgba(255,213,0,0.35)' : li % 2 ? '#fafbfc' : '#f1f3f5';
        ctx.fillRect(0, l.y, GUTTER - 4, l.h - 2);
        ctx.fillStyle = '#333';
        ctx.fillText(l.label, 4, l.y + Math.min(l.h / 2, ROW_H / 2 + 2), GUTTER - 10);
        ctx.fillStyle = '#e6e9ec';
        ctx.fillRect(GUTTER, l.y + l.h - 2, plotW, 1);
        for (let r = 0; r < l.rows.length; r++) {
          const idx = l.rows[r];
          const y = l.y + r * ROW_H + 1;
          let i = lowerBound(l.st, idx, tl.x0 - l.maxDur);
          let lastEnd = -1, lastColor = -1;
          for (; i < idx.length; i++) {
            const e = idx[i], s0 = l.st[e];
            if (s0 > tl.x1) break;
            const s1 = s0 + l.du[e];
            if (s1 < tl.x0) continue;
            let a = Math.floor(px(s0)), b = Math.ceil(px(s1));
            if (b <= a) b = a + 1;
            // Sub-pixel events merge into the pixel already drawn: at most one rect per pixel column.
            if (b <= lastEnd) continue;
            if (a < lastEnd) a = lastEnd;
            const c = l.c[e];
            if (c !== lastColor) { ctx.fillStyle = CLS_COLORS[c]; lastColor = c; }
            ctx.fillRect(Math.max(a, GUTTER), y, Math.min(b, W) - Math.max(a, GUTTER), ROW_H - 2);
            lastEnd = b;
            drawn++;
            if (b - a > 50) {
              ctx.fillStyle = '#111';
              ctx.fillText(T.names[l.n[e]], Math.max(a, GUTTER) + 3, y + ROW_H / 2 - 1, Math.min(b, W) - Math.max(a, GUTTER) - 6);
              lastColor = -1;
            }
          }
        }
      });
      // Evidence events on top: outlined, at least 5 px wide so they show when zoomed out.
      let outlined = 0;
      if (hl) {
        ctx.strokeStyle = '#d50000';
        ctx.lineWidth = 2;
        for (const [li, e] of hl.events) {
          const l = d.lanes[li];
          if (!l) continue;
          const s0 = l.st[e], s1 = s0 + l.du[e];
          if (s1 < tl.x0 || s0 > tl.x1) continue;
          let a = px(s0), b = px(s1);
          if (b - a < 5) { const m = (a + b) / 2; a = m - 2.5; b = m + 2.5; }
          const y = l.y + l.rowOf[e] * ROW_H + 1;
          ctx.strokeRect(Math.max(a, GUTTER), y, Math.min(b, W) - Math.max(a, GUTTER), ROW_H - 2);
          outlined++;
        }
      }
      // Time axis: offsets from the window start.
      ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, AXIS_H);
      ctx.fillStyle = '#444'; ctx.strokeStyle = '#bbb'; ctx.lineWidth = 1;
      const span = tl.x1 - tl.x0, raw = span / 8, mag = Math.pow(10, Math.floor(Math.log10(raw)));
      const step = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= raw) || raw;
      for (let t = Math.ceil(tl.x0 / step) * step; t <= tl.x1; t += step) {
        const x = px(t);
        ctx.beginPath(); ctx.moveTo(x + 0.5, AXIS_H - 6); ctx.lineTo(x + 0.5, AXIS_H); ctx.stroke();
        ctx.fillText(fmtNs(t), x + 3, AXIS_H / 2);
      }
      ctx.fillText('+ from window start', 4, AXIS_H / 2);
      tl.lastDraw = { view: tl.vi, rects: drawn, band: bandDrawn, outlined, lanes: hlLanes.size };
    }
    tl.highlight = (h) => {
      tl.hl = h;
      if (h) {
        if (h.view !== tl.vi) setView(h.view, false);
        zoomToEvidence(false);
      }
      draw();
    };
    function zoomToEvidence(redraw) {
      const h = tl.hl;
      if (!h || h.view !== tl.vi || !h.band_ns) return;
      const d = decode(tl.vi), full = d.view.t1_ns - d.view.t0_ns;
      const w = Math.max(h.band_ns[1] - h.band_ns[0], full / 2000);
      tl.x0 = Math.max(0, h.band_ns[0] - w * 0.15);
      tl.x1 = Math.min(full, h.band_ns[1] + w * 0.15);
      if (tl.x1 - tl.x0 < 1) { tl.x0 = 0; tl.x1 = full; }
      if (redraw) draw();
    }
    select.addEventListener('change', () => setView(+select.value, false));
    reset.addEventListener('click', () => setView(tl.vi, false));
    toEv.addEventListener('click', () => zoomToEvidence(true));
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = canvas.getBoundingClientRect(), plotW = r.width - GUTTER;
      const fx = Math.min(1, Math.max(0, (e.clientX - r.left - GUTTER) / plotW));
      const at = tl.x0 + fx * (tl.x1 - tl.x0);
      const f = Math.exp(Math.sign(e.deltaY) * Math.min(Math.abs(e.deltaY), 200) / 300);
      const full = decode(tl.vi).view.t1_ns - decode(tl.vi).view.t0_ns;
      let w = Math.min(full, Math.max(50, (tl.x1 - tl.x0) * f));
      tl.x0 = Math.max(0, at - fx * w); tl.x1 = Math.min(full, tl.x0 + w);
      draw();
    }, { passive: false });
    let drag = null;
    canvas.addEventListener('mousedown', (e) => { drag = { x: e.clientX, x0: tl.x0, x1: tl.x1 }; canvas.style.cursor = 'grabbing'; });
    window.addEventListener('mouseup', () => { drag = null; canvas.style.cursor = ''; });
    canvas.addEventListener('dblclick', () => setView(tl.vi, false));
    canvas.addEventListener('mousemove', (e) => {
      const r = canvas.getBoundingClientRect();
      if (drag) {
        const dt = ((e.clientX - drag.x) / (r.width - GUTTER)) * (drag.x1 - drag.x0);
        const full = decode(tl.vi).view.t1_ns - decode(tl.vi).view.t0_ns, w = drag.x1 - drag.x0;
        tl.x0 = Math.min(Math.max(0, drag.x0 - dt), full - w); tl.x1 = tl.x0 + w;
        draw();
        tip.style.display = 'none';
        return;
      }
      const hit = hitTest(e.clientX - r.left, e.clientY - r.top);
      if (!hit) { tip.style.display = 'none'; return; }
      const [l, ev] = hit;
      tip.textContent = T.names[l.n[ev]] + '\n' + T.classes[l.c[ev]] + ' · start +' + fmtNs(l.st[ev]) + ' · ' + fmtNs(l.du[ev]);
      tip.style.whiteSpace = 'pre-wrap';
      tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 420) + 'px';
      tip.style.top = e.clientY + 14 + 'px';
      tip.style.display = 'block';
    });
    canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
    function hitTest(x, y) {
      if (x < GUTTER) return null;
      const d = decode(tl.vi);
      const l = d.lanes.find((q) => y >= q.y && y < q.y + q.h);
      if (!l) return null;
      const r = Math.floor((y - l.y) / ROW_H);
      if (r < 0 || r >= l.rows.length) return null;
      const t = tl.x0 + ((x - GUTTER) / ((canvas.clientWidth || 1) - GUTTER)) * (tl.x1 - tl.x0);
      const slack = (3 / ((canvas.clientWidth || 1) - GUTTER)) * (tl.x1 - tl.x0);
      const idx = l.rows[r];
      let best = null;
      for (let i = lowerBound(l.st, idx, t - l.maxDur - slack); i < idx.length; i++) {
        const e = idx[i];
        if (l.st[e] > t + slack) break;
        if (l.st[e] + l.du[e] + slack >= t) best = e;
      }
      return best === null ? null : [l, best];
    }
    window.addEventListener('resize', () => draw());
    tl.setView = setView;
    tl.draw = draw;
    setView(0, false);
  }

  // ---- compare page ----
  function renderCompare() {
    const c = DATA.compare;
    app.append(el('h1', { text: 'proflint compare' }));
    app.append(el('div', { cls: 'muted small', text: 'baseline: ' + (c.baseline.paths || []).join(', ') + ' · candidate: ' + (c.candidate.paths || []).join(', ') }));
    app.append(el('p', {}, el('span', { cls: 'verdict ' + c.verdict, text: c.verdict }), ' ', c.headline));
    const lists = [['Not comparable', c.incomparable], ['Caveats', c.caveats], ['Notes', c.notes]];
    for (const [t, l] of lists) {
      if (!l || !l.length) continue;
      const n = el('div', { cls: 'notice' }, el('b', { text: t + ': ' }));
      const ul = el('ul');
      for (const x of l) ul.append(el('li', { text: x }));
      n.append(ul);
      app.append(n);
    }
    // Step-time distributions: histograms over shared bins.
    const s = section('distributions', 'Step time distributions');
    const sides = DATA.sides.filter((q) => q.steps_ns.length);
    if (sides.length) {
      const all = sides.flatMap((q) => q.steps_ns);
      const lo = Math.min(...all), hi = Math.max(...all);
      const nb = Math.max(5, Math.min(40, Math.ceil(Math.sqrt(all.length) * 2)));
      const w = hi > lo ? (hi - lo) / nb : 1;
      const x = Array.from({ length: nb }, (_, i) => (lo + (i + 0.5) * w) / 1e6);
      const series = [{ label: 'step', value: (u, v) => (v === null || v === undefined ? '' : fmtNs(v * 1e6)) }], data = [x];
      const colors = ['rgba(21,101,192,0.55)', 'rgba(198,40,40,0.55)'];
      sides.forEach((q, k) => {
        const h = new Array(nb).fill(0);
        for (const v of q.steps_ns) h[Math.min(nb - 1, Math.floor((v - lo) / w))]++;
        const sorted = q.steps_ns.slice().sort((a, b) => a - b);
        const med = sorted[Math.floor(sorted.length / 2)];
        series.push({ label: q.label + ' (n = ' + q.steps_ns.length + ', median ' + fmtNs(med) + ')', fill: colors[k], stroke: colors[k].replace('0.55', '1'),
          width: 1, paths: uPlot.paths.bars({ size: [0.9, 60], align: 0 }), points: { show: false } });
        data.push(h);
      });
      makeChart('distributions', s, { title: 'Steps per bin of ' + fmtNs(w), scales: { x: { time: false } }, series,
        axes: [{ values: (u, v) => v.map((q) => fmtNs(q * 1e6)) }, {}] }, data);
    } else {
      s.append(el('p', { text: 'No per-iteration step times on either side (no iterations found).' }));
    }
    // Why: what explains the verdict (significant metrics beyond noise), then findings that changed.
    const why = section('why', 'What explains the change');
    const moved = c.metrics.filter((m) => m.status === 'regression' || m.status === 'improvement');
    if (!moved.length) why.append(el('p', { text: 'No metric moved beyond its budget and the noise.' }));
    const ul = el('ul');
    for (const m of moved.slice(0, 15))
      ul.append(el('li', {}, el('b', { text: m.name + (m.scope ? ' (' + m.scope + ')' : '') + ': ' }), m.status + (m.gating ? ', gating' : ', explaining') + ' — ' + m.reason));
    why.append(ul);
    if (c.findings && c.findings.length) {
      why.append(el('h3', { text: 'Findings that appeared or disappeared' }));
      const fl = el('ul');
      for (const f of c.findings)
        fl.append(el('li', {}, el('b', { text: f.change + ': ' }), f.id + ' — ' + f.problem + (f.gating ? ' (fails the gate)' : '')));
      why.append(fl);
    }
    const mt = section('metrics', 'Metrics');
    const fmtVal = (m, v) => (v === null || v === undefined ? '–' : m.unit === 'share' ? fmtPct(v) : m.unit === 'bytes' ? fmtBytes(v) : m.unit === 'ns' ? fmtNs(v) : (+v.toFixed(2)).toLocaleString('en-US'));
    const rows = c.metrics.map((m) => [m.name + (m.scope ? ' · ' + m.scope : ''), m]);
    dataTable(mt, 'table-metrics', [
      { label: 'metric', text: true, key: (r) => r[0], show: (r) => r[0] },
      { label: 'baseline', key: (r) => r[1].baseline ?? -Infinity, show: (r) => fmtVal(r[1], r[1].baseline) },
      { label: 'candidate', key: (r) => r[1].candidate ?? -Infinity, show: (r) => fmtVal(r[1], r[1].candidate) },
      { label: 'change', key: (r) => r[1].relative ?? 0, show: (r) => (r[1].relative === null || r[1].relative === undefined ? '–' : (r[1].relative >= 0 ? '+' : '') + (100 * r[1].relative).toFixed(1) + '%') },
      { label: 'p (adjusted)', key: (r) => (r[1].statistics && r[1].statistics.p_adjusted) ?? 2, show: (r) => (r[1].statistics && r[1].statistics.p_adjusted !== null && r[1].statistics.p_adjusted !== undefined ? r[1].statistics.p_adjusted.toExponential(1) : '–') },
      { label: 'gating', key: (r) => (r[1].gating ? 1 : 0), show: (r) => (r[1].gating ? 'yes' : 'no') },
      { label: 'verdict', key: (r) => r[1].status, show: (r) => r[1].status },
      { label: 'why', text: true, key: (r) => r[1].reason, show: (r) => r[1].reason }], rows);
    // Colour the verdict cells.
    document.querySelectorAll('#table-metrics tbody tr').forEach((tr) => { const td = tr.children[6]; if (td) td.className = 'st-' + td.textContent; });
  }

  // ---- self-test (tests/html/check_html.py opens the page with #pf-selftest) ----
  function painted(canvas) {
    const ctx = canvas.getContext('2d');
    const w = canvas.width, h = canvas.height;
    if (!w || !h) return 0;
    const px = ctx.getImageData(0, 0, w, h).data;
    let n = 0;
    for (let i = 3; i < px.length; i += 16) if (px[i] !== 0) n++;
    return n;
  }
  function selfTest() {
    const out = { charts: {}, findings: [], errors, csp: cspViolations, resources: performance.getEntriesByType('resource').map((r) => r.name) };
    for (const [id, u] of Object.entries(state.charts)) {
      // Series with at least one drawable value (uPlot keeps series[0] for x).
      const withData = u.series.slice(1).filter((s, k) => (u.data[k + 1] || []).some((v) => v !== null && v !== undefined)).length;
      const title = u.root.querySelector('.u-title');
      out.charts[id] = { series: u.series.length - 1, with_data: withData, pixels: painted(u.ctx.canvas), title: title ? title.textContent : '',
        labels: u.series.slice(1).map((q) => q.label),
        maxes: u.data.slice(1).map((a) => (a || []).reduce((m, v) => (v === null || v === undefined ? m : Math.max(m, v)), null)) };
    }
    if (DATA.kind === 'analysis') {
      findingEls.forEach((e, i) => {
        e.click();
        const tl = state.timeline, h = DATA.highlights[i];
        out.findings.push({ index: i, id: e.querySelector('code').textContent, selected: e.classList.contains('selected'),
          expected_view: h ? h.view : null, expected_events: h && h.events ? h.events.length : 0,
          view: tl ? tl.vi : null, draw: tl ? tl.lastDraw : null });
      });
      const c = document.getElementById('timeline-canvas');
      out.timeline = c ? { pixels: painted(c), views: DATA.timeline.views.length, draws: [] } : null;
      // How long one full redraw of each window takes (the smoothness budget: a frame).
      if (c) {
        state.timeline.highlight(null);
        DATA.timeline.views.forEach((v, i) => {
          state.timeline.setView(i, false);
          const t0 = performance.now();
          for (let k = 0; k < 5; k++) state.timeline.draw();
          out.timeline.draws.push({ view: i, events: v.events, ms: (performance.now() - t0) / 5, rects: state.timeline.lastDraw.rects });
        });
      }
      out.tables = [...document.querySelectorAll('table.data')].map((t) => ({ id: t.id, rows: +t.dataset.rows }));
    } else {
      out.tables = [...document.querySelectorAll('table.data')].map((t) => ({ id: t.id, rows: +t.dataset.rows }));
    }
    const pre = el('pre', { id: 'pf-selftest' });
    pre.textContent = JSON.stringify(out);
    document.body.append(pre);
  }

  try {
    if (DATA.kind === 'compare') renderCompare();
    else renderAnalysis();
  } catch (e) {
    errors.push('render: ' + (e && e.stack ? e.stack : e));
    app.append(el('pre', { text: 'The report failed to render: ' + e }));
  }
  // #finding-N opens the page with finding N selected (its evidence shown in the timeline);
  // #finding-N/timeline shows only that finding and the timeline (to share, or for a screenshot).
  const m = /^#finding-(\d+)(\/timeline)?$/.exec(location.hash);
  if (m && DATA.kind === 'analysis' && +m[1] < findingEls.length) {
    if (m[2]) {
      document.body.classList.add('focus');
      findingEls[+m[1]].classList.add('keep');
    }
    selectFinding(+m[1], false);
    if (state.timeline) state.timeline.draw();
    if (!m[2]) document.getElementById('timeline').scrollIntoView();
  }
  if (location.hash === '#pf-selftest') setTimeout(() => { try { selfTest(); } catch (e) { errors.push('selftest: ' + e); const p = el('pre', { id: 'pf-selftest' }); p.textContent = JSON.stringify({ errors }); document.body.append(p); } }, 0);
})();
