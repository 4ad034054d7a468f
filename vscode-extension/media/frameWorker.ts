// The frame worker: decodes every GCF1 packet off the page's main thread, where input is
// handled. Either it also draws onto the panel canvas, which the page transferred here
// (OffscreenCanvas: `canvas` + `frame`), or it hands each frame's decoded images back to the
// page (`decode`), which draws them. Frames are handled strictly in order, each drawn in one
// synchronous block, so only whole frames are ever shown.

import { decodeFrame, FrameRenderer, peekFrameId } from './FrameDecoder';
import type { FromFrameWorker, ToFrameWorker } from './frameProtocol';

interface WorkerScope {
  onmessage: ((e: MessageEvent<ToFrameWorker>) => void) | null;
  postMessage(message: FromFrameWorker, transfer?: Transferable[]): void;
  close(): void;
}
const scope = self as unknown as WorkerScope;

let renderer: FrameRenderer | undefined;
let stopped = false;
let chain: Promise<void> = Promise.resolve();

function dropped(buffer: ArrayBuffer, err: unknown): void {
  scope.postMessage({ type: 'dropped', frame: peekFrameId(buffer), message: String(err) });
}

async function draw(buffer: ArrayBuffer): Promise<void> {
  const result = renderer ? await renderer.render(buffer) : { kind: 'dropped' as const, frame: peekFrameId(buffer), message: 'no canvas' };
  if (result?.kind === 'presented') {
    scope.postMessage({ type: 'presented', frame: result.frame, width: result.width, height: result.height });
  } else if (result) {
    scope.postMessage({ type: 'dropped', frame: result.frame, message: result.message });
  }
}

async function decode(buffer: ArrayBuffer): Promise<void> {
  const result = await decodeFrame(buffer);
  if (result.kind === 'dropped') {
    scope.postMessage({ type: 'dropped', frame: result.frame, message: result.message });
  } else if (stopped) {
    result.decoded.images.forEach((image) => image.close());
  } else {
    const d = result.decoded;
    scope.postMessage({ type: 'decoded', frame: d.frame, width: d.width, height: d.height, copies: d.copies, rects: d.rects, images: d.images }, d.images as unknown as Transferable[]);
  }
}

scope.onmessage = (e) => {
  const message = e.data;
  if (message.type === 'canvas') {
    renderer = new FrameRenderer(message.canvas);
  } else if (message.type === 'frame' || message.type === 'decode') {
    const { buffer } = message;
    const job = message.type === 'frame' ? draw : decode;
    chain = chain.then(() => job(buffer)).catch((err: unknown) => dropped(buffer, err));
  } else if (message.type === 'stop') {
    stopped = true;
    renderer?.stop();
    void chain.then(() => scope.close());
  }
};
scope.postMessage({ type: 'ready' });
