// Keeps at most one console per run: a second open of the same grant or run focuses the
// first. Routes Lock, Close and Panic to the run the operator sees (its panel is the active
// editor), and asks which one when that is not clear. Keeps the status bar on that run.

import { ConsoleSession, stageLabel } from './ConsoleSession';
import { IDisposable } from './Disposable';
import { readGrantInfo } from './GrantInfo';
import type { HostApi, PickItem } from './HostApi';
import type { McpRegistration } from './McpRegistration';
import { RunStatusBar } from './RunStatusBar';
import { webviewOrigin } from './WebOrigin';

type Target = ConsoleSession | 'all';

export class ConsoleManager implements IDisposable {
  private readonly sessions = new Map<string, ConsoleSession>();
  /** Every run the window still shows (live, or ended with its panel open), oldest first. */
  private readonly shown: ConsoleSession[] = [];
  private lastActive: ConsoleSession | undefined;
  private readonly statusBar: RunStatusBar;

  constructor(
    private readonly host: HostApi,
    private readonly mcp: McpRegistration,
  ) {
    this.statusBar = new RunStatusBar(host);
  }

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
      void this.host.notify('error', `Guest Console: cannot read the grant: ${err instanceof Error ? err.message : String(err)}`, []);
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
    this.shown.push(session);
    this.lastActive = session;
    session.onDidChange(() => {
      if (session.panel?.active) {
        this.lastActive = session;
      }
      if (session.ended && !session.panel) {
        this.forget(session);
      }
      this.refreshStatus();
    });
    session.onDidEnd(() => {
      if (this.sessions.get(grant.key) === session) {
        this.sessions.delete(grant.key);
      }
      if (!session.panel) {
        this.forget(session);
      }
      this.refreshStatus();
    });
    this.refreshStatus();
    return session;
  }

  /** The live session whose panel is the active editor, if any. */
  activeSession(): ConsoleSession | undefined {
    return this.live().find((s) => s.panel?.active);
  }

  /**
   * The run a command acts on: the one in the active panel; otherwise the operator picks
   * (run and VM named), also when only one runs — a lock or close cannot be undone.
   */
  async targetFor(verb: string, allowAll = false): Promise<Target | undefined> {
    const active = this.activeSession();
    if (active) {
      return active;
    }
    const live = this.live();
    if (live.length === 0) {
      void this.host.notify('info', `Guest Console: no running console to ${verb.toLowerCase()}.`, []);
      return undefined;
    }
    const items: Array<PickItem<Target>> = live.map((s) => ({
      label: s.vmName,
      description: `run ${s.run ?? '?'}`,
      detail: `${stageLabel(s.stage)} · ${s.grant.panel.title}`,
      value: s,
    }));
    if (allowAll && live.length > 1) {
      items.unshift({ label: `Every console (${live.length})`, description: 'all runs in this window', value: 'all' });
    }
    return this.host.pick(`Guest Console: ${verb}`, `Which console? No console panel is the active editor.`, items);
  }

  /** Lock and Start Capture, after a confirmation that names the run and the VM. */
  async lock(): Promise<boolean> {
    const target = await this.targetFor('Lock and Start Capture');
    if (!target || target === 'all') {
      return false;
    }
    const ok = await this.host.confirm(
      `Lock run ${target.run ?? '?'} on VM ${target.vmName}?`,
      'From the lock on, no input reaches the guest and capture starts. A lock cannot be undone; a new setup needs a new grant.',
      'Lock',
    );
    if (!ok || target.ended) {
      return false;
    }
    target.reveal();
    return target.lock();
  }

  async close(): Promise<void> {
    const target = await this.targetFor('Close Console');
    if (target && target !== 'all') {
      await target.close();
    }
  }

  /** Panic on the run in view at once; with no panel in view, the only run or the one picked (or all). */
  async panic(): Promise<void> {
    const active = this.activeSession();
    const live = this.live();
    const target = active ?? (live.length === 1 ? live[0] : await this.targetFor('Panic', true));
    if (target === 'all') {
      await this.panicAll();
    } else if (target) {
      await target.panic();
    }
  }

  /** Panic ends every console this window started, at once. */
  async panicAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.panic()));
  }

  /** Shows a run's panel: the one named, else the operator picks. */
  async showPanel(run?: unknown): Promise<void> {
    const named = typeof run === 'string' ? this.shown.find((s) => s.run === run) : undefined;
    const target = named ?? (await this.targetFor('Show Console Panel'));
    if (target && target !== 'all') {
      target.reveal();
    }
  }

  /** Deactivate: end every console PID (the window is going away) and wait for each to exit. */
  async shutdown(): Promise<void> {
    const all = [...this.sessions.values()];
    await Promise.all(all.map((s) => s.close('WINDOW_RELOAD')));
    for (const s of all) {
      s.dispose();
    }
    this.sessions.clear();
  }

  dispose(): void {
    void this.shutdown().then(() => this.statusBar.dispose());
  }

  private live(): ConsoleSession[] {
    return this.shown.filter((s) => !s.ended);
  }

  private forget(session: ConsoleSession): void {
    const at = this.shown.indexOf(session);
    if (at >= 0) {
      this.shown.splice(at, 1);
    }
    if (this.lastActive === session) {
      this.lastActive = this.shown[this.shown.length - 1];
    }
  }

  private refreshStatus(): void {
    const shown = this.activeSession() ?? this.shown.find((s) => s.panel?.active) ?? (this.lastActive && this.shown.includes(this.lastActive) ? this.lastActive : this.shown[this.shown.length - 1]);
    this.statusBar.update(shown, this.live().filter((s) => s !== shown).length);
  }
}
