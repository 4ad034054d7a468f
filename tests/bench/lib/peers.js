'use strict';
// The webview beside its browser peers (issue 27 item 5): in the same headless Chromium, on
// the same Xvfb 1920x1080 display and gc-bench-xload workloads, in one run —
//  - the console's webview (the extension's own bundle, lib/webview.js) over
//    freerdp-shadow-cli3 sharing that display, as it serves by default (RDPGFX progressive:
//    lossy, so a scroll reaches the console as new pixels, never as rows it already had), and
//    over a second freerdp-shadow-cli3 on the same display started with -gfx-progressive (it
//    then serves planar, lossless: the stream a damage-tracking server's lossless codecs give);
//    beside each, the console's own CPU and memory (console + reader);
//  - noVNC (Debian's novnc, its own core/rfb.js, view-only, unscaled) through websockify over
//    x11vnc, and over x0vncserver (tigervnc-scraping-server) where installed.
// Every server binds 127.0.0.1. Per client and workload: frames painted per second, bytes the
// page received per second, and Chromium's CPU (all its processes) per painted frame. A painted
// frame is the webview's frame_ack, and for noVNC a Display.flip() that drew damage onto the
// visible canvas (an init script wraps the module's prototype: the same instance rfb.js uses).
// Then the side-by-side ratios the issue's target judges (webview ÷ noVNC).
const fs = require('fs');
const os = require('os');
const http = require('http');
const path = require('path');
const { sleep } = require('./rig');
const { startShadow, have, child, freePort, canConnect, USER, PASSWORD } = require('./shadow');
const { prepare, openWebview, TreeMeter, findBrowser } = require('./webview');
const { ConsoleMeter } = require('./sys');

const NOVNC = process.env.GC_NOVNC_DIR || '/usr/share/novnc';
const WORKLOADS = ['typing', 'scroll', 'motion'];

// Bytes the page's WebSockets received (both clients decode in the page or hand the buffer on
// from it; a socket opened in a worker is not seen and reports 0).
function byteProbe() {
  const P = (window.__gcBytes = { bytes: 0 });
  const Native = window.WebSocket;
  // A factory, not a subclass: the socket stays a plain WebSocket (noVNC checks its prototype).
  function Probed(...args) {
    const ws = new Native(...args);
    ws.addEventListener('message', (e) => {
      P.bytes += typeof e.data === 'string' ? e.data.length : e.data.byteLength || e.data.size || 0;
    });
    return ws;
  }
  Probed.prototype = Native.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Probed[k] = Native[k];
  window.WebSocket = Probed;
}

// The noVNC page: one RFB on a 1920x1080 element, its painted frames counted at Display.flip().
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>noVNC bench</title></head>
<body style="margin:0;background:#000"><div id="screen" style="width:1920px;height:1080px"></div>
<script type="module">
import RFB from '/novnc/core/rfb.js';
import Display from '/novnc/core/display.js';
const P = (window.__gcPeer = { painted: 0, connected: false, error: null });
const flip = Display.prototype.flip;
Display.prototype.flip = function (fromQueue) {
  if (this._renderQ.length === 0 || fromQueue) {
    const b = this._damageBounds;
    if (b.right > b.left && b.bottom > b.top) P.painted += 1;
  }
  return flip.call(this, fromQueue);
};
const rfb = new RFB(document.getElementById('screen'), new URLSearchParams(location.search).get('ws'));
rfb.viewOnly = true;
rfb.scaleViewport = false;
rfb.addEventListener('connect', () => { P.connected = true; });
rfb.addEventListener('disconnect', (e) => { P.error = 'disconnected: ' + JSON.stringify(e.detail); });
</script></body></html>`;

const TYPES = { '.js': 'text/javascript', '.html': 'text/html', '.css': 'text/css' };
function serveNovnc() {
  const root = path.resolve(NOVNC);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname === '/') { res.writeHead(200, { 'content-type': 'text/html' }); res.end(PAGE); return; }
    const file = path.resolve(root, '.' + decodeURIComponent(url.pathname.replace(/^\/novnc/, '')));
    if (!url.pathname.startsWith('/novnc/') || !file.startsWith(root + '/') || !fs.existsSync(file)) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port })));
}

async function waitListening(port, what, proc) {
  for (let i = 0; i < 300; i++) {
    if (await canConnect(port)) return;
    if (proc.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port}: ${proc.err.slice(-400)}`);
}

// A VNC server on the display, websockify in front of it, and noVNC in a fresh Chromium.
const VNC_SERVERS = [
  { label: 'noVNC over x11vnc', tool: 'x11vnc', args: (d, port) => ['-display', `:${d}`, '-rfbport', String(port), '-localhost', '-nopw', '-forever', '-shared', '-quiet'] },
  { label: 'noVNC over x0vncserver', tool: 'x0vncserver', args: (d, port) => ['-display', `:${d}`, '-rfbport', String(port), '-localhost=1', '-interface', '127.0.0.1', '-SecurityTypes', 'None', '-AlwaysShared=1'] },
];

async function openNovnc(rig, mods, vnc, dServer) {
  const vport = await freePort();
  const server = child(rig, vnc.tool, vnc.args(dServer, vport), {});
  await waitListening(vport, vnc.tool, server);
  const wport = await freePort();
  const ws = child(rig, 'websockify', [`127.0.0.1:${wport}`, `127.0.0.1:${vport}`], {});
  await waitListening(wport, 'websockify', ws);
  const site = await serveNovnc();
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gc-bench-novnc-'));
  const marker = `--gc-bench-novnc-${process.pid}-${vport}`;
  const context = await mods.chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.GC_CHROMIUM || '/usr/bin/chromium', headless: true, viewport: { width: 1920, height: 1200 },
    args: [...mods.harness.CHROMIUM_ARGS, marker],
  });
  const page = context.pages()[0] || (await context.newPage());
  const said = [];
  page.on('console', (m) => said.push(m.text()));
  page.on('pageerror', (e) => said.push(String(e)));
  await page.addInitScript(byteProbe);
  await page.goto(`http://127.0.0.1:${site.port}/?ws=${encodeURIComponent(`ws://127.0.0.1:${wport}`)}`);
  const shown = await page.waitForFunction(() => window.__gcPeer && (window.__gcPeer.painted > 0 || window.__gcPeer.error), null, { timeout: 30000 })
    .then(() => page.evaluate(() => window.__gcPeer.error)).catch((e) => e.message);
  if (shown) {
    await context.close();
    throw new Error(`${shown}; the page said: ${said.slice(-5).join(' | ')}`);
  }
  return {
    label: vnc.label, browserPid: findBrowser(marker), page,
    painted: () => page.evaluate(() => window.__gcPeer.painted),
    bytes: () => page.evaluate(() => window.__gcBytes.bytes),
    async close() {
      await context.close();
      site.server.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
      for (const c of [ws, server]) { c.kill('SIGTERM'); await Promise.race([c.done, sleep(5000)]); }
    },
  };
}

// One client through the workloads, each in a fresh gc-bench-xload window on the display.
async function measureClient(rig, { P, row, log }, client, xenv) {
  for (const wl of WORKLOADS) {
    const load = child(rig, rig.bin.xload, [wl, String(P.shadowWindow + 30)], xenv);
    await sleep(1000); // the window is mapped and the workload has settled into its rhythm
    const f0 = await client.painted(), b0 = await client.bytes();
    const m = new TreeMeter(client.browserPid), mc = client.consolePid ? new ConsoleMeter(client.consolePid) : null;
    await sleep(P.shadowWindow * 1000);
    const f1 = await client.painted(), b1 = await client.bytes();
    const r = m.stop(), rc = mc ? mc.stop() : null;
    load.stdin.end();
    if ((await Promise.race([load.done, sleep(15000).then(() => 'timeout')])) === 'timeout') load.kill('SIGKILL');
    const fps = (f1 - f0) / r.seconds;
    log(`peers ${client.label} ${wl}: painted ${fps.toFixed(1)} fps, chromium ${r.cpuPerSecond.toFixed(2)} s/s, ${((b1 - b0) / r.seconds / 1024).toFixed(0)} KiB/s`);
    row(`peers: ${client.label}: frames/s painted`, wl, 'fps', fps);
    row(`peers: ${client.label}: bytes/s received by the page`, wl, 'KiB/s', (b1 - b0) / r.seconds / 1024);
    row(`peers: ${client.label}: Chromium CPU (all processes)`, wl, 's/s', r.cpuPerSecond, { by_process_type: r.byType });
    if (fps > 0) row(`peers: ${client.label}: Chromium CPU per painted frame`, wl, 'ms', (1000 * r.cpuPerSecond) / fps);
    if (f1 > f0) row(`peers: ${client.label}: bytes per painted frame`, wl, 'KiB', (b1 - b0) / (f1 - f0) / 1024);
    if (rc) {
      const alone = (k) => ({ console_alone: rc.console[k], reader_alone: rc.reader ? rc.reader[k] : null });
      row(`peers: ${client.label}: console + reader CPU`, wl, 's/s', rc.cpuPerSecond, alone('cpuPerSecond'));
      row(`peers: ${client.label}: console + reader VmRSS`, wl, 'MiB', rc.rssMax, alone('rssMax'));
      row(`peers: ${client.label}: console + reader RssAnon`, wl, 'MiB', rc.anonMax, alone('anonMax'));
      row(`peers: ${client.label}: console + reader PSS`, wl, 'MiB', rc.pssMax, alone('pssMax'));
    }
  }
}

function compare({ row, rows }, labels) {
  const webviews = labels.filter((l) => l.startsWith('webview'));
  const get = (metric, w) => rows.find((r) => r.metric === metric && r.workload === w);
  for (const mine of webviews) for (const peer of labels.filter((l) => !l.startsWith('webview')))
    for (const wl of WORKLOADS) {
      const cpu = [get(`peers: ${mine}: Chromium CPU per painted frame`, wl), get(`peers: ${peer}: Chromium CPU per painted frame`, wl)];
      const fps = [get(`peers: ${mine}: frames/s painted`, wl), get(`peers: ${peer}: frames/s painted`, wl)];
      if (cpu[0] && cpu[1] && cpu[1].median) row(`side-by-side: ${mine} ÷ ${peer}, Chromium CPU per painted frame`, wl, 'ratio', cpu[0].median / cpu[1].median);
      if (fps[0] && fps[1] && fps[1].median) row(`side-by-side: ${mine} ÷ ${peer}, frames/s painted`, wl, 'ratio', fps[0].median / fps[1].median);
    }
}

async function peersSuite(rig, opts) {
  const { notes } = opts;
  for (const tool of ['Xvfb', 'freerdp-shadow-cli3', 'websockify'])
    if (!have(tool)) { notes.push(`peers: skipped, ${tool} is not installed`); return; }
  if (!fs.existsSync(path.join(NOVNC, 'core/rfb.js'))) { notes.push(`peers: skipped, no noVNC at ${NOVNC} (Debian novnc)`); return; }
  const mods = prepare(notes);
  if (!mods) return;
  const { dServer, port, shadow, cert, xenv, background } = await startShadow(rig, 'peers-shadow-home');
  const labels = [];

  const webviewOver = async (label, server) => {
    const w = await openWebview(rig, { port: server.port, cert: server.cert }, mods, { user: USER, password: PASSWORD }, [byteProbe]);
    const webview = { label, browserPid: w.browserPid, consolePid: w.s.pid, painted: () => w.acks(), bytes: () => w.page.evaluate(() => window.__gcBytes.bytes) };
    await measureClient(rig, opts, webview, xenv);
    labels.push(label);
    await w.close();
  };
  await webviewOver('webview', { port, cert });
  // The same display served planar (lossless) by a second server: the webview and the
  // console on a stream where a scroll's rows are exactly the rows the panel already has.
  const planar = await startShadow(rig, 'peers-shadow-planar-home', { display: dServer, args: ['-gfx-progressive'] }).catch((e) => {
    notes.push(`peers: freerdp-shadow-cli3 -gfx-progressive did not start: ${e.message}`);
    return null;
  });
  if (planar) {
    await webviewOver('webview, planar stream', planar);
    planar.shadow.kill('SIGTERM');
  }

  for (const vnc of VNC_SERVERS) {
    if (!have(vnc.tool)) { notes.push(`peers: ${vnc.label} skipped, ${vnc.tool} is not installed`); continue; }
    const client = await openNovnc(rig, mods, vnc, dServer).catch((e) => { notes.push(`peers: ${vnc.label} failed: ${e.message}`); return null; });
    if (!client) continue;
    await measureClient(rig, opts, client, xenv);
    labels.push(vnc.label);
    await client.close();
  }
  compare(opts, labels);
  background.kill('SIGTERM');
  shadow.kill('SIGTERM');
}

module.exports = { peersSuite };
