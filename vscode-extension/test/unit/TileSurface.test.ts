import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { TILE_SIZE, tileGrid, tilePieces } from '../../media/TileSurface';

describe('tile geometry', () => {
  it('coversTheDesktopWithTilesCutAtItsEdges', () => {
    const tiles = tileGrid(1920, 1080);
    assert.equal(tiles.length, Math.ceil(1920 / TILE_SIZE) * Math.ceil(1080 / TILE_SIZE));
    assert.equal(tiles.reduce((n, t) => n + t.w * t.h, 0), 1920 * 1080);
    assert.deepEqual(tiles[tiles.length - 1], { x: 1792, y: 1024, w: 128, h: 56 });
  });

  it('cutsARectangleIntoExactlyThePiecesOfTheTilesItTouches', () => {
    const width = 600;
    const grid = tileGrid(width, 400, 256);
    for (const rect of [
      { x: 300, y: 20, w: 16, h: 16 },
      { x: 240, y: 240, w: 40, h: 40 },
      { x: 0, y: 0, w: 600, h: 400 },
      { x: 255, y: 255, w: 2, h: 2 },
      { x: 256, y: 0, w: 256, h: 256 },
    ]) {
      const pieces = tilePieces(width, rect, 256);
      // Each piece lies in its tile and in the rectangle; together they cover it once.
      for (const p of pieces) {
        const t = grid[p.tile];
        assert.ok(t && p.x >= t.x && p.y >= t.y && p.x + p.w <= t.x + t.w && p.y + p.h <= t.y + t.h, JSON.stringify({ rect, p }));
        assert.ok(p.w > 0 && p.h > 0 && p.x >= rect.x && p.y >= rect.y && p.x + p.w <= rect.x + rect.w && p.y + p.h <= rect.y + rect.h);
      }
      assert.equal(pieces.reduce((n, p) => n + p.w * p.h, 0), rect.w * rect.h);
      assert.equal(new Set(pieces.map((p) => p.tile)).size, pieces.length);
    }
    assert.deepEqual(tilePieces(width, { x: 300, y: 20, w: 16, h: 16 }, 256).map((p) => p.tile), [1]);
    assert.deepEqual(tilePieces(width, { x: 256, y: 0, w: 256, h: 256 }, 256).map((p) => p.tile), [1]);
    assert.deepEqual(tilePieces(width, { x: 240, y: 240, w: 40, h: 40 }, 256).map((p) => p.tile), [0, 1, 3, 4]);
  });
});
