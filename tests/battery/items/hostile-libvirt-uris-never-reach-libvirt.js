'use strict';
// +ext/+ssh/+tcp libvirt URIs are refused LIBVIRT_URI_FORBIDDEN: no program runs, nothing is
// connected to. Starts guest T, which the next three items use.
// (issue 15 point 1.)
const { fs, path, crypto, report, check, WORK, GRANTS, fwd, writeNode, issueGrant, startGuest, writeSigned, tracedRun } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = [];
const gives = ['trustGuest', 'trustBase'];

async function run(ctx) {
  const T = await startGuest('T', { certDir: path.join(WORK, 'certs/t') });
  const VMT = { name: 'gc-battery-trust', uuid: crypto.randomUUID() };
  const uri = writeNode('trust.xml', [{ ...VMT, devices: fwd(T.port) }]);
  const base = { uri, uuid: VMT.uuid, name: VMT.name, port: T.port, cert: T.cert };

  // 15.1: hostile libvirt URIs never reach libvirt: no program runs, nothing is connected to.
  {
    const marker = path.join(WORK, 'marker.sh'), markerOut = path.join(WORK, 'marker.out');
    fs.writeFileSync(marker, `#!/bin/sh\necho ran >> ${markerOut}\nexit 1\n`, { mode: 0o700 });
    const template = JSON.parse(fs.readFileSync(issueGrant(base), 'utf8'));
    const uris = [`test+ext:///default?command=${marker}`, `qemu+ext:///system?command=${marker}`, 'qemu+ssh://gc@127.0.0.2/system', 'qemu+tcp://127.0.0.2/system'];
    const runs = [];
    for (const [i, u] of uris.entries()) {
      const g = writeSigned(path.join(GRANTS, `hostile-uri-${i}.json`), { ...template, grant_id: crypto.randomUUID(), vm: { ...template.vm, libvirt_uri: u } });
      for (const command of i < 3 ? ['check', 'open'] : ['check']) {
        const r = tracedRun(command, g);
        runs.push({ uri: u.replace(WORK, '<work>'), command, status: r.status, code: r.code, execve: r.execs, connect: r.connects, connect_targets: r.targets, foreign: r.foreign });
      }
    }
    const refusedAll = runs.every((r) => r.status === 2 && r.code === 'LIBVIRT_URI_FORBIDDEN');
    const nothingRan = !fs.existsSync(markerOut) && runs.every((r) => r.execve === 0);
    const nothingConnected = runs.every((r) => r.foreign.length === 0);
    report.trust_uri = runs;
    check('15.1', `${runs.length} check/open runs on +ext/+ssh/+tcp URIs: all LIBVIRT_URI_FORBIDDEN (exit 2)`, refusedAll, { runs });
    check('15.1', `the planted marker never ran and no execve happened (${runs.reduce((n, r) => n + r.execve, 0)} execve besides the console's own, under strace -f)`, nothingRan, { marker_output_exists: fs.existsSync(markerOut), runs });
    const targets = [...new Set(runs.flatMap((r) => r.connect_targets))];
    check('15.1', `no connect() except a local unix socket of libvirt or the name service (${runs.reduce((n, r) => n + r.connect, 0)} connect calls in all, to: ${targets.join(', ') || 'nothing'})`, nothingConnected, { runs });
  }
  return { trustGuest: T, trustBase: base };
};

module.exports = { needs, gives, run };
