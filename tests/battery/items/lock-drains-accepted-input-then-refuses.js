'use strict';
// Input injected around the lock: every event accepted before it is drained to the guest before
// capture, every later one is refused PHASE_LOCKED and never arrives.
// (TEST-135 item 5.)
const { report, check, sleep, guestKeys } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'S', 'panel', 'seq'];
const gives = [];

async function run(ctx) {
  const { A, S, panel } = ctx;
  let seq = ctx.seq;
  {
    const keysBefore = guestKeys(A).length;
    const burst = [];
    const firstSeq = seq + 1;
    for (let i = 0; i < 40; i++) burst.push({ type: 'key', seq: ++seq, scancode: 0x39, down: i % 2 === 0 });
    burst.push({ type: 'lock' });
    const lockIndex = seq;
    for (let i = 0; i < 40; i++) burst.push({ type: 'key', seq: ++seq, scancode: 0x1c, down: i % 2 === 0 });
    const textsFrom = panel.texts.length;
    panel.sendBurst(burst);
    const drained = await panel.waitText((t) => t.type === 'drained', 15000, textsFrom).catch(() => null);
    await S.proc.waitFor((e) => e.event === 'phase' && e.phase === 'CAPTURING', 15000).catch(() => null);
    // Later input, after the lock committed.
    const later = [];
    for (let i = 0; i < 10; i++) later.push({ type: 'key', seq: ++seq, scancode: 0x1c, down: i % 2 === 0 });
    later.push({ type: 'pointer', seq: ++seq, x: 10, y: 10, buttons: 1, wheel: 0 });
    panel.sendBurst(later);
    await panel.waitText((t) => t.type === 'input_refused' && t.seq === seq, 10000, textsFrom).catch(() => null);
    const msgs = panel.texts.slice(textsFrom);
    const acked = Math.max(0, ...msgs.filter((t) => t.type === 'input_ack').map((t) => t.upto));
    const refused = msgs.filter((t) => t.type === 'input_refused');
    const upto = drained ? drained.upto : -1;
    const expectedAtGuest = upto - firstSeq + 1;
    const gd = Date.now() + 10000;
    while (guestKeys(A).length - keysBefore < expectedAtGuest && Date.now() < gd) await sleep(50);
    await sleep(750); // negative evidence: give any straggler time to show up at the guest
    const atGuest = guestKeys(A).slice(keysBefore);
    const refusedSeqs = new Set(refused.map((r) => r.seq));
    const allAccounted = [];
    for (let s = firstSeq; s <= seq; s++) if (!(s <= upto) && !refusedSeqs.has(s)) allAccounted.push(s);
    const phases = S.phases().map((p) => p.phase);
    report.sessions.main.lock = { burst_before_lock: lockIndex - firstSeq + 1, burst_after_lock: 40, later: later.length, drained_upto: upto, acked_upto: acked, refused: refused.length, refused_codes: [...new Set(refused.map((r) => r.code))], at_guest: atGuest.length, expected_at_guest: expectedAtGuest };
    check(5, 'lock barrier: every pre-lock event acknowledged and drained (upto == last seq before lock), the guest saw exactly those', drained && upto === acked && upto === lockIndex && atGuest.length === expectedAtGuest && atGuest.every((e) => (e.code & 0xff) === 0x39 || upto > lockIndex), report.sessions.main.lock);
    check(5, 'every event after the gate closed was refused PHASE_LOCKED and never reached the guest', refused.length > 0 && refused.every((r) => r.code === 'PHASE_LOCKED' && r.seq > upto) && allAccounted.length === 0 && !atGuest.some((e) => (e.code & 0xff) === 0x1c), { unaccounted: allAccounted, refused: refused.length });
    const ctl = S.events.map((e) => (e.event === 'phase' ? e.phase : e.event));
    const order = ['LOCKING', 'drained', 'READ_ONLY', 'CAPTURING'].map((p) => ctl.indexOf(p));
    check(5, 'control channel: LOCKING → drained → READ_ONLY → CAPTURING (capture only after the drain)', order.every((v, i) => v >= 0 && (i === 0 || v > order[i - 1])), { sequence: ctl });
  }
};

module.exports = { needs, gives, run };
