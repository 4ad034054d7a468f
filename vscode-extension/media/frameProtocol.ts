// Messages between the page (FramePresenter) and the frame worker (frameWorker.ts).
// The page transfers every packet's ArrayBuffer (no copy). Either the worker owns the canvas
// and draws (`canvas`, then `frame`), or it only decodes (`decode`) and hands the decoded
// images back (transferred, no copy) for the page to draw.

import type { DecodedFrame } from './FrameDecoder';

export type ToFrameWorker =
  | { type: 'canvas'; canvas: OffscreenCanvas }
  | { type: 'frame'; buffer: ArrayBuffer }
  | { type: 'decode'; buffer: ArrayBuffer }
  | { type: 'stop' };

export type FromFrameWorker =
  | { type: 'ready' }
  | { type: 'presented'; frame: number; width: number; height: number }
  | ({ type: 'decoded' } & DecodedFrame)
  | { type: 'dropped'; frame: number | undefined; message: string };
