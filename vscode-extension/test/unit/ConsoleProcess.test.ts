import * as assert from 'assert/strict';
import { spawn as realSpawn } from 'child_process';
import type { SpawnOptions } from 'child_process';
import { readFileSync } from 'fs';
import { describe, it } from 'node:test';
import { join } from 'path';
import { buildConsoleArgv, buildConsoleEnv, ConsoleProcess, LineSplitter, SpawnFunction } from '../../src/ConsoleProcess';
import type { ControlEvent } from '../../shared/protocol';
import { FAKE_CONSOLE, PACKAGE_ROOT, pidAlive, readRecord, SENTINEL_SECRET, tempDir, waitFor, writeGrant } from '../helpers';

function harmlessChild(): SpawnFunction {
  // Stands in for the console: a real process that never exits by itself.
  return (_cmd, _args, options) => realSpawn(process.execPath, ['-e', 'setInterval(()=>{},1000)'], options);
}

describe('ConsoleProcess', () => {
  it('spawnsWithBoundedArgvAndNoSecretInArgvOrEnv', async () => {
    const dir = await tempDir();
    const record = `${dir}/record.json`;
    const grant = await writeGrant(dir, { record });
    const calls: Array<{ cmd: string; args: readonly string[]; options: SpawnOptions }> = [];
    const parentEnv = {
      PATH: process.env['PATH'],
      HOME: '/home/op',
      GITHUB_TOKEN: SENTINEL_SECRET,
      VSCODE_GIT_ASKPASS_MAIN: SENTINEL_SECRET,
      GC_PASSWORD: SENTINEL_SECRET,
      GC_CAPABILITY: SENTINEL_SECRET,
      GC_STATE_DIR: '/tmp/gc-state',
      SSH_AUTH_SOCK: SENTINEL_SECRET,
    };
    const proc = new ConsoleProcess({
      binaryPath: FAKE_CONSOLE,
      grantPath: grant,
      log: () => undefined,
      parentEnv,
      spawn: (cmd, args, options) => {
        calls.push({ cmd, args, options });
        return realSpawn(cmd, args, options);
      },
    });
    await waitFor(() => proc.pid > 0 && readRecord(record).catch(() => undefined), 5000, 'child record');
    await proc.terminate();
    const [call] = calls;
    assert.ok(call);
    assert.deepEqual(call.args, ['open', '--grant', grant]);
    assert.equal(call.options.shell, false);
    assert.deepEqual(Object.keys(call.options.env ?? {}).sort(), ['GC_STATE_DIR', 'HOME', 'PATH']);
    const seen = await readRecord(record);
    assert.deepEqual(seen.argv, ['open', '--grant', grant]);
    assert.ok(!JSON.stringify(seen).includes(SENTINEL_SECRET), 'the child saw a secret');
  });

  it('passesTheMachineScopedIssuerKeyAndTheUnsignedOptOut', () => {
    assert.deepEqual(buildConsoleArgv('/g.json', [], {}), ['open', '--grant', '/g.json']);
    assert.deepEqual(buildConsoleArgv('/g.json', [], { issuerKeyPath: '', allowUnsignedGrants: false }), ['open', '--grant', '/g.json']);
    assert.deepEqual(buildConsoleArgv('/g.json', ['http://127.0.0.1:1'], { issuerKeyPath: '/etc/k.pem', allowUnsignedGrants: true }), [
      'open', '--grant', '/g.json', '--allow-origin', 'http://127.0.0.1:1', '--issuer-key', '/etc/k.pem', '--allow-unsigned-grants',
    ]);
  });

  it('declaresTheTrustSettingsMachineScopedSoNoWorkspaceCanSetThem', () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { scope?: string; default?: unknown }> } };
    };
    const props = pkg.contributes.configuration.properties;
    assert.equal(props['guestConsole.issuerKeyPath']?.scope, 'machine');
    assert.equal(props['guestConsole.issuerKeyPath']?.default, '');
    assert.equal(props['guestConsole.allowUnsignedGrants']?.scope, 'machine');
    assert.equal(props['guestConsole.allowUnsignedGrants']?.default, false);
  });

  it('filtersSecretLookingVariablesEvenWithTheConsolePrefix', () => {
    const env = buildConsoleEnv({ GC_TOKEN: 'x', GC_API_KEY: 'x', GC_AUTH: 'x', GC_LOG_LEVEL: 'info', LANG: 'C.UTF-8', npm_config_x: 'y' });
    assert.deepEqual(Object.keys(env).sort(), ['GC_LOG_LEVEL', 'LANG']);
  });

  it('terminateEndsExactlyItsPidAndLeavesALookalikeAlive', async () => {
    const lookalike = realSpawn(process.execPath, ['-e', 'setInterval(()=>{},1000)'], { stdio: 'ignore' });
    try {
      const proc = new ConsoleProcess({ binaryPath: '/unused/guest-console', grantPath: '/nonexistent', log: () => undefined, spawn: harmlessChild() });
      assert.ok(proc.pid > 0);
      assert.ok(pidAlive(proc.pid));
      const exit = await proc.terminate(500);
      assert.equal(exit.signal, 'SIGTERM');
      assert.equal(pidAlive(proc.pid), false);
      assert.ok(lookalike.pid !== undefined && pidAlive(lookalike.pid), 'a process with the same command line was killed');
    } finally {
      lookalike.kill('SIGKILL');
    }
  });

  it('escalatesToSigkillWhenSigtermIsIgnored', async () => {
    const dir = await tempDir();
    const grant = await writeGrant(dir, { ignoreTerm: true, ignoreClose: true });
    const events: ControlEvent[] = [];
    const proc = new ConsoleProcess({ binaryPath: FAKE_CONSOLE, grantPath: grant, log: () => undefined });
    proc.onEvent((e) => events.push(e));
    await waitFor(() => events.some((e) => e.event === 'ready'), 5000, 'ready');
    const started = Date.now();
    const exit = await proc.terminate(300);
    assert.equal(exit.signal, 'SIGKILL');
    assert.ok(Date.now() - started >= 300, 'SIGKILL came before the grace period');
    assert.equal(pidAlive(proc.pid), false);
  });

  for (const exitOnPanic of [true, false]) {
    it(`panicWritesTheCommandAndThePidIsGoneWithin100ms (console ${exitOnPanic ? 'exits by itself' : 'hangs'})`, async () => {
      const dir = await tempDir();
      const record = `${dir}/record.json`;
      const grant = await writeGrant(dir, { record, exitOnPanic });
      const events: ControlEvent[] = [];
      const proc = new ConsoleProcess({ binaryPath: FAKE_CONSOLE, grantPath: grant, log: () => undefined, panicGraceMs: 40 });
      proc.onEvent((e) => events.push(e));
      await waitFor(() => events.some((e) => e.event === 'phase'), 5000, 'SETUP');
      const started = process.hrtime.bigint();
      await proc.panic();
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      assert.equal(pidAlive(proc.pid), false);
      assert.ok(ms < 100, `panic took ${ms.toFixed(1)} ms`);
      const seen = await readRecord(record);
      assert.ok(seen.stdin.includes('{"cmd":"panic"}'), 'panic command not received');
      console.log(`# panic latency (${exitOnPanic ? 'console exits' : 'SIGKILL path'}): ${ms.toFixed(1)} ms`);
    });
  }

  it('ignoresMalformedStdoutLinesAndLogsThemRedacted', async () => {
    const dir = await tempDir();
    const grant = await writeGrant(dir, { garbage: true, capability: 'ef'.repeat(32) });
    const logs: string[] = [];
    const events: ControlEvent[] = [];
    const proc = new ConsoleProcess({ binaryPath: FAKE_CONSOLE, grantPath: grant, log: (l) => logs.push(l), maxLineBytes: 4096 });
    proc.onEvent((e) => events.push(e));
    await waitFor(() => events.some((e) => e.event === 'phase'), 5000, 'SETUP');
    await proc.terminate();
    assert.deepEqual(
      events.map((e) => e.event),
      ['ready', 'phase', 'closed'],
    );
    const ready = events[0];
    assert.ok(ready?.event === 'ready' && ready.panel.capability === 'ef'.repeat(32));
    assert.equal(logs.filter((l) => /malformed|unexpected/.test(l)).length, 5);
    assert.equal(logs.filter((l) => /over 4096 bytes dropped/.test(l)).length, 1);
    assert.ok(!logs.join('\n').includes('ab'.repeat(32)), 'a capability-like value was logged');
    assert.ok(logs.every((l) => l.length < 400), 'a log line is unbounded');
  });

  it('splitsLinesAcrossChunksAndDropsOversizeLinesWhole', () => {
    const lines: string[] = [];
    let oversize = 0;
    const splitter = new LineSplitter(8, (l) => lines.push(l), () => oversize++);
    splitter.push(Buffer.from('ab'));
    splitter.push(Buffer.from('c\n0123456'));
    splitter.push(Buffer.from('789abc\nok\n'));
    splitter.push(Buffer.from('tail'));
    assert.deepEqual(lines, ['abc', 'ok']);
    assert.equal(oversize, 1);
  });

  it('reportsASpawnFailureAsAnExitWithoutThrowing', async () => {
    const logs: string[] = [];
    const proc = new ConsoleProcess({ binaryPath: '/nonexistent/guest-console', grantPath: '/x', log: (l) => logs.push(l) });
    const exit = await proc.exit;
    assert.equal(exit.code, null);
    assert.ok(logs.some((l) => l.includes('could not start')));
    assert.equal(proc.send({ cmd: 'lock' }), false);
  });
});
