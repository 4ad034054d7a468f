import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { buildCsp, renderPanelHtml } from '../../src/panelHtml';

const NONCE = 'bm9uY2Utbm9uY2Utbm9uY2U=';

describe('panel CSP', () => {
  it('allowsOnlyTheConsoleSocketForConnections', () => {
    const csp = buildCsp("'self' https://*.vscode-cdn.net", NONCE, ['ws://127.0.0.1:40123']);
    assert.equal(
      csp,
      `default-src 'none'; img-src blob: data:; style-src 'self' https://*.vscode-cdn.net 'nonce-${NONCE}'; script-src 'nonce-${NONCE}'; worker-src blob:; connect-src ws://127.0.0.1:40123`,
    );
    const connect = csp.split('; ').find((d) => d.startsWith('connect-src')) ?? '';
    assert.equal(connect, 'connect-src ws://127.0.0.1:40123');
    assert.ok(!connect.includes('*'));
    assert.ok(!/script-src[^;]*(unsafe|\*|https?:)/.test(csp));
  });

  for (const bad of ['*', 'ws://*:1234', 'ws:', 'http://127.0.0.1:1', 'ws://127.0.0.1:1 https://evil', "'self'", 'wss://*.example']) {
    it(`refusesConnectSource ${JSON.stringify(bad)}`, () => {
      assert.throws(() => buildCsp('x', NONCE, [bad]));
    });
  }

  it('refusesAnEmptyConnectSrcOrAShortNonce', () => {
    assert.throws(() => buildCsp('x', NONCE, []));
    assert.throws(() => buildCsp('x', 'abc', ['ws://127.0.0.1:1']));
  });

  it('putsTheNonceOnTheOnlyScriptAndNoInlineScript', () => {
    const html = renderPanelHtml({
      cspSource: 'vscode-resource:',
      nonce: NONCE,
      scriptUri: 'https://x/main.js',
      styleUri: 'https://x/view.css',
      connectSources: ['ws://127.0.0.1:1'],
      title: '<b>T</b>',
    });
    const scripts = html.match(/<script[^>]*>/g) ?? [];
    assert.deepEqual(scripts, [`<script nonce="${NONCE}" src="https://x/main.js">`]);
    assert.ok(html.includes('&#60;b&#62;T&#60;/b&#62;'), 'title is escaped');
    assert.ok(!/\son[a-z]+=/.test(html), 'no inline handlers');
  });

  it('rendersTheKeyboardIndicatorAndTheChordButtonsDisabledUntilSetup', () => {
    const html = renderPanelHtml({
      cspSource: 'vscode-resource:',
      nonce: NONCE,
      scriptUri: 'https://x/main.js',
      styleUri: 'https://x/view.css',
      connectSources: ['ws://127.0.0.1:1'],
      title: 'T',
    });
    assert.match(html, /<div id="keyboard" class="keyboard" data-owner="vscode" role="status"/);
    for (const id of ['send-cad', 'send-win', 'send-alttab', 'lock']) {
      assert.match(html, new RegExp(`<button id="${id}" type="button" disabled>`), id);
    }
  });
});
