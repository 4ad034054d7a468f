// Binary frame updates: parsing (pure, unit-tested in node), decoding (browser: in the frame
// worker, or in the page where no worker can be had) and drawing.
//
// Atomic without a back buffer: every rectangle of a frame is decoded first; only then are
// all of them drawn onto the visible canvas in ONE synchronous block. The browser renders
// between tasks, never inside one, so the compositor only ever sees whole frames — and a
// 3-glyph typing frame costs 3 small draws, not a copy of the whole desktop. A frame's COPY
// records (a scroll sent as a move; the hello asked for them with 'copy_rect') are drawn in
// the same block, first, from the canvas onto itself.

import { FRAME_COPY_BYTES, FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_RECT_HEADER_BYTES, RectEncoding } from '../shared/protocol';

export interface FrameRect {
  x: number;
  y: number;
  w: number;
  h: number;
  encoding: RectEncoding;
  data: Uint8Array;
}

/** A COPY record: the canvas's (sx, sy, w, h) moves to (x, y), as through a temporary. */
export interface FrameCopy {
  sx: number;
  sy: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface ParsedFrame {
  frame: number;
  width: number;
  height: number;
  /** Applied first, in order (they precede every image record on the wire). */
  copies: FrameCopy[];
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
  const copies: FrameCopy[] = [];
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
    if (encoding !== RectEncoding.Png && encoding !== RectEncoding.Jpeg && encoding !== RectEncoding.Copy) {
      throw new FrameFormatError(`unknown rectangle encoding ${encoding}`);
    }
    if (w === 0 || h === 0 || x + w > width || y + h > height) {
      throw new FrameFormatError('rectangle outside the desktop');
    }
    if (encoding === RectEncoding.Copy) {
      if (rects.length > 0) {
        throw new FrameFormatError('a copy after an image');
      }
      if (length !== FRAME_COPY_BYTES) {
        throw new FrameFormatError(`a copy of ${length} bytes`);
      }
      const sx = view.getUint16(offset, true);
      const sy = view.getUint16(offset + 2, true);
      if (sx + w > width || sy + h > height) {
        throw new FrameFormatError('copy source outside the desktop');
      }
      copies.push({ sx, sy, x, y, w, h });
      offset += length;
      continue;
    }
    rects.push({ x, y, w, h, encoding, data: new Uint8Array(buffer, offset, length) });
    offset += length;
  }
  if (offset !== buffer.byteLength) {
    throw new FrameFormatError('trailing bytes after the last rectangle');
  }
  return { frame, width, height, copies, rects };
}

/** The frame id of a packet whose header is readable (magic and id present), else undefined. */
export function peekFrameId(buffer: ArrayBuffer): number | undefined {
  if (buffer.byteLength < 8) {
    return undefined;
  }
  const view = new DataView(buffer);
  return view.getUint32(0, true) === FRAME_MAGIC ? view.getUint32(4, true) : undefined;
}

const MIME: Record<RectEncoding, string> = { [RectEncoding.Png]: 'image/png', [RectEncoding.Jpeg]: 'image/jpeg', [RectEncoding.Copy]: '' };

/** A decoded rectangle: an ImageBitmap or a WebCodecs VideoFrame; closed once drawn. */
export type Decoded = CanvasImageSource & { close(): void };

export type RenderResult =
  | { kind: 'presented'; frame: number; width: number; height: number }
  | { kind: 'dropped'; frame: number | undefined; message: string };

export type DecodePath = 'image-decoder' | 'blob';

/**
 * Rectangles up to this many pixels are decoded by WebCodecs' ImageDecoder straight from the
 * packet's bytes: no Blob, so no round trip of the bytes through the browser process (typing:
 * 3 glyph rects a frame). Larger ones go through createImageBitmap on a Blob: with
 * ImageDecoder for every rect, 1080p motion took the renderer to ≈ 700 MiB RSS although
 * every decoder and frame is closed at once (≈ 200 MiB this way; docs/performance.md).
 */
export const IMAGE_DECODER_MAX_PIXELS = 256 * 256;

/** How this browser decodes a rectangle of `pixels` pixels. */
export function pickDecodePath(pixels: number): DecodePath {
  return typeof ImageDecoder === 'function' && pixels <= IMAGE_DECODER_MAX_PIXELS ? 'image-decoder' : 'blob';
}

async function decodeRect(rect: FrameRect): Promise<Decoded> {
  if (pickDecodePath(rect.w * rect.h) === 'image-decoder') {
    const decoder = new ImageDecoder({ data: rect.data, type: MIME[rect.encoding], preferAnimation: false });
    try {
      const { image } = await decoder.decode({ frameIndex: 0 });
      return image;
    } finally {
      decoder.close();
    }
  }
  return createImageBitmap(new Blob([rect.data as Uint8Array<ArrayBuffer>], { type: MIME[rect.encoding] }));
}

/** A frame whose every rectangle is decoded: ready to be drawn in one block. */
export interface DecodedFrame {
  frame: number;
  width: number;
  height: number;
  copies: FrameCopy[];
  rects: Array<{ x: number; y: number; w: number; h: number }>;
  images: Decoded[];
}

export type DecodeResult = { kind: 'decoded'; decoded: DecodedFrame } | { kind: 'dropped'; frame: number | undefined; message: string };

/** Parses a packet and decodes all its rectangles; on any failure nothing is kept. */
export async function decodeFrame(buffer: ArrayBuffer): Promise<DecodeResult> {
  let parsed: ParsedFrame;
  try {
    parsed = parseFrame(buffer);
  } catch (err) {
    return { kind: 'dropped', frame: peekFrameId(buffer), message: err instanceof Error ? err.message : String(err) };
  }
  const settled = await Promise.allSettled(parsed.rects.map((r) => decodeRect(r)));
  const images = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    images.forEach((image) => image.close());
    return { kind: 'dropped', frame: parsed.frame, message: `cannot decode (${String(failed.reason)})` };
  }
  const rects = parsed.rects.map(({ x, y, w, h }) => ({ x, y, w, h }));
  return { kind: 'decoded', decoded: { frame: parsed.frame, width: parsed.width, height: parsed.height, copies: parsed.copies, rects, images } };
}

/**
 * A canvas the renderer can size and draw on: the page's own, or an OffscreenCanvas. It is
 * also the source of its COPY records (drawImage from a canvas onto itself copies as through
 * a temporary when the areas overlap, as the HTML spec requires).
 */
export interface RenderTarget {
  width: number;
  height: number;
  getContext(id: '2d'): CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D | null;
}

/**
 * Draws a decoded frame in one synchronous block (nothing is rendered between the first draw
 * and the last) and closes its images.
 */
export function drawFrame(target: RenderTarget, decoded: DecodedFrame): RenderResult {
  try {
    if (target.width !== decoded.width || target.height !== decoded.height) {
      // Resizing clears the canvas; the console sends a whole frame after a size change.
      target.width = decoded.width;
      target.height = decoded.height;
    }
    const ctx = target.getContext('2d');
    if (!ctx) {
      throw new Error('no 2d context');
    }
    const source = target as unknown as CanvasImageSource;
    for (const c of decoded.copies) {
      // Every pixel of the canvas is opaque (PNG/JPEG of an RGB desktop): source-over copies.
      ctx.drawImage(source, c.sx, c.sy, c.w, c.h, c.x, c.y, c.w, c.h);
    }
    decoded.rects.forEach((r, i) => {
      const image = decoded.images[i];
      if (image) {
        ctx.drawImage(image, r.x, r.y, r.w, r.h);
      }
    });
    return { kind: 'presented', frame: decoded.frame, width: decoded.width, height: decoded.height };
  } catch (err) {
    return { kind: 'dropped', frame: decoded.frame, message: err instanceof Error ? err.message : String(err) };
  } finally {
    decoded.images.forEach((image) => image.close());
  }
}

/** Renders GCF1 packets onto one canvas (decode, then draw), strictly one after another. */
export class FrameRenderer {
  private stopped = false;

  constructor(private readonly target: RenderTarget) {}

  stop(): void {
    this.stopped = true;
  }

  async render(buffer: ArrayBuffer): Promise<RenderResult | undefined> {
    if (this.stopped) {
      return undefined;
    }
    const result = await decodeFrame(buffer);
    if (result.kind === 'dropped') {
      return result;
    }
    if (this.stopped) {
      result.decoded.images.forEach((image) => image.close());
      return undefined;
    }
    return drawFrame(this.target, result.decoded);
  }
}
