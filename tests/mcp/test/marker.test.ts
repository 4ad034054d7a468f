// The TypeScript marker decoder against pictures drawn from the README's geometry, so the
// end-to-end test's "the capture carries the guest's marker" cannot pass vacuously.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { PNG } from 'pngjs';

import { Picture, findMarker } from './marker.js';

function draw(width: number, height: number, marker: number | undefined, ox = 8, oy = 8): Picture {
  const rgba = Buffer.alloc(width * height * 4);
  const fill = (x0: number, y0: number, w: number, h: number, [r, g, b]: [number, number, number]) => {
    for (let y = y0; y < y0 + h; ++y)
      for (let x = x0; x < x0 + w; ++x) rgba.set([r, g, b, 255], (y * width + x) * 4);
  };
  fill(0, 0, width, height, [40, 60, 80]);
  if (marker !== undefined) {
    fill(ox, oy, 68, 36, [255, 0, 255]);
    for (let k = 0; k < 32; ++k) {
      const on = ((marker >>> (31 - k)) & 1) === 1;
      fill(ox + 2 + 8 * (k % 8), oy + 2 + 8 * Math.floor(k / 8), 8, 8, on ? [255, 255, 255] : [0, 0, 0]);
    }
  }
  // Through a real PNG, as a capture arrives.
  const png = new PNG({ width, height });
  rgba.copy(png.data);
  return Picture.fromPng(PNG.sync.write(png));
}

describe('identity marker decoder (tests/fixtures/testguest/README.md)', () => {
  for (const marker of [0x6c5a7e57, 0x4d435111, 0x80000001, 0]) {
    it(`reads 0x${marker.toString(16)} at the fixed origin`, () => {
      assert.equal(findMarker(draw(200, 120, marker)), marker);
    });
  }
  it('finds a marker away from the fixed origin', () => {
    assert.equal(findMarker(draw(300, 200, 0xdeadbeef, 40, 60)), 0xdeadbeef);
  });
  it('finds nothing in a picture without a marker', () => {
    assert.equal(findMarker(draw(200, 120, undefined)), undefined);
  });
});
