'use strict';
// The main session's grant, once consumed, is refused GRANT_REUSED by `check` and by `open`.
// (TEST-135 item 1.)
const { report, check, runCheck, refusedOpen } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['mainGrant', 'refusals'];
const gives = [];

async function run(ctx) {
  const { mainGrant, refusals } = ctx;
  {
    const r = runCheck(mainGrant);
    refusals.GRANT_REUSED = r.json && r.json.code;
    const o = refusedOpen(mainGrant, undefined);
    check(1, 'the consumed grant is refused GRANT_REUSED (check and open)', r.status === 2 && r.json.code === 'GRANT_REUSED' && o.status === 2 && o.error && o.error.code === 'GRANT_REUSED' && o.listens === 0, { check: r.json, open: o.error });
  }
  report.refusals = refusals;
};

module.exports = { needs, gives, run };
