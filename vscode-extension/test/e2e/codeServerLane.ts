// A real VS Code for end-to-end tests: code-server 4.100.3 (VS Code 1.100.3, installed by
// scripts/install-code-server into a cache outside the repository) with the packaged .vsix
// installed, driven in headless Debian chromium. Shared by the extension's e2e test
// (codeServer.test.ts, against the test guest) and the live lane (tests/live/live.js,
// against a real libvirt/QEMU guest): both open a grant from the command palette, answer
// the sign-in boxes and work inside the webview (iframe.webview > #active-frame).
// Not a test file itself (no `.test.js`): scripts/test does not run it.
import { ChildProcess, execFile, spawn, spawnSync } from 'child_process';
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';
import { chromium, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { LineSplitter } from '../../src/ConsoleProcess';
import { CHROMIUM_ARGS } from '../browser';
import { PACKAGE_ROOT, waitFor } from '../helpers';
import { BIN, type DemoGrant, type GuestOptions, issueDemoGrant, privateDirs, requireBuild, TestGuest } from '../real/rig';

const run = promisify(execFile);

/**
 * The bound for one UI step (a box, a list row, a frame, a phase) to appear. Every wait ends
 * on the state itself; the bound only says when to give up. Generous: on a loaded CI machine
 * (the live lane's TCG guest beside it) a single palette + file-dialog step took 55 s.
 */
export const UI_STEP_MS = 180000;

/** code-server's path ($GC_CODE_SERVER, or installed into the cache); a skip reason when it cannot be. */
export function installCodeServer(): { bin?: string; skip?: string } {
  const fromEnv = process.env['GC_CODE_SERVER'];
  if (fromEnv) return { bin: fromEnv };
  const r = spawnSync(path.join(PACKAGE_ROOT, 'scripts', 'install-code-server'), [], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60 * 1000 });
  if (r.status === 77) return { skip: 'code-server cannot be installed here (npm registry unreachable)' };
  if (r.status !== 0) throw new Error(`install-code-server failed (${String(r.status)})`);
  return { bin: r.stdout.trim().split('\n').pop() ?? '' };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** The exact console PIDs the extension spawned for this grant (argv names our grant file). */
export async function consolePids(consoleBin: string, grantPath: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').then((s) => s.split('\0'), () => [] as string[]);
    if (argv[0] === consoleBin && argv[1] === 'open' && argv.includes(grantPath)) pids.push(Number(entry));
  }
  return pids;
}

export async function cmdline(pid: number): Promise<string[]> {
  return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((s) => s !== '');
}

export interface CodeServerLaneOptions {
  /** code-server's executable (installCodeServer().bin). */
  codeServer: string;
  /** The packaged extension; packaged here (vsce) when absent. */
  vsix?: string;
  /**
   * `guestConsole.binaryPath`: the console the extension spawns. Absent: the setting stays
   * unset and the extension finds the installed console by its default (tests/package/run).
   */
  consoleBin?: string;
  /** A private directory for code-server's and chromium's state (created if missing). */
  root: string;
  /** XDG_RUNTIME_DIR / XDG_STATE_HOME: what the extension passes on to the console (its env allow-list). */
  runtimeDir: string;
  stateDir: string;
  /** `guestConsole.issuerKeyPath`: the public key the run's grants are signed for. */
  issuerKey: string;
  /** HOME of code-server (and so of the console); default: this process' HOME. */
  home?: string;
  /** Screenshots go to `${dir}/${prefix}-<name>.png`; none when absent (the live lane takes none: they show the guest). */
  screenshots?: { dir: string; prefix: string };
  /** Progress lines. */
  stamp?: (what: string) => void;
  /** Told code-server's PID as soon as it is spawned (a caller's last-resort teardown). */
  onServerPid?: (pid: number) => void;
}

export interface SignIn {
  /** undefined keeps the username the grant prefills. */
  username?: string;
  domain: string;
  password: string;
}

/** One code-server with the extension installed and one chromium page on its workbench. */
export class CodeServerLane {
  page!: Page;
  /** The panel webview's inner frame, once `openGrant` showed it. */
  webview!: Frame;
  port = 0;
  readonly serverLog: string[] = [];
  /** Panel-protocol messages (JSON with a `type`) the page sent on any WebSocket, in order. */
  readonly sent: Array<Record<string, unknown>> = [];
  readonly socketUrls: string[] = [];
  private server: ChildProcess | undefined;
  private context: BrowserContext | undefined;

  private constructor(private readonly o: CodeServerLaneOptions) {}

  /** Installs the extension, starts code-server and chromium; resolves when the workbench shows. */
  static async start(o: CodeServerLaneOptions): Promise<CodeServerLane> {
    const lane = new CodeServerLane(o);
    try {
      await lane.launch();
    } catch (err) {
      await lane.stop();
      throw err;
    }
    return lane;
  }

  private stamp(what: string): void {
    this.o.stamp?.(what);
  }

  private async launch(): Promise<void> {
    const d = (n: string) => path.join(this.o.root, n);
    for (const n of ['user-data', 'extensions', 'xdg-config', 'xdg-data', 'xdg-cache', 'chromium']) await fs.mkdir(d(n), { recursive: true, mode: 0o700 });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: this.o.home ?? process.env['HOME'],
      LANG: 'C.UTF-8',
      XDG_CONFIG_HOME: d('xdg-config'),
      XDG_DATA_HOME: d('xdg-data'),
      XDG_CACHE_HOME: d('xdg-cache'),
      // What the extension passes on to the console (its env allow-list): the run
      // directory and the evidence stay inside the caller's private tree.
      XDG_RUNTIME_DIR: this.o.runtimeDir,
      XDG_STATE_HOME: this.o.stateDir,
    };
    const config = d('config.yaml');
    await fs.writeFile(config, 'auth: none\ncert: false\n');
    const common = ['--user-data-dir', d('user-data'), '--extensions-dir', d('extensions'), '--config', config];

    let vsix = this.o.vsix ?? '';
    if (!vsix) {
      vsix = d('guest-console.vsix');
      await run('npx', ['vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', vsix], { cwd: PACKAGE_ROOT });
    }
    await run(this.o.codeServer, [...common, '--install-extension', vsix], { env });
    this.stamp('extension installed');
    // The console's settings are machine-scoped: in a remote window (code-server is one) VS Code
    // takes them from the remote machine's settings. Read from the user settings they last only
    // until the user settings next change (a theme switch drops them), so they go to both.
    const machine = {
      ...(this.o.consoleBin === undefined ? {} : { 'guestConsole.binaryPath': this.o.consoleBin }),
      'guestConsole.issuerKeyPath': this.o.issuerKey,
    };
    await fs.mkdir(path.join(d('user-data'), 'Machine'), { recursive: true });
    await fs.writeFile(path.join(d('user-data'), 'Machine', 'settings.json'), JSON.stringify(machine, null, 2));
    await fs.mkdir(path.join(d('user-data'), 'User'), { recursive: true });
    await fs.writeFile(
      path.join(d('user-data'), 'User', 'settings.json'),
      JSON.stringify(
        {
          ...(this.o.consoleBin === undefined ? {} : { 'guestConsole.binaryPath': this.o.consoleBin }),
          'guestConsole.issuerKeyPath': this.o.issuerKey,
          'workbench.startupEditor': 'none',
          'workbench.tips.enabled': false,
          'workbench.enableExperiments': false,
          'telemetry.telemetryLevel': 'off',
          'extensions.autoCheckUpdates': false,
          'extensions.autoUpdate': false,
          'update.mode': 'none',
          'security.workspace.trust.enabled': false,
          'chat.disableAIFeatures': true,
        },
        null,
        2,
      ),
    );

    this.port = await freePort();
    this.server = spawn(
      this.o.codeServer,
      [
        '--bind-addr', `127.0.0.1:${this.port}`,
        '--auth', 'none',
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        ...common,
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (this.server.pid) this.o.onServerPid?.(this.server.pid);
    for (const stream of [this.server.stdout, this.server.stderr]) {
      const split = new LineSplitter(1 << 16, (l) => this.serverLog.push(l), () => undefined);
      stream?.on('data', (c: Buffer) => split.push(c));
    }
    await waitFor(() => this.serverLog.some((l) => l.includes('HTTP server listening')), UI_STEP_MS, 'code-server listening');
    this.stamp('code-server listening');

    const chromiumBin = process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium';
    this.context = await chromium.launchPersistentContext(d('chromium'), { executablePath: chromiumBin, headless: true, viewport: { width: 1400, height: 900 }, args: CHROMIUM_ARGS });
    this.page = this.context.pages()[0] ?? (await this.context.newPage());
    this.page.on('websocket', (ws) => {
      this.socketUrls.push(ws.url());
      ws.on('framesent', (f) => {
        if (typeof f.payload !== 'string') return;
        try {
          const m = JSON.parse(f.payload) as Record<string, unknown>;
          if (typeof m['type'] === 'string') this.sent.push(m);
        } catch {
          /* not the panel protocol */
        }
      });
    });
    await this.page.goto(`http://127.0.0.1:${this.port}/`);
    await this.page.locator('.monaco-workbench').waitFor({ timeout: UI_STEP_MS });
    await this.page.locator('.statusbar').waitFor({ timeout: UI_STEP_MS });
    this.stamp('workbench visible');
  }

  /** Closes chromium and stops code-server (SIGTERM, SIGKILL after 5 s). */
  async stop(): Promise<void> {
    await this.context?.close().catch(() => undefined);
    const server = this.server;
    if (server?.pid && server.exitCode === null && server.signalCode === null) {
      const gone = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      const kill = setTimeout(() => server.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(kill);
    }
  }

  async shot(name: string): Promise<void> {
    const s = this.o.screenshots;
    if (!s || !this.page) return;
    await fs.mkdir(s.dir, { recursive: true });
    await this.page.screenshot({ path: path.join(s.dir, `${s.prefix}-${name}.png`) });
  }

  /** The extension's output channel ("Guest Console.log" under code-server's logs). */
  async extensionLog(): Promise<string> {
    const logs = path.join(this.o.root, 'user-data', 'logs');
    const files = (await fs.readdir(logs, { recursive: true })).filter((f) => f.endsWith('Guest Console.log'));
    if (files.length !== 1) throw new Error(`extension logs: ${JSON.stringify(files)}`);
    return fs.readFile(path.join(logs, files[0] ?? ''), 'utf8');
  }

  /** Runs a command from the palette (F1) by its title. */
  async palette(title: string): Promise<void> {
    const page = this.page;
    // The extension's contributions appear once the remote extension host has scanned it;
    // until then the palette lists other commands ("similar commands", or "No matching
    // commands") and does not update when ours arrive, so look again. Each look waits for the
    // list to show the typed text's result, either way; the overall bound is UI_STEP_MS.
    const deadline = Date.now() + UI_STEP_MS;
    const left = (): number => Math.max(1, deadline - Date.now());
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    for (let attempt = 1; ; attempt++) {
      // The title bar's command center opens the quick input wherever the keyboard is (F1
      // would go to a guest screen that has it); '>' makes it the command palette. F1 where
      // the window has no command center.
      const center = page.locator('.command-center .command-center-center').first();
      const byClick = await center.isVisible().catch(() => false);
      if (byClick) await center.click();
      else await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input.input');
      await input.waitFor({ state: 'visible', timeout: left() });
      // Typed, not filled: the palette filters on keystrokes (F1 put the '>' there already).
      await page.keyboard.type(byClick ? `>${title}` : title);
      let answer = await page
        .waitForFunction(
          (t) => {
            const box = document.querySelector<HTMLInputElement>('.quick-input-widget input.input');
            if (!box || box.value !== `>${t}`) return false;
            const norm = (x: string | null): string => (x ?? '').replace(/\s+/g, ' ');
            const rows = [...document.querySelectorAll<HTMLElement>('.quick-input-list .monaco-list-row')].filter((r) => r.offsetParent !== null);
            if (rows.some((r) => norm(r.textContent).includes(t))) return 'listed';
            return rows.length > 0 ? 'other' : false;
          },
          title,
          { timeout: left() },
        )
        .then(async (h) => String(await h.jsonValue()));
      // The list may still be catching up with the last keystroke: a moment for our row.
      if (answer === 'other' && (await row.waitFor({ state: 'visible', timeout: Math.min(3000, left()) }).then(() => true, () => false))) answer = 'listed';
      if (answer === 'listed') {
        await row.click();
        return;
      }
      await this.shot(`palette-attempt-${attempt}`);
      await page.keyboard.press('Escape');
      if (Date.now() > deadline) throw new Error(`palette: no "${title}" within ${UI_STEP_MS} ms (${attempt} looks)`);
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: left() });
    }
  }

  /** Answers the input box whose prompt or title contains `what`; undefined keeps the prefill. */
  async answer(what: string, value: string | undefined): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    const prompt = widget.locator('.quick-input-message, .quick-input-title', { hasText: what }).first();
    await prompt.waitFor({ state: 'visible', timeout: UI_STEP_MS });
    // The panel opens at the same moment and may hold the focus: address the box itself. It
    // may also take the focus between the fill and the Enter, which then never reaches the box:
    // until this prompt has gone, fill and press again (only while it is still this prompt, so
    // an answer never lands in the next one). Each try waits for the prompt to go.
    const input = widget.locator('input.input');
    const deadline = Date.now() + UI_STEP_MS;
    for (;;) {
      if (value !== undefined) await input.fill(value);
      await input.press('Enter');
      const left = Math.max(1, Math.min(10_000, deadline - Date.now()));
      if (await prompt.waitFor({ state: 'hidden', timeout: left }).then(() => true, () => false)) return;
      if (Date.now() >= deadline) throw new Error(`the "${what}" prompt stayed after its answer`);
      if (!(await prompt.isVisible())) return;
      this.stamp(`the "${what}" prompt stayed after Enter: answered again`);
    }
  }

  /** Web hosts have no native file dialog: VS Code's simple dialog takes a typed path. */
  async pickFile(file: string): Promise<void> {
    const page = this.page;
    const input = page.locator('.quick-input-widget input.input');
    await page.waitForFunction(() => {
      const el = document.querySelector<HTMLInputElement>('.quick-input-widget input.input');
      return !!el && el.offsetParent !== null && el.value.startsWith('/');
    }, undefined, { timeout: UI_STEP_MS });
    // The dialog fills in its start folder asynchronously and may overwrite an early
    // value; accept only when it shows our path and lists the file, else type it again.
    // Each try waits for one of the two to happen, not for a fixed time.
    const deadline = Date.now() + UI_STEP_MS;
    for (let attempt = 1; ; attempt++) {
      await input.fill(file);
      const state = await page
        .waitForFunction(
          ([want, base]) => {
            const el = document.querySelector<HTMLInputElement>('.quick-input-widget input.input');
            if (!el || el.value !== want) return 'overwritten';
            const rows = [...document.querySelectorAll<HTMLElement>('.quick-input-list .monaco-list-row')];
            return rows.some((r) => r.offsetParent !== null && (r.textContent ?? '').replace(/\s+/g, ' ').includes(base)) ? 'listed' : false;
          },
          [file, path.basename(file)] as const,
          { timeout: Math.max(1, deadline - Date.now()) },
        )
        .then(async (h) => String(await h.jsonValue()));
      if (state === 'listed') {
        await input.press('Enter');
        await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: UI_STEP_MS });
        return;
      }
      if (Date.now() > deadline) throw new Error(`file dialog: ${file} not accepted within ${UI_STEP_MS} ms (${attempt} tries)`);
    }
  }

  /**
   * "Guest Console: Open for Grant…" from the palette, the grant picked in the file dialog,
   * the sign-in boxes answered (the password only ever typed into its box); resolves with
   * the panel's webview once it shows SETUP.
   */
  async openGrant(grantPath: string, signIn: SignIn, setupTimeoutMs = UI_STEP_MS): Promise<Frame> {
    await this.focusWorkbench();
    await this.palette('Guest Console: Open for Grant');
    await this.pickFile(grantPath);
    this.stamp('grant picked');
    await this.answer('Guest username', signIn.username);
    await this.answer('Domain', signIn.domain);
    await this.answer('Password for', signIn.password);
    this.stamp('credentials answered');

    const outer = await this.page.locator('iframe.webview').first().elementHandle({ timeout: UI_STEP_MS });
    const outerFrame = await waitFor(async () => (await outer?.contentFrame()) ?? false, UI_STEP_MS, 'outer webview frame');
    const inner = await outerFrame.locator('#active-frame').elementHandle({ timeout: UI_STEP_MS });
    this.webview = await waitFor(async () => (await inner.contentFrame()) ?? false, UI_STEP_MS, 'inner webview frame');
    await this.phaseShown('SETUP', setupTimeoutMs);
    this.stamp('panel in SETUP');
    return this.webview;
  }

  /** Waits until the panel shows one of `phases`; resolves with the one shown. */
  async phaseShown(phases: string | readonly string[], timeout = UI_STEP_MS, frame: Frame = this.webview): Promise<string> {
    const want = typeof phases === 'string' ? [phases] : [...phases];
    const handle = await frame.waitForFunction((ps) => {
      const p = document.getElementById('phase')?.dataset['phase'] ?? '';
      return ps.includes(p) ? p : false;
    }, want, { timeout });
    return String(await handle.jsonValue());
  }

  /** The panel webview whose document has this title (the grant's panel title). */
  async panelFrame(title: string): Promise<Frame> {
    return waitFor(
      async () => {
        for (const outer of await this.page.locator('iframe.webview').elementHandles()) {
          const outerFrame = await outer.contentFrame();
          const inner = await outerFrame?.$('#active-frame');
          const frame = await inner?.contentFrame();
          if (frame && (await frame.title().catch(() => '')) === title) return frame;
        }
        return undefined;
      },
      UI_STEP_MS,
      `the panel titled ${title}`,
    );
  }

  /**
   * Gives VS Code the keyboard, as the operator does: a click on an editor tab (else the editor
   * area), then the panel's release chord (left Ctrl+Alt alone) in case the click put the focus
   * back on a guest screen in SETUP; anywhere else the chord does nothing.
   */
  async focusWorkbench(tabLabel?: string): Promise<void> {
    const tab = tabLabel ? this.tab(tabLabel) : this.page.locator('.tabs-container .tab.active').first();
    if ((await tab.count()) > 0) await tab.click();
    else await this.page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
    await this.page.keyboard.down('ControlLeft');
    await this.page.keyboard.down('AltLeft');
    await this.page.keyboard.up('AltLeft');
    await this.page.keyboard.up('ControlLeft');
  }

  /** An editor tab by (a part of) its title. */
  tab(label: string): ReturnType<Page['locator']> {
    return this.page.locator('.tabs-container .tab', { hasText: label }).first();
  }

  async tabLabels(): Promise<string[]> {
    return (await this.page.locator('.tabs-container .tab .label-name').allInnerTexts()).map((t) => t.trim());
  }

  /** The extension's status bar item. */
  statusItem(): ReturnType<Page['locator']> {
    return this.page.locator('.statusbar-item[id$="guestConsole.run"]');
  }

  /** Waits for a notification toast whose message matches; resolves with it and its text. */
  async notification(match: RegExp, timeout = UI_STEP_MS): Promise<{ toast: ReturnType<Page['locator']>; message: string; buttons: string[] }> {
    const toasts = this.page.locator('.notifications-toasts .notification-toast');
    const found = await waitFor(
      async () => {
        for (const toast of await toasts.all()) {
          const message = (await toast.locator('.notification-list-item-message').innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
          if (match.test(message)) return { toast, message };
        }
        return undefined;
      },
      timeout,
      `a notification matching ${match}`,
    );
    const buttons = (await found.toast.locator('.notification-list-item-buttons-container .monaco-button').allInnerTexts()).map((b) => b.trim());
    return { ...found, buttons };
  }

  /**
   * Clears every notification: VS Code shows at most 3 toasts at once, and a newer one waits in
   * the notification center until older ones are gone.
   */
  async clearNotifications(): Promise<void> {
    await this.focusWorkbench();
    await this.palette('Notifications: Clear All Notifications');
    await this.page.locator('.notifications-toasts .notification-toast').first().waitFor({ state: 'detached', timeout: UI_STEP_MS });
  }

  /** Every notification message shown so far (toasts and the notification center's list). */
  async notificationTexts(): Promise<string[]> {
    return (await this.page.locator('.notification-list-item-message').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  }

  /**
   * Rewrites the settings with these keys changed (VS Code picks the file up by itself): the
   * extension's machine-scoped ones in the remote machine's settings, the others in the user's.
   */
  async updateSettings(changes: Record<string, unknown>): Promise<void> {
    for (const [scope, keys] of [
      ['Machine', Object.keys(changes).filter((k) => k.startsWith('guestConsole.'))],
      ['User', Object.keys(changes).filter((k) => !k.startsWith('guestConsole.'))],
    ] as const) {
      if (keys.length === 0) continue;
      const file = path.join(this.o.root, 'user-data', scope, 'settings.json');
      const now = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
      await fs.writeFile(file, JSON.stringify({ ...now, ...Object.fromEntries(keys.map((k) => [k, changes[k]])) }, null, 2));
    }
  }
}

export interface GuestLaneOptions {
  /** code-server's executable (installCodeServer().bin). */
  codeServer: string;
  /** Prefix of the private directory tree (privateDirs). */
  dirPrefix: string;
  /** The test guest: its marker and desktop size (it accepts `GuestLane.password`). */
  guest: Omit<GuestOptions, 'password'>;
  /** The grant's panel title. */
  title: string;
  /**
   * The installed console (tests/package/run): `guestConsole.binaryPath` stays unset and the
   * extension finds it by the setting's default. Absent: the build's console, named in the setting.
   */
  installedConsole?: string | undefined;
  /** Screenshot name prefix under $GC_ARTIFACTS_DIR. */
  screenshots: string;
  stamp: (what: string) => void;
}

/**
 * What the e2e test files set up alike: private directories, the test guest, a signed demo
 * grant for it, and code-server with the extension pointed at them. stop() tears down
 * whatever start() got to, so a failed start leaves nothing behind either.
 */
export class GuestLane {
  /** The guest's password, made per lane; only ever typed into the password box. */
  readonly password = randomBytes(12).toString('base64url');
  private d: Awaited<ReturnType<typeof privateDirs>> | undefined;
  private g: TestGuest | undefined;
  private gr: DemoGrant | undefined;
  private l: CodeServerLane | undefined;

  constructor(private readonly o: GuestLaneOptions) {}

  get dirs(): Awaited<ReturnType<typeof privateDirs>> {
    return GuestLane.started(this.d);
  }
  get guest(): TestGuest {
    return GuestLane.started(this.g);
  }
  get grant(): DemoGrant {
    return GuestLane.started(this.gr);
  }
  get lane(): CodeServerLane {
    return GuestLane.started(this.l);
  }

  /** The console the extension spawns. */
  get spawnedConsole(): string {
    return this.o.installedConsole ?? BIN.console;
  }

  private static started<T>(value: T | undefined): T {
    if (value === undefined) throw new Error('GuestLane: not started');
    return value;
  }

  async start(): Promise<void> {
    await requireBuild();
    await fs.access(process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium');
    this.d = await privateDirs(this.o.dirPrefix);
    this.g = await TestGuest.start({ ...this.o.guest, password: this.password });
    this.gr = await issueDemoGrant(this.d.root, this.g, this.o.title);
    const artifacts = process.env['GC_ARTIFACTS_DIR'] ?? path.join(os.tmpdir(), 'gc-artifacts');
    this.l = await CodeServerLane.start({
      codeServer: this.o.codeServer,
      vsix: process.env['GC_VSIX'],
      ...(this.o.installedConsole === undefined ? { consoleBin: BIN.console } : {}),
      root: this.d.root,
      runtimeDir: this.d.runtime,
      stateDir: this.d.state,
      issuerKey: this.gr.issuerKey,
      screenshots: { dir: artifacts, prefix: this.o.screenshots },
      stamp: this.o.stamp,
    });
  }

  async stop(): Promise<void> {
    await this.l?.shot('last').catch(() => undefined);
    await this.l?.stop();
    // Only if a test failed midway: the exact console processes for this grant.
    for (const pid of this.gr ? await consolePids(this.spawnedConsole, this.gr.path) : []) process.kill(pid, 'SIGKILL');
    await this.g?.stop();
    if (this.d && !process.env['GC_KEEP_E2E_DIR']) await fs.rm(this.d.root, { recursive: true, force: true });
    this.o.stamp('torn down');
  }
}
