'use strict';
// After close, while the console waits for libvirt's verdict, its memory holds no run of a painted
// colour and no byte of the capture; the closing evidence says what each owner wiped.
// (issue 16 point 5a.)
const { fs, path, crypto, decodePng, P, report, check, sleep, STATE, issueGrant, Session, openPanel, hello, framePanel, Mcp } = require('../lib/harness');
const R = require('../lib/residue');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['A', 'base'];
const gives = [];

async function run(ctx) {
  const { A, base } = ctx;
  // A session shows a painted sentinel colour, is locked and captured over MCP; then the guest
  // drops the connection: the console closes RDP_LOST at once and waits for libvirt's verdict
  // (the test driver's VM stays running, so it waits the whole window). Once its teardown
  // has recorded what it wiped (evidence "buffers"), it is frozen (SIGSTOP) and its memory read.
  {
    const s = new Session('residue', issueGrant(base));
    await s.ready();
    const ws = (await openPanel(s, { origin: 'vscode-webview://battery' })).ws;
    const f = framePanel(ws);
    ws.send(hello(s));
    await s.login();
    let colour;
    do colour = [...crypto.randomBytes(3)]; while (colour.some((c) => c < 24 || c > 232) || Math.max(...colour) - Math.min(...colour) < 40);
    const hex = '#' + Buffer.from(colour).toString('hex');
    const rect = { x: 120, y: 120, w: 480, h: 320 };
    A.send({ cmd: 'paint', ...rect, color: hex, id: 1651 });
    await A.waitFor((e) => e.event === 'painted' && e.id === 1651, 10000);
    const seen = () => f.canvas && f.covered[(rect.y + 100) * f.width + rect.x + 100] && colour.every((c, i) => f.canvas.rgb[((rect.y + 100) * f.width + rect.x + 100) * 3 + i] === c);
    const pd = Date.now() + 15000;
    while (!seen() && Date.now() < pd) await sleep(50);
    const panelSaw = seen();
    s.proc.send({ cmd: 'lock' });
    await s.proc.waitFor((e) => e.event === 'phase' && e.phase === 'CAPTURING', 15000);
    const m = new Mcp(s.run);
    await m.call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'gc-battery', version: '1' } });
    m.notify('notifications/initialized');
    const cap = await m.tool('capture_desktop');
    const img = cap.result && (cap.result.content || []).find((c) => c.type === 'image');
    const png = img ? Buffer.from(img.data, 'base64') : Buffer.alloc(0);
    let captured = false;
    try { const d = decodePng(png); const at = ((rect.y + 100) * d.width + rect.x + 100) * 3; captured = colour.every((c, i) => d.rgb[at + i] === c); } catch { /* below */ }
    await m.end();
    const { slices, idatBytes } = img ? R.captureSlices(png, img.data) : { slices: [], idatBytes: 0 };
    const needles = [...R.colourRuns(colour), ...slices];

    const evFile = () => { const e = fs.readdirSync(path.join(STATE, 'evidence')).find((x) => x.startsWith(s.run)); return e ? path.join(STATE, 'evidence', e) : null; };
    const evLines = () => { const p = evFile(); return p ? fs.readFileSync(p, 'utf8').trim().split('\n').map((l) => { try { return JSON.parse(l); } catch { return {}; } }) : []; };
    const kindOf = (e) => e.event || e.type;
    A.send({ cmd: 'disconnect' });
    await s.proc.waitFor((e) => e.event === 'phase' && e.phase === 'CLOSED', 15000).catch(() => null);
    const bd = Date.now() + 10000;
    while (!evLines().some((e) => kindOf(e) === 'buffers') && !s.events.some((e) => e.event === 'closed') && Date.now() < bd) await sleep(25);
    const waiting = !s.events.some((e) => e.event === 'closed');
    const t0 = Date.now();
    let scan;
    process.kill(s.pid, 'SIGSTOP');
    try { scan = P.scanMemory(s.pid, needles, { asanShadow: /libasan/.test(fs.readFileSync(`/proc/${s.pid}/maps`, 'latin1')) }); } catch (e) { scan = { error: String(e), hits: [], bytesRead: 0 }; } finally { process.kill(s.pid, 'SIGCONT'); }
    const ms = Date.now() - t0;
    const end = await s.closed(30000);
    ws.close();
    const runs = R.runsByNeedle(scan.hits, needles);
    const states = {};
    for (const h of scan.hits) states[`${h.needle}: ${h.state || 'unknown'}`] = (states[`${h.needle}: ${h.state || 'unknown'}`] || 0) + 1;
    const cleanup = evLines().find((e) => kindOf(e) === 'cleanup') || null;
    report.sessions.residue = { colour: 'random (not reported)', panel_saw_colour: panelSaw, capture_has_colour: captured, capture_png_bytes: png.length, capture_idat_bytes: idatBytes, scanned_while_waiting_for_verdict: waiting, closed: end.closed && end.closed.reason, bytes_scanned: scan.bytesRead, regions: scan.regions, scan_ms: ms, needles: needles.map((n) => n.name), runs, hit_states: states, hits: scan.hits.slice(0, 12), cleanup };
    check('16.5a', 'after close (waiting for libvirt\'s verdict) no run of the painted colour and no capture bytes (IDAT / base64 slices) in the console\'s memory',
      panelSaw && captured && slices.length === 4 && waiting && !scan.error && scan.hits.length === 0 && end.closed && end.closed.reason === 'RDP_LOST',
      { bytes_scanned: scan.bytesRead, scan_ms: ms, matches: scan.hits.length, runs, hit_states: states, panel_saw_colour: panelSaw, capture_has_colour: captured, waiting, error: scan.error, closed: end.closed && end.closed.reason, hits: scan.hits.slice(0, 6) });
    const notWiped = cleanup && cleanup.not_wiped ? Object.keys(cleanup.not_wiped) : null;
    check('16.5a', 'closing evidence: buffers_wiped is computed (what each owner zeroed; false with the list when something was not)',
      !!cleanup && typeof cleanup.buffers_wiped === 'boolean' && !!cleanup.wiped && cleanup.wiped.frame_encoder > 0 && cleanup.wiped.capture_replies > png.length && cleanup.buffers_wiped === (notWiped.length === 0),
      { buffers_wiped: cleanup && cleanup.buffers_wiped, wiped: cleanup && cleanup.wiped, not_wiped: cleanup && cleanup.not_wiped });
  }
};

module.exports = { needs, gives, run };
