// The test guest's identity marker, decoded from RGBA pixels (a canvas' getImageData).
// Same geometry and thresholds as tests/fixtures/testguest/IdentityMarker.h (findMarker);
// see tests/fixtures/testguest/README.md "Identity marker".

const FRAME_W = 68;
const FRAME_H = 36;
const SCAN_LIMIT = 512;

type Rgb = [number, number, number];

export class RgbaImage {
  constructor(
    readonly width: number,
    readonly height: number,
    readonly data: Uint8Array | Uint8ClampedArray,
  ) {
    if (data.length !== width * height * 4) {
      throw new Error(`RGBA buffer of ${data.length} bytes for ${width}x${height}`);
    }
  }

  /** Mean colour of the w x h block at (x, y). */
  mean(x: number, y: number, w: number, h: number): Rgb {
    const sum: Rgb = [0, 0, 0];
    for (let yy = y; yy < y + h; yy++) {
      for (let xx = x; xx < x + w; xx++) {
        const i = (yy * this.width + xx) * 4;
        sum[0] += this.data[i] ?? 0;
        sum[1] += this.data[i + 1] ?? 0;
        sum[2] += this.data[i + 2] ?? 0;
      }
    }
    const n = w * h;
    return [sum[0] / n, sum[1] / n, sum[2] / n];
  }
}

function magentaish([r, g, b]: Rgb): boolean {
  return r >= 130 && b >= 130 && g <= 120 && r - g >= 60;
}

function frameAt(img: RgbaImage, ox: number, oy: number): boolean {
  let hits = 0;
  for (let c = 0; c < 8; c++) {
    const x = ox + 2 + 8 * c + 3;
    if (magentaish(img.mean(x, oy, 2, 2))) hits++;
    if (magentaish(img.mean(x, oy + 34, 2, 2))) hits++;
  }
  for (let r = 0; r < 4; r++) {
    const y = oy + 2 + 8 * r + 3;
    if (magentaish(img.mean(ox, y, 2, 2))) hits++;
    if (magentaish(img.mean(ox + 66, y, 2, 2))) hits++;
  }
  return hits >= 20; // 80 % of 24
}

function bitsAt(img: RgbaImage, ox: number, oy: number): number | undefined {
  let value = 0;
  for (let k = 0; k < 32; k++) {
    const x = ox + 2 + 8 * (k % 8);
    const y = oy + 2 + 8 * Math.floor(k / 8);
    const [r, g, b] = img.mean(x + 2, y + 2, 4, 4);
    const luma = (299 * r + 587 * g + 114 * b) / 1000;
    if (luma >= 97 && luma <= 159) {
      return undefined; // neither white nor black: not a marker
    }
    if (luma >= 128) {
      value |= 1 << (31 - k);
    }
  }
  return value >>> 0;
}

/** The marker value, or undefined when the picture holds none. */
export function findMarker(img: RgbaImage): number | undefined {
  if (img.width < FRAME_W || img.height < FRAME_H) {
    return undefined;
  }
  if (frameAt(img, 8, 8)) {
    const v = bitsAt(img, 8, 8);
    if (v !== undefined) return v;
  }
  for (let oy = 0; oy <= Math.min(img.height - FRAME_H, SCAN_LIMIT); oy++) {
    for (let ox = 0; ox <= Math.min(img.width - FRAME_W, SCAN_LIMIT); ox++) {
      if (magentaish(img.mean(ox, oy, 2, 2)) && frameAt(img, ox, oy)) {
        const v = bitsAt(img, ox, oy);
        if (v !== undefined) return v;
      }
    }
  }
  return undefined;
}

/** Draws a marker the way the guest does (for the decoder's own test). */
export function drawMarker(img: RgbaImage, marker: number, ox = 8, oy = 8): void {
  const fill = (x: number, y: number, w: number, h: number, rgb: Rgb): void => {
    for (let yy = y; yy < y + h; yy++) {
      for (let xx = x; xx < x + w; xx++) {
        const i = (yy * img.width + xx) * 4;
        img.data[i] = rgb[0];
        img.data[i + 1] = rgb[1];
        img.data[i + 2] = rgb[2];
        img.data[i + 3] = 255;
      }
    }
  };
  fill(ox, oy, FRAME_W, FRAME_H, [255, 0, 255]);
  for (let k = 0; k < 32; k++) {
    const bit = (marker >>> (31 - k)) & 1;
    fill(ox + 2 + 8 * (k % 8), oy + 2 + 8 * Math.floor(k / 8), 8, 8, bit ? [255, 255, 255] : [0, 0, 0]);
  }
}

export function hex32(v: number): string {
  return `0x${(v >>> 0).toString(16).padStart(8, '0')}`;
}
