// Keyboard and pointer capture on the viewport element only, while the phase is SETUP.
// detach() removes every listener it added: in the read-only phases no input listener
// exists at all, so nothing can be sent by accident.

import type { KeyMessage, PointerMessage } from '../shared/protocol';
import { scancodeForCode } from './scancodes';

export type InputMessage = Omit<KeyMessage, 'seq'> | Omit<PointerMessage, 'seq'>;

export interface InputTarget {
  /** Sends one input message; the caller stamps the sequence number. */
  send(message: InputMessage): void;
  /** Desktop size in pixels (the canvas's intrinsic size). */
  desktopSize(): { width: number; height: number };
}

const WHEEL_NOTCH = 120;

export class InputCapture {
  private readonly removers: Array<() => void> = [];
  private readonly heldKeys = new Set<number>();
  private buttons = 0;
  private lastPoint = { x: 0, y: 0 };
  private pendingMove: { x: number; y: number } | undefined;
  private rafHandle: number | undefined;
  private attached = false;

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
    this.listen(this.viewport, 'keydown', (e) => this.onKey(e as KeyboardEvent, true));
    this.listen(this.viewport, 'keyup', (e) => this.onKey(e as KeyboardEvent, false));
    this.listen(this.viewport, 'blur', () => this.releaseAll());
    this.listen(window, 'blur', () => this.releaseAll());
    this.listen(this.canvas, 'pointermove', (e) => this.onPointerMove(e as PointerEvent));
    this.listen(this.canvas, 'pointerdown', (e) => this.onPointerButton(e as PointerEvent));
    this.listen(this.canvas, 'pointerup', (e) => this.onPointerButton(e as PointerEvent));
    this.listen(this.canvas, 'wheel', (e) => this.onWheel(e as WheelEvent), { passive: false });
    this.listen(this.canvas, 'contextmenu', (e) => e.preventDefault());
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
    this.buttons = 0;
  }

  /** Lets go of every key and button the guest believes is down. */
  releaseAll(): void {
    if (!this.attached) {
      return;
    }
    this.flushMove();
    for (const scancode of this.heldKeys) {
      this.target.send({ type: 'key', scancode, down: false });
    }
    this.heldKeys.clear();
    if (this.buttons !== 0) {
      this.buttons = 0;
      this.sendPointer(this.lastPoint, 0);
    }
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

  private onKey(e: KeyboardEvent, down: boolean): void {
    const scancode = scancodeForCode(e.code);
    if (scancode === undefined || e.isComposing) {
      return;
    }
    // Keep the key from the webview document (Tab focus moves, scrolling); VS Code still
    // receives its own shortcuts through the webview host.
    e.preventDefault();
    if (down) {
      this.heldKeys.add(scancode);
    } else if (!this.heldKeys.delete(scancode)) {
      return; // a release whose press we never sent
    }
    this.flushMove();
    this.target.send({ type: 'key', scancode, down });
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
    this.buttons = e.buttons & 7; // DOM bits match the protocol: 1 left, 2 right, 4 middle
    this.sendPointer(this.mapToDesktop(e.clientX, e.clientY), 0);
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    if (e.deltaY === 0) {
      return;
    }
    this.flushMove();
    this.sendPointer(this.mapToDesktop(e.clientX, e.clientY), e.deltaY < 0 ? WHEEL_NOTCH : -WHEEL_NOTCH);
  }

  private sendPointer(point: { x: number; y: number }, wheel: number): void {
    this.lastPoint = point;
    this.target.send({ type: 'pointer', x: point.x, y: point.y, buttons: this.buttons, wheel });
  }
}
