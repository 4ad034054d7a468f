#!/usr/bin/env node
'use strict';
// The interop lane's checks (tests/interop/run starts this as root with WORK and the throwaway
// account's name): xrdp + xorgxrdp on 127.0.0.1 with their own config copies, a throwaway TLS
// certificate (the grant's pin) and account, and the console driven through them like the VS
// Code extension does — check, open, auto-login with the Client Info credentials, frames at a
// panel client, a typed key seen inside the X session, lock, input refused after it, close,
// nothing left. Prints PASS/FAIL lines and "interop: N passed, M failed"; writes
// GC_ARTIFACTS_DIR/interop-report.json. Every wait is on an event, a line or a state, bounded.
const fs = require('fs');
const net = require('net');
const path = require('path');
const crypto = require('crypto');
const { execFileSync, spawnSync } = require('child_process');
const { WsClient } = require('../battery/lib/ws');
const { decodePng } = require('../battery/lib/png');
const { parseFrame, Canvas } = require('../battery/lib/gcf1');
const P = require('../battery/lib/proc');

const [WORK, USER] = process.argv.slice(2);
if (!WORK || !USER) { console.error('usage: interop.js WORK USER (started by tests/interop/run)'); process.exit(2); }
const started = Date.now();
const REPO = path.resolve(__dirname, '../..');
const BUILD = path.resolve(REPO, process.env.GC_BUILD_DIR || 'build/asan');
const BIN = { console: path.join(BUILD, 'bin/guest-console'), issue: path.join(BUILD, 'bin/gc-issue-grant') };
const ARTIFACTS = process.env.GC_ARTIFACTS_DIR || '/tmp/gc-artifacts';
// The benchmark's desktop, named in the grant (rdp.desktop, rdp.keyboard_layout): the defaults.
const DESKTOP = { width: 1920, height: 1080, layout: '0x00000409' };
const SESMAN_PORT = 3350; // fixed: xrdp reads it from /etc/xrdp/sesman.ini whatever --config says

const results = [];
const report = { lane: 'interop (xrdp + xorgxrdp)', started_at: new Date(started).toISOString(), items: results, figures: {}, xrdp_log: {} };
function check(item, name, ok, details = {}) {
  results.push({ item, name, ok: !!ok, details });
  process.stdout.write(`${ok ? 'PASS' : 'FAIL'} [${item}] ${name}  ${JSON.stringify(details).slice(0, 600)}\n`);
  return !!ok;
}
const log = (s) => process.stdout.write(`  .. ${s}\n`);
// Letters only: the console's redacting logger rewrites long hex runs.
const rnd = (n) => Array.from(crypto.randomBytes(n), (b) => 'abcdefghijkmnpqrstuvwxyz'[b % 24]).join('');
const PASSWORD = `Ip-${rnd(14)}`;
const TYPED = `gcinterop${rnd(6)}`;
const SC = { a: 0x1e, b: 0x30, c: 0x2e, d: 0x20, e: 0x12, f: 0x21, g: 0x22, h: 0x23, i: 0x17, j: 0x24, k: 0x25, m: 0x32, n: 0x31, o: 0x18, p: 0x19, q: 0x10, r: 0x13, s: 0x1f, t: 0x14, u: 0x16, v: 0x2f, w: 0x11, x: 0x2d, y: 0x15, z: 0x2c, enter: 0x1c };

const dirs = { state: path.join(WORK, 'state'), runtime: path.join(WORK, 'runtime'), home: path.join(WORK, 'home'), ledger: path.join(WORK, 'ledger'), xrdp: path.join(WORK, 'xrdp') };
for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
const RUNS = path.join(dirs.runtime, 'guest-console/runs');
const ENV = {
  PATH: process.env.PATH || '/usr/bin:/bin',
  HOME: dirs.home,
  LANG: 'C.UTF-8',
  ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1',
  LSAN_OPTIONS: process.env.LSAN_OPTIONS || `suppressions=${path.join(REPO, 'tests/sanitizer/lsan.supp')}`,
  UBSAN_OPTIONS: process.env.UBSAN_OPTIONS || 'print_stacktrace=1',
};
const spawned = [];
function proc(kind, file, args, env = ENV) {
  const p = new P.LineProc(file, args, { env });
  spawned.push(p);
  fs.appendFileSync(path.join(WORK, 'pids'), `${kind} ${p.pid}\n`);
  return p;
}

// Resolves true once `pred()` holds, polling a state (a file, a port, a process table) every
// `everyMs`; false after `timeoutMs`. Never used to wait for time itself.
async function until(pred, timeoutMs, everyMs = 50) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await pred()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
const readText = (f) => { try { return fs.readFileSync(f, 'utf8'); } catch { return ''; } };
function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}
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

// XWD (X Window Dump, ZPixmap, 32 bpp little-endian: what xwd writes for xorgxrdp's depth-24
// screen) -> {width, height, rgb}.
function decodeXwd(buf) {
  const u = (i) => buf.readUInt32BE(i * 4);
  const headerSize = u(0), format = u(2), width = u(4), height = u(5), byteOrder = u(7), bpp = u(11), bpl = u(12), ncolors = u(19);
  if (format !== 2 || bpp !== 32) throw new Error(`xwd: format ${format}, ${bpp} bpp not handled`);
  const off = headerSize + ncolors * 12;
  const rgb = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = off + y * bpl + x * 4;
      const v = byteOrder === 0 ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      const o = (y * width + x) * 3;
      rgb[o] = (v >> 16) & 255; rgb[o + 1] = (v >> 8) & 255; rgb[o + 2] = v & 255;
    }
  }
  return { width, height, rgb };
}

// The panel client: composites the PNG rectangles of every frame onto a canvas and acks.
function framePanel(ws) {
  const canvas = new Canvas(decodePng);
  const state = { frames: 0, pngRects: 0, jpegRects: 0, canvas: null, covered: null, width: 0, height: 0, firstAt: 0 };
  ws.on('binary', (msg) => {
    try {
      const f = parseFrame(msg);
      if (!state.frames) state.firstAt = Date.now();
      state.frames++;
      canvas.apply(f);
      Object.assign(state, { canvas: canvas.image(), covered: canvas.covered, width: canvas.width, height: canvas.height, pngRects: canvas.pngRects, jpegRects: canvas.jpegRects });
      ws.send({ type: 'frame_ack', frame: f.frame });
    } catch (e) { state.error = String(e); }
  });
  return state;
}

// =======================================================================================
async function main() {
  for (const [k, f] of Object.entries(BIN)) if (!fs.existsSync(f)) throw new Error(`missing ${k}: ${f}`);
  const port = await freePort();

  // ---- the throwaway certificate (its DER SHA-256 is the grant's pin) and signing key ----
  const cert = path.join(dirs.xrdp, 'cert.pem'), key = path.join(dirs.xrdp, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=gc-interop'], { stdio: 'ignore' });
  const pin = crypto.createHash('sha256').update(new crypto.X509Certificate(fs.readFileSync(cert)).raw).digest('hex');
  const signKey = path.join(WORK, 'issuer.pem'), issuerPub = path.join(WORK, 'issuer.pub.pem');
  execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', signKey], { stdio: 'ignore' });
  execFileSync('openssl', ['pkey', '-in', signKey, '-pubout', '-out', issuerPub], { stdio: 'ignore' });

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
  const vm = { name: 'gc-interop', uuid: crypto.randomUUID() };
  const node = path.join(WORK, 'node.xml');
  fs.writeFileSync(node, `<node>
  <domain type='test'><name>${vm.name}</name><uuid>${vm.uuid}</uuid><memory unit='MiB'>512</memory><vcpu>1</vcpu>
    <os><type>hvm</type></os>
    <devices><interface type='user'><portForward proto='tcp' address='127.0.0.1'><range start='${port}' to='3389'/></portForward></interface></devices>
  </domain>
</node>\n`, { mode: 0o600 });
  const grant = path.join(WORK, 'grant.json');
  execFileSync(BIN.issue, ['--out', grant, '--vm-uuid', vm.uuid, '--vm-name', vm.name, '--port', String(port), '--libvirt-uri', `test://${node}`,
    '--cert-sha256', pin, '--desktop', `${DESKTOP.width}x${DESKTOP.height}`, '--keyboard-layout', DESKTOP.layout,
    '--title', 'interop: xrdp', '--panel', `username=${USER}`, '--sign-key', signKey], { env: ENV, stdio: ['ignore', 'ignore', 'pipe'] });
  const global = ['--state-dir', dirs.state, '--runtime-dir', dirs.runtime, '--issuer-key', issuerPub];
  const help = spawnSync(BIN.console, ['open', '--help'], { env: ENV, encoding: 'utf8' }).stdout || '';
  if (help.includes('--test-ledger-dir')) global.push('--test-ledger-dir', dirs.ledger);

  // ---- check with the pin ----------------------------------------------------------------
  const c = spawnSync(BIN.console, ['check', '--grant', grant, '--json', ...global], { env: ENV, encoding: 'utf8', timeout: 60000 });
  let cj = null; try { cj = JSON.parse(c.stdout.trim().split('\n').pop()); } catch { /* reported */ }
  check('20.4', 'check: the grant binds, xrdp\'s certificate matches the pin', c.status === 0 && cj && cj.ok === true, { status: c.status, json: cj, stderr: (c.stderr || '').slice(-300) });

  // ---- open, auto-login with the Client Info credentials -----------------------------------
  const t0 = Date.now();
  const con = proc('console', BIN.console, ['open', '--grant', grant, ...global]);
  const ready = await con.waitFor((e) => e.event === 'ready' || e.event === 'error', 60000);
  if (ready.event !== 'ready') throw new Error(`open refused: ${JSON.stringify(ready)} ${con.stderr.slice(-500)}`);
  const binding = JSON.parse(fs.readFileSync(path.join(RUNS, ready.run, 'binding.json'), 'utf8'));
  await con.waitFor((e) => e.event === 'credentials_required', 30000);
  con.send({ cmd: 'credentials', username: USER, password: PASSWORD, domain: '' });
  const setup = await con.waitFor((e) => (e.event === 'phase' && e.reason === 'guest connected') || e.event === 'error' || e.event === 'closed', 60000).catch(() => null);
  const setupMs = Date.now() - t0;
  const displayLine = await until(() => /login successful for user \S+ on display \d+/.test(readText(xrdpLog)), 60000, 100);
  const display = (/login successful for user \S+ on display (\d+)/.exec(readText(xrdpLog)) || [])[1];
  report.figures.open_to_setup_ms = setupMs;
  check('20.4', 'open: SETUP with the Client Info credentials; xrdp logged the account in (no login screen)', setup && setup.event === 'phase' && setup.phase === 'SETUP' && displayLine && display !== undefined,
    { phase: setup && (setup.phase || setup.event), open_to_setup_ms: setupMs, display, xrdp: (readText(xrdpLog).match(/login successful[^\n]*/) || [''])[0].replace(USER, '<user>') });

  // ---- a panel client: welcome (with the negotiated security) and frames --------------------
  const { ws } = await WsClient.connect(ready.panel.port);
  const frames = framePanel(ws);
  ws.send({ type: 'hello', run: ready.run, task: ready.task, capability: ready.panel.capability, client: { kind: 'interop', version: '1' } });
  const welcome = await ws.waitText((t) => t.type === 'welcome', 15000).catch(() => null);
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

  // The session ends after the disconnect (KillDisconnected; xorgxrdp 0.9.19 waits at least
  // 60 s, module/rdpClientCon.c): every process of the account exits.
  const tornDown = await until(() => userPids(uid).length === 0, 120000, 250);
  const xrdpAfter = readText(xrdpLog).slice(logBeforeClose);
  const eof = xrdpAfter.split('\n').filter((l) => /unexpected eof while reading/i.test(l));
  report.xrdp_log = {
    keymap_missing: (readText(xrdpLog).match(/[^\n]*Cannot find keymap file[^\n]*/g) || []).map((l) => l.replace(/^\[[^\]]*\]\s*/, '')),
    unexpected_eof_at_close: eof.map((l) => l.replace(/^\[[^\]]*\]\s*/, '')),
    after_close: xrdpAfter.split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]*\]\s*/, '').replace(USER, '<user>')).slice(0, 20),
    sesman_after_close: readText(sesmanLog).slice(sesmanBeforeClose).split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]*\]\s*/, '').replace(USER, '<user>')).slice(0, 20),
  };
  const ultimatum = /Received disconnection request/.test(xrdpAfter);
  report.figures.session_teardown_ms = Date.now() - tClose;
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

main()
  .catch((e) => check('20.4', 'the lane ran to the end', false, { error: String(e && e.stack || e).slice(0, 800) }))
  .finally(() => {
    for (const p of spawned) if (!p.exit) p.kill('SIGKILL');
    const passed = results.filter((r) => r.ok).length, failed = results.length - passed;
    report.ended_at = new Date().toISOString();
    report.total_ms = Date.now() - started;
    try { fs.mkdirSync(ARTIFACTS, { recursive: true }); fs.writeFileSync(path.join(ARTIFACTS, 'interop-report.json'), JSON.stringify(report, null, 2)); } catch { /* best effort */ }
    process.stdout.write(`interop: ${passed} passed, ${failed} failed (${Math.round(report.total_ms / 1000)} s)\n`);
    process.exitCode = failed ? 1 : 0;
    setTimeout(() => process.exit(process.exitCode), 200).unref();
  });
