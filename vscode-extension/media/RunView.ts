// The panel's account of where the run stands, below the header: the progress line (connect,
// sign-in, and each step of the lock with how long the guest wait has taken), the lock's
// steps, which stay on screen once done (LOCKING and "drained" last milliseconds), the
// announced banners (status: polite; alert: assertive) and, after the run, its summary
// (close reason, receipt, evidence). Runs on the webview's main thread.

import type { Phase, ReceiptSummary, RunSummary } from '../shared/protocol';
import { byId } from './dom';

type StepName = 'LOCKING' | 'DRAINED' | 'CONFIRMED' | 'CAPTURED' | 'ACTED';
type StepState = 'pending' | 'active' | 'done' | 'failed';

const STEP_TEXT: Record<StepName, { active: string; done: string }> = {
  LOCKING: { active: 'Closing input…', done: 'Input closed' },
  DRAINED: { active: 'Delivering the setup input to the guest…', done: 'Setup input delivered' },
  CONFIRMED: { active: 'Waiting for the guest to confirm it processed the input…', done: 'Guest confirmed the input' },
  CAPTURED: { active: "Waiting for the model's Capture Desktop…", done: 'Desktop captured by the model' },
  ACTED: { active: "The model's one action is running…", done: 'Action performed' },
};
const ORDER: readonly StepName[] = ['LOCKING', 'DRAINED', 'CONFIRMED', 'CAPTURED', 'ACTED'];

export class RunView {
  private readonly progress = byId('progress');
  private readonly progressText = byId('progress-text');
  private readonly progressElapsed = byId('progress-elapsed');
  private readonly steps = byId<HTMLOListElement>('steps');
  private readonly banner = byId('banner');
  private readonly alert = byId('alert');
  private readonly summary = byId('summary');
  private readonly openEvidence = byId<HTMLButtonElement>('open-evidence');
  private readonly verifyEvidence = byId<HTMLButtonElement>('verify-evidence');
  private readonly verifyResult = byId('verify-result');
  private waitStarted: number | undefined;
  private waitTimer: number | undefined;
  private drainedUpto: number | undefined;

  constructor(actions: { openEvidence(): void; verifyEvidence(): void }) {
    this.openEvidence.addEventListener('click', () => actions.openEvidence());
    this.verifyEvidence.addEventListener('click', () => {
      this.verifyResult.textContent = 'Verifying…';
      actions.verifyEvidence();
    });
  }

  /** Before the guest connects: what the extension host is doing. */
  showHostProgress(text: string): void {
    this.setProgress(text);
  }

  /** Mirrors a phase into the progress line and the steps. */
  onPhase(phase: Phase): void {
    switch (phase) {
      case 'SETUP':
        this.setProgress('');
        break;
      case 'LOCKING':
        this.steps.hidden = false;
        this.mark('LOCKING', 'done');
        this.mark('DRAINED', 'active');
        this.setProgress(STEP_TEXT.DRAINED.active);
        break;
      case 'READ_ONLY':
        this.mark('LOCKING', 'done');
        this.mark('DRAINED', 'done');
        this.mark('CONFIRMED', 'active');
        this.setProgress(STEP_TEXT.CONFIRMED.active, true);
        break;
      case 'CAPTURING':
        this.doneUpTo('CONFIRMED');
        this.mark('CAPTURED', 'active');
        this.setProgress(STEP_TEXT.CAPTURED.active);
        break;
      case 'REVIEWING':
        this.doneUpTo('CAPTURED');
        this.mark('ACTED', 'active');
        this.setProgress("The model captured the desktop; waiting for its one action…");
        break;
      case 'ACTION':
        this.doneUpTo('CAPTURED');
        this.mark('ACTED', 'active');
        this.setProgress(STEP_TEXT.ACTED.active);
        break;
      case 'CLOSED':
        this.setProgress('');
        // A step that was under way when the run closed did not finish.
        for (const li of Array.from(this.steps.querySelectorAll<HTMLLIElement>('li[data-state="active"]'))) {
          this.markEl(li, 'failed');
        }
        break;
    }
  }

  onDrained(upto: number): void {
    this.drainedUpto = upto;
    this.mark('LOCKING', 'done');
    this.mark('DRAINED', 'done');
  }

  showBanner(text: string): void {
    this.banner.textContent = text;
    this.banner.hidden = text === '';
  }

  /** An error: role=alert, so a screen reader says it at once. */
  showAlert(text: string): void {
    this.alert.textContent = text;
    this.alert.hidden = text === '';
  }

  showSummary(s: RunSummary): void {
    if (s.receipt?.outcome === 'executed') {
      this.doneUpTo('ACTED');
    }
    this.summary.hidden = false;
    byId('summary-reason').textContent = `${s.headline} (${s.reason})`;
    byId('summary-next').textContent = s.next;
    byId('summary-next').hidden = s.next === '';
    byId('summary-next-label').hidden = s.next === '';
    this.showReceipt(s.receipt);
    byId('summary-evidence').textContent = s.evidence || 'none reported';
    byId('summary-head').textContent = s.evidenceHead || '—';
    this.openEvidence.disabled = s.evidence === '';
    this.verifyEvidence.disabled = s.evidence === '' || s.evidenceHead === '';
  }

  showVerification(ok: boolean, text: string): void {
    this.verifyResult.dataset['ok'] = String(ok);
    this.verifyResult.textContent = `${ok ? 'Verified' : 'Verification FAILED'}: ${text}`;
  }

  private showReceipt(r: ReceiptSummary | undefined): void {
    byId('summary-action').textContent = r ? r.action : 'none (the run closed before an action)';
    byId('summary-outcome').textContent = r ? `${r.outcome}${r.failure ? ` (${r.failure})` : ''}${r.eventsSent !== undefined ? `, ${r.eventsSent} input events sent` : ''}` : '—';
    byId('summary-confirmation').textContent = r ? `${r.confirmation}${r.confirmMs !== undefined ? ` in ${r.confirmMs} ms` : ''}` : '—';
  }

  private setProgress(text: string, timed = false): void {
    window.clearInterval(this.waitTimer);
    this.waitTimer = undefined;
    this.progressElapsed.textContent = '';
    this.progressText.textContent = text;
    this.progress.hidden = text === '';
    if (timed) {
      this.waitStarted = performance.now();
      // The wait can take seconds (docs/operating.md): show that it is moving.
      this.waitTimer = window.setInterval(() => {
        this.progressElapsed.textContent = ` ${((performance.now() - (this.waitStarted ?? 0)) / 1000).toFixed(1)} s`;
      }, 100);
    }
  }

  private doneUpTo(step: StepName): void {
    for (const s of ORDER.slice(0, ORDER.indexOf(step) + 1)) {
      this.mark(s, 'done');
    }
  }

  private mark(step: StepName, state: StepState): void {
    const li = this.steps.querySelector<HTMLLIElement>(`li[data-step="${step}"]`);
    if (li && !(li.dataset['state'] === 'done' && state !== 'done')) {
      this.markEl(li, state);
    }
  }

  private markEl(li: HTMLLIElement, state: StepState): void {
    const step = li.dataset['step'] as StepName;
    li.dataset['state'] = state;
    const text = state === 'active' ? STEP_TEXT[step].active : STEP_TEXT[step].done;
    const drained = step === 'DRAINED' && state === 'done' && this.drainedUpto !== undefined ? ` (up to #${this.drainedUpto})` : '';
    const mark = state === 'done' ? '✓ ' : state === 'failed' ? '✗ ' : state === 'active' ? '… ' : '';
    li.textContent = `${mark}${text}${drained}${state === 'failed' ? ' — not finished' : ''}`;
  }
}
