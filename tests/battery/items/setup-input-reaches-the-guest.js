'use strict';
// In SETUP the panel's keys (the typed sentinel) and a pointer event reach the guest in order;
// every other route (clipboard, file, macro, …) is refused.
// (TEST-135 item 4.)
const { SENTINEL_TYPED, check, sleep, guestKeys, guestPointers, SC } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'panel'];
const gives = ['seq'];

async function run(ctx) {
  const { A, panel } = ctx;
  let seq = 0;
  const keysAt0 = guestKeys(A).length;
  const typed = [];
  for (const ch of SENTINEL_TYPED) { typed.push({ type: 'key', seq: ++seq, scancode: SC[ch], down: true }, { type: 'key', seq: ++seq, scancode: SC[ch], down: false }); }
  panel.sendBurst(typed);
  await panel.waitText((t) => t.type === 'input_ack' && t.upto >= seq, 10000).catch(() => null);
  const typedDeadline = Date.now() + 10000;
  while (guestKeys(A).length - keysAt0 < typed.length && Date.now() < typedDeadline) await sleep(50);
  const seenTyped = guestKeys(A).slice(keysAt0);
  check(4, 'SETUP: panel keys are acknowledged and reach the guest in order, as sent', seenTyped.length === typed.length && seenTyped.every((e, i) => (e.code & 0xff) === typed[i].scancode && ((e.flags & 0x8000) !== 0) === !typed[i].down), { sent: typed.length, seen: seenTyped.length });
  {
    const pointerSeq = ++seq;
    const before = guestPointers(A).length;
    panel.send({ type: 'pointer', seq: pointerSeq, x: 300, y: 200, buttons: 0, wheel: 0 });
    await panel.waitText((t) => t.type === 'input_ack' && t.upto >= pointerSeq, 5000).catch(() => null);
    const pd = Date.now() + 5000;
    while (guestPointers(A).length === before && Date.now() < pd) await sleep(50);
    const routes = [];
    for (const type of ['clipboard', 'file', 'macro', 'shortcut', 'action', 'receipt']) {
      const from = panel.texts.length;
      panel.send({ type, data: 'x' });
      const e = await panel.waitText((t) => t.type === 'error', 3000, from).catch(() => null);
      routes.push({ type, code: e && e.code });
    }
    check(4, 'SETUP: pointer reaches the guest; clipboard/file/macro/shortcut/action/receipt routes refused', guestPointers(A).length === before + 1 && routes.every((r) => r.code === 'ROUTE_FORBIDDEN' || r.code === 'PROTOCOL_UNKNOWN_TYPE'), { pointerAtGuest: guestPointers(A).length - before, routes });
  }
  return { seq };
};

module.exports = { needs, gives, run };
