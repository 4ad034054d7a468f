'use strict';
// The issues' targets (11, 17, 20, 27), attached to the rows they judge, and the one table the suite prints.
const MB = 1e6 / 1048576; // the MB in MiB

const TARGETS = [
  // [metric prefix, workload (null = any), text, check(summary, workload)]
  ['update latency (paint → painted in panel)', 'typing', 'p50 ≤ 10, p99 ≤ 40 ms', (s) => s.median <= 10 && s.p99 <= 40],
  ['input latency', null, 'p50 ≤ 2 ms', (s) => s.median <= 2],
  ['lock latency', '256 queued', '≤ 20 ms (p99)', (s) => s.p99 <= 20],
  ['lock → CAPTURING beyond the guest', null, '≤ 20 ms (p99)', (s) => s.p99 <= 20],
  ['panic latency', null, '≤ 50 ms (p99)', (s) => s.p99 <= 50],
  ['bytes per typed character', null, '≤ 2048 B', (s) => s.median <= 2048],
  ['console CPU', 'idle', '< 0.01 s/s', (s) => s.median < 0.01],
  ['shadow: console + reader CPU', 'idle', '< 0.01 s/s', (s) => s.median < 0.01],
  ['console RSS', null, `≤ 100 MB (${(100 * MB).toFixed(1)} MiB)`, (s) => s.max <= 100 * MB],
  ['shadow: console + reader VmRSS', null, `≤ 100 MB (${(100 * MB).toFixed(1)} MiB)`, (s) => s.max <= 100 * MB],
  // The server's own rate is the reference (the test guest drops ticks the socket cannot take).
  ['delivered / produced frames', null, '≥ 90 %', (s) => s.median >= 90],
  ['stalled panel: console RSS', null, 'no growth (2nd half max ≤ 1st half max + 2 MiB)', null],
  // Issue 17: the webview (headless chromium) beside gc-bench-panel.
  ['webview: painted / produced frames', 'motion', '≥ 95 %', (s) => s.median >= 95],
  ['webview: Chromium CPU per painted frame', 'typing', '≤ 2 ms and ≤ 2× C++ client', null],
  ['webview: Chromium CPU per painted frame', null, '≤ 2× C++ client', null],
  ['webview: update latency', 'typing', 'p50 ≤ 5 ms', (s) => s.median <= 5],
  ['webview: update latency', 'motion', 'p50 ≤ 25 ms', (s) => s.median <= 25],
  ['webview: input latency', 'idle', 'p50 ≤ 2 ms', (s) => s.median <= 2],
  ['webview: input latency', 'motion', 'p50 ≤ 10 ms', (s) => s.median <= 10],
  ['webview: renderer RSS over', null, 'last window max ≤ first window max + 10 MiB', null],
  // Issue 20.1: the console beside xfreerdp3 on the same lossless codec set (ratios of medians),
  // and both paths of the console against the test guest.
  ['side-by-side: console CPU ÷', null, '≤ 1', (s) => s.median <= 1],
  ['side-by-side: server CPU with console ÷', null, '≤ 1.1', (s) => s.median <= 1.1],
  ['side-by-side: changed frames/s, console ÷', 'motion', '≥ 1', (s) => s.median >= 1],
  ['side-by-side: console opened RDPGFX', null, '1 where the server gives GFX to a lossless client', (s) => s.median === 1],
  // Issue 34: the Windows-shaped stream (test guest --graphics windows), console beside xfreerdp3.
  ['windows: console + reader CPU ÷ xfreerdp3', null, '≤ 1', (s) => s.median <= 1],
  ['windows: console + reader RssAnon', null, '≤ 60 MiB', (s) => s.max <= 60],
  ['windows: console + reader PSS', null, '≤ 60 MiB', (s) => s.max <= 60],
  ['test guest gfx: console on RDPGFX', null, '1 (the guest offers it)', (s) => s.median === 1],
  ['test guest gfx: console CPU', 'idle', '< 0.01 s/s', (s) => s.median < 0.01],
  ['test guest legacy: console CPU', 'idle', '< 0.01 s/s', (s) => s.median < 0.01],
  // Issue 27.5: the webview beside noVNC in the same Chromium, same display and workloads.
  ['side-by-side: webview ÷ noVNC over x11vnc, Chromium CPU per painted frame', null, '≤ 1', (s) => s.median <= 1],
  ['side-by-side: webview ÷ noVNC over x11vnc, frames/s painted', null, '≥ 1', (s) => s.median >= 1],
  ['side-by-side: webview ÷ noVNC over x0vncserver, Chromium CPU per painted frame', null, '≤ 1', (s) => s.median <= 1],
  ['side-by-side: webview ÷ noVNC over x0vncserver, frames/s painted', null, '≥ 1', (s) => s.median >= 1],
  ['side-by-side: webview, planar stream ÷ noVNC over x11vnc, Chromium CPU per painted frame', null, '≤ 1', (s) => s.median <= 1],
  ['side-by-side: webview, planar stream ÷ noVNC over x11vnc, frames/s painted', null, '≥ 1', (s) => s.median >= 1],
  ['side-by-side: webview, planar stream ÷ noVNC over x0vncserver, Chromium CPU per painted frame', null, '≤ 1', (s) => s.median <= 1],
  ['side-by-side: webview, planar stream ÷ noVNC over x0vncserver, frames/s painted', null, '≥ 1', (s) => s.median >= 1],
  // Issue 27: one console is the console and its RDP reader, summed; the GFX path under motion.
  ['test guest gfx: console + reader RssAnon', 'motion', '≤ 60 MiB', (s) => s.max <= 60],
  ['test guest gfx: console + reader VmRSS', null, '≤ 100 MiB', (s) => s.max <= 100],
  ['test guest legacy: console + reader VmRSS', null, `≤ 100 MB (${(100 * MB).toFixed(1)} MiB)`, (s) => s.max <= 100 * MB],
  ['shadow: console + reader RssAnon', 'motion', '≤ 60 MiB', (s) => s.max <= 60],
  // Issue 27.4: many consoles per host, with panels, on 2 cores.
  ['consoles at once: VmRSS per console', null, `≤ 100 MB (${(100 * MB).toFixed(1)} MiB)`, (s) => s.max <= 100 * MB],
  ['consoles at once: PSS per console', '16 × typing', '≤ 60 MiB', (s) => s.max <= 60],
  ['consoles at once: frames/s per panel', null, '≥ 25 fps typing, each', (s, w) => (w.endsWith('typing') ? s.min >= 25 : null)],
];

function target(metric, workload) {
  for (const [prefix, w, text, check] of TARGETS)
    if (metric.startsWith(prefix) && (w === null || w === workload)) return { text, check: check || (() => null) };
  return null;
}

const fmt = (v) => (v === null || v === undefined || Number.isNaN(v) ? '–' : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(v === Math.round(v) ? 0 : 3));

function cells(r) {
  let met = r.met === true ? 'yes' : r.met === false ? 'NO' : '';
  if (r.metric.startsWith('stalled panel: console RSS') && r.growth_second_half !== undefined) met = r.growth_second_half <= 2 ? 'yes' : 'NO';
  if (r.metric.startsWith('shadow: frames/s delivered') && r.server_fps) met = r.median >= 0.9 * r.server_fps ? 'yes' : 'NO';
  if (r.metric.startsWith('side-by-side: console opened RDPGFX') && r.offered_lossless === false && r.median !== 1) met = 'n/a';
  if (r.metric.startsWith('webview: renderer RSS over') && r.growth !== undefined) met = r.growth <= 10 ? 'yes' : 'NO';
  if (r.metric.startsWith('webview: Chromium CPU per painted frame') && r.cpp_ms !== undefined && r.cpp_ms !== null)
    met = r.median <= 2 * r.cpp_ms && (r.workload !== 'typing' || r.median <= 2) ? 'yes' : 'NO';
  return [r.metric, r.workload, r.unit, fmt(r.median), fmt(r.p99), r.n ? `${fmt(r.min)}–${fmt(r.max)}` : '–', String(r.n), r.target || '', met];
}

function table(rows) {
  const head = ['metric', 'workload', 'unit', 'median', 'p99', 'min–max', 'n', 'target', 'met?'];
  const body = rows.map(cells);
  for (const r of rows) r.met_text = cells(r)[8];
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (c) => c.map((x, i) => (i >= 3 && i <= 6 ? x.padStart(widths[i]) : x.padEnd(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n') + '\n';
}

module.exports = { target, table };
