import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { ConsoleManager } from '../../src/ConsoleManager';
import { runCredentialFlow } from '../../src/CredentialFlow';
import { McpRegistration } from '../../src/McpRegistration';
import { FakeHost } from '../fakes/vscode';
import { FAKE_CONSOLE, pidAlive, readRecord, SENTINEL_PASSWORD, tempDir, waitFor, writeGrant } from '../helpers';

function newHost(): FakeHost {
  const host = new FakeHost();
  host.settingsValue = { ...host.settingsValue, binaryPath: FAKE_CONSOLE };
  return host;
}

describe('CredentialFlow', () => {
  it('writesCredentialsOnlyToTheConsoleStdin', async () => {
    const dir = await tempDir();
    const record = `${dir}/record.json`;
    const grant = await writeGrant(dir, { record, credentials: true });
    const host = newHost();
    host.inputAnswers = ['alice', 'CORP', SENTINEL_PASSWORD];
    const manager = new ConsoleManager(host, new McpRegistration(undefined, () => FAKE_CONSOLE, '0', () => undefined));
    const session = await manager.openForGrant(grant);
    assert.ok(session);
    const seen = await waitFor(async () => {
      const r = await readRecord(record).catch(() => undefined);
      return r && r.stdin.length > 0 ? r : undefined;
    }, 5000, 'credentials line');
    assert.deepEqual(JSON.parse(seen.stdin[0] ?? ''), { cmd: 'credentials', username: 'alice', password: SENTINEL_PASSWORD, domain: 'CORP' });
    assert.equal(host.inputBoxes[0]?.value, 'operator', 'username is prefilled from the grant panel metadata');
    assert.equal(host.inputBoxes[2]?.password, true);
    await manager.shutdown();
    assert.equal(pidAlive(session.process.pid), false);
    // Nowhere else: not in argv/env of the child, logs, the webview's HTML or messages.
    const everywhere = JSON.stringify({
      argv: seen.argv,
      env: seen.env,
      logs: host.logs,
      html: host.panels.map((p) => p.webview.html),
      posted: host.panels.map((p) => p.posted),
      errors: host.errors,
      notices: host.notices,
      settings: host.settingsValue,
    });
    assert.ok(!everywhere.includes(SENTINEL_PASSWORD), 'the password leaked outside stdin');
  });

  it('cancellingTheSignInClosesTheConsole', async () => {
    const dir = await tempDir();
    const grant = await writeGrant(dir, { credentials: true });
    const host = newHost();
    host.inputAnswers = ['alice', undefined];
    const manager = new ConsoleManager(host, new McpRegistration(undefined, () => FAKE_CONSOLE, '0', () => undefined));
    const session = await manager.openForGrant(grant);
    assert.ok(session);
    const exit = await session.process.exit;
    assert.equal(exit.code, 0, 'the console was asked to close');
    assert.equal(pidAlive(session.process.pid), false);
    assert.equal(manager.size, 0);
  });

  it('reportsWhenTheConsoleIsAlreadyGone', async () => {
    const answers = ['bob', '', SENTINEL_PASSWORD];
    const outcome = await runCredentialFlow(
      { showInputBox: () => Promise.resolve(answers.shift()) },
      { sendCredentials: () => false },
      { attempt: 2 },
    );
    assert.equal(outcome, 'console-gone');
  });
});
