// The next step a notification offers for a refusal is the one docs/troubleshooting.md gives:
// src/refusalGuide.ts is generated from that doc and src/common/Refusal.h, and must equal
// what the generator makes of them now. The notices use it for every code.
import * as assert from 'assert/strict';
import { readFileSync } from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { describe, it } from 'node:test';
import { REFUSAL_GUIDE } from '../../src/refusalGuide';
import { credentialWords, refusalNotice } from '../../src/RunNotice';
import { PACKAGE_ROOT } from '../helpers';

interface Generator {
  generate(header: string, markdown: string): string;
  parseTroubleshooting(markdown: string): Map<string, { section: string; next: string }>;
  SOURCES: { refusals: string; troubleshooting: string };
  OUTPUT: string;
}
// An ES module: a real import(), which tsc's commonjs output would turn into require().
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;
const generator = (): Promise<Generator> => importModule(pathToFileURL(path.join(PACKAGE_ROOT, 'scripts', 'gen-refusal-guide.mjs')).href) as Promise<Generator>;
const read = (file: string): string => readFileSync(file, 'utf8');

describe('the refusal guide is docs/troubleshooting.md', () => {
  it('isWhatTheGeneratorMakesOfRefusalHAndTheDocNow', async () => {
    const g = await generator();
    const fresh = g.generate(read(g.SOURCES.refusals), read(g.SOURCES.troubleshooting));
    assert.equal(read(g.OUTPUT), fresh, 'src/refusalGuide.ts is stale: run node scripts/gen-refusal-guide.mjs');
  });

  it('namesEveryCodeOfTheVocabularyAndNoOther', async () => {
    const g = await generator();
    const header = read(g.SOURCES.refusals);
    const codes = [...header.matchAll(/^\s*X\(\w+,\s*"([A-Z0-9_]+)"/gm)].map((m) => m[1]);
    assert.ok(codes.length > 70, `only ${codes.length} codes read`);
    assert.deepEqual(Object.keys(REFUSAL_GUIDE).sort(), [...new Set(codes)].sort());
    assert.ok('WINDOW_RELOAD' in REFUSAL_GUIDE);
  });

  it('givesEveryNotificationTheDocsNextStep', async () => {
    const g = await generator();
    const doc = g.parseTroubleshooting(read(g.SOURCES.troubleshooting));
    for (const code of Object.keys(REFUSAL_GUIDE)) {
      const next = doc.get(code)?.next ?? '';
      for (const closing of [false, true]) {
        const notice = refusalNotice(code, 'detail', { vm: 'vm-1', grantSpent: closing, evidence: '/e.jsonl' }, closing);
        assert.ok(notice.message.includes(`(${code})`), notice.message);
        if (next) assert.ok(notice.message.includes(next.replace(/\.?$/, '')), `${code}: ${notice.message} lacks "${next}"`);
        assert.ok(!/`|\]\(/.test(notice.message), `markdown in ${notice.message}`);
        assert.equal(notice.actions[0], 'Show Evidence');
      }
    }
  });

  it('shipsTheDocTheNotificationsOpen', () => {
    // scripts/build.mjs copies it into dist/docs; "Open Docs" opens that copy.
    assert.equal(read(path.join(PACKAGE_ROOT, 'dist', 'docs', 'troubleshooting.md')), read(path.join(PACKAGE_ROOT, '..', 'docs', 'troubleshooting.md')));
  });

  it('wordsEveryCredentialFailureForAPersonNeverAsFreeRdpsName', () => {
    const names = ['AUTHENTICATION_FAILED', 'LOGON_FAILURE', 'WRONG_PASSWORD', 'ACCESS_DENIED', 'ACCOUNT_RESTRICTION', 'ACCOUNT_LOCKED_OUT', 'ACCOUNT_EXPIRED', 'ACCOUNT_DISABLED', 'LOGON_TYPE_NOT_GRANTED', 'NO_OR_MISSING_CREDENTIALS', 'PASSWORD_EXPIRED', 'PASSWORD_CERTAINLY_EXPIRED', 'PASSWORD_MUST_CHANGE', 'CLIENT_REVOKED'];
    const words = new Set<string>();
    for (const name of names.map((n) => `ERRCONNECT_${n}`).concat('ERRINFO_SERVER_FRESH_CREDENTIALS_REQUIRED', 'ERRCONNECT_SOMETHING_NEW')) {
      const w = credentialWords(name);
      words.add(w);
      for (const code of ['AUTH_FAILED', 'AUTH_EXHAUSTED']) {
        const notice = refusalNotice(code, name, { vm: 'vm-1', grantSpent: true, attempt: 2, maxAttempts: 3 }, code === 'AUTH_EXHAUSTED');
        assert.ok(!notice.message.includes('ERR'), notice.message);
        assert.ok(notice.message.includes(w), notice.message);
      }
    }
    assert.ok(words.has('the account is locked out') && words.has('the password has expired') && words.has('the user name or password is wrong'));
    assert.equal(credentialWords('ERRCONNECT_SOMETHING_NEW'), 'the guest refused the user name or password');
  });
});
