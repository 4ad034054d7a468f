'use strict';
// No issuer key refuses every grant; with the key, unsigned and wrong-key grants are refused; the
// --allow-unsigned-grants opt-out is loud and recorded in the ready identity and the evidence.
// (issue 15 point 2.)
const { fs, path, spawnSync, BIN, report, check, STATE, RUNTIME, ENV, KEYS, LEDGER, GLOBAL, issueGrant, runCheck, openToReady, closeConsole } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['trustBase'];
const gives = ['trustEvidence'];

async function run(ctx) {
  const { trustBase: base } = ctx;
  const trustBoundary = {};
  // 15.2: signatures are mandatory; the opt-out is loud and recorded.
  {
    const noKey = spawnSync(BIN.console, ['check', '--grant', issueGrant({ ...base, signKey: null }), '--json', '--state-dir', STATE, '--runtime-dir', RUNTIME, '--test-ledger-dir', LEDGER], { env: ENV, encoding: 'utf8', timeout: 30000 });
    let noKeyJson = null; try { noKeyJson = JSON.parse(noKey.stdout.trim()); } catch { /* below */ }
    if (fs.existsSync('/etc/guest-console/grant-issuer.pem')) report.notes.push('15.2: /etc/guest-console/grant-issuer.pem exists; the no-key case was not run');
    else check('15.2', 'no issuer key (no --issuer-key, no /etc key): refused GRANT_ISSUER_KEY_MISSING', noKey.status === 2 && noKeyJson && noKeyJson.code === 'GRANT_ISSUER_KEY_MISSING', { status: noKey.status, json: noKeyJson });
    const other = path.join(KEYS, 'other.key');
    const unsignedG = issueGrant({ ...base, signKey: null });
    const results15 = { unsigned: runCheck(unsignedG).json, wrong_key: runCheck(issueGrant({ ...base, signKey: other })).json, right_key: runCheck(issueGrant(base)).json };
    check('15.2', 'with the key: unsigned and wrong-key grants GRANT_SIGNATURE, the right key bound (signed: true)',
      results15.unsigned && results15.unsigned.code === 'GRANT_SIGNATURE' && results15.wrong_key && results15.wrong_key.code === 'GRANT_SIGNATURE' && results15.right_key && results15.right_key.ok === true && results15.right_key.signed === true && results15.right_key.unsigned_grants_allowed === false,
      { codes: Object.fromEntries(Object.entries(results15).map(([k, v]) => [k, v && (v.code || (v.ok && 'bound'))])) });
    const dev = spawnSync(BIN.console, ['check', '--grant', unsignedG, '--json', ...GLOBAL, '--allow-unsigned-grants'], { env: ENV, encoding: 'utf8', timeout: 30000 });
    let devJson = null; try { devJson = JSON.parse(dev.stdout.trim()); } catch { /* below */ }
    const warnings = dev.stderr.split('\n').filter((l) => /WARNING.*allow-unsigned-grants/.test(l)).length;
    check('15.2', `check --allow-unsigned-grants binds the unsigned grant, says so, ${warnings} WARNING line on stderr`, dev.status === 0 && devJson && devJson.ok && devJson.signed === false && devJson.unsigned_grants_allowed === true && warnings === 1, { status: dev.status, json: devJson && { ok: devJson.ok, signed: devJson.signed, unsigned_grants_allowed: devJson.unsigned_grants_allowed }, warnings });
    const { p, first } = await openToReady(unsignedG, ['--allow-unsigned-grants']);
    const identity = first && first.identity;
    const { closed } = await closeConsole(p);
    const ev = closed && fs.readdirSync(path.join(STATE, 'evidence')).find((f) => f.startsWith(first.run));
    const opened = ev ? JSON.parse(fs.readFileSync(path.join(STATE, 'evidence', ev), 'utf8').split('\n')[0]) : {};
    const openWarnings = p.stderr.split('\n').filter((l) => /WARNING.*allow-unsigned-grants/.test(l)).length;
    check('15.2', 'open --allow-unsigned-grants: ready identity and the evidence "opened" entry carry unsigned_grants_allowed: true, signed: false',
      first && first.event === 'ready' && identity.unsigned_grants_allowed === true && identity.signed === false && opened.event === 'opened' && opened.unsigned_grants_allowed === true && opened.signed === false && openWarnings === 1,
      { first: first && first.event, identity: identity && { signed: identity.signed, unsigned_grants_allowed: identity.unsigned_grants_allowed, cert_pin: identity.cert_pin }, opened: { event: opened.event, signed: opened.signed, unsigned_grants_allowed: opened.unsigned_grants_allowed }, stderr_warnings: openWarnings });
    trustBoundary.evidence = ev && { file: path.join(STATE, 'evidence', ev), head: closed.evidence_head };
  }
  const evidence = trustBoundary.evidence;
  return { trustEvidence: evidence };
};

module.exports = { needs, gives, run };
