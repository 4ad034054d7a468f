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
    return { rss: kb(s, 'VmRSS') / 1024, hwm: kb(s, 'VmHWM') / 1024, pss: kb(r, 'Pss') / 1024, anon: kb(s, 'RssAnon') / 1024 };
  } catch { return null; }
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
class Meter {
  constructor(pid, intervalMs = 250) {
    this.pid = pid;
    this.t0 = nowNs();
    this.cpu0 = cpuSeconds(pid);
    this.rss = [];
    const sample = () => { const m = memory(pid); if (m) this.rss.push({ t_ms: msBetween(this.t0, nowNs()), ...m }); };
    sample();
    this.timer = setInterval(sample, intervalMs);
  }
  stop() {
    clearInterval(this.timer);
    const m = memory(this.pid);
    if (m) this.rss.push({ t_ms: msBetween(this.t0, nowNs()), ...m });
    const seconds = msBetween(this.t0, nowNs()) / 1000;
    const cpu1 = cpuSeconds(this.pid);
    return {
      seconds,
      cpuPerSecond: cpu1 !== null && this.cpu0 !== null ? (cpu1 - this.cpu0) / seconds : null,
      rssMax: Math.max(...this.rss.map((r) => r.rss)),
      pssMax: Math.max(...this.rss.map((r) => r.pss)),
      anonMax: Math.max(...this.rss.map((r) => r.anon)),
      hwm: this.rss.length ? this.rss[this.rss.length - 1].hwm : null,
      samples: this.rss,
    };
  }
}

module.exports = { cpuSeconds, memory, nowNs, msBetween, summary, Meter };
