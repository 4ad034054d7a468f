'use strict';
// PNG decoding (8-bit grey/RGB/RGBA, non-interlaced: what the console's libpng encoder
// writes) and the test guest's identity-marker decoder (tests/fixtures/testguest/README.md).
const zlib = require('zlib');

function decodePng(buf) {
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (buf.length < 8 || !buf.subarray(0, 8).equals(sig)) throw new Error('not a PNG');
  let off = 8, width = 0, height = 0, depth = 0, type = 0, interlace = 0;
  const idat = [];
  while (off + 8 <= buf.length) {
    const len = buf.readUInt32BE(off);
    const kind = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4); depth = data[8]; type = data[9]; interlace = data[12];
    } else if (kind === 'IDAT') idat.push(data);
    else if (kind === 'IEND') break;
    off += 12 + len;
  }
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[type];
  if (depth !== 8 || !channels || interlace) throw new Error(`unsupported PNG (depth ${depth}, type ${type})`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(width * height * 3);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels] : 0, b = prev[i], c = i >= channels ? prev[i - channels] : 0;
      let p = 0;
      if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else if (filter === 4) { const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c); p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      line[i] = (line[i] + p) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const s = x * channels, d = (y * width + x) * 3;
      if (channels < 3) { out[d] = out[d + 1] = out[d + 2] = line[s]; }
      else { out[d] = line[s]; out[d + 1] = line[s + 1]; out[d + 2] = line[s + 2]; }
    }
    prev = line;
  }
  return { width, height, rgb: out };
}

// img: {width, height, rgb}. Returns the marker value (uint32) at origin (ox, oy), or null.
function markerAt(img, ox, oy) {
  const px = (x, y) => { const i = (y * img.width + x) * 3; return [img.rgb[i], img.rgb[i + 1], img.rgb[i + 2]]; };
  const mean = (x, y, n) => {
    let r = 0, g = 0, b = 0;
    for (let dy = 0; dy < n; dy++) for (let dx = 0; dx < n; dx++) { const p = px(x + dx, y + dy); r += p[0]; g += p[1]; b += p[2]; }
    return [r / (n * n), g / (n * n), b / (n * n)];
  };
  if (ox + 68 > img.width || oy + 36 > img.height) return null;
  const magenta = ([r, g, b]) => r >= 130 && b >= 130 && g <= 120 && r - g >= 60;
  let hits = 0;
  for (let c = 0; c < 8; c++) {
    if (magenta(mean(ox + 2 + 8 * c + 3, oy, 2))) hits++;
    if (magenta(mean(ox + 2 + 8 * c + 3, oy + 34, 2))) hits++;
  }
  for (let r = 0; r < 4; r++) {
    if (magenta(mean(ox, oy + 2 + 8 * r + 3, 2))) hits++;
    if (magenta(mean(ox + 66, oy + 2 + 8 * r + 3, 2))) hits++;
  }
  if (hits < 20) return null;
  let value = 0;
  for (let k = 0; k < 32; k++) {
    const c = k % 8, r = Math.floor(k / 8);
    const [R, G, B] = mean(ox + 2 + 8 * c + 2, oy + 2 + 8 * r + 2, 4);
    const luma = (299 * R + 587 * G + 114 * B) / 1000;
    if (luma >= 97 && luma <= 159) return null;
    if (luma >= 160) value = (value | (1 << (31 - k))) >>> 0;
  }
  return value >>> 0;
}

const hex32 = (v) => '0x' + (v >>> 0).toString(16).padStart(8, '0');

// FNV-1a 64 of B, G, R of every pixel of an RGB image, as 16 hex digits: the digest the test
// guest reports of the picture a client must show (`windows_reference`). 16-bit limbs keep it
// exact in doubles: h * 0x100000001b3 = h * 0x1b3 + (h << 40), mod 2^64.
function digestBgr(rgb) {
  let h0 = 0x2325, h1 = 0x8422, h2 = 0x9ce4, h3 = 0xcbf2; // 0xcbf29ce484222325, low limb first
  for (let i = 0; i < rgb.length; i += 3) {
    for (let k = 2; k >= 0; k--) {
      h0 ^= rgb[i + k];
      let t0 = h0 * 0x1b3, t1 = h1 * 0x1b3, t2 = h2 * 0x1b3, t3 = h3 * 0x1b3;
      t2 += (h0 & 0xff) << 8;
      t3 += (h0 >>> 8) | ((h1 & 0xff) << 8);
      t1 += t0 >>> 16; h0 = t0 & 0xffff;
      t2 += t1 >>> 16; h1 = t1 & 0xffff;
      t3 += t2 >>> 16; h2 = t2 & 0xffff;
      h3 = t3 & 0xffff;
    }
  }
  return [h3, h2, h1, h0].map((x) => x.toString(16).padStart(4, '0')).join('');
}

module.exports = { decodePng, markerAt, hex32, digestBgr };
