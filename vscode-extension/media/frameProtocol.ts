// Messages between the page (FramePresenter) and the frame worker (frameWorker.ts).
// The page transfers every packet's ArrayBuffer (no copy); the worker decodes it and hands
// the decoded images back (transferred, no copy) for the page to draw.

import type { Decoded } from './FrameDecoder';

export type ToFrameWorker = { type: 'decode'; buffer: ArrayBuffer } | { type: 'stop' };

export type FromFrameWorker =
  | { type: 'ready' }
  | {
      type: 'decoded';
      frame: number;
      width: number;
      height: number;
      rects: Array<{ x: number; y: number; w: number; h: number }>;
      images: Decoded[];
    }
  | { type: 'dropped'; frame: number | undefined; message: string };
