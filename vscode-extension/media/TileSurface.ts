// The desktop as a grid of tile canvases under the panel's `#screen` element.
//
// Why tiles: with software compositing (headless Chromium, `--disable-gpu`, and any VS Code
// without a GPU) a 2D canvas hands its WHOLE bitmap to the compositor after any change. One
// 1920×1080 canvas made a 3-glyph typing frame re-commit 8 MB (2.2 ms of main thread per
// frame for a single 16×16 draw); with tiles a frame re-commits only the tiles it touches
// (docs/performance.md, issue 17).
//
// `#screen` itself stays the panel's input surface and geometry: a transparent canvas on top
// of the tiles, sized to the desktop (width/height) and laid out by the page (CSS size). It
// never gets a context, so it costs no memory and is never committed. The tiles sit in one
// container that covers `#screen` exactly; each tile is placed and sized in percent of the
// desktop, so the browser scales them as it scaled the one canvas. Pixel readers (tests,
// the bench's probe) find each tile's desktop position in its `data-x`/`data-y`.
//
// Thread: the page's main thread.

import type { Decoded, FrameSurface } from './FrameDecoder';

/** Tile edge in desktop pixels (docs/performance.md: measured against other sizes). */
export const TILE_SIZE = 256;

export interface TileRect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The tiles of a width×height desktop, row by row; edge tiles are cut to the desktop. */
export function tileGrid(width: number, height: number, size: number = TILE_SIZE): TileRect[] {
  const tiles: TileRect[] = [];
  for (let y = 0; y < height; y += size) {
    for (let x = 0; x < width; x += size) {
      tiles.push({ x, y, w: Math.min(size, width - x), h: Math.min(size, height - y) });
    }
  }
  return tiles;
}

/**
 * The pieces of `rect` (desktop pixels, inside a width-wide desktop) per tile it touches:
 * `tile` is the index in tileGrid's order, the piece's own x/y/w/h are desktop pixels.
 */
export function tilePieces(width: number, rect: TileRect, size: number = TILE_SIZE): Array<TileRect & { tile: number }> {
  const cols = Math.ceil(width / size);
  const pieces: Array<TileRect & { tile: number }> = [];
  const right = rect.x + rect.w;
  const bottom = rect.y + rect.h;
  for (let row = Math.floor(rect.y / size); row * size < bottom; row++) {
    for (let col = Math.floor(rect.x / size); col * size < right; col++) {
      const x = Math.max(rect.x, col * size);
      const y = Math.max(rect.y, row * size);
      pieces.push({ tile: row * cols + col, x, y, w: Math.min(right, (col + 1) * size) - x, h: Math.min(bottom, (row + 1) * size) - y });
    }
  }
  return pieces;
}

interface Tile extends TileRect {
  ctx: CanvasRenderingContext2D;
}

export class TileSurface implements FrameSurface {
  private readonly container: HTMLDivElement;
  private tiles: Tile[] = [];
  private size = { width: 0, height: 0 };

  constructor(private readonly screen: HTMLCanvasElement) {
    this.container = document.createElement('div');
    this.container.className = 'tiles';
    screen.before(this.container);
  }

  get width(): number {
    return this.size.width;
  }

  get height(): number {
    return this.size.height;
  }

  /** A new grid of blank tiles (the console sends a whole frame after a size change). */
  resize(width: number, height: number): void {
    this.size = { width, height };
    this.screen.width = width;
    this.screen.height = height;
    const canvases: HTMLCanvasElement[] = [];
    this.tiles = tileGrid(width, height).map((t) => {
      const canvas = document.createElement('canvas');
      canvas.width = t.w;
      canvas.height = t.h;
      canvas.dataset['x'] = String(t.x);
      canvas.dataset['y'] = String(t.y);
      canvas.style.left = `${(100 * t.x) / width}%`;
      canvas.style.top = `${(100 * t.y) / height}%`;
      canvas.style.width = `${(100 * t.w) / width}%`;
      canvas.style.height = `${(100 * t.h) / height}%`;
      const ctx = canvas.getContext('2d');
      if (!ctx) {
        throw new Error('no 2d context');
      }
      canvases.push(canvas);
      return { ...t, ctx };
    });
    this.container.replaceChildren(...canvases);
  }

  /** Draws a decoded rectangle (its image is w×h) onto the tiles it touches. */
  draw(image: Decoded, x: number, y: number, w: number, h: number): void {
    for (const p of tilePieces(this.size.width, { x, y, w, h })) {
      const tile = this.tiles[p.tile];
      tile?.ctx.drawImage(image, p.x - x, p.y - y, p.w, p.h, p.x - tile.x, p.y - tile.y, p.w, p.h);
    }
  }
}
