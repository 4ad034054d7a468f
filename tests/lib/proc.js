'use strict';
// Child processes that speak JSON lines, and what /proc says about a running process.
const fs = require('fs');
const { spawn } = require('child_process');
const { EventEmitter } = require('events');

class LineProc extends EventEmitter {
  constructor(file, args, { env, cwd } = {}) {
    super();
    this.events = [];
    this.stderr = '';
    this.stdoutText = '';
    this.exit = null; // {code, signal}
    this.child = spawn(file, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.pid = this.child.pid;
    let partial = '';
    this.child.stdout.on('data', (d) => {
      this.stdoutText += d.toString('utf8');
      partial += d.toString('utf8');
      let nl;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        if (!line.trim()) continue;
        let e;
        try { e = JSON.parse(line); } catch { e = { unparsable: line }; }
        e.t_ms = Date.now();
        this.events.push(e);
        this.emit('event', e);
      }
    });
    this.child.stderr.on('data', (d) => { this.stderr += d.toString('utf8'); });
    this.child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => { this.exit = { code, signal }; resolve(this.exit); this.emit('exit', this.exit); });
    });
  }

  write(line) { if (this.child.stdin.writable) this.child.stdin.write(line.endsWith('\n') ? line : line + '\n'); }
  send(object) { this.write(JSON.stringify(object)); }
  endInput() { this.child.stdin.end(); }

  waitFor(pred, timeoutMs, from = 0) {
    return new Promise((resolve, reject) => {
      const found = this.events.slice(from).find(pred);
      if (found) { resolve(found); return; }
      const timer = setTimeout(() => { cleanup(); reject(new Error(`timeout after ${timeoutMs} ms`)); }, timeoutMs);
      const onEvent = (e) => { if (pred(e)) { cleanup(); resolve(e); } };
      const onExit = () => { setImmediate(() => { cleanup(); const f = this.events.slice(from).find(pred); f ? resolve(f) : reject(new Error(`process exited (${JSON.stringify(this.exit)})`)); }); };
      const cleanup = () => { clearTimeout(timer); this.off('event', onEvent); this.off('exit', onExit); };
      this.on('event', onEvent);
      if (this.exit) onExit(); else this.on('exit', onExit);
    });
  }

  async waitExit(timeoutMs) {
    if (this.exit) return this.exit;
    let timer;
    const t = new Promise((resolve) => { timer = setTimeout(() => resolve(null), timeoutMs); });
    const r = await Promise.race([this.exited, t]);
    clearTimeout(timer);
    return r;
  }

  kill(signal = 'SIGTERM') { try { process.kill(this.pid, signal); } catch { /* gone */ } }
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

// Processes whose parent is `pid` (from /proc/*/stat).
function childrenOf(pid) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) out.push(Number(d));
    } catch { /* raced */ }
  }
  return out;
}

// Processes whose command line contains `needle` (a run id, say).
function processesMentioning(needle) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'latin1');
      if (cmd.includes(needle)) out.push({ pid: Number(d), cmd: cmd.split('\0')[0] });
    } catch { /* raced */ }
  }
  return out;
}

function hexToIpv4(hex) {
  const n = parseInt(hex, 16);
  return [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255].join('.');
}

function hexToIpv6(hex) {
  // /proc prints four 32-bit words, each in host (little-endian) order.
  const bytes = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    for (let i = 3; i >= 0; i--) bytes.push(parseInt(word.slice(i * 2, i * 2 + 2), 16));
  }
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255)
    return '::ffff:' + bytes.slice(12).join('.');
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1) return '::1';
  if (bytes.every((b) => b === 0)) return '::';
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(':');
}

const TCP_STATES = { '01': 'ESTABLISHED', '02': 'SYN_SENT', '06': 'TIME_WAIT', '08': 'CLOSE_WAIT', '0A': 'LISTEN', '07': 'CLOSE' };

// Every inet socket the process holds, with its addresses (from its own network namespace).
function inetSocketsOf(pid) {
  const inodes = new Set();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  const sockets = [];
  for (const [file, v6, proto] of [['tcp', false, 'tcp'], ['tcp6', true, 'tcp'], ['udp', false, 'udp'], ['udp6', true, 'udp']]) {
    let text = '';
    try { text = fs.readFileSync(`/proc/${pid}/net/${file}`, 'latin1'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9])) continue;
      const [la, lp] = f[1].split(':'), [ra, rp] = f[2].split(':');
      const addr = v6 ? hexToIpv6 : hexToIpv4;
      sockets.push({ proto: proto + (v6 ? '6' : ''), local: addr(la), localPort: parseInt(lp, 16), remote: addr(ra), remotePort: parseInt(rp, 16), state: TCP_STATES[f[3]] || f[3] });
    }
  }
  return { socketFds: inodes.size, inet: sockets };
}

const isLoopback = (a) => a === '127.0.0.1' || a === '::1' || a === '::ffff:127.0.0.1' || /^127\./.test(a) || /^::ffff:127\./.test(a);

// Reads every readable mapping of `pid` through /proc/PID/mem (root) and reports where the
// needles occur. Mappings larger than maxMapping (ASan's shadow, terabytes of reserved
// zero pages) are listed as skipped, never silently dropped.
function scanMemory(pid, needles, { maxMapping = 1 << 30, asanShadow = false } = {}) {
  const maps = fs.readFileSync(`/proc/${pid}/maps`, 'latin1').trim().split('\n').map((l) => {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(l);
    return m && { start: parseInt(m[1], 16), end: parseInt(m[2], 16), perms: m[3], path: m[4] || '[anonymous]', text: l };
  }).filter(Boolean);
  const fd = fs.openSync(`/proc/${pid}/mem`, 'r');
  const hits = [], skipped = [], unreadable = [];
  let bytesRead = 0, regions = 0;
  const chunk = 1 << 20;
  const longest = Math.max(...needles.map((n) => n.bytes.length));
  const buf = Buffer.alloc(chunk + longest);
  try {
    for (const m of maps) {
      if (m.perms[0] !== 'r') continue;
      const size = m.end - m.start;
      if (size > maxMapping || m.path === '[vvar]' || m.path === '[vsyscall]') {
        skipped.push({ range: `${m.start.toString(16)}-${m.end.toString(16)}`, size, perms: m.perms, path: m.path });
        continue;
      }
      regions++;
      for (let pos = m.start; pos < m.end; pos += chunk) {
        const want = Math.min(chunk + longest, m.end - pos);
        let got = 0;
        try { got = fs.readSync(fd, buf, 0, want, pos); } catch (e) { unreadable.push({ at: pos.toString(16), path: m.path, error: e.code }); continue; }
        bytesRead += Math.min(got, chunk);
        const view = buf.subarray(0, got);
        for (const n of needles) {
          let i = -1;
          while ((i = view.indexOf(n.bytes, i + 1)) >= 0) {
            if (i >= chunk) break; // counted in the next chunk
            const addr = pos + i;
            hits.push({ needle: n.name, address: '0x' + addr.toString(16), mapping: `${m.start.toString(16)}-${m.end.toString(16)} ${m.perms} ${m.path}`, offsetInMapping: addr - m.start });
          }
        }
      }
    }
    // ASan (x86_64): shadow byte of address a at (a >> 3) + 0x7fff8000. 0x00-0x07: the bytes
    // belong to a live allocation; 0xfd: freed (held in ASan's quarantine, not scrubbed);
    // 0xfa/0xfb: redzones. Tells a live copy from a freed one that nobody wiped.
    if (asanShadow) {
      const sb = Buffer.alloc(1);
      for (const h of hits) {
        const a = parseInt(h.address, 16);
        try {
          fs.readSync(fd, sb, 0, 1, Math.floor(a / 8) + 0x7fff8000);
          const v = sb[0];
          h.asanShadow = '0x' + v.toString(16).padStart(2, '0');
          h.state = v <= 7 ? 'live allocation' : v === 0xfd ? 'freed, not wiped (ASan quarantine)' : v === 0xfa || v === 0xfb ? 'redzone' : 'other';
        } catch (e) { h.state = `shadow unreadable (${e.code})`; }
      }
    }
  } finally { fs.closeSync(fd); }
  return { hits, skipped, unreadable: unreadable.slice(0, 20), unreadableCount: unreadable.length, bytesRead, regions };
}

// strace -f -y output: every open/openat/creat/mkdir/rename/link/symlink, with the path
// resolved through the -y annotation of the directory fd.
function parseStrace(text) {
  const ops = [];
  const str = '"((?:[^"\\\\]|\\\\.)*)"';
  const dirfd = '(AT_FDCWD|\\d+)(?:<([^>]*)>)?';
  const patterns = [
    ['openat', new RegExp(`openat\\(${dirfd}, ${str}, ([A-Z_|0-9]+)`)],
    ['open', new RegExp(`\\bopen\\(${str}, ([A-Z_|0-9]+)`)],
    ['creat', new RegExp(`\\bcreat\\(${str}`)],
    ['mkdir', new RegExp(`\\bmkdir\\(${str}`)],
    ['mkdirat', new RegExp(`mkdirat\\(${dirfd}, ${str}`)],
    ['rename', new RegExp(`\\brename(?:at2?)?\\((?:${dirfd}, )?${str}`)],
    ['link', new RegExp(`\\b(?:sym)?link(?:at)?\\(`)],
  ];
  for (const line of text.split('\n')) {
    if (line.includes('resumed>')) continue;
    const r = /\s= (-?\d+)(?: (E[A-Z0-9]+))?[^=]*$/.exec(line);
    const result = r ? (r[2] || r[1]) : '';
    let m;
    if ((m = patterns[0][1].exec(line))) {
      const base = m[2] || (m[1] === 'AT_FDCWD' ? '' : `fd${m[1]}`);
      const p = m[3].startsWith('/') || !base ? m[3] : `${base}/${m[3]}`;
      ops.push({ op: 'openat', path: p, flags: m[4], result });
    } else if ((m = patterns[1][1].exec(line))) ops.push({ op: 'open', path: m[1], flags: m[2], result });
    else if ((m = patterns[2][1].exec(line))) ops.push({ op: 'creat', path: m[1], flags: 'O_CREAT|O_WRONLY', result });
    else if ((m = patterns[4][1].exec(line))) ops.push({ op: 'mkdir', path: m[3].startsWith('/') ? m[3] : `${m[2] || ''}/${m[3]}`, flags: '', result });
    else if ((m = patterns[3][1].exec(line))) ops.push({ op: 'mkdir', path: m[1], flags: '', result });
    else if (/\brename/.test(line) || /\b(sym)?link(at)?\(/.test(line)) ops.push({ op: 'rename/link', path: line.trim().slice(0, 300), flags: '', result });
  }
  return ops;
}

const writes = (flags) => /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/.test(flags);

module.exports = { LineProc, alive, childrenOf, processesMentioning, inetSocketsOf, isLoopback, scanMemory, parseStrace, writes };
