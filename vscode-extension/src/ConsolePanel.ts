// The one webview panel of one run. It renders the CSP'd document, hands the webview
// its connection details by postMessage (never in the HTML or a URL), keeps the tab title on
// the run's phase, and forwards the webview's button requests and counters. Lives on the
// extension host's event loop.

import { randomBytes } from 'crypto';
import type * as vscode from 'vscode';
import type { ConnectInfo, HostToWebviewMessage, PanelStatus, Phase, RunSummary, WebviewToHostMessage } from '../shared/protocol';
import { Disposable, Emitter } from './Disposable';
import type { HostApi } from './HostApi';
import { renderPanelHtml } from './panelHtml';

export const PANEL_VIEW_TYPE = 'guestConsole.panel';
export type PanelRequest = 'close' | 'panic' | 'open_evidence' | 'verify_evidence';
const VIEW_COLUMN_ACTIVE = -1 as vscode.ViewColumn;

export class ConsolePanel extends Disposable {
  private readonly panel: vscode.WebviewPanel;
  private connectInfo: ConnectInfo | undefined;
  private lastPhase: { phase: Phase; reason: string } | undefined;
  private lastProgress: string | undefined;
  private lastSummary: RunSummary | undefined;
  private readonly onDidDisposeEmitter = this.register(new Emitter<void>());
  private readonly onRequestEmitter = this.register(new Emitter<PanelRequest>());
  private readonly onStatusEmitter = this.register(new Emitter<PanelStatus>());
  private readonly onDidChangeActiveEmitter = this.register(new Emitter<boolean>());
  readonly onDidDispose = this.onDidDisposeEmitter.event;
  readonly onRequest = this.onRequestEmitter.event;
  /** The webview's counters (acked, refused) whenever they change. */
  readonly onStatus = this.onStatusEmitter.event;
  /** The tab became (or stopped being) the active editor. */
  readonly onDidChangeActive = this.onDidChangeActiveEmitter.event;

  constructor(
    private readonly host: HostApi,
    private readonly baseTitle: string,
    connectSources: readonly string[],
  ) {
    super();
    const title = baseTitle;
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
    this.register(this.panel.onDidChangeViewState(() => this.onDidChangeActiveEmitter.fire(this.panel.active)));
    this.register(this.panel.onDidDispose(() => this.dispose()));
  }

  get visibleTitle(): string {
    return this.panel.title;
  }

  get active(): boolean {
    return !this.isDisposed && this.panel.active;
  }

  reveal(): void {
    this.panel.reveal();
  }

  /** The webview asks for this once its script runs (webview_ready). */
  setConnectInfo(info: ConnectInfo): void {
    this.connectInfo = info;
  }

  /** The tab title: the grant's title and where the run stands, e.g. "Bench VM — READ-ONLY". */
  setStage(label: string): void {
    if (!this.isDisposed) {
      this.panel.title = `${this.baseTitle} — ${label}`;
    }
  }

  showPhase(phase: Phase, reason: string): void {
    this.lastPhase = { phase, reason };
    this.post({ type: 'host_phase', phase, reason });
  }

  /** Before the guest connects: what is happening (connecting, signing in). */
  showProgress(text: string): void {
    this.lastProgress = text;
    this.post({ type: 'host_progress', text });
  }

  /** After the run: its close reason, the receipt and the evidence. */
  showSummary(summary: RunSummary): void {
    this.lastSummary = summary;
    this.post({ type: 'host_summary', summary });
  }

  showVerification(ok: boolean, text: string): void {
    this.post({ type: 'host_verify', ok, text });
  }

  /** Closes the tab; also when VS Code closed it. Either way onDidDispose fires, once. */
  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.onDidDisposeEmitter.fire();
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
        if (this.lastProgress !== undefined) {
          this.post({ type: 'host_progress', text: this.lastProgress });
        }
        if (this.lastPhase) {
          this.post({ type: 'host_phase', ...this.lastPhase });
        }
        if (this.lastSummary) {
          this.post({ type: 'host_summary', summary: this.lastSummary });
        }
        break;
      case 'request_close':
        this.onRequestEmitter.fire('close');
        break;
      case 'request_panic':
        this.onRequestEmitter.fire('panic');
        break;
      case 'request_open_evidence':
        this.onRequestEmitter.fire('open_evidence');
        break;
      case 'request_verify_evidence':
        this.onRequestEmitter.fire('verify_evidence');
        break;
      case 'status': {
        const count = (n: unknown): number => (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0);
        this.onStatusEmitter.fire({ type: 'status', phase: message.phase, acked: count(message.acked), refused: count(message.refused) });
        break;
      }
      default:
        break;
    }
  }
}
