'use strict';
// The operator's panel, benchmarked: the extension's own webview bundle (dist/media, with
// the HTML and CSP of src/panelHtml.ts) in headless Debian chromium, served and opened by
// the browser tests' page harness (test/browser.ts), against `guest-console open` on the
// same test guest and workloads as gc-bench-panel (1920x1080).
//
// The page gets a probe (an init script, never part of the product) that
//  - counts the frame_ack messages the panel sends (frames painted),
//  - stamps the DOM input events and the input messages the panel sends for them,
//  - watches one pixel of the canvas AS SHOWN (#screen, or for a bundle that draws on tile
//    canvases beneath it — a variant measured in docs/performance.md — the tile holding the
//    pixel, found by its data-x/data-y; drawn onto a 1x1 scratch canvas) until it has a colour.
// Page times (performance.now) are mapped to CLOCK_MONOTONIC (the guest's t_ns) by the
// round trip with the smallest delay; half of it bounds the mapping error (row `clock_err_ms`).
// Chromium's CPU is summed over ALL its processes (/proc, the browser's process tree).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { sleep } = require('./rig');
const { cpuSeconds, memory, ConsoleMeter, nowNs } = require('./sys');

const REPO = path.resolve(__dirname, '../../..');
const EXT = path.join(REPO, 'vscode-extension');
const CHROMIUM = process.env.GC_CHROMIUM || '/usr/bin/chromium';
const WORKLOADS = (process.env.GC_BENCH_WORKLOADS || 'idle,typing,scroll,motion').split(','); // a subset for quick looks

// ---------------------------------------------------------------------------------------
// The browser's processes (the tree below the browser process chromium was started as).
function children() {
  const byParent = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'latin1');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (!byParent.has(ppid)) byParent.set(ppid, []);
      byParent.get(ppid).push(Number(d));
    } catch { /* gone */ }
  }
  return byParent;
}
function tree(root) {
  const byParent = children();
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(byParent.get(out[i]) || []));
  return out;
}
function cmdline(pid) {
  try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0'); } catch { return []; }
}
function findBrowser(marker) {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const c = cmdline(d);
    if (c.includes(marker) && !c.some((a) => a.startsWith('--type='))) return Number(d);
  }
  return null;
}

// utime+stime per thread name of one process, in seconds (/proc/PID/task/TID/stat).
function threadCpu(pid) {
  const out = new Map();
  let tids = [];
  try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const tid of tids) {
    try {
      const st = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')).replace(/[0-9]+$/, '');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) || 0) + (Number(f[11]) + Number(f[12])) / 100);
    } catch { /* gone */ }
  }
  return out;
}

// CPU of a whole process tree over a window (processes born in it count from zero), and the
// RSS of the panel page's renderer: of the renderer processes, the one that used the most CPU
// since it started (the others are the spare renderer and headless' own UI). Zygote-forked
// processes rewrite their command line into one string, hence the regex.
const isRenderer = (pid) => { const c = cmdline(pid).join(' '); return /--type=renderer/.test(c) && !/--top-chrome-webui/.test(c); };
class TreeMeter {
  constructor(root, intervalMs = 250) {
    this.root = root;
    this.t0 = nowNs();
    this.cpu0 = new Map(tree(root).map((p) => [p, cpuSeconds(p) || 0]));
    this.rss = new Map(); // renderer pid -> [{t_ms, rss}]
    this.threads0 = new Map(tree(root).filter(isRenderer).map((p) => [p, threadCpu(p)]));
    this.pss = [];
    const sample = () => {
      const t_ms = Number(nowNs() - this.t0) / 1e6;
      let total = 0;
      for (const p of tree(root)) {
        const m = memory(p);
        if (!m) continue;
        total += m.pss;
        if (isRenderer(p)) {
          if (!this.rss.has(p)) this.rss.set(p, []);
          this.rss.get(p).push({ t_ms, rss: m.rss });
        }
      }
      this.pss.push(total);
    };
    sample();
    this.timer = setInterval(sample, intervalMs);
  }
  stop() {
    clearInterval(this.timer);
    const seconds = Number(nowNs() - this.t0) / 1e9;
    let cpu = 0, page = null, pageTotal = -1, pageCpu = 0;
    const byType = {};
    for (const p of tree(this.root)) {
      const c = cpuSeconds(p);
      if (c === null) continue;
      const d = c - (this.cpu0.get(p) || 0);
      cpu += d;
      const type = (/--type=([a-z-]+)/.exec(cmdline(p).join(' ')) || [null, 'browser'])[1];
      byType[type] = (byType[type] || 0) + d / seconds;
      if (this.rss.has(p) && c > pageTotal) { page = p; pageTotal = c; pageCpu = d; }
    }
    const samples = page ? this.rss.get(page) : [];
    // The page renderer's threads (main, worker, compositor, decoders, …) in s/s.
    const threads = {};
    if (page) {
      const before = this.threads0.get(page) || new Map();
      for (const [name, c] of threadCpu(page)) {
        const d = (c - (before.get(name) || 0)) / seconds;
        if (d >= 0.002) threads[name] = Number(d.toFixed(3));
      }
    }
    return {
      seconds, cpu, cpuPerSecond: cpu / seconds, byType, threads, samples, rendererPid: page, rendererCpuPerSecond: pageCpu / seconds,
      rendererMax: samples.length ? Math.max(...samples.map((x) => x.rss)) : NaN,
      pssMax: Math.max(...this.pss),
    };
  }
}

// ---------------------------------------------------------------------------------------
// The probe, injected before the panel's own script.
function probeScript() {
  const P = { acks: 0, inputs: [], lastPointer: null, lastKey: null, watches: new Map() };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string') {
      if (data.startsWith('{"type":"frame_ack"')) P.acks += 1;
      else if (data.startsWith('{"type":"pointer"') || data.startsWith('{"type":"key"')) {
        const m = JSON.parse(data);
        P.inputs.push({ ...m, tEvent: m.type === 'key' ? P.lastKey : P.lastPointer, tSent: performance.now() });
      }
    }
    return send.call(this, data);
  };
  for (const t of ['pointermove', 'pointerdown', 'pointerup']) window.addEventListener(t, (e) => { P.lastPointer = e.timeStamp; }, true);
  for (const t of ['keydown', 'keyup']) window.addEventListener(t, (e) => { P.lastKey = e.timeStamp; }, true);
  // Polls (MessageChannel, no timer clamping) until the shown pixel has the colour.
  // Resolves once the first look was taken (so the paint is sent only after it).
  P.watch = (id, x, y, rgb, timeoutMs) => new Promise((looked) => {
    P.watches.set(id, new Promise((resolve) => {
      // The tile holding (x, y) (data-x/data-y: its desktop origin), else the one canvas.
      const tile = Array.from(document.querySelectorAll('#viewport .tiles canvas')).find((c) => {
        const tx = Number(c.dataset.x), ty = Number(c.dataset.y);
        return x >= tx && y >= ty && x < tx + c.width && y < ty + c.height;
      });
      const canvas = tile || document.getElementById('screen');
      const dx = tile ? Number(tile.dataset.x) : 0, dy = tile ? Number(tile.dataset.y) : 0;
      const scratch = document.createElement('canvas');
      scratch.width = scratch.height = 1;
      const ctx = scratch.getContext('2d', { willReadFrequently: true });
      const ch = new MessageChannel();
      const t0 = performance.now();
      let polls = 0;
      ch.port1.onmessage = () => {
        ctx.drawImage(canvas, dx - x, dy - y);
        const d = ctx.getImageData(0, 0, 1, 1).data;
        polls += 1;
        if (polls === 1) looked();
        // Shown at the first look: the colour was there before the paint (not a sample).
        if (Math.abs(d[0] - rgb[0]) <= 8 && Math.abs(d[1] - rgb[1]) <= 8 && Math.abs(d[2] - rgb[2]) <= 8) { ch.port1.close(); resolve(polls === 1 ? -1 : performance.now()); return; }
        if (performance.now() - t0 > timeoutMs) { ch.port1.close(); resolve(null); return; }
        ch.port2.postMessage(0);
      };
      ch.port2.postMessage(0);
    }));
  });
  window.__gcProbe = P;
}

// ---------------------------------------------------------------------------------------
function prepare(notes) {
  if (!fs.existsSync(CHROMIUM)) { notes.push(`webview: skipped, ${CHROMIUM} is not installed`); return null; }
  if (!fs.existsSync(path.join(EXT, 'node_modules/playwright-core'))) { notes.push('webview: skipped, run `npm ci` in vscode-extension first'); return null; }
  // The bundle the extension ships (main.js with the frame worker embedded) + the harness.
  for (const [cmd, args] of [['node', ['scripts/build.mjs']], ['npx', ['tsc', '-p', 'tsconfig.test.json']]]) {
    const r = spawnSync(cmd, args, { cwd: EXT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`webview build failed: ${cmd} ${args.join(' ')}`);
  }
  return {
    chromium: require(path.join(EXT, 'node_modules/playwright-core')).chromium,
    harness: require(path.join(EXT, 'out/test/browser.js')),
    html: require(path.join(EXT, 'out/src/panelHtml.js')),
  };
}

// `initScripts`: more page init scripts (functions), run before the panel's own script.
async function openWebview(rig, g, mods, login = {}, initScripts = []) {
  const { chromium, harness, html } = mods;
  let pageHtml = '';
  // Variants for before/after figures: GC_BENCH_MEDIA serves another build of media/ (e.g.
  // an older main.js); GC_BENCH_WEBVIEW_WORKER=0 drops `worker-src` from the CSP, so the
  // presenter renders in the page.
  const site = await harness.servePanelSite(process.env.GC_BENCH_MEDIA || path.join(EXT, 'dist/media'), () => pageHtml);
  const origin = `http://127.0.0.1:${site.port}`;
  const s = await rig.open(g, { ...login, panel: false, allowOrigin: origin });
  pageHtml = html.renderPanelHtml({
    cspSource: origin,
    nonce: require('crypto').randomBytes(18).toString('base64'),
    scriptUri: '/media/main.js',
    styleUri: '/media/view.css',
    connectSources: [`ws://127.0.0.1:${s.ready.panel.port}`],
    title: 'bench',
  });
  if (process.env.GC_BENCH_WEBVIEW_WORKER === '0') pageHtml = pageHtml.replace('worker-src blob:; ', '');
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gc-bench-chromium-'));
  const marker = `--gc-bench-${process.pid}-${rig.count}`;
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1920, height: 1200 }, args: [...harness.CHROMIUM_ARGS, marker],
  });
  const page = context.pages()[0] || (await context.newPage());
  await page.addInitScript(probeScript);
  for (const script of initScripts) await page.addInitScript(script);
  await harness.openPanelPage(page, site.port);
  // The capability travels like the host's postMessage: page.evaluate over CDP (a pipe).
  await page.evaluate((info) => window.postMessage(info, '*'), {
    type: 'connect', wsUrl: `ws://127.0.0.1:${s.ready.panel.port}`, run: s.ready.run, task: s.ready.task,
    capability: s.ready.panel.capability, clientVersion: '0.1.0-bench', panel: { title: 'bench' },
  });
  await page.waitForFunction(() => window.__gcProbe.acks > 0, null, { timeout: 20000 });
  const browserPid = findBrowser(marker);
  const presenter = await page.getAttribute('#screen', 'data-presenter');
  const clock = await calibrate(page);
  return {
    s, page, context, site, userDataDir, browserPid, presenter, clock,
    acks: () => page.evaluate(() => window.__gcProbe.acks),
    async close() {
      await rig.close(s);
      await context.close();
      site.server.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

// page performance.now() (ms) → CLOCK_MONOTONIC ns: offset from the tightest round trip.
async function calibrate(page) {
  let best = null;
  for (let i = 0; i < 25; i++) {
    const a = nowNs();
    const p = await page.evaluate(() => performance.now());
    const b = nowNs();
    const rtt = Number(b - a);
    if (!best || rtt < best.rtt) best = { rtt, offset: Number(a) + rtt / 2 - p * 1e6 };
  }
  return { toNs: (ms) => ms * 1e6 + best.offset, errMs: best.rtt / 2e6 };
}

function guestStats(g) {
  const from = g.events.length;
  g.send({ cmd: 'stats' });
  return g.waitFor((e) => e.event === 'stats', 5000, from);
}

// Guest paint → the colour shown on the panel canvas.
let batch = 500;
const colours = [[255, 32, 32], [32, 224, 32], [32, 64, 255], [255, 255, 0]];
const lastColour = new Map(); // x -> the colour painted there last
async function updateLatency(g, w, n, label, row) {
  const lat = [], latCmd = [];
  let missed = 0, stale = 0;
  const base = 1000 * batch++;
  for (let i = 0; i < n; i++) {
    const x = 100 + (i % 20) * 40, y = 52, id = base + i;
    // Each paint changes the spot's colour (a repeat would be "seen" before it is painted).
    const rgb = colours[(colours.indexOf(lastColour.get(x)) + 1) % colours.length];
    lastColour.set(x, rgb);
    const color = `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
    await w.page.evaluate(([id, x, y, rgb]) => window.__gcProbe.watch(id, x, y, rgb, 2000), [id, x + 16, y + 5, rgb]);
    const fromG = g.events.length;
    const t0 = nowNs();
    g.send({ cmd: 'paint', x, y, w: 32, h: 10, color, id });
    const painted = await g.waitFor((e) => e.event === 'painted' && e.id === id, 5000, fromG).catch(() => null);
    const seen = await w.page.evaluate((id) => window.__gcProbe.watches.get(id), id);
    if (seen === -1) stale++;
    else if (painted && seen !== null) {
      lat.push((w.clock.toNs(seen) - painted.t_ns) / 1e6);
      latCmd.push((w.clock.toNs(seen) - Number(t0)) / 1e6);
    } else missed++;
    await sleep(40 + (i % 3) * 17);
  }
  row('webview: update latency (guest paint → pixel shown in the canvas)', label, 'ms', lat, { missed, shown_before_paint: stale, clock_err_ms: w.clock.errMs });
  row('webview: update latency incl. guest stdin (paint cmd → pixel shown)', label, 'ms', latCmd, { clock_err_ms: w.clock.errMs });
}

// DOM event (its timeStamp) → the guest decoded the input.
async function inputLatency(g, w, n, label, row) {
  await w.page.focus('#viewport');
  const box = await w.page.locator('#screen').boundingBox();
  for (const kind of ['pointer', 'key']) {
    const lat = [], inPage = [];
    let unsent = 0, lost = 0;
    for (let i = 0; i < n; i++) {
      const fromG = g.events.length;
      const from = await w.page.evaluate(() => window.__gcProbe.inputs.length);
      if (kind === 'pointer') await w.page.mouse.move(box.x + 300 + (i % 500), box.y + 400 + (i % 7));
      else if (i % 2 === 0) await w.page.keyboard.down('KeyA');
      else await w.page.keyboard.up('KeyA');
      const sent = await w.page.waitForFunction(([from, kind]) => window.__gcProbe.inputs.slice(from).find((m) => m.type === kind), [from, kind], { timeout: 2000 })
        .then((h) => h.jsonValue()).catch(() => null);
      const got = sent && await g.waitFor((e) => e.event === 'input' && (kind === 'pointer' ? /pointer/.test(e.kind) && e.x === sent.x && e.y === sent.y : e.kind === 'key' && e.code === 0x1e), 2000, fromG).catch(() => null);
      if (!sent || sent.tEvent === null) unsent++;
      else {
        inPage.push(sent.tSent - sent.tEvent);
        if (got) lat.push((got.t_ns - w.clock.toNs(sent.tEvent)) / 1e6); else lost++;
      }
      await sleep(20 + (i % 5) * 3);
    }
    if (kind === 'key') await w.page.keyboard.up('KeyA').catch(() => {});
    row(`webview: input latency (${kind} DOM event → guest decoded)`, label, 'ms', lat, { not_sent: unsent, not_at_guest: lost, clock_err_ms: w.clock.errMs });
    row(`webview: ${kind} DOM event → message sent (in the page)`, label, 'ms', inPage);
  }
}

async function webviewSuite(rig, { P, row, notes, log, QUICK, SOAK, rows }) {
  const mods = prepare(notes);
  if (!mods) return;
  const g = await rig.guest({ width: 1920, height: 1080 });
  const w = await openWebview(rig, g, mods);
  notes.push(`webview: presenter mode ${w.presenter} (split: worker decodes, page draws; worker: worker decodes and draws; page: no worker); clock mapping ±${w.clock.errMs.toFixed(2)} ms`);
  if (!w.browserPid) throw new Error('chromium browser process not found');
  for (const wl of WORKLOADS) {
    g.send({ cmd: 'workload', mode: wl });
    await sleep(700);
    const gs0 = await guestStats(g);
    const a0 = await w.acks();
    const m = new TreeMeter(w.browserPid), mc = new ConsoleMeter(w.s.pid);
    await sleep(P.window * 1000);
    const a1 = await w.acks();
    const gs = await guestStats(g);
    const r = m.stop(), rc = mc.stop();
    const painted = (a1 - a0) / r.seconds;
    const produced = (gs.workload_frames - gs0.workload_frames) / ((gs.t_ns - gs0.t_ns) / 1e9);
    log(`webview ${wl}: painted ${painted.toFixed(1)} fps of ${produced.toFixed(1)}, chromium ${r.cpuPerSecond.toFixed(2)} s/s (${Object.entries(r.byType).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}), renderer ${r.rendererMax.toFixed(0)} MiB, threads ${JSON.stringify(r.threads)}`);
    row('webview: frames/s produced by the server (test guest, marked frames)', wl, 'fps', produced);
    row('webview: frames/s painted by the panel (frame_ack)', wl, 'fps', painted);
    if (produced > 0) row('webview: painted / produced frames', wl, '%', (100 * painted) / produced);
    row('webview: Chromium CPU (all processes)', wl, 's/s', r.cpuPerSecond, { by_process_type: r.byType, page_renderer: r.rendererCpuPerSecond, renderer_threads: r.threads });
    // Beside the C++ client's figure for the same workload (the `guest` part, when it ran).
    const cpp = rows.find((x) => x.metric === 'panel client CPU per painted frame' && x.workload === wl);
    if (painted > 0) row('webview: Chromium CPU per painted frame', wl, 'ms', (1000 * r.cpuPerSecond) / painted, { cpp_ms: cpp ? cpp.median : null });
    row('webview: console CPU (console + reader)', wl, 's/s', rc.cpuPerSecond, { console_alone: rc.console.cpuPerSecond, reader_alone: rc.reader ? rc.reader.cpuPerSecond : null });
    row('webview: renderer RSS (max sampled)', wl, 'MiB', r.rendererMax, { chromium_pss_max: r.pssMax });
    await updateLatency(g, w, wl === 'motion' ? Math.min(P.paints, 20) : P.paints, wl, row);
    if (wl !== 'scroll') await inputLatency(g, w, P.inputs, wl, row);
  }

  // Renderer RSS under motion for SOAK seconds: the last third's max against the first's.
  g.send({ cmd: 'workload', mode: 'motion' });
  const soak = new TreeMeter(w.browserPid, 1000);
  const a0 = await w.acks();
  await sleep(SOAK * 1000);
  const r = soak.stop();
  const a1 = await w.acks();
  const third = SOAK >= 180 ? 60 : SOAK / 3;
  const first = r.samples.filter((x) => x.t_ms <= third * 1000).map((x) => x.rss);
  const last = r.samples.filter((x) => x.t_ms >= (r.seconds - third) * 1000).map((x) => x.rss);
  const growth = Math.max(...last) - Math.max(...first);
  log(`webview soak ${SOAK} s: renderer first ${Math.max(...first).toFixed(0)} MiB, last ${Math.max(...last).toFixed(0)} MiB`);
  row(`webview: renderer RSS over a ${SOAK} s motion soak`, 'motion', 'MiB', r.samples.map((x) => x.rss), {
    first_max: Math.max(...first), last_max: Math.max(...last), growth, window_s: third, painted_fps: (a1 - a0) / r.seconds, quick: QUICK,
  });
  g.send({ cmd: 'workload', mode: 'idle' });
  await w.close();
  g.send({ cmd: 'quit' });
}

module.exports = { webviewSuite, prepare, openWebview, TreeMeter, findBrowser };
