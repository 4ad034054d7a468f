import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { ConsoleManager } from '../../src/ConsoleManager';
import { McpRegistration } from '../../src/McpRegistration';
import type { ConnectInfo } from '../../shared/protocol';
import { FakeHost, FakeMcpStdioServerDefinition, FakeUri } from '../fakes/vscode';
import { promises as fs } from 'fs';
import { FAKE_CONSOLE, pidAlive, readRecord, tempDir, waitFor, writeGrant } from '../helpers';

function setup(): { host: FakeHost; manager: ConsoleManager; mcp: McpRegistration } {
  const host = new FakeHost();
  host.settingsValue = { ...host.settingsValue, binaryPath: FAKE_CONSOLE };
  const provider: { provideMcpServerDefinitions?: () => unknown[] } = {};
  const fakeVscode = {
    lm: { registerMcpServerDefinitionProvider: (_id: string, p: typeof provider) => (Object.assign(provider, p), { dispose: () => undefined }) },
    McpStdioServerDefinition: FakeMcpStdioServerDefinition,
  };
  const mcp = new McpRegistration(fakeVscode, () => FAKE_CONSOLE, '0', () => undefined);
  return { host, manager: new ConsoleManager(host, mcp), mcp };
}

describe('ConsoleManager', () => {
  it('opensExactlyOnePanelPerRunAndFocusesItOnSecondOpen', async () => {
    const { host, manager } = setup();
    const dir = await tempDir();
    const grant = await writeGrant(dir, { port: 41001 }, 'run-same');
    const otherFileSameRun = await writeGrant(dir, { port: 41001 }, 'run-same');
    const first = await manager.openForGrant(grant);
    assert.ok(first);
    await waitFor(() => host.panels.length === 1, 5000, 'panel');
    const second = await manager.openForGrant(grant);
    const third = await manager.openForGrant(otherFileSameRun);
    assert.equal(second, first);
    assert.equal(third, first);
    assert.equal(host.panels.length, 1);
    assert.equal(host.panels[0]?.reveals, 2);
    assert.equal(manager.size, 1);
    await manager.shutdown();
    assert.equal(pidAlive(first.process.pid), false);
  });

  it('handsTheCapabilityToTheWebviewByMessageOnlyAndPinsConnectSrc', async () => {
    const { host, manager, mcp } = setup();
    const dir = await tempDir();
    const capability = '5a'.repeat(32);
    const grant = await writeGrant(dir, { port: 41002, capability }, 'run-cap');
    await manager.openForGrant(grant);
    const panel = await waitFor(() => host.panels[0], 5000, 'panel');
    assert.ok(!panel.webview.html.includes(capability), 'capability in the HTML');
    assert.match(panel.webview.html, /connect-src ws:\/\/127\.0\.0\.1:41002;?"/);
    panel.fromWebview({ type: 'webview_ready' });
    const connect = panel.posted.find((m) => (m as ConnectInfo).type === 'connect') as ConnectInfo | undefined;
    assert.ok(connect);
    assert.equal(connect.capability, capability);
    assert.equal(connect.wsUrl, 'ws://127.0.0.1:41002');
    assert.equal(connect.run, 'run-cap');
    assert.equal(connect.task, 'task-1');
    assert.equal(connect.panel.title, 'Bench VM');
    assert.equal(mcp.run, 'run-cap', 'the MCP server is offered for the active run');
    await manager.shutdown();
    assert.equal(mcp.run, undefined, 'the MCP offer ends with the run');
  });

  it('usesTheExternalAddressWhenRemote', async () => {
    const { host, manager } = setup();
    host.externalUri = (u) => (u.authority === '127.0.0.1:41003' ? FakeUri.parse('https://ide.example.test/proxy/41003/') : u);
    const dir = await tempDir();
    await manager.openForGrant(await writeGrant(dir, { port: 41003 }, 'run-remote'));
    const panel = await waitFor(() => host.panels[0], 5000, 'panel');
    panel.fromWebview({ type: 'webview_ready' });
    const connect = panel.posted.find((m) => (m as ConnectInfo).type === 'connect') as ConnectInfo | undefined;
    assert.equal(connect?.wsUrl, 'wss://ide.example.test/proxy/41003/');
    assert.match(panel.webview.html, /connect-src ws:\/\/127\.0\.0\.1:41003 wss:\/\/ide\.example\.test\/proxy\/41003\/"/);
    await manager.shutdown();
  });

  it('closingThePanelEndsItsConsolePid', async () => {
    const { host, manager } = setup();
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, { port: 41004 }, 'run-close'));
    assert.ok(session);
    const panel = await waitFor(() => host.panels[0], 5000, 'panel');
    panel.dispose();
    await session.process.exit;
    assert.equal(pidAlive(session.process.pid), false);
    await waitFor(() => manager.size === 0, 2000, 'session removed');
  });

  it('panicFromThePanelEndsTheConsoleWithin100ms', async () => {
    const { host, manager } = setup();
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, { port: 41005, exitOnPanic: false }, 'run-panic'));
    assert.ok(session);
    const panel = await waitFor(() => host.panels[0], 5000, 'panel');
    await waitFor(() => session.currentPhase === 'SETUP', 5000, 'SETUP');
    const started = process.hrtime.bigint();
    panel.fromWebview({ type: 'request_panic' });
    await session.process.exit;
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(ms < 100, `panic took ${ms.toFixed(1)} ms`);
    assert.equal(pidAlive(session.process.pid), false);
    assert.ok(panel.posted.some((m) => JSON.stringify(m) === JSON.stringify({ type: 'host_phase', phase: 'CLOSED', reason: 'panic' })));
  });

  it('lockCommandGoesToTheConsoleStdin', async () => {
    const { host, manager } = setup();
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, { port: 41006 }, 'run-lock'));
    assert.ok(session);
    await waitFor(() => session.currentPhase === 'SETUP' && host.panels[0], 5000, 'SETUP');
    assert.equal(await manager.lock(), true);
    await waitFor(() => session.currentPhase === 'LOCKING', 5000, 'LOCKING');
    await manager.shutdown();
  });

  /** Two runs, each with its panel, both in SETUP; the second one opened last. */
  async function twoRuns(extra: Record<string, unknown> = {}) {
    const { host, manager } = setup();
    const dir = await tempDir();
    const recordA = `${dir}/a.json`;
    const recordB = `${dir}/b.json`;
    const grantA = await writeGrant(dir, { port: 41011, record: recordA, ...extra }, 'run-a');
    const grantB = await writeGrant(dir, { port: 41012, record: recordB, ...extra }, 'run-b');
    await fs.writeFile(grantB, (await fs.readFile(grantB, 'utf8')).replace('win11-bench', 'win11-other'));
    const a = await manager.openForGrant(grantA);
    await waitFor(() => host.panels.length === 1, 5000, 'the first panel'); // host.panels[0] is run-a's
    const b = await manager.openForGrant(grantB);
    assert.ok(a && b);
    await waitFor(() => a.currentPhase === 'SETUP' && b.currentPhase === 'SETUP' && host.panels.length === 2, 5000, 'two panels in SETUP');
    const [panelA, panelB] = host.panels;
    assert.ok(panelA && panelB);
    const stdin = async (file: string) => (await readRecord(file).catch(() => ({ stdin: [] as string[] }))).stdin;
    return { host, manager, a, b, panelA, panelB, stdin: { a: () => stdin(recordA), b: () => stdin(recordB) } };
  }

  it('locksTheRunInTheActivePanelAfterAConfirmationNamingItsRunAndVm', async () => {
    const { host, manager, a, panelA, panelB, stdin } = await twoRuns();
    panelA.setActive(true);
    panelB.setActive(false); // the last one opened is not the one in view
    assert.equal(await manager.lock(), true);
    assert.equal(host.picks.length, 0, 'no question when the panel in view says which run');
    assert.equal(host.confirms.length, 1);
    assert.match(host.confirms[0]?.message ?? '', /run-a/);
    assert.match(host.confirms[0]?.message ?? '', /win11-bench/);
    await waitFor(() => a.currentPhase === 'LOCKING', 5000, 'run-a LOCKING');
    assert.ok((await stdin.a()).includes('{"cmd":"lock"}'));
    assert.ok(!(await stdin.b()).includes('{"cmd":"lock"}'), 'the other run was locked');
    await manager.shutdown();
  });

  it('asksWhichRunToLockWhenNoPanelIsActiveAndLocksNothingWhenDeclined', async () => {
    const { host, manager, b, panelA, panelB, stdin } = await twoRuns();
    panelA.setActive(false);
    panelB.setActive(false);
    host.confirmAnswer = false;
    host.pickAnswer = 'run-b';
    assert.equal(await manager.lock(), false);
    assert.deepEqual(host.picks[0]?.items, ['win11-bench | run run-a', 'win11-other | run run-b']);
    assert.match(host.confirms[0]?.message ?? '', /run-b on VM win11-other/);
    host.confirmAnswer = true;
    assert.equal(await manager.lock(), true);
    await waitFor(() => b.currentPhase === 'LOCKING', 5000, 'run-b LOCKING');
    assert.ok(!(await stdin.a()).includes('{"cmd":"lock"}'));
    host.pickAnswer = undefined; // the operator dismissed the question
    assert.equal(await manager.lock(), false);
    await manager.shutdown();
  });

  it('closesAndPanicsOnlyTheRunInView', async () => {
    const { host, manager, a, b, panelA, panelB } = await twoRuns({ exitOnPanic: true });
    panelA.setActive(false);
    panelB.setActive(true);
    await manager.panic();
    await b.process.exit;
    assert.equal(a.ended, false, 'panic ended the run that was not in view');
    panelA.setActive(true);
    await manager.close();
    await a.process.exit;
    assert.equal(host.picks.length, 0);
    await manager.shutdown();
  });

  it('panicWithoutAPanelInViewOffersEveryConsole', async () => {
    const { host, manager, a, b, panelA, panelB } = await twoRuns();
    panelA.setActive(false);
    panelB.setActive(false);
    host.pickAnswer = 'Every console';
    await manager.panic();
    await Promise.all([a.process.exit, b.process.exit]);
    assert.equal(host.picks[0]?.items[0], 'Every console (2) | all runs in this window');
    await manager.shutdown();
  });

  it('showsThePhaseOfTheRunInViewInTheStatusBarAndEachTabTitle', async () => {
    const { host, manager, panelA, panelB } = await twoRuns({ lockRuns: true });
    panelA.setActive(true);
    panelB.setActive(false);
    await waitFor(() => host.statusItem.text.includes('win11-bench'), 2000, `status bar on run-a, not ${JSON.stringify(host.statusItem)}`);
    assert.equal(host.statusItem.text, '$(vm) SETUP · win11-bench +1');
    assert.equal(host.statusItem.visible, true);
    assert.deepEqual(host.statusItem.command, { id: 'guestConsole.showPanel', args: ['run-a'] });
    assert.equal(panelA.title, 'Bench VM — SETUP');
    panelA.fromWebview({ type: 'status', phase: 'SETUP', acked: 9, refused: 2 });
    assert.match(host.statusItem.tooltip, /acked 9 · refused 2/);
    panelA.setActive(false);
    panelB.setActive(true);
    assert.equal(host.statusItem.text, '$(vm) SETUP · win11-other +1');
    assert.equal(await manager.lock(), true);
    await waitFor(() => host.statusItem.text.startsWith('$(vm) CAPTURING'), 5000, 'CAPTURING in the status bar');
    assert.equal(host.statusItem.kind, 'warning');
    assert.match(host.statusItem.tooltip, /drained #12/);
    assert.equal(panelB.title, 'Bench VM — CAPTURING');
    assert.equal(panelA.title, 'Bench VM — SETUP');
    await manager.shutdown();
  });

  it('deactivationClosesEveryConsoleAsAWindowReloadWithoutNotifications', async () => {
    const { host, manager, stdin } = await twoRuns();
    await manager.shutdown();
    assert.ok((await stdin.a()).includes('{"cmd":"close","reason":"WINDOW_RELOAD"}'), JSON.stringify(await stdin.a()));
    assert.ok((await stdin.b()).includes('{"cmd":"close","reason":"WINDOW_RELOAD"}'));
    assert.deepEqual(host.notices, []);
  });
});
