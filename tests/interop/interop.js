#!/usr/bin/env node
'use strict';
// The interop lane's checks (tests/interop/run starts this as root with WORK, the throwaway
// accounts' names and GRD's network namespace): xrdp + xorgxrdp on 127.0.0.1 with their own
// config copies, a throwaway TLS certificate (the grant's pin) and account, and the console
// driven through them like the VS Code extension does — check, open, auto-login with the Client
// Info credentials, frames at a panel client, a typed key seen inside the X session, lock, input
// refused after it, close, nothing left; then gnome-remote-desktop (grd.js), while xrdp's
// disconnected session waits out its minute. Prints PASS/FAIL lines and "interop: N passed, M
// failed"; writes GC_ARTIFACTS_DIR/interop-report.json. Every wait is on an event, a line or a
// state, bounded.
const fs = require('fs');
const net = require('net');
const path = require('path');
const crypto = require('crypto');
const { execFileSync, spawnSync } = require('child_process');
const P = require('../lib/proc');
const L = require('../lib/lane');
const GRD = require('./grd');
const WESTON = require('./weston');
const { decodeXwd } = GRD;

const [WORK, USER, GRD_USER, NETNS] = process.argv.slice(2);
if (!WORK || !USER || !GRD_USER || !NETNS) { console.error('usage: interop.js WORK USER GRD_USER NETNS (started by tests/interop/run)'); process.exit(2); }
// The servers this run takes on (GC_INTEROP_SERVERS, default all): xrdp, grd (grd.js), weston
// (weston.js).
const SERVERS = new Set((process.env.GC_INTEROP_SERVERS || 'xrdp,grd,weston').split(',').map((x) => x.trim()).filter(Boolean));
const started = Date.now();
const { BIN, ARTIFACTS, rnd, until, portOpen, freePort, sleep } = L;
// The benchmark's desktop, named in the grant (rdp.desktop, rdp.keyboard_layout): the defaults.
const DESKTOP = { width: 1920, height: 1080, layout: '0x00000409' };
const SESMAN_PORT = 3350; // fixed: xrdp reads it from /etc/xrdp/sesman.ini whatever --config says

const results = [];
const secrets = []; // what the GRD part adds (its password, its typed text)
const report = { lane: `interop (${[...SERVERS].join(', ')})`, servers: [...SERVERS], started_at: new Date(started).toISOString(), items: results, figures: {}, xrdp_log: {} };
const check = L.reporter({ items: results, verbose: true, limit: 600 });
const log = (s) => process.stdout.write(`  .. ${s}\n`);
const PASSWORD = `Ip-${rnd(14)}`;
const TYPED = `gcinterop${rnd(6)}`;
const SC = { a: 0x1e, b: 0x30, c: 0x2e, d: 0x20, e: 0x12, f: 0x21, g: 0x22, h: 0x23, i: 0x17, j: 0x24, k: 0x25, m: 0x32, n: 0x31, o: 0x18, p: 0x19, q: 0x10, r: 0x13, s: 0x1f, t: 0x14, u: 0x16, v: 0x2f, w: 0x11, x: 0x2d, y: 0x15, z: 0x2c, enter: 0x1c };

const dirs = { state: path.join(WORK, 'state'), runtime: path.join(WORK, 'runtime'), home: path.join(WORK, 'home'), ledger: path.join(WORK, 'ledger'), xrdp: path.join(WORK, 'xrdp') };
for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
const RUNS = path.join(dirs.runtime, 'guest-console/runs');
const ENV = L.consoleEnv(dirs.home);
const spawned = [];
function proc(kind, file, args, env = ENV) {
  const p = new P.LineProc(file, args, { env });
  spawned.push(p);
  fs.appendFileSync(path.join(WORK, 'pids'), `${kind} ${p.pid}\n`);
  return p;
}

const readText = (f) => { try { return fs.readFileSync(f, 'utf8'); } catch { return ''; } };
const userPids = (uid) => spawnSync('ps', ['-o', 'pid=', '-u', String(uid)], { encoding: 'utf8' }).stdout.split('\n').map((s) => s.trim()).filter(Boolean);

// Edits an ini copy: `set` maps "Section.key" to a value (replaced in place, or appended to
// its section).
function iniCopy(from, to, set) {
  const lines = fs.readFileSync(from, 'utf8').split('\n');
  const pending = new Map(Object.entries(set));
  let section = '';
  const out = [];
  const flush = () => {
    for (const [k, v] of pending) if (k.startsWith(`${section}.`)) { out.push(`${k.slice(section.length + 1)}=${v}`); pending.delete(k); }
  };
  for (const line of lines) {
    const sec = /^\[([^\]]+)\]/.exec(line);
    if (sec) { flush(); section = sec[1]; out.push(line); continue; }
    const kv = /^([A-Za-z_]+)=/.exec(line);
    const key = kv && `${section}.${kv[1]}`;
    if (key && pending.has(key)) { out.push(`${kv[1]}=${pending.get(key)}`); pending.delete(key); continue; }
    out.push(line);
  }
  flush();
  if (pending.size) throw new Error(`${from}: sections not found for ${[...pending.keys()].join(', ')}`);
  fs.writeFileSync(to, out.join('\n'), { mode: 0o600 });
}

// ---------------------------------------------------------------------------------------
// Issue 25 ("What must show it", the xrdp lane): type_text and scroll through the real console
// and the official MCP SDK client, one run per action. The witnesses inside the X session:
// the xterm's shell writing ~/typed (every character xrdp, Xorg and the pty delivered), and
// gc-interop-recorder (X RECORD: every button event the X server processed).
const ACTION_KINDS = ['click', 'move', 'drag', 'scroll', 'key_chord', 'hold_key', 'type_text', 'wait', 'done', 'fail'];
const TEXT_UNICODE = 'Gc é ß 😀'; // ASCII, accented letters, a character above U+FFFF
const TEXT_ASCII = 'Gc-Live 42!'; // every character on the US layout (three need Shift)
const RECORDER = process.env.GC_INTEROP_RECORDER;
// After a refusal nothing may show up; the xterm's shell writes a line at Enter only, so the
// window lets a stray key reach the file before it is read again (negative evidence).
const NEGATIVE_MS = 1500;

async function issue25Runs(ctx) {
  const { typedFile } = ctx;
  const newText = (before) => { const now = readText(typedFile); return now.startsWith(before) ? now.slice(before.length) : now; };
  const sessions = (report.issue25 = {});
  let unicodeAdvertised = null;

  // One run: open, login, the pointer over the xterm (focus follows it: no window manager),
  // request_lock + capture_desktop through MCP, then `body` with the run's one action.
  const actionRun = async (label, textInput, body) => {
    const R = (sessions[label] = {});
    const tRun = Date.now();
    const grant = L.grantWithAction(ctx.issueGrant(path.join(WORK, `grant-${label}.json`)), { kinds: ACTION_KINDS, limits: { text_chars: 64, scroll_notches: 5 }, text_input: textInput }, ctx.signKey);
    const logFrom = readText(ctx.xrdpLog).length;
    let s = null, mcp = null, recorder = null;
    try {
      s = await L.openSession({ proc, grant, globalArgs: ctx.global, credentials: { username: USER, password: PASSWORD } });
      if (!s.welcome) throw new Error('no welcome on the panel');
      // Reconnected to the session (same display) or a new one: the display xrdp names.
      await until(() => /login successful for user \S+ on display \d+/.test(readText(ctx.xrdpLog).slice(logFrom)), 15000, 100);
      const d = (/login successful for user \S+ on display (\d+)/.exec(readText(ctx.xrdpLog).slice(logFrom)) || [])[1];
      if (d !== undefined) ctx.runs.display = d;
      R.display = d !== undefined ? (d === ctx.runs.firstDisplay ? 'the first session\'s (reconnected)' : 'a new one') : 'not named (reconnected)';
      const X = { ...process.env, DISPLAY: `:${ctx.runs.display}`, XAUTHORITY: path.join(ctx.home, '.Xauthority') };
      await until(() => spawnSync('xdotool', ['search', '--onlyvisible', '--class', 'xterm'], { env: X, encoding: 'utf8' }).stdout.trim() !== '', 60000, 200);
      s.ws.send({ type: 'pointer', seq: 1, x: 200, y: 150, buttons: 0, wheel: 0 });
      await s.ws.waitText((t) => t.type === 'input_ack' && t.upto >= 1, 15000);
      if (RECORDER) {
        recorder = proc('recorder', RECORDER, [], X);
        await recorder.waitFor((e) => /^GCREC (started|unavailable)/.test(e.unparsable || ''), 15000);
      }
      const run = await L.lockAndCapture({ run: s.ready.run, globalArgs: ctx.global, env: ENV, name: 'gc-interop', timeoutMs: 60000 });
      mcp = run.mcp;
      R.server_input = run.status.action && run.status.action.server_input;
      R.text_input = run.status.action && run.status.action.text_input;
      if (R.server_input && unicodeAdvertised === null) unicodeAdvertised = R.server_input.unicode === true;
      const buttonsSeen = (from) => (recorder ? recorder.events.slice(from) : []).map((e) => /^GCREC dev (down|up) (\d+) (-?\d+) (-?\d+)$/.exec(e.unparsable || '')).filter(Boolean)
        .map((m) => ({ down: m[1] === 'down', button: Number(m[2]), x: Number(m[3]), y: Number(m[4]) }));
      await body({ mcp, R, recorder, buttonsSeen });
    } catch (e) {
      s = s || e.session;
      check('25', `${label}: the run reached its action`, false, { error: String(e && e.message || e).slice(0, 500), control: s.con.events.slice(-4), stderr: s.con.stderr.slice(-300) });
    } finally {
      if (mcp) await mcp.close();
    }
    const { con, ready, ws } = s;
    // After its action the console closes itself; a run that did not act is closed by the operator.
    if (!R.acted) con.send({ cmd: 'close' });
    const closed = await con.waitFor((e) => e.event === 'closed', 30000).catch(() => null);
    const exit = await con.waitExit(20000);
    ctx.runs.lastClose = Date.now();
    if (ws) ws.close();
    if (recorder && !recorder.exit) recorder.kill('SIGTERM');
    R.closed = closed && closed.reason;
    R.wall_ms = Date.now() - tRun; // open → exit
    R.cleanup = { exit: exit && exit.code, run_dir_gone: ready && ready.run ? !fs.existsSync(path.join(RUNS, ready.run)) : null };
    R.evidence_has_text = ready && ready.run ? L.evidenceEntries(dirs.state, ready.run).some((e) => JSON.stringify(e).includes(TEXT_ASCII) || JSON.stringify(e).includes('Gc é')) : null;
    return R.cleanup.exit === 0 && R.cleanup.run_dir_gone === true && R.evidence_has_text === false;
  };

  const clean = [];
  ctx.runs.firstDisplay = ctx.runs.display;
  // (a) text_input "scancodes": what the US layout has is typed, the rest refused, nothing half-typed.
  clean.push(await actionRun('type_scancodes', 'scancodes', async ({ mcp, R }) => {
    const before = readText(typedFile);
    const refused = await L.refusedAction(mcp, { action: { type: 'type_text', text: `${TEXT_UNICODE}\n` } });
    await sleep(NEGATIVE_MS);
    R.refused = { ...refused, typed_after: newText(before).length };
    check('25', 'type_text of accented letters and U+1F600 with text_input scancodes: refused ACTION_UNSUPPORTED (no key on the US layout), nothing reached the xterm, the action not used up',
      refused.isError && refused.code === 'ACTION_UNSUPPORTED' && refused.acted === false && R.refused.typed_after === 0, R.refused);
    const t0 = Date.now();
    R.acted = true;
    const r = await mcp.call('perform_action', { action: { type: 'type_text', text: `${TEXT_ASCII}\n` } });
    const receipt = L.sc(r);
    const got = await until(() => newText(before).includes('\n') && newText(before), 20000, 100);
    R.action = { outcome: receipt.outcome, guest_confirmed: receipt.guest_confirmed, events_sent: receipt.events_sent, action: receipt.action, typed_exactly: got === `${TEXT_ASCII}\n`, typed_chars: got ? got.length : 0, ms: Date.now() - t0 };
    check('25', 'type_text of ASCII and Enter (text_input scancodes) reaches the xterm inside xrdp\'s session exactly (its shell wrote the line to ~/typed); receipt executed and guest-confirmed',
      receipt.outcome === 'executed' && receipt.guest_confirmed === true && R.action.typed_exactly, R.action);
  }));
  // (b) text_input "unicode": what xrdp advertises decides; then the run's action is a scroll.
  clean.push(await actionRun('unicode_and_scroll', 'unicode', async ({ mcp, R, recorder, buttonsSeen }) => {
    const before = readText(typedFile);
    if (R.server_input && R.server_input.unicode === false) {
      const a = await L.refusedAction(mcp, { action: { type: 'type_text', text: `${TEXT_UNICODE}\n` } });
      const b = await L.refusedAction(mcp, { openai: { type: 'type', text: `${TEXT_ASCII}\n` } });
      await sleep(NEGATIVE_MS);
      R.refused = { canonical: a, openai_dialect: b, typed_after: newText(before).length };
      check('25', 'xrdp does not advertise Unicode keyboard input (its Input Capability Set): type_text (canonical and OpenAI\'s type) refused ACTION_UNSUPPORTED, nothing reached the xterm, the action not used up',
        [a, b].every((x) => x.isError && x.code === 'ACTION_UNSUPPORTED' && x.acted === false) && R.refused.typed_after === 0, { server_input: R.server_input, ...R.refused });
      await scroll({ mcp, R, recorder, buttonsSeen });
      return;
    }
    // xrdp advertises Unicode input: the console sends one Unicode event per UTF-16 unit. What
    // the xterm gets is what xrdp made of them (the scroll then gets a run of its own).
    const keymapOnly = [...TEXT_UNICODE].filter((ch) => ch.charCodeAt(0) < 0x80).join('');
    R.acted = true;
    const r = await mcp.call('perform_action', { action: { type: 'type_text', text: `${TEXT_UNICODE}\n` } });
    const receipt = L.sc(r);
    const got = await until(() => newText(before).includes('\n') && newText(before), 20000, 100);
    R.action = { outcome: receipt.outcome, guest_confirmed: receipt.guest_confirmed, events_sent: receipt.events_sent, typed_exactly: got === `${TEXT_UNICODE}\n`, typed_keymap_chars_only: got === `${keymapOnly}\n`, typed_chars: got ? [...got].length : 0, sent_chars: [...TEXT_UNICODE].length + 1 };
    check('25', 'xrdp advertises Unicode keyboard input, yet of a type_text with accented letters and U+1F600 (text_input unicode) it types only what its keymap has: the xterm got the ASCII and Enter, é, ß and U+1F600 dropped, while the receipt says executed and guest-confirmed (why a grant for xrdp says text_input scancodes)',
      R.server_input.unicode === true && receipt.outcome === 'executed' && receipt.guest_confirmed === true && R.action.typed_keymap_chars_only, { server_input: R.server_input, ...R.action });
  }));
  async function scroll({ mcp, R, recorder, buttonsSeen }) {
    const at = { x: 300, y: 200, dy: 3 }; // inside the xterm
    const from = recorder ? recorder.events.length : 0;
    R.acted = true;
    const r = await mcp.call('perform_action', { action: { type: 'scroll', x: at.x, y: at.y, dx: 0, dy: at.dy } });
    const receipt = L.sc(r);
    await until(() => buttonsSeen(from).length >= 2 * at.dy, 20000, 100);
    await sleep(NEGATIVE_MS); // and nothing more
    const seen = buttonsSeen(from);
    R.scroll = { outcome: receipt.outcome, guest_confirmed: receipt.guest_confirmed, events_sent: receipt.events_sent, action: receipt.action, recorder: recorder ? 'X RECORD' : 'none (GC_INTEROP_RECORDER unset)', buttons: seen.map((b) => `${b.button}${b.down ? '+' : '-'}@${b.x},${b.y}`) };
    check('25', `scroll dy=${at.dy} at (${at.x},${at.y}) through xrdp: the session's X server processed exactly ${at.dy} wheel notches down (button 5 pressed and released ${at.dy} times at the point, nothing else)`,
      receipt.outcome === 'executed' && receipt.guest_confirmed === true && receipt.events_sent === 1 + at.dy && seen.length === 2 * at.dy &&
      seen.every((b, i) => b.button === 5 && b.down === (i % 2 === 0) && b.x === at.x && b.y === at.y), R.scroll);
  }
  if (unicodeAdvertised) clean.push(await actionRun('scroll', 'unicode', scroll));
  report.figures.issue25 = { server_input: sessions.type_scancodes && sessions.type_scancodes.server_input };
  check('25', 'each issue-25 run closed after its action (exit 0), run dir gone; its evidence holds none of the typed text', clean.every(Boolean),
    Object.fromEntries(Object.entries(sessions).map(([k, v]) => [k, { closed: v.closed, ...v.cleanup, evidence_has_text: v.evidence_has_text, display: v.display }])));
}

// =======================================================================================
async function main() {
  for (const [k, f] of Object.entries(BIN)) if (!fs.existsSync(f)) throw new Error(`missing ${k}: ${f}`);
  const signKey = path.join(WORK, 'issuer.pem'), issuerPub = path.join(WORK, 'issuer.pub.pem');
  execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', signKey], { stdio: 'ignore' });
  execFileSync('openssl', ['pkey', '-in', signKey, '-pubout', '-out', issuerPub], { stdio: 'ignore' });
  const help = spawnSync(BIN.console, ['open', '--help'], { env: ENV, encoding: 'utf8' }).stdout || '';
  const ledgerArgs = help.includes('--test-ledger-dir') ? ['--test-ledger-dir', dirs.ledger] : [];
  const common = { signKey, issuerPub, ledgerArgs };
  // GRD's and weston's parts run while xrdp's disconnected session waits out its minute before
  // teardown.
  const grd = async () => {
    if (SERVERS.has('grd')) {
      const t = Date.now();
      await GRD.run({ check, report, WORK, USER: GRD_USER, NS: NETNS, signKey, issuerPub, ledgerArgs, proc, ENV, dirs, RUNS, log, secrets, answersProbe: process.env.GC_INTEROP_ANSWERS, recorder: RECORDER })
        .catch((e) => check('34.3', 'the gnome-remote-desktop part ran to the end', false, { error: String(e && e.stack || e).slice(0, 800) }));
      report.figures.grd_part_ms = Date.now() - t;
    }
    if (SERVERS.has('weston')) {
      const t = Date.now();
      await WESTON.run({ check, report, WORK, signKey, issuerPub, ledgerArgs, proc, ENV, dirs, RUNS })
        .catch((e) => check('35', 'the weston part ran to the end', false, { error: String(e && e.stack || e).slice(0, 800) }));
      report.figures.weston_part_ms = Date.now() - t;
    }
  };
  if (SERVERS.has('xrdp')) await xrdpLane(common, grd);
  else await grd();
}

async function xrdpLane({ signKey, issuerPub, ledgerArgs }, during) {
  const port = await freePort();

  // ---- the throwaway certificate (its DER SHA-256 is the grant's pin) and signing key ----
  const cert = path.join(dirs.xrdp, 'cert.pem'), key = path.join(dirs.xrdp, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=gc-interop'], { stdio: 'ignore' });
  const pin = crypto.createHash('sha256').update(new crypto.X509Certificate(fs.readFileSync(cert)).raw).digest('hex');

  // ---- the throwaway account (tests/interop/run removes it) ------------------------------
  execFileSync('useradd', ['-m', '-s', '/bin/sh', USER], { stdio: 'ignore' });
  execFileSync('chpasswd', [], { input: `${USER}:${PASSWORD}\n`, stdio: ['pipe', 'ignore', 'ignore'] });
  const home = `/home/${USER}`;
  const uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim());
  const typedFile = path.join(home, 'typed');
  // One xterm filling the top left of the desktop, its shell line-buffered into ~/typed: a
  // key the console sends shows up there only if xrdp, Xorg and the pty all delivered it.
  fs.writeFileSync(path.join(home, 'startwm.sh'), `#!/bin/sh\nexec xterm -geometry 100x30+0+0 -e /bin/sh -c 'exec cat > "$HOME/typed"'\n`, { mode: 0o755 });
  fs.chownSync(path.join(home, 'startwm.sh'), uid, uid);

  // ---- xrdp and xrdp-sesman, foreground, own config copies, loopback only ------------------
  const xrdpLog = path.join(dirs.xrdp, 'xrdp.log'), sesmanLog = path.join(dirs.xrdp, 'sesman.log');
  const xrdpIni = path.join(dirs.xrdp, 'xrdp.ini'), sesmanIni = path.join(dirs.xrdp, 'sesman.ini');
  iniCopy('/etc/xrdp/xrdp.ini', xrdpIni, {
    'Globals.port': `tcp://127.0.0.1:${port}`, 'Globals.fork': 'false', 'Globals.security_layer': 'tls',
    'Globals.certificate': cert, 'Globals.key_file': key, 'Globals.allow_channels': 'false', 'Globals.autorun': 'Xorg',
    // DEBUG: xrdp logs a client's Disconnect Provider Ultimatum ("Received disconnection
    // request", libxrdp/xrdp_mcs.c) only at that level.
    'Logging.LogFile': xrdpLog, 'Logging.LogLevel': 'DEBUG', 'Logging.EnableSyslog': 'false',
  });
  iniCopy('/etc/xrdp/sesman.ini', sesmanIni, {
    'Globals.ListenAddress': '127.0.0.1', 'Globals.ListenPort': String(SESMAN_PORT),
    'Sessions.KillDisconnected': 'true', 'Sessions.DisconnectedTimeLimit': '0',
    'Logging.LogFile': sesmanLog, 'Logging.EnableSyslog': 'false', 'ChansrvLogging.EnableSyslog': 'false',
  });
  fs.mkdirSync('/run/xrdp', { recursive: true, mode: 0o755 });
  const sesman = proc('sesman', 'xrdp-sesman', ['--nodaemon', '--config', sesmanIni]);
  // Up = the daemon holds a listening socket (a probe connection would only add noise to its log).
  const listening = (p, port) => { try { return P.inetSocketsOf(p.pid).inet.some((s) => s.state === 'LISTEN' && s.localPort === port); } catch { return false; } };
  const sesmanUp = await until(() => listening(sesman, SESMAN_PORT) || sesman.exit, 30000);
  const xrdp = proc('xrdp', 'xrdp', ['--nodaemon', '--config', xrdpIni]);
  const xrdpUp = await until(() => listening(xrdp, port) || xrdp.exit, 30000);
  const listeners = [sesman.pid, xrdp.pid].flatMap((pid) => { try { return P.inetSocketsOf(pid).inet.filter((s) => s.state === 'LISTEN'); } catch { return []; } });
  check('20.4', 'xrdp and xrdp-sesman run with their own config copies and listen on loopback only', sesmanUp && xrdpUp && listeners.length > 0 && listeners.every((s) => P.isLoopback(s.local)),
    { xrdp_port: port, sesman_port: SESMAN_PORT, listeners: listeners.map((s) => `${s.local}:${s.localPort}`) });
  if (!sesmanUp || !xrdpUp || xrdp.exit || sesman.exit) throw new Error(`xrdp did not come up: xrdp ${JSON.stringify(xrdp.exit)} ${readText(xrdpLog).slice(0, 600)} sesman ${JSON.stringify(sesman.exit)} ${readText(sesmanLog).slice(0, 600)} ${xrdp.stderr.slice(-300)} ${sesman.stderr.slice(-300)}`);

  // ---- the libvirt test driver's node: one running domain whose forward is xrdp's port -----
  const vm = L.testDomain(path.join(WORK, 'node.xml'), 'gc-interop', port);
  const issueGrant = L.grantIssuer({ vm, port, pin, desktop: DESKTOP, title: 'interop: xrdp', signKey, env: ENV, panelUser: USER });
  const grant = issueGrant(path.join(WORK, 'grant.json'));
  const global = ['--state-dir', dirs.state, '--runtime-dir', dirs.runtime, '--issuer-key', issuerPub, ...ledgerArgs];

  // ---- check with the pin ----------------------------------------------------------------
  const c = spawnSync(BIN.console, ['check', '--grant', grant, '--json', ...global], { env: ENV, encoding: 'utf8', timeout: 60000 });
  let cj = null; try { cj = JSON.parse(c.stdout.trim().split('\n').pop()); } catch { /* reported */ }
  check('20.4', 'check: the grant binds, xrdp\'s certificate matches the pin', c.status === 0 && cj && cj.ok === true, { status: c.status, json: cj, stderr: (c.stderr || '').slice(-300) });

  // ---- open, auto-login with the Client Info credentials; a panel client ---------------------
  // An open that fails after `ready` still gets its check (from what came) before the lane ends.
  let notOpened = null;
  const session = await L.openSession({ proc, grant, globalArgs: global, credentials: { username: USER, password: PASSWORD } })
    .catch((e) => { if (!e.session || !e.session.ready || e.session.ready.event !== 'ready') throw e; notOpened = e; return e.session; });
  const { con, ready, setup, setupMs } = session;
  const displayLine = await until(() => /login successful for user \S+ on display \d+/.test(readText(xrdpLog)), 60000, 100);
  const display = (/login successful for user \S+ on display (\d+)/.exec(readText(xrdpLog)) || [])[1];
  report.figures.open_to_setup_ms = setupMs;
  check('20.4', 'open: SETUP with the Client Info credentials; xrdp logged the account in (no login screen)', setup && setup.event === 'phase' && setup.phase === 'SETUP' && displayLine && display !== undefined,
    { phase: setup && (setup.phase || setup.event), open_to_setup_ms: setupMs, display, xrdp: (readText(xrdpLog).match(/login successful[^\n]*/) || [''])[0].replace(USER, '<user>') });
  if (notOpened) throw notOpened;
  const binding = JSON.parse(fs.readFileSync(path.join(RUNS, ready.run, 'binding.json'), 'utf8'));

  // ---- the panel client: welcome (with the negotiated security) and frames ------------------
  const { ws, frames, welcome } = session;
  check('20.3', 'welcome: the identity says the server has no NLA (security "tls": credentials checked by the guest)', welcome && welcome.identity && welcome.identity.security === 'tls',
    { identity: welcome && welcome.identity, width: welcome && welcome.width, height: welcome && welcome.height });
  // xrdp gives a new session the size the client asks for: the grant's, exactly.
  check('20.2', 'the desktop is the grant\'s: xrdp gave the session the requested size; the welcome names it and the layout sent', welcome && welcome.width === DESKTOP.width && welcome.height === DESKTOP.height && welcome.identity && welcome.identity.keyboard_layout === DESKTOP.layout,
    { requested: `${DESKTOP.width}x${DESKTOP.height}`, welcome: welcome && `${welcome.width}x${welcome.height}`, keyboard_layout: welcome && welcome.identity && welcome.identity.keyboard_layout });
  const framesFrom = frames.frames;
  const frameWindowStart = Date.now();
  await until(() => frames.frames - framesFrom >= 10, 20000);
  report.figures.frames_first_window = { frames: frames.frames - framesFrom, ms: Date.now() - frameWindowStart };

  // The session's X display is up once the xterm is mapped; xdotool then drives and reads it.
  const X = { ...process.env, DISPLAY: `:${display}`, XAUTHORITY: path.join(home, '.Xauthority') };
  const xterm = await until(() => spawnSync('xdotool', ['search', '--onlyvisible', '--class', 'xterm'], { env: X, encoding: 'utf8' }).stdout.trim() !== '', 60000, 200);
  check('20.4', 'frames reach the panel client; the session\'s xterm is up on xrdp\'s display', frames.frames > 0 && !frames.error && xterm,
    { frames: frames.frames, png_rects: frames.pngRects, jpeg_rects: frames.jpegRects, size: `${frames.width}x${frames.height}`, display: `:${display}`, error: frames.error });

  // The picture the panel shows is the session's framebuffer: the panel's lossless canvas
  // against xwd of the X display, once the screen has settled (both taken after the xterm).
  let picture = null;
  const compare = () => {
    const xwd = spawnSync('xwd', ['-root', '-silent'], { env: X, maxBuffer: 64 << 20 });
    if (xwd.status !== 0) return { error: `xwd exit ${xwd.status}` };
    const shot = decodeXwd(xwd.stdout);
    let covered = 0, equal = 0;
    for (let i = 0; i < shot.width * shot.height && frames.canvas && shot.width === frames.width; i++) {
      if (!frames.covered[i]) continue;
      covered++;
      if (shot.rgb[i * 3] === frames.canvas.rgb[i * 3] && shot.rgb[i * 3 + 1] === frames.canvas.rgb[i * 3 + 1] && shot.rgb[i * 3 + 2] === frames.canvas.rgb[i * 3 + 2]) equal++;
    }
    return { screen: `${shot.width}x${shot.height}`, covered, equal };
  };
  await until(() => { picture = compare(); return picture.covered > 0 && picture.equal === picture.covered; }, 20000, 250);
  check('20.4', 'the panel\'s picture equals the X session\'s framebuffer (xwd), pixel for pixel where lossless', picture && picture.covered > 0 && picture.equal === picture.covered, picture || {});

  // ---- a typed key seen inside the session --------------------------------------------------
  let seq = 0;
  ws.send({ type: 'pointer', seq: ++seq, x: 200, y: 150, buttons: 0, wheel: 0 }); // xterm has focus under the pointer (no WM)
  const t1 = Date.now();
  for (const ch of [...TYPED, 'enter']) {
    const code = SC[ch];
    ws.send({ type: 'key', seq: ++seq, scancode: code, down: true });
    ws.send({ type: 'key', seq: ++seq, scancode: code, down: false });
  }
  const acked = await ws.waitText((t) => t.type === 'input_ack' && t.upto >= seq, 15000).catch(() => null);
  const typed = await until(() => readText(typedFile).includes(`${TYPED}\n`), 20000);
  report.figures.typed_to_seen_ms = Date.now() - t1;
  check('20.4', 'a typed word and Enter reach the xterm inside the session (its shell wrote ~/typed)', acked && typed,
    { keys: seq - 1, acked_upto: acked && acked.upto, seen: typed, ms: report.figures.typed_to_seen_ms });

  // ---- lock, then input is refused ----------------------------------------------------------
  const tLock = Date.now();
  ws.send({ type: 'lock' });
  const capturing = await con.waitFor((e) => (e.event === 'phase' && e.phase === 'CAPTURING') || e.event === 'closed', 30000).catch(() => null);
  report.figures.lock_to_capturing_ms = Date.now() - tLock;
  const afterLock = ++seq;
  ws.send({ type: 'key', seq: afterLock, scancode: SC.x, down: true });
  const refused = await ws.waitText((t) => t.type === 'input_refused' && t.seq === afterLock, 15000).catch(() => null);
  check('20.4', 'lock: CAPTURING, then a key is refused PHASE_LOCKED', capturing && capturing.phase === 'CAPTURING' && refused && refused.code === 'PHASE_LOCKED',
    { phase: capturing && (capturing.phase || capturing.event), refused: refused && refused.code, lock_to_capturing_ms: report.figures.lock_to_capturing_ms });

  // ---- close: a proper disconnect, nothing left ------------------------------------------
  const logBeforeClose = readText(xrdpLog).length;
  const sesmanBeforeClose = readText(sesmanLog).length;
  const tClose = Date.now();
  con.send({ cmd: 'close' });
  const closed = await con.waitFor((e) => e.event === 'closed', 30000).catch(() => null);
  const exit = await con.waitExit(20000);
  const runDirGone = !fs.existsSync(path.join(RUNS, ready.run));
  const criticals = con.stderr.split('\n').filter((l) => / critical /.test(l));
  check('20.4', 'close: OPERATOR_CLOSE, exit 0, run dir removed, no console process', closed && closed.reason === 'OPERATOR_CLOSE' && exit && exit.code === 0 && runDirGone && !P.alive(binding.pid),
    { reason: closed && closed.reason, exit, run_dir_gone: runDirGone, alive: P.alive(binding.pid) });
  check('20.3', 'a good open and a normal close print no critical line on the console\'s stderr', criticals.length === 0, { critical: criticals.slice(0, 5) });
  // The evidence records the negotiated security with the connection.
  const evidenceDir = path.join(dirs.state, 'evidence');
  const evidence = (fs.existsSync(evidenceDir) ? fs.readdirSync(evidenceDir) : []).filter((f) => f.startsWith(ready.run))
    .flatMap((f) => readText(path.join(evidenceDir, f)).split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return {}; } }));
  const connectedEntry = evidence.find((e) => e.event === 'connected');
  check('20.3', 'evidence: the connected entry records security "tls"', connectedEntry && connectedEntry.security === 'tls',
    { entries: evidence.length, connected: connectedEntry && { width: connectedEntry.width, height: connectedEntry.height, security: connectedEntry.security } });

  // xrdp logs the client's Disconnect Provider Ultimatum when it reads it (DEBUG level).
  const ultimatum = !!(await until(() => /Received disconnection request/.test(readText(xrdpLog).slice(logBeforeClose)), 20000, 100));

  // ---- issue 25: type_text and scroll through the real console, one run each -------------------
  // The X session outlives the disconnect for at least 60 s (below), so the next logins of the
  // account reconnect to it: the same xterm, its shell still writing ~/typed.
  // ---- a frozen xrdp (SIGSTOP) answers nothing: the strict lock fails closed --------------
  {
    // No panel client: the lock comes on the control channel, right at SETUP.
    let inSetup = true;
    const { con: con2, ready: r2 } = await L.openSession({ proc, grant: issueGrant(path.join(WORK, 'grant-frozen.json')), globalArgs: global, credentials: { username: USER, password: PASSWORD }, panel: false })
      .catch((e) => { if (!e.session) throw e; inSetup = false; return e.session; });
    let verdict = null, lockMs = null;
    if (r2 && r2.event === 'ready') {
      if (inSetup) {
        process.kill(xrdp.pid, 'SIGSTOP');
        const tFrozen = Date.now();
        try {
          con2.send({ cmd: 'lock' });
          verdict = await con2.waitFor((e) => e.event === 'closed' || (e.event === 'phase' && e.phase === 'CAPTURING'), 30000).catch(() => null);
          lockMs = Date.now() - tFrozen;
        } finally {
          process.kill(xrdp.pid, 'SIGCONT');
        }
      }
      if (!verdict || verdict.event !== 'closed') con2.send({ cmd: 'close' });
    }
    await con2.waitExit(30000);
    const entries = r2 && r2.run ? L.evidenceEntries(dirs.state, r2.run) : [];
    const sync = entries.find((e) => e.event === 'guest_sync') || null;
    const channels = (entries.find((e) => e.event === 'connected') || {}).channels || {};
    report.frozen_xrdp = { verdict: verdict && (verdict.reason || verdict.phase), lock_ms: lockMs, guest_sync: sync && { confirmed_by: sync.confirmed_by, rungs: sync.rungs }, pipeline_claimed: channels.gfx_advertised_by_server };
    check('35', `a frozen xrdp (SIGSTOP after SETUP) answers no rung: the strict lock fails closed ${verdict && verdict.reason} in ${lockMs} ms, never CAPTURING`,
      verdict && verdict.event === 'closed' && verdict.reason === 'GUEST_UNCONFIRMED' && sync && sync.confirmed_by === 'settle_only', report.frozen_xrdp);
  }

  let lastClose = tClose;
  const actionRuns = { X, display, lastClose: tClose, logFrom: readText(xrdpLog).length };
  const t25 = Date.now();
  await issue25Runs({ issueGrant, signKey, global, typedFile, home, xrdpLog, runs: actionRuns });
  report.figures.issue25_runs_ms = Date.now() - t25;
  await during();
  lastClose = actionRuns.lastClose;

  // The session ends after the disconnect (KillDisconnected; xorgxrdp 0.9.19 waits at least
  // 60 s, module/rdpClientCon.c): every process of the account exits.
  const tornDown = await until(() => userPids(uid).length === 0, 120000, 250);
  const xrdpAfter = readText(xrdpLog).slice(logBeforeClose, actionRuns.logFrom);
  // The issue-25 runs end with the console's graceful finish after the action (Ultimatum, then
  // a half-close): reported, not part of the first close's check (docs/operating.md "xrdp").
  const eofAfterActions = readText(xrdpLog).slice(actionRuns.logFrom).split('\n').filter((l) => /unexpected eof while reading/i.test(l)).length;
  report.xrdp_log.unexpected_eof_after_action_closes = eofAfterActions;
  log(`xrdp after the issue-25 runs' closes: ${eofAfterActions} "unexpected eof while reading" line(s)`);
  const eof = xrdpAfter.split('\n').filter((l) => /unexpected eof while reading/i.test(l));
  report.xrdp_log = {
    ...report.xrdp_log,
    keymap_missing: (readText(xrdpLog).match(/[^\n]*Cannot find keymap file[^\n]*/g) || []).map((l) => l.replace(/^\[[^\]]*\]\s*/, '')),
    unexpected_eof_at_close: eof.map((l) => l.replace(/^\[[^\]]*\]\s*/, '')),
    after_close: xrdpAfter.split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]*\]\s*/, '').replace(USER, '<user>')).slice(0, 20),
    sesman_after_close: readText(sesmanLog).slice(sesmanBeforeClose).split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]*\]\s*/, '').replace(USER, '<user>')).slice(0, 20),
  };
  report.figures.session_teardown_ms = Date.now() - lastClose;
  check('20.3', 'close sends a proper disconnect: xrdp received the Disconnect Provider Ultimatum and logs no "unexpected eof while reading"', ultimatum && eof.length === 0,
    { ultimatum_received: ultimatum, unexpected_eof: eof.length, xrdp_after_close: report.xrdp_log.after_close.filter((l) => /ERROR|WARN|disconnect/i.test(l)).slice(0, 8) });
  check('20.4', 'xrdp tore the session down (KillDisconnected: no process of the account left)', tornDown, { left: userPids(uid).length, close_to_teardown_ms: report.figures.session_teardown_ms });
  log(`xrdp keymap: ${report.xrdp_log.keymap_missing.join(' | ') || 'no missing-keymap line'}`);
  const keymapLoaded = (readText(xrdpLog).match(/[^\n]*km-[0-9a-f]{8}\.ini[^\n]*/gi) || []).map((l) => l.replace(/^\[[^\]]*\]\s*/, ''));
  check('20.2', `xrdp found its keymap for the layout the console sent (${DESKTOP.layout}): no "Cannot find keymap file" line`, report.xrdp_log.keymap_missing.length === 0,
    { keymap_missing: report.xrdp_log.keymap_missing, keymap_lines: keymapLoaded.slice(0, 4) });

  // ---- the daemons stop; their ports are free -------------------------------------------
  for (const p of [xrdp, sesman]) p.kill('SIGTERM');
  const stopped = [await xrdp.waitExit(15000), await sesman.waitExit(15000)];
  for (const p of [xrdp, sesman]) if (!p.exit) p.kill('SIGKILL');
  const portsFree = !(await portOpen(port)) && !(await portOpen(SESMAN_PORT)) && !(await portOpen(ready.panel.port));
  check('20.4', 'nothing left: xrdp and sesman stopped, xrdp\'s, sesman\'s and the panel\'s ports free', stopped.every(Boolean) && portsFree, { stopped: stopped.map((s) => s && (s.code ?? s.signal)), ports_free: portsFree });
}

// A step awaiting something nothing will ever settle empties the event loop: node would exit 0
// without the rest of the checks.
let ended = false;
process.on('beforeExit', () => {
  if (ended) return;
  ended = true;
  check('20.4', 'the lane ran to the end', false, { error: 'the event loop emptied while a step was still waiting' });
  process.stdout.write(`interop: ${results.filter((r) => r.ok).length} passed, ${results.filter((r) => !r.ok).length} failed (stopped early)\n`);
  process.exitCode = 1;
});
main()
  .catch((e) => check('20.4', 'the lane ran to the end', false, { error: String(e && e.stack || e).slice(0, 800) }))
  .finally(() => {
    ended = true;
    for (const p of spawned) if (!p.exit) p.kill('SIGKILL');
    const passed = results.filter((r) => r.ok).length, failed = results.length - passed;
    report.ended_at = new Date().toISOString();
    report.total_ms = Date.now() - started;
    try { fs.mkdirSync(ARTIFACTS, { recursive: true }); fs.writeFileSync(path.join(ARTIFACTS, 'interop-report.json'), JSON.stringify(report, null, 2)); } catch { /* best effort */ }
    try {
      require('../lib/results').writeCheckResults({ lane: 'interop', runner: 'tests/interop/run', results, seconds: report.total_ms / 1000, secrets: [PASSWORD, TYPED, TEXT_ASCII, TEXT_UNICODE, ...secrets], artifacts: ARTIFACTS });
    } catch (e) { process.stdout.write(`interop: no results file: ${e.message}\n`); }
    process.stdout.write(`interop: ${passed} passed, ${failed} failed (${Math.round(report.total_ms / 1000)} s)\n`);
    process.exitCode = failed ? 1 : 0;
    setTimeout(() => process.exit(process.exitCode), 200).unref();
  });
