import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { MCP_PROVIDER_ID, McpRegistration } from '../../src/McpRegistration';
import { FakeMcpStdioServerDefinition } from '../fakes/vscode';

describe('McpRegistration', () => {
  it('offersOnlyTheActiveRunsServer', () => {
    let registeredId = '';
    let provider: { provideMcpServerDefinitions(): unknown[]; onDidChangeMcpServerDefinitions(l: () => void): unknown } | undefined;
    const api = {
      lm: {
        registerMcpServerDefinitionProvider: (id: string, p: typeof provider) => {
          registeredId = id;
          provider = p;
          return { dispose: () => undefined };
        },
      },
      McpStdioServerDefinition: FakeMcpStdioServerDefinition,
    };
    const reg = new McpRegistration(api, () => '/opt/gc/guest-console', '1.2.3', () => undefined);
    assert.equal(reg.available, true);
    assert.equal(registeredId, MCP_PROVIDER_ID);
    let changes = 0;
    provider?.onDidChangeMcpServerDefinitions(() => changes++);
    assert.deepEqual(provider?.provideMcpServerDefinitions(), []);
    reg.setActiveRun('run-42');
    const [def] = (provider?.provideMcpServerDefinitions() ?? []) as FakeMcpStdioServerDefinition[];
    assert.equal(def?.command, '/opt/gc/guest-console');
    assert.deepEqual(def?.args, ['mcp', '--run', 'run-42']);
    assert.deepEqual(def?.env, {});
    reg.clearRun('other-run');
    assert.equal(reg.run, 'run-42');
    reg.clearRun('run-42');
    assert.deepEqual(provider?.provideMcpServerDefinitions(), []);
    assert.equal(changes, 2);
    reg.dispose();
  });

  it('degradesWhenTheApiIsAbsent', () => {
    const logs: string[] = [];
    for (const api of [undefined, {}, { lm: {} }, { lm: { registerMcpServerDefinitionProvider: () => ({ dispose() {} }) } }]) {
      const reg = new McpRegistration(api, () => 'gc', '1', (l) => logs.push(l));
      assert.equal(reg.available, false);
      reg.setActiveRun('r');
      reg.dispose();
    }
    assert.equal(logs.length, 4);
  });

  it('degradesWhenRegistrationThrows', () => {
    const api = {
      lm: { registerMcpServerDefinitionProvider: () => { throw new Error('proposed API'); } },
      McpStdioServerDefinition: FakeMcpStdioServerDefinition,
    };
    const reg = new McpRegistration(api, () => 'gc', '1', () => undefined);
    assert.equal(reg.available, false);
  });
});
