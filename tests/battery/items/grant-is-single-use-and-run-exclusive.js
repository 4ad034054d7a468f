'use strict';
// A consumed grant is refused GRANT_REUSED whatever the state dir or environment; a second console
// for a live run id is refused RUN_ALREADY_OPEN and opens once the first closed.
// (issue 15 point 3.)
const { fs, path, crypto, spawnSync, BIN, check, WORK, RUNTIME, ENV, LEDGER, TRUST, issueGrant, openToReady, closeConsole } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['trustBase'];
const gives = [];

async function run(ctx) {
  const { trustBase: base } = ctx;
  // 15.3: single use whatever the state dir or environment; one live console per run id.
  {
    const g = issueGrant(base);
    const alt = path.join(WORK, 'alt'), altHome = path.join(alt, 'home'), altXdg = path.join(alt, 'xdg');
    for (const d of [alt, altHome, altXdg, path.join(alt, 'state')]) fs.mkdirSync(d, { mode: 0o700 });
    const firstOpen = await openToReady(g);
    const firstOk = firstOpen.first && firstOpen.first.event === 'ready';
    await closeConsole(firstOpen.p);
    const altEnv = { ...ENV, HOME: altHome, XDG_STATE_HOME: altXdg };
    const again = spawnSync(BIN.console, ['check', '--grant', g, '--json', '--state-dir', path.join(alt, 'state'), '--runtime-dir', RUNTIME, ...TRUST], { env: altEnv, encoding: 'utf8', timeout: 30000 });
    let againJson = null; try { againJson = JSON.parse(again.stdout.trim()); } catch { /* below */ }
    const reopen = spawnSync(BIN.console, ['open', '--grant', g, '--state-dir', path.join(alt, 'state'), '--runtime-dir', RUNTIME, ...TRUST], { env: altEnv, encoding: 'utf8', timeout: 30000, input: '' });
    const reopenErr = reopen.stdout.split('\n').map((l) => { try { return JSON.parse(l); } catch { return {}; } }).find((e) => e.event === 'error');
    check('15.3', 'a consumed grant, re-run with another --state-dir, HOME and XDG_STATE_HOME: check and open refuse GRANT_REUSED',
      firstOk && again.status === 2 && againJson && againJson.code === 'GRANT_REUSED' && reopen.status === 2 && reopenErr && reopenErr.code === 'GRANT_REUSED',
      { first: firstOk, check: againJson && againJson.code, open: reopenErr && reopenErr.code, open_status: reopen.status });

    const run = `run-trust-${crypto.randomBytes(4).toString('hex')}`;
    const g1 = issueGrant({ ...base, run }), g2 = issueGrant({ ...base, run });
    const one = await openToReady(g1);
    const t0 = Date.now();
    const two = await openToReady(g2);
    const refusedMs = Date.now() - t0;
    const twoExit = await two.p.waitExit(15000);
    const lockFile = path.join(LEDGER, 'live', `${crypto.createHash('sha256').update(run).digest('hex')}.lock`);
    const lockMode = fs.existsSync(lockFile) ? (fs.statSync(lockFile).mode & 0o777).toString(8) : null;
    await closeConsole(one.p);
    const three = await openToReady(g2);
    const threeOk = three.first && three.first.event === 'ready';
    if (three.first && three.first.event === 'ready') await closeConsole(three.p);
    check('15.3', `two grants, one run id: the second console refused RUN_ALREADY_OPEN in ${refusedMs} ms while the first lives; it opens once the first closed`,
      one.first && one.first.event === 'ready' && two.first && two.first.event === 'error' && two.first.code === 'RUN_ALREADY_OPEN' && twoExit && twoExit.code === 2 && threeOk && lockMode === '600',
      { first: one.first && one.first.event, second: two.first && (two.first.code || two.first.event), second_exit: twoExit, after_close: three.first && (three.first.code || three.first.event), lock_mode: lockMode });
  }
};

module.exports = { needs, gives, run };
