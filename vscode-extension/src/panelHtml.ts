// The webview document and its Content-Security-Policy. Pure functions, so the browser
// test serves exactly what the extension hands to VS Code.

const CONNECT_SOURCE = /^wss?:\/\/[A-Za-z0-9.\-[\]:]+(?::\d{1,5})?(?:\/[A-Za-z0-9._~\-/%]*)?$/;

export interface PanelHtmlOptions {
  /** webview.cspSource: where the extension's own style sheet may come from. */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
  /** Exactly the console's WebSocket address(es): local and, when remote, the mapped one. */
  connectSources: readonly string[];
  title: string;
}

export function buildCsp(cspSource: string, nonce: string, connectSources: readonly string[]): string {
  if (!/^[A-Za-z0-9+/=]{16,}$/.test(nonce)) {
    throw new Error('nonce must be at least 16 base64/hex characters');
  }
  if (connectSources.length === 0) {
    throw new Error('connect-src needs the console address');
  }
  for (const src of connectSources) {
    if (!CONNECT_SOURCE.test(src) || src.includes('*')) {
      throw new Error(`refusing connect-src entry ${JSON.stringify(src)}`);
    }
  }
  return [
    "default-src 'none'",
    'img-src blob: data:',
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    // The frame worker (media/FramePresenter.ts) starts from a blob: URL holding its bundle.
    'worker-src blob:',
    `connect-src ${[...new Set(connectSources)].join(' ')}`,
  ].join('; ');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderPanelHtml(o: PanelHtmlOptions): string {
  const csp = buildCsp(o.cspSource, o.nonce, o.connectSources);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" nonce="${escapeHtml(o.nonce)}" href="${escapeHtml(o.styleUri)}">
<title>${escapeHtml(o.title)}</title>
</head>
<body>
<header id="bar">
  <div id="phase" class="phase" data-phase="CONNECTING" role="status" aria-live="polite">CONNECTING</div>
  <div id="identity" class="identity"><span id="vm">—</span><span id="grant"></span><span id="cert"></span></div>
  <div id="counters" class="counters">acked <span id="acked">0</span> · refused <span id="refused">0</span></div>
  <div id="keyboard" class="keyboard" data-owner="vscode" role="status" aria-live="polite">Keys: VS Code</div>
  <div class="actions">
    <span class="chords" role="group" aria-label="Keys the host keeps for itself, sent to the guest">
      <button id="send-cad" type="button" disabled>Send Ctrl+Alt+Del</button>
      <button id="send-win" type="button" disabled>Send Win</button>
      <button id="send-alttab" type="button" disabled>Send Alt+Tab</button>
    </span>
    <button id="lock" type="button" disabled>Lock and Start Capture</button>
    <button id="close" type="button">Close Console</button>
    <button id="panic" type="button" class="danger" title="Ctrl+Alt+Shift+P, also while the keys go to the guest">Panic</button>
  </div>
</header>
<div id="banner" class="banner" hidden></div>
<main id="stage" class="stage">
  <div id="viewport" class="viewport" tabindex="0" aria-label="Guest screen: click to type into the guest"><canvas id="screen" width="1" height="1"></canvas></div>
</main>
<script nonce="${escapeHtml(o.nonce)}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>
`;
}
