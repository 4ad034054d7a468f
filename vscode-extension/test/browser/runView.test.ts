// Where the run stands, as the built webview shows it in chromium against a stub console: the
// header (VM, UUID prefix, desktop size, counters that count, the drained count), the lock's
// progress and steps, the summary after the run with its evidence actions, Fit and 100 % at
// device pixel ratios 1 and 2, announced banners, labelled controls and AA contrast in the
// default, light and high-contrast themes. Screenshots: $GC_ARTIFACTS_DIR/runview-*.png.
import * as assert from 'assert/strict';
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import type * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { renderPanelHtml } from '../../src/panelHtml';
import type { ConnectInfo, HostToWebviewMessage, Phase } from '../../shared/protocol';
import { CHROMIUM_ARGS, openPanelPage, servePanelSite } from '../browser';
import { AA, contrastProbe } from '../contrast';
import { PACKAGE_ROOT, waitFor } from '../helpers';
import { CAPABILITY, StubConsole } from '../stubConsole';
import { THEMES } from '../themes';

const CHROMIUM = process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium';
const ARTIFACTS = process.env['GC_ARTIFACTS_DIR'] ?? path.join(os.tmpdir(), 'gc-artifacts');

interface Panel {
  stub: StubConsole;
  site: http.Server;
  context: BrowserContext;
  page: Page;
  dir: string;
}

async function openPanel(o: { welcome?: Record<string, unknown>; dpr?: number; viewport?: { width: number; height: number } }): Promise<Panel> {
  const stub = new StubConsole(o.welcome ?? {});
  await new Promise<void>((r) => stub.server.once('listening', () => r()));
  let html = '';
  const served = await servePanelSite(path.join(PACKAGE_ROOT, 'dist', 'media'), () => html);
  html = renderPanelHtml({
    cspSource: `http://127.0.0.1:${served.port}`,
    nonce: randomBytes(18).toString('base64'),
    scriptUri: '/media/main.js',
    styleUri: '/media/view.css',
    connectSources: [`ws://127.0.0.1:${stub.port}`],
    title: 'Bench VM',
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gc-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: o.viewport ?? { width: 1100, height: 700 },
    deviceScaleFactor: o.dpr ?? 1,
    args: CHROMIUM_ARGS,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await openPanelPage(page, served.port);
  const connect: ConnectInfo = { type: 'connect', wsUrl: `ws://127.0.0.1:${stub.port}`, run: 'run-browser', task: 'task-browser', capability: CAPABILITY, clientVersion: '0.1.0', panel: { title: 'Bench VM' } };
  await page.evaluate((info) => window.postMessage(info, '*'), connect);
  await stub.acked(1);
  return { stub, site: served.server, context, page, dir };
}

async function closePanel(p: Panel | undefined): Promise<void> {
  if (!p) return;
  await p.context.close();
  p.stub.server.close();
  p.site.close();
  await fs.rm(p.dir, { recursive: true, force: true });
}

/** How the extension host's webview.postMessage arrives. */
async function fromHost(page: Page, message: HostToWebviewMessage): Promise<void> {
  await page.evaluate((m) => window.postMessage(m, '*'), message);
}

const text = async (page: Page, selector: string): Promise<string> => (await page.innerText(selector)).replace(/\s+/g, ' ').trim();

describe('the panel says where the run stands', () => {
  let panel: Panel;
  let page: Page;

  async function shot(name: string, p: Page = page): Promise<void> {
    await fs.mkdir(ARTIFACTS, { recursive: true });
    await p.screenshot({ path: path.join(ARTIFACTS, `runview-${name}.png`) });
  }
  const phaseShown = (phase: Phase) => page.waitForFunction((ph) => document.getElementById('phase')?.dataset['phase'] === ph, phase, { timeout: 5000 });

  before(async () => {
    await fs.access(CHROMIUM);
    panel = await openPanel({ welcome: { identity: { vm_uuid_prefix: '9f1e2d3c', grant_digest: 'a1b2c3d4e5f60718', cert_fingerprint: 'ab:cd:ef:01:23:45:67:89' } } });
    page = panel.page;
    await phaseShown('SETUP');
  });

  after(() => closePanel(panel));

  it('showsTheVmItsUuidPrefixAndTheDesktopSizeInTheHeaderAndThatTheGrantIsSingleUse', async () => {
    assert.equal(await text(page, '#identity'), 'win11-bench uuid 9f1e2d3c… 320×200 grant a1b2c3d4e5f6 cert abcdef012345');
    assert.match(await text(page, '#notice'), /^One run per grant: Close, Panic, cancelling the sign-in and reloading the window each end this run/);
    await shot('SETUP');
  });

  it('countsRefusedInputInTheHeaderAndTellsTheHost', async () => {
    panel.stub.send({ type: 'input_ack', upto: 7 });
    panel.stub.send({ type: 'input_refused', seq: 8, code: 'RATE_LIMIT' });
    panel.stub.send({ type: 'input_refused', seq: 9, code: 'RATE_LIMIT' });
    await waitFor(async () => (await text(page, '#counters')) === 'acked 7 · refused 2', 5000, 'the counters');
    // A key the panel never sends (ACPI Power is not on the key table) did not reach the guest either.
    const start = panel.stub.inputsSince(0).length;
    await page.locator('#viewport').focus();
    await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keydown', { code: 'Power', key: 'Power', bubbles: true })));
    await waitFor(async () => (await text(page, '#counters')) === 'acked 7 · refused 3', 5000, 'the key kept back, counted');
    assert.equal(await page.getAttribute('#counters', 'title'), '2 refused by the console; 1 keys the panel cannot send (no RDP scancode, or an input method composing)');
    const posted = await page.evaluate(() => (window as unknown as { __posted: Array<Record<string, unknown>> }).__posted);
    assert.deepEqual(posted.filter((m) => m['type'] === 'status').at(-1), { type: 'status', phase: 'SETUP', acked: 7, refused: 3 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await panel.stub.acked(panel.stub.sendFrame());
    assert.deepEqual(panel.stub.inputsSince(start), [], 'the Power key was sent');
  });

  it('showsEveryLockStepAndKeepsTheDrainedCountOnScreen', async () => {
    panel.stub.send({ type: 'phase', phase: 'LOCKING', reason: 'panel' });
    await phaseShown('LOCKING');
    assert.equal(await text(page, '#progress'), 'Delivering the setup input to the guest…');
    assert.match(await text(page, '#banner'), /^Read-only: input to the guest is off/);
    panel.stub.send({ type: 'drained', upto: 20 });
    panel.stub.send({ type: 'phase', phase: 'READ_ONLY', reason: 'lock committed' });
    await phaseShown('READ_ONLY');
    // The guest wait shows that it is moving (elapsed seconds), not a plain READ-ONLY.
    await waitFor(async () => /^Waiting for the guest to confirm it processed the input… \d+\.\d s$/.test(await text(page, '#progress')), 5000, 'the guest wait with its time');
    await shot('guest-wait');
    assert.equal(await text(page, '#counters'), 'acked 7 · refused 3 · drained #20');
    panel.stub.send({ type: 'phase', phase: 'CAPTURING', reason: 'guest confirmed' });
    await phaseShown('CAPTURING');
    assert.equal(await text(page, '#progress'), "Waiting for the model's Capture Desktop…");
    panel.stub.send({ type: 'phase', phase: 'REVIEWING', reason: 'captured' });
    await phaseShown('REVIEWING');
    assert.deepEqual(await page.locator('#steps li').allTextContents(), [
      '✓ Input closed',
      '✓ Setup input delivered (up to #20)',
      '✓ Guest confirmed the input',
      '✓ Desktop captured by the model',
      "… The model's one action is running…",
    ]);
    assert.equal(await text(page, '#counters'), 'acked 7 · refused 3 · drained #20', 'the drained count stays');
    await shot('REVIEWING');
  });

  it('showsTheReceiptAndTheEvidenceAfterTheRunWithOpenAndVerify', async () => {
    panel.stub.send({ type: 'phase', phase: 'ACTION', reason: 'perform_action' });
    await phaseShown('ACTION');
    panel.stub.send({ type: 'bye', reason: 'ACTION_DONE' });
    await phaseShown('CLOSED');
    const evidence = '/home/op/.local/state/guest-console/evidence/run-browser-1a2b3c4d.jsonl';
    const head = 'c0'.repeat(32);
    await fromHost(page, {
      type: 'host_summary',
      summary: {
        reason: 'ACTION_DONE',
        headline: 'The one action was performed; the run is complete.',
        next: '',
        evidence,
        evidenceHead: head,
        receipt: { action: 'click(480,200)', outcome: 'executed', confirmation: 'confirmed', confirmMs: 41, eventsSent: 3 },
      },
    });
    await page.locator('#summary').waitFor({ state: 'visible', timeout: 5000 });
    assert.equal(
      await text(page, '#summary dl'),
      `Close reason The one action was performed; the run is complete. (ACTION_DONE) Action click(480,200) Outcome executed, 3 input events sent Guest confirmation confirmed in 41 ms Evidence ${evidence} Evidence head ${head}`,
    );
    assert.equal(await page.locator('#alert').isHidden(), true, 'a completed run is not an alert');
    assert.deepEqual(await page.locator('#steps li').allTextContents(), ['✓ Input closed', '✓ Setup input delivered (up to #20)', '✓ Guest confirmed the input', '✓ Desktop captured by the model', '✓ Action performed']);
    await page.click('#open-evidence');
    await page.click('#verify-evidence');
    const posted = await page.evaluate(() => (window as unknown as { __posted: Array<{ type: string }> }).__posted.map((m) => m.type));
    assert.deepEqual(posted.filter((t) => t.startsWith('request_')), ['request_open_evidence', 'request_verify_evidence']);
    assert.equal(await text(page, '#verify-result'), 'Verifying…');
    await fromHost(page, { type: 'host_verify', ok: true, text: `evidence: ok, 31 lines, head ${head}` });
    await waitFor(async () => (await text(page, '#verify-result')).startsWith('Verified: evidence: ok, 31 lines'), 5000, 'the verification');
    await shot('summary');
  });

  it('announcesBannersAndAlertsAndLabelsEveryControl', async () => {
    assert.equal(await page.getAttribute('#banner', 'aria-live'), 'polite');
    assert.equal(await page.getAttribute('#alert', 'role'), 'alert');
    assert.equal(await page.getAttribute('#progress', 'aria-live'), 'polite');
    assert.equal(await page.getAttribute('#phase', 'role'), 'status');
    await fromHost(page, { type: 'host_summary', summary: { reason: 'RDP_LOST', headline: 'The RDP connection was lost.', next: 'Check the guest; the console closed and cleaned up.', evidence: '/e.jsonl', evidenceHead: 'ab'.repeat(32) } });
    await waitFor(async () => (await text(page, '#alert')).length > 0, 5000, 'the alert');
    assert.equal(await text(page, '#alert'), 'Closed: The RDP connection was lost. (RDP_LOST) Check the guest; the console closed and cleaned up.');
    const cdp = await panel.context.newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: Array<{ role?: { value?: string }; name?: { value?: string }; ignored?: boolean }> };
    await cdp.detach();
    const controls = nodes.filter((n) => !n.ignored && ['button', 'application', 'status', 'alert', 'group'].includes(n.role?.value ?? ''));
    const unnamed = controls.filter((n) => ['button', 'application', 'group'].includes(n.role?.value ?? '') && !(n.name?.value ?? '').trim());
    assert.deepEqual(unnamed.map((n) => n.role?.value), [], 'controls without an accessible name');
    const buttons = controls.filter((n) => n.role?.value === 'button').map((n) => n.name?.value);
    for (const name of ['Fit', '100 %', 'Send Ctrl+Alt+Del', 'Lock and Start Capture', 'Close Console', 'Panic', 'Open Evidence', 'Verify Evidence']) {
      assert.ok(buttons.includes(name), `no button named ${name}: ${JSON.stringify(buttons)}`);
    }
    assert.ok(controls.some((n) => n.role?.value === 'application' && /Guest screen/.test(n.name?.value ?? '')));
    assert.ok(controls.some((n) => n.role?.value === 'alert'));
  });

  for (const theme of THEMES) {
    it(`keepsEveryTextAtAaContrastIn${theme.name.replace(/\W/g, '')}`, async () => {
      await page.evaluate((t) => {
        // As VS Code does: the theme's variables replace the last theme's, unset ones are gone.
        const style = document.documentElement.style;
        for (const name of Array.from({ length: style.length }, (_, i) => style.item(i)).filter((n) => n.startsWith('--vscode-'))) style.removeProperty(name);
        document.body.className = t.bodyClass;
        for (const [k, v] of Object.entries(t.vars)) style.setProperty(k, v);
        // Every state that has its own style: a failed step, a failed verification.
        const step = document.querySelector<HTMLElement>('#steps li[data-step="ACTED"]');
        if (step) step.dataset['state'] = 'failed';
        const verify = document.getElementById('verify-result');
        if (verify) verify.dataset['ok'] = 'false';
      }, theme);
      const results: Array<{ phase: string; where: string; ratio: number }> = [];
      for (const phase of ['SETUP', 'LOCKING', 'READ_ONLY', 'ACTION', 'CLOSED', 'CONNECTING'] as const) {
        // Each badge colour in turn (the panel is CLOSED by now; the badge alone is restyled).
        await page.evaluate((ph) => {
          const badge = document.getElementById('phase');
          if (badge) badge.dataset['phase'] = ph;
        }, phase);
        await page.evaluate(() => {
          const kb = document.getElementById('keyboard');
          if (kb) kb.dataset['owner'] = 'guest';
        });
        for (const f of await page.evaluate(contrastProbe)) results.push({ phase, where: f.where, ratio: f.ratio });
      }
      const low = results.filter((r) => r.ratio < AA);
      assert.deepEqual(low, [], `below ${AA}:1 in ${theme.name}`);
      assert.ok(results.some((r) => r.where.startsWith('div#phase')) && results.some((r) => r.where.startsWith('button#close')), 'the probe saw the badge and the buttons');
      const lowest = results.reduce((a, b) => (b.ratio < a.ratio ? b : a));
      console.log(`# contrast ${theme.name}: ${results.length} checks, lowest ${lowest.ratio}:1 at ${lowest.where} (${lowest.phase})`);
      await shot(`theme-${theme.name.replace(/\W/g, '')}`);
    });
  }
});

describe('Fit and 100 % follow the device pixel ratio', () => {
  const opened: Panel[] = [];
  after(async () => {
    for (const p of opened) await closePanel(p);
  });

  const canvasCss = (page: Page) =>
    page.evaluate(() => {
      const c = document.getElementById('screen') as HTMLCanvasElement;
      const r = c.getBoundingClientRect();
      const stage = document.getElementById('stage') as HTMLElement;
      return { w: r.width, h: r.height, dpr: window.devicePixelRatio, scrolls: stage.scrollWidth > stage.clientWidth, intrinsic: [c.width, c.height] };
    });

  it('neverBlowsASmallDesktopUpAndShowsItOneToOne', async () => {
    const p = await openPanel({ welcome: { width: 320, height: 200 }, viewport: { width: 1100, height: 700 } });
    opened.push(p);
    await waitFor(async () => (await canvasCss(p.page)).w > 1, 5000, 'the canvas sized');
    assert.deepEqual(await canvasCss(p.page), { w: 320, h: 200, dpr: 1, scrolls: false, intrinsic: [320, 200] });
    assert.equal(await text(p.page, '#scale-now'), 'shown at 100 %');
    assert.equal(await p.page.getAttribute('#scale-fit', 'aria-pressed'), 'true');
    // A ratio of 2 (VS Code zoomed, a HiDPI screen), changed while the panel is open; as with
    // a zoom, the view's CSS size changes with it (the emulation re-evaluates media queries
    // only on a layout change).
    const cdp = await p.context.newCDPSession(p.page);
    await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1000, height: 700, deviceScaleFactor: 2, mobile: false });
    await waitFor(async () => (await canvasCss(p.page)).dpr === 2 && (await canvasCss(p.page)).w === 160, 5000, 'one desktop pixel per device pixel at ratio 2').catch(async (e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(await canvasCss(p.page))}`);
    });
    assert.equal(await text(p.page, '#scale-now'), 'shown at 100 %');
    await cdp.detach();
  });

  it('fitsALargeDesktopAtRatioTwoAndShowsItOneToOneWithScrollbars', async () => {
    const p = await openPanel({ welcome: { width: 2400, height: 1500 }, dpr: 2, viewport: { width: 1100, height: 700 } });
    opened.push(p);
    await waitFor(async () => (await canvasCss(p.page)).w > 1, 5000, 'the canvas sized');
    const stage = await p.page.evaluate(() => (document.getElementById('stage') as HTMLElement).getBoundingClientRect().toJSON() as { width: number; height: number });
    const fit = await canvasCss(p.page);
    const want = Math.min(stage.width / 2400, stage.height / 1500);
    assert.ok(Math.abs(fit.w - 2400 * want) < 1 && Math.abs(fit.h - 1500 * want) < 1 && !fit.scrolls, JSON.stringify({ fit, stage }));
    assert.equal(await text(p.page, '#scale-now'), `shown at ${Math.round(want * 2 * 100)} %`);
    await p.page.screenshot({ path: path.join(ARTIFACTS, 'runview-fit-dpr2.png') });
    await p.page.click('#scale-actual');
    const actual = await canvasCss(p.page);
    // 1200 CSS pixels at a ratio of 2: each of the 2400 desktop pixels on one device pixel.
    assert.deepEqual(actual, { w: 1200, h: 750, dpr: 2, scrolls: true, intrinsic: [2400, 1500] });
    assert.equal(await text(p.page, '#scale-now'), 'shown at 100 %');
    assert.equal(await p.page.getAttribute('#scale-actual', 'aria-pressed'), 'true');
    await p.page.screenshot({ path: path.join(ARTIFACTS, 'runview-100-dpr2.png') });
    // A click still lands on the desktop pixel under it (here 100 desktop px from the left).
    const start = p.stub.inputsSince(0).length;
    const box = await p.page.locator('#screen').boundingBox();
    assert.ok(box);
    await p.page.mouse.click(box.x + 50, box.y + 25);
    await waitFor(() => p.stub.inputsSince(start).some((m) => m['buttons'] === 1), 5000, 'the click');
    const down = p.stub.inputsSince(start).find((m) => m['buttons'] === 1);
    assert.deepEqual([down?.['x'], down?.['y']], [100, 50]);
    // The choice is kept in the webview's state.
    await p.page.click('#scale-fit');
    assert.equal(await p.page.getAttribute('#scale-fit', 'aria-pressed'), 'true');
  });
});
