'use strict';
// What the lanes against real RDP servers share (tests/live/live.js: a libvirt/QEMU guest
// behind FreeRDP's shadow server; tests/interop/interop.js: xrdp + xorgxrdp): the build's
// binaries, the console's environment, PASS/FAIL reporting, bounded waits on a state, the
// panel's frame compositing, the libvirt test driver's domain and grants for it (with an action
// block), one console session opened and closed as an operator does, the official MCP SDK
// client and the one action's run (lock, capture, perform_action) as a model harness drives it.
// Nothing here sleeps to synchronise: every wait ends on the state it waits for, bounded.
const fs = require('fs');
const net = require('net');
const path = require('path');
const crypto = require('crypto');
const { execFileSync } = require('child_process');
const { PanelView } = require('./panel');
const { WsClient } = require('./ws');

const REPO = path.resolve(__dirname, '../..');
const BUILD = path.resolve(REPO, process.env.GC_BUILD_DIR || 'build/asan');
const BIN = { console: path.join(BUILD, 'bin/guest-console'), issue: path.join(BUILD, 'bin/gc-issue-grant') };
const SDK = path.join(REPO, 'tests/mcp/node_modules/@modelcontextprotocol/sdk/dist/cjs');
const ARTIFACTS = process.env.GC_ARTIFACTS_DIR || '/tmp/gc-artifacts';

// Letters only (the console's redacting logger rewrites long hex runs).
const rnd = (n) => Array.from(crypto.randomBytes(n), (b) => 'abcdefghijkmnpqrstuvwxyz'[b % 24]).join('');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const secs = (t0) => Math.round((Date.now() - t0) / 100) / 10;

// The console's environment: nothing of the caller's but PATH; the sanitizers' options.
function consoleEnv(home) {
  return {
    PATH: process.env.PATH || '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1',
    LSAN_OPTIONS: process.env.LSAN_OPTIONS || `suppressions=${path.join(REPO, 'tests/sanitizer/lsan.supp')}`,
    UBSAN_OPTIONS: process.env.UBSAN_OPTIONS || 'print_stacktrace=1',
  };
}

// PASS/FAIL lines and the report's items. `details` of a passing check are printed only with
// `verbose` (the interop lane's habit); a failing one always, cut to `limit` characters.
function reporter({ items, verbose = false, limit = 900 }) {
  return function check(item, name, ok, details = {}) {
    items.push({ item, name, ok: !!ok, details });
    const shown = ok && !verbose ? '' : '  ' + JSON.stringify(details).slice(0, limit);
    process.stdout.write(`${ok ? 'PASS' : 'FAIL'} [${item}] ${name}${shown}\n`);
    return !!ok;
  };
}
const summary = (items) => { const passed = items.filter((r) => r.ok).length; return { passed, failed: items.length - passed }; };

// Resolves to pred()'s value once it is truthy (pred may be async), polling a state (a file,
// a port, a serial log, a process table) every `everyMs`; to the last falsy value after
// `timeoutMs`. Never used to wait for time itself.
async function until(pred, timeoutMs, everyMs = 50) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await pred();
    if (v || Date.now() > end) return v;
    await sleep(everyMs);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}
function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

// The panel client (lib/panel.js): composites and acknowledges every frame; `onFrame(view)`
// after each one.
const panelFrames = (ws, onFrame) => new PanelView(ws, { onFrame });

// Rewrites a grant with `action` (kinds, limits, text_input: gc-issue-grant has no options for
// them) and signs the exact bytes again with the issuer's Ed25519 key (PEM).
function grantWithAction(file, action, signKey) {
  const obj = JSON.parse(fs.readFileSync(file, 'utf8'));
  obj.action = action;
  const bytes = Buffer.from(JSON.stringify(obj));
  fs.writeFileSync(file, bytes, { mode: 0o600 });
  fs.writeFileSync(`${file}.sig`, crypto.sign(null, bytes, fs.readFileSync(signKey, 'utf8')).toString('base64') + '\n', { mode: 0o600 });
  return file;
}

// MCP through the official TypeScript SDK client (as tests/mcp does): `guest-console mcp`.
async function mcpConnect({ run, globalArgs, env, name }) {
  const { Client } = require(path.join(SDK, 'client/index.js'));
  const { StdioClientTransport } = require(path.join(SDK, 'client/stdio.js'));
  const transport = new StdioClientTransport({ command: BIN.console, args: ['mcp', '--run', run, ...globalArgs], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d.toString(); });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    call: (tool, args = {}) => client.callTool({ name: tool, arguments: args }),
    close: () => client.close().catch(() => {}),
  };
}
const sc = (r) => (r && r.structuredContent) || {};

// The model's side of one run, through MCP: request_lock (the barrier), capture_desktop until
// the first frame is there (a lock right after login may precede it: the console answers with
// an error, no transition), then the caller's refusals and its one perform_action. Returns
// {mcp, status, capture}; throws naming the step that failed.
async function lockAndCapture({ run, globalArgs, env, name, timeoutMs }) {
  const mcp = await mcpConnect({ run, globalArgs, env, name });
  try {
    const lock = await mcp.call('request_lock');
    if (lock.isError) throw new Error(`request_lock refused: ${JSON.stringify(sc(lock))}`);
    let capture = null;
    await until(async () => { capture = await mcp.call('capture_desktop'); return !capture.isError; }, timeoutMs, 500);
    if (!capture || capture.isError) throw new Error(`capture_desktop refused: ${JSON.stringify(sc(capture))}`);
    const status = sc(await mcp.call('status'));
    return { mcp, status, capture };
  } catch (e) {
    await mcp.close(); // the caller never gets it: its server process must not outlive the run
    throw e;
  }
}

// A refused perform_action: its code, and whether the run still has its action (status.acted).
async function refusedAction(mcp, args) {
  const r = await mcp.call('perform_action', args).catch((e) => ({ thrown: String(e) }));
  const st = sc(await mcp.call('status'));
  return { isError: r.isError === true, code: sc(r).code || r.thrown || null, acted: st.acted, phase: st.phase };
}

// The session's evidence entries (parsed JSON lines) from the console's state dir.
function evidenceEntries(stateDir, run) {
  const dir = path.join(stateDir, 'evidence');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.startsWith(run)) : [];
  return files.flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return {}; } }));
}

// A receipt as a report may keep it: identities redacted (UUID 8 hex, digests 16 hex).
function redactReceipt(r) {
  if (!r) return r;
  const cut = (v, n) => (v ? String(v).slice(0, n) + '…' : v);
  return { ...r, grant_digest: cut(r.grant_digest, 16), vm_uuid: cut(r.vm_uuid, 8), evidence_head: cut(r.evidence_head, 16) };
}

// The libvirt test driver's node for a lane: one running domain whose user-mode forward is
// 127.0.0.1:`port` -> 3389, written 0600 to `file`. Returns the domain and its URI.
function testDomain(file, name, port) {
  const vm = { name, uuid: crypto.randomUUID(), uri: `test://${file}` };
  fs.writeFileSync(file, `<node>
  <domain type='test'><name>${vm.name}</name><uuid>${vm.uuid}</uuid><memory unit='MiB'>512</memory><vcpu>1</vcpu>
    <os><type>hvm</type></os>
    <devices><interface type='user'><portForward proto='tcp' address='127.0.0.1'><range start='${port}' to='3389'/></portForward></interface></devices>
  </domain>
</node>\n`, { mode: 0o600 });
  return vm;
}

// A grant issuer for that domain: issue(out, extra) writes a signed grant to `out` (the
// options of gc-issue-grant in `extra` added) and returns its path.
function grantIssuer({ vm, port, pin, desktop, title, signKey, env, panelUser }) {
  return (out, extra = []) => {
    const panel = panelUser ? ['--panel', `username=${panelUser}`] : [];
    execFileSync(BIN.issue, ['--out', out, '--vm-uuid', vm.uuid, '--vm-name', vm.name, '--port', String(port), '--libvirt-uri', vm.uri,
      '--cert-sha256', pin, '--desktop', `${desktop.width}x${desktop.height}`, '--keyboard-layout', desktop.layout,
      '--title', title, ...panel, '--sign-key', signKey, ...extra], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    return out;
  };
}

// One console session as an operator starts it: `console open`, the credentials when asked,
// SETUP, a panel client that said hello. `proc(kind, file, args)` starts the console (the
// lane's child handle). With `panel: false` it returns at SETUP (ws, frames and welcome null),
// for a session driven on the control channel alone. Throws with the console's last words when
// a step does not come; the error carries what came so far as `session` ({con, ready, setup,
// setupMs}: `ready` and `setup` the events that answered, an error or a close among them, or
// null), so a caller can still close the console and report what it saw.
async function openSession({ proc, grant, globalArgs, credentials, panel = true }) {
  const t0 = Date.now();
  const s = { con: proc('console', BIN.console, ['open', '--grant', grant, ...globalArgs]), ready: null, setup: null, setupMs: null, ws: null, frames: null, welcome: null };
  const { con } = s;
  try {
    const ready = (s.ready = await con.waitFor((e) => e.event === 'ready' || e.event === 'error', 60000));
    if (ready.event !== 'ready') throw new Error(`open refused: ${JSON.stringify(ready)} ${con.stderr.slice(-500)}`);
    await con.waitFor((e) => e.event === 'credentials_required', 30000);
    con.send({ cmd: 'credentials', domain: '', ...credentials });
    s.setup = await con.waitFor((e) => (e.event === 'phase' && e.reason === 'guest connected') || e.event === 'error' || e.event === 'closed', 60000).catch(() => null);
    s.setupMs = Date.now() - t0;
    if (!s.setup || s.setup.event !== 'phase') throw new Error(`no SETUP: ${JSON.stringify(con.events.slice(-6))} ${con.stderr.slice(-400)}`);
    if (!panel) return s;
    ({ ws: s.ws } = await WsClient.connect(ready.panel.port));
    s.frames = panelFrames(s.ws);
    s.ws.send({ type: 'hello', run: ready.run, task: ready.task, capability: ready.panel.capability, client: { kind: 'interop', version: '1' } });
    s.welcome = await s.ws.waitText((t) => t.type === 'welcome', 15000).catch(() => null);
    return s;
  } catch (e) {
    e.session = s;
    throw e;
  }
}

// Ends a session from openSession: the operator's close (unless the console is closing on its
// own), the closed line, the exit, and whether its run directory under `runsDir` is gone.
async function closeSession(s, { operator = true, runsDir }) {
  if (operator) s.con.send({ cmd: 'close' });
  const closed = await s.con.waitFor((e) => e.event === 'closed', 30000).catch(() => null);
  const exit = await s.con.waitExit(20000);
  if (s.ws) s.ws.close();
  return { reason: closed && closed.reason, exit: exit && exit.code, run_dir_gone: !fs.existsSync(path.join(runsDir, s.ready.run)) };
}

module.exports = {
  testDomain, grantIssuer, openSession, closeSession,
  REPO, BUILD, BIN, SDK, ARTIFACTS, rnd, sleep, secs, consoleEnv, reporter, summary, until, freePort, portOpen,
  panelFrames, grantWithAction, mcpConnect, sc, lockAndCapture, refusedAction, evidenceEntries, redactReceipt,
};
