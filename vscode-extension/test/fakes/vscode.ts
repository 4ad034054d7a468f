// A small stand-in for the part of the `vscode` API the extension host uses (HostApi),
// recording what the code under test did with it.

import * as path from 'path';
import type * as vscode from 'vscode';
import { Emitter } from '../../src/Disposable';
import type { ConsoleSettings, HostApi, PickItem, ProgressReport, StatusItem } from '../../src/HostApi';
import type { NoticeSeverity } from '../../src/RunNotice';

export class FakeUri {
  constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
  ) {}
  static parse(value: string): FakeUri {
    const u = new URL(value);
    return new FakeUri(u.protocol.replace(/:$/, ''), u.host, u.pathname || '/');
  }
  static file(p: string): FakeUri {
    return new FakeUri('file', '', p);
  }
  static joinPath(base: FakeUri, ...segments: string[]): FakeUri {
    return new FakeUri(base.scheme, base.authority, path.posix.join(base.path, ...segments));
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.authority}${this.path}`;
  }
}

export class FakeWebviewPanel {
  title: string;
  active = true;
  reveals = 0;
  disposed = false;
  readonly posted: unknown[] = [];
  private readonly received = new Emitter<unknown>();
  private readonly disposeEmitter = new Emitter<void>();
  private readonly viewStateEmitter = new Emitter<void>();
  readonly webview = {
    html: '',
    cspSource: 'https://fake.vscode-cdn.invalid',
    asWebviewUri: (u: FakeUri) => u,
    postMessage: (m: unknown) => {
      this.posted.push(m);
      return Promise.resolve(true);
    },
    onDidReceiveMessage: this.received.event,
  };
  readonly onDidDispose = this.disposeEmitter.event;
  readonly onDidChangeViewState = this.viewStateEmitter.event;

  constructor(
    readonly viewType: string,
    title: string,
    readonly options: unknown,
  ) {
    this.title = title;
  }
  reveal(): void {
    this.reveals += 1;
  }
  /** The operator focused this tab (or another one). */
  setActive(active: boolean): void {
    this.active = active;
    this.viewStateEmitter.fire();
  }
  /** The webview script posting to the host. */
  fromWebview(message: unknown): void {
    this.received.fire(message);
  }
  dispose(): void {
    if (!this.disposed) {
      this.disposed = true;
      this.disposeEmitter.fire();
    }
  }
}

export interface FakeNotice {
  severity: NoticeSeverity;
  message: string;
  actions: readonly string[];
}

export class FakeStatusItem implements StatusItem {
  text = '';
  tooltip = '';
  accessibilityLabel = '';
  kind: StatusItem['kind'] = 'normal';
  command: StatusItem['command'];
  visible = false;
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

export class FakeProgress {
  readonly messages: string[] = [];
  done = false;
  constructor(
    readonly where: 'notification' | 'window',
    readonly title: string,
  ) {}
}

export class FakeHost implements HostApi {
  readonly logs: string[] = [];
  readonly panels: FakeWebviewPanel[] = [];
  readonly inputBoxes: vscode.InputBoxOptions[] = [];
  readonly notices: FakeNotice[] = [];
  readonly confirms: Array<{ message: string; detail: string; button: string }> = [];
  readonly picks: Array<{ title: string; items: string[] }> = [];
  readonly progresses: FakeProgress[] = [];
  readonly opened: Array<{ path: string; line: number | undefined }> = [];
  readonly commands: Array<{ id: string; args: unknown[] }> = [];
  readonly statusItem = new FakeStatusItem();
  /** The button the next notifications answer with, in order (undefined: dismissed). */
  noticeAnswers: Array<string | undefined> = [];
  confirmAnswer = true;
  /** Picks the item whose label or description contains this (undefined: cancelled). */
  pickAnswer: string | undefined;
  logShown = 0;
  settingsOpened: string[] = [];
  /** Scripted answers for showInputBox, in order; undefined = the operator cancelled. */
  inputAnswers: Array<string | undefined> = [];
  openDialogAnswer: string | undefined;
  externalUri: ((u: FakeUri) => FakeUri) | undefined;
  settingsValue: ConsoleSettings = {
    binaryPath: process.execPath,
    terminateGraceMs: 1000,
    panicGraceMs: 40,
    issuerKeyPath: '',
    allowUnsignedGrants: false,
  };
  extensionVersion = '0.0.0-test';
  extensionUri = FakeUri.file('/ext') as unknown as vscode.Uri;
  Uri = FakeUri as unknown as HostApi['Uri'];
  spawn: HostApi['spawn'];
  parentEnv: NodeJS.ProcessEnv | undefined;

  readonly window = {
    createWebviewPanel: (viewType: string, title: string, _show: unknown, options?: unknown) => {
      const panel = new FakeWebviewPanel(viewType, title, options);
      this.panels.push(panel);
      return panel as unknown as vscode.WebviewPanel;
    },
    showInputBox: (options: vscode.InputBoxOptions) => {
      this.inputBoxes.push(options);
      return Promise.resolve(this.inputAnswers.shift());
    },
    showOpenDialog: () => Promise.resolve(this.openDialogAnswer ? [FakeUri.file(this.openDialogAnswer) as unknown as vscode.Uri] : undefined),
  };

  get errors(): string[] {
    return this.notices.filter((n) => n.severity === 'error').map((n) => n.message);
  }

  notify(severity: NoticeSeverity, message: string, actions: readonly string[]): Promise<string | undefined> {
    this.notices.push({ severity, message, actions });
    return Promise.resolve(this.noticeAnswers.shift());
  }

  confirm(message: string, detail: string, button: string): Promise<boolean> {
    this.confirms.push({ message, detail, button });
    return Promise.resolve(this.confirmAnswer);
  }

  pick<T>(title: string, _placeHolder: string, items: ReadonlyArray<PickItem<T>>): Promise<T | undefined> {
    this.picks.push({ title, items: items.map((i) => `${i.label} | ${i.description ?? ''}`) });
    const want = this.pickAnswer;
    return Promise.resolve(want === undefined ? undefined : items.find((i) => i.label.includes(want) || (i.description ?? '').includes(want))?.value);
  }

  progress(where: 'notification' | 'window', title: string, task: (report: ProgressReport) => Promise<void>): void {
    const p = new FakeProgress(where, title);
    this.progresses.push(p);
    void task((m) => p.messages.push(m)).then(() => (p.done = true));
  }

  createStatusItem(): StatusItem {
    return this.statusItem;
  }

  openFile(path: string, line?: number): Promise<void> {
    this.opened.push({ path, line });
    return Promise.resolve();
  }

  showLog(): void {
    this.logShown += 1;
  }

  openSettings(query: string): void {
    this.settingsOpened.push(query);
  }

  executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    this.commands.push({ id, args });
    return Promise.resolve(undefined);
  }

  readonly env = {
    asExternalUri: (u: vscode.Uri) => Promise.resolve((this.externalUri ? this.externalUri(u as unknown as FakeUri) : u) as vscode.Uri),
  };

  settings(): ConsoleSettings {
    return this.settingsValue;
  }

  log(line: string): void {
    this.logs.push(line);
  }
}

/** A stand-in for `vscode` itself for McpRegistration (lm + McpStdioServerDefinition). */
export class FakeMcpStdioServerDefinition {
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args: string[] = [],
    readonly env: Record<string, string> = {},
    readonly version?: string,
  ) {}
}
