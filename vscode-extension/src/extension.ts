// Entry point: wires the real VS Code API into the host classes and registers commands.

import * as vscode from 'vscode';
import { ConsoleManager } from './ConsoleManager';
import { resolveConsoleBinary } from './ConsoleProcess';
import type { HostApi } from './HostApi';
import { McpRegistration } from './McpRegistration';

let manager: ConsoleManager | undefined;

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
    vscode.commands.registerCommand('guestConsole.lock', () => {
      if (!m.lock()) {
        void vscode.window.showWarningMessage('Guest Console: no running console to lock.');
      }
    }),
    vscode.commands.registerCommand('guestConsole.close', () => m.close()),
    vscode.commands.registerCommand('guestConsole.panic', () => m.panic()),
  );
}

export async function deactivate(): Promise<void> {
  const m = manager;
  manager = undefined;
  await m?.shutdown();
}
