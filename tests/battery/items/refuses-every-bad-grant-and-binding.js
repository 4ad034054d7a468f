'use strict';
// `check --json` refuses each grant, UUID and port binding it must (one code each, exit 2),
// binds the valid grant, and contacts no guest while doing so.
// (TEST-135 items 1 and 8.)
const { fs, path, execFileSync, spawnSync, BIN, check, WORK, STATE, RUNTIME, GRANTS, ENV, KEYS, LEDGER, ISSUER, fwd, writeNode, issueGrant, connections, runCheck, writeSigned } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'D', 'VM', 'DECOY', 'base', 'uuid'];
const gives = ['cases', 'refusals', 'connA0', 'connD0'];

async function run(ctx) {
  const { A, D, VM, DECOY, base, uuid } = ctx;
  const freePort = A.port + 17;
  const variant = (file, domains) => writeNode(file, domains);
  const cases = [
    ['VM_NOT_FOUND', { ...base, uuid: uuid() }],
    ['VM_NAME_MISMATCH', { ...base, name: 'gc-battery-other' }],
    ['VM_NOT_RUNNING', { ...base, uri: variant('shutoff.xml', [{ ...VM, devices: fwd(A.port), runstate: 5 }]) }],
    ['RDP_RULE_NONE', { ...base, uri: variant('none.xml', [{ ...VM, devices: '' }]) }],
    ['RDP_RULE_AMBIGUOUS', { ...base, uri: variant('two.xml', [{ ...VM, devices: fwd(A.port) + fwd(A.port + 1) }]) }],
    ['RDP_RULE_NOT_LOOPBACK', { ...base, uri: variant('any.xml', [{ ...VM, devices: fwd(A.port, { address: "address='0.0.0.0'" }) }]) }],
    ['RDP_RULE_RANGE', { ...base, uri: variant('range.xml', [{ ...VM, devices: fwd(A.port, { end: ` end='${A.port + 2}'` }) }]) }],
    ['RDP_PORT_MISMATCH', { ...base, port: freePort }],
    ['RDP_PORT_CONFLICT', { ...base, uri: variant('conflict.xml', [{ ...VM, devices: fwd(A.port) }, { ...DECOY, devices: fwd(A.port) }]) }],
  ];
  const refusals = {};
  const connA0 = connections(A), connD0 = connections(D);
  for (const [code, opts] of cases) {
    const r = runCheck(issueGrant(opts));
    refusals[code] = r.json && r.json.code;
    check(1, `check refuses ${code}`, r.status === 2 && r.json && r.json.ok === false && r.json.code === code, { status: r.status, got: r.json && r.json.code, message: r.json && r.json.message });
  }
  {
    // PUBLIC_LISTENER: a wildcard listener on the granted port. It is bound inside a private
    // network namespace (unshare -n, loopback only), so nothing is ever exposed beyond this host.
    const port = A.port + 23;
    const g = issueGrant({ ...base, port, uri: variant('public.xml', [{ ...VM, devices: fwd(port) }]) });
    const script = `ip link set lo up || exit 97
node -e "require('net').createServer().listen(${port},'0.0.0.0',()=>process.stdout.write('up\\n'))" > ${WORK}/listener.out & L=$!
for i in $(seq 100); do grep -q up ${WORK}/listener.out 2>/dev/null && break; sleep 0.05; done
"$0" check --grant "$1" --json --state-dir "$2" --runtime-dir "$3" --issuer-key "$4" --test-ledger-dir "$5"; rc=$?
kill $L; exit $rc`;
    const r = spawnSync('unshare', ['-n', 'bash', '-c', script, BIN.console, g, STATE, RUNTIME, ISSUER.pub, LEDGER], { env: ENV, encoding: 'utf8', timeout: 30000 });
    let json = null; try { json = JSON.parse(r.stdout.trim().split('\n').pop()); } catch { /* below */ }
    refusals.PUBLIC_LISTENER = json && json.code;
    check(1, 'check refuses PUBLIC_LISTENER (0.0.0.0 listener on the port, private netns)', r.status === 2 && json && json.code === 'PUBLIC_LISTENER', { status: r.status, json, stderr: (r.stderr || '').slice(-300) });
  }
  {
    const g = issueGrant(base);
    const obj = JSON.parse(fs.readFileSync(g, 'utf8'));
    obj.unexpected = true;
    const bad = path.join(GRANTS, 'schema.json');
    writeSigned(bad, obj); // signed: the schema, not the signature, must be what refuses it
    const r = runCheck(bad);
    refusals.GRANT_SCHEMA = r.json && r.json.code;
    check(1, 'check refuses GRANT_SCHEMA (unknown field)', r.status === 2 && r.json && r.json.code === 'GRANT_SCHEMA', { status: r.status, json: r.json });
    const e = runCheck(issueGrant({ ...base, offset: -600, lifetime: 300 }));
    refusals.GRANT_EXPIRED = e.json && e.json.code;
    check(1, 'check refuses GRANT_EXPIRED', e.status === 2 && e.json && e.json.code === 'GRANT_EXPIRED', { status: e.status, json: e.json });
    // Signature: the run's issuer key is configured; one grant unsigned, one signed by another key.
    const other = path.join(KEYS, 'other.key');
    execFileSync(BIN.issue, ['keygen', '--out-private', other, '--out-public', path.join(KEYS, 'other.pub')], { env: ENV });
    const unsigned = runCheck(issueGrant({ ...base, signKey: null }));
    const wrongKey = runCheck(issueGrant({ ...base, signKey: other }));
    const good = runCheck(issueGrant(base));
    refusals.GRANT_SIGNATURE = unsigned.json && unsigned.json.code;
    check(1, 'check refuses GRANT_SIGNATURE (unsigned, and signed by another key); accepts the issuer\'s',
      unsigned.status === 2 && unsigned.json.code === 'GRANT_SIGNATURE' && wrongKey.status === 2 && wrongKey.json.code === 'GRANT_SIGNATURE' && good.status === 0 && good.json.ok === true,
      { unsigned: unsigned.json, wrongKey: wrongKey.json, good: good.json });
    const ok = runCheck(g);
    check(1, 'check binds the valid grant (port, rule, pin)', ok.status === 0 && ok.json.ok && ok.json.port === A.port && ok.json.cert_pin === true, { json: ok.json });
  }
  check(8, 'check refusals contacted no guest (granted nor decoy)', connections(A) === connA0 && connections(D) === connD0, { A: connections(A) - connA0, D: connections(D) - connD0 });
  return { cases, refusals, connA0, connD0 };
};

module.exports = { needs, gives, run };
