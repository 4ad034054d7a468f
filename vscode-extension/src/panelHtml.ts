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
  <div id="phase" class="phase" data-phase="CONNECTING" role="status" aria-live="polite" aria-atomic="true">CONNECTING</div>
  <div id="identity" class="identity" role="group" aria-label="The run this panel belongs to"><span id="vm" title="VM name">—</span><span id="uuid" title="VM UUID (first 8 digits)"></span><span id="desktop" title="Guest desktop size"></span><span id="grant" title="Grant digest prefix"></span><span id="cert" title="Guest certificate fingerprint prefix"></span></div>
  <div id="counters" class="counters" role="group" aria-label="Input counters">acked <span id="acked">0</span> · refused <span id="refused">0</span><span id="drained-at" hidden> · drained #<span id="drained"></span></span></div>
  <div id="keyboard" class="keyboard" data-owner="vscode" role="status" aria-live="polite">Keys: VS Code</div>
  <div class="actions">
    <span class="scale" role="group" aria-label="Picture size">
      <button id="scale-fit" type="button" aria-pressed="true" title="Shrink the guest's desktop to the panel, never beyond 100 %">Fit</button>
      <button id="scale-actual" type="button" aria-pressed="false" title="One desktop pixel on one screen pixel (scroll for the rest)">100 %</button>
      <span id="scale-now" class="scale-now"></span>
    </span>
    <span class="chords" role="group" aria-label="Keys the host keeps for itself, sent to the guest">
      <button id="send-cad" type="button" disabled>Send Ctrl+Alt+Del</button>
      <button id="send-win" type="button" disabled>Send Win</button>
      <button id="send-alttab" type="button" disabled>Send Alt+Tab</button>
    </span>
    <button id="lock" type="button" disabled>Lock and Start Capture</button>
    <button id="close" type="button" title="Ends this run: the grant is single use">Close Console</button>
    <button id="panic" type="button" class="danger" title="Ctrl+Alt+Shift+P, also while the keys go to the guest">Panic</button>
  </div>
</header>
<p id="notice" class="notice">One run per grant: Close, Panic, cancelling the sign-in and reloading the window each end this run, and the grant cannot be opened again.</p>
<div id="progress" class="progress" role="status" aria-live="polite" hidden><span id="progress-text"></span><span id="progress-elapsed" aria-hidden="true"></span></div>
<ol id="steps" class="steps" aria-label="Lock and capture" hidden>
  <li data-step="LOCKING" data-state="pending">Input closed</li>
  <li data-step="DRAINED" data-state="pending">Setup input delivered</li>
  <li data-step="CONFIRMED" data-state="pending">Guest confirmed the input</li>
  <li data-step="CAPTURED" data-state="pending">Desktop captured</li>
  <li data-step="ACTED" data-state="pending">Action performed</li>
</ol>
<div id="alert" class="alert" role="alert" hidden></div>
<div id="banner" class="banner" role="status" aria-live="polite" hidden></div>
<section id="summary" class="summary" aria-labelledby="summary-title" hidden>
  <h2 id="summary-title">Run summary</h2>
  <dl>
    <dt>Close reason</dt><dd id="summary-reason"></dd>
    <dt id="summary-next-label">Next step</dt><dd id="summary-next"></dd>
    <dt>Action</dt><dd id="summary-action">none</dd>
    <dt>Outcome</dt><dd id="summary-outcome">—</dd>
    <dt>Guest confirmation</dt><dd id="summary-confirmation">—</dd>
    <dt>Evidence</dt><dd><code id="summary-evidence">—</code></dd>
    <dt>Evidence head</dt><dd><code id="summary-head">—</code></dd>
  </dl>
  <div class="summary-actions">
    <button id="open-evidence" type="button" disabled>Open Evidence</button>
    <button id="verify-evidence" type="button" disabled>Verify Evidence</button>
  </div>
  <p id="verify-result" class="verify-result" role="status" aria-live="polite"></p>
</section>
<main id="stage" class="stage">
  <div id="viewport" class="viewport" tabindex="0" role="application" aria-roledescription="guest screen" aria-label="Guest screen: click to type into the guest"><canvas id="screen" width="1" height="1"></canvas></div>
</main>
<script nonce="${escapeHtml(o.nonce)}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>
`;
}
