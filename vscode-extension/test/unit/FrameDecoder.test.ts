import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { drawFrame, FrameFormatError, parseFrame, peekFrameId } from '../../media/FrameDecoder';
import type { Decoded, RenderTarget } from '../../media/FrameDecoder';
import { encodeFrame } from '../frames';

function copy(sx: number, sy: number, x: number, y: number, w: number, h: number) {
  const data = Buffer.alloc(4);
  data.writeUInt16LE(sx, 0);
  data.writeUInt16LE(sy, 2);
  return { x, y, w, h, encoding: 3, data };
}

function png11() {
  return { x: 0, y: 0, w: 1, h: 1, encoding: 1, data: Buffer.from([1]) };
}

function ab(buf: Buffer): ArrayBuffer {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
}

describe('parseFrame', () => {
  it('readsHeaderAndAllRectangles', () => {
    const frame = encodeFrame(7, 640, 480, [
      { x: 0, y: 0, w: 10, h: 20, encoding: 1, data: Buffer.from([1, 2, 3]) },
      { x: 630, y: 470, w: 10, h: 10, encoding: 2, data: Buffer.from([9]) },
    ]);
    const parsed = parseFrame(ab(frame));
    assert.equal(parsed.frame, 7);
    assert.equal(parsed.width, 640);
    assert.equal(parsed.height, 480);
    assert.equal(parsed.rects.length, 2);
    assert.deepEqual([...(parsed.rects[0]?.data ?? [])], [1, 2, 3]);
    assert.deepEqual({ ...parsed.rects[1], data: undefined }, { x: 630, y: 470, w: 10, h: 10, encoding: 2, data: undefined });
  });

  it('readsCopyRecordsApartFromImages', () => {
    const parsed = parseFrame(ab(encodeFrame(9, 640, 480, [copy(0, 40, 0, 0, 640, 440), { x: 0, y: 440, w: 640, h: 40, encoding: 1, data: Buffer.from([5]) }])));
    assert.deepEqual(parsed.copies, [{ sx: 0, sy: 40, x: 0, y: 0, w: 640, h: 440 }]);
    assert.equal(parsed.rects.length, 1);
    assert.equal(parsed.rects[0]?.y, 440);
  });

  const bad: Array<[string, () => Buffer]> = [
    ['badMagic', () => Buffer.concat([Buffer.from('XXXX'), encodeFrame(1, 1, 1, []).subarray(4)])],
    ['shortHeader', () => encodeFrame(1, 1, 1, []).subarray(0, 10)],
    ['truncatedData', () => encodeFrame(1, 8, 8, [{ x: 0, y: 0, w: 1, h: 1, encoding: 1, data: Buffer.alloc(10) }]).subarray(0, 30)],
    ['unknownEncoding', () => encodeFrame(1, 8, 8, [{ x: 0, y: 0, w: 1, h: 1, encoding: 9, data: Buffer.alloc(1) }])],
    ['rectOutsideDesktop', () => encodeFrame(1, 8, 8, [{ x: 4, y: 4, w: 5, h: 1, encoding: 1, data: Buffer.alloc(1) }])],
    ['trailingBytes', () => Buffer.concat([encodeFrame(1, 8, 8, []), Buffer.alloc(1)])],
    // Copy records (issue 27.5): before every image, exactly 4 bytes, source on the desktop.
    ['copyAfterAnImage', () => encodeFrame(1, 8, 8, [png11(), copy(0, 0, 0, 1, 2, 2)])],
    ['copyOfFiveBytes', () => encodeFrame(1, 8, 8, [{ x: 0, y: 0, w: 1, h: 1, encoding: 3, data: Buffer.alloc(5) }])],
    ['copySourceOutsideDesktop', () => encodeFrame(1, 8, 8, [copy(7, 7, 0, 0, 2, 2)])],
    ['copyDestinationOutsideDesktop', () => encodeFrame(1, 8, 8, [copy(0, 0, 7, 0, 2, 2)])],
  ];
  for (const [name, make] of bad) {
    it(`refuses ${name}`, () => {
      assert.throws(() => parseFrame(ab(make())), FrameFormatError);
    });
  }

  it('peeksTheFrameIdOnlyBehindTheMagic', () => {
    // A bad packet is still acknowledged when its id is readable; garbage never is.
    assert.equal(peekFrameId(ab(encodeFrame(77, 8, 8, [{ x: 0, y: 0, w: 1, h: 1, encoding: 3, data: Buffer.alloc(1) }]))), 77);
    assert.equal(peekFrameId(ab(encodeFrame(78, 1, 1, []).subarray(0, 8))), 78);
    assert.equal(peekFrameId(ab(Buffer.concat([Buffer.from('XXXX'), encodeFrame(79, 1, 1, []).subarray(4)]))), undefined);
    assert.equal(peekFrameId(ab(encodeFrame(80, 1, 1, []).subarray(0, 7))), undefined);
  });
});

describe('drawFrame', () => {
  it('drawsCopiesFromItsOwnCanvasBeforeTheImages', () => {
    // A recording 2d context: the order of draws and what each draws from.
    const calls: unknown[][] = [];
    const target = {
      width: 640,
      height: 480,
      getContext: () => ({ drawImage: (...args: unknown[]) => calls.push(args) }),
    };
    let closed = 0;
    const image = { close: () => closed++ } as unknown as Decoded;
    const result = drawFrame(target as unknown as RenderTarget, {
      frame: 3,
      width: 640,
      height: 480,
      copies: [{ sx: 0, sy: 4, x: 0, y: 0, w: 640, h: 476 }],
      rects: [{ x: 0, y: 476, w: 640, h: 4 }],
      images: [image],
    });
    assert.equal(result.kind, 'presented');
    assert.equal(calls.length, 2);
    assert.equal(calls[0]?.[0], target);
    assert.deepEqual(calls[0]?.slice(1), [0, 4, 640, 476, 0, 0, 640, 476]);
    assert.equal(calls[1]?.[0], image);
    assert.deepEqual(calls[1]?.slice(1), [0, 476, 640, 4]);
    assert.equal(closed, 1);
  });
});
