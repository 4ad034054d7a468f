// Presents the console's frame updates on the panel canvas. Where the browser allows it
// (VS Code's webviews and Chromium do), a worker decodes every rectangle (frameWorker.ts)
// and hands the decoded images back (transferred, not copied); the page then draws all of a
// frame's rectangles in one synchronous block. The page's main thread only forwards packets,
// draws and handles input. The worker could also draw, on the canvas transferred to it as an
// OffscreenCanvas (role 'draws'), but its frames then reach the page's compositor a
// compositor round trip later: typing update latency 29.7 ms instead of 3.2 (docs/performance.md).
//
// The worker comes from a blob: URL holding the worker bundle that build.mjs embeds in
// main.js: a webview's resources are served from another origin than its document
// (vscode-webview:// vs https://*.vscode-cdn.net), and a worker script must be same-origin.
// CSP: `worker-src blob:` (panelHtml.ts). Where no worker can be had, the page decodes too.
//
// Thread: the page's main thread.

import { drawFrame, FrameRenderer, peekFrameId, RenderResult } from './FrameDecoder';
import type { FromFrameWorker, ToFrameWorker } from './frameProtocol';

// The frame worker's bundled source, injected by scripts/build.mjs (absent in node tests).
declare const __GC_FRAME_WORKER__: string | undefined;

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

/**
 * Where frames are decoded and drawn: `worker` decodes and draws in the frame worker (the
 * canvas is transferred), `split` decodes in the worker and draws in the page, `page` does
 * both in the page (no worker could be started).
 */
export type PresenterMode = 'starting' | 'worker' | 'split' | 'page';

/** What the presenter asks for when a worker starts (docs/performance.md: measured both). */
export type WorkerRole = 'draws' | 'decodes';

export class FramePresenter {
  private modeNow: PresenterMode = 'page';
  private worker: Worker | undefined;
  private renderer: FrameRenderer | undefined;
  private chain: Promise<void> = Promise.resolve();
  private pending: ArrayBuffer[] = []; // while the worker starts (at most the unacked window)
  private size = { width: 0, height: 0 };
  private stopped = false;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly events: FramePresenterEvents,
    private readonly role: WorkerRole = 'decodes',
  ) {
    this.worker = this.startWorker();
    if (this.worker) {
      this.setMode('starting');
    } else {
      this.setMode('page');
      this.renderer = new FrameRenderer(canvas);
    }
  }

  get mode(): PresenterMode {
    return this.modeNow;
  }

  private setMode(mode: PresenterMode): void {
    this.modeNow = mode;
    this.canvas.dataset['presenter'] = mode; // where frames are rendered, for tests and probes
  }

  enqueue(buffer: ArrayBuffer): void {
    if (this.stopped) {
      return;
    }
    if (this.modeNow === 'starting') {
      this.pending.push(buffer);
    } else if (this.modeNow === 'worker') {
      this.post({ type: 'frame', buffer }, [buffer]);
    } else if (this.modeNow === 'split') {
      this.post({ type: 'decode', buffer }, [buffer]);
    } else {
      const renderer = this.renderer;
      this.chain = this.chain
        .then(async () => this.onResult(await renderer?.render(buffer)))
        .catch((err: unknown) => this.events.dropped(peekFrameId(buffer), String(err)));
    }
  }

  /** No frame is drawn after this; the picture shown stays as it is. */
  stop(): void {
    this.stopped = true;
    this.pending = [];
    this.renderer?.stop();
    if (this.worker) {
      this.post({ type: 'stop' });
      this.worker = undefined;
    }
  }

  private startWorker(): Worker | undefined {
    if (typeof __GC_FRAME_WORKER__ !== 'string' || typeof Worker !== 'function' || (this.role === 'draws' && typeof this.canvas.transferControlToOffscreen !== 'function')) {
      return undefined;
    }
    let worker: Worker;
    const url = URL.createObjectURL(new Blob([__GC_FRAME_WORKER__], { type: 'text/javascript' }));
    try {
      worker = new Worker(url);
    } catch {
      return undefined; // e.g. a CSP without worker-src blob:
    } finally {
      URL.revokeObjectURL(url);
    }
    // The canvas is handed over only once the worker runs: until then the page can still
    // render itself if the worker never starts.
    worker.addEventListener('error', (e) => {
      e.preventDefault();
      this.onWorkerFailed();
    });
    worker.addEventListener('message', (e: MessageEvent<FromFrameWorker>) => this.onWorkerMessage(e.data));
    return worker;
  }

  private onWorkerMessage(message: FromFrameWorker): void {
    if (message.type === 'ready') {
      if (this.modeNow !== 'starting' || !this.worker) {
        return;
      }
      if (this.role === 'draws') {
        const offscreen = this.canvas.transferControlToOffscreen();
        this.post({ type: 'canvas', canvas: offscreen }, [offscreen]);
        this.setMode('worker');
      } else {
        this.setMode('split');
      }
      const queued = this.pending;
      this.pending = [];
      queued.forEach((b) => this.enqueue(b));
    } else if (message.type === 'decoded') {
      if (this.stopped) {
        message.images.forEach((image) => image.close());
        return;
      }
      // Drawn at once, in this task: the page only ever shows whole frames.
      this.onResult(drawFrame(this.canvas, message));
    } else if (message.type === 'presented') {
      this.onResult({ kind: 'presented', frame: message.frame, width: message.width, height: message.height });
    } else {
      this.onResult({ kind: 'dropped', frame: message.frame, message: message.message });
    }
  }

  private onWorkerFailed(): void {
    if (this.stopped || this.modeNow === 'page') {
      return;
    }
    const started = this.modeNow !== 'starting';
    if (this.modeNow === 'worker') {
      // The canvas belongs to the dead worker: nothing more can be shown.
      this.events.dropped(undefined, 'the frame worker failed');
      return;
    }
    // The canvas is still ours: render in the page from now on.
    this.worker?.terminate();
    this.worker = undefined;
    this.setMode('page');
    this.renderer = new FrameRenderer(this.canvas);
    const queued = this.pending;
    this.pending = [];
    queued.forEach((b) => this.enqueue(b));
    if (started) {
      // Frames it held are lost: ask for the whole desktop (their acks are forgotten too).
      this.events.dropped(undefined, 'the frame worker failed');
    }
  }

  private onResult(result: RenderResult | undefined): void {
    if (!result || this.stopped) {
      return;
    }
    if (result.kind === 'dropped') {
      this.events.dropped(result.frame, result.message);
      return;
    }
    if (result.width !== this.size.width || result.height !== this.size.height) {
      this.size = { width: result.width, height: result.height };
      this.events.resized(result.width, result.height);
    }
    this.events.ack(result.frame);
  }

  private post(message: ToFrameWorker, transfer: Transferable[] = []): void {
    this.worker?.postMessage(message, transfer);
  }
}
