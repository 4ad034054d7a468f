'use strict';
// The lanes' one reader of the console's binary frame update (GCF1), its layout read from the
// protocol's source of truth (resources/protocol/panel-protocol.json "binaryFrame"), and the
// canvas a test panel composites the lossless rectangles onto. Used by the battery, the live,
// interop and hostile lanes.
const fs = require('fs');
const path = require('path');

const PROTOCOL = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../resources/protocol/panel-protocol.json'), 'utf8'));
const SIZES = { u8: 1, u16: 2, u32: 4 };
const READ = { u8: (b, o) => b.readUInt8(o), u16: (b, o) => b.readUInt16LE(o), u32: (b, o) => b.readUInt32LE(o) };
const HEADER = PROTOCOL.binaryFrame.header.map(([name, type]) => [name, type]);
const RECT = PROTOCOL.binaryFrame.rect.map(([name, type]) => [name, type]);
const HEADER_BYTES = HEADER.reduce((n, [, t]) => n + SIZES[t], 0);
const RECT_BYTES = RECT.reduce((n, [, t]) => n + SIZES[t], 0);
const MAGIC = 0x31464347; // 'GCF1'
const PNG = 1;
const JPEG = 2;

function readFields(layout, buf, at) {
  const out = {};
  let off = at;
  for (const [name, type] of layout) {
    out[name] = READ[type](buf, off);
    off += SIZES[type];
  }
  return out;
}

// One packet → { frame, width, height, rects: [{ x, y, w, h, encoding, bytes }] }; throws on a
// packet that is not a whole GCF1 frame (a test panel counts that as an error).
function parseFrame(packet) {
  if (packet.length < HEADER_BYTES) throw new Error(`GCF1: ${packet.length} bytes, shorter than the header`);
  const header = readFields(HEADER, packet, 0);
  if (header.magic !== MAGIC) throw new Error(`GCF1: magic 0x${header.magic.toString(16)}`);
  const rects = [];
  let off = HEADER_BYTES;
  for (let i = 0; i < header.rects; i++) {
    if (packet.length - off < RECT_BYTES) throw new Error(`GCF1: rectangle ${i} cut short`);
    const r = readFields(RECT, packet, off);
    off += RECT_BYTES;
    if (packet.length - off < r.length) throw new Error(`GCF1: rectangle ${i} declares ${r.length} bytes beyond the packet`);
    rects.push({ x: r.x, y: r.y, w: r.w, h: r.h, encoding: r.encoding, bytes: packet.subarray(off, off + r.length) });
    off += r.length;
  }
  if (off !== packet.length) throw new Error(`GCF1: ${packet.length - off} bytes after the last rectangle`);
  return { frame: header.frame, width: header.width, height: header.height, rects };
}

// The desktop as a test panel sees it: PNG rectangles composited (RGB, 3 bytes a pixel) and
// marked covered; a JPEG rectangle makes its area unknown (lossy: no pixel check may use it).
class Canvas {
  constructor(decodePng) {
    this.decodePng = decodePng;
    this.width = 0;
    this.height = 0;
    this.rgb = null;
    this.covered = null;
    this.pngRects = 0;
    this.jpegRects = 0;
    this.pngPixels = 0;
    this.jpegPixels = 0;
  }
  // Applies one parsed frame; `onPng(img, rect)` sees each decoded PNG rectangle first.
  apply(parsed, onPng) {
    const { width, height } = parsed;
    if (!this.rgb || this.width !== width || this.height !== height) {
      this.width = width;
      this.height = height;
      this.rgb = Buffer.alloc(width * height * 3);
      this.covered = new Uint8Array(width * height);
    }
    for (const r of parsed.rects) {
      const cw = Math.max(0, Math.min(r.w, width - r.x));
      const ch = Math.max(0, Math.min(r.h, height - r.y));
      if (r.encoding !== PNG) {
        this.jpegRects++;
        this.jpegPixels += r.w * r.h;
        for (let yy = 0; yy < ch; yy++) this.covered.fill(0, (r.y + yy) * width + r.x, (r.y + yy) * width + r.x + cw);
        continue;
      }
      const img = this.decodePng(r.bytes);
      this.pngRects++;
      this.pngPixels += img.width * img.height;
      if (onPng) onPng(img, r);
      const w = Math.min(cw, img.width);
      for (let yy = 0; yy < Math.min(ch, img.height); yy++) {
        img.rgb.copy(this.rgb, ((r.y + yy) * width + r.x) * 3, yy * img.width * 3, (yy * img.width + w) * 3);
        this.covered.fill(1, (r.y + yy) * width + r.x, (r.y + yy) * width + r.x + w);
      }
    }
  }
  // The { width, height, rgb } shape the PNG and marker helpers take.
  image() {
    return this.rgb ? { width: this.width, height: this.height, rgb: this.rgb } : null;
  }
}

module.exports = { parseFrame, Canvas, MAGIC, PNG, JPEG, HEADER_BYTES, RECT_BYTES };
