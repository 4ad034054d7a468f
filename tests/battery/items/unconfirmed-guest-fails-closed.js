'use strict';
// A guest that never answers Refresh Rect: the default grant's lock fails closed GUEST_UNCONFIRMED;
// the "settle" opt-in locks by the settle alone and every reply says so.
// (issue 16 point 4 (issue 24.4).)
const { report, check, evidenceOf, lockSessionOn } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'base'];
const gives = [];

async function run(ctx) {
  const { A, base } = ctx;
  const lockSession = lockSessionOn(A, base);
  // 16.4 (issue 24.4): a guest that advertises Refresh Rect and never answers it. By default
  // the lock fails closed GUEST_UNCONFIRMED (a quiet screen is not a confirmation: a frozen
  // guest is quiet too); with the grant's lock.confirmation "settle" it locks by the settle
  // alone, and the lock reply, the capture and the evidence say so.
  {
    // No rung of the lock's ladder answered: Refresh Rect ignored, Suppress Output ignored (the
    // guest's default), and over RDPGFX the CapsAdvertise sent again ignored too.
    A.send({ cmd: 'refresh', mode: 'ignore' });
    await A.waitFor((e) => e.event === 'refresh_mode' && e.mode === 'ignore', 5000);
    A.send({ cmd: 'gfx_readvertise', mode: 'ignore' });
    await A.waitFor((e) => e.event === 'readvertise_mode' && e.mode === 'ignore', 5000);
    const noAnswer = async (label, grantOpts) => {
      const { s, ws, mcp } = await lockSession(label, grantOpts);
      const t0 = Date.now();
      const lock = await mcp.tool('request_lock');
      const lockMs = Date.now() - t0;
      const capture = await mcp.tool('capture_desktop').catch(() => null);
      await mcp.end();
      if (!s.events.some((e) => e.event === 'closed')) s.proc.send({ cmd: 'close' });
      const end = await s.closed();
      ws.close();
      const ev = evidenceOf(s);
      const sc = (r) => (r && r.result && r.result.structuredContent) || {};
      return {
        lock_error: lock.result && lock.result.isError ? sc(lock).code : null,
        lock_phase: sc(lock).phase, lock_confirmation: sc(lock).lock_confirmation,
        capture_error: capture && capture.result && capture.result.isError ? sc(capture).code : null,
        capture_confirmation: sc(capture).lock_confirmation, request_lock_ms: lockMs,
        guest_sync: ev.find((e) => e.event === 'guest_sync') || {}, unconfirmed: ev.find((e) => e.event === 'guest_unconfirmed') || null,
        closed: end.closed && end.closed.reason,
      };
    };
    const strict = await noAnswer('no-refresh-answer', base);
    const settle = await noAnswer('no-refresh-answer-settle', { ...base, lockConfirmation: 'settle' });
    A.send({ cmd: 'refresh', mode: 'answer' });
    await A.waitFor((e) => e.event === 'refresh_mode' && e.mode === 'answer', 5000);
    A.send({ cmd: 'gfx_readvertise', mode: 'confirm' });
    await A.waitFor((e) => e.event === 'readvertise_mode' && e.mode === 'confirm', 5000);
    report.sessions.lock16.no_refresh_answer = { strict, settle };
    check('16.4', `no-answer guest, default grant: request_lock refused ${strict.lock_error}, capture refused ${strict.capture_error}, closed ${strict.closed} (guest_sync confirmed_by ${strict.guest_sync.confirmed_by})`,
      strict.lock_error === 'GUEST_UNCONFIRMED' && strict.capture_error !== null && strict.closed === 'GUEST_UNCONFIRMED' && strict.guest_sync.confirmed_by === 'settle_only' && strict.unconfirmed !== null, strict);
    const lc = settle.lock_confirmation || {};
    check('16.4', `no-answer guest, lock.confirmation "settle": locks ${settle.lock_phase} by ${lc.by} (required ${lc.required}, settled ${lc.settled}) in ${settle.request_lock_ms} ms; the capture says ${settle.capture_confirmation && settle.capture_confirmation.by}`,
      settle.lock_phase === 'CAPTURING' && lc.by === 'settle_only' && lc.required === 'settle' && lc.settled === true && settle.capture_error === null && settle.capture_confirmation && settle.capture_confirmation.by === 'settle_only' && settle.guest_sync.refresh_rect === 'unanswered' && settle.closed === 'OPERATOR_CLOSE', settle);
  }
};

module.exports = { needs, gives, run };
