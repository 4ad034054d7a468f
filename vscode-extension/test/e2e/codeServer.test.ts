// End to end in a real VS Code: code-server 4.100.3 (VS Code 1.100.3, installed by
// scripts/install-code-server into a cache outside the repository) with the packaged
// .vsix installed, driven in Debian chromium. The extension starts the real console for a
// demo grant whose VM is the test guest; the test answers the sign-in boxes, then checks
// inside the webview (iframe.webview > #active-frame) what the guest got.
//
// Skipped, with the reason, only when code-server cannot be installed here (the npm
// registry is unreachable: install-code-server exits 77).
import * as assert from 'assert/strict';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { pidAlive, waitFor } from '../helpers';
import { hex32 } from '../marker';
import { canvasMarker } from '../browser';
import { BIN, DemoGrant, exists, TestGuest } from '../real/rig';
import { cmdline, CodeServerLane, consolePids as consolePidsOf, GuestLane, installCodeServer } from './codeServerLane';

const MARKER = 0x7e57c0de;
const WIDTH = 640;
const HEIGHT = 400;
const t0 = Date.now();
const stamp = (what: string): void => console.log(`# e2e +${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
// The console the extension must spawn: the build's, named in guestConsole.binaryPath; or,
// with GC_INSTALLED_CONSOLE (tests/package/run), the installed package's, which the extension
// finds through the setting's default.
const INSTALLED_CONSOLE = process.env['GC_INSTALLED_CONSOLE'];
const consolePids = (grantPath: string): Promise<number[]> => consolePidsOf(INSTALLED_CONSOLE ?? BIN.console, grantPath);

const install = installCodeServer();

describe('extension end to end in code-server', { skip: install.skip ?? false }, () => {
  const setup = new GuestLane({
    codeServer: install.bin ?? '',
    dirPrefix: 'gc-e2e-',
    guest: { marker: MARKER, width: WIDTH, height: HEIGHT },
    title: 'Guest Console e2e',
    installedConsole: INSTALLED_CONSOLE,
    screenshots: 'e2e-code-server',
    stamp,
  });
  const password = setup.password;
  let guest: TestGuest;
  let grant: DemoGrant;
  let lane: CodeServerLane;
  let page: Page;
  let webview: Frame;
  let consolePid = 0;
  let runDir = '';
  let lockedInputCount = -1;

  const shot = (name: string): Promise<void> => lane?.shot(name) ?? Promise.resolve();

  before(async () => {
    await setup.start();
    ({ guest, grant, lane } = setup);
    runDir = path.join(setup.dirs.runtime, 'guest-console', 'runs', grant.run);
    page = lane.page;
  });

  after(() => setup.stop());

  it('opensTheConsoleFromThePaletteSignsInAndShowsTheGuestWithItsMarker', async () => {
    // Web hosts have no native dialog: the simple file dialog takes the path; the username
    // is prefilled from the grant's panel.username.
    webview = await lane.openGrant(grant.path, { domain: '', password });

    const pids = await consolePids(grant.path);
    assert.equal(pids.length, 1, `console processes for the grant: ${JSON.stringify(pids)}`);
    consolePid = pids[0] ?? 0;
    // The origin the extension passed is exactly the one the page (and its webviews) have.
    const origin = await page.evaluate(() => location.origin);
    const argv = await cmdline(consolePid);
    // The machine-scoped guestConsole.issuerKeyPath reached the console as --issuer-key.
    assert.deepEqual(argv.slice(1), ['open', '--grant', grant.path, '--allow-origin', origin, '--issuer-key', grant.issuerKey]);
    assert.ok(!argv.join(' ').includes(password));
    assert.ok(await exists(runDir), 'no run directory while running');

    const found = await waitFor(async () => (await canvasMarker(webview)) ?? false, 20000, 'the identity marker on the canvas');
    assert.equal(hex32(found), hex32(MARKER));
    // Decoded off the page's main thread: the webview's CSP let the frame worker start.
    assert.match((await webview.getAttribute('#screen', 'data-presenter')) ?? '', /^(worker|split)$/);
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
    await lane.phaseShown(['READ_ONLY', 'CAPTURING', 'REVIEWING', 'ACTION']);
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
    const lockAt = lane.sent.findIndex((m) => m['type'] === 'lock');
    assert.ok(lockAt >= 0, 'the lock was not sent on the panel socket');
    assert.deepEqual(lane.sent.slice(lockAt).filter((m) => m['type'] === 'key' || m['type'] === 'pointer'), []);
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
    const text = await lane.extensionLog();
    const origin = `http://127.0.0.1:${lane.port}`;
    assert.ok(text.includes(`web host: the panel's origin is ${origin}`), text);
    for (const phase of ['SETUP', 'LOCKING', 'READ_ONLY']) assert.match(text, new RegExp(`phase ${phase}\\b`));
    assert.match(text, new RegExp(`console pid ${consolePid} exited`));
    assert.ok(!text.includes(password), 'password in the log');
    const panelSockets = lane.socketUrls.filter((u) => !u.includes('reconnectionToken'));
    console.log(`# e2e panel WebSocket: ${panelSockets.join(', ')}`);
    assert.equal(panelSockets.length, 1, JSON.stringify(lane.socketUrls));
  });
});
