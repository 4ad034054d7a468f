// The part of the VS Code API the extension uses, as an interface: extension.ts passes
// the real `vscode` module (wrapped where a call needs more than a pass-through), the unit
// tests pass test/fakes/vscode.ts.

import type * as vscode from 'vscode';
import type { SpawnFunction } from './ConsoleProcess';
import type { NoticeSeverity } from './RunNotice';
import type { WebHostEnv } from './WebOrigin';

export interface HostWindow {
  createWebviewPanel(
    viewType: string,
    title: string,
    showOptions: vscode.ViewColumn | { viewColumn: vscode.ViewColumn; preserveFocus?: boolean },
    options?: vscode.WebviewPanelOptions & vscode.WebviewOptions,
  ): vscode.WebviewPanel;
  showInputBox(options: vscode.InputBoxOptions): PromiseLike<string | undefined>;
  showOpenDialog(options: vscode.OpenDialogOptions): PromiseLike<vscode.Uri[] | undefined>;
}

export interface HostUriFactory {
  parse(value: string): vscode.Uri;
  joinPath(base: vscode.Uri, ...segments: string[]): vscode.Uri;
}

export interface ConsoleSettings {
  binaryPath: string;
  terminateGraceMs: number;
  panicGraceMs: number;
  /** Machine-scoped: the grant issuer's public key; "" = the console's /etc default. */
  issuerKeyPath: string;
  /** Machine-scoped, development only: the console's --allow-unsigned-grants. */
  allowUnsignedGrants: boolean;
}

/** The window's one status bar item for the console runs (RunStatusBar fills it). */
export interface StatusItem {
  text: string;
  tooltip: string;
  /** What a screen reader says for it. */
  accessibilityLabel: string;
  /** Colours it with the theme's warning or error status bar background. */
  kind: 'normal' | 'warning' | 'error';
  /** A command run on click, with its arguments. */
  command: { id: string; args: unknown[] } | undefined;
  show(): void;
  hide(): void;
  dispose(): void;
}

export interface PickItem<T> {
  label: string;
  description?: string;
  detail?: string;
  value: T;
}

/** Reports a progress step's message; the step ends when its task's promise settles. */
export type ProgressReport = (message: string) => void;

export interface HostApi {
  window: HostWindow;
  /** uiKind/uriScheme tell a browser-hosted workbench apart (see WebOrigin.ts). */
  env: WebHostEnv;
  Uri: HostUriFactory;
  extensionUri: vscode.Uri;
  extensionVersion: string;
  /** publisher.name; the authority of the callback URI WebOrigin asks the workbench to map. */
  extensionId?: string;
  settings(): ConsoleSettings;
  log(line: string): void;
  /** A notification with buttons; resolves with the label picked (undefined: dismissed). */
  notify(severity: NoticeSeverity, message: string, actions: readonly string[]): PromiseLike<string | undefined>;
  /** A modal question with one confirming button; true when it was pressed. */
  confirm(message: string, detail: string, button: string): PromiseLike<boolean>;
  pick<T>(title: string, placeHolder: string, items: ReadonlyArray<PickItem<T>>): PromiseLike<T | undefined>;
  /**
   * A progress indicator: `notification` (a toast with a spinner) or `window` (the status
   * bar's). It lasts until `task` settles.
   */
  progress(where: 'notification' | 'window', title: string, task: (report: ProgressReport) => Promise<void>): void;
  createStatusItem(): StatusItem;
  /** Opens a file in an editor, at a 0-based line when given. */
  openFile(path: string, line?: number): PromiseLike<void>;
  /** Shows the "Guest Console" output channel. */
  showLog(): void;
  /** Opens the Settings editor on a query (e.g. a setting's id). */
  openSettings(query: string): void;
  executeCommand(id: string, ...args: unknown[]): PromiseLike<unknown>;
  /** Test seams for the child process; default to the real spawn and process.env. */
  spawn?: SpawnFunction;
  parentEnv?: NodeJS.ProcessEnv;
}
