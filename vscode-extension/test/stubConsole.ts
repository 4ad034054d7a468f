// A stub console for the browser tests: the panel side of the protocol on a loopback
// WebSocket server (hello checked for the capability, a welcome, frames of four quadrants),
// recording everything the page sends.
import { randomBytes } from 'crypto';
import type { AddressInfo } from 'net';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { encodeFrame, solidPng } from './frames';
import { waitFor } from './helpers';

export const WIDTH = 320;
export const HEIGHT = 200;
export const CAPABILITY = randomBytes(32).toString('hex');
export const QUADRANTS: Array<{ x: number; y: number; rgb: [number, number, number] }> = [
  { x: 0, y: 0, rgb: [220, 20, 60] },
  { x: WIDTH / 2, y: 0, rgb: [20, 200, 80] },
  { x: 0, y: HEIGHT / 2, rgb: [30, 60, 230] },
  { x: WIDTH / 2, y: HEIGHT / 2, rgb: [250, 250, 250] },
];

type Recorded = { kind: 'text'; msg: Record<string, unknown> } | { kind: 'binary' };

export class StubConsole {
  readonly server: WebSocketServer;
  readonly messages: Recorded[] = [];
  readonly upgradeUrls: string[] = [];
  readonly origins: Array<string | undefined> = [];
  socket: ServerSocket | undefined;
  helloOk = false;
  nextFrame = 1;

  readonly width: number;
  readonly height: number;

  /** `welcome`: fields that replace the default welcome's (its width/height size the frames). */
  constructor(welcome: Record<string, unknown> = {}) {
    this.width = typeof welcome['width'] === 'number' ? welcome['width'] : WIDTH;
    this.height = typeof welcome['height'] === 'number' ? welcome['height'] : HEIGHT;
    this.server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    this.server.on('connection', (socket, req) => {
      this.upgradeUrls.push(req.url ?? '');
      this.origins.push(req.headers.origin);
      this.socket = socket;
      socket.on('message', (data, isBinary) => {
        if (isBinary) {
          this.messages.push({ kind: 'binary' });
          socket.close(4002, 'binary from panel');
          return;
        }
        const msg = JSON.parse(data.toString()) as Record<string, unknown>;
        this.messages.push({ kind: 'text', msg });
        if (!this.helloOk) {
          // The console's rule: the first message must be hello with the capability.
          if (msg['type'] !== 'hello' || msg['capability'] !== CAPABILITY) {
            socket.close(4001, 'hello expected');
            return;
          }
          this.helloOk = true;
          this.send({
            type: 'welcome',
            run: 'run-browser',
            task: 'task-browser',
            vm: 'win11-bench',
            identity: { grant_digest: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', cert_sha256: 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01', security: 'tls' },
            phase: 'SETUP',
            width: WIDTH,
            height: HEIGHT,
            protocol: 1,
            ...welcome,
          });
          this.sendFrame();
        }
      });
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  send(msg: Record<string, unknown>): void {
    this.socket?.send(JSON.stringify(msg));
  }

  /** One frame: four PNG rectangles, one per quadrant. Returns its id. */
  sendFrame(): number {
    const id = this.nextFrame++;
    const w = this.width / 2;
    const h = this.height / 2;
    const rects = QUADRANTS.map((q) => ({ x: (q.x / WIDTH) * this.width, y: (q.y / HEIGHT) * this.height, w, h, encoding: 1, data: solidPng(w, h, q.rgb) }));
    this.socket?.send(encodeFrame(id, this.width, this.height, rects));
    return id;
  }

  texts(): Array<Record<string, unknown>> {
    return this.messages.flatMap((m) => (m.kind === 'text' ? [m.msg] : []));
  }

  inputsSince(index: number): Array<Record<string, unknown>> {
    return this.texts()
      .slice(index)
      .filter((m) => m['type'] === 'key' || m['type'] === 'pointer');
  }

  async acked(frame: number): Promise<void> {
    await waitFor(() => this.texts().some((m) => m['type'] === 'frame_ack' && m['frame'] === frame), 5000, `frame_ack ${frame}`);
  }
}

