// The frame worker: decodes and draws every GCF1 packet onto the panel's canvas, which the
// page transferred here (OffscreenCanvas), so neither decoding nor drawing runs on the
// page's main thread, where input is handled. Frames are rendered strictly in order; each
// is drawn in one synchronous block, and the worker's canvas commits only between tasks,
// so the page only ever shows whole frames.

import { FrameRenderer, peekFrameId } from './FrameDecoder';
import type { FromFrameWorker, ToFrameWorker } from './frameProtocol';

interface WorkerScope {
  onmessage: ((e: MessageEvent<ToFrameWorker>) => void) | null;
  postMessage(message: FromFrameWorker): void;
  close(): void;
}
const scope = self as unknown as WorkerScope;

let renderer: FrameRenderer | undefined;
let chain: Promise<void> = Promise.resolve();

scope.onmessage = (e) => {
  const message = e.data;
  if (message.type === 'canvas') {
    renderer = new FrameRenderer(message.canvas);
  } else if (message.type === 'frame') {
    const r = renderer;
    const buffer = message.buffer;
    chain = chain.then(async () => {
      const result = r ? await r.render(buffer) : { kind: 'dropped' as const, frame: undefined, message: 'no canvas' };
      if (result?.kind === 'presented') {
        scope.postMessage({ type: 'presented', frame: result.frame, width: result.width, height: result.height });
      } else if (result) {
        scope.postMessage({ type: 'dropped', frame: result.frame, message: result.message });
      }
    }).catch((err: unknown) => scope.postMessage({ type: 'dropped', frame: peekFrameId(buffer), message: String(err) }));
  } else if (message.type === 'stop') {
    renderer?.stop();
    void chain.then(() => scope.close());
  }
};
scope.postMessage({ type: 'ready' });
