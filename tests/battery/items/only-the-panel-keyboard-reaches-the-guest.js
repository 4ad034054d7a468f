'use strict';
// In SETUP, the ACPI Power/Sleep/Wake keys and an unknown scancode are refused SCANCODE_FORBIDDEN;
// only the allowed key reaches the guest. Ends guest R.
// (issue 15 point 6a.)
const { report, check, sleep, guestKeys, evidenceLines } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['R', 'squatSession', 'squatPanel'];
const gives = [];

async function run(ctx) {
  const { R, squatSession: S, squatPanel: ws } = ctx;
  let seq = 0;
  const forbidden = [0xe05e, 0xe05f, 0xe063, 0x7f];
  const keys0 = guestKeys(R).length;
  const from = ws ? ws.texts.length : 0;
  const burst = forbidden.map((scancode) => ({ type: 'key', seq: ++seq, scancode, down: true }));
  burst.push({ type: 'key', seq: ++seq, scancode: 0x1e, down: true }, { type: 'key', seq: ++seq, scancode: 0x1e, down: false });
  if (ws) ws.sendBurst(burst);
  const acked = ws && await ws.waitText((t) => t.type === 'input_ack' && t.upto >= seq, 10000, from).catch(() => null);
  const kd = Date.now() + 5000;
  while (guestKeys(R).length - keys0 < 2 && Date.now() < kd) await sleep(50);
  await sleep(300); // negative evidence: nothing else arrives
  const refused = ws ? ws.texts.slice(from).filter((t) => t.type === 'input_refused') : [];
  const atGuest = guestKeys(R).slice(keys0).map((e) => e.code);
  S.proc.send({ cmd: 'close' });
  const end = await S.closed();
  const counts6 = (evidenceLines(S.run).find((e) => e.event === 'input_counts') || {}).refused || {};
  const fig6 = { sent_forbidden: forbidden.map((c) => '0x' + c.toString(16)), input_refused: refused.map((r) => r.code), evidence_scancode_forbidden: counts6.SCANCODE_FORBIDDEN || 0, at_guest: atGuest.map((c) => '0x' + c.toString(16)) };
  report.issue15.scancodes = fig6;
  check('15.6a', `ACPI Power/Sleep/Wake and 0x7f refused SCANCODE_FORBIDDEN (${refused.length} input_refused, ${fig6.evidence_scancode_forbidden} in the evidence), only the allowed key reached the guest (${atGuest.length} events)`,
    acked && refused.length === 4 && refused.every((r) => r.code === 'SCANCODE_FORBIDDEN') && refused.map((r) => r.seq).join() === '1,2,3,4' && fig6.evidence_scancode_forbidden === 4 && atGuest.length === 2 && atGuest.every((c) => c === 0x1e) && end.closed && end.closed.reason === 'OPERATOR_CLOSE',
    fig6);
  if (ws) ws.close();
  R.send({ cmd: 'quit' });
  await R.waitExit(10000);
};

module.exports = { needs, gives, run };
