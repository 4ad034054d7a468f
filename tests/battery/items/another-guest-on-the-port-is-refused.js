'use strict';
// Guest A stopped, guest B (a new certificate) on its port: `open` is refused GUEST_CERT_MISMATCH
// before any frame or credential; the decoy VM's guest was never contacted in the whole battery.
// (TEST-135 items 3 and 8.)
const { check, sleep, issueGrant, startGuest, guestEvents, connections, refusedOpen } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'D', 'base', 'certB'];
const gives = [];

async function run(ctx) {
  const { A, D, base, certB } = ctx;
  {
    const port = A.port;
    A.send({ cmd: 'quit' });
    await A.waitExit(10000);
    let B = null;
    for (let i = 0; i < 40 && !B; i++) {
      try { B = await startGuest('B', { port, certDir: certB }); } catch { await sleep(250); }
    }
    if (!B) { check(3, 'guest B started on guest A\'s port', false, {}); }
    else {
      const connB0 = connections(B), connD = connections(D);
      const o = refusedOpen(issueGrant(base), port);
      await sleep(300);
      const activated = guestEvents(B, (e) => e.event === 'activated').length;
      check(3, 'guest B (new certificate, same port): open refused GUEST_CERT_MISMATCH before any frame or credential', o.status === 2 && o.error && o.error.code === 'GUEST_CERT_MISMATCH' && activated === 0 && o.listens === 0 && o.foreign.length === 0 && !o.stdout.includes('credentials_required') && !o.stdout.includes('"ready"'),
        { status: o.status, error: o.error && o.error.code, guestB_connections: connections(B) - connB0, guestB_activated: activated, listens: o.listens, inet: o.inet });
      check(8, 'the decoy VM\'s guest was never contacted during the whole battery', connections(D) === 0 && connD === 0, { decoyConnections: connections(D) });
      B.send({ cmd: 'quit' });
    }
  }
};

module.exports = { needs, gives, run };
