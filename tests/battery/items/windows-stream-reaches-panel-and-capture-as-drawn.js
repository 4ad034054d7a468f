'use strict';
// The Windows-shaped stream (gc-test-guest --graphics windows: ClearCodec glyphs and bands,
// progressive first passes and both upgrades, SurfaceToSurface, SolidFill, the cache) reaches
// the panel as the guest drew it: after each workload, once the guest reports its reference
// picture, the panel's canvas (every lossy area refined) has the reference's digest; then the
// strict lock, and the capture the model gets has it too.
// (issue 34 point 1.)
const { path, crypto, report, check, sleep, WORK, decodePng, fwd, writeNode, startGuest, evidenceOf, lockSessionOn } = require('../lib/harness');
const { digestBgr } = require('../../lib/png');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = [];
const gives = [];

const WORKLOADS = ['typing', 'scroll', 'drag', 'video'];

async function waitUntil(pred, ms, every = 50) {
  const by = Date.now() + ms;
  while (Date.now() < by) {
    if (pred()) return true;
    await sleep(every);
  }
  return pred();
}

// The canvas's digest once every pixel is known losslessly and no frame came for `quietMs`,
// until it equals `want` or `ms` passed; the last digest seen.
async function panelDigest(frames, want, ms, quietMs = 300) {
  let digest = null;
  await waitUntil(() => {
    if (!frames.canvas || Date.now() - frames.lastFrameAt < quietMs || !frames.covered.every(Boolean)) return false;
    digest = digestBgr(frames.canvas.rgb);
    return digest === want;
  }, ms, 100);
  return digest;
}

async function run() {
  const W = await startGuest('W', { certDir: path.join(WORK, 'certs/w'), size: { width: 1024, height: 768 }, args: ['--graphics', 'windows'] });
  const WVM = { name: 'gc-battery-windows', uuid: crypto.randomUUID() };
  const wBase = { uri: writeNode('windows.xml', [{ ...WVM, devices: fwd(W.port) }]), uuid: WVM.uuid, name: WVM.name, port: W.port, cert: W.cert };
  const { s, mcp, frames } = await lockSessionOn(W, wBase)('windows');

  const rows = [];
  let last = null;
  for (const mode of WORKLOADS) {
    const f0 = frames.frames;
    W.send({ cmd: 'workload', mode });
    await waitUntil(() => frames.frames - f0 >= 15, 20000);
    const from = W.events.length;
    W.send({ cmd: 'workload', mode: 'idle' });
    const ref = await W.waitFor((e) => e.event === 'windows_reference', 30000, from).catch(() => null);
    const panel = ref ? await panelDigest(frames, ref.digest, 20000) : null;
    rows.push({ workload: mode, frames: frames.frames - f0, reference_frame: ref && ref.frame, reference: ref && ref.digest, panel, equal: !!ref && panel === ref.digest, clear_mismatch: ref ? ref.clear_mismatch : null });
    if (ref) last = ref;
  }
  const counts = last ? last.counts : {};
  report.windows = { workloads: rows, guest_sent: counts, panel_jpeg_rects: frames.jpegRects, panel_png_rects: frames.pngRects, decode_errors: frames.errors };
  check('34.1', `the panel shows the Windows-shaped stream as the guest drew it: after ${WORKLOADS.join(', ')}, the canvas has the guest's reference digest (${rows.filter((r) => r.equal).length} of ${rows.length})`,
    rows.every((r) => r.equal && r.clear_mismatch === 0) && frames.errors === 0, report.windows);
  check('34.1', 'the stream was Windows-shaped: ClearCodec glyph hits and its NSCodec and RLEX subcodecs, progressive first passes and upgrades, SurfaceToSurface and the cache all sent',
    counts.clear_glyph_hit > 0 && counts.progressive_first_tiles > 0 && counts.progressive_upgrade_tiles > 0 && counts.surface_to_surface > 0 && counts.cache_to_surface > 0 && counts.clear_subcodec_nsc > 0 && counts.clear_subcodec_rlex > 0, { counts });

  // The strict default lock, then the capture the model gets: the same picture. The lock's
  // Refresh Rect is answered with the scene's own pixels in ClearCodec, so the reference the
  // capture must have is the one the guest reports after that answer.
  const fromLock = W.events.length;
  const lock = await mcp.tool('request_lock');
  const cap = await mcp.tool('capture_desktop');
  last = (await W.waitFor((e) => e.event === 'windows_reference', 30000, fromLock).catch(() => null)) || last;
  const img = cap.result && (cap.result.content || []).find((c) => c.type === 'image');
  let capture = null;
  if (img) { try { const png = decodePng(Buffer.from(img.data, 'base64')); capture = { width: png.width, height: png.height, digest: digestBgr(png.rgb) }; } catch (e) { capture = { error: String(e) }; } }
  const confirmation = lock.result && lock.result.structuredContent && lock.result.structuredContent.lock_confirmation;
  const lockOk = !!(lock.result && !lock.result.isError);
  report.windows.capture = { lock_ok: lockOk, lock_confirmation: confirmation, ...capture, reference: last && last.digest };
  check('34.1', 'after the strict lock, capture_desktop has the guest\'s reference digest',
    lockOk && capture && last && capture.width === 1024 && capture.height === 768 && capture.digest === last.digest, report.windows.capture);

  await mcp.end();
  s.proc.send({ cmd: 'close' });
  const end = await s.closed();
  const closedEntry = evidenceOf(s).find((e) => e.event === 'closed') || {};
  const channels = closedEntry.channels || {};
  const commands = channels.gfx_commands || {};
  const pairs = { SolidFill: 'solid_fill', SurfaceToSurface: 'surface_to_surface', SurfaceToCache: 'surface_to_cache', CacheToSurface: 'cache_to_surface' };
  const compared = Object.entries(pairs).map(([reader, guest]) => ({ command: reader, reader: commands[reader] || 0, guest: counts[guest] || 0 }));
  // The reader's account against the guest's own: every kind the guest sent was executed, at
  // least as often as the guest's counts say. Today the reader counts one whole-scene repaint
  // more than the guest reports (4 SolidFill, 3 SurfaceToCache, 6 CacheToSurface), not yet
  // explained; the figures are in the details.
  check('34.4', 'the reader counted every command kind the guest sent: SolidFill, SurfaceToSurface, SurfaceToCache, CacheToSurface (closed evidence `gfx_commands`)',
    compared.every((c) => c.guest > 0 && c.reader >= c.guest), { compared, gfx_commands: commands });
  report.windows.reader = { codecs_used: channels.gfx_codecs_used, gfx_frames: channels.gfx_frames, gfx_commands: commands, closed: end.closed && end.closed.reason };
  check('34.1', 'the reader decoded ClearCodec and progressive on that session (closed evidence), and the run closed clean',
    end.closed && end.exit && end.exit.code === 0 && JSON.stringify(channels.gfx_codecs_used || '').includes('clear') && JSON.stringify(channels.gfx_codecs_used || '').includes('progressive'), report.windows.reader);
  W.send({ cmd: 'quit' });
}

module.exports = { needs, gives, run };
