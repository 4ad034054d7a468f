// The real built webview (dist/media + the extension's own HTML and CSP) in Debian
// chromium, connected to a REAL `guest-console open` for a demo grant whose VM is the
// test guest. The guest reports every input event it decodes, so "reached the guest" and
// "nothing after the lock" are counted where it matters.
import * as assert from 'assert/strict';
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { readGrantInfo } from '../../src/GrantInfo';
import { renderPanelHtml } from '../../src/panelHtml';
import type { ConnectInfo, Phase } from '../../shared/protocol';
import { waitFor } from '../helpers';
import { PACKAGE_ROOT } from '../helpers';
import { hex32 } from '../marker';
import { canvasMarker, CHROMIUM_ARGS, openPanelPage, servePanelSite } from '../browser';
import { DemoGrant, exists, issueDemoGrant, privateDirs, RealConsole, requireBuild, TestGuest } from './rig';

const CHROMIUM = process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium';
const ARTIFACTS = process.env['GC_ARTIFACTS_DIR'] ?? path.join(os.tmpdir(), 'gc-artifacts');
const MARKER = 0x5eed4a11;
const WIDTH = 640;
const HEIGHT = 400;
const INPUT_TYPES = new Set(['key', 'pointer']);
const READ_ONLY_PHASES = new Set(['READ_ONLY', 'CAPTURING', 'REVIEWING', 'ACTION']);

describe('webview in chromium against the real console and the test guest', () => {
  let dirs: Awaited<ReturnType<typeof privateDirs>>;
  let guest: TestGuest;
  let grant: DemoGrant;
  let console_: RealConsole;
  let panel: { port: number; capability: string; run: string };
  let site: http.Server;
  let sitePort = 0;
  let decoy: http.Server;
  let decoyConnections = 0;
  let html = '';
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  const password = randomBytes(12).toString('base64url');
  /** Every text frame the page sent on the console socket, in order. */
  const sent: Array<Record<string, unknown>> = [];

  async function shot(name: string): Promise<void> {
    await fs.mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `real-console-${name}.png`) });
  }

  async function phaseShown(phase: Phase, timeout = 10000): Promise<void> {
    await page.waitForFunction((p) => document.getElementById('phase')?.dataset['phase'] === p, phase, { timeout });
  }

  before(async () => {
    await requireBuild();
    await fs.access(CHROMIUM);
    dirs = await privateDirs('gc-real-browser-');
    guest = await TestGuest.start({ marker: MARKER, width: WIDTH, height: HEIGHT, password });
    grant = await issueDemoGrant(dirs.root, guest, 'Real console browser test');

    const media = path.join(PACKAGE_ROOT, 'dist', 'media');
    const served = await servePanelSite(media, () => html);
    site = served.server;
    sitePort = served.port;
    decoy = http.createServer((_req, res) => res.end('decoy'));
    decoy.on('connection', () => decoyConnections++);
    await new Promise<void>((r) => decoy.listen(0, '127.0.0.1', () => r()));

    // The page is served from http://127.0.0.1:<sitePort>, and that is the Origin its
    // WebSocket presents: exactly what the console is told to allow (as in code-server).
    console_ = RealConsole.start({ grant: grant.path, runtimeDir: dirs.runtime, stateDir: dirs.state, issuerKey: grant.issuerKey, allowOrigins: [`http://127.0.0.1:${sitePort}`] });
    panel = await console_.signIn(password);
    assert.equal(panel.run, grant.run);

    html = renderPanelHtml({
      cspSource: `http://127.0.0.1:${sitePort}`,
      nonce: randomBytes(18).toString('base64'),
      scriptUri: '/media/main.js',
      styleUri: '/media/view.css',
      connectSources: [`ws://127.0.0.1:${panel.port}`],
      title: grant.title,
    });

    userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gc-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, viewport: { width: 1000, height: 700 }, args: CHROMIUM_ARGS });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('websocket', (ws) =>
      ws.on('framesent', (f) => {
        if (typeof f.payload === 'string') sent.push(JSON.parse(f.payload) as Record<string, unknown>);
      }),
    );
    await openPanelPage(page, sitePort);
    const info = await readGrantInfo(grant.path); // what the extension reads for hello
    const connect: ConnectInfo = {
      type: 'connect',
      wsUrl: `ws://127.0.0.1:${panel.port}`,
      run: grant.run,
      task: grant.task,
      capability: panel.capability,
      clientVersion: '0.1.0',
      panel: info.panel,
    };
    await page.evaluate((m) => window.postMessage(m, '*'), connect);
  });

  after(async () => {
    await context?.close();
    await console_?.stop();
    await guest?.stop();
    site?.close();
    decoy?.close();
    if (userDataDir) await fs.rm(userDataDir, { recursive: true, force: true });
    if (dirs) await fs.rm(dirs.root, { recursive: true, force: true });
  });

  it('drawsTheGuestsFramesCarryingItsIdentityMarker', async () => {
    await phaseShown('SETUP');
    const found = await waitFor(async () => (await canvasMarker(page)) ?? false, 15000, 'the identity marker on the canvas');
    assert.equal(hex32(found), hex32(MARKER));
    const size = await page.evaluate(() => {
      const c = document.getElementById('screen') as HTMLCanvasElement;
      return [c.width, c.height];
    });
    assert.deepEqual(size, [WIDTH, HEIGHT]);
    const identity = (await page.textContent('#identity')) ?? '';
    assert.ok(identity.includes(grant.vmName), identity);
    assert.ok(identity.includes(`grant ${grant.digest.slice(0, 12)}`), `${identity} / ${grant.digest}`);
    assert.ok(identity.includes(`cert ${guest.certSha256.slice(0, 12)}`), `${identity} / ${guest.certSha256}`);
    assert.ok(sent.some((m) => m['type'] === 'frame_ack'), 'no frame acknowledged');
    await shot('SETUP');
  });

  it('deliversTypedKeysAndClicksToTheGuestInSetup', async () => {
    const box = await page.locator('#screen').boundingBox();
    assert.ok(box);
    const keysBefore = guest.keys().length;
    // A click at (3/4, 1/2) of the scaled canvas is desktop pixel (480, 200).
    await page.mouse.click(box.x + box.width * 0.75, box.y + box.height * 0.5);
    for (const key of ['KeyG', 'KeyC', 'Digit7']) {
      await page.keyboard.press(key);
    }
    const want = [0x22, 0x2e, 0x08];
    await waitFor(() => want.every((code) => guest.keys().slice(keysBefore).some((k) => k.code === code && k.up)), 10000, 'the typed keys at the guest');
    const keys = guest.keys().slice(keysBefore);
    assert.deepEqual(
      keys.map((k) => [k.code, k.up]),
      want.flatMap((code) => [
        [code, false],
        [code, true],
      ]),
    );
    const press = await waitFor(() => guest.leftPresses().at(-1), 10000, 'the click at the guest');
    assert.ok(Math.abs(press.x - WIDTH * 0.75) <= 2 && Math.abs(press.y - HEIGHT * 0.5) <= 2, JSON.stringify(press));
  });

  it('blocksEveryOtherConnectionByCsp', async () => {
    const decoyPort = (decoy.address() as AddressInfo).port;
    const violations = await page.evaluate(async (port) => {
      const seen: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
      for (const url of [`ws://127.0.0.1:${port}/`, `ws://localhost:${port}/`]) {
        try {
          new WebSocket(url);
        } catch {
          seen.push('ws threw');
        }
      }
      for (const url of [`http://127.0.0.1:${port}/`, `http://127.0.0.1:${port}/img`]) {
        try {
          await fetch(url, { mode: 'no-cors' });
        } catch {
          /* blocked */
        }
      }
      await new Promise((r) => setTimeout(r, 50));
      return seen;
    }, decoyPort);
    // A blocked WebSocket throws in its constructor (or reports a violation); a blocked fetch reports one.
    const ws = violations.filter((v) => v === 'ws threw' || v.startsWith('connect-src ws:')).length;
    const http_ = violations.filter((v) => v.startsWith('connect-src http:')).length;
    assert.ok(ws >= 2 && http_ >= 2, JSON.stringify(violations));
    await new Promise((r) => setTimeout(r, 200)); // anything that slipped through would arrive now
    assert.equal(decoyConnections, 0);
  });

  it('locksToReadOnlyAndNoLaterKeyOrClickIsSentOrReachesTheGuest', async () => {
    // All setup input so far has reached the guest (previous test); from here on the
    // guest's input count must not move.
    const atLock = guest.inputs().length;
    const sentAtLock = sent.length;
    await page.click('#lock');
    await console_.next('phase', 10000, (e) => e['phase'] === 'READ_ONLY');
    // The console moves on from READ_ONLY by itself (CAPTURING): the page must have shown
    // READ-ONLY on the way and stay read-only.
    await page.waitForFunction(() => (window as unknown as { __posted: Array<{ type: string; phase?: string }> }).__posted.some((m) => m.type === 'status' && m.phase === 'READ_ONLY'), undefined, { timeout: 10000 });
    // The status goes to the host at each phase and each counter change: the phases it named, in order.
    const shown = (await page.evaluate(() => (window as unknown as { __posted: Array<{ type: string; phase?: string }> }).__posted.flatMap((m) => (m.type === 'status' && m.phase ? [m.phase] : [])))).filter((p, i, all) => p !== all[i - 1]);
    assert.deepEqual(shown.slice(shown.indexOf('SETUP'), shown.indexOf('READ_ONLY') + 1), ['SETUP', 'LOCKING', 'READ_ONLY']);
    assert.ok(READ_ONLY_PHASES.has((await page.evaluate(() => document.getElementById('phase')?.dataset['phase'])) ?? ''));
    assert.equal(await page.locator('#lock').isDisabled(), true);
    await shot('READ_ONLY');
    assert.deepEqual(
      sent.slice(sentAtLock).map((m) => m['type']).filter((t) => t !== 'frame_ack'),
      ['lock'],
    );

    const box = await page.locator('#screen').boundingBox();
    assert.ok(box);
    await page.mouse.click(box.x + 40, box.y + 40);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2, { button: 'right' });
    await page.mouse.wheel(0, 240);
    await page.locator('#viewport').focus();
    for (const key of ['KeyB', 'Enter', 'Tab', 'ControlLeft', 'Escape']) {
      await page.keyboard.press(key);
    }
    assert.deepEqual(sent.slice(sentAtLock).filter((m) => INPUT_TYPES.has(String(m['type']))), []);

    // The barrier: Close goes on the same socket after anything the page might have sent,
    // and the guest reports the disconnect only after everything before it on the wire.
    await page.click('#close');
    await guest.next('client_disconnected', 15000);
    await console_.waitExit(15000);
    assert.equal(console_.exitCode, 0, console_.diagnostics());
    assert.equal(guest.inputs().length, atLock, `input reached the guest after the lock: ${JSON.stringify(guest.inputs().slice(atLock))}`);
    await phaseShown('CLOSED');
    await shot('CLOSED');
    assert.equal(await exists(path.join(dirs.runtime, 'guest-console', 'runs', grant.run)), false, 'run directory left behind');
    const closed = console_.of('closed')[0];
    assert.ok(closed, 'no closed event');
  });
});

describe('panel Origin policy of the real console', () => {
  let dirs: Awaited<ReturnType<typeof privateDirs>>;
  let guest: TestGuest;
  let console_: RealConsole;
  let panel: { port: number; capability: string; run: string };
  let grant: DemoGrant;
  const password = randomBytes(12).toString('base64url');
  const ALLOWED = 'http://127.0.0.1:18080';

  before(async () => {
    await requireBuild();
    dirs = await privateDirs('gc-real-origin-');
    guest = await TestGuest.start({ marker: 0x0e1f2a3b, width: 320, height: 200, password });
    grant = await issueDemoGrant(dirs.root, guest, 'Origin test');
    console_ = RealConsole.start({ grant: grant.path, runtimeDir: dirs.runtime, stateDir: dirs.state, issuerKey: grant.issuerKey, allowOrigins: [ALLOWED] });
    panel = await console_.signIn(password);
  });

  after(async () => {
    await console_?.stop();
    await guest?.stop();
    if (dirs) await fs.rm(dirs.root, { recursive: true, force: true });
  });

  /** Opens a raw panel socket with the given Origin and sends a valid hello. */
  async function attempt(origin: string): Promise<{ opened: boolean; status?: number; messages: Array<Record<string, unknown>> }> {
    const info = await readGrantInfo(grant.path);
    return new Promise((resolve) => {
      const messages: Array<Record<string, unknown>> = [];
      const ws = new WebSocket(`ws://127.0.0.1:${panel.port}/`, { origin });
      let opened = false;
      const finish = (status?: number) => {
        clearTimeout(timer);
        resolve({ opened, ...(status !== undefined ? { status } : {}), messages });
      };
      const timer = setTimeout(() => {
        ws.terminate();
        finish();
      }, 5000);
      ws.on('unexpected-response', (_req, res) => {
        ws.terminate();
        finish(res.statusCode);
      });
      ws.on('error', () => finish());
      ws.on('open', () => {
        opened = true;
        ws.send(JSON.stringify({ type: 'hello', run: grant.run, task: grant.task, capability: panel.capability, client: { kind: 'test', version: '1' }, panel: info.panel }));
      });
      ws.on('message', (data, binary) => {
        if (binary) {
          ws.close(1000);
          return;
        }
        const m = JSON.parse(data.toString()) as Record<string, unknown>;
        messages.push(m);
        if (m['type'] === 'welcome') ws.close(1000);
      });
      ws.on('close', () => finish());
    });
  }

  const refused: Array<[string, string]> = [
    ['aForeignWebOrigin', 'http://evil.example'],
    ['theAllowedHostOnAnotherPort', 'http://127.0.0.1:18081'],
    ['theAllowedOriginOverHttps', 'https://127.0.0.1:18080'],
    ['aLookalikeWebviewOrigin', 'vscode-webview-evil://abc'],
  ];
  for (const [name, origin] of refused) {
    it(`refusesPanelOriginFor ${name} despite a valid capability`, async () => {
      const result = await attempt(origin);
      assert.equal(result.opened, false, JSON.stringify(result));
      assert.ok(!result.messages.some((m) => m['type'] === 'welcome'));
    });
  }

  it('acceptsAVscodeWebviewOriginWithTheCapability', async () => {
    const result = await attempt('vscode-webview://1c2d3e4f5a6b7c8d9e0f');
    assert.equal(result.opened, true, JSON.stringify(result));
    const welcome = result.messages.find((m) => m['type'] === 'welcome');
    assert.ok(welcome, JSON.stringify(result.messages));
    assert.equal(welcome['run'], grant.run);
    assert.equal(welcome['phase'], 'SETUP');
  });

  it('countsTheRefusalsInTheEvidenceAsPanelOrigin', async () => {
    await console_.stop();
    const evidence = (await fs.readdir(path.join(dirs.state, 'evidence'))).filter((f) => f.startsWith(grant.run));
    assert.equal(evidence.length, 1, JSON.stringify(evidence));
    const text = await fs.readFile(path.join(dirs.state, 'evidence', evidence[0] ?? ''), 'utf8');
    assert.ok(text.includes('PANEL_ORIGIN'), 'PANEL_ORIGIN not in the evidence');
    assert.ok(!text.includes(panel.capability), 'capability in the evidence');
  });
});
