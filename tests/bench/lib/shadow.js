'use strict';
// The console against Debian's freerdp-shadow-cli3 sharing an Xvfb 1920x1080 display, with
// gc-bench-xload drawing the workload on that display; then xfreerdp3 (/gdi:sw, in a second
// Xvfb) on the same server as the native decode ceiling. Started like
// tests/auto/shadowinterop: NLA against a throwaway SAM account, certificate pinned from the
// server's own shadow.crt.
const fs = require('fs');
const net = require('net');
const path = require('path');
const crypto = require('crypto');
const { spawn } = require('child_process');
const { sleep } = require('./rig');
const { Meter, ConsoleMeter, memory, summary } = require('./sys');

// The same throwaway account as tests/auto/shadowinterop (winpr-hash3 -u gcuser -p Sh4dow-pass).
const USER = 'gcuser';
const PASSWORD = 'Sh4dow-pass';
const SAM_LINE = 'gcuser:::b9c67ed32370b5c250c541016714c0d9:::\n';

const have = (tool) => (process.env.PATH || '').split(':').some((d) => fs.existsSync(path.join(d, tool)));
const freeDisplay = (from) => { let n = from; while (fs.existsSync(`/tmp/.X11-unix/X${n}`) || fs.existsSync(`/tmp/.X${n}-lock`)) n++; return n; };
const freePort = () => new Promise((resolve) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
const canConnect = (port) => new Promise((resolve) => { const c = net.connect(port, '127.0.0.1'); c.on('connect', () => { c.destroy(); resolve(true); }); c.on('error', () => resolve(false)); });

function child(rig, file, args, env) {
  const c = spawn(file, args, { env: { ...rig.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  c.out = ''; c.err = '';
  c.stdout.on('data', (d) => { c.out += d; });
  c.stderr.on('data', (d) => { c.err = (c.err + d).slice(-4000); });
  c.done = new Promise((r) => c.on('exit', (code) => r(code)));
  c.stdin.on('error', () => {});
  rig.procs.push({ exit: null, pid: c.pid, endInput: () => c.stdin.end(), kill: (s) => { try { c.kill(s); } catch { /* gone */ } } });
  return c;
}

async function xvfb(rig, n) {
  const x = child(rig, 'Xvfb', [`:${n}`, '-noreset', '-screen', '0', '1920x1080x24', '-nolisten', 'tcp']);
  // Polling an external process's readiness (its socket), bounded.
  for (let i = 0; i < 200 && !fs.existsSync(`/tmp/.X11-unix/X${n}`); i++) await sleep(25);
  return x;
}

// The key → glyph marker gc-bench-xload paints (its centre pixel), the keys and their colours.
const MARK = { x: 1896, y: 1056 };
const GREY = 0x808080;
const KEYS = [{ keysym: 'a', scancode: 0x1e, rgb: 0xff0000 }, { keysym: 's', scancode: 0x1f, rgb: 0x00ff00 }, { keysym: 'd', scancode: 0x20, rgb: 0x0000ff }];
const WORKLOADS = ['idle', 'typing', 'scroll', 'motion'];
// xfreerdp3 3.10.3: the lossless GFX request first, its default (GFX with AVC444 when the server
// has an H.264 encoder) last, so the server log's H.264 lines can only come from the last one.
const XFREERDP_MODES = [
  { label: '/gfx:AVC420:off,AVC444:off', args: ['/gfx:AVC420:off,AVC444:off'], lossless: true },
  { label: '/gfx', args: ['/gfx'] },
  { label: '(default)', args: [] },
];
// What freerdp-shadow-cli3 3.10.3 logs at INFO about the path it serves a client on.
const SERVER_MARKERS = { gfx_opened: /Gfx Pipeline Opened/g, h264_init: /initializing H\.264 encoder/g, avc_lines: /avc4[24][04]_compress/g };
let watchId = 500000;

const hex = (rgb) => rgb.toString(16).padStart(6, '0');

// Key → glyph through the panel: `watch` the marker for the key's colour, send the key (down,
// up) through the console, and return sent → seen in ms (null if not seen). key null: wait
// for the colour only (the first picture of a new xload window).
async function panelKey(s, key, rgb, timeoutMs) {
  const id = ++watchId, from = s.panel.events.length;
  s.panel.send({ cmd: 'watch', id, x: MARK.x, y: MARK.y, color: `#${hex(rgb)}` });
  if (key) { s.panel.send({ cmd: 'key', scancode: key.scancode, down: true }); s.panel.send({ cmd: 'key', scancode: key.scancode, down: false }); }
  const sent = key ? await s.panel.waitFor((e) => e.event === 'sent', 2000, from).catch(() => null) : null;
  const seen = await s.panel.waitFor((e) => e.event === 'seen' && e.id === id, timeoutMs, from).catch(() => null);
  if (!seen) return null;
  return key ? (sent ? (seen.t_ns - sent.t_ns) / 1e6 : null) : 0;
}

// The same for xfreerdp3, with gc-bench-probe on its display (XTest key, XShm/XGetImage pixel).
async function probeKey(probe, key, rgb, timeoutMs) {
  const id = ++watchId, from = probe.events.length;
  probe.write(`watch ${id} ${MARK.x} ${MARK.y} ${hex(rgb)}`);
  if (key) probe.write(`key ${id} ${key.keysym}`);
  const sent = key ? await probe.waitFor((e) => e.event === 'sent' && e.id === id, 2000, from).catch(() => null) : null;
  const seen = await probe.waitFor((e) => e.event === 'seen' && e.id === id, timeoutMs, from).catch(() => null);
  if (!seen) return null;
  return key ? (sent ? (seen.t_ns - sent.t_ns) / 1e6 : null) : 0;
}

// The instrument's own floor: keys by XTest into gc-bench-xload on the probe's display, seen by
// the probe — no RDP in between. What the xfreerdp3 rows add to this is the RDP round trip.
async function probeFloor(rig, { P, row, notes }, probe, env) {
  const local = child(rig, rig.bin.xload, ['idle', '600'], env);
  const from = probe.events.length;
  probe.write('window 10000');
  const win = await probe.waitFor((e) => e.event === 'window' || e.event === 'error', 15000, from).catch(() => null);
  const lat = [];
  if (win && win.event === 'window' && (await probeKey(probe, null, GREY, 10000)) !== null) {
    for (let i = 0; i < P.keys; i++) {
      const ms = await probeKey(probe, KEYS[i % KEYS.length], KEYS[i % KEYS.length].rgb, 5000);
      if (ms !== null) lat.push(ms);
    }
  }
  if (!lat.length) notes.push('shadow: the probe did not see gc-bench-xload\'s marker on its own display');
  row('probe self-check: key → marker on one X display (XTest → xload → probe, no RDP)', 'idle', 'ms', lat);
  local.stdin.end();
  await Promise.race([local.done, sleep(10000)]);
}

// A client under measurement: its pid, counters since the last call, key → glyph.
function consoleClient(s) {
  return {
    pid: s.pid, label: 'console', side: [['panel client CPU (decode+paint)', s.panel.pid]],
    async counters() { const st = await s.stats(true); return { t_ns: st.t_ns, frames: st.frames, changed: st.changed_frames, bytes: st.binary_bytes + st.text_bytes }; },
    key: (key, rgb, timeoutMs) => panelKey(s, key, rgb, timeoutMs),
  };
}

function xfreerdpClient(probe, xf) {
  return {
    pid: xf.pid, side: [],
    async counters() {
      const from = probe.events.length;
      probe.write('stats');
      const st = await probe.waitFor((e) => e.event === 'stats', 5000, from);
      return { t_ns: st.t_ns, frames: null, changed: st.changed, damage: st.damage };
    },
    key: (key, rgb, timeoutMs) => probeKey(probe, key, rgb, timeoutMs),
  };
}

// One client through the four workloads: CPU and RSS of the client and of the server over the
// window, frames (changed frames counted the same way for every client), then key → glyph
// latency while the workload still runs. Every workload runs in a fresh gc-bench-xload window
// (its marker starts grey), ended by closing its stdin.
async function measure(rig, { P, row, log, notes }, client, { xenv, shadow, label }) {
  // The console is two processes (ConsoleMeter sums it and its RDP reader); xfreerdp3 is one.
  const isConsole = label === 'console';
  const name = (m) => (isConsole ? `shadow: console + reader ${m}` : `${label}: ${m}`);
  for (const w of WORKLOADS) {
    const load = child(rig, rig.bin.xload, [w, String(P.shadowWindow + 120)], xenv);
    // The new window has reached the client (event), then the workload settles.
    const shown = await client.key(null, GREY, 20000);
    await sleep(700);
    const c0 = await client.counters();
    const m = isConsole ? new ConsoleMeter(client.pid) : new Meter(client.pid), ms = new Meter(shadow.pid);
    const side = client.side.map(([metric, pid]) => [metric, new Meter(pid)]);
    await sleep(P.shadowWindow * 1000);
    const c1 = await client.counters();
    const r = m.stop(), rs = ms.stop();
    const secs = (c1.t_ns - c0.t_ns) / 1e9;
    const lat = [];
    let missed = 0;
    for (let i = 0; i < P.keys; i++) {
      const ms1 = await client.key(KEYS[i % KEYS.length], KEYS[i % KEYS.length].rgb, 8000);
      if (ms1 === null) missed++; else lat.push(ms1);
      await sleep(40 + (i % 3) * 17); // spread samples over the workload's tick phase
    }
    load.stdin.end();
    let ticks = null;
    const code = await Promise.race([load.done, sleep(15000).then(() => 'timeout')]);
    try { const j = JSON.parse(load.out.trim()); ticks = j.ticks / j.seconds; } catch { /* none */ }
    if (code === 'timeout') load.kill('SIGKILL');
    log(`${label} ${w}: ${(c1.changed / secs).toFixed(1)} changed fps, ${r.cpuPerSecond.toFixed(3)} s/s, server ${rs.cpuPerSecond.toFixed(2)} s/s, key p50 ${summary(lat).median}`);
    if (c1.frames !== null) {
      row('shadow: frames/s delivered to the panel', w, 'fps', c1.frames / secs, { xload_ticks_per_s: ticks });
      row('shadow: bytes/s on the wire (panel WebSocket payload)', w, 'KiB/s', c1.bytes / secs / 1024);
      if (w === 'typing') row('shadow: bytes per typed character', w, 'B', c1.bytes / secs / 90);
    } else {
      row(name('X repaint batches/s (XDamage)'), w, '1/s', c1.damage / secs);
    }
    row(name('changed frames/s (probe: frames that changed a pixel)'), w, 'fps', c1.changed / secs, { xload_ticks_per_s: ticks });
    if (isConsole && !r.readerFound) notes.push(`shadow ${w}: no RDP reader found as the console's child: the console rows are the console alone`);
    const alone = (k) => (isConsole ? { console_alone: r.console[k], reader_alone: r.reader ? r.reader[k] : null } : {});
    row(name('CPU'), w, 's/s', r.cpuPerSecond, alone('cpuPerSecond'));
    row(name('VmRSS (max sampled)'), w, 'MiB', r.rssMax, alone('rssMax'));
    row(name('RssAnon (max sampled)'), w, 'MiB', r.anonMax, alone('anonMax'));
    row(name('PSS (max sampled)'), w, 'MiB', r.pssMax, alone('pssMax'));
    row(`shadow: freerdp-shadow-cli3 CPU with ${label}`, w, 's/s', rs.cpuPerSecond);
    for (const [metric, meter] of side) row(`shadow: ${metric}`, w, 's/s', meter.stop().cpuPerSecond);
    row(name('key → glyph latency (key sent → marker seen)'), w, 'ms', lat, { missed, first_picture_seen: shown !== null });
  }
}

// The server's own account of the path it served `label` on, from its INFO log.
function serverEvidence({ row, notes, evidence }, label, before, after) {
  const d = Object.fromEntries(Object.keys(SERVER_MARKERS).map((k) => [k, after[k] - before[k]]));
  evidence[label] = d;
  notes.push(`shadow: server log while ${label} was connected: RDPGFX pipeline opened ${d.gfx_opened}x, H.264 encoder initialised ${d.h264_init}x, ${d.avc_lines} AVC encoder lines`);
  row(`shadow: server log with ${label}: RDPGFX pipeline opened`, 'session', 'count', d.gfx_opened, d);
}

// The issue 20 side-by-side: the console against xfreerdp3 on the same lossless codec set.
function compare({ row, rows, evidence }) {
  const get = (metric, w) => rows.find((r) => r.metric === metric && r.workload === w);
  const ref = XFREERDP_MODES.find((m) => m.lossless);
  const label = `xfreerdp3 ${ref.label}`;
  if (!evidence[label]) return;
  for (const w of WORKLOADS) {
    const pair = (a, b) => (a && b && a.median !== null && b.median ? a.median / b.median : null);
    const cpu = pair(get('shadow: console + reader CPU', w), get(`${label}: CPU`, w));
    const srv = pair(get('shadow: freerdp-shadow-cli3 CPU with console', w), get(`shadow: freerdp-shadow-cli3 CPU with ${label}`, w));
    const fr = pair(get('shadow: console + reader changed frames/s (probe: frames that changed a pixel)', w), get(`${label}: changed frames/s (probe: frames that changed a pixel)`, w));
    const key = pair(get('shadow: console + reader key → glyph latency (key sent → marker seen)', w), get(`${label}: key → glyph latency (key sent → marker seen)`, w));
    if (cpu !== null) row(`side-by-side: console CPU ÷ ${label}'s`, w, 'ratio', cpu);
    if (srv !== null) row(`side-by-side: server CPU with console ÷ with ${label}`, w, 'ratio', srv);
    if (fr !== null) row(`side-by-side: changed frames/s, console ÷ ${label}`, w, 'ratio', fr);
    if (key !== null) row(`side-by-side: key → glyph p50, console ÷ ${label}`, w, 'ratio', key);
  }
  // Whether the server gives RDPGFX to a client without AVC (the lossless xfreerdp3) decides
  // whether the target applies; to any client at all is context.
  const offered = Object.entries(evidence).some(([l, d]) => l !== 'console' && d.gfx_opened > 0);
  if (evidence.console) row('side-by-side: console opened RDPGFX (server log)', 'session', 'yes=1', evidence.console.gfx_opened > 0 ? 1 : 0,
    { offered_lossless: evidence[label].gfx_opened > 0, offered_any: offered });
}

// freerdp-shadow-cli3 on a fresh Xvfb 1920x1080 (NLA against a throwaway SAM account in a
// private home, bound to 127.0.0.1), gc-bench-xload's static text page behind the workloads,
// and its INFO log counted (SERVER_MARKERS). `label`: the home's name in the rig's work dir.
// freerdp-shadow-cli3 on a fresh Xvfb 1920x1080 display, or on `display` (another server's:
// both capture the same screen); `args`: more server options (e.g. '-gfx-progressive', the
// server then serves RDPGFX with planar, lossless). The static text page is drawn on a fresh
// display only.
async function startShadow(rig, label = 'shadow-home', { display = null, args = [] } = {}) {
  const home = path.join(rig.work, label);
  fs.mkdirSync(home, { mode: 0o700 });
  const sam = path.join(home, 'SAM');
  fs.writeFileSync(sam, SAM_LINE, { mode: 0o600 });
  const dServer = display === null ? freeDisplay(150) : display;
  if (display === null) await xvfb(rig, dServer);
  const port = await freePort();
  // Line-buffered (stdbuf execs it: same pid): to a pipe its stdio is block-buffered, and its
  // log lines would reach us kilobytes later, counted against whichever client runs then.
  const shadow = child(rig, 'stdbuf', ['-oL', '-eL', 'freerdp-shadow-cli3', '/bind-address:127.0.0.1', `/port:${port}`, `/sam-file:${sam}`, '/log-level:INFO', ...args],
    { DISPLAY: `:${dServer}`, HOME: home, XDG_CONFIG_HOME: home });
  // Its INFO log names the path it serves each client on (counted, not kept).
  const srvLog = { counts: Object.fromEntries(Object.keys(SERVER_MARKERS).map((k) => [k, 0])), tail: '' };
  const onLog = (d) => {
    const text = srvLog.tail + d;
    // Matches in tail+chunk minus those already counted in the tail: a line split across chunks counts once.
    for (const [k, re] of Object.entries(SERVER_MARKERS)) srvLog.counts[k] += (text.match(re) || []).length - (srvLog.tail.match(re) || []).length;
    srvLog.tail = text.slice(-200);
  };
  shadow.stdout.on('data', onLog);
  shadow.stderr.on('data', onLog);
  let up = false;
  for (let i = 0; i < 300 && !up; i++) { up = await canConnect(port); if (!up) await sleep(100); }
  if (!up) throw new Error(`freerdp-shadow-cli3 did not listen: ${shadow.err.slice(-500)}`);
  const pem = fs.readFileSync(path.join(home, 'freerdp/shadow/shadow.crt'), 'latin1');
  const der = Buffer.from(pem.split('-----')[2].replace(/\s+/g, ''), 'base64');
  const cert = crypto.createHash('sha256').update(der).digest('hex');
  const xenv = { DISPLAY: `:${dServer}` };
  const background = display === null ? child(rig, rig.bin.xload, ['idle', '100000'], xenv) : null; // the static text page
  return { home, dServer, port, shadow, srvLog, cert, xenv, background };
}

async function shadowSuite(rig, opts) {
  const { P, row, notes, log } = opts;
  const ctx = { ...opts, evidence: {} };
  for (const tool of ['Xvfb', 'freerdp-shadow-cli3', 'xfreerdp3'])
    if (!have(tool)) { notes.push(`shadow: skipped, ${tool} is not installed`); return; }
  const { home, dServer, port, shadow, srvLog, cert, xenv, background } = await startShadow(rig);

  // --- the console ---------------------------------------------------------------------
  // Counted from before the open: the server opens RDPGFX during the connection, before SETUP.
  const log0 = { ...srvLog.counts };
  const s = await rig.open({ port, cert }, { user: USER, password: PASSWORD });
  await measure(rig, ctx, consoleClient(s), { xenv, shadow, label: 'console' });
  serverEvidence(ctx, 'console', log0, srvLog.counts);
  await rig.close(s);
  if (process.env.GC_BENCH_SHADOW_CONSOLE_ONLY) return;

  // --- the console with the webview (headless chromium) on the same stream (issue 17) ----
  const mods = require('./webview').prepare(notes);
  if (mods) {
    const { openWebview, TreeMeter } = require('./webview');
    const w = await openWebview(rig, { port, cert }, mods, { user: USER, password: PASSWORD });
    for (const wl of ['idle', 'typing', 'scroll', 'motion']) {
      const load = wl === 'idle' ? null : child(rig, rig.bin.xload, [wl, String(P.shadowWindow + 1)], xenv);
      await sleep(700);
      const a0 = await w.acks();
      const mc = new ConsoleMeter(w.s.pid), mb = new TreeMeter(w.browserPid);
      await sleep(P.shadowWindow * 1000);
      const a1 = await w.acks();
      const rc = mc.stop(), rb = mb.stop();
      if (load) await load.done;
      log(`shadow webview ${wl}: painted ${((a1 - a0) / rb.seconds).toFixed(1)} fps, console ${rc.cpuPerSecond.toFixed(2)} + chromium ${rb.cpuPerSecond.toFixed(2)} s/s`);
      row('shadow: webview frames/s painted (frame_ack)', wl, 'fps', (a1 - a0) / rb.seconds);
      row('shadow: console + reader + webview CPU (Chromium, all processes)', wl, 's/s', rc.cpuPerSecond + rb.cpuPerSecond, { console_and_reader: rc.cpuPerSecond, chromium: rb.cpuPerSecond });
    }
    await w.close();
  }

  // --- xfreerdp3 on the same server, measured with the same instrument -----------------
  const dClient = freeDisplay(dServer + 1);
  await xvfb(rig, dClient);
  const cenv = { DISPLAY: `:${dClient}`, HOME: home, XDG_CONFIG_HOME: path.join(home, 'client') };
  const probe = fs.existsSync(rig.bin.probe) ? rig.proc(rig.bin.probe, [], { ...rig.env, DISPLAY: `:${dClient}` }) : null;
  if (!probe) notes.push('shadow: gc-bench-probe not built (libxtst-dev/libxext-dev missing): no xfreerdp3 rows');
  else {
    await probe.waitFor((e) => e.event === 'ready', 10000);
    await probeFloor(rig, ctx, probe, { DISPLAY: `:${dClient}` });
  }
  for (const mode of probe ? XFREERDP_MODES : []) {
    const label = `xfreerdp3 ${mode.label}`;
    // Password on stdin (/from-stdin:force), never in argv; the server's certificate pinned.
    const xf = child(rig, 'xfreerdp3', [`/v:127.0.0.1:${port}`, `/u:${USER}`, '/from-stdin:force', '/gdi:sw', ...mode.args, '/sec:nla',
      `/cert:fingerprint:sha256:${cert}`, '/size:1920x1080', '/log-level:ERROR', '-clipboard'], cenv);
    xf.stdin.write(`${PASSWORD}\n`);
    const log0 = { ...srvLog.counts };
    const from = probe.events.length;
    probe.write('window 30000');
    const win = await probe.waitFor((e) => (e.event === 'window' || e.event === 'error'), 40000, from);
    if (win.event !== 'window' || xf.exitCode !== null) { notes.push(`${label}: no window (${xf.exitCode}): ${xf.err.slice(-300)}`); xf.kill('SIGTERM'); await xf.done; continue; }
    probe.write('count on'); // changed frames from here on (each workload waits for its own first picture)
    await measure(rig, ctx, xfreerdpClient(probe, xf), { xenv, shadow, label });
    serverEvidence(ctx, label, log0, srvLog.counts);
    xf.kill('SIGTERM');
    await xf.done;
  }
  if (probe) probe.write('quit');
  compare(ctx);
  const mem = memory(shadow.pid);
  if (mem) notes.push(`freerdp-shadow-cli3 RSS ${mem.rss.toFixed(0)} MiB (VmHWM ${mem.hwm.toFixed(0)})`);
  background.kill('SIGTERM');
  shadow.kill('SIGTERM');
}

module.exports = { shadowSuite, startShadow, have, child, xvfb, freeDisplay, freePort, canConnect, USER, PASSWORD, SAM_LINE };
