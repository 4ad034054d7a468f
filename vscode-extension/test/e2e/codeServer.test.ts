// End to end in a real VS Code: code-server 4.100.3 (VS Code 1.100.3, installed by
// scripts/install-code-server into a cache outside the repository) with the packaged
// .vsix installed, driven in Debian chromium. The extension starts the real console for a
// demo grant whose VM is the test guest; the test answers the sign-in boxes, then checks
// inside the webview (iframe.webview > #active-frame) what the guest got.
//
// Skipped, with the reason, only when code-server cannot be installed here (the npm
// registry is unreachable: install-code-server exits 77).
import * as assert from 'assert/strict';
import { ChildProcess, execFile, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'util';
import { chromium, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { LineSplitter } from '../../src/ConsoleProcess';
import { PACKAGE_ROOT, pidAlive, waitFor } from '../helpers';
import { hex32 } from '../marker';
import { canvasMarker, CHROMIUM_ARGS } from '../browser';
import { BIN, DemoGrant, exists, issueDemoGrant, privateDirs, requireBuild, TestGuest } from '../real/rig';

const run = promisify(execFile);
const CHROMIUM = process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium';
const ARTIFACTS = process.env['GC_ARTIFACTS_DIR'] ?? path.join(os.tmpdir(), 'gc-artifacts');
const MARKER = 0x7e57c0de;
const WIDTH = 640;
const HEIGHT = 400;
const t0 = Date.now();
const stamp = (what: string): void => console.log(`# e2e +${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);

/** code-server's path, installing it into the cache when needed; a skip reason when it cannot. */
function installCodeServer(): { bin?: string; skip?: string } {
  const fromEnv = process.env['GC_CODE_SERVER'];
  if (fromEnv) return { bin: fromEnv };
  const { spawnSync } = require('child_process') as typeof import('child_process');
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

/** The exact console PID the extension spawned for this grant (argv names our grant file). */
async function consolePids(grantPath: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').then((s) => s.split('\0'), () => [] as string[]);
    if (argv[0] === BIN.console && argv[1] === 'open' && argv.includes(grantPath)) pids.push(Number(entry));
  }
  return pids;
}

async function cmdline(pid: number): Promise<string[]> {
  return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((s) => s !== '');
}

const install = installCodeServer();

describe('extension end to end in code-server', { skip: install.skip ?? false }, () => {
  let dirs: Awaited<ReturnType<typeof privateDirs>>;
  let guest: TestGuest;
  let grant: DemoGrant;
  let server: ChildProcess | undefined;
  const serverLog: string[] = [];
  let port = 0;
  let context: BrowserContext;
  let page: Page;
  let webview: Frame;
  let consolePid = 0;
  let runDir = '';
  const password = randomBytes(12).toString('base64url');
  const sent: Array<Record<string, unknown>> = [];
  let lockedInputCount = -1;
  const socketUrls: string[] = [];

  async function shot(name: string): Promise<void> {
    await fs.mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `e2e-code-server-${name}.png`) });
  }

  async function phaseShown(phase: string, timeout = 15000): Promise<void> {
    await webview.waitForFunction((p) => document.getElementById('phase')?.dataset['phase'] === p, phase, { timeout });
  }

  async function palette(title: string): Promise<void> {
    // The extension's contributions appear once the remote extension host has scanned it;
    // until then the palette has no match, so look again.
    for (let attempt = 1; ; attempt++) {
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input.input');
      await input.waitFor({ state: 'visible', timeout: 10000 });
      // Typed, not filled: the palette filters on keystrokes ('>' is already there).
      await page.keyboard.type(title);
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
      try {
        await row.waitFor({ state: 'visible', timeout: 5000 });
        await row.click();
        return;
      } catch (err) {
        await shot(`palette-attempt-${attempt}`);
        await page.keyboard.press('Escape');
        if (attempt === 4) throw err;
      }
    }
  }

  /** Answers the input box whose prompt or title contains `what`; undefined keeps the prefill. */
  async function answer(what: string, value: string | undefined): Promise<void> {
    const widget = page.locator('.quick-input-widget');
    await widget.locator('.quick-input-message, .quick-input-title', { hasText: what }).first().waitFor({ state: 'visible', timeout: 20000 });
    // The panel opens at the same moment and may hold the focus: address the box itself.
    const input = widget.locator('input.input');
    if (value !== undefined) await input.fill(value);
    await input.press('Enter');
  }

  /** Web hosts have no native file dialog: VS Code's simple dialog takes a typed path. */
  async function pickFile(file: string): Promise<void> {
    const input = page.locator('.quick-input-widget input.input');
    await page.waitForFunction(() => {
      const el = document.querySelector<HTMLInputElement>('.quick-input-widget input.input');
      return !!el && el.offsetParent !== null && el.value.startsWith('/');
    }, undefined, { timeout: 20000 });
    // The dialog fills in its start folder asynchronously and may overwrite an early
    // value; accept only when it shows our path and lists the file, else type it again.
    for (let attempt = 1; ; attempt++) {
      await input.fill(file);
      try {
        await page.locator('.quick-input-list .monaco-list-row', { hasText: path.basename(file) }).first().waitFor({ state: 'visible', timeout: 5000 });
        if ((await input.inputValue()) === file) {
          await input.press('Enter');
          await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 3000 });
          return;
        }
      } catch (err) {
        if (attempt === 5) throw err;
      }
    }
  }

  before(async () => {
    await requireBuild();
    await fs.access(CHROMIUM);
    const codeServer = install.bin ?? '';
    dirs = await privateDirs('gc-e2e-');
    const d = (n: string) => path.join(dirs.root, n);
    for (const n of ['user-data', 'extensions', 'xdg-config', 'xdg-data', 'xdg-cache', 'chromium']) await fs.mkdir(d(n), { recursive: true });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      LANG: 'C.UTF-8',
      XDG_CONFIG_HOME: d('xdg-config'),
      XDG_DATA_HOME: d('xdg-data'),
      XDG_CACHE_HOME: d('xdg-cache'),
      // What the extension passes on to the console (its env allow-list): the run
      // directory and the evidence stay inside this test's private tree.
      XDG_RUNTIME_DIR: dirs.runtime,
      XDG_STATE_HOME: dirs.state,
    };
    const config = d('config.yaml');
    await fs.writeFile(config, 'auth: none\ncert: false\n');
    const common = ['--user-data-dir', d('user-data'), '--extensions-dir', d('extensions'), '--config', config];

    let vsix = process.env['GC_VSIX'] ?? '';
    if (!vsix) {
      vsix = d('guest-console.vsix');
      await run('npx', ['vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', vsix], { cwd: PACKAGE_ROOT });
    }
    await run(codeServer, [...common, '--install-extension', vsix], { env });
    stamp('extension installed');
    await fs.mkdir(path.join(d('user-data'), 'User'), { recursive: true });
    await fs.writeFile(
      path.join(d('user-data'), 'User', 'settings.json'),
      JSON.stringify(
        {
          'guestConsole.binaryPath': BIN.console,
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

    guest = await TestGuest.start({ marker: MARKER, width: WIDTH, height: HEIGHT, password });
    grant = await issueDemoGrant(dirs.root, guest, 'Guest Console e2e');
    runDir = path.join(dirs.runtime, 'guest-console', 'runs', grant.run);

    port = await freePort();
    server = spawn(
      codeServer,
      [
        '--bind-addr', `127.0.0.1:${port}`,
        '--auth', 'none',
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        ...common,
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    for (const stream of [server.stdout, server.stderr]) {
      const split = new LineSplitter(1 << 16, (l) => serverLog.push(l), () => undefined);
      stream?.on('data', (c: Buffer) => split.push(c));
    }
    await waitFor(() => serverLog.some((l) => l.includes('HTTP server listening')), 30000, 'code-server listening');
    stamp('code-server listening');

    context = await chromium.launchPersistentContext(d('chromium'), { executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 }, args: CHROMIUM_ARGS });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('websocket', (ws) => {
      socketUrls.push(ws.url());
      ws.on('framesent', (f) => {
        if (typeof f.payload !== 'string') return;
        try {
          const m = JSON.parse(f.payload) as Record<string, unknown>;
          if (typeof m['type'] === 'string') sent.push(m);
        } catch {
          /* not the panel protocol */
        }
      });
    });
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
    await page.locator('.statusbar').waitFor({ timeout: 60000 });
    stamp('workbench visible');
  });

  after(async () => {
    if (page) await shot('last').catch(() => undefined);
    await context?.close().catch(() => undefined);
    for (const pid of grant ? await consolePids(grant.path) : []) process.kill(pid, 'SIGKILL'); // only if a test failed midway
    if (server?.pid && server.exitCode === null) {
      const gone = new Promise((r) => server?.once('exit', r));
      server.kill('SIGTERM');
      const kill = setTimeout(() => server?.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(kill);
    }
    await guest?.stop();
    if (dirs && !process.env['GC_KEEP_E2E_DIR']) await fs.rm(dirs.root, { recursive: true, force: true });
    stamp('torn down');
  });

  it('opensTheConsoleFromThePaletteSignsInAndShowsTheGuestWithItsMarker', async () => {
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
    await palette('Guest Console: Open for Grant');
    // Web hosts have no native dialog: the simple file dialog takes the path.
    await pickFile(grant.path);
    stamp('grant picked');
    await answer('Guest username', undefined); // prefilled from the grant's panel.username
    await answer('Domain', '');
    await answer('Password for op', password);
    stamp('credentials answered');

    const outer = await page.locator('iframe.webview').first().elementHandle({ timeout: 30000 });
    const outerFrame = await waitFor(async () => (await outer?.contentFrame()) ?? false, 10000, 'outer webview frame');
    const inner = await outerFrame.locator('#active-frame').elementHandle({ timeout: 30000 });
    webview = await waitFor(async () => (await inner.contentFrame()) ?? false, 10000, 'inner webview frame');
    await phaseShown('SETUP', 30000);
    stamp('panel in SETUP');

    const pids = await consolePids(grant.path);
    assert.equal(pids.length, 1, `console processes for the grant: ${JSON.stringify(pids)}`);
    consolePid = pids[0] ?? 0;
    // The origin the extension passed is exactly the one the page (and its webviews) have.
    const origin = await page.evaluate(() => location.origin);
    const argv = await cmdline(consolePid);
    assert.deepEqual(argv.slice(1), ['open', '--grant', grant.path, '--allow-origin', origin]);
    assert.ok(!argv.join(' ').includes(password));
    assert.ok(await exists(runDir), 'no run directory while running');

    const found = await waitFor(async () => (await canvasMarker(webview)) ?? false, 20000, 'the identity marker on the canvas');
    assert.equal(hex32(found), hex32(MARKER));
    const identity = (await webview.textContent('#identity')) ?? '';
    assert.ok(identity.includes(grant.vmName) && identity.includes(`grant ${grant.digest.slice(0, 12)}`), identity);
    await shot('SETUP');
  });

  it('deliversTypedKeysToTheGuestInSetup', async () => {
    const keysBefore = guest.keys().length;
    const canvas = webview.locator('#screen');
    await canvas.click({ position: { x: 30, y: 30 } });
    for (const key of ['KeyQ', 'KeyW', 'Digit1']) await page.keyboard.press(key);
    const want = [0x10, 0x11, 0x02];
    await waitFor(() => want.every((code) => guest.keys().slice(keysBefore).some((k) => k.code === code && k.up)), 10000, 'the typed keys at the guest');
    assert.deepEqual(
      guest.keys().slice(keysBefore).map((k) => [k.code, k.up]),
      want.flatMap((code) => [
        [code, false],
        [code, true],
      ]),
    );
    await waitFor(() => guest.leftPresses().length > 0, 10000, 'the click at the guest');
  });

  it('locksToReadOnlyAndDeliversNoLaterInput', async () => {
    const atLock = guest.inputs().length;
    await webview.click('#lock');
    // READ_ONLY, or already CAPTURING: the console starts the capture right after the lock.
    await webview.waitForFunction(() => ['READ_ONLY', 'CAPTURING', 'REVIEWING', 'ACTION'].includes(document.getElementById('phase')?.dataset['phase'] ?? ''), undefined, { timeout: 15000 });
    assert.equal(await webview.locator('#lock').isDisabled(), true);
    await shot('READ_ONLY');
    const canvas = webview.locator('#screen');
    await canvas.click({ position: { x: 60, y: 60 } });
    for (const key of ['KeyZ', 'Enter', 'Digit9']) await page.keyboard.press(key);
    await canvas.click({ position: { x: 90, y: 50 }, button: 'right' });
    // Read-only, the right click is VS Code's again: the webview asks the workbench for its
    // context menu, which opens asynchronously. Wait for it to be there before dismissing it,
    // or the Escape lands first and the menu then covers the panel (it intercepted the Close
    // click in CI).
    const menu = page.locator('.context-view .monaco-menu');
    await menu.waitFor({ state: 'visible', timeout: 10000 });
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached', timeout: 10000 });
    const lockAt = sent.findIndex((m) => m['type'] === 'lock');
    assert.ok(lockAt >= 0, 'the lock was not sent on the panel socket');
    assert.deepEqual(sent.slice(lockAt).filter((m) => m['type'] === 'key' || m['type'] === 'pointer'), []);
    lockedInputCount = atLock;
  });

  it('closeEndsTheExactConsoleProcessAndRemovesTheRunDirectory', async () => {
    assert.ok(consolePid > 0 && pidAlive(consolePid));
    await webview.click('#close');
    await waitFor(() => !pidAlive(consolePid), 15000, `console pid ${consolePid} gone`);
    stamp('console pid gone');
    await guest.next('client_disconnected', 15000);
    // Everything the page sent went before Close on the same socket; the guest saw the
    // disconnect after everything the console wrote: no input after the lock reached it.
    assert.equal(guest.inputs().length, lockedInputCount, JSON.stringify(guest.inputs().slice(lockedInputCount)));
    await waitFor(async () => !(await exists(runDir)), 5000, 'run directory removed');
    await page.locator('iframe.webview').first().waitFor({ state: 'detached', timeout: 10000 }).catch(() => undefined);
    await shot('CLOSED');
    assert.deepEqual(await consolePids(grant.path), []);
  });

  it('loggedThePhasesAndTheOriginButNoSecretInTheOutputChannel', async () => {
    const logs = path.join(dirs.root, 'user-data', 'logs');
    const files = (await fs.readdir(logs, { recursive: true })).filter((f) => f.endsWith('Guest Console.log'));
    assert.equal(files.length, 1, JSON.stringify(files));
    const text = await fs.readFile(path.join(logs, files[0] ?? ''), 'utf8');
    const origin = `http://127.0.0.1:${port}`;
    assert.ok(text.includes(`web host: the panel's origin is ${origin}`), text);
    for (const phase of ['SETUP', 'LOCKING', 'READ_ONLY']) assert.match(text, new RegExp(`phase ${phase}\\b`));
    assert.match(text, new RegExp(`console pid ${consolePid} exited`));
    assert.ok(!text.includes(password), 'password in the log');
    const panelSockets = socketUrls.filter((u) => !u.includes('reconnectionToken'));
    console.log(`# e2e panel WebSocket: ${panelSockets.join(', ')}`);
    assert.equal(panelSockets.length, 1, JSON.stringify(socketUrls));
  });
});
