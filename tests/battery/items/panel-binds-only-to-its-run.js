'use strict';
// The main session (strace'd) starts: its run dir and binding name this console; a panel with a
// wrong capability, run, task, metadata or Origin is refused, the genuine one is welcomed with the
// granted identity, and a second panel is refused PANEL_BUSY. The session goes on in the next items.
// (TEST-135 items 9 and 1.)
const { fs, path, crypto, report, check, redactDigest, RUNS, issueGrant, Session, openPanel, hello, framePanel } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'VM', 'base'];
const gives = ['mainGrant', 'S', 'panel', 'frames'];

async function run(ctx) {
  const { A, VM, base } = ctx;
  const mainGrant = issueGrant(base);
  const S = new Session('main', mainGrant, { strace: true });
  await S.ready();
  report.sessions.main = { run: S.run, binding: { app: S.binding.app, run: S.binding.run, pid: 'redacted', start_time: 'redacted', grant_digest: redactDigest(S.binding.grant_digest) } };
  check(9, 'run dir: 0700, binding names this app, run, live pid and its start time', (() => {
    const st = fs.lstatSync(path.join(RUNS, S.run));
    const stat = fs.readFileSync(`/proc/${S.pid}/stat`, 'latin1');
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return st.isDirectory() && (st.mode & 0o777) === 0o700 && S.binding.app === 'guest-console' && S.binding.run === S.run && S.binding.start_time === startTime;
  })(), { binding: report.sessions.main.binding });

  // Panels that must be refused, before the real one.
  {
    const bad = [];
    const tryHello = async (label, over, expect) => {
      const { ws, status } = await openPanel(S);
      if (!ws) { bad.push({ label, refusedAtHandshake: status }); return false; }
      ws.send(hello(S, over));
      const err = await ws.waitText((t) => t.type === 'error', 5000).catch(() => null);
      const closed = await ws.waitClose(5000);
      bad.push({ label, code: err && err.code, closed });
      return err && err.code === expect && closed;
    };
    const r1 = await tryHello('wrong capability', { capability: crypto.randomBytes(32).toString('hex') }, 'PANEL_UNAUTHORIZED');
    const r2 = await tryHello('wrong run', { run: 'run-not-this-one' }, 'PANEL_MISMATCH');
    const r3 = await tryHello('wrong task', { task: 'task-not-this-one' }, 'PANEL_MISMATCH');
    const r4 = await tryHello('wrong panel metadata', { panel: { username: 'someone-else' } }, 'PANEL_MISMATCH');
    const origin = await openPanel(S, { origin: 'http://evil.example' });
    const r5 = !origin.ws;
    if (origin.ws) origin.ws.close();
    bad.push({ label: 'foreign Origin', refusedAtHandshake: origin.status || 'accepted' });
    check(1, 'panel with wrong capability / run / task / metadata / Origin refused', r1 && r2 && r3 && r4 && r5, { bad });
    report.sessions.main.refused_panels = bad;
  }
  const panel = (await openPanel(S, { origin: 'vscode-webview://battery' })).ws;
  const frames = framePanel(panel);
  panel.send(hello(S));
  await S.login();
  const welcome = await panel.waitText((t) => t.type === 'welcome', 15000);
  report.sessions.main.welcome_identity = { ...welcome.identity, vm_uuid_prefix: welcome.identity && welcome.identity.vm_uuid_prefix, grant_digest: redactDigest(welcome.identity && welcome.identity.grant_digest) };
  check(1, 'welcome identity names the granted VM, grant and pinned certificate', welcome.identity && welcome.identity.vm_name === VM.name && VM.uuid.startsWith(welcome.identity.vm_uuid_prefix) && welcome.identity.cert_pin === true && A.cert.startsWith(welcome.identity.cert_fingerprint.replace(/:/g, '')), { identity: report.sessions.main.welcome_identity });
  {
    const second = await openPanel(S);
    let code = null;
    if (second.ws) { second.ws.send(hello(S)); const e = await second.ws.waitText((t) => t.type === 'error', 5000).catch(() => null); code = e && e.code; second.ws.close(); }
    check(1, 'a second panel is refused PANEL_BUSY', code === 'PANEL_BUSY', { code, status: second.status });
  }
  return { mainGrant, S, panel, frames };
};

module.exports = { needs, gives, run };
