'use strict';
// The end-to-end rig: a test guest (or any RDP server) behind a libvirt test-driver node,
// a grant for it, `guest-console open` answering credentials on stdin, and gc-bench-panel
// speaking the panel protocol to the console's loopback WebSocket. Everything binds
// 127.0.0.1; passwords and the panel capability only ever travel over stdin pipes.
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { execFileSync } = require('child_process');
const { LineProc } = require('../../lib/proc');
const { nowNs } = require('./sys');

class Rig {
  constructor(build) {
    this.bin = {
      console: path.join(build, 'bin/guest-console'),
      issue: path.join(build, 'bin/gc-issue-grant'),
      demovm: path.join(build, 'bin/gc-demo-vm'),
      guest: path.join(build, 'tests/fixtures/gc-test-guest'),
      panel: path.join(build, 'tests/bench/gc-bench-panel'),
      xload: path.join(build, 'tests/bench/gc-bench-xload'),
      probe: path.join(build, 'tests/bench/gc-bench-probe'),
    };
    this.work = fs.mkdtempSync('/tmp/gc-bench-');
    fs.chmodSync(this.work, 0o700);
    this.state = path.join(this.work, 'state');
    this.runtime = path.join(this.work, 'runtime');
    for (const d of [this.state, this.runtime, path.join(this.work, 'home')]) fs.mkdirSync(d, { mode: 0o700 });
    this.env = { PATH: process.env.PATH || '/usr/bin:/bin', HOME: path.join(this.work, 'home'), LANG: 'C.UTF-8' };
    // A key made for this run signs every grant; ledger and run locks stay in the work dir.
    const keys = path.join(this.work, 'keys');
    fs.mkdirSync(keys, { mode: 0o700 });
    this.issuer = { key: path.join(keys, 'issuer.key'), pub: path.join(keys, 'issuer.pub') };
    execFileSync(this.bin.issue, ['keygen', '--out-private', this.issuer.key, '--out-public', this.issuer.pub], { env: this.env, stdio: ['ignore', 'ignore', 'pipe'] });
    this.ledger = path.join(this.work, 'ledger');
    this.password = `Bench-${crypto.randomBytes(9).toString('base64url')}`;
    this.user = 'bench';
    this.procs = [];
    this.count = 0;
  }

  proc(file, args, env = this.env) {
    const p = new LineProc(file, args, { env });
    // Monotonic receipt stamps (LineProc's own t_ms is wall-clock milliseconds).
    p.on('event', (e) => { e.rx_ns = nowNs(); });
    this.procs.push(p);
    return p;
  }

  // `graphics`: gc-test-guest's --graphics (legacy|gfx); omitted = the guest's default.
  async guest({ width = 1920, height = 1080, graphics = null } = {}) {
    const g = this.proc(this.bin.guest, ['--port', '0', '--width', String(width), '--height', String(height), ...(graphics ? ['--graphics', graphics] : [])]);
    g.send({ username: this.user, password: this.password, domain: '' });
    const ready = await g.waitFor((e) => e.event === 'ready', 20000);
    return Object.assign(g, { port: ready.port, cert: ready.cert_sha256, width, height });
  }

  // A grant for an RDP server on 127.0.0.1:port with the given certificate pin, naming the
  // server's desktop (a guest started with --width/--height keeps that size; the shadow's Xvfb
  // is 1920x1080, the grant's default).
  grant(port, cert, { width = 1920, height = 1080 } = {}) {
    const n = ++this.count;
    const node = path.join(this.work, `node-${n}.xml`);
    const uuid = crypto.randomUUID();
    const name = `gc-bench-${n}`;
    const uri = execFileSync(this.bin.demovm, ['--out', node, '--port', String(port), '--uuid', uuid, '--name', name], { env: this.env, encoding: 'utf8' }).trim().split('\n').pop();
    const out = path.join(this.work, `grant-${n}.json`);
    execFileSync(this.bin.issue, ['--out', out, '--vm-uuid', uuid, '--vm-name', name, '--port', String(port), '--libvirt-uri', uri,
      '--cert-sha256', cert, '--desktop', `${width}x${height}`, '--title', 'bench', '--lifetime', '3600', '--sign-key', this.issuer.key], { env: this.env, stdio: ['ignore', 'ignore', 'pipe'] });
    return out;
  }

  // `guest-console open` logged in, with a decoding panel attached and the first frame painted.
  // `panel: false` leaves the one panel connection to the caller (the webview part), whose
  // page origin goes in `allowOrigin`; the session then carries `ready` (port, capability).
  async open(target, { user = this.user, password = this.password, panel: withPanel = true, allowOrigin = null } = {}) {
    const grant = this.grant(target.port, target.cert, target);
    const args = ['open', '--grant', grant, '--state-dir', this.state, '--runtime-dir', this.runtime, '--issuer-key', this.issuer.pub, '--test-ledger-dir', this.ledger];
    if (allowOrigin) args.push('--allow-origin', allowOrigin);
    // GC_BENCH_WRAP="perf record -g -o F --" (or heaptrack -o F): profile the console; the
    // figures of such a run measure the wrapper's pid and are not comparable.
    const wrap = (process.env.GC_BENCH_WRAP || '').split(' ').filter(Boolean);
    const c = wrap.length ? this.proc(wrap[0], [...wrap.slice(1), this.bin.console, ...args]) : this.proc(this.bin.console, args);
    const ready = await c.waitFor((e) => e.event === 'ready' || e.event === 'error', 30000);
    if (ready.event !== 'ready') throw new Error(`open refused: ${ready.code} ${ready.message}`);
    await c.waitFor((e) => e.event === 'credentials_required', 20000);
    c.send({ cmd: 'credentials', username: user, password, domain: '' });
    await c.waitFor((e) => (e.event === 'phase' && e.reason === 'guest connected') || e.event === 'closed', 30000);
    if (!withPanel) return { console: c, panel: null, pid: c.pid, run: ready.run, ready };
    const panel = this.proc(this.bin.panel, ['--port', String(ready.panel.port), '--run', ready.run, '--task', ready.task]);
    // GC_BENCH_COPY_RECT=0: a panel that does not take GCF1 copy records (the stream before
    // issue 27.5), to measure both on the same workload.
    panel.send({ capability: ready.panel.capability, copy_rect: process.env.GC_BENCH_COPY_RECT !== '0' });
    const welcome = await panel.waitFor((e) => e.event === 'welcome' || e.event === 'error' || e.event === 'disconnected', 10000);
    if (welcome.event !== 'welcome') throw new Error(`panel refused: ${JSON.stringify(welcome)}`);
    const session = { console: c, panel, pid: c.pid, run: ready.run, welcome };
    session.stats = (reset = false) => { const from = panel.events.length; panel.send({ cmd: 'stats', reset }); return panel.waitFor((e) => e.event === 'stats', 5000, from); };
    // The first full frame: polled from the panel's counters (an external process's readiness).
    for (let i = 0; i < 100; i++) {
      if ((await session.stats()).frames > 0) break;
      await sleep(50);
    }
    return session;
  }

  async close(s, how = 'close') {
    s.console.send({ cmd: how });
    const closed = await s.console.waitFor((e) => e.event === 'closed', 15000).catch(() => null);
    const exit = await s.console.waitExit(10000);
    if (s.panel) {
      s.panel.endInput();
      await s.panel.waitExit(5000);
    }
    return { closed, exit };
  }

  async shutdown() {
    for (const p of this.procs) if (!p.exit) { p.endInput(); }
    await sleep(300);
    for (const p of this.procs) if (!p.exit) p.kill('SIGTERM');
    await sleep(200);
    for (const p of this.procs) if (!p.exit) p.kill('SIGKILL');
    fs.rmSync(this.work, { recursive: true, force: true });
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = { Rig, sleep };
