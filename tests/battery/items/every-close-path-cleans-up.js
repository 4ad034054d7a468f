'use strict';
// Close, panic, stdin EOF, expiry and a killed guest each close with their reason, exit 0, and leave
// no run dir and no process.
// (TEST-135 item 9.)
const { P, report, check, sleep, issueGrant, Session, inText } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'K', 'KILL', 'base', 'uri'];
const gives = [];

async function run(ctx) {
  const { A, K, KILL, base, uri } = ctx;
  report.sessions.close = {};
  const closeCase = async (label, grantOpts, guest, trigger, expectReason, { login = true } = {}) => {
    const s = new Session(label, issueGrant(grantOpts));
    await s.ready();
    if (login) await s.login();
    await trigger(s);
    const end = await s.closed(40000);
    await sleep(100);
    const leftovers = P.processesMentioning(s.run).concat(P.childrenOf(s.pid).map((pid) => ({ pid })));
    const stderrHits = inText(s.proc.stderr);
    report.sessions.close[label] = { reason: end.closed && end.closed.reason, exit: end.exit, phases: s.phases(), run_dir_gone: s.runDirGone(), leftovers: leftovers.length };
    check(9, `close by ${label}: reason ${expectReason}, run dir gone, no process left`, end.closed && end.closed.reason === expectReason && end.exit && end.exit.code === 0 && s.runDirGone() && !P.alive(s.pid) && leftovers.length === 0 && stderrHits.length === 0, report.sessions.close[label]);
  };
  await closeCase('close', base, A, (s) => s.proc.send({ cmd: 'close' }), 'OPERATOR_CLOSE');
  await closeCase('panic', base, A, (s) => s.proc.send({ cmd: 'panic' }), 'PANIC');
  await closeCase('stdin-eof', base, A, (s) => s.proc.endInput(), 'PARENT_GONE');
  await closeCase('expiry', { ...base, lifetime: 6 }, A, async () => {}, 'EXPIRED');
  await closeCase('guest-killed', { uri, uuid: KILL.uuid, name: KILL.name, port: K.port, cert: K.cert }, K, async () => { K.kill('SIGKILL'); }, 'RDP_LOST');
};

module.exports = { needs, gives, run };
