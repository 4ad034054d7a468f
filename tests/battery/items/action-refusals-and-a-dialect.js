'use strict';
// On a guest (U) with no Unicode input, no horizontal wheel and no extended buttons, ten actions are
// refused with a typed code (nothing sent, the action not used up); then one Anthropic scroll is read
// by the guest exactly and confirmed in the receipt.
// (issue 25.)
const { fs, path, crypto, check, WORK, fwd, writeNode, issueGrant, startGuest, guestEvents, Session, Mcp, writeSigned, evidenceLines } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = [];
const gives = [];

async function run(ctx) {
  let U = null;
  try {
    U = await startGuest('U', { certDir: path.join(WORK, 'certs/u'), args: ['--input-caps', 'none'] });
    const UVM = { name: 'gc-battery-noinput', uuid: crypto.randomUUID() };
    const issued = issueGrant({ uri: writeNode('noinput.xml', [{ ...UVM, devices: fwd(U.port) }]), uuid: UVM.uuid, name: UVM.name, port: U.port, cert: U.cert });
    // gc-issue-grant has no options for action.kinds / limits: add them and sign again.
    const obj = JSON.parse(fs.readFileSync(issued, 'utf8'));
    obj.action = { kinds: ['click', 'move', 'drag', 'scroll', 'key_chord', 'hold_key', 'type_text', 'wait', 'done', 'fail'], limits: { text_chars: 8, scroll_notches: 3 } };
    const grant = writeSigned(issued, obj);
    const s = new Session('issue25', grant);
    await s.ready();
    await s.login();
    const mcp = new Mcp(s.run);
    await mcp.call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'gc-battery', version: '1' } });
    mcp.notify('notifications/initialized');
    await mcp.tool('request_lock');
    await mcp.tool('capture_desktop');
    const from = U.events.length;
    const inputsAtU = () => guestEvents(U, (e) => e.event === 'input', from);
    const refusals = [
      ['type_text without Unicode input', { action: { type: 'type_text', text: 'abc' } }, 'ACTION_UNSUPPORTED'],
      ['a horizontal scroll without the wheel', { action: { type: 'scroll', x: 10, y: 10, dx: 1, dy: 0 } }, 'ACTION_UNSUPPORTED'],
      ['the back button without TS_POINTERX_EVENT', { action: { type: 'click', x: 10, y: 10, button: 'back' } }, 'ACTION_UNSUPPORTED'],
      ['an OpenAI type without Unicode input', { openai: { type: 'type', text: 'x' } }, 'ACTION_UNSUPPORTED'],
      ['text beyond action.limits.text_chars', { action: { type: 'type_text', text: 'abcdefghij' } }, 'ACTION_INVALID'],
      ['a scroll beyond action.limits.scroll_notches', { action: { type: 'scroll', x: 10, y: 10, dx: 0, dy: 4 } }, 'ACTION_INVALID'],
      ['an OpenAI batch of two actions', { openai: [{ type: 'click', x: 1, y: 1 }, { type: 'type', text: 'a' }] }, 'ACTION_INVALID'],
      ['OSWorld KEY_DOWN (input left held)', { osworld: { action_type: 'KEY_DOWN', parameters: { key: 'a' } } }, 'ACTION_INVALID'],
      ['two UI-TARS calls', { ui_tars: "click(start_box='(1,1)')\nclick(start_box='(2,2)')" }, 'ACTION_INVALID'],
      ['Anthropic screenshot (not an action)', { anthropic: { action: 'screenshot' } }, 'ACTION_INVALID'],
    ];
    for (const [name, args, code] of refusals) {
      const r = await mcp.tool('perform_action', args);
      const got = r.result && r.result.structuredContent && r.result.structuredContent.code;
      const st = await mcp.tool('status');
      const acted = st.result && st.result.structuredContent && st.result.structuredContent.acted;
      check('25', `${name}: ${code}, nothing sent, the action not used up`, r.result && r.result.isError === true && got === code && acted === false && inputsAtU().length === 0,
        { code: got, acted, inputs_at_guest: inputsAtU().length });
    }
    const act = await mcp.tool('perform_action', { anthropic: { action: 'scroll', coordinate: [100, 120], scroll_direction: 'down', scroll_amount: 2 } });
    const receipt = act.result && act.result.structuredContent;
    await mcp.end();
    const end = await s.closed();
    await U.waitFor((e) => e.event === 'client_disconnected', 10000, from).catch(() => null);
    const atGuest = inputsAtU().map((e) => `${e.kind} 0x${e.flags.toString(16)} (${e.x},${e.y})`);
    const expected = ['pointer 0x800 (100,120)', 'pointer 0x388 (100,120)', 'pointer 0x388 (100,120)'];
    const refusedAtConsole = evidenceLines(`${s.run}-`).filter((e) => e.event === 'mcp_refused' && e.op === 'perform_action').length;
    check('25', 'then an Anthropic scroll of 2 notches: the guest read exactly the move and two wheel PDUs; events_sent 3; guest_confirmed; the receipt names the dialect, its original and the canonical action',
      receipt && receipt.outcome === 'executed' && receipt.events_sent === 3 && JSON.stringify(atGuest) === JSON.stringify(expected) && receipt.guest_confirmed === true && receipt.dialect === 'anthropic' && receipt.original && receipt.original.action === 'scroll' && receipt.action === 'scroll(100,120,dx=0,dy=2)' && refusedAtConsole === refusals.length && end.closed && end.closed.reason === 'ACTION_DONE',
      { atGuest, receipt: receipt && { outcome: receipt.outcome, events_sent: receipt.events_sent, action: receipt.action, dialect: receipt.dialect, confirmation: receipt.confirmation }, refused_in_evidence: refusedAtConsole, closed: end.closed && end.closed.reason });
  } catch (e) {
    check('25', 'the issue-25 block ran', false, { error: String(e && e.stack || e).slice(0, 500) });
  }
  if (U) U.send({ cmd: 'quit' });
};

module.exports = { needs, gives, run };
