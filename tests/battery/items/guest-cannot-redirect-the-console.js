'use strict';
// A Server Redirection PDU (during connect, to TEST-NET; in session, to 127.0.0.1) closes the run
// RDP_REDIRECT_REFUSED; the only inet connect() is to the granted port. Starts guest R, which the
// next two items use.
// (issue 15 point 4.)
const { fs, path, crypto, BIN, SENTINEL_PW, USER, report, check, WORK, TRACED_ENV, GLOBAL, proc, fwd, writeNode, issueGrant, startGuest, connections, inText, evidenceLines } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = [];
const gives = ['R', 'rBase'];

async function run(ctx) {
  const R = await startGuest('R', { certDir: path.join(WORK, 'certs/r') });
  const RVM = { name: 'gc-battery-redirect', uuid: crypto.randomUUID() };
  const rBase = { uri: writeNode('redirect.xml', [{ ...RVM, devices: fwd(R.port) }]), uuid: RVM.uuid, name: RVM.name, port: R.port, cert: R.cert };
  report.issue15 = {};

  // 15.4: a Server Redirection PDU during the connection sequence (to TEST-NET 192.0.2.1) and
  // in the session (back to 127.0.0.1) is refused before any socket: under strace, the only
  // inet connect() is the one to 127.0.0.1:<granted port>.
  report.issue15.redirect = [];
  for (const [when, address] of [['connect', '192.0.2.1'], ['now', '127.0.0.1']]) {
    const from = R.events.length;
    const conn0 = connections(R);
    if (when === 'connect') {
      R.send({ cmd: 'redirect', address, when });
      await R.waitFor((e) => e.event === 'redirect_armed', 5000, from);
    }
    const trace = path.join(WORK, `redirect-${when}.strace`);
    const c = proc('strace', ['-f', '-qq', '-e', 'trace=connect', '-o', trace, BIN.console, 'open', '--grant', issueGrant(rBase), ...GLOBAL], TRACED_ENV);
    const ready = await c.waitFor((e) => e.event === 'ready' || e.event === 'error', 30000).catch(() => null);
    await c.waitFor((e) => e.event === 'credentials_required', 20000).catch(() => null);
    c.send({ cmd: 'credentials', username: USER, password: SENTINEL_PW, domain: '' });
    if (when === 'now') {
      await c.waitFor((e) => e.event === 'phase' && e.reason === 'guest connected', 30000).catch(() => null);
      R.send({ cmd: 'redirect', address, when });
    }
    const t0 = Date.now();
    const closed = await c.waitFor((e) => e.event === 'closed', 30000).catch(() => null);
    const closeMs = Date.now() - t0;
    if (!closed) c.send({ cmd: 'close' });
    const exit = await c.waitExit(15000);
    const lines = fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8').split('\n').filter((l) => /\bconnect\(/.test(l)) : [];
    const inet = lines.filter((l) => /sa_family=AF_INET6?\b/.test(l));
    const unix = lines.filter((l) => /sa_family=AF_UNIX/.test(l));
    const other = lines.filter((l) => !/sa_family=AF_(INET6?|UNIX)\b/.test(l));
    const foreign = inet.filter((l) => !(/inet_addr\("127\.0\.0\.1"\)/.test(l) && l.includes(`htons(${R.port})`)));
    const sent = R.events.slice(from).find((e) => e.event === 'redirect_sent');
    const ev = ready && ready.run ? evidenceLines(ready.run) : [];
    const closedLine = ev.find((e) => e.event === 'closed') || {};
    const fig = { when: when === 'now' ? 'in session' : 'during connect', target: address === '192.0.2.1' ? 'TEST-NET 192.0.2.1' : '127.0.0.1 (same port)', reason: closed && closed.reason, connects: lines.length, inet_connects: inet.length, unix_connects: unix.length, other_connects: other.length, foreign: foreign.map((l) => l.replace(/^\d+\s+/, '').slice(0, 120)), guest_connections: connections(R) - conn0, redirect_sent: !!sent, close_ms: closeMs, evidence_message: String(closedLine.message || '').replace(/\d+\.\d+\.\d+\.\d+/g, '<ip>') };
    report.issue15.redirect.push(fig);
    // Two connects are expected, both to the granted port: the pin probe and the session.
    // Following the redirection would add a third (127.0.0.1) or a foreign one (192.0.2.1).
    check('15.4', `Server Redirection ${fig.when} → RDP_REDIRECT_REFUSED; every inet connect() is to 127.0.0.1:<granted port> (${fig.inet_connects} of ${fig.connects}: pin probe + session), each one a guest connection`,
      sent && closed && closed.reason === 'RDP_REDIRECT_REFUSED' && exit && exit.code === 0 && inet.length >= 1 && inet.length <= 2 && foreign.length === 0 && other.length === 0 && fig.guest_connections === inet.length &&
        closedLine.code === 'RDP_REDIRECT_REFUSED' && /flags 0x/.test(closedLine.message || '') && !(closedLine.message || '').includes(address) && inText(c.stderr).length === 0 && !c.stderr.includes('192.0.2.1') && !c.stderr.includes('gc-test-redirect-cookie'),
      fig);
  }
  return { R, rBase };
};

module.exports = { needs, gives, run };
