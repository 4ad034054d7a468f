// Keyboard and pointer capture, while the phase is SETUP. detach() removes every listener
// it added: in the read-only phases no input listener exists at all, so nothing can be
// sent by accident.
//
// Keys: while the viewport has the focus, every key event goes to the guest and nowhere
// else. VS Code's webview host (workbench/contrib/webview/browser/pre/index.html) forwards
// keydown/keyup to the workbench from bubble-phase listeners on this frame's window, and
// the workbench replays them as its own keybindings; our listeners sit on the same window
// in the capture phase, which runs first, and stop the event there (stopImmediatePropagation)
// and cancel its default action (preventDefault). Exceptions: the Panic chord, and the
// release chord, which hands the keyboard back to VS Code until the viewport is focused
// again. Outside the viewport (header buttons) keys travel as usual.
// Runs on the webview's main thread only.

import type { KeyMessage, PointerMessage } from '../shared/protocol';
import { scancodeForCode } from './scancodes';

export type InputMessage = Omit<KeyMessage, 'seq'> | Omit<PointerMessage, 'seq'>;

/** Where the operator's keys go right now. */
export type KeyboardOwner = 'guest' | 'vscode';

export interface InputTarget {
  /** Sends one input message; the caller stamps the sequence number. */
  send(message: InputMessage): void;
  /** Desktop size in pixels (the canvas's intrinsic size). */
  desktopSize(): { width: number; height: number };
  /** The Panic chord was pressed with the keyboard on the guest. */
  panic(): void;
  /** The keyboard moved between the guest and VS Code (for the panel's indicator). */
  keyboardOwner(owner: KeyboardOwner): void;
  /** A key went down that the panel does not send (no RDP scancode, or an IME composing). */
  keyNotSent(code: string): void;
}

const WHEEL_NOTCH = 120;

/** Ctrl(+Alt or +Cmd)+Shift+P, also the extension's keybinding outside the viewport. */
export function isPanicChord(e: KeyboardEvent): boolean {
  return e.code === 'KeyP' && (e.ctrlKey || e.metaKey) && e.altKey && e.shiftKey;
}

// The release chord: left Ctrl and left Alt held together and let go with no other key
// in between (VMware's choice). Windows binds nothing to Ctrl+Alt alone; the left keys
// only, because a Windows host reports AltGr as ControlLeft+AltRight.
export const RELEASE_CHORD = Object.freeze([0x1d, 0x38]);

/** What key, pointer and wheel events all say about the modifiers. */
type ModifierFlags = Pick<KeyboardEvent, 'ctrlKey' | 'shiftKey' | 'altKey' | 'metaKey' | 'getModifierState'>;

// The modifiers an event's flags speak for. AltRight is AltGr on many layouts, where
// the browser reports it through getModifierState('AltGraph') instead of altKey.
const MODIFIERS: ReadonlyArray<{ scancode: number; held: (e: ModifierFlags) => boolean }> = [
  { scancode: 0x1d, held: (e) => e.ctrlKey },
  { scancode: 0xe01d, held: (e) => e.ctrlKey },
  { scancode: 0x2a, held: (e) => e.shiftKey },
  { scancode: 0x36, held: (e) => e.shiftKey },
  { scancode: 0x38, held: (e) => e.altKey },
  { scancode: 0xe038, held: (e) => e.altKey || e.getModifierState('AltGraph') },
  { scancode: 0xe05b, held: (e) => e.metaKey },
  { scancode: 0xe05c, held: (e) => e.metaKey },
];

export class InputCapture {
  private readonly removers: Array<() => void> = [];
  /** Scancodes the guest believes are down, in the order they went down. */
  private readonly heldKeys = new Set<number>();
  private buttons = 0;
  private lastPoint = { x: 0, y: 0 };
  private pendingMove: { x: number; y: number } | undefined;
  private rafHandle: number | undefined;
  private attached = false;
  /** The operator gave the keyboard back to VS Code; cleared when the viewport is focused. */
  private released = false;
  /** Both release-chord keys are down and nothing else was pressed since. */
  private releaseArmed = false;
  private owner: KeyboardOwner | undefined;

  constructor(
    private readonly viewport: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private readonly target: InputTarget,
  ) {}

  get isAttached(): boolean {
    return this.attached;
  }

  attach(): void {
    if (this.attached) {
      return;
    }
    this.attached = true;
    this.released = false;
    this.listen(window, 'keydown', (e) => this.onKey(e as KeyboardEvent, true), { capture: true });
    this.listen(window, 'keyup', (e) => this.onKey(e as KeyboardEvent, false), { capture: true });
    this.listen(this.viewport, 'focus', () => this.onViewportFocus());
    this.listen(this.viewport, 'blur', () => this.onFocusLost());
    this.listen(window, 'blur', () => this.onFocusLost());
    this.listen(window, 'focus', () => this.claimFocus());
    this.listen(document, 'visibilitychange', () => {
      if (document.visibilityState === 'hidden') {
        this.releaseAll();
      }
    });
    this.listen(this.canvas, 'pointermove', (e) => this.onPointerMove(e as PointerEvent));
    this.listen(this.canvas, 'pointerdown', (e) => this.onPointerButton(e as PointerEvent));
    this.listen(this.canvas, 'pointerup', (e) => this.onPointerButton(e as PointerEvent));
    this.listen(this.canvas, 'wheel', (e) => this.onWheel(e as WheelEvent), { passive: false });
    this.listen(this.canvas, 'contextmenu', (e) => e.preventDefault());
    this.claimFocus();
    this.showOwner();
  }

  /** Removes every listener. With release=true, held keys/buttons are let go first. */
  detach(release: boolean): void {
    if (!this.attached) {
      return;
    }
    if (release) {
      this.releaseAll();
    }
    this.attached = false;
    while (this.removers.length > 0) {
      this.removers.pop()?.();
    }
    if (this.rafHandle !== undefined) {
      cancelAnimationFrame(this.rafHandle);
      this.rafHandle = undefined;
    }
    this.pendingMove = undefined;
    this.heldKeys.clear();
    this.releaseArmed = false;
    this.buttons = 0;
    this.showOwner();
  }

  /** Lets go of every key (latest first) and button the guest believes is down. */
  releaseAll(): void {
    if (!this.attached) {
      return;
    }
    this.flushMove();
    for (const scancode of [...this.heldKeys].reverse()) {
      this.target.send({ type: 'key', scancode, down: false });
    }
    this.heldKeys.clear();
    this.releaseArmed = false;
    if (this.buttons !== 0) {
      this.buttons = 0;
      this.sendPointer(this.lastPoint, 0);
    }
  }

  /**
   * A chord the host OS would keep for itself (Ctrl+Alt+Del…), from a panel button: the
   * keys go down in order and up in reverse, as ordinary key events.
   */
  sendChord(scancodes: readonly number[]): void {
    if (!this.attached) {
      return;
    }
    this.releaseAll();
    for (const scancode of scancodes) {
      this.target.send({ type: 'key', scancode, down: true });
    }
    for (const scancode of [...scancodes].reverse()) {
      this.target.send({ type: 'key', scancode, down: false });
    }
  }

  /** Where keys go now: the guest while the viewport has the focus in SETUP. */
  get keyboardOwner(): KeyboardOwner {
    return this.attached && document.activeElement === this.viewport && document.hasFocus() ? 'guest' : 'vscode';
  }

  /** Client (CSS pixel) position -> desktop pixel, honouring the fit scaling. */
  mapToDesktop(clientX: number, clientY: number): { x: number; y: number } {
    const rect = this.canvas.getBoundingClientRect();
    const { width, height } = this.target.desktopSize();
    const clamp = (v: number, max: number) => Math.min(Math.max(Math.floor(v), 0), Math.max(max - 1, 0));
    const sx = rect.width > 0 ? width / rect.width : 1;
    const sy = rect.height > 0 ? height / rect.height : 1;
    return { x: clamp((clientX - rect.left) * sx, width), y: clamp((clientY - rect.top) * sy, height) };
  }

  private listen(target: EventTarget, type: string, handler: (e: Event) => void, options?: AddEventListenerOptions): void {
    target.addEventListener(type, handler, options);
    this.removers.push(() => target.removeEventListener(type, handler, options));
  }

  /** Focus that lands on the page itself (not a control) goes on to the viewport. */
  private claimFocus(): void {
    const active = document.activeElement;
    if (this.attached && !this.released && (active === null || active === document.body)) {
      this.viewport.focus({ preventScroll: true });
    }
    this.showOwner();
  }

  private onViewportFocus(): void {
    this.released = false;
    this.showOwner();
  }

  private onFocusLost(): void {
    this.releaseAll();
    this.showOwner();
  }

  private showOwner(): void {
    const owner = this.keyboardOwner;
    if (owner !== this.owner) {
      this.owner = owner;
      this.target.keyboardOwner(owner);
    }
  }

  private onKey(e: KeyboardEvent, down: boolean): void {
    const active = document.activeElement;
    if (active !== this.viewport) {
      if (this.released || (active !== null && active !== document.body)) {
        return; // a control or VS Code has the keyboard: the event travels as usual
      }
      this.viewport.focus({ preventScroll: true }); // the page had it: the guest takes it
    }
    // The guest's, and nothing else's: no workbench keybinding, no default action.
    e.preventDefault();
    e.stopImmediatePropagation();
    const scancode = scancodeForCode(e.code);
    if (scancode === undefined || e.isComposing) {
      this.releaseArmed &&= !down;
      if (down) {
        this.target.keyNotSent(e.code); // the Power key, say: it did not reach the guest
      }
      return;
    }
    if (down && isPanicChord(e)) {
      this.target.panic();
      return;
    }
    this.flushMove();
    this.reconcileModifiers(e, scancode);
    if (down) {
      this.heldKeys.add(scancode);
      this.releaseArmed = this.heldKeys.size === RELEASE_CHORD.length && RELEASE_CHORD.every((s) => this.heldKeys.has(s));
      this.target.send({ type: 'key', scancode, down: true });
      return;
    }
    if (this.releaseArmed && RELEASE_CHORD.includes(scancode)) {
      this.releaseKeyboard();
      return;
    }
    this.releaseArmed = false;
    if (this.heldKeys.delete(scancode)) {
      this.target.send({ type: 'key', scancode, down: false });
    } // else: a release whose press we never sent
  }

  /** Lets go of held modifiers the event's own flags say are up (the browser ate their key-up). */
  private reconcileModifiers(e: ModifierFlags, own = 0): void {
    for (const m of MODIFIERS) {
      if (m.scancode !== own && this.heldKeys.has(m.scancode) && !m.held(e)) {
        this.heldKeys.delete(m.scancode);
        this.releaseArmed = false;
        this.target.send({ type: 'key', scancode: m.scancode, down: false });
      }
    }
  }

  /** The release chord: every held key up in the guest, the focus off the viewport. */
  private releaseKeyboard(): void {
    this.releaseAll();
    this.released = true;
    this.viewport.blur();
    this.showOwner();
  }

  private onPointerMove(e: PointerEvent): void {
    this.pendingMove = this.mapToDesktop(e.clientX, e.clientY);
    if (this.rafHandle === undefined) {
      this.rafHandle = requestAnimationFrame(() => {
        this.rafHandle = undefined;
        this.flushMove();
      });
    }
  }

  private flushMove(): void {
    const move = this.pendingMove;
    this.pendingMove = undefined;
    if (move && (move.x !== this.lastPoint.x || move.y !== this.lastPoint.y)) {
      this.sendPointer(move, 0);
    }
  }

  private onPointerButton(e: PointerEvent): void {
    e.preventDefault();
    if (e.type === 'pointerdown') {
      this.viewport.focus();
      this.canvas.setPointerCapture(e.pointerId);
    }
    this.pendingMove = undefined;
    this.reconcileModifiers(e); // a click is the next event after a swallowed key-up, too
    this.buttons = e.buttons & 7; // DOM bits match the protocol: 1 left, 2 right, 4 middle
    this.sendPointer(this.mapToDesktop(e.clientX, e.clientY), 0);
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    if (e.deltaY === 0) {
      return;
    }
    this.flushMove();
    this.reconcileModifiers(e);
    this.sendPointer(this.mapToDesktop(e.clientX, e.clientY), e.deltaY < 0 ? WHEEL_NOTCH : -WHEEL_NOTCH);
  }

  private sendPointer(point: { x: number; y: number }, wheel: number): void {
    this.lastPoint = point;
    this.target.send({ type: 'pointer', x: point.x, y: point.y, buttons: this.buttons, wheel });
  }
}
