// The one webview panel of one run. It renders the CSP'd document, hands the webview
// its connection details by postMessage (never in the HTML or a URL), and forwards the
// webview's button requests. Lives on the extension host's event loop.

import { randomBytes } from 'crypto';
import type * as vscode from 'vscode';
import type { ConnectInfo, HostToWebviewMessage, Phase, WebviewToHostMessage } from '../shared/protocol';
import { Disposable, Emitter } from './Disposable';
import type { HostApi } from './HostApi';
import { renderPanelHtml } from './panelHtml';

export const PANEL_VIEW_TYPE = 'guestConsole.panel';
const VIEW_COLUMN_ACTIVE = -1 as vscode.ViewColumn;

export class ConsolePanel extends Disposable {
  private readonly panel: vscode.WebviewPanel;
  private connectInfo: ConnectInfo | undefined;
  private lastPhase: { phase: Phase; reason: string } | undefined;
  private readonly onDidDisposeEmitter = this.register(new Emitter<void>());
  private readonly onRequestEmitter = this.register(new Emitter<'close' | 'panic'>());
  readonly onDidDispose = this.onDidDisposeEmitter.event;
  readonly onRequest = this.onRequestEmitter.event;

  constructor(
    private readonly host: HostApi,
    title: string,
    connectSources: readonly string[],
  ) {
    super();
    const mediaRoot = host.Uri.joinPath(host.extensionUri, 'dist', 'media');
    this.panel = host.window.createWebviewPanel(PANEL_VIEW_TYPE, title, VIEW_COLUMN_ACTIVE, {
      enableScripts: true,
      enableForms: false,
      enableCommandUris: false,
      localResourceRoots: [mediaRoot],
      // A hidden webview that reloads would reconnect with a second hello; keep it alive.
      retainContextWhenHidden: true,
    });
    const webview = this.panel.webview;
    webview.html = renderPanelHtml({
      cspSource: webview.cspSource,
      nonce: randomBytes(18).toString('base64'),
      scriptUri: webview.asWebviewUri(host.Uri.joinPath(mediaRoot, 'main.js')).toString(),
      styleUri: webview.asWebviewUri(host.Uri.joinPath(mediaRoot, 'view.css')).toString(),
      connectSources,
      title,
    });
    this.register(webview.onDidReceiveMessage((m: unknown) => this.handleMessage(m)));
    this.register(
      this.panel.onDidDispose(() => {
        this.onDidDisposeEmitter.fire();
        this.dispose();
      }),
    );
  }

  get visibleTitle(): string {
    return this.panel.title;
  }

  get active(): boolean {
    return this.panel.active;
  }

  reveal(): void {
    this.panel.reveal();
  }

  /** The webview asks for this once its script runs (webview_ready). */
  setConnectInfo(info: ConnectInfo): void {
    this.connectInfo = info;
  }

  showPhase(phase: Phase, reason: string): void {
    this.lastPhase = { phase, reason };
    this.post({ type: 'host_phase', phase, reason });
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    super.dispose();
    this.connectInfo = undefined;
    this.panel.dispose();
  }

  private post(message: HostToWebviewMessage): void {
    if (!this.isDisposed) {
      void this.panel.webview.postMessage(message);
    }
  }

  private handleMessage(raw: unknown): void {
    const message = raw as WebviewToHostMessage | undefined;
    switch (message?.type) {
      case 'webview_ready':
        if (this.connectInfo) {
          this.post(this.connectInfo);
        }
        if (this.lastPhase) {
          this.post({ type: 'host_phase', ...this.lastPhase });
        }
        break;
      case 'request_close':
        this.onRequestEmitter.fire('close');
        break;
      case 'request_panic':
        this.onRequestEmitter.fire('panic');
        break;
      case 'status':
        this.host.log(`panel: phase ${String(message.phase)}, acked ${Number(message.acked)}, refused ${Number(message.refused)}`);
        break;
      default:
        break;
    }
  }
}
