'use strict';
// The lanes' one reader of the console's binary frame update (GCF1), its layout read from the
// protocol's source of truth (resources/protocol/panel-protocol.json "binaryFrame"), and the
// canvas a test panel composites the lossless rectangles onto. Used by the battery, the live,
// interop and hostile lanes.
const fs = require('fs');
const path = require('path');

const PROTOCOL = JSON.parse(fs.readFileSync(path.join(__dirname, '../../resources/protocol/panel-protocol.json'), 'utf8'));
const SIZES = { u8: 1, u16: 2, u32: 4 };
const READ = { u8: (b, o) => b.readUInt8(o), u16: (b, o) => b.readUInt16LE(o), u32: (b, o) => b.readUInt32LE(o) };
const HEADER = PROTOCOL.binaryFrame.header.map(([name, type]) => [name, type]);
const RECT = PROTOCOL.binaryFrame.rect.map(([name, type]) => [name, type]);
const HEADER_BYTES = HEADER.reduce((n, [, t]) => n + SIZES[t], 0);
const RECT_BYTES = RECT.reduce((n, [, t]) => n + SIZES[t], 0);
const COPY_LAYOUT = PROTOCOL.binaryFrame.copy.map(([name, type]) => [name, type]);
const COPY_BYTES = COPY_LAYOUT.reduce((n, [, t]) => n + SIZES[t], 0);
const MAGIC = 0x31464347; // 'GCF1'
const PNG = 1;
const JPEG = 2;
const COPY = 3; // only to a panel whose hello listed the 'copy_rect' feature

function readFields(layout, buf, at) {
  const out = {};
  let off = at;
  for (const [name, type] of layout) {
    out[name] = READ[type](buf, off);
    off += SIZES[type];
  }
  return out;
}

// One packet → { frame, width, height, rects: [{ x, y, w, h, encoding, bytes }] } (a COPY rect
// has sx, sy instead of bytes); throws on a packet that is not a whole, well-formed GCF1 frame
// (a test panel counts that as an error): rects inside the desktop, copies before images.
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
    if (r.w === 0 || r.h === 0 || r.x + r.w > header.width || r.y + r.h > header.height) throw new Error(`GCF1: rectangle ${i} outside the desktop`);
    if (r.encoding === COPY) {
      if (rects.some((p) => p.encoding !== COPY)) throw new Error(`GCF1: rectangle ${i} is a copy after an image`);
      if (r.length !== COPY_BYTES) throw new Error(`GCF1: rectangle ${i} is a copy of ${r.length} bytes`);
      const c = readFields(COPY_LAYOUT, packet, off);
      if (c.sx + r.w > header.width || c.sy + r.h > header.height) throw new Error(`GCF1: rectangle ${i} copies from outside the desktop`);
      rects.push({ x: r.x, y: r.y, w: r.w, h: r.h, encoding: COPY, sx: c.sx, sy: c.sy });
    } else if (r.encoding === PNG || r.encoding === JPEG) {
      rects.push({ x: r.x, y: r.y, w: r.w, h: r.h, encoding: r.encoding, bytes: packet.subarray(off, off + r.length) });
    } else {
      throw new Error(`GCF1: rectangle ${i} has unknown encoding ${r.encoding}`);
    }
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
    this.copyRects = 0;
    this.copyPixels = 0;
  }
  // A COPY record: the area at (sx, sy) moves to (x, y), pixels and coverage alike, as through
  // a temporary (a scroll overlaps itself).
  copy(r) {
    const { width } = this;
    const rows = [];
    for (let yy = 0; yy < r.h; yy++) {
      const from = (r.sy + yy) * width + r.sx;
      rows.push([Buffer.from(this.rgb.subarray(from * 3, (from + r.w) * 3)), this.covered.slice(from, from + r.w)]);
    }
    rows.forEach(([rgb, covered], yy) => {
      const to = (r.y + yy) * width + r.x;
      rgb.copy(this.rgb, to * 3);
      this.covered.set(covered, to);
    });
    this.copyRects++;
    this.copyPixels += r.w * r.h;
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
      if (r.encoding === COPY) {
        this.copy(r);
        continue;
      }
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

module.exports = { parseFrame, Canvas, MAGIC, PNG, JPEG, COPY, HEADER_BYTES, RECT_BYTES, COPY_BYTES };
