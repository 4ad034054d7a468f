// The TypeScript decoder of the test guest's identity marker (test/marker.ts), which the
// real-console and code-server tests read the canvas with.
import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { drawMarker, findMarker, hex32, RgbaImage } from '../marker';

function desktop(w: number, h: number): RgbaImage {
  const img = new RgbaImage(w, h, new Uint8Array(w * h * 4));
  for (let i = 0; i < img.data.length; i += 4) img.data.set([40, 60, 90, 255], i);
  return img;
}

describe('identity marker decoder', () => {
  const cases: Array<[string, number, number, number]> = [
    ['atTheFixedOrigin', 0x5eed4a11, 8, 8],
    ['allOnes', 0xffffffff, 8, 8],
    ['allZeros', 0x00000000, 8, 8],
    ['atAScannedOrigin', 0x6c5a7e57, 130, 77],
  ];
  for (const [name, marker, ox, oy] of cases) {
    it(`decodesTheMarker ${name}`, () => {
      const img = desktop(320, 200);
      drawMarker(img, marker, ox, oy);
      assert.equal(hex32(findMarker(img) ?? -1), hex32(marker));
    });
  }

  it('findsNoMarkerInAPlainPicture', () => {
    assert.equal(findMarker(desktop(320, 200)), undefined);
  });

  it('refusesGreyCells', () => {
    const img = desktop(320, 200);
    drawMarker(img, 0x12345678);
    for (let y = 10; y < 18; y++) for (let x = 10; x < 18; x++) img.data.set([128, 128, 128, 255], (y * 320 + x) * 4);
    assert.equal(findMarker(img), undefined);
  });
});
