// Loads the real bundle (dist/extension.js) with a stand-in `vscode` module and checks
// that what it registers matches what package.json contributes.
import * as assert from 'assert/strict';
import { readFileSync } from 'fs';
import Module = require('module');
import * as path from 'path';
import { describe, it } from 'node:test';
import { FakeUri } from '../fakes/vscode';
import { PACKAGE_ROOT } from '../helpers';

interface Manifest {
  engines: { vscode: string };
  main: string;
  contributes: { commands: Array<{ command: string }>; keybindings: Array<{ command: string }>; configuration: { properties: Record<string, unknown> } };
}

describe('extension bundle', () => {
  it('registersExactlyTheContributedCommandsAndDegradesWithoutMcpApi', async () => {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as Manifest;
    assert.equal(manifest.engines.vscode, '^1.100.0');
    const registered: string[] = [];
    const output: string[] = [];
    const fakeVscode = {
      window: {
        createOutputChannel: () => ({ appendLine: (l: string) => output.push(l), dispose: () => undefined }),
        createStatusBarItem: () => ({ show: () => undefined, hide: () => undefined, dispose: () => undefined }),
      },
      StatusBarAlignment: { Left: 1, Right: 2 },
      workspace: { getConfiguration: () => ({ get: <T>(_k: string, d: T) => d }) },
      commands: {
        registerCommand: (id: string) => {
          registered.push(id);
          return { dispose: () => undefined };
        },
      },
      env: {},
      Uri: FakeUri,
    };
    const load = (Module as unknown as { _load: (req: string, parent: unknown, isMain: boolean) => unknown })._load;
    (Module as unknown as { _load: typeof load })._load = (req, parent, isMain) => (req === 'vscode' ? fakeVscode : load(req, parent, isMain));
    try {
      const ext = require(path.join(PACKAGE_ROOT, manifest.main)) as { activate: (c: unknown) => void; deactivate: () => Promise<void> };
      const context = { subscriptions: [] as unknown[], extensionUri: FakeUri.file(PACKAGE_ROOT), extension: { packageJSON: manifest } };
      ext.activate(context);
      assert.deepEqual(registered.sort(), manifest.contributes.commands.map((c) => c.command).sort());
      assert.ok(manifest.contributes.keybindings.some((k) => k.command === 'guestConsole.panic'));
      assert.ok('guestConsole.binaryPath' in manifest.contributes.configuration.properties);
      assert.ok(output.some((l) => l.includes('MCP server registration is not available')));
      await ext.deactivate();
    } finally {
      (Module as unknown as { _load: typeof load })._load = load;
    }
  });
});
