'use strict';
// After the NLA login (SETUP) the console's memory holds no copy of the password; argv and environ
// hold no sentinel. The NT hash / NTOWFv2 scan figures are judged in nothing-private-written-or-logged.
// (TEST-135 item 6, issue 16 point 5b.)
const { fs, P, SENTINEL_PW, USER, report, check, inText } = require('../lib/harness');
const NTLM = require('../lib/ntlm');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['S'];
const gives = [];

async function run(ctx) {
  const { S } = ctx;
  {
    // 16.5b: what NTLMv2 derives from the password (the test guest's NLA runs NTLM; domain ''),
    // computed here, independently of the console.
    const derived = [{ name: 'nt-hash', bytes: NTLM.ntHash(SENTINEL_PW) }, { name: 'ntowfv2', bytes: NTLM.ntowfv2(SENTINEL_PW, USER, '') }];
    const needles = [{ name: 'password-utf8', bytes: Buffer.from(SENTINEL_PW, 'utf8') }, { name: 'password-utf16le', bytes: Buffer.from(SENTINEL_PW, 'utf16le') }, ...derived];
    const t0 = Date.now();
    let scan;
    try { scan = P.scanMemory(S.pid, needles, { asanShadow: /libasan/.test(fs.readFileSync(`/proc/${S.pid}/maps`, 'latin1')) }); } catch (e) { scan = { error: String(e), hits: [] }; }
    report.memory_dump = { phase: 'SETUP (after RDP login)', method: '/proc/PID/mem as root (the console is PR_SET_DUMPABLE 0 and traced by strace)', regions_read: scan.regions, bytes_read: scan.bytesRead, ms: Date.now() - t0, hits: scan.hits, skipped_mappings: scan.skipped, unreadable_chunks: scan.unreadableCount, error: scan.error };
    if (scan.error) {
      check(6, 'memory of the running console (SETUP) can be read for the sentinel scan', false, { error: scan.error });
    } else {
      // FreeRDP 3.10 leaves copies of the password in its own allocations (the settings backup
      // freerdp_connect keeps, the SSPI identities, CredSSP buffers; some freed without zeroing,
      // FreeRDP#12531). The console scrubs them by value right after the login
      // (ResidueScrubber); this scan, from outside, is what proves it.
      const plain = scan.hits.filter((h) => h.needle.startsWith('password-'));
      const derivedHits = scan.hits.filter((h) => !h.needle.startsWith('password-'));
      check(6, 'memory of the running console (SETUP, after login) holds no sentinel password (UTF-8 / UTF-16LE)', plain.length === 0, { hits: plain });
      report.memory_dump.derived = { md4_self_test: NTLM.selfTest(), bytes_scanned: scan.bytesRead, matches: derivedHits.length, hits: derivedHits };
    }
    for (const f of ['cmdline', 'environ']) {
      const text = fs.readFileSync(`/proc/${S.pid}/${f}`, 'latin1');
      check(6, `/proc/PID/${f} holds no sentinel`, inText(text).length === 0, { found: inText(text) });
    }
  }
};

module.exports = { needs, gives, run };
