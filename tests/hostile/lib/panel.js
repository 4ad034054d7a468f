'use strict';
// The lane's panel: acknowledges the console's frame packets like a panel does, composites
// their lossless (PNG) rectangles onto a canvas, and scans every decoded rectangle for the
// run's sentinels. Lossy (JPEG) rectangles are counted but not scanned: their bytes are not
// the pixels' bytes. Packets are read by the lanes' one GCF1 reader (battery/lib/gcf1.js).
const { decodePng, markerAt } = require('../../battery/lib/png');
const { parseFrame, Canvas } = require('../../battery/lib/gcf1');

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
    this.view = new Canvas(decodePng);
    this.lastFrameAt = 0;
    ws.on('binary', (msg) => this.onPacket(msg));
  }

  onPacket(msg) {
    try {
      const f = parseFrame(msg);
      this.frames++;
      this.lastFrameAt = Date.now();
      this.view.apply(f, (img) => {
        for (const hit of this.scanner.scanRgb(img.rgb)) this.hits.push({ ...hit, where: 'panel', frame: f.frame });
      });
      this.canvas = this.view.image();
      Object.assign(this, { pngRects: this.view.pngRects, jpegRects: this.view.jpegRects, pngPixels: this.view.pngPixels, jpegPixels: this.view.jpegPixels });
      this.ws.send({ type: 'frame_ack', frame: f.frame });
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
