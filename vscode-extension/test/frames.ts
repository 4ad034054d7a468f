// Test-side encoders for the binary frame layout and a minimal PNG writer (RGB, no filter).
import * as zlib from 'zlib';
import { FRAME_MAGIC } from '../shared/protocol';

export interface RectSpec {
  x: number;
  y: number;
  w: number;
  h: number;
  encoding: number;
  data: Buffer;
}

export function encodeFrame(frame: number, width: number, height: number, rects: RectSpec[]): Buffer {
  const head = Buffer.alloc(14);
  head.writeUInt32LE(FRAME_MAGIC, 0);
  head.writeUInt32LE(frame, 4);
  head.writeUInt16LE(width, 8);
  head.writeUInt16LE(height, 10);
  head.writeUInt16LE(rects.length, 12);
  const parts: Buffer[] = [head];
  for (const r of rects) {
    const rh = Buffer.alloc(13);
    rh.writeUInt16LE(r.x, 0);
    rh.writeUInt16LE(r.y, 2);
    rh.writeUInt16LE(r.w, 4);
    rh.writeUInt16LE(r.h, 6);
    rh.writeUInt8(r.encoding, 8);
    rh.writeUInt32LE(r.data.length, 9);
    parts.push(rh, r.data);
  }
  return Buffer.concat(parts);
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/** A solid-colour RGB PNG. */
export function solidPng(w: number, h: number, rgb: [number, number, number]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // colour type RGB
  const row = Buffer.alloc(1 + w * 3);
  for (let x = 0; x < w; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: h }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
