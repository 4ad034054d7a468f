'use strict';
// A squatter of another uid holding 16 silent, reconnecting connections to the panel port cannot
// keep the genuine panel out: it is welcomed within 1 s. Its session goes on in the next item.
// (issue 15 point 5.)
const { fs, spawn, NOBODY, report, check, sleep, ENV, issueGrant, Session, openPanel, hello, SQUATTER } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['rBase'];
const gives = ['squatSession', 'squatPanel'];

async function run(ctx) {
  const { rBase } = ctx;
  // 15.5: a squatter running as another uid (nobody) holds 16 silent connections to the panel
  // port, reconnecting at once; the genuine panel still gets its welcome.
  // 15.6a: then, in SETUP, the ACPI keys and an unknown scancode are refused SCANCODE_FORBIDDEN.
  const S = new Session('squat', issueGrant(rBase));
  await S.ready();
  await S.login();
  const port = S.readyEvent.panel.port;
  const squatter = spawn(process.execPath, ['-e', SQUATTER, String(port), '16'], { ...(process.getuid() === 0 ? { uid: NOBODY, gid: NOBODY } : {}), cwd: '/', env: { PATH: ENV.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  let counts = { up: 0, busy: 0, closed: 0 };
  let partial = '';
  squatter.stdout.on('data', (d) => { partial += d; let nl; while ((nl = partial.indexOf('\n')) >= 0) { try { counts = JSON.parse(partial.slice(0, nl)); } catch { /* skip */ } partial = partial.slice(nl + 1); } });
  const squatterExit = new Promise((resolve) => squatter.on('exit', resolve));
  const squatDeadline = Date.now() + 10000;
  while (counts.up < 16 && Date.now() < squatDeadline) await sleep(20);
  const squatterUid = (() => { try { return Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${squatter.pid}/status`, 'latin1'))[1]); } catch { return null; } })();
  const before = { ...counts };
  const t0 = process.hrtime.bigint();
  const { ws } = await openPanel(S, { origin: 'vscode-webview://battery' });
  let welcome = null;
  if (ws) {
    ws.send(hello(S));
    welcome = await ws.waitText((t) => t.type === 'welcome' || t.type === 'error', 5000).catch(() => null);
  }
  const welcomeMs = Number(process.hrtime.bigint() - t0) / 1e6;
  await sleep(300); // the squatter's pending sockets are turned away once the slot is taken
  const after = { ...counts };
  squatter.kill('SIGKILL');
  await squatterExit;
  const fig5 = { squatter_uid: squatterUid, squatter_connections: 16, handshakes_before_panel: before.up, evicted_before_panel: before.closed, welcome_ms: Math.round(welcomeMs * 10) / 10, got: welcome && welcome.type, squatter_refused_busy_after: after.busy - before.busy };
  report.issue15.squatter = fig5;
  check('15.5', `squatter as uid ${squatterUid} (16 silent connections, reconnecting): the genuine panel got welcome in ${fig5.welcome_ms} ms (target < 1000)`,
    squatterUid === NOBODY && before.up >= 16 && welcome && welcome.type === 'welcome' && welcomeMs < 1000 && after.busy > before.busy, fig5);
  return { squatSession: S, squatPanel: ws };
};

module.exports = { needs, gives, run };
