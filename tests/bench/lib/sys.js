'use strict';
// What /proc says about a process (CPU seconds, RSS) and small statistics helpers.
const fs = require('fs');

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux x86-64

// utime + stime of `pid` in seconds (children not included), or null when it is gone.
function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch { return null; }
}

// {rss, hwm, pss, anon} in MiB from /proc/PID/status and smaps_rollup, or null. PSS splits
// shared pages (libraries, page cache) among the processes mapping them; anon is private.
function memory(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
    const r = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1');
    const kb = (text, k) => Number((text.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm')) || [])[1] || 0);
    // GC_BENCH_SMAPS_DIR: each sample's whole smaps too, to see which mappings make up the PSS.
    if (process.env.GC_BENCH_SMAPS_DIR) fs.writeFileSync(`${process.env.GC_BENCH_SMAPS_DIR}/${pid}-${Date.now()}.smaps`, fs.readFileSync(`/proc/${pid}/smaps`, 'latin1'));
    return { rss: kb(s, 'VmRSS') / 1024, hwm: kb(s, 'VmHWM') / 1024, pss: kb(r, 'Pss') / 1024, anon: kb(s, 'RssAnon') / 1024 };
  } catch { return null; }
}

// The console's RDP reader (guest-console-rdp, issue 24's process split): the console's child
// of that name, or null. Read from /proc/PID/task/*/children (every thread's children).
function readerOf(pid) {
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const kids = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').trim().split(/\s+/).filter(Boolean);
      for (const k of kids) {
        const comm = fs.readFileSync(`/proc/${k}/comm`, 'latin1').trim();
        // comm is cut at 15 characters ("guest-console-r"); a wrapper (GC_BENCH_WRAP's heaptrack) differs.
        if (comm.startsWith('guest-console-r')) return Number(k);
      }
    }
  } catch { /* gone */ }
  return null;
}

const nowNs = () => process.hrtime.bigint(); // CLOCK_MONOTONIC, like the guest's and the panel's t_ns
const msBetween = (a, b) => Number(BigInt(b) - BigInt(a)) / 1e6;

function summary(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return { n: 0, median: null, p99: null, min: null, max: null };
  const q = (p) => v[Math.min(v.length - 1, Math.max(0, Math.ceil(p * v.length) - 1))];
  const median = v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  return { n: v.length, median, p99: q(0.99), min: v[0], max: v[v.length - 1] };
}

// Samples a process's CPU and memory while a phase runs: cpu s/s over the window, RSS max.
// `withReader`: the console's RDP reader too (readerOf), sampled at the same instants; then
// stop() also reports `reader` and `both` (the per-sample sum of the two processes), which
// is what one console costs the host (issue 27's targets are per console, both processes).
class Meter {
  constructor(pid, intervalMs = 250, { withReader = false } = {}) {
    this.pid = pid;
    this.t0 = nowNs();
    this.cpu0 = cpuSeconds(pid);
    this.rss = [];
    this.readerPid = withReader ? readerOf(pid) : null;
    this.readerCpu0 = this.readerPid ? cpuSeconds(this.readerPid) : null;
    this.readerRss = [];
    this.bothRss = [];
    const sample = () => {
      const t_ms = msBetween(this.t0, nowNs());
      const m = memory(pid);
      if (m) this.rss.push({ t_ms, ...m });
      if (!this.readerPid) return;
      const r = memory(this.readerPid);
      if (r) this.readerRss.push({ t_ms, ...r });
      if (m && r) this.bothRss.push({ t_ms, rss: m.rss + r.rss, pss: m.pss + r.pss, anon: m.anon + r.anon, hwm: m.hwm + r.hwm });
    };
    sample();
    this.timer = setInterval(sample, intervalMs);
  }
  stop() {
    clearInterval(this.timer);
    const m = memory(this.pid);
    if (m) this.rss.push({ t_ms: msBetween(this.t0, nowNs()), ...m });
    if (this.readerPid) {
      const r = memory(this.readerPid);
      if (r) this.readerRss.push({ t_ms: msBetween(this.t0, nowNs()), ...r });
      if (m && r) this.bothRss.push({ t_ms: msBetween(this.t0, nowNs()), rss: m.rss + r.rss, pss: m.pss + r.pss, anon: m.anon + r.anon, hwm: m.hwm + r.hwm });
    }
    const seconds = msBetween(this.t0, nowNs()) / 1000;
    const cpu1 = cpuSeconds(this.pid);
    const out = { seconds, cpuPerSecond: cpu1 !== null && this.cpu0 !== null ? (cpu1 - this.cpu0) / seconds : null, ...maxima(this.rss) };
    if (this.readerPid) {
      const rc1 = cpuSeconds(this.readerPid);
      const readerCpu = rc1 !== null && this.readerCpu0 !== null ? (rc1 - this.readerCpu0) / seconds : null;
      out.reader = { pid: this.readerPid, cpuPerSecond: readerCpu, ...maxima(this.readerRss) };
      out.both = { cpuPerSecond: readerCpu !== null && out.cpuPerSecond !== null ? readerCpu + out.cpuPerSecond : null, ...maxima(this.bothRss) };
    }
    return out;
  }
}

// One console is two processes: `guest-console open` and the RDP reader it spawns
// (guest-console-rdp, its child). Every figure the suite reports for "the console" is both,
// summed sample by sample (a console measured without its reader leaves out FreeRDP's
// decoding and the reader's memory). stop() returns the sum (cpuPerSecond, rssMax, pssMax,
// anonMax, hwm, samples) and, beside it, `console` and `reader` as measured alone;
// `readerFound` is false when the console had no reader at the start (then the sum is the
// console alone, and the caller says so).
class ConsoleMeter {
  constructor(pid, intervalMs = 250) {
    this.meter = new Meter(pid, intervalMs, { withReader: true });
  }
  stop() {
    const m = this.meter.stop();
    const { both, reader, ...alone } = m;
    if (!reader) return { ...alone, console: alone, reader: null, readerFound: false };
    return { seconds: m.seconds, ...both, console: alone, reader, readerFound: true };
  }
}

// The maxima of a series of memory() samples (MiB), and the series itself.
function maxima(samples) {
  const max = (k) => (samples.length ? Math.max(...samples.map((r) => r[k])) : NaN);
  return { rssMax: max('rss'), pssMax: max('pss'), anonMax: max('anon'), hwm: samples.length ? samples[samples.length - 1].hwm : null, samples };
}

module.exports = { cpuSeconds, memory, readerOf, nowNs, msBetween, summary, Meter, ConsoleMeter };
