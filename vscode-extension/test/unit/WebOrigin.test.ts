import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { buildConsoleArgv } from '../../src/ConsoleProcess';
import type { HostUriFactory } from '../../src/HostApi';
import { toOrigin, UI_KIND_WEB, webviewOrigin, type WebHostEnv } from '../../src/WebOrigin';
import { ConsoleManager } from '../../src/ConsoleManager';
import { McpRegistration } from '../../src/McpRegistration';
import { FakeHost, FakeUri } from '../fakes/vscode';
import { FAKE_CONSOLE, readRecord, tempDir, waitFor, writeGrant } from '../helpers';

const Uri = FakeUri as unknown as HostUriFactory;

function env(over: Partial<WebHostEnv> & { map?: (u: FakeUri) => FakeUri }): WebHostEnv & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    uiKind: over.uiKind,
    uriScheme: over.uriScheme,
    asExternalUri: (u: vscode.Uri) => {
      asked.push(u.toString());
      return Promise.resolve((over.map ? over.map(u as unknown as FakeUri) : u) as vscode.Uri);
    },
  };
}

describe('WebOrigin', () => {
  it('passesNoOriginInADesktopWindow', async () => {
    const e = env({ uiKind: 1, uriScheme: 'vscode' });
    assert.equal(await webviewOrigin(e, Uri, 'guest-console.guest-console', () => undefined), undefined);
    assert.deepEqual(e.asked, []);
  });

  it('asksTheWorkbenchToMapItsOwnSchemeAndKeepsOnlyTheOrigin', async () => {
    const e = env({
      uiKind: UI_KIND_WEB,
      uriScheme: 'code-oss',
      map: () => FakeUri.parse('http://127.0.0.1:8123/callback?vscode-reqid=1&vscode-scheme=code-oss'),
    });
    assert.equal(await webviewOrigin(e, Uri, 'guest-console.guest-console', () => undefined), 'http://127.0.0.1:8123');
    assert.deepEqual(e.asked, ['code-oss://guest-console.guest-console/panel-origin']);
  });

  it('refusesAnythingButAWebOrigin', async () => {
    const logs: string[] = [];
    const unmapped = env({ uiKind: UI_KIND_WEB, uriScheme: 'code-oss' });
    assert.equal(await webviewOrigin(unmapped, Uri, 'a.b', (l) => logs.push(l)), undefined);
    const badScheme = env({ uiKind: UI_KIND_WEB, uriScheme: 'x y' });
    assert.equal(await webviewOrigin(badScheme, Uri, 'a.b', (l) => logs.push(l)), undefined);
    assert.deepEqual(badScheme.asked, []);
    const failing: WebHostEnv = { uiKind: UI_KIND_WEB, uriScheme: 'code-oss', asExternalUri: () => Promise.reject(new Error('no')) };
    assert.equal(await webviewOrigin(failing, Uri, 'a.b', (l) => logs.push(l)), undefined);
    assert.equal(logs.length, 3);
  });

  const cases: Array<[string, string, string | undefined]> = [
    ['https', 'ide.example.com', 'https://ide.example.com'],
    ['https', 'IDE.Example.com:443', 'https://ide.example.com'],
    ['http', '127.0.0.1:80', 'http://127.0.0.1'],
    ['http', 'user:pw@127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http', '[::1]:8080', 'http://[::1]:8080'],
    ['vscode-webview', 'abc', undefined],
    ['file', '', undefined],
    ['http', '', undefined],
    ['http', 'a b', undefined],
    ['http', 'evil.com/x', undefined],
    ['http', '*.example.com', undefined],
  ];
  for (const [scheme, authority, expected] of cases) {
    it(`normalisesTheOriginOf ${scheme}://${authority}`, () => {
      assert.equal(toOrigin(scheme, authority), expected);
    });
  }

  it('putsEachAllowedOriginBehindItsOwnFlag', () => {
    assert.deepEqual(buildConsoleArgv('/g.json'), ['open', '--grant', '/g.json']);
    assert.deepEqual(buildConsoleArgv('/g.json', ['http://127.0.0.1:8123']), ['open', '--grant', '/g.json', '--allow-origin', 'http://127.0.0.1:8123']);
  });

  it('spawnsTheConsoleWithTheWorkbenchOriginInAWebHostAndWithoutInADesktopOne', async () => {
    for (const web of [true, false]) {
      const host = new FakeHost();
      host.settingsValue = { ...host.settingsValue, binaryPath: FAKE_CONSOLE };
      Object.assign(host.env, { uiKind: web ? UI_KIND_WEB : 1, uriScheme: 'code-oss' });
      host.externalUri = (u) => (u.scheme === 'code-oss' ? FakeUri.parse('https://ide.example.com/callback?vscode-reqid=7') : u);
      const manager = new ConsoleManager(host, new McpRegistration(undefined, () => FAKE_CONSOLE, '0', () => undefined));
      const dir = await tempDir();
      const record = `${dir}/record.json`;
      const session = await manager.openForGrant(await writeGrant(dir, { record }));
      assert.ok(session);
      const seen = await waitFor(() => readRecord(record).catch(() => undefined), 5000, 'child record');
      assert.deepEqual(seen.argv.slice(3), web ? ['--allow-origin', 'https://ide.example.com'] : []);
      await manager.shutdown();
    }
  });
});
