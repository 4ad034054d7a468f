'use strict';
// Keys and a button held by the panel are released before the lock commits; the one click is
// exactly MOVE, DOWN, UP.
// (issue 16 point 1.)
const { report, check, sleep, guestEvents, evidenceOf, inputText, lockSessionOn } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'base'];
const gives = [];

async function run(ctx) {
  const { A, base } = ctx;
  const lockSession = lockSessionOn(A, base);
  report.sessions.lock16 = {};
  // 16.1: Ctrl, Shift and the left button held by the panel and never released; MCP
  // request_lock; capture_desktop at once; one click(300,300).
  {
    const { s, ws, mcp } = await lockSession('held-input');
    const from = A.events.length;
    ws.sendBurst([{ type: 'key', seq: 1, scancode: 0x1d, down: true }, { type: 'key', seq: 2, scancode: 0x2a, down: true },
      { type: 'pointer', seq: 3, x: 100, y: 120, buttons: 1, wheel: 0 }]);
    await ws.waitText((t) => t.type === 'input_ack' && t.upto >= 3, 10000).catch(() => null);
    const sd = Date.now() + 10000;
    while (guestEvents(A, (e) => e.event === 'input', from).length < 4 && Date.now() < sd) await sleep(20);
    const lock = await mcp.tool('request_lock');
    const cap = await mcp.tool('capture_desktop');
    const act = await mcp.tool('perform_action', { action: { type: 'click', x: 300, y: 300 } });
    const receipt = act.result && act.result.structuredContent;
    await mcp.end();
    const end = await s.closed();
    ws.close();
    await A.waitFor((e) => e.event === 'client_disconnected', 10000, from).catch(() => null);
    const atGuest = guestEvents(A, (e) => e.event === 'input', from).map(inputText);
    const setup = ['key 0x1d down', 'key 0x2a down', 'pointer 0x800 (100,120)', 'pointer 0x9000 (100,120)'];
    const release = ['key 0x1d up', 'key 0x2a up', 'pointer 0x1000 (100,120)'];
    const action = ['pointer 0x800 (300,300)', 'pointer 0x9000 (300,300)', 'pointer 0x1000 (300,300)'];
    const released = evidenceOf(s).find((e) => e.event === 'held_input_released') || {};
    const afterRelease = atGuest.length - setup.length - release.length;
    const details = { atGuest, events_sent: receipt && receipt.events_sent, action_events_at_guest: afterRelease, keys_released: released.keys_released, buttons_released: released.buttons_released,
      lock_phase: lock.result && lock.result.structuredContent && lock.result.structuredContent.phase, capture_ok: !!(cap.result && !cap.result.isError), closed: end.closed && end.closed.reason };
    report.sessions.lock16.held_input = details;
    check('16.1', `held input released before the lock commits (${released.keys_released} keys, ${released.buttons_released} button); the click is exactly MOVE, DOWN, UP; events_sent ${details.events_sent} = ${afterRelease} at the guest`,
      JSON.stringify(atGuest) === JSON.stringify([...setup, ...release, ...action]) && receipt && receipt.events_sent === afterRelease && released.keys_released === 2 && released.buttons_released === 1 &&
      details.lock_phase === 'CAPTURING' && details.capture_ok && details.closed === 'ACTION_DONE', details);
  }
};

module.exports = { needs, gives, run };
