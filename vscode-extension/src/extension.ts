// Entry point: wires the real VS Code API into the host classes and registers commands.

import * as vscode from 'vscode';
import { ConsoleManager } from './ConsoleManager';
import { resolveConsoleBinary } from './ConsoleProcess';
import type { HostApi, StatusItem } from './HostApi';
import { McpRegistration } from './McpRegistration';

let manager: ConsoleManager | undefined;

function statusItem(): StatusItem {
  const item = vscode.window.createStatusBarItem('guestConsole.run', vscode.StatusBarAlignment.Left, 100);
  item.name = 'Guest Console';
  let kind: StatusItem['kind'] = 'normal';
  let command: StatusItem['command'];
  return {
    get text() {
      return item.text;
    },
    set text(v: string) {
      item.text = v;
    },
    get tooltip() {
      return typeof item.tooltip === 'string' ? item.tooltip : '';
    },
    set tooltip(v: string) {
      item.tooltip = v;
    },
    get accessibilityLabel() {
      return item.accessibilityInformation?.label ?? '';
    },
    set accessibilityLabel(v: string) {
      item.accessibilityInformation = { label: v, role: 'button' };
    },
    get kind() {
      return kind;
    },
    set kind(v: StatusItem['kind']) {
      kind = v;
      item.backgroundColor = v === 'normal' ? undefined : new vscode.ThemeColor(v === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
    },
    get command() {
      return command;
    },
    set command(v: StatusItem['command']) {
      command = v;
      item.command = v ? { command: v.id, title: 'Show Console Panel', arguments: v.args } : undefined;
    },
    show: () => item.show(),
    hide: () => item.hide(),
    dispose: () => item.dispose(),
  };
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Guest Console');
  context.subscriptions.push(output);
  const settings = () => {
    const c = vscode.workspace.getConfiguration('guestConsole');
    return {
      binaryPath: c.get<string>('binaryPath', 'guest-console') || 'guest-console',
      terminateGraceMs: c.get<number>('terminateGraceMs', 2000),
      panicGraceMs: c.get<number>('panicGraceMs', 40),
      // Machine scope (package.json): a workspace's settings cannot set these.
      issuerKeyPath: c.get<string>('issuerKeyPath', '') ?? '',
      allowUnsignedGrants: c.get<boolean>('allowUnsignedGrants', false) === true,
    };
  };
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0');
  const host: HostApi = {
    window: vscode.window,
    env: vscode.env,
    Uri: vscode.Uri,
    extensionUri: context.extensionUri,
    extensionVersion: version,
    extensionId: context.extension.id,
    settings,
    log: (line) => output.appendLine(`${new Date().toISOString()} ${line}`),
    notify: (severity, message, actions) => {
      const show = severity === 'error' ? vscode.window.showErrorMessage : severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      return show(message, ...actions);
    },
    confirm: async (message, detail, button) => (await vscode.window.showWarningMessage(message, { modal: true, detail }, button)) === button,
    pick: async (title, placeHolder, items) => (await vscode.window.showQuickPick([...items], { title, placeHolder, ignoreFocusOut: true }))?.value,
    progress: (where, title, task) => {
      const location = where === 'window' ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification;
      void vscode.window.withProgress({ location, title, cancellable: false }, (progress) => task((message) => progress.report({ message })));
    },
    createStatusItem: statusItem,
    openFile: async (file, line) => {
      const at = line === undefined ? undefined : new vscode.Range(line, 0, line, 0);
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true, ...(at ? { selection: at } : {}) });
    },
    showLog: () => output.show(true),
    openSettings: (query) => void vscode.commands.executeCommand('workbench.action.openSettings', query),
    executeCommand: (id, ...args) => vscode.commands.executeCommand(id, ...args),
  };
  // The MCP relay is the same console binary the panel's console was spawned from.
  const consoleBinary = () => {
    const resolved = resolveConsoleBinary(settings().binaryPath);
    return resolved.ok ? resolved.path : settings().binaryPath;
  };
  const mcp = new McpRegistration(vscode, consoleBinary, version, host.log);
  context.subscriptions.push(mcp);
  manager = new ConsoleManager(host, mcp);
  const m = manager;

  context.subscriptions.push(
    vscode.commands.registerCommand('guestConsole.openForGrant', async (arg?: unknown) => {
      const grantPath = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? arg.fsPath : undefined;
      const session = await m.openForGrant(grantPath);
      return session ? { pid: session.process.pid } : undefined;
    }),
    vscode.commands.registerCommand('guestConsole.lock', () => m.lock()),
    vscode.commands.registerCommand('guestConsole.close', () => m.close()),
    vscode.commands.registerCommand('guestConsole.panic', () => m.panic()),
    vscode.commands.registerCommand('guestConsole.panicAll', () => m.panicAll()),
    vscode.commands.registerCommand('guestConsole.showPanel', (run?: unknown) => m.showPanel(run)),
  );
}

export async function deactivate(): Promise<void> {
  const m = manager;
  manager = undefined;
  await m?.shutdown();
}
