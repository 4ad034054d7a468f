'use strict';
// The interop lane's gnome-remote-desktop part (docs/operating.md "gnome-remote-desktop"):
// GRD 43 (Debian 12) in headless mode under a headless mutter 43 with one virtual monitor,
// PipeWire + WirePlumber for its screen cast, on a session bus of their own (dbus-run-session),
// as a throwaway account, inside a network namespace that has nothing but loopback: GRD 43
// listens on every address (GSocketListener, no address setting), so the namespace is what keeps
// it on loopback. The console reaches it through a forward on 127.0.0.1. The whole flow on it:
// check, a strict-default lock, then open → SETUP, frames, the picture, a typed word, lock and
// capture through MCP, one action, close; what the reader counted of its RDPGFX stream; what GRD
// answers to the lock's candidate requests (answers.c); nothing left.
const fs = require('fs');
const net = require('net');
const path = require('path');
const crypto = require('crypto');
const { execFileSync, spawn, spawnSync } = require('child_process');
const { decodePng } = require('../lib/png');
const P = require('../lib/proc');
const L = require('../lib/lane');

const { BIN, rnd, until, portOpen } = L;
const DESKTOP = { width: 1920, height: 1080, layout: '0x00000409' }; // the virtual monitor GRD mirrors
const GRD_PORT = 3389; // inside the namespace: nothing else listens there
const SC = { a: 0x1e, b: 0x30, c: 0x2e, d: 0x20, e: 0x12, f: 0x21, g: 0x22, h: 0x23, i: 0x17, j: 0x24, k: 0x25, m: 0x32, n: 0x31, o: 0x18, p: 0x19, q: 0x10, r: 0x13, s: 0x1f, t: 0x14, u: 0x16, v: 0x2f, w: 0x11, x: 0x2d, y: 0x15, z: 0x2c, enter: 0x1c };
const TEXT_ASCII = 'Gc-Grd 43!';
// RemoteFX tiles are lossy (GRD quantises every tile): the picture is compared within a bound
// that a wrong or shifted picture exceeds by far (measured: docs/operating.md).
const PICTURE = { meanAbs: 6, within32: 0.99 };

const readText = (f) => { try { return fs.readFileSync(f, 'utf8'); } catch { return ''; } };

// XWD (ZPixmap, 32 bpp) -> {width, height, rgb}.
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

// `img` (an RGB picture of the desktop, `covered` optional) against `win` (the window's own
// pixels, xwd) placed at (x, y): mean absolute channel error and the share of pixels whose every
// channel is within 32.
function comparePicture(img, covered, win, x, y) {
  let n = 0, sum = 0, within = 0;
  for (let wy = 0; wy < win.height; wy++) {
    const dy = y + wy;
    if (dy < 0 || dy >= img.height) continue;
    for (let wx = 0; wx < win.width; wx++) {
      const dx = x + wx;
      if (dx < 0 || dx >= img.width) continue;
      const i = dy * img.width + dx;
      if (covered && !covered[i]) continue;
      const o = (wy * win.width + wx) * 3;
      let worst = 0;
      for (let c = 0; c < 3; c++) {
        const d = Math.abs(img.rgb[i * 3 + c] - win.rgb[o + c]);
        sum += d;
        if (d > worst) worst = d;
      }
      n++;
      if (worst <= 32) within++;
    }
  }
  return { pixels: n, window: win.width * win.height, mean_abs: n ? Math.round((sum / (3 * n)) * 100) / 100 : null, within32: n ? Math.round((within / n) * 10000) / 10000 : null };
}
const pictureOk = (c) => c && c.pixels > 0 && c.pixels === c.window && c.mean_abs <= PICTURE.meanAbs && c.within32 >= PICTURE.within32;

// A forward on 127.0.0.1 (this namespace) into 127.0.0.1:port of `ns`: each connection is
// carried by a relay process started inside the namespace (ip netns exec), its stdio the pipe.
const RELAY = `const s=require('net').connect(Number(process.argv[1]),'127.0.0.1');
process.stdin.pipe(s);s.pipe(process.stdout);
s.on('error',()=>process.exit(1));s.on('close',()=>process.exit(0));`;
function loopbackForward(ns, port) {
  const st = { connections: 0, relays: new Set(), sockets: new Set() };
  const server = net.createServer((sock) => {
    st.connections++;
    st.sockets.add(sock);
    sock.on('close', () => st.sockets.delete(sock));
    const relay = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', RELAY, String(port)], { stdio: ['pipe', 'pipe', 'ignore'] });
    st.relays.add(relay);
    sock.pipe(relay.stdin);
    relay.stdout.pipe(sock);
    relay.stdin.on('error', () => {});
    sock.on('error', () => relay.kill('SIGTERM'));
    sock.on('close', () => relay.kill('SIGTERM'));
    relay.on('exit', () => { st.relays.delete(relay); sock.end(); });
  });
  const ready = new Promise((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', () => resolve(server.address().port)); });
  // server.close() waits for every connection: one the far side left half-open would hold it.
  const close = () => new Promise((resolve) => {
    for (const r of st.relays) r.kill('SIGKILL');
    for (const c of st.sockets) c.destroy();
    server.close(() => resolve());
  });
  return { st, ready, close, server };
}

async function run(ctx) {
  const { check, report, WORK, USER, NS, signKey, issuerPub, proc, ENV, dirs, RUNS, log } = ctx;
  const tStart = Date.now();
  const R = (report.grd = { figures: {}, sessions: {} });
  const PASSWORD = `Gp-${rnd(14)}`;
  ctx.secrets.push(PASSWORD, TEXT_ASCII);

  // ---- the account, its runtime dir, GRD's settings and credentials ---------------------------
  execFileSync('useradd', ['-m', '-s', '/bin/sh', USER], { stdio: 'ignore' });
  const home = `/home/${USER}`;
  const uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim());
  const own = (p) => fs.chownSync(p, uid, uid);
  const mkdirOwn = (d) => { fs.mkdirSync(d, { recursive: true, mode: 0o700 }); own(d); };
  const rt = path.join(WORK, 'grd-run'); // XDG_RUNTIME_DIR (WORK is 0711)
  mkdirOwn(rt);
  for (const d of ['.config', '.config/glib-2.0', '.config/glib-2.0/settings', '.local', '.local/share', '.local/share/gnome-remote-desktop', 'grd']) mkdirOwn(path.join(home, d));
  const cert = path.join(home, 'grd/cert.pem'), key = path.join(home, 'grd/key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=gc-interop-grd'], { stdio: 'ignore' });
  own(cert); own(key);
  const pin = crypto.createHash('sha256').update(new crypto.X509Certificate(fs.readFileSync(cert)).raw).digest('hex');
  // GSettings from a key file (GSETTINGS_BACKEND=keyfile): no dconf service; TLS by file paths.
  const settings = path.join(home, '.config/glib-2.0/settings/keyfile');
  fs.writeFileSync(settings, `[org/gnome/desktop/remote-desktop/rdp]\nenable=true\ntls-cert='${cert}'\ntls-key='${key}'\nview-only=false\nscreen-share-mode='mirror-primary'\n`, { mode: 0o600 });
  own(settings);
  // Headless GRD 43 keeps its credentials in a TPM or, without one, in this GKeyFile (its
  // GrdCredentialsFile): written here, 0600, so no password is in argv (grdctl takes it there).
  // A GVariant text; the name and the password are letters and '-' (nothing to quote).
  const creds = path.join(home, '.local/share/gnome-remote-desktop/credentials.ini');
  fs.writeFileSync(creds, `[RDP]\ncredentials={'username': <'${USER}'>, 'password': <'${PASSWORD}'>}\n`, { mode: 0o600 });
  own(creds);
  const typedFile = path.join(home, 'typed');
  const runFile = (n) => path.join(rt, n);
  const session = runFile('session.sh'), client = runFile('xterm.sh');
  // mutter runs the client once its displays are up, with DISPLAY set (Xwayland's).
  fs.writeFileSync(client, `#!/bin/sh\necho "$DISPLAY" >'${runFile('display')}'\nexec xterm -geometry 100x30 -e /bin/sh -c 'exec cat > "$HOME/typed"'\n`, { mode: 0o755 });
  own(client);
  fs.writeFileSync(session, `#!/bin/sh
# Runs as ${USER} on the session bus dbus-run-session made, inside ${NS}.
cd "$HOME" || exit 1
pipewire >'${runFile('pipewire.log')}' 2>&1 & echo "pipewire $!" >>'${runFile('pids')}'
wireplumber >'${runFile('wireplumber.log')}' 2>&1 & echo "wireplumber $!" >>'${runFile('pids')}'
/usr/libexec/gnome-remote-desktop-daemon --headless --rdp-port ${GRD_PORT} >'${runFile('grd.log')}' 2>&1 & echo "grd $!" >>'${runFile('pids')}'
echo "mutter $$" >>'${runFile('pids')}'
exec mutter --headless --wayland --virtual-monitor ${DESKTOP.width}x${DESKTOP.height} -- /bin/sh '${client}' >'${runFile('mutter.log')}' 2>&1
`, { mode: 0o755 });
  own(session);

  // ---- the stack: up, and listening inside the namespace only -----------------------------------
  const env = ['HOME=' + home, 'USER=' + USER, 'LOGNAME=' + USER, 'PATH=/usr/bin:/bin', 'LANG=C.UTF-8', `XDG_RUNTIME_DIR=${rt}`, 'GSETTINGS_BACKEND=keyfile'];
  const tUp = Date.now();
  const stack = proc('grdsession', 'ip', ['netns', 'exec', NS, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--init-groups', 'env', '-i', ...env, 'dbus-run-session', '--', '/bin/sh', session], { PATH: process.env.PATH });
  const pidOf = (kind) => { const m = new RegExp(`^${kind} (\\d+)$`, 'm').exec(readText(runFile('pids'))); return m ? Number(m[1]) : 0; };
  const listening = (pid, port) => { try { return P.inetSocketsOf(pid).inet.filter((s) => s.state === 'LISTEN' && s.localPort === port); } catch { return []; } };
  const grdUp = await until(() => (pidOf('grd') && listening(pidOf('grd'), GRD_PORT).length > 0) || stack.exit, 60000, 100);
  const display = await until(() => readText(runFile('display')).trim(), 60000, 100);
  const xauth = fs.readdirSync(rt).find((f) => f.startsWith('.mutter-Xwaylandauth'));
  const X = { PATH: process.env.PATH, DISPLAY: display, XAUTHORITY: xauth ? path.join(rt, xauth) : '' };
  // X clients run inside the namespace: Xwayland's abstract socket is the namespace's own.
  const xrun = (cmd, args, opts = {}) => spawnSync('ip', ['netns', 'exec', NS, cmd, ...args], { env: X, ...opts });
  const xtermWin = await until(() => (xrun('xdotool', ['search', '--onlyvisible', '--class', 'xterm'], { encoding: 'utf8' }).stdout || '').trim().split('\n')[0], 60000, 200);
  R.figures.stack_up_ms = Date.now() - tUp;
  // The witness of what Xwayland processed (X RECORD: key and button events), inside the namespace.
  const recorder = ctx.recorder && xtermWin ? proc('recorder', 'ip', ['netns', 'exec', NS, ctx.recorder], X) : null;
  if (recorder) await recorder.waitFor((e) => /^GCREC (started|unavailable)/.test(e.unparsable || ''), 15000).catch(() => null);
  const keysSeen = (from) => (recorder ? recorder.events.slice(from) : []).filter((e) => /^GCREC key /.test(e.unparsable || '')).length;
  const recorded = () => (recorder ? recorder.events.length : 0);
  const grdListeners = pidOf('grd') ? listening(pidOf('grd'), GRD_PORT).map((s) => `${s.local}:${s.localPort}`) : [];
  const links = spawnSync('ip', ['-n', NS, '-o', 'link', 'show'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map((l) => l.split(':')[1].trim());
  const addrs = spawnSync('ip', ['-n', NS, '-o', 'addr', 'show'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map((l) => l.trim().split(/\s+/)[3]);
  const fwd = loopbackForward(NS, GRD_PORT);
  const port = await fwd.ready;
  const fwdListen = fwd.server.address();
  const tpmFallback = /using GKeyFile as fallback/.test(readText(runFile('grd.log')));
  check('34.3', 'gnome-remote-desktop 43 serves headless (mutter --headless with a virtual monitor, PipeWire + WirePlumber, its own session bus, a throwaway account); it listens on every address of a network namespace that has only loopback, the forward into it on 127.0.0.1; credentials from its key file (no TPM)',
    grdUp && !stack.exit && xtermWin && links.length === 1 && links[0] === 'lo' && addrs.every((a) => /^(127\.|::1\/)/.test(a)) && fwdListen.address === '127.0.0.1' && tpmFallback,
    { grd_listens: grdListeners, namespace_links: links, namespace_addrs: addrs, forward: `${fwdListen.address}:${port}`, display, xterm: !!xtermWin, credentials_from_file: tpmFallback, stack_up_ms: R.figures.stack_up_ms, exit: stack.exit, log: readText(runFile('grd.log')).slice(-400) });
  if (!grdUp || stack.exit || !xtermWin) throw new Error(`the GRD stack did not come up: ${readText(runFile('mutter.log')).slice(-600)} ${readText(runFile('grd.log')).slice(-600)}`);

  // ---- the grant (the libvirt test driver's domain forwards to the loopback forward) ------------
  const vm = L.testDomain(path.join(WORK, 'node-grd.xml'), 'gc-interop-grd', port);
  const issueGrant = L.grantIssuer({ vm, port, pin, desktop: DESKTOP, title: 'interop: gnome-remote-desktop', signKey, env: ENV, panelUser: USER });
  const global = ['--state-dir', dirs.state, '--runtime-dir', dirs.runtime, '--issuer-key', issuerPub, ...ctx.ledgerArgs];
  const grantStrict = issueGrant(path.join(WORK, 'grant-grd-strict.json'));

  // Children that may connect run asynchronously: the forward lives in this process.
  const c = proc('console', BIN.console, ['check', '--grant', grantStrict, '--json', ...global]);
  const cExit = await c.waitExit(60000);
  const cj = c.events.filter((e) => e.ok !== undefined).pop() || null;
  check('34.3', 'check: the grant binds, GRD\'s certificate matches the pin', cExit && cExit.code === 0 && cj && cj.ok === true, { exit: cExit, json: cj, stderr: c.stderr.slice(-300) });

  // One session: open, NLA credentials, SETUP, a panel client with frames. Returns its handles.
  const openSession = (grant) => L.openSession({ proc, grant, globalArgs: global, credentials: { username: USER, password: PASSWORD } });
  const closeSession = (s, { operator = true } = {}) => L.closeSession(s, { operator, runsDir: RUNS });
  const evidence = (run) => L.evidenceEntries(dirs.state, run);
  const xterm = () => {
    // xwininfo's absolute corner (xdotool's position of a reparented window adds the frame's offset).
    const g = xrun('xwininfo', ['-id', xtermWin], { encoding: 'utf8' }).stdout || '';
    const pos = /Absolute upper-left X:\s+(-?\d+)[\s\S]*Absolute upper-left Y:\s+(-?\d+)/.exec(g);
    const shot = xrun('xwd', ['-id', xtermWin, '-silent'], { maxBuffer: 64 << 20 });
    if (!pos || shot.status !== 0) return null;
    return { x: Number(pos[1]), y: Number(pos[2]), win: decodeXwd(shot.stdout) };
  };

  // ---- the whole flow with lock.confirmation "settle": GRD answers no rung of the ladder it can
  // be asked (Refresh Rect, Suppress Output), and ends the session over the CapsAdvertise sent
  // again (the strict session below) ----------------------------------------------------------
  const grant = L.grantWithAction(issueGrant(path.join(WORK, 'grant-grd.json'), ['--lock-confirmation', 'settle']),
    { kinds: ['click', 'move', 'drag', 'scroll', 'key_chord', 'hold_key', 'type_text', 'wait', 'done', 'fail'], limits: { text_chars: 64, scroll_notches: 5 }, text_input: 'scancodes' }, signKey);
  const s = await openSession(grant);
  R.figures.open_to_setup_ms = s.setupMs;
  const binding = JSON.parse(fs.readFileSync(path.join(RUNS, s.ready.run, 'binding.json'), 'utf8'));
  check('34.3', 'open: SETUP after the credentials (GRD checked them: NLA)', s.setup && s.setup.event === 'phase' && s.setup.phase === 'SETUP', { phase: s.setup && (s.setup.phase || s.setup.event), open_to_setup_ms: s.setupMs });
  check('34.3', 'welcome: security "nla", the desktop is the virtual monitor GRD mirrors (the grant\'s size), the layout sent',
    s.welcome && s.welcome.identity && s.welcome.identity.security === 'nla' && s.welcome.width === DESKTOP.width && s.welcome.height === DESKTOP.height && s.welcome.identity.keyboard_layout === DESKTOP.layout,
    { identity: s.welcome && s.welcome.identity, size: s.welcome && `${s.welcome.width}x${s.welcome.height}` });
  const tFrames = Date.now();
  await until(() => s.frames.frames > 0 && s.frames.covered && s.frames.covered.every(Boolean), 30000, 100);
  R.figures.first_full_picture_ms = Date.now() - tFrames;
  check('34.3', 'frames reach the panel client and cover the whole desktop', s.frames.frames > 0 && !s.frames.error && s.frames.covered && s.frames.covered.every(Boolean),
    { frames: s.frames.frames, png_rects: s.frames.pngRects, jpeg_rects: s.frames.jpegRects, size: `${s.frames.width}x${s.frames.height}`, error: s.frames.error, ms: R.figures.first_full_picture_ms });

  // The panel's picture against the xterm's own pixels (xwd of the window) where mutter put it.
  let pic = null, xt = null;
  await until(() => { xt = xterm(); pic = xt && s.frames.canvas ? comparePicture(s.frames.canvas, s.frames.covered, xt.win, xt.x, xt.y) : null; return pictureOk(pic); }, 20000, 250);
  R.picture_panel = { ...pic, at: xt && `${xt.x},${xt.y}` };
  check('34.3', `the panel's picture is the xterm mutter shows (xwd of the window), within RemoteFX's loss (mean ≤ ${PICTURE.meanAbs}, ${PICTURE.within32 * 100} % of pixels within 32)`, pictureOk(pic), R.picture_panel);

  // ---- typed words through the panel ---------------------------------------------------------
  // The session's first keys: mutter's seat gets its (virtual) keyboard only with them, and what
  // comes before Xwayland has it is lost. The first word measures that; the second must arrive.
  let seq = 0;
  s.ws.send({ type: 'pointer', seq: ++seq, x: xt ? xt.x + 50 : 200, y: xt ? xt.y + 50 : 150, buttons: 0, wheel: 0 });
  const typeWord = async (word) => {
    const from = readText(typedFile).length, rec = recorded();
    const t = Date.now();
    for (const ch of [...word, 'enter']) {
      s.ws.send({ type: 'key', seq: ++seq, scancode: SC[ch], down: true });
      s.ws.send({ type: 'key', seq: ++seq, scancode: SC[ch], down: false });
    }
    const acked = await s.ws.waitText((m) => m.type === 'input_ack' && m.upto >= seq, 15000).catch(() => null);
    const line = await until(() => { const now = readText(typedFile).slice(from); return now.includes('\n') && now.slice(0, now.indexOf('\n')); }, 5000, 50);
    return { acked: !!acked, line: typeof line === 'string' ? line : null, ms: Date.now() - t, key_events_sent: 2 * (word.length + 1), key_events_x_saw: keysSeen(rec) };
  };
  const FIRST = `gcfirst${rnd(6)}`, TYPED = `gcgrd${rnd(6)}`;
  ctx.secrets.push(FIRST, TYPED);
  const first = await typeWord(FIRST);
  const lost = first.line === null ? FIRST.length + 1 : FIRST.endsWith(first.line) ? FIRST.length - first.line.length : null;
  const second = await typeWord(TYPED);
  R.figures.typed_to_seen_ms = second.ms;
  R.typing = { first_word_chars: FIRST.length + 1, first_word_lost_leading_keys: lost, first_key_events: `${first.key_events_x_saw}/${first.key_events_sent} seen by Xwayland`, second_exact: second.line === TYPED, second_key_events: `${second.key_events_x_saw}/${second.key_events_sent}`, second_ms: second.ms, acked: first.acked && second.acked };
  log(`GRD typing: of the session's first ${FIRST.length} letters and Enter, the first ${lost} never reached the xterm`);
  check('34.3', `typed words reach the xterm (through GRD, mutter's virtual keyboard and Xwayland; its shell wrote ~/typed): the first word lost its first ${lost} key(s) (what the session's first keys do on GRD; what arrived of it, if anything, was a suffix), the second exactly`,
    R.typing.acked && lost !== null && second.line === TYPED, R.typing);

  // ---- lock and capture through MCP (lock.confirmation "settle"), input refused after ------------
  const tLock = Date.now();
  let mcp = null;
  try {
    const lc = await L.lockAndCapture({ run: s.ready.run, globalArgs: global, env: ENV, name: 'gc-interop-grd', timeoutMs: 60000 });
    mcp = lc.mcp;
    R.figures.lock_and_capture_ms = Date.now() - tLock;
    const conf = lc.status.lock_confirmation || (lc.capture.structuredContent || {}).lock_confirmation || {};
    const afterLock = ++seq;
    s.ws.send({ type: 'key', seq: afterLock, scancode: SC.x, down: true });
    const refused = await s.ws.waitText((t) => t.type === 'input_refused' && t.seq === afterLock, 15000).catch(() => null);
    R.lock = { phase: lc.status.phase, lock_confirmation: conf, refused: refused && refused.code, lock_and_capture_ms: R.figures.lock_and_capture_ms };
    check('34.3', `lock (settle): ${lc.status.phase} by ${conf.by}, gfx_caps not asked (it would end GRD's session), a key after it refused PHASE_LOCKED`, ['CAPTURING', 'REVIEWING'].includes(lc.status.phase) && conf.by && conf.required === 'settle' && !(conf.asked || []).includes('gfx_caps') && refused && refused.code === 'PHASE_LOCKED', R.lock);
    const img = (lc.capture.content || []).find((x) => x.type === 'image');
    const shot = img ? decodePng(Buffer.from(img.data, 'base64')) : null;
    const xc = xterm();
    const cap = shot && xc ? comparePicture(shot, null, xc.win, xc.x, xc.y) : null;
    R.picture_capture = { ...cap, size: shot && `${shot.width}x${shot.height}` };
    check('34.3', 'capture_desktop: the captured desktop shows the xterm as mutter has it (within RemoteFX\'s loss)', shot && shot.width === DESKTOP.width && shot.height === DESKTOP.height && pictureOk(cap), R.picture_capture);

    // ---- one action: type_text (scancodes) ----------------------------------------------------
    const before = readText(typedFile), rec = recorded();
    const t2 = Date.now();
    const r = await mcp.call('perform_action', { action: { type: 'type_text', text: `${TEXT_ASCII}\n` } });
    const receipt = L.sc(r);
    const sent = `${TEXT_ASCII}\n`;
    // Enter ends the line the xterm's shell writes; the bound covers an Enter GRD lost.
    const events = receipt.events_sent || 0; // the keys and the Shift around three of them
    await until(() => readText(typedFile).slice(before.length).includes('\n') || keysSeen(rec) >= events, 20000, 100);
    await until(() => readText(typedFile).slice(before.length).includes('\n'), 2000, 50);
    const arrived = readText(typedFile).slice(before.length);
    const seen = keysSeen(rec);
    R.action = { outcome: receipt.outcome, guest_confirmed: receipt.guest_confirmed, events_sent: receipt.events_sent, key_events_x_saw: seen, typed_exactly: arrived === sent, arrived_chars: arrived.length, sent_chars: sent.length, ms: Date.now() - t2 };
    log(`GRD action: Xwayland processed ${seen} of the ${events} key events; the xterm got ${arrived === sent ? 'the text exactly' : `the last ${arrived.length} of ${sent.length} characters`}`);
    // GRD 43 under a headless mutter sometimes drops the leading key events of a burst before
    // Xwayland (the first word above; docs/operating.md): then a suffix, and nothing else.
    check('34.3', 'perform_action type_text (ASCII, Shift, Enter): receipt executed and guest-confirmed; the xterm got the text exactly, or, where Xwayland processed fewer than all its key events (GRD/mutter dropped leading ones), a suffix of it and nothing else',
      receipt.outcome === 'executed' && receipt.guest_confirmed === true && events > 2 * sent.length && sent.endsWith(arrived) && (arrived === sent || (recorder && seen < events)), R.action);
  } catch (e) {
    check('34.3', 'the GRD run reached its action', false, { error: String(e && e.message || e).slice(0, 500), control: s.con.events.slice(-4), stderr: s.con.stderr.slice(-300) });
  } finally {
    if (mcp) await mcp.close();
  }
  const cl = await closeSession(s, { operator: !R.action });
  const ev = evidence(s.ready.run);
  const closedEntry = ev.find((e) => e.event === 'closed') || {};
  const channels = closedEntry.channels || {};
  R.channels = channels;
  R.close = cl;
  const criticals = s.con.stderr.split('\n').filter((l) => / critical /.test(l));
  const textInEvidence = ev.some((e) => [TEXT_ASCII, TYPED, FIRST].some((t) => JSON.stringify(e).includes(t)));
  check('34.3', 'the console closed after its action: exit 0, run dir removed, no console process, no critical line, the evidence holds none of the typed text',
    cl.exit === 0 && cl.run_dir_gone && !P.alive(binding.pid) && criticals.length === 0 && !textInEvidence, { ...cl, critical: criticals.slice(0, 3), evidence_has_text: textInEvidence });
  log(`GRD's RDPGFX stream (the reader's count): caps ${channels.gfx_caps_version}, codecs ${JSON.stringify(channels.gfx_codecs_used)}, ${channels.gfx_frames} frames${channels.gfx_commands ? `, commands ${JSON.stringify(channels.gfx_commands)}` : ''}`);
  // The console offers no AVC: GRD 43 then encodes RemoteFX tiles as progressive (RFX_PROGRESSIVE).
  const used = channels.gfx_codecs_used || [];
  check('34.3', `GRD drove the graphics pipeline: caps ${channels.gfx_caps_version}, codecs ${used.join(', ') || 'none'} (counted by the reader), none the console did not offer`,
    channels.gfx === true && channels.gfx_frames > 0 && used.length > 0 && used.every((u) => (channels.gfx_codecs_advertised || []).includes(u) || u === 'uncompressed'),
    { gfx: channels.gfx, caps: channels.gfx_caps_version, used, advertised: channels.gfx_codecs_advertised, frames: channels.gfx_frames, commands: channels.gfx_commands });

  // After the main flow (it runs on GRD's first session): a wrong password, the strict lock.
  // ---- a wrong password ---------------------------------------------------------------------------
  {
    const WRONG = `Gw-${rnd(14)}`;
    ctx.secrets.push(WRONG);
    const con = proc('console', BIN.console, ['open', '--grant', issueGrant(path.join(WORK, 'grant-grd-wrong.json')), ...global]);
    const ready = await con.waitFor((e) => e.event === 'ready' || e.event === 'error', 60000);
    if (ready.event !== 'ready') throw new Error(`open refused: ${JSON.stringify(ready)}`);
    await con.waitFor((e) => e.event === 'credentials_required', 30000);
    const from = con.events.length;
    con.send({ cmd: 'credentials', username: USER, password: WRONG, domain: '' });
    const outcome = await con.waitFor((e) => e.event === 'closed' || e.event === 'credentials_required' || (e.event === 'phase' && e.reason === 'guest connected'), 60000, from).catch(() => null);
    const error = con.events.slice(from).find((e) => e.event === 'error') || null;
    if (outcome && outcome.event !== 'closed') con.send({ cmd: 'close' });
    await con.waitFor((e) => e.event === 'closed', 30000).catch(() => null);
    const exit = await con.waitExit(20000);
    const failed = evidence(ready.run).find((e) => e.event === 'connect_failed') || {};
    const freerdp = con.stderr.split('\n').filter((l) => /gc\.rdp/.test(l) && !/md4|krb5/.test(l)).map((l) => l.replace(/^\S+\s+/, '')).slice(0, 6);
    R.sessions.wrong_password = { outcome: outcome && (outcome.event === 'closed' ? `closed ${outcome.reason}` : outcome.event), error: error && error.code, connect_failed: failed.code, exit: exit && exit.code, reader_log: freerdp };
    log(`GRD, a wrong password: ${R.sessions.wrong_password.outcome} (connect_failed ${failed.code})`);
    // FreeRDP 2's server (GRD 43) ends the connection when NLA fails, with no CredSSP error
    // code: FreeRDP 3's client reports a failed connect, not a refused logon.
    check('34.3', `a wrong password never opens a session: GRD refuses it in NLA; the console ${outcome && outcome.event === 'credentials_required' ? 'says AUTH_FAILED and asks again' : `closes ${outcome && outcome.reason}`} (typed, in the evidence), exit 0`,
      outcome && outcome.event !== 'phase' && failed.code && exit && exit.code === 0 && !con.events.some((e) => e.event === 'phase' && e.phase === 'SETUP'), R.sessions.wrong_password);
  }

  // ---- the lock with today's strict default (no lock.confirmation) -------------------------------
  {
    const s = await openSession(grantStrict);
    // Locked on a screen that has been quiet for 2 s (GRD sends nothing unasked then: answers.c's
    // "idle"), so an update after the request is the answer and not the connect's late frame.
    await until(() => s.frames.frames > 0 && Date.now() - s.frames.lastFrameAt > 2000, 30000, 100);
    const framesBefore = s.frames.frames;
    const t = Date.now();
    s.ws.send({ type: 'lock' });
    const end = await s.con.waitFor((e) => (e.event === 'phase' && e.phase === 'CAPTURING') || e.event === 'closed', 30000).catch(() => null);
    const lockMs = Date.now() - t;
    const locked = end && end.event === 'phase';
    const cl = locked ? await closeSession(s) : await closeSession(s, { operator: false });
    const ev = evidence(s.ready.run);
    const sync = ev.find((e) => e.event === 'guest_sync') || {};
    const lc = (ev.find((e) => e.event === 'lock_confirmation') || {});
    R.sessions.strict = { result: locked ? 'CAPTURING' : (end && end.reason) || 'no answer', lock_ms: lockMs, frames_before_lock: framesBefore, frames_after_lock: s.frames.frames - framesBefore, guest_sync: sync, lock_confirmation: lc, close: cl, unconfirmed: ev.some((e) => e.event === 'guest_unconfirmed') };
    log(`GRD, strict default: ${R.sessions.strict.result} after ${lockMs} ms (refresh_rect ${sync.refresh_rect}, confirmed_by ${sync.confirmed_by})`);
    // GRD 43 advertises Refresh Rect and Suppress Output and answers neither; the CapsAdvertise
    // sent again (gfx_caps) it takes as a bad one (its rule: a second advertise that keeps AVC
    // off) and ends the session. The strict lock fails closed either way, never by a quiet screen.
    check('34.3', `strict default (no lock.confirmation): GRD answers neither Refresh Rect nor Suppress Output and ends the session over gfx_caps; the lock fails closed (${R.sessions.strict.result}, ${lockMs} ms), never by a quiet screen alone`,
      !locked && end && ['GUEST_UNCONFIRMED', 'RDP_LOST'].includes(end.reason) && cl.exit !== null && cl.run_dir_gone,
      R.sessions.strict);
  }

  // ---- what GRD answers to the lock's candidate requests (answers.c, FreeRDP's client) -----------
  if (ctx.answersProbe) {
    const probe = proc('answers', ctx.answersProbe, ['127.0.0.1', String(port), USER, String(DESKTOP.width), String(DESKTOP.height), pin], { PATH: process.env.PATH, HOME: WORK });
    probe.write(PASSWORD);
    const probeExit = await probe.waitExit(120000);
    if (!probeExit) probe.kill('SIGKILL');
    const lines = probe.events.filter((e) => e.request);
    R.answers = lines;
    const by = Object.fromEntries(lines.filter((l) => l.request).map((l) => [l.request, l]));
    for (const l of lines.filter((x) => x.request)) {
      log(`GRD answers ${l.request}: ${l.answer}${l.answered ? ` in ${l.ms} ms` : ''}${l.caps_confirms ? `, CapsConfirm in ${l.caps_confirm_ms} ms` : ''}${l.reset_graphics ? `, ResetGraphics in ${l.reset_ms} ms` : ''}${l.session_alive ? '' : ', the session ended'}${l.note ? ` (${l.note})` : ''}`);
    }
    check('34.3', 'the answers probe ran every request against GRD (figures in the report: request, answer, ms)', probeExit && probeExit.code === 0 && ['connect', 'idle', 'refresh_whole', 'refresh_part', 'refresh_corner', 'suppress_off_on', 'caps_advertise_again', 'caps_advertise_107_only'].every((k) => by[k]),
      { exit: probeExit, answers: lines, stderr: probe.stderr.split('\n').filter((l) => !/md4|krb5/.test(l)).join('\n').slice(-300) });
  }

  // ---- stop: the stack by PID, nothing of the account left, the forward closed ------------------
  for (const kind of ['mutter', 'grd', 'wireplumber', 'pipewire']) { const pid = pidOf(kind); if (pid) try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ } }
  const stackExit = await stack.waitExit(20000);
  const userPids = () => spawnSync('ps', ['-o', 'pid=', '-u', String(uid)], { encoding: 'utf8' }).stdout.split('\n').map((x) => x.trim()).filter(Boolean);
  const gone = await until(() => userPids().length === 0, 20000, 100);
  const left = userPids();
  await fwd.close();
  const fwdFree = !(await portOpen(port));
  R.figures.forward_connections = fwd.st.connections;
  check('34.3', 'nothing left: mutter, GRD, PipeWire, WirePlumber and the session bus stopped (no process of the account), the forward\'s port free',
    stackExit && gone && fwdFree, { session_exit: stackExit, left: left.length, forward_free: fwdFree, forward_connections: fwd.st.connections });
  R.figures.wall_ms = Date.now() - tStart;
  log(`GRD part: ${Math.round(R.figures.wall_ms / 1000)} s`);
}

module.exports = { run, comparePicture, decodeXwd };
