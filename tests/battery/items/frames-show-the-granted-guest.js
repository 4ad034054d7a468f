'use strict';
// A received frame packet decodes (lossless rects) to the granted guest's identity marker.
// (TEST-135 item 3.)
const { hex32, MARKERS, report, check, sleep } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['frames'];
const gives = [];

async function run(ctx) {
  const { frames } = ctx;
  {
    const deadline = Date.now() + 20000;
    while (frames.marker === null && Date.now() < deadline && !frames.error) await sleep(100);
    report.sessions.main.frames = { received: frames.frames, png_rects: frames.pngRects, jpeg_rects: frames.jpegRects, size: `${frames.width}x${frames.height}`, marker: frames.marker === null ? null : hex32(frames.marker) };
    check(3, 'a received frame packet decodes (PNG rect) to the granted guest\'s marker', frames.marker === MARKERS.A, { ...report.sessions.main.frames, error: frames.error, expected: hex32(MARKERS.A) });
  }
};

module.exports = { needs, gives, run };
