'use strict';
// A SIGKILLed console leaves an orphan run dir; `sweep` removes it and leaves every planted decoy.
// (TEST-135 item 9.)
const { fs, path, spawnSync, BIN, NOBODY, report, check, WORK, RUNS, ENV, GLOBAL, issueGrant, Session } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['base'];
const gives = [];

async function run(ctx) {
  const { base } = ctx;
  // Orphan: SIGKILL the console; sweep removes its run dir, leaves planted decoys untouched.
  {
    const s = new Session('sigkill', issueGrant(base));
    await s.ready();
    process.kill(s.pid, 'SIGKILL');
    await s.proc.waitExit(10000);
    const orphan = fs.existsSync(path.join(RUNS, s.run));
    const precious = path.join(WORK, 'precious.txt');
    fs.writeFileSync(precious, 'precious\n');
    fs.symlinkSync(precious, path.join(RUNS, 'decoy-link'));
    fs.mkdirSync(path.join(RUNS, 'decoy-dir'), { mode: 0o700 });
    fs.writeFileSync(path.join(RUNS, 'decoy-dir', 'precious.txt'), 'precious\n'); // no binding: not provably ours
    let foreign = false;
    if (process.getuid() === 0) {
      fs.mkdirSync(path.join(RUNS, 'foreign-dir'), { mode: 0o700 });
      fs.writeFileSync(path.join(RUNS, 'foreign-dir', 'binding.json'), JSON.stringify({ app: 'guest-console', run: 'foreign-dir', pid: 4194000, start_time: '1', grant_digest: 'a'.repeat(64) }));
      fs.chownSync(path.join(RUNS, 'foreign-dir', 'binding.json'), NOBODY, NOBODY);
      fs.chownSync(path.join(RUNS, 'foreign-dir'), NOBODY, NOBODY);
      foreign = true;
    }
    const sweep = spawnSync(BIN.console, ['sweep', '--json', ...GLOBAL], { env: ENV, encoding: 'utf8', timeout: 20000 });
    let json = null; try { json = JSON.parse(sweep.stdout.trim()); } catch { /* below */ }
    const kept = json ? Object.fromEntries(json.kept.map((k) => [k.run, k.reason])) : {};
    report.sweep = { orphan_left_by_sigkill: orphan, exit: sweep.status, removed: json && json.removed.map((r) => (r === s.run ? '<the killed run>' : r)), kept: json && json.kept };
    check(9, 'SIGKILL leaves an orphan run dir; `sweep` removes it and keeps the decoys (reported)',
      orphan && sweep.status === 0 && json && json.removed.length === 1 && json.removed[0] === s.run && !fs.existsSync(path.join(RUNS, s.run)) && 'decoy-link' in kept && 'decoy-dir' in kept && (!foreign || 'foreign-dir' in kept),
      { ...report.sweep, stderr: (sweep.stderr || '').slice(-300) });
    check(9, 'decoys untouched: the link and its target, the unbound directory, the foreign directory', fs.lstatSync(path.join(RUNS, 'decoy-link')).isSymbolicLink() && fs.readFileSync(precious, 'utf8') === 'precious\n' && fs.readFileSync(path.join(RUNS, 'decoy-dir', 'precious.txt'), 'utf8') === 'precious\n' && (!foreign || (fs.statSync(path.join(RUNS, 'foreign-dir')).uid === NOBODY && fs.existsSync(path.join(RUNS, 'foreign-dir', 'binding.json')))), {});
    fs.unlinkSync(path.join(RUNS, 'decoy-link'));
    fs.rmSync(path.join(RUNS, 'foreign-dir'), { recursive: true, force: true });
    fs.rmSync(path.join(RUNS, 'decoy-dir'), { recursive: true, force: true });
  }
};

module.exports = { needs, gives, run };
