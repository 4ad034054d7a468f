'use strict';
// Every console asked guest A for the grant's desktop and layout; a fixed 800x600 guest is refused
// RDP_DESKTOP_MISMATCH at SETUP under a default grant (no input accepted) and opens under one naming
// its size.
// (issue 20 point 2.)
const { path, crypto, SENTINEL_PW, USER, check, WORK, fwd, writeNode, issueGrant, startGuest, guestEvents, Session, openPanel, hello, evidenceLines } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A'];
const gives = [];

async function run(ctx) {
  const { A } = ctx;
  const asked = guestEvents(A, (e) => e.event === 'client_desktop');
  const shown = guestEvents(A, (e) => e.event === 'activated');
  check('20.2', 'every console asked guest A for the grant\'s desktop and layout (1024x768, 0x00000409) and got it', asked.length > 0 && asked.every((e) => e.width === 1024 && e.height === 768 && e.keyboard_layout === '0x00000409') && shown.length > 0 && shown.every((e) => e.width === 1024 && e.height === 768),
    { requests: asked.length, sizes: [...new Set(asked.map((e) => `${e.width}x${e.height} ${e.keyboard_layout}`))], activations: [...new Set(shown.map((e) => `${e.width}x${e.height}`))] });

  const F = await startGuest('F', { certDir: path.join(WORK, 'certs/f'), size: { width: 800, height: 600 } });
  const FVM = { name: 'gc-battery-fixed', uuid: crypto.randomUUID() };
  const fBase = { uri: writeNode('fixed.xml', [{ ...FVM, devices: fwd(F.port) }]), uuid: FVM.uuid, name: FVM.name, port: F.port, cert: F.cert };
  const evidenceOf = (s, event) => evidenceLines(`${s.run}-`).filter((e) => e.event === event);
  // The default grant (1920x1080) against the fixed 800x600 guest: refused at SETUP, before input.
  {
    const s = new Session('desktop-mismatch', issueGrant({ ...fBase, desktop: null }));
    await s.ready();
    const { ws } = await openPanel(s);
    ws.send(hello(s));
    await s.proc.waitFor((e) => e.event === 'credentials_required', 20000);
    s.proc.send({ cmd: 'credentials', username: USER, password: SENTINEL_PW, domain: '' });
    let seq = 0;
    const typing = setInterval(() => { seq += 1; ws.send({ type: 'key', seq, scancode: 0x1e, down: seq % 2 === 1 }); }, 5);
    const end = await s.closed();
    clearInterval(typing);
    const acks = ws.texts ? ws.texts.filter((t) => t.type === 'input_ack').length : null;
    const welcomed = ws.texts ? ws.texts.some((t) => t.type === 'welcome') : null;
    ws.close();
    const d = evidenceOf(s, 'desktop')[0] || {};
    const counts = evidenceOf(s, 'input_counts')[0] || {};
    const inputsAtF = guestEvents(F, (e) => e.event === 'input').length;
    check('20.2', 'a guest that presents another size (800x600 for the default 1920x1080): RDP_DESKTOP_MISMATCH at SETUP, no welcome, no input accepted or delivered', end.closed && end.closed.reason === 'RDP_DESKTOP_MISMATCH' && d.result === 'RDP_DESKTOP_MISMATCH' && d.requested && d.requested.width === 1920 && d.presented && d.presented.width === 800 && d.presented.height === 600 && counts.accepted === 0 && inputsAtF === 0 && acks === 0 && welcomed === false && s.runDirGone(),
      { closed: end.closed && end.closed.reason, exit: end.exit && end.exit.code, evidence: d, keys_sent: seq, input_acks: acks, accepted: counts.accepted, inputs_at_guest: inputsAtF });
  }
  // A grant that names the guest's size: the welcome carries the session's size and the layout.
  {
    const s = new Session('desktop-named', issueGrant({ ...fBase, desktop: '800x600' }));
    await s.ready();
    await s.login();
    const { ws } = await openPanel(s);
    ws.send(hello(s));
    const welcome = await ws.waitText((t) => t.type === 'welcome', 15000).catch(() => null);
    s.proc.send({ cmd: 'close' });
    const end = await s.closed();
    ws.close();
    const d = evidenceOf(s, 'desktop')[0] || {};
    check('20.2', 'a grant naming the fixed guest\'s 800x600 opens; welcome 800x600 with keyboard_layout 0x00000409; evidence "requested"', welcome && welcome.width === 800 && welcome.height === 600 && welcome.identity && welcome.identity.keyboard_layout === '0x00000409' && d.result === 'requested' && end.closed && end.closed.reason === 'OPERATOR_CLOSE',
      { welcome: welcome && `${welcome.width}x${welcome.height}`, keyboard_layout: welcome && welcome.identity && welcome.identity.keyboard_layout, evidence: d, closed: end.closed && end.closed.reason });
  }
  F.send({ cmd: 'quit' });
};

module.exports = { needs, gives, run };
