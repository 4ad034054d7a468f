'use strict';
// The lane's panel: acknowledges the console's frame packets like a panel does, composites
// their lossless (PNG) rectangles onto a canvas, and scans every decoded rectangle for the
// run's sentinels. Lossy (JPEG) rectangles are counted but not scanned: their bytes are not
// the pixels' bytes. Packet layout: bridge/frames (magic, frame id, width, height, rects;
// each rect x, y, w, h, encoding, length, bytes).
const { decodePng, markerAt } = require('../../battery/lib/png');

class PanelView {
  constructor(ws, scanner) {
    this.ws = ws;
    this.scanner = scanner;
    this.frames = 0;
    this.pngRects = 0;
    this.jpegRects = 0;
    this.pngPixels = 0;
    this.jpegPixels = 0;
    this.hits = [];
    this.errors = 0;
    this.canvas = null; // { width, height, rgb }
    this.lastFrameAt = 0;
    ws.on('binary', (msg) => this.onPacket(msg));
  }

  onPacket(msg) {
    try {
      const frame = msg.readUInt32LE(4), width = msg.readUInt16LE(8), height = msg.readUInt16LE(10), rects = msg.readUInt16LE(12);
      this.frames++;
      this.lastFrameAt = Date.now();
      if (!this.canvas || this.canvas.width !== width || this.canvas.height !== height)
        this.canvas = { width, height, rgb: Buffer.alloc(width * height * 3) };
      let off = 14;
      for (let i = 0; i < rects; i++) {
        const x = msg.readUInt16LE(off), y = msg.readUInt16LE(off + 2), w = msg.readUInt16LE(off + 4), h = msg.readUInt16LE(off + 6);
        const enc = msg[off + 8], len = msg.readUInt32LE(off + 9);
        const bytes = msg.subarray(off + 13, off + 13 + len);
        off += 13 + len;
        if (enc !== 1) { this.jpegRects++; this.jpegPixels += w * h; continue; }
        const img = decodePng(bytes);
        this.pngRects++;
        this.pngPixels += img.width * img.height;
        for (const hit of this.scanner.scanRgb(img.rgb)) this.hits.push({ ...hit, where: 'panel', frame });
        const cw = Math.min(w, img.width, width - x);
        for (let yy = 0; yy < Math.min(h, img.height, height - y); yy++)
          img.rgb.copy(this.canvas.rgb, ((y + yy) * width + x) * 3, yy * img.width * 3, (yy * img.width + cw) * 3);
      }
      this.ws.send({ type: 'frame_ack', frame });
    } catch (e) {
      this.errors++;
      this.lastError = String(e);
    }
  }

  marker() { return this.canvas ? markerAt(this.canvas, 8, 8) : null; }
  snapshot() { return this.canvas ? Buffer.from(this.canvas.rgb) : null; }
  changedPixels(snapshot) {
    if (!snapshot || !this.canvas || snapshot.length !== this.canvas.rgb.length) return null;
    let n = 0;
    const a = this.canvas.rgb;
    for (let i = 0; i < a.length; i += 3) if (a[i] !== snapshot[i] || a[i + 1] !== snapshot[i + 1] || a[i + 2] !== snapshot[i + 2]) n++;
    return n;
  }
  // Every pixel of the rect has the colour '#rrggbb'.
  shows(rect, colour) {
    if (!this.canvas) return false;
    const c = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16));
    for (let y = rect.y; y < rect.y + rect.h; y++) {
      for (let x = rect.x; x < rect.x + rect.w; x++) {
        if (x >= this.canvas.width || y >= this.canvas.height) return false;
        const i = (y * this.canvas.width + x) * 3;
        if (this.canvas.rgb[i] !== c[0] || this.canvas.rgb[i + 1] !== c[1] || this.canvas.rgb[i + 2] !== c[2]) return false;
      }
    }
    return true;
  }
}

module.exports = { PanelView };
