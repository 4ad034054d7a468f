// Shared by the browser tests: chromium flags, the loopback site that serves the panel page,
// and reading the marker off the panel canvas.
import * as fs from 'node:fs/promises';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { findMarker, RgbaImage } from './marker';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The panel canvas' pixels (RGBA, the desktop's own resolution), read in the page as shown:
 * the canvas is copied onto a scratch canvas first (it may be a frame worker's placeholder,
 * which has no context of its own in the page).
 */
export async function canvasImage(frame: { evaluate: Page['evaluate'] }): Promise<RgbaImage | undefined> {
  const shot = await frame.evaluate(() => {
    const canvas = document.getElementById('screen') as HTMLCanvasElement | null;
    if (!canvas || canvas.width < 80 || canvas.height < 60) return undefined;
    const scratch = document.createElement('canvas');
    scratch.width = canvas.width;
    scratch.height = canvas.height;
    const ctx = scratch.getContext('2d');
    if (!ctx) return undefined;
    ctx.drawImage(canvas, 0, 0);
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    let bin = '';
    for (let i = 0; i < data.length; i += 0x8000) bin += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return { w: canvas.width, h: canvas.height, b64: btoa(bin) };
  });
  return shot && new RgbaImage(shot.w, shot.h, Buffer.from(shot.b64, 'base64'));
}

/** RGBA of single pixels of the panel canvas as shown (see canvasImage), and its size. */
export async function canvasPixels(
  frame: { evaluate: Page['evaluate'] },
  points: ReadonlyArray<readonly [number, number]>,
): Promise<{ size: [number, number]; values: number[][] }> {
  return frame.evaluate((pts) => {
    const canvas = document.getElementById('screen') as HTMLCanvasElement;
    const scratch = document.createElement('canvas');
    scratch.width = scratch.height = 1;
    const ctx = scratch.getContext('2d', { willReadFrequently: true });
    const values = pts.map(([x, y]) => {
      ctx?.clearRect(0, 0, 1, 1);
      ctx?.drawImage(canvas, -x, -y);
      return Array.from(ctx?.getImageData(0, 0, 1, 1).data ?? []);
    });
    return { size: [canvas.width, canvas.height] as [number, number], values };
  }, points);
}

/** The test guest's marker on the panel canvas. */
export async function canvasMarker(frame: { evaluate: Page['evaluate'] }): Promise<number | undefined> {
  const img = await canvasImage(frame);
  return img && findMarker(img);
}


/**
 * Serves the panel page on 127.0.0.1 like a webview host would: `/` is the HTML `page()`
 * returns at request time (it embeds the site's own port, known only after listening), and
 * `/media/main.js` and `/media/view.css` come from the built extension's `media` folder.
 */
export async function servePanelSite(mediaDir: string, page: () => string): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = req.url ?? '/';
      if (url === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(page());
      } else if (url === '/media/main.js' || url === '/media/view.css') {
        const body = await fs.readFile(path.join(mediaDir, path.basename(url)));
        res.writeHead(200, { 'content-type': url.endsWith('.js') ? 'text/javascript' : 'text/css' });
        res.end(body);
      } else {
        res.writeHead(404);
        res.end();
      }
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * Loads the panel page from `servePanelSite` with the VS Code webview host API stubbed (what
 * the page posts to the host is kept in `window.__posted`) and waits for `webview_ready`.
 */
export async function openPanelPage(page: Page, sitePort: number): Promise<void> {
  await page.addInitScript(() => {
    const posted: unknown[] = [];
    (window as unknown as { __posted: unknown[] }).__posted = posted;
    let state: unknown;
    (window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => ({
      postMessage: (m: unknown) => posted.push(m),
      getState: () => state,
      setState: (s: unknown) => (state = s),
    });
  });
  await page.goto(`http://127.0.0.1:${sitePort}/`);
  await page.waitForFunction(() => (window as unknown as { __posted: Array<{ type: string }> }).__posted.some((m) => m.type === 'webview_ready'));
}
