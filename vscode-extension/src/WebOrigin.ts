// Which web origin the panel's webview presents to the console, so the extension can
// pass exactly that one with `--allow-origin`.
//
// Desktop VS Code serves webviews from `vscode-webview://<id>`, which the console accepts
// by itself: nothing to pass. A browser-hosted workbench (code-server, VS Code for the
// Web) serves them from a web origin, and the WebSocket handshake carries it. code-server
// 4.100.3 serves webviews from its own origin (the workbench's), so that is the origin
// to allow. The extension host runs on the server and cannot see the browser's address
// bar; what it can do is ask the workbench to turn a URI into one the browser can open:
// `asExternalUri` of a URI with the app's own scheme (`env.uriScheme`) is answered by the
// workbench (in the browser) with a callback URL on the workbench's origin. Verified in
// code-server 4.100.3 by the e2e test, which compares it with the page's location.origin.

import type * as vscode from 'vscode';
import type { HostUriFactory } from './HostApi';

/** vscode.UIKind.Web */
export const UI_KIND_WEB = 2;

export interface WebHostEnv {
  asExternalUri(target: vscode.Uri): PromiseLike<vscode.Uri>;
  uiKind?: number;
  uriScheme?: string;
}

// An origin as a browser sends it: scheme, host (DNS name, IPv4 or [IPv6]) and optional port.
const ORIGIN = /^https?:\/\/(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;
const URI_SCHEME = /^[a-z][a-z0-9+.-]{0,31}$/;

/** Normalises scheme://authority to an origin string, or undefined when it is not a web origin. */
export function toOrigin(scheme: string, authority: string): string | undefined {
  const s = scheme.toLowerCase();
  if (s !== 'http' && s !== 'https') {
    return undefined;
  }
  let host = authority.replace(/^[^@]*@/, ''); // never user info
  // A browser omits the default port in Origin.
  if ((s === 'http' && host.endsWith(':80')) || (s === 'https' && host.endsWith(':443'))) {
    host = host.slice(0, host.lastIndexOf(':'));
  }
  const origin = `${s}://${host.toLowerCase()}`;
  return ORIGIN.test(origin) ? origin : undefined;
}

/**
 * The origin to pass with `--allow-origin`, or undefined in a desktop window (or when the
 * workbench does not say; the panel is then refused with PANEL_ORIGIN and the log says why).
 */
export async function webviewOrigin(env: WebHostEnv, uri: HostUriFactory, extensionId: string, log: (line: string) => void): Promise<string | undefined> {
  if (env.uiKind !== UI_KIND_WEB) {
    return undefined;
  }
  const scheme = env.uriScheme ?? '';
  if (!URI_SCHEME.test(scheme)) {
    log(`web host without a usable uriScheme (${JSON.stringify(scheme)}); no --allow-origin`);
    return undefined;
  }
  try {
    const external = await env.asExternalUri(uri.parse(`${scheme}://${extensionId}/panel-origin`));
    const origin = toOrigin(external.scheme, external.authority);
    if (!origin) {
      log(`web host mapped the callback URI to ${external.scheme}://…, not a web origin; no --allow-origin`);
    }
    return origin;
  } catch (err) {
    log(`asExternalUri failed in a web host; no --allow-origin: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}
