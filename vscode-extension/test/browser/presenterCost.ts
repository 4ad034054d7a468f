// The panel presenter's cost without the console: a stub console (the browser tests' page
// harness) sends a 1920×1080 desktop synthetic frames at 30 frames/s, at most 2 unacked —
//   typing: 3 PNG glyphs (16×24) per frame;  motion: one full-screen JPEG per frame —
// and Chromium's CPU (every process, tests/bench/lib/webview.js' TreeMeter) is divided by the
// frames the page acknowledged. Bundles are measured in alternation (A B A B), each in a fresh
// browser. Not a test: a measuring tool for docs/performance.md (issue 17).
//   npm run build && npx tsc -p tsconfig.test.json
//   node out/test/browser/presenterCost.js [--seconds S] [--rounds R] MEDIA_DIR...
// (MEDIA_DIR: a built dist/media, e.g. of another commit.) Prints one JSON line per run.
import { randomBytes } from 'crypto';
import { promises as fs } from 'fs';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { chromium } from 'playwright-core';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { renderPanelHtml } from '../../src/panelHtml';
import { CHROMIUM_ARGS, openPanelPage, servePanelSite } from '../browser';
import { encodeFrame, solidPng } from '../frames';
import { PACKAGE_ROOT } from '../helpers';

interface MeterResult {
  seconds: number;
  cpuPerSecond: number;
  byType: Record<string, number>;
  threads: Record<string, number>;
  rendererMax: number;
}
const { TreeMeter } = require(path.join(PACKAGE_ROOT, '..', 'tests', 'bench', 'lib', 'webview.js')) as {
  TreeMeter: new (pid: number) => { stop(): MeterResult };
};

const CHROMIUM = process.env['GC_CHROMIUM'] ?? '/usr/bin/chromium';
const W = 1920;
const H = 1080;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Full-screen JPEGs (gradient + blocks), encoded by chromium itself. */
async function makeJpegs(n: number): Promise<Buffer[]> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  const out = await page.evaluate(
    async ([w, h, count]) => {
      const res: number[][] = [];
      for (let i = 0; i < count; i++) {
        const c = new OffscreenCanvas(w, h);
        const x = c.getContext('2d');
        if (!x) throw new Error('no context');
        const g = x.createLinearGradient(0, 0, w, h);
        g.addColorStop(0, `hsl(${i * 40},80%,50%)`);
        g.addColorStop(1, `hsl(${i * 40 + 180},80%,50%)`);
        x.fillStyle = g;
        x.fillRect(0, 0, w, h);
        for (let k = 0; k < 400; k++) {
          x.fillStyle = `hsl(${(k * 13 + i * 7) % 360},70%,${30 + (k % 40)}%)`;
          x.fillRect((k * 97 + i * 31) % w, (k * 53 + i * 17) % h, 60, 40);
        }
        const blob = await c.convertToBlob({ type: 'image/jpeg', quality: 0.8 });
        res.push(Array.from(new Uint8Array(await blob.arrayBuffer())));
      }
      return res;
    },
    [W, H, n] as const,
  );
  await browser.close();
  return out.map((a) => Buffer.from(a));
}

async function findBrowserPid(marker: string): Promise<number> {
  for (const d of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const args = (await fs.readFile(`/proc/${d}/cmdline`, 'latin1').catch(() => '')).split('\0');
    if (args.includes(marker) && !args.some((a) => a.startsWith('--type='))) return Number(d);
  }
  throw new Error('chromium browser process not found');
}

async function measure(media: string, jpegs: Buffer[], seconds: number): Promise<Record<string, unknown>> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const wsPort = (wss.address() as AddressInfo).port;
  const capability = randomBytes(32).toString('hex');
  let socket: ServerSocket | undefined;
  let acks = 0;
  let next = 1;
  wss.on('connection', (s) => {
    socket = s;
    s.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { type: string };
      if (m.type === 'hello') {
        s.send(JSON.stringify({ type: 'welcome', run: 'r', task: 't', vm: 'cost', identity: {}, phase: 'SETUP', width: W, height: H, protocol: 1 }));
        s.send(encodeFrame(next++, W, H, [{ x: 0, y: 0, w: W, h: H, encoding: 2, data: jpegs[0] ?? Buffer.alloc(0) }]));
      } else if (m.type === 'frame_ack') {
        acks++;
      }
    });
  });
  let html = '';
  const site = await servePanelSite(media, () => html);
  html = renderPanelHtml({
    cspSource: `http://127.0.0.1:${site.port}`,
    nonce: randomBytes(18).toString('base64'),
    scriptUri: '/media/main.js',
    styleUri: '/media/view.css',
    connectSources: [`ws://127.0.0.1:${wsPort}`],
    title: 'cost',
  });
  const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gc-presenter-cost-'));
  const marker = `--gc-presenter-cost-${process.pid}-${Date.now()}`;
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1920, height: 1200 },
    args: [...CHROMIUM_ARGS, marker],
  });
  const glyphs = ([[240, 240, 240], [200, 200, 255], [255, 220, 200]] as Array<[number, number, number]>).map((c) => solidPng(16, 24, c));
  const result: Record<string, unknown> = { media, load: os.loadavg()[0] };
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await openPanelPage(page, site.port);
    await page.evaluate((info) => window.postMessage(info, '*'), {
      type: 'connect',
      wsUrl: `ws://127.0.0.1:${wsPort}`,
      run: 'r',
      task: 't',
      capability,
      clientVersion: '0',
      panel: { title: 'cost' },
    });
    for (let waited = 0; acks < 1; waited += 50) {
      if (waited > 20000) throw new Error('no frame acknowledged');
      await sleep(50);
    }
    const pid = await findBrowserPid(marker);
    for (const workload of ['typing', 'motion'] as const) {
      let i = 0;
      const tick = setInterval(() => {
        if (!socket || next - 1 - acks > 2) return; // the console's window: 2 unacked frames
        const x = 40 + ((i * 16) % 1800);
        const rects =
          workload === 'typing'
            ? glyphs.map((data, k) => ({ x: (x + k * 300) % 1900, y: 100 + ((24 * Math.floor((i * 16) / 1800)) % 900), w: 16, h: 24, encoding: 1, data }))
            : [{ x: 0, y: 0, w: W, h: H, encoding: 2, data: jpegs[i % jpegs.length] ?? Buffer.alloc(0) }];
        socket.send(encodeFrame(next++, W, H, rects));
        i++;
      }, 1000 / 30);
      await sleep(800);
      const a0 = acks;
      const meter = new TreeMeter(pid);
      await sleep(seconds * 1000);
      const r = meter.stop();
      const fps = (acks - a0) / r.seconds;
      clearInterval(tick);
      await sleep(300);
      const perFrame = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Number(((1000 * v) / fps).toFixed(2))]));
      result[workload] = {
        fps: Number(fps.toFixed(1)),
        ms_per_frame: Number(((1000 * r.cpuPerSecond) / fps).toFixed(2)),
        by_process: perFrame(r.byType),
        renderer_threads: perFrame(r.threads),
        renderer_rss_max_mib: Math.round(r.rendererMax),
      };
    }
  } finally {
    await context.close();
    site.server.close();
    wss.close();
    await fs.rm(userDataDir, { recursive: true, force: true });
  }
  return result;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args.splice(i, 2)[1]) : fallback;
  };
  const seconds = option('--seconds', 5);
  const rounds = option('--rounds', 2);
  if (args.length === 0) throw new Error('usage: presenterCost.js [--seconds S] [--rounds R] MEDIA_DIR...');
  const jpegs = await makeJpegs(4);
  for (let round = 1; round <= rounds; round++) {
    for (const media of args) {
      console.log(JSON.stringify({ round, ...(await measure(path.resolve(media), jpegs, seconds)), at: new Date().toISOString() }));
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
