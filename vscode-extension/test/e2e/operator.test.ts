// The operator always knows where the run stands, in a real VS Code (code-server 4.100.3 with
// the packaged .vsix) against the real console and test guests: each case drives the UI as an
// operator would and asserts the notification, the status bar item, the tab title and the
// panel's text. Screenshots: $GC_ARTIFACTS_DIR/e2e-operator-*.png.
//
// Skipped, with the reason, only when code-server cannot be installed here.
import * as assert from 'assert/strict';
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { REFUSAL_GUIDE } from '../../src/refusalGuide';
import { contrastProbe, AA } from '../contrast';
import { pidAlive, waitFor } from '../helpers';
import { McpClient } from '../real/mcpClient';
import { BIN, type DemoGrant, issueDemoGrant, TestGuest } from '../real/rig';
import { CodeServerLane, consolePids, GuestLane, installCodeServer, UI_STEP_MS } from './codeServerLane';

const ARTIFACTS = process.env['GC_ARTIFACTS_DIR'] ?? path.join(os.tmpdir(), 'gc-artifacts');
const t0 = Date.now();
const stamp = (what: string): void => console.log(`# e2e-operator +${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
const install = installCodeServer();

type Json = Record<string, unknown>;

describe('the operator knows where the run stands (code-server)', { skip: install.skip ?? false }, () => {
  const setup = new GuestLane({
    codeServer: install.bin ?? '',
    dirPrefix: 'gc-e2e-op-',
    guest: { marker: 0x0be7a037, width: 640, height: 400 },
    title: 'Guest Console e2e',
    screenshots: 'e2e-operator',
    stamp,
  });
  let lane: CodeServerLane;
  let page: Page;
  let guest: TestGuest;
  let guestB: TestGuest | undefined;
  let webview: Frame;

  const shot = (name: string): Promise<void> => lane.shot(name);
  const panelText = async (frame: Frame, selector: string): Promise<string> => (await frame.innerText(selector)).replace(/\s+/g, ' ').trim();
  const statusText = async (): Promise<string> => (await lane.statusItem().innerText()).replace(/\s+/g, ' ').trim();
  const evidenceDir = (): string => path.join(setup.dirs.state, 'guest-console', 'evidence');
  async function closedEntry(run: string): Promise<Json | undefined> {
    const files = (await fs.readdir(evidenceDir()).catch(() => [] as string[])).filter((f) => f.startsWith(`${run}-`));
    for (const f of files) {
      const lines = (await fs.readFile(path.join(evidenceDir(), f), 'utf8')).split('\n').filter((l) => l.trim() !== '');
      const closed = lines.map((l) => JSON.parse(l) as Json).find((e) => e['event'] === 'closed');
      if (closed) return closed;
    }
    return undefined;
  }
  const newGrant = (title: string, on: TestGuest = guest): Promise<DemoGrant> => issueDemoGrant(setup.dirs.root, on, title);

  /** Palette → Open for Grant → the file → the three boxes; resolves once the panel titled `title` shows SETUP. */
  async function openToSetup(grant: DemoGrant): Promise<Frame> {
    await lane.focusWorkbench();
    await lane.palette('Guest Console: Open for Grant');
    await lane.pickFile(grant.path);
    await lane.answer('Guest username', undefined);
    await lane.answer('Domain', '');
    await lane.answer('Password for', setup.password);
    const frame = await lane.panelFrame(grant.title);
    await lane.phaseShown('SETUP', UI_STEP_MS, frame);
    return frame;
  }

  before(async () => {
    await setup.start();
    ({ lane, guest } = setup);
    page = lane.page;
  });

  // A test's notification is the newest toast, never one queued behind earlier tests' toasts.
  beforeEach(async () => {
    if (lane) await lane.clearNotifications();
  });

  after(async () => {
    await guestB?.stop();
    await setup.stop();
  });

  it('wordsAWrongPasswordForAPersonAndShowsThePhaseInTheStatusBarAndTheTabTitle', async () => {
    const grant = setup.grant;
    await lane.focusWorkbench();
    await lane.palette('Guest Console: Open for Grant');
    await lane.pickFile(grant.path);
    // Before anything is typed, the box says what cancelling costs.
    await page.locator('.quick-input-widget .quick-input-message', { hasText: 'Esc cancels and ends the run: the grant is single use.' }).waitFor({ timeout: UI_STEP_MS });
    await lane.answer('Guest username', undefined);
    await lane.answer('Domain', '');
    await lane.answer('Password for', `${setup.password}-wrong`);
    const refused = await lane.notification(/AUTH_FAILED/);
    stamp('wrong password refused');
    assert.match(refused.message, /^Guest Console — gc-demo-[0-9a-f]+: The guest refused the sign-in: the user name or password is wrong \(attempt 1 of 3\)\. \(AUTH_FAILED\) /);
    assert.ok(refused.message.endsWith(REFUSAL_GUIDE.AUTH_FAILED.next), refused.message);
    assert.ok(!(await lane.notificationTexts()).some((t) => t.includes('ERRCONNECT')), 'FreeRDP\'s error name reached the operator');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: '(attempt 2 of 3)' }).waitFor({ timeout: UI_STEP_MS });
    assert.match(await page.locator('.quick-input-widget .quick-input-message').innerText(), /The guest refused the last attempt: the user name or password is wrong\./);
    await shot('wrong-password');
    await lane.answer('Guest username', undefined);
    await lane.answer('Domain', '');
    await lane.answer('Password for', setup.password);
    webview = await lane.panelFrame(grant.title);
    await lane.phaseShown('SETUP', UI_STEP_MS, webview);
    await waitFor(async () => /^SETUP · gc-demo-/.test(await statusText()), UI_STEP_MS, 'SETUP in the status bar');
    assert.equal(await statusText(), `SETUP · ${grant.vmName}`);
    assert.ok((await lane.tabLabels()).includes('Guest Console e2e — SETUP'), JSON.stringify(await lane.tabLabels()));
    assert.match(await panelText(webview, '#identity'), new RegExp(`^${grant.vmName} uuid ${grant.vmUuid.replace(/-/g, '').slice(0, 8)}… 640×400 grant`));
    assert.match(await panelText(webview, '#notice'), /^One run per grant: Close, Panic, cancelling the sign-in and reloading the window each end this run/);
    await shot('SETUP');
  });

  it('locksFromThePaletteAfterAConfirmationNamingTheRunAndShowsEveryStep', async () => {
    await webview.locator('#screen').click({ position: { x: 40, y: 40 } });
    for (const key of ['KeyE', 'KeyT', 'KeyU', 'KeyP']) await page.keyboard.press(key);
    await waitFor(() => guest.keys().filter((k) => k.up).length >= 4, 20000, 'the keys at the guest');
    await lane.focusWorkbench('Guest Console e2e');
    await lane.palette('Guest Console: Lock and Start Capture');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: UI_STEP_MS });
    assert.equal((await dialog.locator('.dialog-message-text').innerText()).trim(), `Lock run ${setup.grant.run} on VM ${setup.grant.vmName}?`);
    await shot('lock-confirmation');
    await dialog.locator('.dialog-buttons .monaco-button', { hasText: 'Lock' }).click();
    await lane.phaseShown('CAPTURING', UI_STEP_MS, webview);
    stamp('CAPTURING');
    const log = await lane.extensionLog();
    const upto = Number(/drained up to #(\d+)/.exec(log)?.[1]);
    assert.ok(upto >= 9, `drained ${upto}`);
    assert.match(await panelText(webview, '#counters'), new RegExp(`· drained #${upto}$`));
    assert.deepEqual((await webview.locator('#steps li').allInnerTexts()).slice(0, 4), ['✓ Input closed', `✓ Setup input delivered (up to #${upto})`, '✓ Guest confirmed the input', "… Waiting for the model's Capture Desktop…"]);
    await waitFor(async () => (await statusText()) === `CAPTURING · ${setup.grant.vmName}`, UI_STEP_MS, 'CAPTURING in the status bar');
    assert.ok((await lane.tabLabels()).includes('Guest Console e2e — CAPTURING'));
    await shot('CAPTURING');
  });

  it('showsTheReceiptAndTheEvidenceAfterTheActionWithOpenAndVerify', async () => {
    const mcp = new McpClient(setup.grant.run, setup.dirs.runtime);
    try {
      await mcp.initialize();
      await mcp.call('capture_desktop');
      await mcp.call('perform_action', { action: { type: 'click', x: 320, y: 200 } }, 120000);
    } finally {
      await mcp.close();
    }
    const done = await lane.notification(/the run is complete/);
    assert.match(done.message, /^Guest Console — gc-demo-[0-9a-f]+: the run is complete\. The action click\(320,200\) was executed; the guest confirmed it \(\d+ ms\)\. The receipt is in the evidence\.$/);
    assert.deepEqual(done.buttons, ['Show Evidence', 'Verify Evidence']);
    await lane.phaseShown('CLOSED', UI_STEP_MS, webview);
    await webview.locator('#summary').waitFor({ state: 'visible', timeout: UI_STEP_MS });
    const closed = await closedEntry(setup.grant.run);
    assert.equal(closed?.['code'], 'ACTION_DONE');
    const summary = await panelText(webview, '#summary dl');
    assert.match(summary, /^Close reason The one action was performed; the run is complete(?:: [^()]+)?\. \(ACTION_DONE\) Action click\(320,200\) Outcome executed, \d+ input events sent Guest confirmation confirmed in \d+ ms Evidence (\S+) Evidence head [0-9a-f]{64}$/);
    const evidence = /Evidence (\S+\.jsonl)/.exec(summary)?.[1] ?? '';
    assert.equal(path.dirname(evidence), evidenceDir());
    await waitFor(async () => (await statusText()) === `CLOSED · ${setup.grant.vmName}`, UI_STEP_MS, 'CLOSED in the status bar');
    assert.ok((await lane.tabLabels()).includes('Guest Console e2e — CLOSED'));
    await webview.click('#verify-evidence');
    await waitFor(async () => /^Verified: evidence: ok, \d+ lines, head [0-9a-f]{64}/.test(await panelText(webview, '#verify-result')), UI_STEP_MS, 'the verification in the panel');
    await lane.notification(/evidence verified: evidence: ok/);
    await shot('summary');
    await webview.click('#open-evidence');
    await lane.tab(path.basename(evidence)).waitFor({ timeout: UI_STEP_MS });
    await shot('evidence-open');
  });

  it('keepsThePanelTextAtAaContrastInTheDefaultLightAndHighContrastThemes', async () => {
    await lane.tab('Guest Console e2e').click();
    // As the operator switches: Preferences: Color Theme, the theme's name, Enter.
    const themes: Array<[string, string]> = [
      ['Light Modern', 'vscode-light'],
      ['Dark High Contrast', 'vscode-high-contrast'],
      ['Light High Contrast', 'vscode-high-contrast-light'],
      ['Dark Modern', 'vscode-dark'],
    ];
    const dump: Record<string, Record<string, string>> = {};
    for (const [theme, bodyClass] of themes) {
      await lane.focusWorkbench('Guest Console e2e');
      await lane.palette('Preferences: Color Theme');
      const input = page.locator('.quick-input-widget input.input');
      await input.waitFor({ timeout: UI_STEP_MS });
      await page.keyboard.type(theme);
      await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: theme }).waitFor({ timeout: UI_STEP_MS });
      await input.press('Enter');
      await webview.waitForFunction((c) => document.body.classList.contains(c), bodyClass, { timeout: UI_STEP_MS });
      const findings = await webview.evaluate(contrastProbe);
      const low = findings.filter((f) => f.ratio < AA);
      const lowest = findings.reduce((a, b) => (b.ratio < a.ratio ? b : a));
      console.log(`# e2e contrast ${theme}: ${findings.length} texts, lowest ${lowest.ratio}:1 at ${lowest.where}`);
      assert.deepEqual(low, [], `below ${AA}:1 in ${theme}`);
      dump[theme] = await webview.evaluate(() => {
        const out: Record<string, string> = {};
        const style = document.documentElement.style;
        for (let i = 0; i < style.length; i++) {
          const name = style.item(i);
          if (name.startsWith('--vscode-')) out[name] = style.getPropertyValue(name).trim();
        }
        return out;
      });
      await shot(`theme-${bodyClass}`);
    }
    await fs.mkdir(ARTIFACTS, { recursive: true });
    await fs.writeFile(path.join(ARTIFACTS, 'e2e-theme-variables.json'), JSON.stringify(dump, null, 2));
  });

  it('refusesTheSameGrantAgainWithTheDocsNextStepAndOpensTheDocAtTheCode', async () => {
    await lane.focusWorkbench();
    await lane.palette('Guest Console: Open for Grant');
    await lane.pickFile(setup.grant.path);
    const reused = await lane.notification(/GRANT_REUSED/);
    assert.match(reused.message, /^Guest Console — gc-demo-[0-9a-f]+: The grant was already consumed/);
    assert.ok(reused.message.endsWith(REFUSAL_GUIDE.GRANT_REUSED.next), reused.message);
    assert.deepEqual(reused.buttons, ['Show Evidence', 'Open Docs', 'New Grant…']);
    await shot('grant-reused');
    await reused.toast.locator('.monaco-button', { hasText: 'Open Docs' }).click();
    await lane.tab('troubleshooting.md').waitFor({ timeout: UI_STEP_MS });
    await page.locator('.monaco-editor .view-line', { hasText: '| `GRANT_REUSED` |' }).first().waitFor({ timeout: UI_STEP_MS });
    await shot('docs');
  });

  it('endsACancelledSignInAsAuthCancelledAndSaysTheGrantIsUsedUp', async () => {
    const grant = await newGrant('Cancelled');
    await lane.focusWorkbench();
    await lane.palette('Guest Console: Open for Grant');
    await lane.pickFile(grant.path);
    await page.locator('.quick-input-widget .quick-input-message', { hasText: 'Guest username' }).waitFor({ timeout: UI_STEP_MS });
    await page.locator('.quick-input-widget input.input').press('Escape');
    const cancelled = await lane.notification(/AUTH_CANCELLED/);
    assert.ok(cancelled.message.endsWith('The sign-in was cancelled; the console closed. (AUTH_CANCELLED) Open a new grant when ready.'), cancelled.message);
    assert.deepEqual(cancelled.buttons, ['Show Evidence', 'Open Docs', 'New Grant…']);
    await waitFor(async () => (await closedEntry(grant.run))?.['code'] === 'AUTH_CANCELLED', UI_STEP_MS, 'AUTH_CANCELLED in the evidence');
    const frame = await lane.panelFrame(grant.title);
    await lane.phaseShown('CLOSED', UI_STEP_MS, frame);
    await frame.locator('#summary').waitFor({ state: 'visible', timeout: UI_STEP_MS });
    assert.match(await panelText(frame, '#summary-reason'), /^The sign-in was cancelled; the console closed\. \(AUTH_CANCELLED\)$/);
    await shot('cancelled');
    await lane.tab('Cancelled').locator('.codicon-close').click();
  });

  it('locksAndClosesTheRunInViewAndAsksWhenNoPanelIsInView', async () => {
    guestB = await TestGuest.start({ marker: 0x0be7b037, width: 640, height: 400, password: setup.password });
    const grantA = await newGrant('Run A');
    const grantB = await newGrant('Run B', guestB);
    const frameA = await openToSetup(grantA);
    const frameB = await openToSetup(grantB);
    stamp('two runs in SETUP');
    // Run A in view, though run B was opened last.
    await lane.focusWorkbench('Run A');
    await waitFor(async () => (await statusText()).startsWith(`SETUP · ${grantA.vmName}`), UI_STEP_MS, 'the status bar on run A');
    await lane.palette('Guest Console: Lock and Start Capture');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: UI_STEP_MS });
    assert.equal((await dialog.locator('.dialog-message-text').innerText()).trim(), `Lock run ${grantA.run} on VM ${grantA.vmName}?`);
    await dialog.locator('.dialog-buttons .monaco-button', { hasText: 'Lock' }).click();
    await lane.phaseShown('CAPTURING', UI_STEP_MS, frameA);
    assert.equal(await frameB.evaluate(() => document.getElementById('phase')?.dataset['phase']), 'SETUP', 'the run not in view was locked');
    // No panel in view (another editor is the active one): the command asks, naming each run and its VM.
    await lane.focusWorkbench();
    await lane.palette('File: New Untitled Text File');
    await lane.tab('Untitled-1').waitFor({ timeout: UI_STEP_MS });
    await lane.palette('Guest Console: Close Console');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Guest Console: Close Console' }).waitFor({ timeout: UI_STEP_MS });
    const rows = (await page.locator('.quick-input-list .monaco-list-row').allInnerTexts()).map((r) => r.replace(/\s+/g, ' ').trim());
    assert.ok(rows.some((r) => r.includes(grantA.vmName) && r.includes(`run ${grantA.run}`)) && rows.some((r) => r.includes(grantB.vmName) && r.includes(`run ${grantB.run}`)), JSON.stringify(rows));
    await shot('which-run');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: grantB.run }).click();
    const pidsB = await consolePids(BIN.console, grantB.path);
    await waitFor(async () => (await consolePids(BIN.console, grantB.path)).length === 0, UI_STEP_MS, 'run B ended');
    // A process that has exited stays answerable to kill(pid, 0) until its parent reaps it.
    await waitFor(() => pidsB.every((p) => !pidAlive(p)), UI_STEP_MS, "run B's processes reaped");
    assert.equal((await consolePids(BIN.console, grantA.path)).length, 1, 'closing B ended A');
    const closedB = await lane.notification(new RegExp(`${grantB.vmName}: The operator closed the console`));
    assert.deepEqual(closedB.buttons, ['Show Evidence', 'New Grant…']);
    await lane.focusWorkbench('Run A');
    await lane.palette('Guest Console: Close Console');
    await waitFor(async () => (await consolePids(BIN.console, grantA.path)).length === 0, UI_STEP_MS, 'run A ended');
  });

  it('notifiesALostGuestWithItsNextStepInTheStatusBarAndThePanel', async () => {
    const grant = await newGrant('Lost guest');
    const frame = await openToSetup(grant);
    guest.write({ cmd: 'disconnect' });
    const lost = await lane.notification(/RDP_LOST/);
    assert.match(lost.message, /^Guest Console — gc-demo-[0-9a-f]+: The RDP connection was lost.*\(RDP_LOST\) /);
    assert.ok(lost.message.includes(REFUSAL_GUIDE.RDP_LOST.next.replace(/\.$/, '')), lost.message);
    assert.deepEqual(lost.buttons, ['Show Evidence', 'Open Docs', 'New Grant…']);
    await lane.phaseShown('CLOSED', UI_STEP_MS, frame);
    await waitFor(async () => (await statusText()) === `CLOSED · ${grant.vmName}`, UI_STEP_MS, 'CLOSED in the status bar');
    const bg = await lane.statusItem().evaluate((el) => getComputedStyle(el).backgroundColor);
    const errorBg = await page.evaluate(() => getComputedStyle(document.querySelector('.monaco-workbench') as Element).getPropertyValue('--vscode-statusBarItem-errorBackground').trim());
    assert.ok(errorBg !== '' && bg !== 'rgba(0, 0, 0, 0)', `status item background ${bg}, error colour ${errorBg}`);
    await waitFor(async () => /^Closed: .*\(RDP_LOST\)/.test(await panelText(frame, '#alert')), UI_STEP_MS, 'the alert in the panel');
    assert.equal(await frame.getAttribute('#alert', 'role'), 'alert');
    await shot('rdp-lost');
    await lane.tab('Lost guest').locator('.codicon-close').click();
  });

  it('recordsAWindowReloadAsItsOwnCloseReason', async () => {
    const grant = await newGrant('Reloaded');
    await openToSetup(grant);
    const [pid] = await consolePids(BIN.console, grant.path);
    assert.ok(pid);
    await page.reload();
    await waitFor(() => !pidAlive(pid), UI_STEP_MS, 'the console ended by the reload');
    const closed = await waitFor(() => closedEntry(grant.run), 30000, 'the closed entry');
    stamp(`reload closed the console: ${JSON.stringify(closed['code'])}`);
    assert.equal(closed['code'], 'WINDOW_RELOAD', JSON.stringify(closed));
    await page.locator('.monaco-workbench').waitFor({ timeout: UI_STEP_MS });
    await page.locator('.statusbar').waitFor({ timeout: UI_STEP_MS });
  });

  it('saysWhenTheConsoleBinaryIsMissingAndPointsAtTheSetting', async () => {
    await lane.updateSettings({ 'guestConsole.binaryPath': '/nonexistent/bin/guest-console' });
    // Until the window has read the setting, the real console refuses this grant (unsigned):
    // open it until the notification is the extension's own.
    // In a folder of its own: the file dialog then lists it in view, not below the run's files.
    const probe = path.join(await fs.mkdtemp(path.join(setup.dirs.root, 'no-binary-')), 'grant.json');
    await fs.writeFile(probe, JSON.stringify({ run_id: 'run-no-binary', vm: { name: 'no-binary-vm' } }));
    const missing = await waitFor(
      async () => {
        await lane.focusWorkbench();
        await lane.palette('Guest Console: Open for Grant');
        await lane.pickFile(probe);
        const n = await lane.notification(/no-binary-vm/);
        await n.toast.locator('.codicon-notifications-clear, .codicon-close').first().click().catch(() => undefined);
        return n.message.includes('could not be started') ? n : undefined;
      },
      UI_STEP_MS,
      'the missing-binary notification',
    );
    assert.match(missing.message, /^Guest Console — no-binary-vm: The console could not be started: \/nonexistent\/bin\/guest-console: .*ENOENT.*Install the guest-console package, or set guestConsole\.binaryPath to the console executable\.$/);
    assert.deepEqual(missing.buttons, ['Open Settings', 'Show Log']);
    await shot('no-binary');
  });
});
