'use strict';
// The interop lane's weston part (docs/operating.md "weston"): weston 10 (Debian 12) with its
// RDP backend on 127.0.0.1 (its own `--address`), TLS from a certificate made here, no client
// but its desktop shell. Weston's RDP backend advertises Refresh Rect and Suppress Output and
// answers neither, and has no graphics pipeline: the lock's ladder has no rung it answers, so
// the strict default refuses the lock GUEST_UNCONFIRMED (what it must do with a server that
// shows no answer), also with weston frozen; with the `settle` opt-in the whole flow runs:
// open, SETUP, frames covering the desktop, lock, CAPTURING, input refused after, close, nothing
// left.
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { execFileSync } = require('child_process');
const P = require('../lib/proc');
const L = require('../lib/lane');

const { BIN, until, portOpen, freePort } = L;
// weston's output is the size it is started with; the grant names the same.
const DESKTOP = { width: 1024, height: 768, layout: '0x00000409' };
const BACKGROUND = '#204060';
// The lock's corner rungs ask for the desktop's bottom-right 16x16 (RdpSession::startGuestSync).
const CORNER = { x: DESKTOP.width - 16, y: DESKTOP.height - 16, w: 16, h: 16 };

const readText = (f) => { try { return fs.readFileSync(f, 'utf8'); } catch { return ''; } };

async function run(ctx) {
  const { check, report, WORK, signKey, issuerPub, proc, ENV, dirs, RUNS } = ctx;
  const R = (report.weston = { figures: {}, sessions: {} });
  const dir = path.join(WORK, 'weston');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const cert = path.join(dir, 'cert.pem'), key = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=gc-interop-weston'], { stdio: 'ignore' });
  const pin = crypto.createHash('sha256').update(new crypto.X509Certificate(fs.readFileSync(cert)).raw).digest('hex');

  // ---- weston: up, on loopback only ------------------------------------------------------------
  const port = await freePort();
  const wlog = path.join(dir, 'weston.log');
  // A desktop that repaints nothing on its own (no panel clock) in a colour of its own: the
  // lane locks only once the shell's background shows in the lock's corner, so no repaint of
  // weston's start-up (the shell client draws after the compositor listens) can land while a
  // corner rung waits and pass for its answer.
  const config = path.join(dir, 'weston.ini');
  fs.writeFileSync(config, `[shell]\nclock-format=none\nbackground-color=0xff${BACKGROUND.slice(1)}\n`, { mode: 0o600 });
  const tUp = Date.now();
  const weston = proc('weston', 'weston', ['--backend=rdp-backend.so', '--address=127.0.0.1', `--port=${port}`, `--rdp-tls-cert=${cert}`, `--rdp-tls-key=${key}`,
    `--width=${DESKTOP.width}`, `--height=${DESKTOP.height}`, `--config=${config}`, '--socket=gc-interop-weston', `--log=${wlog}`], { PATH: process.env.PATH, XDG_RUNTIME_DIR: dir });
  const listening = () => { try { return P.inetSocketsOf(weston.pid).inet.filter((s) => s.state === 'LISTEN' && s.localPort === port); } catch { return []; } };
  const up = await until(() => listening().length > 0 || weston.exit, 60000, 100);
  R.figures.up_ms = Date.now() - tUp;
  const listens = listening().map((s) => `${s.local}:${s.localPort}`);
  check('35', 'weston 10 serves RDP (its RDP backend, TLS) on 127.0.0.1 only', up && !weston.exit && listens.length > 0 && listens.every((a) => a.startsWith('127.0.0.1:')),
    { listens, up_ms: R.figures.up_ms, exit: weston.exit, log: readText(wlog).slice(-400) });
  if (!up || weston.exit) throw new Error(`weston did not come up: ${readText(wlog).slice(-600)}`);

  // ---- the grant (the libvirt test driver's domain forwards to weston's port) -------------------
  const vm = L.testDomain(path.join(WORK, 'node-weston.xml'), 'gc-interop-weston', port);
  const issueGrant = L.grantIssuer({ vm, port, pin, desktop: DESKTOP, title: 'interop: weston', signKey, env: ENV });
  const global = ['--state-dir', dirs.state, '--runtime-dir', dirs.runtime, '--issuer-key', issuerPub, ...ctx.ledgerArgs];
  const evidence = (run) => L.evidenceEntries(dirs.state, run);

  // One session: open, credentials (weston's RDP backend takes any), SETUP, a panel client.
  const openSession = (grant) => L.openSession({ proc, grant, globalArgs: global, credentials: { username: 'gc', password: `Wp-${L.rnd(10)}` } });
  const lockVerdict = (s) => s.con.waitFor((e) => e.event === 'closed' || (e.event === 'phase' && e.phase === 'CAPTURING'), 30000).catch(() => null);
  const endSession = (s, { operator }) => L.closeSession(s, { operator, runsDir: RUNS });

  // ---- the strict default: no rung answered, the lock refused GUEST_UNCONFIRMED ----------------
  {
    const s = await openSession(issueGrant(path.join(WORK, 'grant-weston-strict.json')));
    R.figures.open_to_setup_ms = s.setupMs;
    let coveredAt = 0;
    await until(() => {
      const covered = s.frames.frames > 0 && s.frames.covered && s.frames.covered.every(Boolean);
      if (covered && !coveredAt) coveredAt = Date.now();
      return covered && s.frames.shows(CORNER, BACKGROUND);
    }, 30000, 10);
    // How long after the first frames covered the desktop the shell's background reached the corner.
    R.figures.background_after_covered_ms = coveredAt ? Date.now() - coveredAt : null;
    check('35', `weston: SETUP, the desktop the grant names, frames covering it reach the panel client, the shell's background (${BACKGROUND}) in the lock's corner`,
      s.welcome && s.welcome.width === DESKTOP.width && s.welcome.height === DESKTOP.height && s.frames.frames > 0 && !s.frames.error && s.frames.covered && s.frames.covered.every(Boolean) && s.frames.shows(CORNER, BACKGROUND),
      { size: s.welcome && `${s.welcome.width}x${s.welcome.height}`, security: s.welcome && s.welcome.identity && s.welcome.identity.security, frames: s.frames.frames, error: s.frames.error, open_to_setup_ms: s.setupMs });
    const t = Date.now();
    s.ws.send({ type: 'lock' });
    const verdict = await lockVerdict(s);
    R.figures.strict_lock_ms = Date.now() - t;
    const end = await endSession(s, { operator: !verdict || verdict.event !== 'closed' });
    const entries = evidence(s.ready.run);
    const sync = entries.find((e) => e.event === 'guest_sync') || {};
    const channels = (entries.find((e) => e.event === 'connected') || {}).channels || {};
    R.sessions.strict = { verdict: verdict && (verdict.reason || verdict.phase), lock_ms: R.figures.strict_lock_ms, guest_sync: { confirmed_by: sync.confirmed_by, rungs: sync.rungs }, pipeline_claimed: channels.gfx_advertised_by_server, end };
    check('35', `weston, the strict default: it answers no rung it was asked (${JSON.stringify(sync.rungs || null)}): the lock fails closed ${verdict && verdict.reason} in ${R.figures.strict_lock_ms} ms, never CAPTURING`,
      verdict && verdict.event === 'closed' && verdict.reason === 'GUEST_UNCONFIRMED' && sync.confirmed_by === 'settle_only' && end.exit === 0 && end.run_dir_gone, R.sessions.strict);
  }

  // ---- frozen (SIGSTOP after SETUP): refused the same way --------------------------------------
  {
    const s = await openSession(issueGrant(path.join(WORK, 'grant-weston-frozen.json')));
    let verdict = null;
    const t = Date.now();
    process.kill(weston.pid, 'SIGSTOP');
    try {
      s.ws.send({ type: 'lock' });
      verdict = await lockVerdict(s);
    } finally {
      process.kill(weston.pid, 'SIGCONT');
    }
    R.figures.frozen_lock_ms = Date.now() - t;
    const end = await endSession(s, { operator: !verdict || verdict.event !== 'closed' });
    const sync = evidence(s.ready.run).find((e) => e.event === 'guest_sync') || {};
    R.sessions.frozen = { verdict: verdict && (verdict.reason || verdict.phase), lock_ms: R.figures.frozen_lock_ms, guest_sync: { confirmed_by: sync.confirmed_by, rungs: sync.rungs }, end };
    check('35', `a frozen weston (SIGSTOP after SETUP): the strict lock fails closed ${verdict && verdict.reason} in ${R.figures.frozen_lock_ms} ms, never CAPTURING`,
      verdict && verdict.event === 'closed' && verdict.reason === 'GUEST_UNCONFIRMED' && sync.confirmed_by === 'settle_only', R.sessions.frozen);
  }

  // ---- the `settle` opt-in: the whole flow ----------------------------------------------------
  {
    const s = await openSession(issueGrant(path.join(WORK, 'grant-weston-settle.json'), ['--lock-confirmation', 'settle']));
    await until(() => s.frames.frames > 0 && s.frames.covered && s.frames.covered.every(Boolean), 30000, 100);
    let seq = 0;
    s.ws.send({ type: 'pointer', seq: ++seq, x: 300, y: 200, buttons: 0, wheel: 0 });
    const acked = await s.ws.waitText((m) => m.type === 'input_ack' && m.upto >= seq, 15000).catch(() => null);
    const t = Date.now();
    s.ws.send({ type: 'lock' });
    const verdict = await lockVerdict(s);
    R.figures.settle_lock_ms = Date.now() - t;
    const after = ++seq;
    s.ws.send({ type: 'key', seq: after, scancode: 0x1e, down: true });
    const refused = await s.ws.waitText((m) => m.type === 'input_refused' && m.seq === after, 15000).catch(() => null);
    const end = await endSession(s, { operator: true });
    const sync = evidence(s.ready.run).find((e) => e.event === 'guest_sync') || {};
    R.sessions.settle = { verdict: verdict && (verdict.phase || verdict.reason), lock_ms: R.figures.settle_lock_ms, guest_sync: { confirmed_by: sync.confirmed_by, rungs: sync.rungs }, refused: refused && refused.code, end };
    check('35', `weston with lock.confirmation "settle": a pointer move acknowledged, the lock CAPTURING by ${sync.confirmed_by} in ${R.figures.settle_lock_ms} ms, a key after it refused PHASE_LOCKED, close OPERATOR_CLOSE, exit 0, run dir removed`,
      acked && verdict && verdict.phase === 'CAPTURING' && sync.confirmed_by === 'settle_only' && refused && refused.code === 'PHASE_LOCKED' && end.reason === 'OPERATOR_CLOSE' && end.exit === 0 && end.run_dir_gone,
      R.sessions.settle);
  }

  // ---- weston stops; its port is free ----------------------------------------------------------
  weston.kill('SIGTERM');
  const stopped = await weston.waitExit(15000);
  if (!weston.exit) weston.kill('SIGKILL');
  const free = !(await portOpen(port));
  check('35', 'nothing left: weston stopped, its port free', !!stopped && free, { stopped: stopped && (stopped.code ?? stopped.signal), port_free: free });
}

module.exports = { run };
