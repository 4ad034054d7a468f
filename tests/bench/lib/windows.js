'use strict';
// The `windows` part (issue 34): the Windows-shaped stream of gc-test-guest --graphics windows
// at 1920x1080 (ClearCodec, progressive with upgrade passes, SurfaceToSurface, SolidFill, the
// cache), decoded by the console (with gc-bench-panel) and then by xfreerdp3
// /gfx:AVC420:off,AVC444:off (its own Xvfb, gc-bench-probe watching its window; FreeRDP's config
// in a private directory), one after the other on the same guest. Per client and workload (idle,
// typing, scroll, drag, video): CPU (the console's: console + reader), RssAnon, PSS, painted
// frames/s (the panel's decoded frames; the probe's changed frames for xfreerdp3), update latency
// (guest paint → the colour seen at the client), then console ÷ xfreerdp3 CPU. At the end of each
// session the guest's own count of the commands it sent (windows_reference) and, for the console,
// the reader's account (the `closed` event's channels: codecs used, frames).
const fs = require('fs');
const path = require('path');
const { sleep } = require('./rig');
const { Meter, ConsoleMeter, summary } = require('./sys');
const { have, child, xvfb, freeDisplay } = require('./shadow');
const { evidenceEntries } = require('../../lib/lane');

const WORKLOADS = ['idle', 'typing', 'scroll', 'drag', 'video'];
const COLOURS = ['#ff2020', '#20e020', '#2040ff', '#ffff00'];
const XFREERDP_GFX = '/gfx:AVC420:off,AVC444:off';
let paintId = 800000;

// Guest paint → the client shows the colour. The strip y 52..61 right of the marker is the
// scene's background: no workload draws there.
async function paintLatency(g, watch, n) {
  const lat = [];
  let missed = 0;
  for (let i = 0; i < n; i++) {
    // Each spot's next paint has another colour (a repeat would be "seen" before it is painted).
    const id = ++paintId, x = 100 + (id % 20) * 40, y = 52;
    const color = COLOURS[Math.floor(id / 20) % COLOURS.length];
    const fromG = g.events.length;
    const seenP = watch(id, x + 16, y + 5, color);
    await sleep(5); // the watch must be registered before the guest paints
    g.send({ cmd: 'paint', x, y, w: 32, h: 10, color, id });
    const painted = await g.waitFor((e) => e.event === 'painted' && e.id === id, 5000, fromG).catch(() => null);
    const seen = await seenP;
    if (painted && seen) lat.push((seen.t_ns - painted.t_ns) / 1e6); else missed++;
    await sleep(40 + (i % 3) * 17); // spread samples over the workload's tick phase
  }
  return { lat, missed };
}

// The guest's account of the session so far: idle, every upgrade sent, its reference reported.
async function guestAccount(g) {
  const from = g.events.length;
  g.send({ cmd: 'workload', mode: 'idle' });
  const ref = await g.waitFor((e) => e.event === 'windows_reference', 20000, from).catch(() => null);
  return ref ? { frame: ref.frame, digest: ref.digest, clear_mismatch: ref.clear_mismatch, counts: ref.counts } : null;
}

async function measure(g, { P, row, log }, client) {
  const out = {};
  for (const w of WORKLOADS) {
    g.send({ cmd: 'workload', mode: w });
    await sleep(700);
    const c0 = await client.counters();
    const m = client.console ? new ConsoleMeter(client.pid) : new Meter(client.pid);
    await sleep(P.window * 1000);
    const c1 = await client.counters();
    const r = m.stop();
    const secs = (c1.t_ns - c0.t_ns) / 1e9;
    const { lat, missed } = await paintLatency(g, client.watch, P.windowsPaints);
    const who = client.label;
    const alone = (k) => (client.console ? { console_alone: r.console[k], reader_alone: r.reader ? r.reader[k] : null } : {});
    const painted = (client.console ? c1.frames : c1.changed) / secs;
    log(`windows ${who} ${w}: ${painted.toFixed(1)} painted fps, ${r.cpuPerSecond.toFixed(3)} s/s, RssAnon ${r.anonMax.toFixed(1)} MiB, PSS ${r.pssMax.toFixed(1)} MiB, update p50 ${summary(lat).median}`);
    row(`windows: ${who} CPU`, w, 's/s', r.cpuPerSecond, alone('cpuPerSecond'));
    row(`windows: ${who} RssAnon`, w, 'MiB', r.anonMax, alone('anonMax'));
    row(`windows: ${who} PSS`, w, 'MiB', r.pssMax, alone('pssMax'));
    row(`windows: ${who} painted frames/s`, w, 'fps', painted, client.console ? { changed_frames_per_s: c1.changed / secs } : { source: 'probe changed frames' });
    row(`windows: ${who} update latency (guest paint → colour seen)`, w, 'ms', lat, missed ? { missed } : {});
    out[w] = r.cpuPerSecond;
  }
  return out;
}

async function windowsSuite(rig, opts) {
  const { row, notes } = opts;
  const P = { ...opts.P, windowsPaints: opts.QUICK ? 10 : 40 };
  const ctx = { ...opts, P };
  const g = await rig.guest({ width: 1920, height: 1080, graphics: 'windows' });

  // The console, with a decoding panel.
  const s = await rig.open(g);
  const consoleCpu = await measure(g, ctx, {
    label: 'console + reader', console: true, pid: s.pid,
    async counters() { const st = await s.stats(true); return { t_ns: st.t_ns, frames: st.frames, changed: st.changed_frames }; },
    watch(id, x, y, color) {
      const from = s.panel.events.length;
      s.panel.send({ cmd: 'watch', id, x, y, color });
      return s.panel.waitFor((e) => e.event === 'seen' && e.id === id, 3000, from).catch(() => null);
    },
  });
  const consoleAccount = await guestAccount(g);
  await rig.close(s);
  // The reader's account of the session: the evidence's `closed` entry.
  const closedEntry = evidenceEntries(rig.state, s.run).find((e) => e.event === 'closed') || {};
  const channels = closedEntry.channels || null;
  notes.push(`windows console: guest sent ${JSON.stringify(consoleAccount)}; reader saw ${channels ? JSON.stringify({ gfx_codecs_used: channels.gfx_codecs_used, gfx_commands: channels.gfx_commands, gfx_frames: channels.gfx_frames, gfx_caps_version: channels.gfx_caps_version }) : 'no channels in closed'}`);
  row('windows: reader gfx frames (closed evidence)', 'session', 'frames', channels ? channels.gfx_frames : NaN, { codecs: channels ? channels.gfx_codecs_used : null, guest: consoleAccount });

  // xfreerdp3 on its own display, the same guest.
  for (const tool of ['Xvfb', 'xfreerdp3'])
    if (!have(tool)) { notes.push(`windows: no xfreerdp3 rows, ${tool} is not installed`); g.send({ cmd: 'quit' }); return; }
  if (!fs.existsSync(rig.bin.probe)) { notes.push('windows: gc-bench-probe not built: no xfreerdp3 rows'); g.send({ cmd: 'quit' }); return; }
  const d = freeDisplay(170);
  await xvfb(rig, d);
  const home = path.join(rig.work, 'windows-xfreerdp');
  fs.mkdirSync(home, { mode: 0o700 });
  const cenv = { DISPLAY: `:${d}`, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
  const probe = rig.proc(rig.bin.probe, [], { ...rig.env, DISPLAY: `:${d}` });
  await probe.waitFor((e) => e.event === 'ready', 10000);
  // Password on stdin (/from-stdin:force), never in argv; the guest's certificate pinned.
  const xf = child(rig, 'xfreerdp3', [`/v:127.0.0.1:${g.port}`, `/u:${rig.user}`, '/from-stdin:force', '/gdi:sw', XFREERDP_GFX, '/sec:nla',
    `/cert:fingerprint:sha256:${g.cert}`, '/size:1920x1080', '/log-level:ERROR', '-clipboard'], cenv);
  xf.stdin.write(`${rig.password}\n`);
  const fromP = probe.events.length;
  probe.write('window 30000');
  const win = await probe.waitFor((e) => e.event === 'window' || e.event === 'error', 40000, fromP);
  if (win.event !== 'window' || xf.exitCode !== null) {
    notes.push(`windows xfreerdp3: no window (${xf.exitCode}): ${xf.err.slice(-300)}`);
  } else {
    probe.write('count on');
    await g.waitFor((e) => e.event === 'windows_reference', 30000).catch(() => null);
    const label = `xfreerdp3 ${XFREERDP_GFX}`;
    const xfCpu = await measure(g, ctx, {
      label, console: false, pid: xf.pid,
      async counters() { const from = probe.events.length; probe.write('stats'); const st = await probe.waitFor((e) => e.event === 'stats', 5000, from); return { t_ns: st.t_ns, changed: st.changed }; },
      watch(id, x, y, color) {
        const from = probe.events.length;
        probe.write(`watch ${id} ${x} ${y} ${color.slice(1)}`);
        return probe.waitFor((e) => e.event === 'seen' && e.id === id, 3000, from).catch(() => null);
      },
    });
    const xfAccount = await guestAccount(g);
    notes.push(`windows xfreerdp3: guest sent ${JSON.stringify(xfAccount)}`);
    for (const w of WORKLOADS)
      if (xfCpu[w] > 0) row(`windows: console + reader CPU ÷ ${label}`, w, 'ratio', consoleCpu[w] / xfCpu[w], { console: consoleCpu[w], xfreerdp3: xfCpu[w] });
  }
  xf.kill('SIGTERM');
  await Promise.race([xf.done, sleep(5000)]);
  probe.write('quit');
  g.send({ cmd: 'quit' });
}

module.exports = { windowsSuite };
