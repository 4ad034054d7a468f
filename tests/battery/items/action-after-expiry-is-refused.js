'use strict';
// A console stopped across its grant's expires_at refuses the action EXPIRED once resumed; nothing
// reaches the guest, no receipt.
// (issue 16 point 2.)
const { report, check, sleep, guestEvents, evidenceOf, lockSessionOn } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'base'];
const gives = [];

async function run(ctx) {
  const { A, base } = ctx;
  const lockSession = lockSessionOn(A, base);
  // 16.2: the console stopped (SIGSTOP) across expires_at, resumed, then perform_action.
  {
    const { s, ws, mcp, grant } = await lockSession('expiry-stopped', { ...base, lifetime: 8 });
    const lock = await mcp.tool('request_lock');
    const cap = await mcp.tool('capture_desktop');
    const expiresAt = Date.parse(grant.expires_at);
    process.kill(s.pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    while (Date.now() <= expiresAt + 300) await sleep(100); // the wall clock passes expires_at
    process.kill(s.pid, 'SIGCONT');
    const from = A.events.length;
    const act = await mcp.tool('perform_action', { action: { type: 'click', x: 300, y: 300 } });
    const code = act.result && act.result.isError && act.result.structuredContent && act.result.structuredContent.code;
    await mcp.end();
    const end = await s.closed();
    ws.close();
    await A.waitFor((e) => e.event === 'client_disconnected', 10000, from).catch(() => null);
    const reached = guestEvents(A, (e) => e.event === 'input', from).length;
    const receipts = evidenceOf(s).filter((e) => e.event === 'receipt').length;
    const details = { lock_ok: !!(lock.result && !lock.result.isError), capture_ok: !!(cap.result && !cap.result.isError), stopped_ms: Date.now() - stoppedAt, refused: code, closed: end.closed && end.closed.reason, inputs_at_guest: reached, receipts };
    report.sessions.lock16.expiry = details;
    check('16.2', `action after expiry (console stopped ${Math.round((expiresAt - stoppedAt) / 100) / 10} s before expires_at, resumed after it) refused ${code}, closed ${details.closed}, ${reached} inputs reached the guest`,
      details.lock_ok && details.capture_ok && code === 'EXPIRED' && details.closed === 'EXPIRED' && reached === 0 && receipts === 0, details);
  }
};

module.exports = { needs, gives, run };
