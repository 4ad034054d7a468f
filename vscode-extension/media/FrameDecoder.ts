// Binary frame updates: parsing (pure, unit-tested in node) and presenting (browser).
// A frame's rectangles are all decoded and drawn into a back buffer first; only then is
// the back buffer copied to the visible canvas and the frame acknowledged, so the
// operator never sees a partial frame.

import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_RECT_HEADER_BYTES, RectEncoding } from '../shared/protocol';

export interface FrameRect {
  x: number;
  y: number;
  w: number;
  h: number;
  encoding: RectEncoding;
  data: Uint8Array;
}

export interface ParsedFrame {
  frame: number;
  width: number;
  height: number;
  rects: FrameRect[];
}

export class FrameFormatError extends Error {}

export function parseFrame(buffer: ArrayBuffer): ParsedFrame {
  const view = new DataView(buffer);
  if (buffer.byteLength < FRAME_HEADER_BYTES) {
    throw new FrameFormatError('frame shorter than its header');
  }
  if (view.getUint32(0, true) !== FRAME_MAGIC) {
    throw new FrameFormatError('bad frame magic');
  }
  const frame = view.getUint32(4, true);
  const width = view.getUint16(8, true);
  const height = view.getUint16(10, true);
  const count = view.getUint16(12, true);
  const rects: FrameRect[] = [];
  let offset = FRAME_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (offset + FRAME_RECT_HEADER_BYTES > buffer.byteLength) {
      throw new FrameFormatError('truncated rectangle header');
    }
    const x = view.getUint16(offset, true);
    const y = view.getUint16(offset + 2, true);
    const w = view.getUint16(offset + 4, true);
    const h = view.getUint16(offset + 6, true);
    const encoding = view.getUint8(offset + 8);
    const length = view.getUint32(offset + 9, true);
    offset += FRAME_RECT_HEADER_BYTES;
    if (offset + length > buffer.byteLength) {
      throw new FrameFormatError('truncated rectangle data');
    }
    if (encoding !== RectEncoding.Png && encoding !== RectEncoding.Jpeg) {
      throw new FrameFormatError(`unknown rectangle encoding ${encoding}`);
    }
    if (w === 0 || h === 0 || x + w > width || y + h > height) {
      throw new FrameFormatError('rectangle outside the desktop');
    }
    rects.push({ x, y, w, h, encoding, data: new Uint8Array(buffer, offset, length) });
    offset += length;
  }
  if (offset !== buffer.byteLength) {
    throw new FrameFormatError('trailing bytes after the last rectangle');
  }
  return { frame, width, height, rects };
}

/** The frame id of a packet whose header is readable (magic and id present), else undefined. */
export function peekFrameId(buffer: ArrayBuffer): number | undefined {
  if (buffer.byteLength < 8) {
    return undefined;
  }
  const view = new DataView(buffer);
  return view.getUint32(0, true) === FRAME_MAGIC ? view.getUint32(4, true) : undefined;
}

const MIME: Record<RectEncoding, string> = { [RectEncoding.Png]: 'image/png', [RectEncoding.Jpeg]: 'image/jpeg' };

export interface FramePresenterEvents {
  /** The frame was presented whole: acknowledge it. */
  ack(frame: number): void;
  /**
   * The packet could not be parsed, decoded or drawn (`frame` undefined when its header is
   * unreadable): nothing of it was drawn, and the picture may now be stale.
   */
  dropped(frame: number | undefined, message: string): void;
  resized(width: number, height: number): void;
}

/** Browser only. Frames are handled strictly one after another. */
export class FramePresenter {
  private back: HTMLCanvasElement;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly screen: HTMLCanvasElement,
    private readonly events: FramePresenterEvents,
  ) {
    this.back = document.createElement('canvas');
  }

  enqueue(buffer: ArrayBuffer): void {
    this.chain = this.chain.then(() => this.present(buffer)).catch((err: unknown) => this.events.dropped(peekFrameId(buffer), String(err)));
  }

  stop(): void {
    this.stopped = true;
    const ctx = this.back.getContext('2d');
    ctx?.clearRect(0, 0, this.back.width, this.back.height);
    this.back.width = this.back.height = 1;
  }

  private async present(buffer: ArrayBuffer): Promise<void> {
    if (this.stopped) {
      return;
    }
    let parsed: ParsedFrame;
    try {
      parsed = parseFrame(buffer);
    } catch (err) {
      this.events.dropped(peekFrameId(buffer), err instanceof Error ? err.message : String(err));
      return;
    }
    // Decode every rectangle off the main path first; draw nothing until all are ready.
    const bitmaps = await Promise.all(
      parsed.rects.map((r) => createImageBitmap(new Blob([r.data as Uint8Array<ArrayBuffer>], { type: MIME[r.encoding] }))),
    ).catch((err: unknown) => {
      this.events.dropped(parsed.frame, `cannot decode (${String(err)})`);
      return undefined;
    });
    if (this.stopped) {
      bitmaps?.forEach((b) => b.close());
      return;
    }
    if (!bitmaps) {
      return;
    }
    if (this.back.width !== parsed.width || this.back.height !== parsed.height) {
      this.resize(parsed.width, parsed.height);
    }
    const ctx = this.back.getContext('2d');
    if (!ctx) {
      throw new Error('no 2d context');
    }
    parsed.rects.forEach((r, i) => {
      const bitmap = bitmaps[i];
      if (bitmap) {
        ctx.drawImage(bitmap, r.x, r.y, r.w, r.h);
        bitmap.close();
      }
    });
    const screenCtx = this.screen.getContext('2d');
    screenCtx?.drawImage(this.back, 0, 0);
    this.events.ack(parsed.frame);
  }

  private resize(width: number, height: number): void {
    const old = this.back;
    const next = document.createElement('canvas');
    next.width = width;
    next.height = height;
    next.getContext('2d')?.drawImage(old, 0, 0);
    this.back = next;
    this.screen.width = width;
    this.screen.height = height;
    this.events.resized(width, height);
  }
}
