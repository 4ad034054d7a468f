// One run: the console child, its panel, the credential prompt and the MCP offer.
// Lives on the extension host's event loop.

import type { ControlEvent, Phase, ReadyEvent } from '../shared/protocol';
import { ConsoleExit, ConsoleProcess } from './ConsoleProcess';
import { ConsolePanel } from './ConsolePanel';
import { runCredentialFlow } from './CredentialFlow';
import { Disposable, Emitter } from './Disposable';
import type { GrantInfo } from './GrantInfo';
import type { HostApi } from './HostApi';
import type { McpRegistration } from './McpRegistration';
import { redact } from './redact';

export class ConsoleSession extends Disposable {
  readonly process: ConsoleProcess;
  private panelValue: ConsolePanel | undefined;
  private runId: string | undefined;
  private phase: Phase | 'STARTING' = 'STARTING';
  private askingCredentials = false;
  private closing: Promise<ConsoleExit> | undefined;
  private readonly onDidEndEmitter = this.register(new Emitter<ConsoleExit>());
  /** Fires once, when the console PID has exited. */
  readonly onDidEnd = this.onDidEndEmitter.event;

  constructor(
    private readonly host: HostApi,
    private readonly mcp: McpRegistration,
    readonly grant: GrantInfo,
    allowOrigins: readonly string[] = [],
  ) {
    super();
    const settings = host.settings();
    const options = {
      binaryPath: settings.binaryPath,
      grantPath: grant.path,
      allowOrigins,
      trust: { issuerKeyPath: settings.issuerKeyPath, allowUnsignedGrants: settings.allowUnsignedGrants },
      log: (line: string) => host.log(line),
      terminateGraceMs: settings.terminateGraceMs,
      panicGraceMs: settings.panicGraceMs,
      ...(host.spawn ? { spawn: host.spawn } : {}),
      ...(host.parentEnv ? { parentEnv: host.parentEnv } : {}),
    };
    this.process = this.register(new ConsoleProcess(options));
    host.log(`console started for ${grant.runId ?? grant.path} (pid ${this.process.pid})`);
    this.register(this.process.onEvent((e) => void this.handleEvent(e)));
    this.register(this.process.onExit((exit) => this.handleExit(exit)));
  }

  get run(): string | undefined {
    return this.runId;
  }

  get panel(): ConsolePanel | undefined {
    return this.panelValue;
  }

  get currentPhase(): Phase | 'STARTING' {
    return this.phase;
  }

  reveal(): void {
    this.panelValue?.reveal();
  }

  lock(): boolean {
    return this.process.send({ cmd: 'lock' });
  }

  /** Panic: fastest path to "this console is gone"; resolves once the PID exited. */
  async panic(): Promise<ConsoleExit> {
    const exit = this.process.panic();
    this.panelValue?.showPhase('CLOSED', 'panic');
    return exit;
  }

  /** Orderly close: ends exactly the console PID, awaits it, then closes the panel. */
  close(): Promise<ConsoleExit> {
    if (!this.closing) {
      this.closing = this.process.terminate().then((exit) => {
        this.panelValue?.dispose();
        return exit;
      });
    }
    return this.closing;
  }

  private async handleEvent(event: ControlEvent): Promise<void> {
    switch (event.event) {
      case 'ready':
        await this.openPanel(event);
        break;
      case 'credentials_required':
        await this.askCredentials(event.attempt, event.username);
        break;
      case 'phase':
        this.phase = event.phase;
        this.host.log(`phase ${event.phase}${event.reason ? ` (${redact(event.reason)})` : ''}`);
        this.panelValue?.showPhase(event.phase, event.reason ?? '');
        break;
      case 'receipt':
        this.host.log(`receipt recorded for run ${this.runId ?? '?'}`);
        void this.host.window.showInformationMessage('Guest Console: the action receipt was recorded.');
        break;
      case 'closed':
        this.phase = 'CLOSED';
        this.host.log(`console closed: ${redact(event.reason)}`);
        this.panelValue?.showPhase('CLOSED', event.reason);
        break;
      case 'error':
        this.host.log(`console error ${event.code}: ${redact(event.message)}`);
        void this.host.window.showErrorMessage(`Guest Console: ${event.code} — ${redact(event.message)}`);
        break;
    }
  }

  private async openPanel(ready: ReadyEvent): Promise<void> {
    if (this.panelValue || this.isDisposed) {
      return;
    }
    this.runId = ready.run;
    const port = ready.panel.port;
    const local = `ws://127.0.0.1:${port}`;
    let wsUrl = local;
    try {
      // Remote windows (SSH, WSL, code-server): the webview runs on the operator's machine.
      const external = await this.host.env.asExternalUri(this.host.Uri.parse(`http://127.0.0.1:${port}`));
      const scheme = external.scheme === 'https' ? 'wss' : 'ws';
      wsUrl = `${scheme}://${external.authority}${external.path === '/' ? '' : external.path}`;
    } catch (err) {
      this.host.log(`asExternalUri failed, using ${local}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.isDisposed) {
      return;
    }
    const panel = new ConsolePanel(this.host, this.grant.panel.title, [local, wsUrl]);
    this.panelValue = this.register(panel);
    panel.setConnectInfo({
      type: 'connect',
      wsUrl,
      run: ready.run,
      task: this.grant.taskId ?? '',
      capability: ready.panel.capability,
      clientVersion: this.host.extensionVersion,
      panel: this.grant.panel,
    });
    this.register(panel.onRequest((r) => void (r === 'panic' ? this.panic() : this.close())));
    this.register(
      panel.onDidDispose(() => {
        this.panelValue = undefined;
        void this.close();
      }),
    );
    this.mcp.setActiveRun(ready.run);
  }

  private async askCredentials(attempt: number, username: string | undefined): Promise<void> {
    if (this.askingCredentials) {
      return;
    }
    this.askingCredentials = true;
    try {
      const suggested = username ?? this.grant.username;
      const request = {
        attempt,
        ...(suggested !== undefined ? { username: suggested } : {}),
        ...(this.grant.vmName !== undefined ? { vmName: this.grant.vmName } : {}),
      };
      const outcome = await runCredentialFlow(this.host.window, this.process, request);
      if (outcome === 'cancelled') {
        this.host.log('sign-in cancelled; closing the console');
        await this.close();
      }
    } finally {
      this.askingCredentials = false;
    }
  }

  private handleExit(exit: ConsoleExit): void {
    this.phase = 'CLOSED';
    this.host.log(`console pid ${this.process.pid} exited (${exit.signal ?? `code ${String(exit.code)}`})`);
    if (this.runId !== undefined) {
      this.mcp.clearRun(this.runId);
    }
    this.panelValue?.showPhase('CLOSED', exit.signal ? `console ended (${exit.signal})` : 'console ended');
    this.onDidEndEmitter.fire(exit);
  }
}
