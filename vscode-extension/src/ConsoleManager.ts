// Keeps at most one console per run: a second open of the same grant or run focuses the
// first. Routes the commands to the right session.

import { ConsoleSession } from './ConsoleSession';
import { IDisposable } from './Disposable';
import { readGrantInfo } from './GrantInfo';
import type { HostApi } from './HostApi';
import type { McpRegistration } from './McpRegistration';
import { webviewOrigin } from './WebOrigin';

export class ConsoleManager implements IDisposable {
  private readonly sessions = new Map<string, ConsoleSession>();
  private lastOpened: ConsoleSession | undefined;

  constructor(
    private readonly host: HostApi,
    private readonly mcp: McpRegistration,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Opens (or focuses) the console for a grant. Without a path, asks with a file picker. */
  async openForGrant(grantPath?: string): Promise<ConsoleSession | undefined> {
    let target = grantPath;
    if (target === undefined) {
      const picked = await this.host.window.showOpenDialog({
        canSelectMany: false,
        canSelectFolders: false,
        openLabel: 'Open Console',
        filters: { Grant: ['json'] },
      });
      target = picked?.[0]?.fsPath;
      if (target === undefined) {
        return undefined;
      }
    }
    let grant;
    try {
      grant = await readGrantInfo(target);
    } catch (err) {
      void this.host.window.showErrorMessage(`Guest Console: cannot read the grant: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    const existing = this.sessions.get(grant.key) ?? [...this.sessions.values()].find((s) => s.grant.path === grant.path);
    if (existing) {
      existing.reveal();
      return existing;
    }
    // In a browser-hosted workbench the webview's WebSocket carries a web origin the
    // console only accepts when told; ask before spawning (it is fixed for the window).
    const origin = await webviewOrigin(this.host.env, this.host.Uri, this.host.extensionId ?? 'guest-console.guest-console', (l) => this.host.log(l));
    if (origin) {
      this.host.log(`web host: the panel's origin is ${origin}; passing --allow-origin`);
    }
    const again = this.sessions.get(grant.key);
    if (again) {
      again.reveal();
      return again;
    }
    const session = new ConsoleSession(this.host, this.mcp, grant, origin ? [origin] : []);
    this.sessions.set(grant.key, session);
    this.lastOpened = session;
    session.onDidEnd(() => {
      if (this.sessions.get(grant.key) === session) {
        this.sessions.delete(grant.key);
      }
      if (this.lastOpened === session) {
        this.lastOpened = undefined;
      }
    });
    return session;
  }

  /** The session whose panel is active, else the most recent one. */
  activeSession(): ConsoleSession | undefined {
    for (const s of this.sessions.values()) {
      if (s.panel?.active) {
        return s;
      }
    }
    return this.lastOpened ?? [...this.sessions.values()].pop();
  }

  lock(): boolean {
    return this.activeSession()?.lock() ?? false;
  }

  async close(): Promise<void> {
    await this.activeSession()?.close();
  }

  /** Panic ends every console this window started, at once. */
  async panic(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.panic()));
  }

  /** Deactivate: end every console PID and wait for each to exit. */
  async shutdown(): Promise<void> {
    const all = [...this.sessions.values()];
    await Promise.all(all.map((s) => s.close()));
    for (const s of all) {
      s.dispose();
    }
    this.sessions.clear();
  }

  dispose(): void {
    void this.shutdown();
  }
}
