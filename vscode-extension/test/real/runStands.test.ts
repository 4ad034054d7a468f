// Where the run stands, against the REAL console and test guest: the panel header (UUID
// prefix, desktop size, the drained count that stays), the lock's steps as they happened, the
// one action through MCP with the evidence the console hands the extension (path and head,
// verified by `guest-console evidence verify`), and the close reasons the extension gives on
// the control channel (AUTH_CANCELLED, WINDOW_RELOAD; anything else refused), each recorded
// in the evidence. Screenshots: $GC_ARTIFACTS_DIR/real-run-*.png.
import * as assert from 'assert/strict';
import { execFile } from 'child_process';
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import type * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { readGrantInfo } from '../../src/GrantInfo';
import { renderPanelHtml } from '../../src/panelHtml';
import type { ConnectInfo, Phase } from '../../shared/protocol';
import { CHROMIUM_ARGS, openPanelPage, servePanelSite } from '../browser';
import { PACKAGE_ROOT, waitFor } from '../helpers';
import { McpClient } from './mcpClient';
import { BIN, DemoGrant, issueDemoGrant, privateDirs, RealConsole, requireBuild, sanitizerEnv, TestGuest } from './rig';

const run = promisify(execFile);
const CHROMIUM = process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium';
const ARTIFACTS = process.env['GC_ARTIFACTS_DIR'] ?? path.join(os.tmpdir(), 'gc-artifacts');
const WIDTH = 640;
const HEIGHT = 400;

type Json = Record<string, unknown>;

/** The evidence log's entries (one JSON object a line). */
async function evidenceEntries(file: string): Promise<Json[]> {
  return (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Json);
}
const entryOf = (entries: Json[], event: string): Json | undefined => entries.find((e) => e['event'] === event || e['type'] === event);

async function verify(file: string, head: string): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(BIN.console, ['evidence', 'verify', file, '--head', head], { env: { PATH: process.env['PATH'], ...sanitizerEnv() } });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '' };
  }
}

describe('a run to its end with the real console', () => {
  let dirs: Awaited<ReturnType<typeof privateDirs>>;
  let guest: TestGuest;
  let grant: DemoGrant;
  let console_: RealConsole;
  let site: http.Server;
  let html = '';
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  const password = randomBytes(12).toString('base64url');
  /** Every input_refused the page received on the console socket. */
  const refusals: Json[] = [];

  const phaseShown = (phase: Phase, timeout = 15000) => page.waitForFunction((p) => document.getElementById('phase')?.dataset['phase'] === p, phase, { timeout });
  const text = async (selector: string): Promise<string> => (await page.innerText(selector)).replace(/\s+/g, ' ').trim();
  async function shot(name: string): Promise<void> {
    await fs.mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `real-run-${name}.png`) });
  }

  before(async () => {
    await requireBuild();
    await fs.access(CHROMIUM);
    dirs = await privateDirs('gc-real-run-');
    guest = await TestGuest.start({ marker: 0x5eed0037, width: WIDTH, height: HEIGHT, password });
    grant = await issueDemoGrant(dirs.root, guest, 'Run to its end');
    const served = await servePanelSite(path.join(PACKAGE_ROOT, 'dist', 'media'), () => html);
    site = served.server;
    console_ = RealConsole.start({ grant: grant.path, runtimeDir: dirs.runtime, stateDir: dirs.state, issuerKey: grant.issuerKey, allowOrigins: [`http://127.0.0.1:${served.port}`] });
    const panel = await console_.signIn(password);
    html = renderPanelHtml({
      cspSource: `http://127.0.0.1:${served.port}`,
      nonce: randomBytes(18).toString('base64'),
      scriptUri: '/media/main.js',
      styleUri: '/media/view.css',
      connectSources: [`ws://127.0.0.1:${panel.port}`],
      title: grant.title,
    });
    userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gc-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, viewport: { width: 1200, height: 760 }, args: CHROMIUM_ARGS });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('websocket', (ws) =>
      ws.on('framereceived', (f) => {
        if (typeof f.payload !== 'string') return;
        const m = JSON.parse(f.payload) as Json;
        if (m['type'] === 'input_refused') refusals.push(m);
      }),
    );
    await openPanelPage(page, served.port);
    const info = await readGrantInfo(grant.path);
    const connect: ConnectInfo = { type: 'connect', wsUrl: `ws://127.0.0.1:${panel.port}`, run: grant.run, task: grant.task, capability: panel.capability, clientVersion: '0.1.0', panel: info.panel };
    await page.evaluate((m) => window.postMessage(m, '*'), connect);
  });

  after(async () => {
    await context?.close();
    await console_?.stop();
    await guest?.stop();
    site?.close();
    if (userDataDir) await fs.rm(userDataDir, { recursive: true, force: true });
    if (dirs) await fs.rm(dirs.root, { recursive: true, force: true });
  });

  it('showsTheUuidPrefixAndTheGuestsDesktopSizeInTheHeader', async () => {
    await phaseShown('SETUP');
    const identity = await text('#identity');
    assert.ok(identity.startsWith(`${grant.vmName} uuid ${grant.vmUuid.replace(/-/g, '').slice(0, 8)}… ${WIDTH}×${HEIGHT} grant ${grant.digest.slice(0, 12)}`), `${identity} / ${grant.vmUuid}`);
    // At a ratio of 1 the 640×400 desktop is shown 1:1 in a larger panel (not blown up).
    assert.equal(await text('#scale-now'), 'shown at 100 %');
    const css = await page.evaluate(() => (document.getElementById('screen') as HTMLCanvasElement).getBoundingClientRect().toJSON() as { width: number; height: number });
    assert.deepEqual([css.width, css.height], [WIDTH, HEIGHT]);
    await shot('SETUP');
  });

  it('countsEveryRefusedInputInTheHeader', async () => {
    // 300 key presses in one burst: more than the console's rate limit lets through at once.
    await page.locator('#viewport').focus();
    await page.evaluate(() => {
      for (let i = 0; i < 300; i++) {
        for (const type of ['keydown', 'keyup']) window.dispatchEvent(new KeyboardEvent(type, { code: 'KeyA', key: 'a', bubbles: true }));
      }
      // And one key the panel never sends: ACPI Power is not on the protocol's key table.
      window.dispatchEvent(new KeyboardEvent('keydown', { code: 'Power', key: 'Power', bubbles: true }));
    });
    await waitFor(() => refusals.length > 0, 15000, 'a refusal from the console');
    // The header counts each of the console's refusals, and the key the panel kept back.
    await waitFor(async () => new RegExp(`· refused ${refusals.length + 1}$`).test(await text('#counters')), 15000, `refused ${refusals.length + 1} in the header`).catch(async (e: Error) => {
      throw new Error(`${e.message}: ${await text('#counters')}`);
    });
    const codes = new Set(refusals.map((r) => r['code']));
    assert.ok([...codes].every((c) => c === 'RATE_LIMIT' || c === 'QUEUE_FULL'), JSON.stringify([...codes]));
    assert.match((await page.getAttribute('#counters', 'title')) ?? '', new RegExp(`^${refusals.length} refused by the console; 1 keys the panel cannot send`));
  });

  it('keepsTheDrainedCountAndEveryLockStepOnScreen', async () => {
    const box = await page.locator('#screen').boundingBox();
    assert.ok(box);
    await page.mouse.click(box.x + 100, box.y + 80);
    for (const key of ['KeyL', 'KeyO', 'KeyC', 'KeyK']) await page.keyboard.press(key);
    await waitFor(() => guest.keys().filter((k) => k.up).length >= 4, 10000, 'the keys at the guest');
    await page.click('#lock');
    const drained = await console_.next('drained', 15000);
    await console_.next('phase', 20000, (e) => e['phase'] === 'CAPTURING');
    await phaseShown('CAPTURING');
    const upto = Number(drained['upto']);
    assert.ok(upto >= 9, `drained up to ${upto}`); // a click (move, down, up) and four keys down and up
    assert.match(await text('#counters'), new RegExp(`^acked ${upto} · refused ${refusals.length + 1} · drained #${upto}$`));
    assert.deepEqual((await page.locator('#steps li').allTextContents()).slice(0, 4), ['✓ Input closed', `✓ Setup input delivered (up to #${upto})`, '✓ Guest confirmed the input', "… Waiting for the model's Capture Desktop…"]);
    assert.equal(await text('#progress'), "Waiting for the model's Capture Desktop…");
    await shot('CAPTURING');
  });

  it('performsTheOneActionAndHandsTheExtensionTheEvidenceToVerify', async () => {
    const mcp = new McpClient(grant.run, dirs.runtime);
    try {
      await mcp.initialize();
      const shot_ = await mcp.call('capture_desktop');
      assert.equal(shot_['width'], WIDTH);
      await phaseShown('REVIEWING');
      assert.deepEqual((await page.locator('#steps li').allTextContents()).slice(3), ['✓ Desktop captured by the model', "… The model's one action is running…"]);
      await mcp.call('perform_action', { action: { type: 'click', x: 320, y: 200 } }, 90000);
    } finally {
      await mcp.close();
    }
    const receipt = await console_.next('receipt', 30000);
    const closed = await console_.next('closed', 30000);
    await console_.waitExit(30000);
    assert.equal(receipt['action'], 'click(320,200)');
    assert.equal(closed['reason'], 'ACTION_DONE');
    const evidence = String(closed['evidence']);
    assert.ok(path.isAbsolute(evidence) && evidence.startsWith(path.join(dirs.state, 'evidence')), evidence);
    const entries = await evidenceEntries(evidence);
    assert.ok(entryOf(entries, 'receipt'), 'no receipt in the evidence the console named');
    // The console's own count of refused input is the one the header showed (less the key it never got).
    const counted = entryOf(entries, 'input_counts')?.['refused'] as Record<string, number> | undefined;
    assert.equal(Object.values(counted ?? {}).reduce((a, b) => a + b, 0), refusals.length, JSON.stringify(counted));
    const verified = await verify(evidence, String(closed['evidence_head']));
    assert.equal(verified.code, 0, verified.stdout);
    assert.match(verified.stdout, /^evidence: ok, \d+ lines, head [0-9a-f]{64}\n  ends at the expected head/);
    await phaseShown('CLOSED');
    await shot('CLOSED');
  });

  it('refusesTheSameGrantAgainAndNamesTheEvidenceThatRecordedIt', async () => {
    const again = RealConsole.start({ grant: grant.path, runtimeDir: dirs.runtime, stateDir: dirs.state, issuerKey: grant.issuerKey });
    const error = await again.next('error', 30000);
    await again.waitExit(30000);
    assert.equal(again.exitCode, 2);
    assert.equal(error['code'], 'GRANT_REUSED');
    const evidence = String(error['evidence']);
    assert.match(path.basename(evidence), /^refused-.*\.jsonl$/);
    const refused = entryOf(await evidenceEntries(evidence), 'refused');
    assert.equal(refused?.['code'], 'GRANT_REUSED', JSON.stringify(refused));
  });
});

describe('the close reasons the extension gives on the control channel', () => {
  let dirs: Awaited<ReturnType<typeof privateDirs>>;
  let guest: TestGuest;
  const password = randomBytes(12).toString('base64url');

  before(async () => {
    await requireBuild();
    dirs = await privateDirs('gc-real-close-');
    guest = await TestGuest.start({ marker: 0x0c105ed0, width: 320, height: 200, password });
  });

  after(async () => {
    await guest?.stop();
    if (dirs) await fs.rm(dirs.root, { recursive: true, force: true });
  });

  async function openFresh(): Promise<RealConsole> {
    const grant = await issueDemoGrant(dirs.root, guest, 'Close reasons');
    return RealConsole.start({ grant: grant.path, runtimeDir: dirs.runtime, stateDir: dirs.state, issuerKey: grant.issuerKey });
  }

  async function closedAs(console_: RealConsole, reason: string): Promise<void> {
    const closed = await console_.next('closed', 30000);
    await console_.waitExit(30000);
    assert.equal(console_.exitCode, 0, console_.diagnostics());
    assert.equal(closed['reason'], reason);
    const entries = await evidenceEntries(String(closed['evidence']));
    assert.equal(entryOf(entries, 'closed')?.['code'], reason, JSON.stringify(entryOf(entries, 'closed')));
    assert.equal((await verify(String(closed['evidence']), String(closed['evidence_head']))).code, 0);
  }

  it('recordsAWindowReloadAsItsOwnReason', async () => {
    const console_ = await openFresh();
    await console_.signIn(password);
    console_.write({ cmd: 'close', reason: 'WINDOW_RELOAD' });
    await closedAs(console_, 'WINDOW_RELOAD');
    await guest.next('client_disconnected', 15000);
  });

  it('recordsACancelledSignInAsAuthCancelled', async () => {
    const console_ = await openFresh();
    await console_.next('credentials_required', 30000);
    console_.write({ cmd: 'close', reason: 'AUTH_CANCELLED' });
    await closedAs(console_, 'AUTH_CANCELLED');
  });

  it('refusesAReasonAParentCannotGiveAndStaysOpen', async () => {
    const console_ = await openFresh();
    await console_.signIn(password);
    console_.write({ cmd: 'close', reason: 'ACTION_DONE' });
    const error = await console_.next('error', 15000);
    assert.equal(error['code'], 'PROTOCOL_MALFORMED');
    assert.equal(console_.running, true);
    assert.equal(console_.of('closed').length, 0);
    console_.write({ cmd: 'close' });
    await closedAs(console_, 'OPERATOR_CLOSE');
  });
});
