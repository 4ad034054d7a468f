// The real built webview (dist/media + the extension's own HTML and CSP) in Debian
// chromium, against a stub console that implements the panel side of the protocol.
import * as assert from 'assert/strict';
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { renderPanelHtml } from '../../src/panelHtml';
import type { ConnectInfo, Phase } from '../../shared/protocol';
import { canvasPixels, CHROMIUM_ARGS, openPanelPage, servePanelSite } from '../browser';
import { encodeFrame, solidPng } from '../frames';
import { PACKAGE_ROOT, waitFor } from '../helpers';
import { CAPABILITY, HEIGHT, QUADRANTS, StubConsole, WIDTH } from '../stubConsole';

const CHROMIUM = process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium';
const ARTIFACTS = process.env['GC_ARTIFACTS_DIR'] ?? path.join(os.tmpdir(), 'gc-artifacts');
describe('webview in chromium against a stub console', () => {
  let stub: StubConsole;
  let decoy: http.Server;
  let decoyConnections = 0;
  let site: http.Server;
  let html = '';
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  const requestUrls: string[] = [];
  const consoleErrors: string[] = [];

  async function shot(name: string): Promise<void> {
    await fs.mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `webview-${name}.png`) });
  }

  async function phaseShown(phase: Phase): Promise<void> {
    await page.waitForFunction((p) => document.getElementById('phase')?.dataset['phase'] === p, phase, { timeout: 5000 });
  }

  /** Input sent before this resolves has reached the stub (WebSocket order + frame ack). */
  async function barrier(): Promise<void> {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await stub.acked(stub.sendFrame());
  }

  /** The stub's message count once everything the page sent before has reached it. */
  async function mark(): Promise<number> {
    await barrier();
    return stub.texts().length;
  }

  before(async () => {
    await fs.access(CHROMIUM);
    stub = new StubConsole();
    await new Promise<void>((r) => stub.server.once('listening', () => r()));

    // A second local server the page must NOT be able to reach (CSP connect-src).
    decoy = http.createServer((_req, res) => res.end('decoy'));
    decoy.on('connection', () => decoyConnections++);
    await new Promise<void>((r) => decoy.listen(0, '127.0.0.1', () => r()));

    const media = path.join(PACKAGE_ROOT, 'dist', 'media');
    const served = await servePanelSite(media, () => html);
    site = served.server;
    const sitePort = served.port;
    html = renderPanelHtml({
      cspSource: `http://127.0.0.1:${sitePort}`,
      nonce: randomBytes(18).toString('base64'),
      scriptUri: '/media/main.js',
      styleUri: '/media/view.css',
      connectSources: [`ws://127.0.0.1:${stub.port}`],
      title: 'Bench VM',
    });

    userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gc-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 900, height: 640 },
      args: CHROMIUM_ARGS,
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (r) => requestUrls.push(r.url()));
    page.on('websocket', (ws) => requestUrls.push(ws.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    await openPanelPage(page, sitePort);
    const connect: ConnectInfo = {
      type: 'connect',
      wsUrl: `ws://127.0.0.1:${stub.port}`,
      run: 'run-browser',
      task: 'task-browser',
      capability: CAPABILITY,
      clientVersion: '0.1.0',
      panel: { title: 'Bench VM' },
    };
    // How the extension host's webview.postMessage arrives in a webview.
    await page.evaluate((info) => window.postMessage(info, '*'), connect);
  });

  after(async () => {
    await context?.close();
    stub?.server.close();
    decoy?.close();
    site?.close();
    if (userDataDir) await fs.rm(userDataDir, { recursive: true, force: true });
  });

  it('sendsHelloFirstWithTheCapabilityAndNeverPutsItInAUrl', async () => {
    await stub.acked(1);
    const [first] = stub.texts();
    assert.deepEqual(first, {
      type: 'hello',
      run: 'run-browser',
      task: 'task-browser',
      capability: CAPABILITY,
      client: { kind: 'vscode-webview', version: '0.1.0' },
      panel: { title: 'Bench VM' },
      features: ['copy_rect'], // the presenter applies copy records (issue 27.5)
    });
    assert.equal(Object.keys(first ?? {})[0], 'type');
    assert.equal(stub.upgradeUrls.length, 1);
    for (const url of [...stub.upgradeUrls, ...requestUrls]) {
      assert.ok(!url.includes(CAPABILITY), `capability in URL ${url}`);
    }
    assert.ok(!html.includes(CAPABILITY));
    assert.match(stub.origins[0] ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    await phaseShown('SETUP');
  });

  it('presentsTheFrameWithEveryRectangle', async () => {
    // The frame is acknowledged once drawn; the canvas shows it a moment later when a frame
    // worker drew it (its placeholder updates with the next composited frame).
    const points = QUADRANTS.map((q) => [q.x + 40, q.y + 30] as const);
    const expected = JSON.stringify({ size: [WIDTH, HEIGHT], values: QUADRANTS.map((q) => [...q.rgb, 255]) });
    await waitFor(async () => JSON.stringify(await canvasPixels(page, points)) === expected, 5000, 'the four quadrants shown');
    // Decoded off the page's main thread: the frame worker started under the panel's CSP.
    assert.match((await page.getAttribute('#screen', 'data-presenter')) ?? '', /^(worker|split)$/);
    const identity = await page.textContent('#identity');
    assert.match(identity ?? '', /win11-bench.*grant a1b2c3d4e5f6.*cert abcdef012345.*server without NLA: credentials checked by the guest/);
    await shot('SETUP');
  });

  it('acknowledgesPacketsItCannotPaintAndAsksForTheWholeScreen', async () => {
    const start = stub.texts().length;
    // Two bad packets, as many as the console may have unacknowledged: a readable header with
    // bytes that are no PNG, then one whose header is unreadable.
    const corrupt = stub.nextFrame++;
    stub.socket?.send(encodeFrame(corrupt, WIDTH, HEIGHT, [{ x: 0, y: 0, w: 16, h: 16, encoding: 1, data: randomBytes(64) }]));
    stub.socket?.send(Buffer.concat([Buffer.from('GCFX'), randomBytes(40)]));
    const refreshes = () => stub.texts().slice(start).filter((m) => m['type'] === 'frame_refresh');
    await waitFor(() => refreshes().length === 2, 5000, 'two frame_refresh messages');
    assert.deepEqual(refreshes(), [
      { type: 'frame_refresh', frame: corrupt },
      { type: 'frame_refresh', frame: 0 },
    ]);
    assert.ok(stub.texts().slice(start).some((m) => m['type'] === 'frame_ack' && m['frame'] === corrupt), 'the corrupt frame was not acknowledged');
    // The console's answer, the whole screen again, is painted and acknowledged: no stall.
    await stub.acked(stub.sendFrame());
    assert.equal(await page.textContent('#dropped'), '2');
    assert.match((await page.textContent('#banner')) ?? '', /could not be shown/);
    assert.deepEqual((await canvasPixels(page, [[4, 4]])).values, [[...(QUADRANTS[0]?.rgb ?? []), 255]]);
  });

  it('appliesCopyRecordsFromItsOwnCanvasBeforeTheImages', async () => {
    // Issue 27.5: a COPY record moves pixels the canvas already has (a scroll), then the
    // frame's images are drawn. Here the top-left quadrant is copied onto the bottom-right
    // one, and a small red square is drawn over part of the copy.
    const data = Buffer.alloc(4); // sx, sy
    const id = stub.nextFrame++;
    stub.socket?.send(
      encodeFrame(id, WIDTH, HEIGHT, [
        { x: WIDTH / 2, y: HEIGHT / 2, w: WIDTH / 2, h: HEIGHT / 2, encoding: 3, data },
        { x: WIDTH - 16, y: HEIGHT - 16, w: 16, h: 16, encoding: 1, data: solidPng(16, 16, [255, 0, 0]) },
      ]),
    );
    await stub.acked(id);
    const q = QUADRANTS.map((quadrant) => [...quadrant.rgb, 255]);
    const points: Array<readonly [number, number]> = [[WIDTH / 2 + 40, HEIGHT / 2 + 30], [WIDTH - 4, HEIGHT - 4], [40, 30], [WIDTH / 2 + 40, 30]];
    const expected = JSON.stringify({ size: [WIDTH, HEIGHT], values: [q[0], [255, 0, 0, 255], q[0], q[1]] });
    await waitFor(async () => JSON.stringify(await canvasPixels(page, points)) === expected, 5000, 'the copied quadrant and the square');
    // The whole screen again for the tests that follow.
    await stub.acked(stub.sendFrame());
  });

  it('keepsPresentingInThePageWhenTheFrameWorkerFails', async () => {
    const [worker] = page.workers();
    assert.ok(worker, 'no frame worker');
    const start = stub.texts().length;
    // An uncaught error in the worker: the page takes over drawing and asks for the whole screen.
    await worker.evaluate(() => {
      setTimeout(() => {
        throw new Error('frame worker broken by the test');
      });
    });
    await page.waitForFunction(() => document.getElementById('screen')?.dataset['presenter'] === 'page', null, { timeout: 5000 });
    await waitFor(() => stub.texts().slice(start).some((m) => m['type'] === 'frame_refresh' && m['frame'] === 0), 5000, 'frame_refresh after the worker failed');
    await stub.acked(stub.sendFrame());
    const points = QUADRANTS.map((q) => [q.x + 40, q.y + 30] as const);
    assert.deepEqual((await canvasPixels(page, points)).values, QUADRANTS.map((q) => [...q.rgb, 255]));
  });

  it('sendsPointerAndKeyMessagesInDesktopCoordinatesWithIncreasingSeq', async () => {
    const start = stub.texts().length;
    const box = await page.locator('#screen').boundingBox();
    assert.ok(box);
    // The canvas is scaled to fit; a click at 3/4 width, 1/4 height maps back to desktop pixels.
    await page.mouse.click(box.x + box.width * 0.75, box.y + box.height * 0.25);
    await page.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.5, { button: 'right' });
    for (const key of ['KeyA', 'ControlRight', 'ArrowLeft']) {
      await page.keyboard.press(key);
    }
    // Playwright's US layout has no ISO key; send it as chromium input, as a keyboard would.
    const cdp = await context.newCDPSession(page);
    for (const type of ['rawKeyDown', 'keyUp'] as const) {
      await cdp.send('Input.dispatchKeyEvent', { type, code: 'IntlBackslash', key: '\\', windowsVirtualKeyCode: 226, nativeVirtualKeyCode: 94 });
    }
    await cdp.detach();
    for (const key of ['NumpadEnter', 'Digit7']) {
      await page.keyboard.press(key);
    }
    await page.keyboard.down('ShiftLeft');
    await page.mouse.wheel(0, 120);
    await barrier();
    const inputs = stub.inputsSince(start);
    const buttons = inputs.filter((m) => m['type'] === 'pointer' && m['wheel'] === 0);
    const left = buttons.find((m) => m['buttons'] === 1);
    assert.ok(left, 'no left-button pointer message');
    assert.ok(Math.abs(Number(left['x']) - WIDTH * 0.75) <= 1 && Math.abs(Number(left['y']) - HEIGHT * 0.25) <= 1, JSON.stringify(left));
    assert.ok(buttons.some((m) => m['buttons'] === 2 && Math.abs(Number(m['x']) - WIDTH / 2) <= 1), 'no right-button message at the centre');
    const keys = inputs.filter((m) => m['type'] === 'key').map((m) => [m['scancode'], m['down']]);
    assert.deepEqual(keys, [
      [0x1e, true],
      [0x1e, false],
      [0xe01d, true],
      [0xe01d, false],
      [0xe04b, true],
      [0xe04b, false],
      [0x56, true],
      [0x56, false],
      [0xe01c, true],
      [0xe01c, false],
      [0x08, true],
      [0x08, false],
      [0x2a, true],
    ]);
    assert.ok(inputs.some((m) => m['type'] === 'pointer' && m['wheel'] === -120), 'no wheel message');
    const seqs = inputs.map((m) => Number(m['seq']));
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    assert.equal(new Set(seqs).size, seqs.length);
    assert.equal(seqs[0], 1);
    stub.send({ type: 'input_ack', upto: seqs.at(-1) ?? 0 });
    stub.send({ type: 'input_refused', seq: 999, code: 'RATE_LIMITED' });
    await page.waitForFunction(() => document.getElementById('refused')?.textContent === '1');
  });

  it('releasesHeldKeysOnBlur', async () => {
    const start = stub.texts().length;
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'viewport');
    await page.evaluate(() => (document.getElementById('lock') as HTMLButtonElement).focus());
    await barrier();
    const keys = stub.inputsSince(start).filter((m) => m['type'] === 'key');
    assert.deepEqual(keys.map((m) => [m['scancode'], m['down']]), [[0x2a, false]]);
    await page.keyboard.up('ShiftLeft');
  });

  // The keyboard (issue 19). VS Code's webview host listens for keydown/keyup on the inner
  // frame's window in the bubble phase and forwards them to the workbench; `hostSaw` is a
  // listener installed exactly like it.
  type SyntheticKey = { type: 'keydown' | 'keyup'; code: string; ctrl?: boolean; alt?: boolean; shift?: boolean; meta?: boolean; altGraph?: boolean };

  async function installHostListener(): Promise<void> {
    await page.evaluate(() => {
      const w = window as unknown as { __hostSaw?: string[] };
      if (w.__hostSaw) return;
      const saw: string[] = [];
      w.__hostSaw = saw;
      window.addEventListener('keydown', (e) => saw.push(`down ${e.code}`));
      window.addEventListener('keyup', (e) => saw.push(`up ${e.code}`));
    });
  }

  async function hostSaw(): Promise<string[]> {
    return page.evaluate(() => (window as unknown as { __hostSaw: string[] }).__hostSaw.splice(0));
  }

  /** Untrusted KeyboardEvents at the viewport; resolves with each one's defaultPrevented. */
  async function dispatchKeys(events: SyntheticKey[]): Promise<boolean[]> {
    return page.evaluate((evs) => {
      const viewport = document.getElementById('viewport') as HTMLElement;
      return evs.map((k) => {
        const e = new KeyboardEvent(k.type, {
          code: k.code,
          ctrlKey: k.ctrl === true,
          altKey: k.alt === true,
          shiftKey: k.shift === true,
          metaKey: k.meta === true,
          modifierAltGraph: k.altGraph === true,
          bubbles: true,
          cancelable: true,
        });
        viewport.dispatchEvent(e);
        return e.defaultPrevented;
      });
    }, events);
  }

  async function keysSince(start: number): Promise<Array<[unknown, unknown]>> {
    await barrier();
    return stub.inputsSince(start).flatMap((m) => (m['type'] === 'key' ? [[m['scancode'], m['down']] as [unknown, unknown]] : []));
  }

  const activeId = (): Promise<string | undefined> => page.evaluate(() => document.activeElement?.id);
  const keyboardOwner = (): Promise<string | undefined> => page.evaluate(() => document.getElementById('keyboard')?.dataset['owner']);

  it('keepsViewportKeysFromTheHostForwardingAndTheirDefaultActions', async () => {
    await installHostListener();
    await page.locator('#screen').click({ position: { x: 20, y: 20 } });
    assert.equal(await activeId(), 'viewport');
    assert.equal(await keyboardOwner(), 'guest');
    await hostSaw();
    const start = await mark();
    for (const chord of ['Control+KeyW', 'Control+KeyP', 'F1', 'Control+Tab', 'Control+KeyA', 'Tab']) await page.keyboard.press(chord);
    const ctrl = (sc: number): Array<[number, boolean]> => [[0x1d, true], [sc, true], [sc, false], [0x1d, false]];
    assert.deepEqual(await keysSince(start), [...ctrl(0x11), ...ctrl(0x19), [0x3b, true], [0x3b, false], ...ctrl(0x0f), ...ctrl(0x1e), [0x0f, true], [0x0f, false]]);
    assert.deepEqual(await hostSaw(), [], 'a key in the focused viewport reached the host listener');
    assert.equal(await activeId(), 'viewport', 'Tab moved the focus');
    assert.equal(await page.evaluate(() => window.getSelection()?.toString() ?? ''), '', 'Ctrl+A selected page text');
    assert.deepEqual(await dispatchKeys([{ type: 'keydown', code: 'KeyS', ctrl: true }, { type: 'keyup', code: 'KeyS', ctrl: true }, { type: 'keyup', code: 'ControlLeft' }]), [true, true, true]);

    // Outside the viewport the page behaves as usual: the host sees the key, the guest does not.
    // After the Ctrl+S above has reached the stub, or it would count as a key sent from outside.
    const outside = await mark();
    await page.evaluate(() => (document.getElementById('close') as HTMLButtonElement).focus());
    assert.equal(await keyboardOwner(), 'vscode');
    await page.keyboard.press('KeyB');
    assert.deepEqual(await keysSince(outside), []);
    assert.deepEqual(await hostSaw(), ['down KeyB', 'up KeyB']);
    await page.locator('#screen').click({ position: { x: 20, y: 20 } });
    assert.equal(await keyboardOwner(), 'guest');
  });

  it('reconcilesHeldModifiersWithEachKeyEventsFlags', async () => {
    const start = await mark();
    await dispatchKeys([
      // Ctrl's key-up was swallowed (Ctrl+Tab in a browser window): the next key says Ctrl is up.
      { type: 'keydown', code: 'ControlLeft', ctrl: true },
      { type: 'keydown', code: 'KeyA' },
      { type: 'keyup', code: 'KeyA' },
      // Shift and right Alt held; a key-up that says neither is down lets both go.
      { type: 'keydown', code: 'ShiftLeft', shift: true },
      { type: 'keydown', code: 'AltRight', alt: true, shift: true },
      { type: 'keyup', code: 'KeyQ' },
      // AltGr reported through getModifierState('AltGraph'), not altKey: it stays held.
      { type: 'keydown', code: 'AltRight', altGraph: true },
      { type: 'keydown', code: 'KeyQ', altGraph: true },
      { type: 'keyup', code: 'KeyQ', altGraph: true },
      { type: 'keyup', code: 'AltRight' },
      // Meta and right Ctrl.
      { type: 'keydown', code: 'MetaLeft', meta: true },
      { type: 'keydown', code: 'ControlRight', ctrl: true, meta: true },
      { type: 'keydown', code: 'KeyE', ctrl: true },
      { type: 'keyup', code: 'KeyE' },
    ]);
    // A wheel (or click) is the next event too: Shift held, the wheel says it is up.
    await dispatchKeys([{ type: 'keydown', code: 'ShiftLeft', shift: true }]);
    await page.evaluate(() => document.getElementById('screen')?.dispatchEvent(new WheelEvent('wheel', { deltaY: 120, shiftKey: false, bubbles: true, cancelable: true })));
    const events = await barrier().then(() => stub.inputsSince(start));
    assert.deepEqual(
      events.slice(-2).map((m) => [m['type'], m['scancode'] ?? m['wheel']]),
      [
        ['key', 0x2a],
        ['pointer', -120],
      ],
    );
    assert.deepEqual(await keysSince(start), [
      [0x1d, true],
      [0x1d, false],
      [0x1e, true],
      [0x1e, false],
      [0x2a, true],
      [0xe038, true],
      [0x2a, false],
      [0xe038, false],
      [0xe038, true],
      [0x10, true],
      [0x10, false],
      [0xe038, false],
      [0xe05b, true],
      [0xe01d, true],
      [0xe05b, false],
      [0x12, true],
      [0xe01d, false],
      [0x12, false],
      [0x2a, true],
      [0x2a, false],
    ]);
  });

  it('releasesEveryHeldKeyLatestFirstOnBlurAndWhenHidden', async () => {
    let start = stub.texts().length;
    await page.keyboard.down('ShiftLeft');
    await page.keyboard.down('KeyA');
    await page.evaluate(() => window.dispatchEvent(new Event('blur')));
    assert.deepEqual(await keysSince(start), [
      [0x2a, true],
      [0x1e, true],
      [0x1e, false],
      [0x2a, false],
    ]);
    await page.keyboard.up('KeyA');
    await page.keyboard.up('ShiftLeft');
    start = stub.texts().length;
    await page.keyboard.down('ControlLeft');
    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
      delete (document as unknown as { visibilityState?: string }).visibilityState;
    });
    await page.keyboard.up('ControlLeft');
    assert.deepEqual(await keysSince(start), [
      [0x1d, true],
      [0x1d, false],
    ]);
  });

  it('sendsCtrlAltDelFromItsButtonAndKeepsTheKeyboardOnTheGuest', async () => {
    const start = await mark();
    await page.click('#send-cad');
    await page.click('#send-win');
    await page.click('#send-alttab');
    assert.deepEqual(await keysSince(start), [
      [0x1d, true],
      [0x38, true],
      [0xe053, true],
      [0xe053, false],
      [0x38, false],
      [0x1d, false],
      [0xe05b, true],
      [0xe05b, false],
      [0x38, true],
      [0x0f, true],
      [0x0f, false],
      [0x38, false],
    ]);
    assert.equal(await activeId(), 'viewport');
    assert.equal(await keyboardOwner(), 'guest');
  });

  it('handsTheKeyboardBackOnLeftCtrlAltAloneAndTakesItOnAClick', async () => {
    await installHostListener();
    await hostSaw();
    let start = stub.texts().length;
    // Ctrl+Alt with a key in between is the guest's (Ctrl+Alt+End, AltGr chords).
    for (const k of ['ControlLeft', 'AltLeft']) await page.keyboard.down(k);
    await page.keyboard.press('End');
    for (const k of ['AltLeft', 'ControlLeft']) await page.keyboard.up(k);
    assert.equal(await keyboardOwner(), 'guest');
    assert.equal((await keysSince(start)).length, 6);

    start = stub.texts().length;
    for (const k of ['ControlLeft', 'AltLeft']) await page.keyboard.down(k);
    await page.keyboard.up('AltLeft');
    await page.waitForFunction(() => document.getElementById('keyboard')?.dataset['owner'] === 'vscode');
    await page.keyboard.up('ControlLeft');
    assert.notEqual(await activeId(), 'viewport');
    assert.match((await page.textContent('#keyboard')) ?? '', /VS Code/);
    await page.keyboard.press('KeyB');
    assert.deepEqual(await keysSince(start), [
      [0x1d, true],
      [0x38, true],
      [0x38, false],
      [0x1d, false],
    ]);
    assert.deepEqual(await hostSaw(), ['up ControlLeft', 'down KeyB', 'up KeyB']);
    // Focus coming back to the page does not take the keyboard again; a click does.
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    assert.notEqual(await activeId(), 'viewport');
    await page.locator('#screen').click({ position: { x: 20, y: 20 } });
    assert.equal(await keyboardOwner(), 'guest');
  });

  it('sendsFocusThatLandsOnThePageToTheViewport', async () => {
    await installHostListener();
    await hostSaw();
    const start = await mark();
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    assert.equal(await keyboardOwner(), 'vscode');
    // A key while the page itself has the focus is not lost: it goes to the guest.
    await page.keyboard.press('KeyC');
    assert.equal(await activeId(), 'viewport');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    assert.equal(await activeId(), 'viewport');
    assert.equal(await keyboardOwner(), 'guest');
    assert.deepEqual(await keysSince(start), [
      [0x2e, true],
      [0x2e, false],
    ]);
    assert.deepEqual(await hostSaw(), []);
  });

  it('panicChordAsksTheHostForPanicAndSendsNoKeyOfItsOwn', async () => {
    const start = await mark();
    const postedBefore = await page.evaluate(() => (window as unknown as { __posted: Array<{ type: string }> }).__posted.filter((m) => m.type === 'request_panic').length);
    await page.keyboard.press('Control+Alt+Shift+KeyP');
    await page.waitForFunction((n) => (window as unknown as { __posted: Array<{ type: string }> }).__posted.filter((m) => m.type === 'request_panic').length === n + 1, postedBefore);
    // Ctrl, Alt and Shift went down before P; P itself never reaches the guest, and nothing after.
    assert.deepEqual(await keysSince(start), [
      [0x1d, true],
      [0x38, true],
      [0x2a, true],
    ]);
    await page.keyboard.press('KeyZ');
    assert.deepEqual(await keysSince(start), [
      [0x1d, true],
      [0x38, true],
      [0x2a, true],
    ]);
  });

  it('sendsNoInputAfterReadOnlyAndKeepsNoInputListener', async () => {
    stub.send({ type: 'phase', phase: 'LOCKING', reason: '' });
    await phaseShown('LOCKING');
    await shot('LOCKING');
    stub.send({ type: 'drained', upto: 20 });
    stub.send({ type: 'phase', phase: 'READ_ONLY', reason: 'lock committed' });
    await phaseShown('READ_ONLY');
    const start = await mark();
    const box = await page.locator('#screen').boundingBox();
    assert.ok(box);
    await page.mouse.move(box.x + 10, box.y + 10);
    await page.mouse.click(box.x + 50, box.y + 50);
    await page.mouse.wheel(0, 240);
    await page.locator('#viewport').focus();
    for (const key of ['KeyB', 'Enter', 'ControlLeft', 'Tab']) {
      await page.keyboard.press(key);
    }
    await barrier();
    assert.deepEqual(stub.inputsSince(start), []);

    // No input listener of the webview script remains attached anywhere the capture used.
    const cdp = await context.newCDPSession(page);
    const scripts = new Map<string, string>();
    cdp.on('Debugger.scriptParsed', (e: { scriptId: string; url: string }) => scripts.set(e.scriptId, e.url));
    await cdp.send('Debugger.enable');
    const inputTypes = new Set(['keydown', 'keyup', 'pointermove', 'pointerdown', 'pointerup', 'wheel', 'blur', 'contextmenu']);
    let ourListeners = 0;
    for (const expr of ["document.getElementById('viewport')", "document.getElementById('screen')", 'window']) {
      const { result } = (await cdp.send('Runtime.evaluate', { expression: expr })) as { result: { objectId?: string } };
      assert.ok(result.objectId);
      const { listeners } = (await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId })) as {
        listeners: Array<{ type: string; scriptId: string }>;
      };
      const ours = listeners.filter((l) => (scripts.get(l.scriptId) ?? '').endsWith('/media/main.js'));
      ourListeners += ours.length;
      const left = ours.filter((l) => inputTypes.has(l.type)).map((l) => l.type);
      assert.deepEqual(left, [], `${expr} still listens to ${left.join(', ')}`);
    }
    assert.ok(ourListeners > 0, 'listener attribution failed (no listener of main.js found at all)');
    await cdp.send('Debugger.disable');
    await cdp.detach();
    assert.equal(await page.locator('#lock').isDisabled(), true);
    await shot('READ_ONLY');
  });

  it('blocksConnectionsToAnyOtherPortByCsp', async () => {
    const decoyPort = (decoy.address() as AddressInfo).port;
    const violations = await page.evaluate(async (port) => {
      const seen: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
      try {
        new WebSocket(`ws://127.0.0.1:${port}/`);
      } catch {
        seen.push('ws threw');
      }
      try {
        await fetch(`http://127.0.0.1:${port}/`);
      } catch {
        /* blocked */
      }
      try {
        await fetch(`http://127.0.0.1:${port}/img`, { mode: 'no-cors' });
      } catch {
        /* blocked */
      }
      await new Promise((r) => setTimeout(r, 50));
      return seen;
    }, decoyPort);
    assert.ok(violations.filter((v) => v.startsWith('connect-src')).length >= 2, JSON.stringify(violations));
    // Give any connection that slipped through a moment to arrive at the decoy: none may.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(decoyConnections, 0);
  });

  it('warnsInTheHeaderWhenUnsignedGrantsAreAllowed', async () => {
    // No warning for the signed, pinned grant of the first welcome.
    assert.doesNotMatch((await page.textContent('#banner')) ?? '', /unsigned|NOT signed|does not pin/);
    stub.send({
      type: 'welcome',
      run: 'run-browser',
      task: 'task-browser',
      vm: 'win11-bench',
      identity: { grant_digest: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', cert_pin: false, signed: false, unsigned_grants_allowed: true },
      width: WIDTH,
      height: HEIGHT,
      protocol: 1,
    });
    await waitFor(async () => /NOT signed/.test((await page.textContent('#banner')) ?? ''), 5000, 'unsigned warning');
    const banner = (await page.textContent('#banner')) ?? '';
    assert.match(banner, /Warning: .*does not pin the guest certificate; this grant is NOT signed: unsigned grants are allowed/);
    await shot('unsigned-warning');
  });

  it('showsEveryPhaseAndTheCloseReason', async () => {
    for (const phase of ['CAPTURING', 'REVIEWING', 'ACTION'] as const) {
      stub.send({ type: 'phase', phase, reason: '' });
      await phaseShown(phase);
      await shot(phase);
    }
    stub.send({ type: 'bye', reason: 'action done, run complete' });
    await phaseShown('CLOSED');
    assert.match((await page.textContent('#banner')) ?? '', /action done, run complete/);
    await shot('CLOSED');
    const posted = await page.evaluate(() => (window as unknown as { __posted: Array<{ type: string; phase?: string }> }).__posted);
    assert.ok(posted.some((m) => m.type === 'status' && m.phase === 'CLOSED'));
    assert.ok(!JSON.stringify(posted).includes(CAPABILITY), 'capability posted back to the host');
    assert.deepEqual(consoleErrors.filter((e) => !/Content Security Policy|ERR_|Failed to fetch|WebSocket|broken by the test/.test(e)), []);
  });
});
