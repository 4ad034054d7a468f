'use strict';
// The console's memory, summed over its process tree (the console and every descendant: the
// RDP reader child it will have): VmRSS now and the highest VmHWM each process reached, and
// CPU time. A watchdog kills the whole tree above a cap, so an attack that makes the console
// allocate gigabytes cannot take the machine down with it (a real host's OOM killer would end
// it the same way); the kill is reported.
const fs = require('fs');
const P = require('../../lib/proc');

const kib = (status, key) => { const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status); return m ? Number(m[1]) : 0; };

class TreeMemory {
  constructor(rootPid, { capMiB, intervalMs = 25, onCap } = {}) {
    this.root = rootPid;
    this.pids = new Set([rootPid]);
    this.hwm = new Map(); // pid -> highest VmHWM seen (KiB)
    this.cpu = new Map(); // pid -> utime+stime (ticks)
    this.peakSumRss = 0;
    this.lastSumRss = 0;
    this.capKiB = capMiB ? capMiB * 1024 : 0;
    this.capped = null;
    this.onCap = onCap;
    this.ticks = 0;
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.sample();
  }

  refreshTree() {
    const seen = [...this.pids].filter(P.alive);
    for (let i = 0; i < seen.length; i++) for (const c of P.childrenOf(seen[i])) if (!seen.includes(c)) seen.push(c);
    for (const p of seen) this.pids.add(p);
  }

  sample() {
    if (this.ticks++ % 10 === 0) this.refreshTree(); // new descendants are rare: look every 10th tick
    let sum = 0;
    for (const pid of this.pids) {
      let status;
      try { status = fs.readFileSync(`/proc/${pid}/status`, 'latin1'); } catch { continue; }
      const rss = kib(status, 'VmRSS');
      sum += rss;
      this.hwm.set(pid, Math.max(this.hwm.get(pid) || 0, kib(status, 'VmHWM'), rss));
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        this.cpu.set(pid, Number(f[11]) + Number(f[12]));
      } catch { /* gone */ }
    }
    this.lastSumRss = sum;
    this.peakSumRss = Math.max(this.peakSumRss, sum);
    if (this.capKiB && sum > this.capKiB && !this.capped) {
      this.capped = { rss_mib: Math.round(sum / 1024), at: Date.now() };
      for (const pid of this.pids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      if (this.onCap) this.onCap(this.capped);
    }
  }

  // Peak of the tree: the sum of each process's own peak (VmHWM), an upper bound that is
  // exact for one process.
  peakMiB() { let s = 0; for (const v of this.hwm.values()) s += v; return Math.round(Math.max(s, this.peakSumRss) / 102.4) / 10; }
  nowMiB() { return Math.round(this.lastSumRss / 102.4) / 10; }
  cpuSeconds() { let t = 0; for (const v of this.cpu.values()) t += v; return t / 100; }
  processes() { return this.pids.size; }
  stop() { this.sample(); clearInterval(this.timer); }
}

module.exports = { TreeMemory };
