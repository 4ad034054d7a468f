// The frame worker: decodes every GCF1 packet off the page's main thread, where input is
// handled, and hands each frame's decoded images back to the page (`decode`), which draws
// them in one synchronous block. Frames are handled strictly in order.

import { decodeFrame, peekFrameId } from './FrameDecoder';
import type { FromFrameWorker, ToFrameWorker } from './frameProtocol';

interface WorkerScope {
  onmessage: ((e: MessageEvent<ToFrameWorker>) => void) | null;
  postMessage(message: FromFrameWorker, transfer?: Transferable[]): void;
  close(): void;
}
const scope = self as unknown as WorkerScope;

let stopped = false;
let chain: Promise<void> = Promise.resolve();

async function decode(buffer: ArrayBuffer): Promise<void> {
  const result = await decodeFrame(buffer);
  if (result.kind === 'dropped') {
    scope.postMessage({ type: 'dropped', frame: result.frame, message: result.message });
  } else if (stopped) {
    result.decoded.images.forEach((image) => image.close());
  } else {
    const d = result.decoded;
    scope.postMessage({ type: 'decoded', frame: d.frame, width: d.width, height: d.height, rects: d.rects, images: d.images }, d.images as unknown as Transferable[]);
  }
}

scope.onmessage = (e) => {
  const message = e.data;
  if (message.type === 'decode') {
    const { buffer } = message;
    chain = chain
      .then(() => decode(buffer))
      .catch((err: unknown) => scope.postMessage({ type: 'dropped', frame: peekFrameId(buffer), message: String(err) }));
  } else if (message.type === 'stop') {
    stopped = true;
    void chain.then(() => scope.close());
  }
};
scope.postMessage({ type: 'ready' });
