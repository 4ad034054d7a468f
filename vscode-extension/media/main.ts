// Webview entry: waits for the host's `connect` message, opens the console WebSocket,
// sends `hello` first, mirrors the console's phase (header, progress and lock steps:
// RunView), draws frames at the chosen scale (ScaleControl) and, in SETUP only, captures
// input from the focused viewport. After the run it shows the host's summary.

import {
  ConnectInfo,
  ConsoleToPanelMessage,
  HostToWebviewMessage,
  isPhase,
  Phase,
  PHASE_LABELS,
  PanelToConsoleMessage,
  WebviewToHostMessage,
} from '../shared/protocol';
import { byId } from './dom';
import { FramePresenter } from './FramePresenter';
import { InputCapture, InputMessage, KeyboardOwner } from './InputCapture';
import { RunView } from './RunView';
import { ScaleControl, ScaleMode } from './ScaleControl';

interface VsCodeApi {
  postMessage(message: WebviewToHostMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const PHASE_LABEL: Record<Phase | 'CONNECTING', string> = { CONNECTING: 'CONNECTING', ...PHASE_LABELS };
// Close reasons that are not a failure: the panel does not raise an alert for them.
const ORDINARY_CLOSE = new Set(['ACTION_DONE', 'OPERATOR_CLOSE', 'WINDOW_RELOAD', 'PANIC', 'AUTH_CANCELLED', 'PARENT_GONE', 'panic']);

// Chords the host operating system keeps for itself, sent from panel buttons as ordinary
// key events (down in order, up in reverse); every scancode is in media/scancodes.ts.
const CHORD_BUTTONS: ReadonlyArray<{ id: string; scancodes: readonly number[] }> = [
  { id: 'send-cad', scancodes: [0x1d, 0x38, 0xe053] }, // Ctrl+Alt+Del
  { id: 'send-win', scancodes: [0xe05b] }, // left Windows key
  { id: 'send-alttab', scancodes: [0x38, 0x0f] }, // Alt+Tab
];

const KEYBOARD_LABEL: Record<KeyboardOwner, string> = {
  guest: 'Keys → guest · left Ctrl+Alt gives them back to VS Code · Ctrl+Alt+Shift+P panics',
  vscode: 'Keys → VS Code · click the guest screen to type into the guest',
};

class PanelApp {
  private readonly vscode = acquireVsCodeApi();
  private readonly phaseEl = byId('phase');
  private readonly viewport = byId('viewport');
  private readonly stage = byId('stage');
  private readonly canvas = byId<HTMLCanvasElement>('screen');
  private readonly lockButton = byId<HTMLButtonElement>('lock');
  private readonly keyboardEl = byId('keyboard');
  private readonly chordButtons = CHORD_BUTTONS.map((c) => ({ ...c, button: byId<HTMLButtonElement>(c.id) }));
  private ws: WebSocket | undefined;
  private phase: Phase | 'CONNECTING' = 'CONNECTING';
  private seq = 0;
  private acked = 0;
  private refused = 0; // input_refused from the console
  private notSent = 0; // keys the panel itself does not send (no scancode, IME composition)
  private dropped = 0; // frames that could not be painted
  private desktop = { width: 0, height: 0 };
  private readonly input: InputCapture;
  private readonly presenter: FramePresenter;
  private readonly view: RunView;
  private readonly scale: ScaleControl;

  constructor() {
    const saved = (this.vscode.getState() ?? {}) as { scale?: unknown };
    this.scale = new ScaleControl(
      this.stage,
      this.canvas,
      byId<HTMLButtonElement>('scale-fit'),
      byId<HTMLButtonElement>('scale-actual'),
      byId('scale-now'),
      saved.scale === 'actual' ? 'actual' : 'fit',
      (mode: ScaleMode) => this.vscode.setState({ scale: mode }),
    );
    this.view = new RunView({
      openEvidence: () => this.vscode.postMessage({ type: 'request_open_evidence' }),
      verifyEvidence: () => this.vscode.postMessage({ type: 'request_verify_evidence' }),
    });
    this.input = new InputCapture(this.viewport, this.canvas, {
      send: (m) => this.sendInput(m),
      desktopSize: () => this.desktop,
      panic: () => this.panic(),
      keyboardOwner: (owner) => this.showKeyboardOwner(owner),
      keyNotSent: () => {
        this.notSent += 1;
        this.updateCounters();
      },
    });
    this.presenter = new FramePresenter(this.canvas, {
      ack: (frame) => this.send({ type: 'frame_ack', frame }),
      dropped: (frame, message) => this.onFrameDropped(frame, message),
      resized: (width, height) => this.setDesktopSize(width, height),
    });
    window.addEventListener('message', (e: MessageEvent<HostToWebviewMessage>) => this.onHostMessage(e.data));
    this.lockButton.addEventListener('click', () => this.requestLock());
    byId('close').addEventListener('click', () => {
      this.send({ type: 'close' });
      this.vscode.postMessage({ type: 'request_close' });
    });
    byId('panic').addEventListener('click', () => this.panic());
    for (const chord of this.chordButtons) {
      chord.button.addEventListener('click', () => this.input.sendChord(chord.scancodes));
    }
    // A click on a header button leaves the focus (and so the keyboard) where it was.
    for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>('#bar button'))) {
      button.addEventListener('mousedown', (e) => e.preventDefault());
    }
    this.vscode.postMessage({ type: 'webview_ready' });
  }

  private onHostMessage(message: HostToWebviewMessage | undefined): void {
    switch (message?.type) {
      case 'connect':
        this.connect(message);
        break;
      case 'host_phase':
        if (isPhase(message.phase)) {
          this.setPhase(message.phase, message.reason);
        }
        break;
      case 'host_progress':
        if (this.phase === 'CONNECTING') {
          this.view.showHostProgress(String(message.text));
        }
        break;
      case 'host_summary':
        this.view.showSummary(message.summary);
        if (!ORDINARY_CLOSE.has(message.summary.reason)) {
          this.view.showAlert(`Closed: ${message.summary.headline} (${message.summary.reason}) ${message.summary.next}`.trim());
        }
        break;
      case 'host_verify':
        this.view.showVerification(message.ok === true, String(message.text));
        break;
      default:
        break;
    }
  }

  private connect(info: ConnectInfo): void {
    if (this.ws) {
      return; // one connection per panel; a repeated connect is ignored
    }
    const ws = new WebSocket(info.wsUrl);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.addEventListener('open', () => {
      // hello is the first message; the capability travels only inside it.
      ws.send(
        JSON.stringify({
          type: 'hello',
          run: info.run,
          task: info.task,
          capability: info.capability,
          client: { kind: 'vscode-webview', version: info.clientVersion },
          panel: info.panel,
          // The presenter applies COPY records from its own canvas (FrameDecoder.drawFrame).
          features: ['copy_rect'],
        }),
      );
      info.capability = '';
    });
    ws.addEventListener('message', (e: MessageEvent<string | ArrayBuffer>) => {
      if (typeof e.data === 'string') {
        this.onConsoleMessage(e.data);
      } else if (this.phase !== 'CLOSED') {
        this.presenter.enqueue(e.data);
      }
    });
    ws.addEventListener('close', (e) => {
      if (this.phase !== 'CLOSED') {
        this.setPhase('CLOSED', e.reason || 'connection to the console closed');
      }
    });
  }

  private onConsoleMessage(text: string): void {
    let message: ConsoleToPanelMessage;
    try {
      message = JSON.parse(text) as ConsoleToPanelMessage;
    } catch {
      return;
    }
    switch (message.type) {
      case 'welcome':
        this.setDesktopSize(message.width, message.height);
        this.showIdentity(message.vm, message.identity);
        if (isPhase(message.phase)) {
          this.setPhase(message.phase, '');
        }
        break;
      case 'phase':
        if (isPhase(message.phase)) {
          this.setPhase(message.phase, message.reason);
        }
        break;
      case 'input_ack':
        this.acked = Math.max(this.acked, message.upto);
        this.updateCounters();
        break;
      case 'input_refused':
        this.refused += 1;
        this.updateCounters();
        break;
      case 'drained':
        // Kept in the header and the lock steps: the next phase follows within milliseconds.
        byId('drained').textContent = String(message.upto);
        byId('drained-at').hidden = false;
        this.view.onDrained(message.upto);
        break;
      case 'error':
        this.view.showAlert(`${message.code}: ${message.message}`);
        break;
      case 'bye':
        this.setPhase('CLOSED', message.reason);
        break;
      default:
        break;
    }
  }

  private setPhase(phase: Phase, reason: string): void {
    if (this.phase === 'CLOSED') {
      return; // nothing follows CLOSED
    }
    this.phase = phase;
    if (phase === 'SETUP') {
      this.input.attach();
    } else {
      // Read-only from here on (nothing returns to SETUP): no input listener remains.
      this.input.detach(false);
    }
    const wasSetup = this.phaseEl.dataset['phase'] === 'SETUP';
    this.phaseEl.textContent = PHASE_LABEL[phase];
    this.phaseEl.dataset['phase'] = phase;
    this.view.onPhase(phase);
    document.body.dataset['phase'] = phase;
    this.viewport.classList.toggle('readonly', phase !== 'SETUP');
    this.viewport.tabIndex = phase === 'SETUP' ? 0 : -1;
    this.lockButton.disabled = phase !== 'SETUP';
    for (const chord of this.chordButtons) {
      chord.button.disabled = phase !== 'SETUP';
    }
    this.showKeyboardOwner(this.input.keyboardOwner);
    if (phase === 'CLOSED') {
      this.showBanner(`Closed${reason ? `: ${reason}` : ''}.`);
      this.presenter.stop();
      this.ws?.close(1000);
    } else if (phase !== 'SETUP') {
      if (wasSetup || phase === 'LOCKING') {
        this.showBanner('Read-only: input to the guest is off. There is no way back to setup.');
      }
    } else if (reason && reason !== 'guest connected') {
      this.showBanner(reason);
    }
    this.postStatus();
  }

  private requestLock(): void {
    if (this.phase !== 'SETUP') {
      return;
    }
    // Let go of held keys while input is still accepted, then stop listening for good.
    this.input.detach(true);
    this.lockButton.disabled = true;
    for (const chord of this.chordButtons) {
      chord.button.disabled = true;
    }
    this.send({ type: 'lock' });
  }

  private panic(): void {
    this.input.detach(false);
    this.vscode.postMessage({ type: 'request_panic' });
  }

  private showKeyboardOwner(owner: KeyboardOwner): void {
    this.keyboardEl.dataset['owner'] = owner;
    this.keyboardEl.textContent = this.phase === 'SETUP' || owner === 'guest' ? KEYBOARD_LABEL[owner] : 'Keys → VS Code (read-only)';
  }

  private sendInput(message: InputMessage): void {
    if (this.phase !== 'SETUP' || !this.input.isAttached) {
      return;
    }
    this.seq += 1;
    this.send({ ...message, seq: this.seq } as PanelToConsoleMessage);
  }

  private send(message: PanelToConsoleMessage): void {
    if (this.ws?.readyState === WebSocket.OPEN) {
      // `type` first: the spread keeps insertion order with type leading.
      const { type, ...rest } = message;
      this.ws.send(JSON.stringify({ type, ...rest }));
    }
  }

  private showIdentity(vm: string, identity: Record<string, unknown>): void {
    const pick = (...keys: string[]): string => {
      for (const k of keys) {
        const v = identity[k];
        if (typeof v === 'string' && v.length > 0) {
          return v.replace(/:/g, '').slice(0, 12).toLowerCase();
        }
      }
      return '—';
    };
    byId('vm').textContent = vm || '—';
    const uuid = identity['vm_uuid_prefix'];
    byId('uuid').textContent = typeof uuid === 'string' && uuid.length > 0 ? `uuid ${uuid.slice(0, 8).toLowerCase()}…` : '';
    byId('grant').textContent = `grant ${pick('grant_digest', 'grant_sha256', 'grant')}`;
    byId('cert').textContent = `cert ${pick('cert_sha256', 'cert_fingerprint', 'cert')}`;
    const warnings: string[] = [];
    if (identity['cert_pin'] === false || identity['cert_unpinned'] === true) {
      warnings.push('this grant does not pin the guest certificate');
    }
    if (identity['unsigned_grants_allowed'] === true) {
      warnings.push(
        identity['signed'] === true
          ? 'unsigned grants are allowed (--allow-unsigned-grants, development only)'
          : 'this grant is NOT signed: unsigned grants are allowed (development only)',
      );
    }
    if (warnings.length > 0) {
      this.showBanner(`Warning: ${warnings.join('; ')}.`);
    }
    // A server without NLA checks the password only after the connection (docs/operating.md).
    const security = identity['security'];
    if (typeof security === 'string' && security !== 'nla') {
      let note = document.getElementById('security');
      if (!note) {
        note = document.createElement('span');
        note.id = 'security';
        byId('identity').appendChild(note);
      }
      note.textContent = 'server without NLA: credentials checked by the guest';
    }
  }

  private setDesktopSize(width: number, height: number): void {
    if (width > 0 && height > 0 && (width !== this.desktop.width || height !== this.desktop.height)) {
      this.desktop = { width, height };
      byId('desktop').textContent = `${width}×${height}`;
      // The canvas itself is sized by the presenter (it may belong to the frame worker).
      this.scale.setDesktop(width, height);
    }
  }

  /**
   * A packet that cannot be painted is still acknowledged (when its id is readable), so the
   * console's window of unacked frames never fills up with it, and a refresh is asked for:
   * the picture may be stale until the whole desktop arrives again.
   */
  private onFrameDropped(frame: number | undefined, message: string): void {
    if (this.phase === 'CLOSED') {
      return;
    }
    this.dropped += 1;
    if (frame !== undefined) {
      this.send({ type: 'frame_ack', frame });
    }
    this.send({ type: 'frame_refresh', frame: frame ?? 0 });
    let counter = document.getElementById('dropped');
    if (!counter) {
      // Shown only once a frame was dropped: the common case keeps the header unchanged.
      const counters = byId('counters');
      counters.append(' · dropped ');
      counter = document.createElement('span');
      counter.id = 'dropped';
      counters.append(counter);
    }
    counter.textContent = String(this.dropped);
    this.showBanner(`Frame ${frame ?? '?'} could not be shown (${message}); the whole screen was requested again.`);
  }

  private updateCounters(): void {
    byId('acked').textContent = String(this.acked);
    // Every input that did not reach the guest: refused by the console, or never sent.
    byId('refused').textContent = String(this.refused + this.notSent);
    byId('counters').title = `${this.refused} refused by the console; ${this.notSent} keys the panel cannot send (no RDP scancode, or an input method composing)`;
    this.postStatus();
  }

  private postStatus(): void {
    if (this.phase !== 'CONNECTING') {
      this.vscode.postMessage({ type: 'status', phase: this.phase, acked: this.acked, refused: this.refused + this.notSent });
    }
  }

  private showBanner(text: string): void {
    this.view.showBanner(text);
  }
}

new PanelApp();
