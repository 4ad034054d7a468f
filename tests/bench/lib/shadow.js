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
const { Meter, memory } = require('./sys');

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

async function shadowSuite(rig, { P, row, notes, log }) {
  for (const tool of ['Xvfb', 'freerdp-shadow-cli3', 'xfreerdp3'])
    if (!have(tool)) { notes.push(`shadow: skipped, ${tool} is not installed`); return; }
  const home = path.join(rig.work, 'shadow-home');
  fs.mkdirSync(home, { mode: 0o700 });
  const sam = path.join(home, 'SAM');
  fs.writeFileSync(sam, SAM_LINE, { mode: 0o600 });
  const dServer = freeDisplay(150);
  await xvfb(rig, dServer);
  const port = await freePort();
  const shadow = child(rig, 'freerdp-shadow-cli3', ['/bind-address:127.0.0.1', `/port:${port}`, `/sam-file:${sam}`, '/log-level:ERROR'],
    { DISPLAY: `:${dServer}`, HOME: home, XDG_CONFIG_HOME: home });
  let up = false;
  for (let i = 0; i < 300 && !up; i++) { up = await canConnect(port); if (!up) await sleep(100); }
  if (!up) throw new Error(`freerdp-shadow-cli3 did not listen: ${shadow.err.slice(-500)}`);
  const pem = fs.readFileSync(path.join(home, 'freerdp/shadow/shadow.crt'), 'latin1');
  const der = Buffer.from(pem.split('-----')[2].replace(/\s+/g, ''), 'base64');
  const cert = crypto.createHash('sha256').update(der).digest('hex');
  const xenv = { DISPLAY: `:${dServer}` };
  const background = child(rig, rig.bin.xload, ['idle', '100000'], xenv); // the static text page

  // --- the console ---------------------------------------------------------------------
  const s = await rig.open({ port, cert }, { user: USER, password: PASSWORD });
  for (const w of ['idle', 'typing', 'scroll', 'motion']) {
    const load = w === 'idle' ? null : child(rig, rig.bin.xload, [w, String(P.shadowWindow + 1)], xenv);
    await sleep(700);
    const st0 = await s.stats(true);
    const m = new Meter(s.pid), ms = new Meter(shadow.pid), mp = new Meter(s.panel.pid);
    await sleep(P.shadowWindow * 1000);
    const st = await s.stats(true);
    const r = m.stop(), rs = ms.stop(), rp = mp.stop();
    const secs = (st.t_ns - st0.t_ns) / 1e9;
    let ticks = null;
    if (load) { await load.done; try { const j = JSON.parse(load.out.trim()); ticks = j.ticks / j.seconds; } catch { /* none */ } }
    log(`shadow ${w}: ${(st.frames / secs).toFixed(1)} fps, console ${r.cpuPerSecond.toFixed(2)} s/s, server ${rs.cpuPerSecond.toFixed(2)} s/s`);
    row('shadow: frames/s delivered to the panel', w, 'fps', st.frames / secs, { xload_ticks_per_s: ticks });
    row('shadow: bytes/s on the wire (panel WebSocket payload)', w, 'KiB/s', (st.binary_bytes + st.text_bytes) / secs / 1024);
    if (w === 'typing') row('shadow: bytes per typed character', w, 'B', (st.binary_bytes + st.text_bytes) / secs / 90);
    row('shadow: console CPU', w, 's/s', r.cpuPerSecond);
    row('shadow: console RSS (max sampled)', w, 'MiB', r.rssMax);
    row('shadow: freerdp-shadow-cli3 CPU (context)', w, 's/s', rs.cpuPerSecond);
    row('shadow: panel client CPU (decode+paint)', w, 's/s', rp.cpuPerSecond);
  }
  await rig.close(s);

  // --- the console with the webview (headless chromium) on the same stream (issue 17) ----
  const mods = require('./webview').prepare(notes);
  if (mods) {
    const { openWebview, TreeMeter } = require('./webview');
    const w = await openWebview(rig, { port, cert }, mods, { user: USER, password: PASSWORD });
    for (const wl of ['idle', 'typing', 'scroll', 'motion']) {
      const load = wl === 'idle' ? null : child(rig, rig.bin.xload, [wl, String(P.shadowWindow + 1)], xenv);
      await sleep(700);
      const a0 = await w.acks();
      const mc = new Meter(w.s.pid), mb = new TreeMeter(w.browserPid);
      await sleep(P.shadowWindow * 1000);
      const a1 = await w.acks();
      const rc = mc.stop(), rb = mb.stop();
      if (load) await load.done;
      log(`shadow webview ${wl}: painted ${((a1 - a0) / rb.seconds).toFixed(1)} fps, console ${rc.cpuPerSecond.toFixed(2)} + chromium ${rb.cpuPerSecond.toFixed(2)} s/s`);
      row('shadow: webview frames/s painted (frame_ack)', wl, 'fps', (a1 - a0) / rb.seconds);
      row('shadow: console + webview CPU (Chromium, all processes)', wl, 's/s', rc.cpuPerSecond + rb.cpuPerSecond, { console: rc.cpuPerSecond, chromium: rb.cpuPerSecond });
    }
    await w.close();
  }

  // --- xfreerdp3 on the same server: the decode ceiling ----------------------------------
  const dClient = freeDisplay(dServer + 1);
  await xvfb(rig, dClient);
  const cenv = { DISPLAY: `:${dClient}`, HOME: home, XDG_CONFIG_HOME: path.join(home, 'client') };
  // Its default, then with the graphics pipeline (/gfx), as a user would pick.
  for (const mode of ['/gdi:sw', '/gfx']) {
    const label = mode === '/gfx' ? 'xfreerdp3 /gfx' : 'xfreerdp3 /gdi:sw';
    // Password on stdin (/from-stdin:force), never in argv; the server's certificate pinned.
    const xf = child(rig, 'xfreerdp3', [`/v:127.0.0.1:${port}`, `/u:${USER}`, '/from-stdin:force', '/gdi:sw', ...(mode === '/gfx' ? ['/gfx'] : []), '/sec:nla',
      `/cert:fingerprint:sha256:${cert}`, '/size:1920x1080', '/log-level:ERROR', '-clipboard'], cenv);
    xf.stdin.write(`${PASSWORD}\n`);
    await sleep(3000); // connect + first full frame; checked below by its CPU and damage counts
    if (xf.exitCode !== null) { notes.push(`${label} exited early (${xf.exitCode}): ${xf.err.slice(-300)}`); continue; }
    for (const w of ['idle', 'typing', 'scroll', 'motion']) {
      const load = w === 'idle' ? null : child(rig, rig.bin.xload, [w, String(P.shadowWindow + 1)], xenv);
      await sleep(700);
      const damage = child(rig, rig.bin.xload, ['damage', String(P.shadowWindow)], { DISPLAY: `:${dClient}` });
      const m = new Meter(xf.pid), ms = new Meter(shadow.pid);
      await damage.done;
      const r = m.stop(), rs = ms.stop();
      if (load) await load.done;
      let dps = null;
      try { const j = JSON.parse(damage.out.trim()); dps = j.events / j.seconds; } catch { notes.push(`damage counter: ${damage.err.slice(-200)}`); }
      log(`${label} ${w}: ${dps === null ? '?' : dps.toFixed(1)} repaints/s, ${r.cpuPerSecond.toFixed(2)} s/s`);
      row(`${label}: X repaint batches/s (XDamage)`, w, '1/s', dps);
      row(`${label}: CPU`, w, 's/s', r.cpuPerSecond);
      row(`${label}: RSS (max sampled)`, w, 'MiB', r.rssMax);
      row(`shadow: freerdp-shadow-cli3 CPU with ${label} (context)`, w, 's/s', rs.cpuPerSecond);
    }
    xf.kill('SIGTERM');
    await xf.done;
  }
  const mem = memory(shadow.pid);
  if (mem) notes.push(`freerdp-shadow-cli3 RSS ${mem.rss.toFixed(0)} MiB (VmHWM ${mem.hwm.toFixed(0)})`);
  background.kill('SIGTERM');
  shadow.kill('SIGTERM');
}

module.exports = { shadowSuite };
