'use strict';
// Needles for the private-memory items (16.5a): runs of a painted colour in the pixel layouts
// the console's buffers use, and slices of a capture (its PNG's compressed image data and its
// base64 text) — and how many distinct places a scan found them in.

// BGRX32 (the RDP GDI surface, frames; X either 0x00 or 0xff) and RGB24 (libpng's rows):
// `pixels` consecutive pixels of colour [r, g, b].
function colourRuns([r, g, b], pixels = 16) {
  const run = (px) => Buffer.concat(Array.from({ length: pixels }, () => Buffer.from(px)));
  return [
    { name: 'colour-bgrx-ff', bytes: run([b, g, r, 0xff]) },
    { name: 'colour-bgrx-00', bytes: run([b, g, r, 0x00]) },
    { name: 'colour-rgb', bytes: run([r, g, b]) },
  ];
}

// The concatenated IDAT data of a PNG.
function idatOf(png) {
  const parts = [];
  for (let off = 8; off + 8 <= png.length;) {
    const len = png.readUInt32BE(off);
    const kind = png.toString('latin1', off + 4, off + 8);
    if (kind === 'IDAT') parts.push(png.subarray(off + 8, off + 8 + len));
    if (kind === 'IEND') break;
    off += 12 + len;
  }
  return Buffer.concat(parts);
}

// Two slices of the capture's compressed image data and two of its base64 text, from a third
// and two thirds of the way in (not the PNG header, which any PNG of that size shares).
function captureSlices(png, base64, length = 48) {
  const idat = idatOf(png);
  const at = (n, f) => Math.max(0, Math.floor(n * f) - (length >> 1));
  const slices = [];
  for (const f of [1 / 3, 2 / 3]) {
    if (idat.length >= length * 3) slices.push({ name: `capture-idat@${f.toFixed(2)}`, bytes: Buffer.from(idat.subarray(at(idat.length, f), at(idat.length, f) + length)) });
    if (base64.length >= 192) slices.push({ name: `capture-base64@${f.toFixed(2)}`, bytes: Buffer.from(base64.slice(at(base64.length, f), at(base64.length, f) + 64), 'latin1') });
  }
  return { slices, idatBytes: idat.length };
}

// Hits (from proc.scanMemory) grouped into distinct runs per needle: a painted area matches a
// run needle at every pixel offset, which is one leftover buffer, not hundreds.
function runsByNeedle(hits, needles) {
  const out = {};
  for (const n of needles) {
    const addresses = hits.filter((h) => h.needle === n.name).map((h) => parseInt(h.address, 16)).sort((a, b) => a - b);
    let runs = 0, last = -Infinity;
    for (const a of addresses) { if (a > last + n.bytes.length) runs++; last = a; }
    out[n.name] = { matches: addresses.length, runs };
  }
  return out;
}

module.exports = { colourRuns, captureSlices, runsByNeedle, idatOf };
