'use strict';
// Finds a run's sentinels (user name, domain, host names, the VM's UUID, "NTLMSSP", "TERMSRV")
// as bytes in decoded pixels. A leak copies heap bytes into BGRX pixels verbatim, and what a
// decoded image keeps of a pixel is R, G, B: every fourth byte of the heap run (the X byte) is
// gone and the other three are reordered. So each needle is searched as it would survive that,
// at each of the four alignments it can have against the pixel grid, and also as plain bytes.

// needles: [{ name, bytes: Buffer }]
class SentinelScanner {
  constructor(needles) {
    this.variants = [];
    for (const n of needles) {
      for (let phase = 0; phase < 4; phase++) {
        // The heap byte at offset (phase + i) within its pixel survives unless it is the X byte.
        const kept = [];
        for (let i = 0; i < n.bytes.length; i++) if ((phase + i) % 4 !== 3) kept.push(n.bytes[i]);
        // Where the first kept byte lands within a 3-byte B,G,R pixel.
        const start = phase === 3 ? 0 : phase;
        if (kept.length >= 5) this.variants.push({ name: n.name, phase, start, bytes: Buffer.from(kept) });
      }
      if (n.bytes.length >= 5) this.variants.push({ name: n.name, phase: 'plain', start: -1, bytes: n.bytes });
    }
  }

  // rgb: R,G,B per pixel (as decodePng returns). Returns [{needle, phase, pixel}].
  scanRgb(rgb) {
    const bgr = Buffer.allocUnsafe(rgb.length);
    for (let i = 0; i + 2 < rgb.length; i += 3) { bgr[i] = rgb[i + 2]; bgr[i + 1] = rgb[i + 1]; bgr[i + 2] = rgb[i]; }
    const hits = [];
    for (const v of this.variants) {
      const hay = v.phase === 'plain' ? rgb : bgr;
      for (let at = hay.indexOf(v.bytes); at >= 0; at = hay.indexOf(v.bytes, at + 1)) {
        if (v.start < 0 || at % 3 === v.start) hits.push({ needle: v.name, phase: v.phase, pixel: Math.floor(at / 3) });
      }
      if (v.phase === 'plain') {
        for (let at = bgr.indexOf(v.bytes); at >= 0; at = bgr.indexOf(v.bytes, at + 1)) hits.push({ needle: v.name, phase: 'plain-bgr', pixel: Math.floor(at / 3) });
      }
    }
    return hits;
  }
}

// The needles of a run: each text in UTF-8 and UTF-16LE (NTLM and Kerberos carry names in both).
function needlesFor(texts) {
  const out = [];
  for (const [name, text] of Object.entries(texts)) {
    if (!text || text.length < 5) continue;
    out.push({ name: `${name}-utf8`, bytes: Buffer.from(text, 'utf8') });
    out.push({ name: `${name}-utf16le`, bytes: Buffer.from(text, 'utf16le') });
  }
  return out;
}

module.exports = { SentinelScanner, needlesFor };
