'use strict';
// What NTLMv2 derives from a password, computed independently of the console (items 16.5b):
// NT hash = MD4(UTF-16LE(password)); NTOWFv2 = HMAC-MD5(NT hash, UTF-16LE(UPPER(user) + domain)).
// MD4 is written out here (RFC 1320): Node 20's OpenSSL 3 has it only in the legacy provider.
const crypto = require('crypto');

function md4(input) {
  const bytes = Buffer.from(input);
  const bitLength = bytes.length * 8;
  const padded = Buffer.alloc(Math.ceil((bytes.length + 9) / 64) * 64);
  bytes.copy(padded);
  padded[bytes.length] = 0x80;
  padded.writeUInt32LE(bitLength >>> 0, padded.length - 8);
  padded.writeUInt32LE(Math.floor(bitLength / 0x100000000), padded.length - 4);
  let h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
  const rotl = (x, s) => ((x << s) | (x >>> (32 - s))) >>> 0;
  const F = (x, y, z) => (x & y) | (~x & z);
  const G = (x, y, z) => (x & y) | (x & z) | (y & z);
  const H = (x, y, z) => x ^ y ^ z;
  for (let off = 0; off < padded.length; off += 64) {
    const X = Array.from({ length: 16 }, (_, i) => padded.readUInt32LE(off + i * 4));
    let [a, b, c, d] = h;
    const round = (fn, k, order, shifts) => {
      for (let i = 0; i < 16; i++) {
        const t = rotl((a + fn(b, c, d) + X[order[i]] + k) >>> 0, shifts[i % 4]);
        [a, b, c, d] = [d, t, b, c];
      }
    };
    round(F, 0, [...Array(16).keys()], [3, 7, 11, 19]);
    round(G, 0x5a827999, [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15], [3, 5, 9, 13]);
    round(H, 0x6ed9eba1, [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15], [3, 9, 11, 15]);
    h = [(h[0] + a) >>> 0, (h[1] + b) >>> 0, (h[2] + c) >>> 0, (h[3] + d) >>> 0];
  }
  const out = Buffer.alloc(16);
  h.forEach((v, i) => out.writeUInt32LE(v, i * 4));
  return out;
}

const ntHash = (password) => md4(Buffer.from(password, 'utf16le'));
const ntowfv2 = (password, user, domain) =>
  crypto.createHmac('md5', ntHash(password)).update(Buffer.from(user.toUpperCase() + domain, 'utf16le')).digest();

// Self-check against RFC 1320 and MS-NLMP 4.2.4.1.1, so a wrong MD4 cannot make the scan vacuous.
function selfTest() {
  return md4(Buffer.from('abc')).toString('hex') === 'a448017aaf21d8525fc10ae87aa6729d' &&
    md4(Buffer.from('12345678901234567890123456789012345678901234567890123456789012345678901234567890')).toString('hex') === 'e33b4ddc9c38f2199c3e7b164fcc0536' &&
    ntowfv2('Password', 'User', 'Domain').toString('hex') === '0c868a403bfd7a93a3001ef22ef02e3f';
}

module.exports = { md4, ntHash, ntowfv2, selfTest };
