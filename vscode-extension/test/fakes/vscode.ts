// A small stand-in for the part of the `vscode` API the extension host uses (HostApi),
// recording what the code under test did with it.

import * as path from 'path';
import type * as vscode from 'vscode';
import { Emitter } from '../../src/Disposable';
import type { ConsoleSettings, HostApi } from '../../src/HostApi';

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

export class FakeHost implements HostApi {
  readonly logs: string[] = [];
  readonly panels: FakeWebviewPanel[] = [];
  readonly inputBoxes: vscode.InputBoxOptions[] = [];
  readonly errors: string[] = [];
  readonly infos: string[] = [];
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
    showErrorMessage: (message: string) => {
      this.errors.push(message);
      return Promise.resolve(undefined);
    },
    showInformationMessage: (message: string) => {
      this.infos.push(message);
      return Promise.resolve(undefined);
    },
  };

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
