'use strict';
// Panic while the lock's guest sync waits on a screen that never settles closes within 50 ms; panel
// input in the sync is refused PHASE_LOCKED; capture never starts.
// (issue 16 point 3.)
const { report, check, sleep, evidenceOf, lockSessionOn } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'base'];
const gives = [];

// Sets what the test guest answers to each of the lock's requests, once it has taken each.
async function answering(guest, refresh, suppress, readvertise) {
  for (const [cmd, mode, ev] of [['refresh', refresh, 'refresh_mode'], ['suppress', suppress, 'suppress_mode'], ['gfx_readvertise', readvertise, 'readvertise_mode']]) {
    const from = guest.events.length;
    guest.send({ cmd, mode });
    await guest.waitFor((e) => e.event === ev && e.mode === mode, 10000, from);
  }
}

async function run(ctx) {
  const { A, base } = ctx;
  const lockSession = lockSessionOn(A, base);
  // 16.3: panic while the guest sync waits on a screen that never settles (typing workload).
  {
    const { s, ws, mcp } = await lockSession('panic-in-sync');
    A.send({ cmd: 'workload', mode: 'typing' });
    // A guest that answers nothing, or the answer would end the sync before the panic.
    await answering(A, 'ignore', 'ignore', 'ignore');
    s.proc.send({ cmd: 'lock' });
    await s.proc.waitFor((e) => e.event === 'phase' && e.phase === 'READ_ONLY', 10000);
    await sleep(300); // 0.3 s into READ_ONLY, as measured in the issue
    const tIn = process.hrtime.bigint();
    ws.send({ type: 'key', seq: 1, scancode: 0x1e, down: true });
    await ws.waitText((t) => t.type === 'input_refused', 5000).catch(() => null);
    const refusedMs = Number(process.hrtime.bigint() - tIn) / 1e6;
    const refusal = ws.texts.find((t) => t.type === 'input_refused');
    const from = s.events.length;
    const t0 = process.hrtime.bigint();
    s.proc.send({ cmd: 'panic' });
    await s.proc.waitFor((e) => e.event === 'phase' && e.phase === 'CLOSED', 10000, from);
    const panicMs = Number(process.hrtime.bigint() - t0) / 1e6;
    A.send({ cmd: 'workload', mode: 'idle' });
    await answering(A, 'answer', 'ignore', 'confirm'); // the guest's defaults again
    await mcp.end();
    const end = await s.closed();
    ws.close();
    const phases = s.phases().map((p) => p.phase);
    const sync = evidenceOf(s).find((e) => e.event === 'guest_sync') || {};
    const details = { panic_to_closed_ms: Math.round(panicMs * 10) / 10, input_refused_ms: Math.round(refusedMs * 10) / 10, refusal: refusal && refusal.code, phases, guest_sync: sync.result, closed: end.closed && end.closed.reason };
    report.sessions.lock16.panic_in_sync = details;
    check('16.3', `panic during the guest sync (never-settling screen) -> CLOSED in ${details.panic_to_closed_ms} ms (target <= 50); panel input refused ${details.refusal} in ${details.input_refused_ms} ms (bar 500); capture never started`,
      panicMs <= 50 && refusal && refusal.code === 'PHASE_LOCKED' && refusedMs <= 500 && !phases.includes('CAPTURING') && sync.result === 'cancelled' && details.closed === 'PANIC', details);
  }
};

module.exports = { needs, gives, run };
