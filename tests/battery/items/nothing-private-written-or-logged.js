'use strict';
// The whole main session under strace opened for writing only the evidence log, ledger, run lock
// and binding; no sentinel is on disk, in a log, the receipt or the control channel; the scrub ran;
// no NT hash / NTOWFv2 stayed in memory; the evidence verifies and holds no input or pixels.
// (TEST-135 item 6 and "strace", issue 16 point 5b.)
const { fs, path, spawnSync, P, BIN, report, check, redactDigest, WORK, STATE, RUNTIME, RUNS, ENV, LEDGER, grepTree, NEEDLES, inText } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['S'];
const gives = [];

async function run(ctx) {
  const { S } = ctx;
  {
    const ops = P.parseStrace(fs.readFileSync(S.traceFile, 'utf8'));
    const runDir = path.join(RUNS, S.run);
    const allowedWrite = (p) => p.startsWith(path.join(STATE, 'evidence') + '/') || p.startsWith(path.join(LEDGER, 'consumed-grants')) || p.startsWith(path.join(LEDGER, 'live') + '/') || p === path.join(runDir, 'binding.json');
    const allowedMkdir = (p) => [path.join(RUNTIME, 'guest-console'), RUNS, runDir, path.join(runDir, 'freerdp'), STATE, path.join(STATE, 'evidence'), LEDGER, path.join(LEDGER, 'live')].includes(p.replace(/\/$/, ''));
    const writesOpen = ops.filter((o) => (o.op === 'openat' || o.op === 'open' || o.op === 'creat') && P.writes(o.flags));
    const bad = writesOpen.filter((o) => !allowedWrite(o.path)).concat(ops.filter((o) => o.op === 'mkdir' && o.result !== 'EEXIST' && !allowedMkdir(o.path))).concat(ops.filter((o) => o.op === 'rename/link' && !o.path.includes(STATE)));
    report.strace = { opens_total: ops.filter((o) => o.op !== 'mkdir').length, write_opens: writesOpen.map((o) => ({ path: o.path.replace(WORK, '$WORK'), flags: o.flags, result: o.result })), mkdirs: ops.filter((o) => o.op === 'mkdir').map((o) => o.path.replace(WORK, '$WORK')), renames_links: ops.filter((o) => o.op === 'rename/link').map((o) => o.path.replace(WORK, '$WORK')), outside_allowed: bad.map((o) => ({ op: o.op, path: o.path.replace(WORK, '$WORK'), flags: o.flags, result: o.result })) };
    check('strace', 'full session under strace: only evidence log, ledger, run lock and run-dir binding opened for writing', ops.length > 0 && bad.length === 0 && writesOpen.some((o) => o.path.includes('/evidence/')), { outside_allowed: report.strace.outside_allowed, write_opens: report.strace.write_opens.length });
  }

  // item 6 (files, logs): the sentinels nowhere on disk or in a log.
  {
    const files = grepTree(STATE, NEEDLES).concat(grepTree(LEDGER, NEEDLES)).concat(fs.existsSync(RUNTIME) ? grepTree(RUNTIME, NEEDLES) : []);
    const stderrHits = inText(S.proc.stderr);
    const receiptHits = inText(JSON.stringify(report.receipt || {}) + S.proc.stdoutText);
    check(6, 'no sentinel in the console\'s stderr (log)', stderrHits.length === 0, { stderrHits, stderrBytes: S.proc.stderr.length });
    check(6, 'no sentinel in evidence, ledger, state dir, run dir', files.length === 0, { files });
    check(6, 'no sentinel in the receipt or the control channel output', receiptHits.length === 0, { receiptHits });
    const ev = fs.readdirSync(path.join(STATE, 'evidence')).find((f) => f.startsWith(S.run));
    const evText = ev ? fs.readFileSync(path.join(STATE, 'evidence', ev), 'utf8') : '';
    const verify = spawnSync(BIN.console, ['evidence', 'verify', path.join(STATE, 'evidence', ev || 'missing')], { env: ENV, encoding: 'utf8' });
    const kinds = evText.trim().split('\n').map((l) => { try { return JSON.parse(l).event || JSON.parse(l).type || '?'; } catch { return 'unparsable'; } });
    report.sessions.main.evidence = { lines: kinds.length, kinds: [...new Set(kinds)], verify: verify.stdout.trim().replace(/[0-9a-f]{64}/, (h) => redactDigest(h)) };
    const connectedLine = evText.trim().split('\n').map((l) => { try { return JSON.parse(l); } catch { return {}; } }).find((e) => e.event === 'connected');
    const residue = connectedLine && connectedLine.credential_residue;
    report.memory_dump.console_scrub = residue || null;
    check(6, "the console's post-login scrub ran and reached every copy it found (counts only in the evidence)", !!residue && residue.scanned === true && residue.copies_unwritable === 0 && residue.needles_too_short === 0, { residue });
    {
      // 16.5b: no NT hash / NTOWFv2 of the sentinel password in memory after the login (scan
      // above); the evidence shows the scrub looked for both (it found and zeroed these copies).
      const d = report.memory_dump.derived;
      const byForm = residue && residue.copies_by_form;
      check('16.5b', 'after login the console holds no NT hash or NTOWFv2 of the sentinel password (/proc/PID/mem); its scrub counted both forms',
        !!d && d.md4_self_test && d.matches === 0 && !!byForm && 'nt_hash' in byForm && 'ntowfv2' in byForm,
        { bytes_scanned: d && d.bytes_scanned, matches: d && d.matches, hits: d && d.hits.slice(0, 8), scrubbed_by_form: byForm || null });
    }
    check(6, 'evidence log verifies, holds no scancodes or pixels', verify.status === 0 && !/scancode|"data"|base64/i.test(evText), report.sessions.main.evidence);
  }
};

module.exports = { needs, gives, run };
