#!/usr/bin/env node
'use strict';
// Issue 26, descriptor exhaustion at login: `guest-console open` under a low RLIMIT_NOFILE while
// another uid (65534) keeps many idle TCP connections to the panel port (each closed one is
// reopened at once), then the genuine panel says hello and the operator sends the credentials.
// Per trial the outcome: `setup` (the console reached SETUP), `typed_close` (a `closed` or
// `error` event with a code), `crash` (a signal or a sanitizer report), `hang` (none of these
// within the bound), `no_panel` (the genuine panel was not admitted: no credential prompt). Prints one JSON line per
// trial and a summary; exit 0 when no trial crashed or hung and every one ended typed or in
// SETUP. Needs root (the second uid); exit 77 otherwise.
// First, at a limit too low for a run (--low-nofile 48): `open` refuses RESOURCE_EXHAUSTED before
// the grant is consumed, and the same grant then opens.
// Usage: fd_exhaustion.js [--trials 10] [--nofile 1024] [--idle 2500] [--low-nofile 48]   (GC_BUILD_DIR)
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { execFileSync, spawn } = require('child_process');
const REPO = path.resolve(__dirname, '../../..');
const P = require(path.join(REPO, 'tests/lib/proc'));
const { WsClient } = require(path.join(REPO, 'tests/lib/ws'));

const argv = process.argv.slice(2);
const opt = { trials: 10, nofile: 1024, idle: 2500, lowNofile: 48 };
for (let i = 0; i < argv.length; i += 2) opt[argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase())] = Number(argv[i + 1]);
if (process.getuid() !== 0) { console.log('fd_exhaustion: needs root for the second uid; skipped'); process.exit(77); }

const BUILD = path.resolve(REPO, process.env.GC_BUILD_DIR || 'build/asan');
const BIN = { console: path.join(BUILD, 'bin/guest-console'), issue: path.join(BUILD, 'bin/gc-issue-grant'), guest: path.join(BUILD, 'tests/fixtures/gc-test-guest') };
for (const [k, f] of Object.entries(BIN)) if (!fs.existsSync(f)) { console.error(`fd_exhaustion: missing ${k}: ${f}`); process.exit(2); }
const WORK = fs.mkdtempSync('/tmp/gc-fdx-');
fs.chmodSync(WORK, 0o700);
const DIRS = Object.fromEntries(['state', 'runtime', 'home', 'keys', 'ledger', 'certs', 'grants'].map((d) => [d, path.join(WORK, d)]));
for (const d of Object.values(DIRS)) fs.mkdirSync(d, { mode: 0o700 });
const ISSUER = { key: path.join(DIRS.keys, 'issuer.key'), pub: path.join(DIRS.keys, 'issuer.pub') };
const GLOBAL = ['--state-dir', DIRS.state, '--runtime-dir', DIRS.runtime, '--issuer-key', ISSUER.pub, '--test-ledger-dir', DIRS.ledger];
const BASE_ENV = { PATH: process.env.PATH || '/usr/bin:/bin', HOME: DIRS.home, LANG: 'C.UTF-8' };
const CONSOLE_ENV = { ...BASE_ENV, ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' };
const USER = 'operator', PASSWORD = `Fdx-Pw-${crypto.randomBytes(6).toString('hex')}`, DOMAIN = 'FDX';
const VM = { name: 'gc-fdx', uuid: crypto.randomUUID() };

function issueGrant(port, cert, n) {
  const node = path.join(WORK, `node-${n}.xml`);
  fs.writeFileSync(node, `<node>
  <domain type='test'><name>${VM.name}</name><uuid>${VM.uuid}</uuid><memory unit='MiB'>512</memory><vcpu>1</vcpu>
    <os><type>hvm</type></os>
    <devices><interface type='user'><portForward proto='tcp' address='127.0.0.1'><range start='${port}' to='3389'/></portForward></interface></devices>
  </domain>
</node>\n`, { mode: 0o600 });
  const out = path.join(DIRS.grants, `grant-${n}.json`);
  execFileSync(BIN.issue, ['--out', out, '--vm-uuid', VM.uuid, '--vm-name', VM.name, '--port', String(port), '--libvirt-uri', `test://${node}`,
    '--title', 'fd exhaustion', '--panel', `username=${USER}`, '--cert-sha256', cert, '--sign-key', ISSUER.key, '--run', `run-fdx-${n}`],
  { env: BASE_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
  return out;
}

// The other uid: `count` idle connections, each reopened the moment it is closed.
const SQUATTER = `
const net = require('net');
const [port, count] = process.argv.slice(1).map(Number);
let opened = 0, closed = 0, stop = false;
function one() { if (stop) return; const s = net.connect({ host: '127.0.0.1', port });
  s.on('connect', () => { opened++; }); s.on('error', () => {}); s.on('close', () => { closed++; setImmediate(one); }); }
for (let i = 0; i < count; i++) one();
const t = setInterval(() => { process.stdout.write(JSON.stringify({ opened, closed }) + '\\n'); }, 200);
process.stdin.on('end', () => { stop = true; clearInterval(t); process.exit(0); }); process.stdin.resume();
`;

const sanitizer = (stderr) => /==\d+==ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:/.test(stderr);

async function trial(n) {
  const r = { trial: n };
  const guest = new P.LineProc(BIN.guest, ['--port', '0', '--cert-dir', DIRS.certs], { env: { ...BASE_ENV, ASAN_OPTIONS: 'detect_leaks=0' } });
  guest.send({ username: USER, password: PASSWORD, domain: DOMAIN });
  let con, squat, ws;
  try {
    const ready = await guest.waitFor((e) => e.event === 'ready', 20000);
    const grant = issueGrant(ready.port, ready.cert_sha256, n);
    // RLIMIT_NOFILE for the console only (the shell sets it, then becomes the console).
    con = new P.LineProc('/bin/sh', ['-c', `ulimit -n ${opt.nofile} && exec "$0" "$@"`, BIN.console, 'open', '--grant', grant, ...GLOBAL], { env: CONSOLE_ENV });
    const up = await con.waitFor((e) => e.event === 'ready' || e.event === 'error', 30000);
    if (up.event !== 'ready') { r.outcome = 'typed_close'; r.code = up.code; r.at = 'open'; return r; }
    squat = spawn(process.execPath, ['-e', SQUATTER, String(up.panel.port), String(opt.idle)], { uid: 65534, gid: 65534, cwd: '/', stdio: ['pipe', 'pipe', 'ignore'] });
    let last = { opened: 0, closed: 0 };
    squat.stdout.on('data', (d) => { const l = d.toString().trim().split('\n').pop(); try { last = JSON.parse(l); } catch { /* partial */ } });
    // The attack is on: every idle connection has been tried at least once.
    const by = Date.now() + 30000;
    while (last.opened + last.closed < opt.idle && Date.now() < by) await new Promise((res) => setTimeout(res, 100));
    r.squatter = { ...last };
    r.console_fds = (() => { try { return fs.readdirSync(`/proc/${con.pid}/fd`).length; } catch { return null; } })();
    const t0 = Date.now();
    ws = await WsClient.connect(up.panel.port, { origin: 'vscode-webview://fd-exhaustion' })
      .then((x) => { if (!x.ws) r.panel_error = x.status; return x.ws || null; })
      .catch((e) => { r.panel_error = String(e.message || e); return null; });
    if (ws) ws.send({ type: 'hello', run: up.run, task: up.task, capability: up.panel.capability, client: { kind: 'fd-exhaustion', version: '1' } });
    // The console asks for the credentials once the panel is in; `welcome` follows the login.
    const asked = ws ? await con.waitFor((e) => e.event === 'credentials_required', 20000).catch(() => null) : null;
    r.panel_admitted = !!asked;
    if (asked) con.send({ cmd: 'credentials', username: USER, password: PASSWORD, domain: DOMAIN });
    const welcome = asked ? await ws.waitText((m) => m.type === 'welcome', 60000).catch((e) => { r.panel_error = `${e.message}: ${JSON.stringify(ws.texts.slice(-2))}`; return null; }) : null;
    r.welcome_ms = welcome ? Date.now() - t0 : null;
    const settled = (e) => (e.event === 'phase' && e.phase === 'SETUP') || e.event === 'closed' || e.event === 'error';
    const end = asked ? await con.waitFor(settled, 60000).catch(() => null) : con.events.find(settled) || null;
    if (con.exit && con.exit.signal) { r.outcome = 'crash'; r.signal = con.exit.signal; }
    else if (sanitizer(con.stderr)) r.outcome = 'crash';
    else if (!asked) r.outcome = end && end.event !== 'phase' ? 'typed_close' : 'no_panel';
    else if (!end) r.outcome = 'hang';
    else if (end.event === 'phase') r.outcome = 'setup';
    else { r.outcome = 'typed_close'; r.code = end.reason || end.code; }
    return r;
  } finally {
    if (squat) { try { squat.stdin.end(); } catch { /* gone */ } squat.kill('SIGKILL'); }
    if (ws) ws.socket.destroy();
    if (con && !con.exit) { con.send({ cmd: 'close' }); if (!(await con.waitExit(15000))) { con.kill('SIGKILL'); await con.waitExit(5000); } }
    if (con && con.exit && con.exit.signal && !r.signal && r.outcome !== 'crash') r.exit_signal_at_close = con.exit.signal;
    if (con && sanitizer(con.stderr) && r.outcome !== 'crash') { r.outcome = 'crash'; r.sanitizer = true; }
    if (con && process.env.GC_FDX_DEBUG) r.stderr_tail = con.stderr.slice(-3000);
    if (con && r.outcome === 'crash') {
      // What crashed, kept outside the repository (the console's stderr is redacted).
      const dir = process.env.GC_ARTIFACTS_DIR || '/tmp/gc-artifacts';
      fs.mkdirSync(dir, { recursive: true });
      r.stderr_file = path.join(dir, `fd_exhaustion-${process.pid}-trial-${n}.stderr`);
      fs.writeFileSync(r.stderr_file, con.stderr);
      const m = /==\d+==ERROR: [^\n]*\n[\s\S]{0,1500}/.exec(con.stderr);
      if (m) r.first_frames = [...m[0].matchAll(/#\d+ 0x[0-9a-f]+ in (\S+)/g)].map((f) => f[1]).slice(0, 6);
    }
    if (!guest.exit) { guest.send({ cmd: 'quit' }); if (!(await guest.waitExit(5000))) guest.kill('SIGKILL'); }
  }
}

// Too few descriptors for a run: refused RESOURCE_EXHAUSTED before the grant is consumed, so
// the same grant then opens with the limit raised.
async function refusesBeforeConsuming() {
  const guest = new P.LineProc(BIN.guest, ['--port', '0', '--cert-dir', DIRS.certs], { env: { ...BASE_ENV, ASAN_OPTIONS: 'detect_leaks=0' } });
  guest.send({ username: USER, password: PASSWORD, domain: DOMAIN });
  const r = {};
  try {
    const ready = await guest.waitFor((e) => e.event === 'ready', 20000);
    const grant = issueGrant(ready.port, ready.cert_sha256, 0);
    const low = new P.LineProc('/bin/sh', ['-c', `ulimit -n ${opt.lowNofile} && exec "$0" "$@"`, BIN.console, 'open', '--grant', grant, ...GLOBAL], { env: CONSOLE_ENV });
    const first = await low.waitFor((e) => e.event === 'ready' || e.event === 'error' || e.event === 'closed', 30000).catch(() => null);
    if (!low.exit) { low.send({ cmd: 'close' }); await low.waitExit(15000); }
    r.low = { event: first && first.event, code: first && (first.code || first.reason), exit: low.exit };
    const again = new P.LineProc(BIN.console, ['open', '--grant', grant, ...GLOBAL], { env: CONSOLE_ENV });
    const second = await again.waitFor((e) => e.event === 'ready' || e.event === 'error', 30000).catch(() => null);
    r.again = { event: second && second.event, code: second && second.code };
    if (!again.exit) { again.send({ cmd: 'close' }); if (!(await again.waitExit(15000))) again.kill('SIGKILL'); }
    r.ok = r.low.event === 'error' && r.low.code === 'RESOURCE_EXHAUSTED' && !(low.exit && low.exit.signal) && r.again.event === 'ready';
  } finally {
    if (!guest.exit) { guest.send({ cmd: 'quit' }); if (!(await guest.waitExit(5000))) guest.kill('SIGKILL'); }
  }
  return r;
}

(async () => {
  execFileSync(BIN.issue, ['keygen', '--out-private', ISSUER.key, '--out-public', ISSUER.pub], { env: BASE_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
  const before = await refusesBeforeConsuming().catch((e) => ({ ok: false, error: String(e.message || e) }));
  process.stdout.write(`fd_exhaustion: at RLIMIT_NOFILE ${opt.lowNofile}: ${JSON.stringify(before)}\n`);
  const rows = [];
  for (let n = 1; n <= opt.trials; n++) {
    const row = await trial(n).catch((e) => ({ trial: n, outcome: 'error', error: String(e.message || e) }));
    rows.push(row);
    process.stdout.write(JSON.stringify(row) + '\n');
  }
  const count = (o) => rows.filter((r) => r.outcome === o).length;
  const welcomes = rows.map((r) => r.welcome_ms).filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  const summary = { build: BUILD, nofile: opt.nofile, idle: opt.idle, trials: rows.length, setup: count('setup'), typed_close: count('typed_close'),
    crash: count('crash'), hang: count('hang'), no_panel: count('no_panel'), error: count('error'),
    crash_rate: count('crash') / rows.length, welcome_ms: welcomes.length ? { p50: welcomes[Math.floor(welcomes.length / 2)], max: welcomes[welcomes.length - 1] } : null };
  process.stdout.write(`fd_exhaustion: ${JSON.stringify(summary)}\n`);
  fs.rmSync(WORK, { recursive: true, force: true });
  process.exit(before.ok && summary.crash === 0 && summary.hang === 0 && summary.no_panel === 0 && summary.error === 0 ? 0 : 1);
})();
