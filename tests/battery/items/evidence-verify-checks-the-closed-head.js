'use strict';
// `evidence verify --head` fails a log cut short or edited and re-chained, which pass without it.
// Ends guest T.
// (issue 15 point 6b.)
const { fs, path, spawnSync, BIN, check, WORK, ENV, chainHash } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['trustGuest', 'trustEvidence'];
const gives = [];

async function run(ctx) {
  const { trustGuest: T, trustEvidence: evidence } = ctx;
  const trustBoundary = { evidence };
  // 15.6b: evidence verify against the head the run handed out.
  {
    const e = trustBoundary.evidence;
    const verify = (file, head) => spawnSync(BIN.console, ['evidence', 'verify', file, ...(head ? ['--head', head] : [])], { env: ENV, encoding: 'utf8' });
    if (!e) { check('15.6b', 'an evidence log and its closed head to test with', false, {}); }
    else {
      const lines = fs.readFileSync(e.file, 'utf8').split('\n').filter(Boolean);
      const cut = path.join(WORK, 'cut.jsonl');
      fs.writeFileSync(cut, lines.slice(0, -2).join('\n') + '\n', { mode: 0o600 });
      // Edit the first entry, then re-chain every line as a writer without a key can.
      let prev = '0'.repeat(64);
      const rechained = lines.map((l, i) => {
        let body = l.slice(0, l.lastIndexOf(',"hash":"'));
        if (i === 0) body = body.replace(/"port":\d+/, '"port":1');
        body = body.replace(/"prev":"[0-9a-f]{64}"$/, `"prev":"${prev}"`);
        prev = chainHash(prev, body);
        return `${body},"hash":"${prev}"}`;
      });
      const edited = path.join(WORK, 'rechained.jsonl');
      fs.writeFileSync(edited, rechained.join('\n') + '\n', { mode: 0o600 });
      const r = {
        intact: verify(e.file).status, intact_head: verify(e.file, e.head).status,
        cut: verify(cut).status, cut_head: verify(cut, e.head),
        rechained: verify(edited).status, rechained_head: verify(edited, e.head),
      };
      const said = verify(e.file).stdout;
      const figures = { lines: lines.length, intact: r.intact, intact_head: r.intact_head, cut: r.cut, cut_head: r.cut_head.status, rechained: r.rechained, rechained_head: r.rechained_head.status };
      check('15.6b', `verify --head: intact log (${lines.length} lines) 0; cut by 2 lines and edited+re-chained both pass without --head, fail EVIDENCE_HEAD_MISMATCH (exit 2) with it`,
        r.intact === 0 && r.intact_head === 0 && r.cut === 0 && r.rechained === 0 && r.cut_head.status === 2 && /EVIDENCE_HEAD_MISMATCH/.test(r.cut_head.stdout) && r.rechained_head.status === 2 && /EVIDENCE_HEAD_MISMATCH/.test(r.rechained_head.stdout) && /internal consistency only/.test(said),
        figures);
    }
  }
  T.send({ cmd: 'quit' });
};

module.exports = { needs, gives, run };
