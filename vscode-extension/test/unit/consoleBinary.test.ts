import * as assert from 'assert/strict';
import { spawn as realSpawn } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import { describe, it } from 'node:test';
import { ConsoleProcess, INSTALLED_BIN_DIRS, resolveConsoleBinary, SpawnFunction } from '../../src/ConsoleProcess';
import { tempDir } from '../helpers';

/** `dir/name` as a file with the given mode. */
async function file(dir: string, name: string, mode: number): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const f = path.join(dir, name);
  await fs.writeFile(f, '#!/bin/sh\nexit 0\n', { mode });
  return f;
}

describe('resolveConsoleBinary (guestConsole.binaryPath)', () => {
  it('looksInUsrBinWhereThePackageInstallsItWhenPathIsEmpty', () => {
    // sh stands in for the console: a command every Debian machine has in /usr/bin.
    assert.deepEqual(INSTALLED_BIN_DIRS, ['/usr/bin']);
    assert.deepEqual(resolveConsoleBinary('sh', { PATH: '' }), { ok: true, path: '/usr/bin/sh' });
  });

  it('resolvesABareNameToTheFirstExecutableFileInPathsAbsoluteDirectories', async () => {
    const root = await tempDir();
    await file(path.join(root, 'not-executable'), 'guest-console', 0o644);
    await fs.mkdir(path.join(root, 'a-directory', 'guest-console'), { recursive: true });
    const wanted = await file(path.join(root, 'bin'), 'guest-console', 0o755);
    const later = await file(path.join(root, 'later'), 'guest-console', 0o755);
    const PATH = ['not-executable', 'a-directory', 'bin', 'later'].map((d) => path.join(root, d)).join(':');
    assert.deepEqual(resolveConsoleBinary('guest-console', { PATH }, []), { ok: true, path: wanted });
    assert.notEqual(wanted, later);
  });

  it('skipsRelativePathEntriesThatWouldDependOnTheWorkingDirectory', async (t) => {
    const root = await tempDir();
    await file(path.join(root, 'rel'), 'guest-console', 0o755);
    await file(root, 'guest-console', 0o755);
    const cwd = process.cwd();
    process.chdir(root);
    t.after(() => process.chdir(cwd));
    const result = resolveConsoleBinary('guest-console', { PATH: 'rel::.' }, []);
    assert.equal(result.ok, false);
  });

  it('fallsBackToTheInstalledLocationWhenPathLacksIt', async () => {
    const root = await tempDir();
    const installed = await file(path.join(root, 'usr-bin'), 'guest-console', 0o755);
    assert.deepEqual(resolveConsoleBinary('guest-console', { PATH: '/nonexistent-dir' }, [path.join(root, 'usr-bin')]), {
      ok: true,
      path: installed,
    });
    assert.deepEqual(resolveConsoleBinary('guest-console', {}, [path.join(root, 'usr-bin')]), { ok: true, path: installed });
  });

  it('takesAnAbsolutePathAsGivenAndRefusesARelativeOne', () => {
    assert.deepEqual(resolveConsoleBinary('/opt/gc/bin/guest-console', { PATH: '' }, []), { ok: true, path: '/opt/gc/bin/guest-console' });
    for (const setting of ['./guest-console', 'build/release/bin/guest-console', '']) {
      const result = resolveConsoleBinary(setting, { PATH: '/usr/bin' });
      assert.equal(result.ok, false, setting);
    }
  });

  it('namesWhereItLookedWhenNothingIsFound', () => {
    const result = resolveConsoleBinary('guest-console-nowhere', { PATH: '/nonexistent-dir' }, ['/nonexistent-installed']);
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.reason, /guest-console-nowhere.*PATH.*\/nonexistent-installed/);
  });

  it('spawnsTheResolvedAbsolutePathAndNothingWhenUnresolved', async () => {
    const root = await tempDir();
    const found = await file(path.join(root, 'bin'), 'guest-console', 0o755);
    const spawned: string[] = [];
    const spawn: SpawnFunction = (cmd, _args, options) => {
      spawned.push(cmd);
      return realSpawn(process.execPath, ['-e', ''], options);
    };
    const started = new ConsoleProcess({ binaryPath: 'guest-console', grantPath: '/g.json', log: () => undefined, parentEnv: { PATH: path.join(root, 'bin') }, spawn });
    assert.equal((await started.exit).code, 0);
    assert.deepEqual(spawned, [found]);

    const logs: string[] = [];
    const proc = new ConsoleProcess({ binaryPath: 'bin/guest-console', grantPath: '/g.json', log: (l) => logs.push(l), parentEnv: { PATH: root }, spawn });
    let fired = false;
    proc.onExit(() => (fired = true));
    const exit = await proc.exit;
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(exit, { code: null, signal: null, startFailure: 'guestConsole.binaryPath must be an absolute path or a command name, not "bin/guest-console"' });
    assert.ok(fired, 'onExit fired for a console that could not start');
    assert.deepEqual(spawned, [found]);
    assert.equal(proc.pid, -1);
    assert.equal(proc.send({ cmd: 'lock' }), false);
    assert.ok(logs.some((l) => l.includes('could not start') && l.includes('absolute path or a command name')), JSON.stringify(logs));
  });
});
