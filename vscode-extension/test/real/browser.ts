// Shared by the browser tests: chromium flags and reading the marker off the panel canvas.
import type { Page } from 'playwright-core';
import { findMarker, RgbaImage } from '../marker';

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

/** The canvas' pixels, read in the page and decoded here. */
export async function canvasMarker(frame: { evaluate: Page['evaluate'] }): Promise<number | undefined> {
  const shot = await frame.evaluate(() => {
    const canvas = document.getElementById('screen') as HTMLCanvasElement | null;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx || canvas.width < 80 || canvas.height < 60) return undefined;
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    let bin = '';
    for (let i = 0; i < data.length; i += 0x8000) bin += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return { w: canvas.width, h: canvas.height, b64: btoa(bin) };
  });
  if (!shot) return undefined;
  return findMarker(new RgbaImage(shot.w, shot.h, Buffer.from(shot.b64, 'base64')));
}

