'use strict';
// MD4 (RFC 1320), for the NT hash of the guest's per-run RDP password (Node's OpenSSL 3
// has MD4 only in the legacy provider). The NT hash is MD4 over the UTF-16LE password.
function md4(input) {
  const msg = Buffer.from(input);
  const bitLen = msg.length * 8;
  const padLen = ((msg.length + 8) >> 6 << 6) + 64;
  const buf = Buffer.alloc(padLen);
  msg.copy(buf);
  buf[msg.length] = 0x80;
  buf.writeUInt32LE(bitLen >>> 0, padLen - 8);
  buf.writeUInt32LE(Math.floor(bitLen / 0x100000000), padLen - 4);
  let a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;
  const rotl = (x, n) => (x << n) | (x >>> (32 - n));
  const F = (x, y, z) => (x & y) | (~x & z);
  const G = (x, y, z) => (x & y) | (x & z) | (y & z);
  const H = (x, y, z) => x ^ y ^ z;
  for (let off = 0; off < padLen; off += 64) {
    const X = [];
    for (let i = 0; i < 16; i++) X.push(buf.readUInt32LE(off + i * 4));
    const [aa, bb, cc, dd] = [a, b, c, d];
    for (const i of [0, 4, 8, 12]) {
      a = rotl((a + F(b, c, d) + X[i]) | 0, 3);
      d = rotl((d + F(a, b, c) + X[i + 1]) | 0, 7);
      c = rotl((c + F(d, a, b) + X[i + 2]) | 0, 11);
      b = rotl((b + F(c, d, a) + X[i + 3]) | 0, 19);
    }
    for (const i of [0, 1, 2, 3]) {
      a = rotl((a + G(b, c, d) + X[i] + 0x5a827999) | 0, 3);
      d = rotl((d + G(a, b, c) + X[i + 4] + 0x5a827999) | 0, 5);
      c = rotl((c + G(d, a, b) + X[i + 8] + 0x5a827999) | 0, 9);
      b = rotl((b + G(c, d, a) + X[i + 12] + 0x5a827999) | 0, 13);
    }
    for (const i of [0, 2, 1, 3]) {
      a = rotl((a + H(b, c, d) + X[i] + 0x6ed9eba1) | 0, 3);
      d = rotl((d + H(a, b, c) + X[i + 8] + 0x6ed9eba1) | 0, 9);
      c = rotl((c + H(d, a, b) + X[i + 4] + 0x6ed9eba1) | 0, 11);
      b = rotl((b + H(c, d, a) + X[i + 12] + 0x6ed9eba1) | 0, 15);
    }
    a = (a + aa) | 0; b = (b + bb) | 0; c = (c + cc) | 0; d = (d + dd) | 0;
  }
  const out = Buffer.alloc(16);
  [a, b, c, d].forEach((v, i) => out.writeInt32LE(v, i * 4));
  return out;
}

const ntHashHex = (password) => md4(Buffer.from(password, 'utf16le')).toString('hex').toUpperCase();

module.exports = { md4, ntHashHex };
