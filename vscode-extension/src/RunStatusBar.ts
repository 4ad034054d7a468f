// The window's status bar item for the console runs: the phase of the run the operator sees
// (its panel is the active editor, else the last one that was), with the counters in the
// tooltip; a click shows that run's panel. Lives on the extension host's event loop.

import type { ConsoleSession } from './ConsoleSession';
import { stageLabel } from './ConsoleSession';
import { Disposable, toDisposable } from './Disposable';
import type { HostApi, StatusItem } from './HostApi';

const BUSY = new Set(['CONNECTING', 'SIGN-IN', 'SIGNING IN', 'LOCKING', 'READ_ONLY', 'CAPTURING', 'REVIEWING', 'ACTION']);
// Close reasons that are not a failure (the item is not painted as an error for them).
const ORDINARY = new Set(['ACTION_DONE', 'OPERATOR_CLOSE', 'WINDOW_RELOAD', 'PANIC', 'AUTH_CANCELLED']);

export class RunStatusBar extends Disposable {
  private readonly item: StatusItem;

  constructor(host: HostApi) {
    super();
    this.item = host.createStatusItem();
    this.register(toDisposable(() => this.item.dispose()));
  }

  /** `shown`: the run the item is about (undefined: none left); `others`: how many more are running. */
  update(shown: ConsoleSession | undefined, others: number): void {
    if (!shown) {
      this.item.hide();
      return;
    }
    const stage = stageLabel(shown.stage);
    const more = others > 0 ? ` +${others}` : '';
    const c = shown.counters;
    const reason = shown.summary?.reason;
    const failed = shown.stage === 'CLOSED' && reason !== undefined && !ORDINARY.has(reason);
    this.item.text = `$(vm) ${stage} · ${shown.vmName}${more}`;
    const counters = `acked ${c.acked} · refused ${c.refused}${c.drained !== undefined ? ` · drained #${c.drained}` : ''}`;
    this.item.tooltip = [
      `Guest Console: run ${shown.run ?? '?'} on ${shown.vmName} — ${stage}${reason ? ` (${reason})` : ''}`,
      counters,
      others > 0 ? `${others} more console${others > 1 ? 's' : ''} running in this window` : '',
      'Click to show its panel.',
    ]
      .filter((l) => l !== '')
      .join('\n');
    this.item.accessibilityLabel = `Guest Console, ${shown.vmName}, ${stage}${reason ? `, ${reason}` : ''}, ${counters}`;
    this.item.kind = failed ? 'error' : BUSY.has(shown.stage) ? 'warning' : 'normal';
    this.item.command = { id: 'guestConsole.showPanel', args: [shown.run] };
    this.item.show();
  }
}
