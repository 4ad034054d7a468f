'use strict';
// The tests' one panel client: acknowledges the console's frame packets like a panel does,
// composites them (lossless PNG rectangles and COPY records; a JPEG rectangle leaves its area
// unknown) onto a canvas, and optionally scans every decoded PNG rectangle for a run's
// sentinels. Lossy rectangles are counted but not scanned: their bytes are not the pixels'
// bytes. Used by the battery, the hostile lane, the live and interop lanes and the bench.
//   new PanelView(ws, { scanner, onFrame, marker })
// `scanner.scanRgb(rgb)` returns hits; `onFrame(view)` runs after each frame; `marker(view)`
// returns the frame's identity marker or null (kept once found, until a later frame finds
// another). A packet that does not parse is counted in `errors`, its message in `error`.
const { decodePng, markerAt } = require('./png');
const { parseFrame, Canvas } = require('./gcf1');

class PanelView {
  constructor(ws, { scanner = null, onFrame = null, marker = null } = {}) {
    this.ws = ws;
    this.scanner = scanner;
    this.onFrame = onFrame;
    this.readMarker = marker;
    this.frames = 0;
    this.pngRects = 0;
    this.jpegRects = 0;
    this.pngPixels = 0;
    this.jpegPixels = 0;
    this.hits = [];
    this.errors = 0;
    this.error = undefined;
    this.marker = null;
    this.canvas = null; // { width, height, rgb }
    this.covered = null; // a byte per pixel: known losslessly
    this.width = 0;
    this.height = 0;
    this.firstAt = 0;
    this.lastFrameAt = 0;
    this.view = new Canvas(decodePng);
    ws.on('binary', (msg) => this.onPacket(msg));
  }

  onPacket(msg) {
    try {
      const f = parseFrame(msg);
      if (!this.frames) this.firstAt = Date.now();
      this.frames++;
      this.lastFrameAt = Date.now();
      const scan = this.scanner ? (img) => { for (const hit of this.scanner.scanRgb(img.rgb)) this.hits.push({ ...hit, where: 'panel', frame: f.frame }); } : undefined;
      this.view.apply(f, scan);
      const v = this.view;
      Object.assign(this, { canvas: v.image(), covered: v.covered, width: v.width, height: v.height, pngRects: v.pngRects, jpegRects: v.jpegRects, pngPixels: v.pngPixels, jpegPixels: v.jpegPixels });
      if (this.readMarker) {
        const m = this.readMarker(this);
        if (m !== null && m !== undefined) this.marker = m;
      }
      if (this.onFrame) this.onFrame(this);
      this.ws.send({ type: 'frame_ack', frame: f.frame });
    } catch (e) {
      this.errors++;
      this.error = String(e);
    }
  }

  // The identity marker at (x, y) of what is shown, lossless or not (null before any frame).
  markerAt(x, y) { return this.canvas ? markerAt(this.canvas, x, y) : null; }
  // Every pixel of `box` ({x, y, w, h}) is known losslessly.
  coveredBox(box) {
    if (!this.covered) return false;
    for (let y = box.y; y < box.y + box.h; y++) {
      for (let x = box.x; x < box.x + box.w; x++) {
        if (x >= this.width || y >= this.height || !this.covered[y * this.width + x]) return false;
      }
    }
    return true;
  }
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

// The battery's and the hostile lane's identity marker: the 68x36 box at (8, 8), once every
// pixel of it arrived losslessly.
const IDENTITY_BOX = { x: 8, y: 8, w: 68, h: 36 };
const identityMarker = (view) => (view.coveredBox(IDENTITY_BOX) ? markerAt(view.canvas, 8, 8) : null);

module.exports = { PanelView, identityMarker, IDENTITY_BOX };
