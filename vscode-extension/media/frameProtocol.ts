// Messages between the page (FramePresenter) and the frame worker (frameWorker.ts).
// The page transfers every packet's ArrayBuffer (no copy); the worker owns the canvas.

export type ToFrameWorker =
  | { type: 'canvas'; canvas: OffscreenCanvas }
  | { type: 'frame'; buffer: ArrayBuffer }
  | { type: 'stop' };

export type FromFrameWorker =
  | { type: 'ready' }
  | { type: 'presented'; frame: number; width: number; height: number }
  | { type: 'dropped'; frame: number | undefined; message: string };
