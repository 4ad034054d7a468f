// One run: the console child, its panel, the credential prompt, the MCP offer, and what the
// operator is told about it outside the panel — where it stands (stage, counters, progress
// steps) and every failure and close as a notification with its next step.
// Lives on the extension host's event loop.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { CloseReason, ControlEvent, Phase, ReadyEvent, ReceiptEvent, ReceiptSummary, RunSummary } from '../shared/protocol';
import { PHASE_LABELS } from '../shared/protocol';
import { buildConsoleEnv, ConsoleExit, ConsoleProcess, resolveConsoleBinary } from './ConsoleProcess';
import { ConsolePanel, PanelRequest } from './ConsolePanel';
import { runCredentialFlow } from './CredentialFlow';
import { Disposable, Emitter } from './Disposable';
import type { GrantInfo } from './GrantInfo';
import type { HostApi, ProgressReport } from './HostApi';
import type { McpRegistration } from './McpRegistration';
import { redact } from './redact';
import {
  credentialWords,
  NoticeAction,
  NoticeContext,
  nextStep,
  refusalHeadline,
  refusalNotice,
  RunNotice,
  startFailureNotice,
  unexpectedExitNotice,
} from './RunNotice';

/** Where a run stands, as the tab title and the status bar say it. */
export type Stage = 'CONNECTING' | 'SIGN-IN' | 'SIGNING IN' | Phase;

export function stageLabel(stage: Stage): string {
  return stage in PHASE_LABELS ? PHASE_LABELS[stage as Phase] : stage;
}

/** One progress indicator that lasts until end() (or until the next one replaces it). */
class ProgressStep {
  private report: ProgressReport | undefined;
  private finish: (() => void) | undefined;
  private pending: string | undefined;
  key: string | undefined;

  constructor(private readonly host: HostApi) {}

  /** Starts the step `key` (unless it runs already) and shows `message` in it. */
  show(key: string, where: 'notification' | 'window', title: string, message: string): void {
    if (this.key !== key) {
      this.end();
      this.key = key;
      this.pending = message;
      this.host.progress(where, title, (report) => {
        this.report = report;
        if (this.pending !== undefined) report(this.pending);
        return new Promise<void>((resolve) => (this.finish = resolve));
      });
      return;
    }
    this.pending = message;
    this.report?.(message);
  }

  end(): void {
    this.finish?.();
    this.finish = undefined;
    this.report = undefined;
    this.pending = undefined;
    this.key = undefined;
  }
}

function receiptSummary(receipt: ReceiptEvent): ReceiptSummary {
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const failure = receipt['failure'] as { code?: unknown; message?: unknown } | undefined;
  const summary: ReceiptSummary = {
    action: str(receipt['action']) ?? '?',
    outcome: str(receipt['outcome']) ?? '?',
    confirmation: receipt['guest_confirmed'] === true ? 'confirmed' : (str(receipt['confirmation']) ?? 'unconfirmed'),
  };
  if (failure && typeof failure === 'object') summary.failure = [str(failure.code), str(failure.message)].filter(Boolean).join(': ');
  const ms = num(receipt['confirm_ms']);
  if (ms !== undefined) summary.confirmMs = ms;
  const sent = num(receipt['events_sent']);
  if (sent !== undefined) summary.eventsSent = sent;
  return summary;
}

export class ConsoleSession extends Disposable {
  readonly process: ConsoleProcess;
  private panelValue: ConsolePanel | undefined;
  private runId: string | undefined;
  private vm: string | undefined;
  private phase: Phase | 'STARTING' = 'STARTING';
  private stageValue: Stage = 'CONNECTING';
  private askingCredentials = false;
  private closing: Promise<ConsoleExit> | undefined;
  /** Deactivating: the window is going away, nobody would see a notification. */
  private quiet = false;
  private panicked = false;
  /** A refusal that ended the open was reported (its `error`): the exit needs no notice. */
  private endReported = false;
  private maxAttempts: number | undefined;
  private attempt = 0;
  private lastAuthFailure: string | undefined;
  private counts = { acked: 0, refused: 0 };
  private drainedUpto: number | undefined;
  private receipt: ReceiptSummary | undefined;
  private summaryValue: RunSummary | undefined;
  private readonly step: ProgressStep;
  private readonly onDidEndEmitter = this.register(new Emitter<ConsoleExit>());
  private readonly onDidChangeEmitter = this.register(new Emitter<void>());
  /** Fires once, when the console PID has exited. */
  readonly onDidEnd = this.onDidEndEmitter.event;
  /** The stage, the counters or the panel's focus changed. */
  readonly onDidChange = this.onDidChangeEmitter.event;

  constructor(
    private readonly host: HostApi,
    private readonly mcp: McpRegistration,
    readonly grant: GrantInfo,
    allowOrigins: readonly string[] = [],
  ) {
    super();
    this.step = new ProgressStep(host);
    this.vm = grant.vmName;
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
    if (this.process.pid > 0) {
      this.step.show('connect', 'notification', this.progressTitle(), 'Checking the grant and binding the VM…');
    }
  }

  get run(): string | undefined {
    return this.runId ?? this.grant.runId;
  }

  get vmName(): string {
    return this.vm ?? this.grant.vmName ?? 'the VM';
  }

  get panel(): ConsolePanel | undefined {
    return this.panelValue;
  }

  get currentPhase(): Phase | 'STARTING' {
    return this.phase;
  }

  get stage(): Stage {
    return this.stageValue;
  }

  get counters(): { acked: number; refused: number; drained: number | undefined } {
    return { ...this.counts, drained: this.drainedUpto };
  }

  /** The run's end (close reason, receipt, evidence), once known. */
  get summary(): RunSummary | undefined {
    return this.summaryValue;
  }

  get ended(): boolean {
    return this.process.exited;
  }

  reveal(): void {
    this.panelValue?.reveal();
  }

  lock(): boolean {
    return this.process.send({ cmd: 'lock' });
  }

  /** Panic: fastest path to "this console is gone"; resolves once the PID exited. */
  async panic(): Promise<ConsoleExit> {
    this.panicked = true;
    const exit = this.process.panic();
    this.panelValue?.showPhase('CLOSED', 'panic');
    return exit;
  }

  /**
   * Orderly close: ends exactly the console PID, awaits it, then closes the panel. `reason`
   * is what the console records (OPERATOR_CLOSE unless the sign-in was cancelled or the
   * window is going away).
   */
  close(reason: CloseReason = 'OPERATOR_CLOSE'): Promise<ConsoleExit> {
    if (reason === 'WINDOW_RELOAD') {
      this.quiet = true;
    }
    if (!this.closing) {
      this.closing = this.process.terminate(undefined, reason).then((exit) => {
        // A run that ended by itself keeps its panel (the summary); the operator's close does not.
        if (reason !== 'AUTH_CANCELLED') {
          this.panelValue?.dispose();
        }
        return exit;
      });
    }
    return this.closing;
  }

  private progressTitle(): string {
    return `Guest Console — ${this.vmName}`;
  }

  private setStage(stage: Stage): void {
    this.stageValue = stage;
    this.panelValue?.setStage(stageLabel(stage));
    this.onDidChangeEmitter.fire();
  }

  private noticeContext(extra: Partial<NoticeContext> = {}): NoticeContext {
    return { vm: this.vmName, grantSpent: this.runId !== undefined, ...extra };
  }

  private async handleEvent(event: ControlEvent): Promise<void> {
    switch (event.event) {
      case 'ready':
        this.vm = event.vm || this.vm;
        this.step.show('connect', 'notification', this.progressTitle(), 'The grant checked out; connecting to the guest…');
        await this.openPanel(event);
        break;
      case 'credentials_required':
        if (event.max_attempts !== undefined) this.maxAttempts = event.max_attempts;
        this.attempt = event.attempt;
        this.step.end();
        this.setStage('SIGN-IN');
        this.panelValue?.showProgress(`Sign in to ${this.vmName} in the boxes VS Code shows${this.attemptText()}.`);
        await this.askCredentials(event.attempt, event.username);
        break;
      case 'phase':
        this.onPhase(event.phase, event.reason ?? '');
        break;
      case 'drained':
        this.drainedUpto = event.upto;
        this.host.log(`drained up to #${event.upto}`);
        if (this.step.key === 'lock') {
          this.step.show('lock', 'notification', this.progressTitle(), `All setup input delivered (up to #${event.upto}); committing the lock…`);
        }
        this.onDidChangeEmitter.fire();
        break;
      case 'receipt':
        this.receipt = receiptSummary(event);
        this.host.log(`receipt for run ${this.run ?? '?'}: ${this.receipt.action} ${this.receipt.outcome}, guest ${this.receipt.confirmation}`);
        break;
      case 'closed':
        this.onClosed(event.reason, event.message ?? '', event.evidence ?? '', event.evidence_head ?? '');
        break;
      case 'error':
        this.onError(event.code, event.message, event.evidence);
        break;
    }
  }

  private attemptText(): string {
    return this.attempt > 1 ? ` (attempt ${this.attempt}${this.maxAttempts ? ` of ${this.maxAttempts}` : ''})` : '';
  }

  private onPhase(phase: Phase, reason: string): void {
    this.phase = phase;
    this.host.log(`phase ${phase}${reason ? ` (${redact(reason)})` : ''}`);
    this.panelValue?.showPhase(phase, reason);
    this.setStage(phase);
    const title = this.progressTitle();
    switch (phase) {
      case 'SETUP':
        this.step.end();
        break;
      case 'LOCKING':
        this.step.show('lock', 'notification', title, 'Locking: input is closed; delivering the setup input to the guest…');
        break;
      case 'READ_ONLY':
        this.step.show('lock', 'notification', title, `Setup input delivered${this.drainedUpto !== undefined ? ` (up to #${this.drainedUpto})` : ''}; waiting for the guest to confirm it processed it…`);
        break;
      case 'CAPTURING':
        this.step.show('capture', 'window', title, 'the guest confirmed; waiting for the model to capture the desktop');
        break;
      case 'REVIEWING':
        this.step.show('capture', 'window', title, 'the model captured the desktop; waiting for its one action');
        break;
      case 'ACTION':
        this.step.show('capture', 'window', title, 'the action is running');
        break;
      case 'CLOSED':
        this.step.end();
        break;
    }
  }

  private onError(code: string, message: string, evidence: string | undefined): void {
    this.host.log(`console error ${code}: ${redact(message)}`);
    const ctx = this.noticeContext({ ...(evidence ? { evidence } : {}), attempt: this.attempt, ...(this.maxAttempts ? { maxAttempts: this.maxAttempts } : {}) });
    if (code === 'AUTH_FAILED') {
      this.lastAuthFailure = credentialWords(message);
    }
    if (!ctx.grantSpent) {
      // Before `ready` a refusal ends the open: the console exits next.
      this.endReported = true;
      this.step.end();
      if (evidence) {
        this.setSummary({ reason: code, headline: refusalHeadline(code, message, ctx), next: nextStep(code), evidence, evidenceHead: '', ...this.withReceipt() });
      }
    }
    this.show(refusalNotice(code, message, ctx, false), evidence);
  }

  private onClosed(reason: string, message: string, evidence: string, head: string): void {
    this.phase = 'CLOSED';
    this.step.end();
    this.host.log(`console closed: ${reason}${message ? ` (${redact(message)})` : ''}${evidence ? `; evidence ${evidence}` : ''}`);
    this.panelValue?.showPhase('CLOSED', reason);
    this.setStage('CLOSED');
    const ctx = this.noticeContext(evidence ? { evidence } : {});
    this.setSummary({ reason, headline: refusalHeadline(reason, message, ctx), next: nextStep(reason), evidence, evidenceHead: head, ...this.withReceipt() });
    this.endReported = true;
    let notice = refusalNotice(reason, message, ctx, true);
    if (reason === 'ACTION_DONE' && this.receipt) {
      const r = this.receipt;
      const confirmed = r.confirmation === 'confirmed' ? `the guest confirmed it${r.confirmMs !== undefined ? ` (${r.confirmMs} ms)` : ''}` : `guest confirmation: ${r.confirmation}`;
      notice = { ...notice, message: `Guest Console — ${this.vmName}: the run is complete. The action ${r.action} was ${r.outcome}${r.failure ? ` (${r.failure})` : ''}; ${confirmed}. The receipt is in the evidence.` };
    }
    this.show(notice, evidence, head);
  }

  private withReceipt(): { receipt?: ReceiptSummary } {
    return this.receipt ? { receipt: this.receipt } : {};
  }

  private setSummary(summary: RunSummary): void {
    this.summaryValue = summary;
    this.panelValue?.showSummary(summary);
    this.onDidChangeEmitter.fire();
  }

  /** Shows a notice (unless the window is going away) and carries out the button picked. */
  private show(notice: RunNotice, evidence?: string, head?: string): void {
    if (this.quiet) {
      return;
    }
    void this.host.notify(notice.severity, notice.message, notice.actions).then((picked) => {
      if (picked !== undefined) {
        void this.act(picked, notice.code, evidence, head);
      }
    });
  }

  private async act(label: string, code: string | undefined, evidence: string | undefined, head: string | undefined): Promise<void> {
    switch (label) {
      case NoticeAction.evidence:
        if (evidence) await this.host.openFile(evidence);
        break;
      case NoticeAction.verify:
        if (evidence && head) await this.verifyEvidence(evidence, head);
        break;
      case NoticeAction.docs:
        await this.openDocs(code);
        break;
      case NoticeAction.newGrant:
        await this.host.executeCommand('guestConsole.openForGrant');
        break;
      case NoticeAction.retry:
        await this.host.executeCommand('guestConsole.openForGrant', this.grant.path);
        break;
      case NoticeAction.log:
        this.host.showLog();
        break;
      case NoticeAction.settings:
        this.host.openSettings('guestConsole.binaryPath');
        break;
      default:
        break;
    }
  }

  /** The extension's copy of docs/troubleshooting.md (dist/docs), at the code's row. */
  private async openDocs(code: string | undefined): Promise<void> {
    const doc = path.join(this.host.extensionUri.fsPath, 'dist', 'docs', 'troubleshooting.md');
    let line: number | undefined;
    try {
      const rows = (await fs.promises.readFile(doc, 'utf8')).split('\n');
      const at = code ? rows.findIndex((l) => l.startsWith(`| \`${code}\` |`)) : -1;
      if (at >= 0) line = at;
    } catch (err) {
      this.host.log(`troubleshooting doc not readable: ${err instanceof Error ? err.message : String(err)}`);
    }
    await this.host.openFile(doc, line);
  }

  /** `guest-console evidence verify <log> --head <head>`: the same binary, no shell. */
  async verifyEvidence(evidence = this.summaryValue?.evidence, head = this.summaryValue?.evidenceHead): Promise<{ ok: boolean; text: string }> {
    if (!evidence || !head) {
      const none = { ok: false, text: 'The console reported no evidence log and head for this run.' };
      this.panelValue?.showVerification(none.ok, none.text);
      return none;
    }
    const parentEnv = this.host.parentEnv ?? process.env;
    const binary = resolveConsoleBinary(this.host.settings().binaryPath, parentEnv);
    const result = await new Promise<{ ok: boolean; text: string }>((resolve) => {
      if (!binary.ok) {
        resolve({ ok: false, text: binary.reason });
        return;
      }
      execFile(binary.path, ['evidence', 'verify', evidence, '--head', head], { shell: false, env: buildConsoleEnv(parentEnv), timeout: 30000, maxBuffer: 64 * 1024 }, (err, stdout, stderr) => {
        const out = `${stdout}`.trim() || `${stderr}`.trim();
        // The console's own fixed wording: counts, line numbers and hashes, nothing secret.
        resolve({ ok: !err, text: out || (err ? redact(err.message) : 'no output') });
      });
    });
    this.host.log(`evidence verify ${evidence}: ${result.ok ? 'ok' : 'FAILED'}: ${result.text}`);
    this.panelValue?.showVerification(result.ok, result.text);
    if (!this.quiet) {
      void this.host.notify(result.ok ? 'info' : 'error', `Guest Console — ${this.vmName}: evidence ${result.ok ? 'verified' : 'verification FAILED'}: ${result.text.split('\n')[0] ?? ''}`, []);
    }
    return result;
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
    panel.setStage(stageLabel(this.stageValue));
    panel.setConnectInfo({
      type: 'connect',
      wsUrl,
      run: ready.run,
      task: this.grant.taskId ?? '',
      capability: ready.panel.capability,
      clientVersion: this.host.extensionVersion,
      panel: this.grant.panel,
    });
    panel.showProgress(`Connecting to ${this.vmName}…`);
    this.register(panel.onRequest((r) => void this.onPanelRequest(r)));
    this.register(
      panel.onStatus((s) => {
        this.counts = { acked: s.acked, refused: s.refused };
        this.onDidChangeEmitter.fire();
      }),
    );
    this.register(panel.onDidChangeActive(() => this.onDidChangeEmitter.fire()));
    this.register(
      panel.onDidDispose(() => {
        this.panelValue = undefined;
        this.onDidChangeEmitter.fire();
        void this.close();
      }),
    );
    this.mcp.setActiveRun(ready.run);
    this.onDidChangeEmitter.fire();
  }

  private async onPanelRequest(request: PanelRequest): Promise<void> {
    switch (request) {
      case 'panic':
        await this.panic();
        break;
      case 'close':
        await this.close();
        break;
      case 'open_evidence':
        if (this.summaryValue?.evidence) await this.host.openFile(this.summaryValue.evidence);
        break;
      case 'verify_evidence':
        await this.verifyEvidence();
        break;
    }
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
        ...(this.maxAttempts !== undefined ? { maxAttempts: this.maxAttempts } : {}),
        ...(suggested !== undefined ? { username: suggested } : {}),
        ...(this.grant.vmName !== undefined || this.vm !== undefined ? { vmName: this.vmName } : {}),
        ...(this.lastAuthFailure !== undefined && attempt > 1 ? { lastRefusal: this.lastAuthFailure } : {}),
      };
      const outcome = await runCredentialFlow(this.host.window, this.process, request);
      if (outcome === 'cancelled') {
        this.host.log('sign-in cancelled; closing the console (AUTH_CANCELLED)');
        await this.close('AUTH_CANCELLED');
      } else if (outcome === 'sent') {
        this.setStage('SIGNING IN');
        this.step.show('signin', 'notification', this.progressTitle(), `Signing in${this.attemptText()}…`);
        this.panelValue?.showProgress(`Signing in to ${this.vmName}${this.attemptText()}…`);
      }
    } finally {
      this.askingCredentials = false;
    }
  }

  private handleExit(exit: ConsoleExit): void {
    this.phase = 'CLOSED';
    this.step.end();
    this.host.log(`console pid ${this.process.pid} exited (${exit.signal ?? `code ${String(exit.code)}`})`);
    if (this.runId !== undefined) {
      this.mcp.clearRun(this.runId);
    }
    this.panelValue?.showPhase('CLOSED', exit.signal ? `console ended (${exit.signal})` : 'console ended');
    this.setStage('CLOSED');
    if (!this.endReported) {
      if (exit.startFailure !== undefined) {
        this.show(startFailureNotice(exit.startFailure, this.noticeContext()));
      } else if (this.panicked) {
        this.show({ severity: 'warning', message: `Guest Console — ${this.vmName}: Panic ended the console (PANIC). The grant is used up: a new run needs a new grant.`, actions: [NoticeAction.newGrant], code: 'PANIC' });
      } else {
        this.show(unexpectedExitNotice(exit.code, exit.signal, this.noticeContext()));
      }
    }
    this.onDidEndEmitter.fire(exit);
  }
}
