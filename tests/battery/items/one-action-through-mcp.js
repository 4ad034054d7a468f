'use strict';
// Capture Desktop carries the granted guest's marker; exactly one perform_action reaches the guest
// (a second is refused, sends nothing); the receipt binds the run; the session then closes clean.
// (TEST-135 items 3, 7 and 9.)
const { decodePng, markerAt, hex32, P, MARKERS, report, check, sleep, redactUuid, redactDigest, guestKeys, guestPointers } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'S', 'VM', 'panel', 'mcp', 'init', 'mcpOk'];
const gives = [];

async function run(ctx) {
  const { A, S, VM, panel, mcp, init, mcpOk } = ctx;
  if (!mcpOk) {
    for (const name of ['capture_desktop (MCP) PNG carries the granted guest\'s marker', 'one perform_action, counted at the guest', 'a second perform_action is refused and sends nothing'])
      check(name.startsWith('capture') ? 3 : 7, name, false, { skipped: 'the MCP relay could not connect to the console', error: init.failed });
    S.proc.send({ cmd: 'close' });
  } else {
    const list = await mcp.call('tools/list');
    const names = (list.result && list.result.tools || []).map((t) => t.name);
    const cap = await mcp.tool('capture_desktop');
    let capMarker = null;
    const img = cap.result && (cap.result.content || []).find((c) => c.type === 'image');
    if (img) { try { capMarker = markerAt(decodePng(Buffer.from(img.data, 'base64')), 8, 8); } catch (e) { capMarker = String(e); } }
    check(3, 'capture_desktop (MCP) PNG carries the granted guest\'s marker', capMarker === MARKERS.A, { got: typeof capMarker === 'number' ? hex32(capMarker) : capMarker });
    const pointersBefore = guestPointers(A).length, keysBefore = guestKeys(A).length;
    const act = await mcp.tool('perform_action', { action: { type: 'click', x: 400, y: 300 } });
    const receipt = act.result && act.result.structuredContent;
    const ctlReceipt = await S.proc.waitFor((e) => e.event === 'receipt', 10000).catch(() => null);
    const pd = Date.now() + 5000;
    while (guestPointers(A).length - pointersBefore < 3 && Date.now() < pd) await sleep(50);
    const again = await mcp.tool('perform_action', { action: { type: 'click', x: 10, y: 10 } }).catch((e) => ({ error: String(e) }));
    await sleep(500);
    const clicks = guestPointers(A).slice(pointersBefore);
    const againCode = again.result && again.result.structuredContent && again.result.structuredContent.code;
    report.receipt = receipt && { ...receipt, grant_digest: redactDigest(receipt.grant_digest), vm_uuid: redactUuid(receipt.vm_uuid), evidence_head: redactDigest(receipt.evidence_head) };
    check(7, 'tools: status, capture_desktop, perform_action, request_lock', ['status', 'capture_desktop', 'perform_action', 'request_lock'].every((n) => names.includes(n)), { names });
    check(7, 'one perform_action: receipt executed, 3 pointer events (move, down, up) at the guest, no key', receipt && receipt.outcome === 'executed' && receipt.events_sent === 3 && clicks.length === 3 && guestKeys(A).length === keysBefore && ctlReceipt && ctlReceipt.event_id === receipt.event_id, { receipt: report.receipt, atGuest: clicks.map((c) => ({ kind: c.kind, x: c.x, y: c.y, flags: c.flags })) });
    check(7, 'a second perform_action is refused and sends nothing', again.result && again.result.isError === true && ['ALREADY_ACTED', 'RUN_NOT_FOUND'].includes(againCode) && clicks.length === 3, { code: againCode, atGuest: clicks.length });
    check(7, 'receipt binds grant digest, run, VM and MCP tool', receipt && receipt.run === S.run && receipt.vm_name === VM.name && receipt.vm_uuid === VM.uuid && receipt.grant_digest === S.binding.grant_digest && receipt.mcp_tool === 'perform_action', { receipt: report.receipt });
  }
  await mcp.end();
  const mainEnd = await S.closed();
  report.sessions.main.mcp = mcpOk ? 'connected' : 'relay refused: ' + init.failed;
  report.sessions.main.phases = S.phases();
  report.sessions.main.closed = mainEnd.closed && { reason: mainEnd.closed.reason, evidence_head: redactDigest(mainEnd.closed.evidence_head) };
  report.sessions.main.exit = mainEnd.exit;
  check(9, `main session (${mcpOk ? 'after the action' : 'closed by the operator'}): closed, exit 0, run dir gone, no process left`, mainEnd.closed && mainEnd.exit && mainEnd.exit.code === 0 && S.runDirGone() && !P.alive(S.pid), { closed: report.sessions.main.closed, exit: mainEnd.exit, runDirGone: S.runDirGone() });
  panel.close();
};

module.exports = { needs, gives, run };
