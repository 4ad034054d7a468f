// The test guest's identity marker, decoded from a capture the way
// tests/fixtures/testguest/IdentityMarker.h's findMarker does (README "Identity marker"):
// a 2 px magenta frame (outer box 68x36) around 8x4 cells of 8x8 px, MSB first, row by row.
import { PNG } from 'pngjs';

export interface Rgb {
  r: number;
  g: number;
  b: number;
}

export class Picture {
  constructor(
    readonly width: number,
    readonly height: number,
    private readonly rgba: Buffer,
  ) {}

  static fromPng(png: Buffer): Picture {
    const decoded = PNG.sync.read(png);
    return new Picture(decoded.width, decoded.height, decoded.data);
  }

  pixel(x: number, y: number): Rgb {
    const i = (y * this.width + x) * 4;
    return { r: this.rgba[i]!, g: this.rgba[i + 1]!, b: this.rgba[i + 2]! };
  }

  // Mean over the w x h block whose top-left is (x, y).
  mean(x: number, y: number, w: number, h: number): Rgb {
    let r = 0;
    let g = 0;
    let b = 0;
    for (let yy = y; yy < y + h; ++yy)
      for (let xx = x; xx < x + w; ++xx) {
        const p = this.pixel(xx, yy);
        r += p.r;
        g += p.g;
        b += p.b;
      }
    const n = w * h;
    return { r: r / n, g: g / n, b: b / n };
  }
}

const BOX_W = 68;
const BOX_H = 36;

function magentaish({ r, g, b }: Rgb): boolean {
  return r >= 130 && b >= 130 && g <= 120 && r - g >= 60;
}

function decodeAt(pic: Picture, ox: number, oy: number): number | undefined {
  if (ox + BOX_W > pic.width || oy + BOX_H > pic.height) return undefined;
  // 1. The frame: 24 samples on its four sides, at least 20 magenta-ish.
  let magenta = 0;
  for (let c = 0; c < 8; ++c) {
    const x = ox + 2 + 8 * c + 3;
    if (magentaish(pic.mean(x, oy, 2, 2))) ++magenta;
    if (magentaish(pic.mean(x, oy + 34, 2, 2))) ++magenta;
  }
  for (let r = 0; r < 4; ++r) {
    const y = oy + 2 + 8 * r + 3;
    if (magentaish(pic.mean(ox, y, 2, 2))) ++magenta;
    if (magentaish(pic.mean(ox + 66, y, 2, 2))) ++magenta;
  }
  if (magenta < 20) return undefined;
  // 2. The bits: the centre 4x4 of each cell; an ambiguous luma means "not a marker".
  let value = 0;
  for (let k = 0; k < 32; ++k) {
    const c = k % 8;
    const r = Math.floor(k / 8);
    const { r: R, g: G, b: B } = pic.mean(ox + 2 + 8 * c + 2, oy + 2 + 8 * r + 2, 4, 4);
    const luma = (299 * R + 587 * G + 114 * B) / 1000;
    if (luma >= 97 && luma <= 159) return undefined;
    if (luma >= 128) value |= 1 << (31 - k);
  }
  return value >>> 0;
}

export function findMarker(pic: Picture): number | undefined {
  const fixed = decodeAt(pic, 8, 8);
  if (fixed !== undefined) return fixed;
  // 3. Elsewhere: origins whose top-left 2x2 is magenta-ish.
  for (let oy = 0; oy <= Math.min(pic.height - BOX_H, 512); ++oy)
    for (let ox = 0; ox <= Math.min(pic.width - BOX_W, 512); ++ox) {
      if (!magentaish(pic.mean(ox, oy, 2, 2))) continue;
      const found = decodeAt(pic, ox, oy);
      if (found !== undefined) return found;
    }
  return undefined;
}

// The guest's background colour for a marker (README "Desktop picture").
export function backgroundFor(marker: number): Rgb {
  return {
    r: 24 + ((marker >>> 24) & 63),
    g: 40 + ((marker >>> 16) & 63),
    b: 56 + ((marker >>> 8) & 63),
  };
}
