'use strict';
// A minimal RFC 6455 client for the console's loopback panel socket: enough to drive the
// panel protocol black-box (text out, text and binary in) with full control over the
// handshake headers (Origin present or absent), which the built-in WebSocket does not give.
const net = require('net');
const crypto = require('crypto');
const { EventEmitter } = require('events');

class WsClient extends EventEmitter {
  constructor(socket) {
    super();
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    this.fragments = [];
    this.fragmentOpcode = 0;
    this.closed = false;
    this.texts = []; // every text message, parsed
    socket.on('data', (d) => this.feed(d));
    socket.on('close', () => { this.closed = true; this.emit('close'); });
    socket.on('error', () => {});
  }

  // Resolves {ws} on 101, or {status} with the HTTP status line when the handshake is refused.
  static connect(port, { origin } = {}) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      const key = crypto.randomBytes(16).toString('base64');
      let head = Buffer.alloc(0);
      const timer = setTimeout(() => { socket.destroy(); reject(new Error('handshake timeout')); }, 30000); // generous: a loaded machine (the console runs under ASan)
      socket.once('connect', () => {
        const lines = [`GET / HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
          `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13'];
        if (origin) lines.push(`Origin: ${origin}`);
        socket.write(lines.join('\r\n') + '\r\n\r\n');
      });
      const onData = (d) => {
        head = Buffer.concat([head, d]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        clearTimeout(timer);
        const status = head.subarray(0, head.indexOf('\r\n')).toString();
        if (!/^HTTP\/1\.1 101/.test(status)) { socket.destroy(); resolve({ status }); return; }
        const ws = new WsClient(socket);
        const rest = head.subarray(end + 4);
        if (rest.length) ws.feed(rest);
        resolve({ ws });
      };
      socket.on('data', onData);
      socket.once('error', (e) => { clearTimeout(timer); reject(e); });
    });
  }

  feed(data) {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) return;
      const fin = (b[0] & 0x80) !== 0;
      const opcode = b[0] & 0x0f;
      const masked = (b[1] & 0x80) !== 0;
      let len = b[1] & 0x7f;
      let off = 2;
      if (len === 126) { if (b.length < 4) return; len = b.readUInt16BE(2); off = 4; }
      else if (len === 127) { if (b.length < 10) return; len = Number(b.readBigUInt64BE(2)); off = 10; }
      const maskOff = off;
      if (masked) off += 4;
      if (b.length < off + len) return;
      let payload = Buffer.from(b.subarray(off, off + len));
      if (masked) for (let i = 0; i < len; i++) payload[i] ^= b[maskOff + (i % 4)];
      this.buffer = b.subarray(off + len);
      if (opcode === 8) { this.closeCode = len >= 2 ? payload.readUInt16BE(0) : 0; this.socket.end(); continue; }
      if (opcode === 9) { this.sendFrame(10, payload); continue; }
      if (opcode === 10) continue;
      if (opcode !== 0) { this.fragmentOpcode = opcode; this.fragments = []; }
      this.fragments.push(payload);
      if (!fin) continue;
      const message = Buffer.concat(this.fragments);
      this.fragments = [];
      if (this.fragmentOpcode === 1) {
        let parsed;
        try { parsed = JSON.parse(message.toString('utf8')); } catch { parsed = { unparsable: true }; }
        this.texts.push(parsed);
        this.emit('text', parsed);
      } else {
        this.emit('binary', message);
      }
    }
  }

  sendFrame(opcode, payload) {
    if (this.closed) return;
    const mask = crypto.randomBytes(4);
    const len = payload.length;
    const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len])
      : len < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff])
        : (() => { const h = Buffer.alloc(10); h[0] = 0x80 | opcode; h[1] = 0x80 | 127; h.writeBigUInt64BE(BigInt(len), 2); return h; })();
    const body = Buffer.from(payload);
    for (let i = 0; i < len; i++) body[i] ^= mask[i % 4];
    this.socket.write(Buffer.concat([head, mask, body]));
  }

  send(object) { this.sendFrame(1, Buffer.from(JSON.stringify(object), 'utf8')); }

  // Several messages in ONE TCP write, so the console reads them in the same event-loop turn.
  sendBurst(objects) {
    const frames = [];
    for (const o of objects) {
      const payload = Buffer.from(JSON.stringify(o), 'utf8');
      const mask = crypto.randomBytes(4);
      const len = payload.length;
      const head = len < 126 ? Buffer.from([0x81, 0x80 | len]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff]);
      for (let i = 0; i < len; i++) payload[i] ^= mask[i % 4];
      frames.push(head, mask, payload);
    }
    this.socket.write(Buffer.concat(frames));
  }

  // The first text message (from index `from`) matching pred.
  waitText(pred, timeoutMs, from = 0) {
    return new Promise((resolve, reject) => {
      const found = this.texts.slice(from).find(pred);
      if (found) { resolve(found); return; }
      const timer = setTimeout(() => { cleanup(); reject(new Error('panel: timeout waiting for a message')); }, timeoutMs);
      const onText = (t) => { if (pred(t)) { cleanup(); resolve(t); } };
      const onClose = () => { cleanup(); reject(new Error('panel: socket closed')); };
      const cleanup = () => { clearTimeout(timer); this.off('text', onText); this.off('close', onClose); };
      this.on('text', onText);
      this.on('close', onClose);
    });
  }

  waitClose(timeoutMs) {
    return new Promise((resolve) => {
      if (this.closed) { resolve(true); return; }
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.once('close', () => { clearTimeout(timer); resolve(true); });
    });
  }

  close() { this.socket.destroy(); }
}

module.exports = { WsClient };
