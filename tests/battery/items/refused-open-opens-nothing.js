'use strict';
// An `open` that is refused (under strace) listens nowhere, connects nowhere, leaves no run dir.
// (TEST-135 item 8.)
const { fs, report, check, RUNS, issueGrant, connections, refusedOpen } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'D', 'cases', 'connA0', 'connD0'];
const gives = [];

async function run(ctx) {
  const { A, D, cases, connA0, connD0 } = ctx;
  {
    const opened = [];
    for (const [code, opts] of [['VM_NAME_MISMATCH', cases[1][1]], ['RDP_PORT_CONFLICT', cases[8][1]], ['RDP_RULE_NOT_LOOPBACK', cases[5][1]]]) {
      const before = fs.existsSync(RUNS) ? fs.readdirSync(RUNS).length : 0;
      const r = refusedOpen(issueGrant(opts), undefined);
      const after = fs.existsSync(RUNS) ? fs.readdirSync(RUNS).length : 0;
      opened.push({ code, got: r.error && r.error.code, status: r.status, listens: r.listens, inet: r.inet });
      check(8, `open refused ${code}: exit 2, no listen(), no inet connect/bind, no run dir`,
        r.status === 2 && r.error && r.error.code === code && r.listens === 0 && r.inet.length === 0 && after === before,
        { status: r.status, error: r.error, listens: r.listens, inet: r.inet, runDirs: after - before, stderr: r.stderr.slice(-400) });
    }
    report.refused_opens = opened;
    check(8, 'refused opens contacted no guest (granted nor decoy)', connections(A) === connA0 && connections(D) === connD0, { A: connections(A) - connA0, D: connections(D) - connD0 });
  }
};

module.exports = { needs, gives, run };
