// What the operator is told outside the panel: each failure and close as a notification
// with the documented next step and its buttons, the progress steps, the run's summary in
// the panel. Against test/fixtures/fake-console.js, which speaks the control channel.
import * as assert from 'assert/strict';
import * as path from 'path';
import { describe, it } from 'node:test';
import { ConsoleManager } from '../../src/ConsoleManager';
import { McpRegistration } from '../../src/McpRegistration';
import { REFUSAL_GUIDE } from '../../src/refusalGuide';
import type { HostSummaryInfo, HostVerifyInfo } from '../../shared/protocol';
import { FakeHost } from '../fakes/vscode';
import { FAKE_CONSOLE, PACKAGE_ROOT, readRecord, tempDir, waitFor, writeGrant } from '../helpers';

function setup(): { host: FakeHost; manager: ConsoleManager } {
  const host = new FakeHost();
  host.settingsValue = { ...host.settingsValue, binaryPath: FAKE_CONSOLE };
  host.extensionUri = { fsPath: PACKAGE_ROOT, scheme: 'file', path: PACKAGE_ROOT } as unknown as FakeHost['extensionUri'];
  return { host, manager: new ConsoleManager(host, new McpRegistration(undefined, () => FAKE_CONSOLE, '0', () => undefined)) };
}

describe('ConsoleSession notifications', () => {
  it('aRefusedOpenNotifiesWithTheDocumentedNextStepAndOpensTheDocAtItsRow', async () => {
    const { host, manager } = setup();
    host.noticeAnswers = ['Open Docs'];
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, { refuseAtOpen: { code: 'GRANT_REUSED', message: 'grant g-1 was consumed' } }, 'run-reused'));
    assert.ok(session);
    await session.process.exit;
    const notice = await waitFor(() => host.notices[0], 2000, 'a notification');
    assert.equal(notice.severity, 'error');
    assert.equal(notice.message, `Guest Console — win11-bench: The grant was already consumed: grant g-1 was consumed. (GRANT_REUSED) ${REFUSAL_GUIDE.GRANT_REUSED.next}`);
    assert.deepEqual(notice.actions, ['Show Evidence', 'Open Docs', 'New Grant…']);
    const opened = await waitFor(() => host.opened[0], 2000, 'the doc opened');
    assert.equal(opened.path, path.join(PACKAGE_ROOT, 'dist', 'docs', 'troubleshooting.md'));
    const { readFileSync } = await import('fs');
    assert.match(readFileSync(opened.path, 'utf8').split('\n')[opened.line ?? -1] ?? '', /^\| `GRANT_REUSED` \|/);
    assert.equal(host.notices.length, 1, 'the exit after a reported refusal is not notified again');
  });

  it('aRefusalBeforeTheGrantIsSpentOffersARetryOfTheSameGrant', async () => {
    const { host, manager } = setup();
    host.noticeAnswers = ['Retry'];
    const dir = await tempDir();
    const grant = await writeGrant(dir, { refuseAtOpen: { code: 'VM_NOT_RUNNING', message: 'the domain is not running' } }, 'run-down');
    const session = await manager.openForGrant(grant);
    await session?.process.exit;
    const notice = await waitFor(() => host.notices[0], 2000, 'a notification');
    assert.deepEqual(notice.actions, ['Show Evidence', 'Open Docs', 'Retry']);
    assert.ok(notice.message.endsWith(REFUSAL_GUIDE.VM_NOT_RUNNING.next), notice.message);
    const retried = await waitFor(() => host.commands[0], 2000, 'the retry');
    assert.equal(retried.id, 'guestConsole.openForGrant');
    assert.match(String(retried.args[0]), /grant-\d+\.json$/);
  });

  it('aMissingConsoleBinaryIsANotificationThatPointsAtTheSetting', async () => {
    const { host, manager } = setup();
    host.settingsValue = { ...host.settingsValue, binaryPath: '/nonexistent/bin/guest-console' };
    host.noticeAnswers = ['Open Settings'];
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, {}, 'run-nobinary'));
    await session?.process.exit;
    const notice = await waitFor(() => host.notices[0], 2000, 'a notification');
    assert.equal(notice.severity, 'error');
    assert.match(notice.message, /The console could not be started: \/nonexistent\/bin\/guest-console/);
    assert.match(notice.message, /guestConsole\.binaryPath/);
    assert.deepEqual(notice.actions, ['Open Settings', 'Show Log']);
    await waitFor(() => host.settingsOpened.length === 1, 2000, 'the settings opened');
    assert.deepEqual(host.settingsOpened, ['guestConsole.binaryPath']);
  });

  it('aWrongPasswordIsWordedForThePersonAndAskedAgainWithTheReason', async () => {
    const { host, manager } = setup();
    host.inputAnswers = ['alice', '', 'wrong', 'alice', '', 'right'];
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, { credentials: true, authFailOnce: true }, 'run-pw'));
    assert.ok(session);
    await waitFor(() => session.currentPhase === 'SETUP', 5000, 'SETUP after the second attempt');
    const notice = host.notices[0];
    assert.ok(notice);
    assert.equal(notice.severity, 'warning');
    assert.ok(!notice.message.includes('ERRCONNECT'), notice.message);
    assert.match(notice.message, /The guest refused the sign-in: the user name or password is wrong \(attempt 1 of 3\)\. \(AUTH_FAILED\)/);
    assert.ok(notice.message.endsWith(REFUSAL_GUIDE.AUTH_FAILED.next));
    assert.deepEqual(notice.actions, ['Open Docs'], 'no retry: VS Code asks again by itself');
    assert.equal(host.inputBoxes[3]?.title, 'Guest Console: sign in to win11-bench (attempt 2 of 3)');
    assert.match(host.inputBoxes[3]?.prompt ?? '', /The guest refused the last attempt: the user name or password is wrong\./);
    assert.match(host.inputBoxes[0]?.prompt ?? '', /Esc cancels and ends the run: the grant is single use\./);
    assert.ok(host.logs.some((l) => l.includes('ERRCONNECT_LOGON_FAILURE')), 'the library name stays in the log');
    const signin = host.progresses.filter((p) => p.title === 'Guest Console — win11-bench');
    assert.deepEqual(signin.map((p) => [p.where, p.done]), [['notification', true], ['notification', true], ['notification', true]]);
    assert.deepEqual(signin.map((p) => p.messages.at(-1)), ['The grant checked out; connecting to the guest…', 'Signing in…', 'Signing in (attempt 2 of 3)…']);
    await manager.shutdown();
  });

  it('aCancelledSignInClosesAsAuthCancelledAndSaysTheGrantIsUsedUp', async () => {
    const { host, manager } = setup();
    host.inputAnswers = ['alice', undefined];
    const dir = await tempDir();
    const record = `${dir}/record.json`;
    const session = await manager.openForGrant(await writeGrant(dir, { credentials: true, record }, 'run-cancel'));
    await session?.process.exit;
    assert.ok((await readRecord(record)).stdin.includes('{"cmd":"close","reason":"AUTH_CANCELLED"}'));
    const notice = await waitFor(() => host.notices[0], 2000, 'a notification');
    assert.equal(notice.severity, 'warning');
    assert.match(notice.message, /The sign-in was cancelled; the console closed\. \(AUTH_CANCELLED\) Open a new grant when ready\./);
    assert.deepEqual(notice.actions, ['Show Evidence', 'Open Docs', 'New Grant…']);
    const summary = host.panels[0]?.posted.find((m) => (m as HostSummaryInfo).type === 'host_summary') as HostSummaryInfo | undefined;
    assert.equal(summary?.summary.reason, 'AUTH_CANCELLED');
    assert.equal(host.panels[0]?.disposed, false, 'the panel stays to say why');
  });

  it('aCompletedRunShowsTheReceiptAndTheEvidenceAndVerifiesIt', async () => {
    const { host, manager } = setup();
    host.noticeAnswers = ['Verify Evidence'];
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, { actAfterLock: true }, 'run-done'));
    assert.ok(session);
    await waitFor(() => session.currentPhase === 'SETUP' && host.panels[0], 5000, 'SETUP');
    assert.equal(session.lock(), true);
    await session.process.exit;
    const notice = await waitFor(() => host.notices[0], 2000, 'a notification');
    assert.equal(notice.severity, 'info');
    assert.equal(notice.message, 'Guest Console — win11-bench: the run is complete. The action click(480,200) was executed; the guest confirmed it (41 ms). The receipt is in the evidence.');
    assert.deepEqual(notice.actions, ['Show Evidence', 'Verify Evidence']);
    const panel = host.panels[0];
    assert.ok(panel);
    const summary = panel.posted.find((m) => (m as HostSummaryInfo).type === 'host_summary') as HostSummaryInfo | undefined;
    assert.deepEqual(summary?.summary, {
      reason: 'ACTION_DONE',
      headline: 'The one action was performed; the run is complete.',
      next: '',
      evidence: '/fake-state/evidence/run-done-0001.jsonl',
      evidenceHead: 'e1'.repeat(32),
      receipt: { action: 'click(480,200)', outcome: 'executed', confirmation: 'confirmed', confirmMs: 41, eventsSent: 3 },
    });
    const verified = await waitFor(() => panel.posted.find((m) => (m as HostVerifyInfo).type === 'host_verify') as HostVerifyInfo | undefined, 5000, 'the verification');
    assert.equal(verified.ok, true);
    assert.match(verified.text, new RegExp(`^evidence: ok, 7 lines, head ${'e1'.repeat(32)}`));
    const lock = host.progresses.find((p) => p.messages.some((m) => m.includes('up to #12')));
    assert.ok(lock, JSON.stringify(host.progresses));
    assert.equal(lock.where, 'notification');
    assert.deepEqual(lock.messages, [
      'Locking: input is closed; delivering the setup input to the guest…',
      'All setup input delivered (up to #12); committing the lock…',
      'Setup input delivered (up to #12); waiting for the guest to confirm it processed it…',
    ]);
    const capture = host.progresses.find((p) => p.where === 'window');
    assert.deepEqual(capture?.messages, ['the guest confirmed; waiting for the model to capture the desktop', 'the model captured the desktop; waiting for its one action', 'the action is running']);
    assert.ok(host.progresses.every((p) => p.done), 'a progress indicator outlived the run');
    assert.equal(host.statusItem.text, '$(vm) CLOSED · win11-bench');
    assert.equal(host.statusItem.kind, 'normal');
  });

  it('aConsoleThatDiesWithoutAReasonIsNotified', async () => {
    const { host, manager } = setup();
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, {}, 'run-killed'));
    assert.ok(session);
    await waitFor(() => session.currentPhase === 'SETUP' && host.panels[0], 5000, 'SETUP');
    process.kill(session.process.pid, 'SIGKILL');
    await session.process.exit;
    const notice = await waitFor(() => host.notices[0], 2000, 'a notification');
    assert.equal(notice.severity, 'error');
    assert.match(notice.message, /The console was ended by SIGKILL without reporting a close reason\..*The grant is used up\./);
    assert.deepEqual(notice.actions, ['Show Log', 'New Grant…']);
    assert.equal(host.statusItem.kind, 'normal');
    assert.equal(host.statusItem.text, '$(vm) CLOSED · win11-bench');
  });

  it('closingThePanelIsAnOperatorCloseThatOffersANewGrant', async () => {
    const { host, manager } = setup();
    const dir = await tempDir();
    const record = `${dir}/record.json`;
    const session = await manager.openForGrant(await writeGrant(dir, { record }, 'run-tab'));
    const panel = await waitFor(() => host.panels[0], 5000, 'panel');
    panel.dispose();
    await session?.process.exit;
    assert.ok((await readRecord(record)).stdin.includes('{"cmd":"close"}'));
    const notice = await waitFor(() => host.notices[0], 2000, 'a notification');
    assert.equal(notice.severity, 'info');
    assert.equal(notice.message, `Guest Console — win11-bench: The operator closed the console. (OPERATOR_CLOSE) ${REFUSAL_GUIDE.OPERATOR_CLOSE.next}`);
    assert.deepEqual(notice.actions, ['Show Evidence', 'New Grant…']);
    await waitFor(() => !host.statusItem.visible, 2000, 'the status bar item gone with the run and its panel');
  });
});
