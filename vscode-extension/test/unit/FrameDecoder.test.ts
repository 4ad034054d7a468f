import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { FrameFormatError, parseFrame, peekFrameId } from '../../media/FrameDecoder';
import { encodeFrame } from '../frames';

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

  const bad: Array<[string, () => Buffer]> = [
    ['badMagic', () => Buffer.concat([Buffer.from('XXXX'), encodeFrame(1, 1, 1, []).subarray(4)])],
    ['shortHeader', () => encodeFrame(1, 1, 1, []).subarray(0, 10)],
    ['truncatedData', () => encodeFrame(1, 8, 8, [{ x: 0, y: 0, w: 1, h: 1, encoding: 1, data: Buffer.alloc(10) }]).subarray(0, 30)],
    ['unknownEncoding', () => encodeFrame(1, 8, 8, [{ x: 0, y: 0, w: 1, h: 1, encoding: 3, data: Buffer.alloc(1) }])],
    ['rectOutsideDesktop', () => encodeFrame(1, 8, 8, [{ x: 4, y: 4, w: 5, h: 1, encoding: 1, data: Buffer.alloc(1) }])],
    ['trailingBytes', () => Buffer.concat([encodeFrame(1, 8, 8, []), Buffer.alloc(1)])],
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
