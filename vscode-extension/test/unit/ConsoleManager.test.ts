import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { ConsoleManager } from '../../src/ConsoleManager';
import { McpRegistration } from '../../src/McpRegistration';
import type { ConnectInfo } from '../../shared/protocol';
import { FakeHost, FakeMcpStdioServerDefinition, FakeUri } from '../fakes/vscode';
import { FAKE_CONSOLE, pidAlive, tempDir, waitFor, writeGrant } from '../helpers';

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
    const { manager } = setup();
    const dir = await tempDir();
    const session = await manager.openForGrant(await writeGrant(dir, { port: 41006 }, 'run-lock'));
    assert.ok(session);
    await waitFor(() => session.currentPhase === 'SETUP', 5000, 'SETUP');
    assert.equal(manager.lock(), true);
    await waitFor(() => session.currentPhase === 'LOCKING', 5000, 'LOCKING');
    await manager.shutdown();
  });
});
