// The part of the VS Code API the extension uses, as an interface: extension.ts passes
// the real `vscode` module, the unit tests pass test/fakes/vscode.ts.

import type * as vscode from 'vscode';
import type { SpawnFunction } from './ConsoleProcess';
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
  showErrorMessage(message: string): PromiseLike<unknown>;
  showInformationMessage(message: string): PromiseLike<unknown>;
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
  /** Test seams for the child process; default to the real spawn and process.env. */
  spawn?: SpawnFunction;
  parentEnv?: NodeJS.ProcessEnv;
}
