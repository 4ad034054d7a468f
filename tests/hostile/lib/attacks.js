'use strict';
// The attacks the lane runs (the test guest's hostile mode, tests/fixtures/testguest/README.md
// "Hostile mode") and the outcome issue 24 expects of each: a typed close with one of `expect`.
// `capture`: also lock and capture the desktop when the console survives, and scan the capture.
const VIOLATION = 'RDP_PROTOCOL_VIOLATION';
const LIMIT = 'RDP_RESOURCE_LIMIT';
const MISMATCH = 'RDP_DESKTOP_MISMATCH';

const ATTACKS = [
  // The 65535x16 source surface is already beyond the grant's budget (a typed LIMIT close before
  // any copy); the copies outside a surface are VIOLATIONs (tst_rdpgfx refusesEachRuleBreach).
  { name: 'gfx-surface-to-surface', expect: [VIOLATION, LIMIT], what: 'CreateSurface 65535x16 + SurfaceToSurface 4000x16 to x=65000' },
  { name: 'gfx-cache-to-surface', expect: [VIOLATION, LIMIT], what: 'SurfaceToCache 4000x16 + CacheToSurface to x=65000' },
  { name: 'gfx-planar-oversize', expect: [VIOLATION, LIMIT], what: 'planar YCoCg+RLE over a surface twice the desktop' },
  { name: 'gfx-clearcodec-glyph', expect: [VIOLATION], capture: true, what: 'ClearCodec glyph stored from outside its surface, hit on the desktop' },
  { name: 'gfx-avc420', expect: [VIOLATION], capture: true, what: '30 AVC420 (H.264) frames, AVC not advertised' },
  { name: 'gfx-avc444', expect: [VIOLATION], capture: true, what: '10 AVC444 frames, AVC not advertised' },
  { name: 'gfx-surface-65535', expect: [LIMIT, VIOLATION], what: 'CreateSurface 65535x65535' },
  { name: 'gfx-reset-65535', expect: [MISMATCH, LIMIT], what: 'ResetGraphics 65535x65535' },
  { name: 'gfx-reset-0x0', expect: [MISMATCH, VIOLATION], what: 'ResetGraphics 0x0' },
  { name: 'gfx-surfaces-24x4096', expect: [LIMIT], what: '24 surfaces of 4096x4096' },
  { name: 'gfx-zgfx-bomb', expect: [LIMIT, VIOLATION], what: 'ZGFX: 192 KiB declaring 1 GiB in 16384 segments' },
  { name: 'gfx-channels-100', expect: [VIOLATION, LIMIT], what: '100 more RDPGFX channels, each with a surface' },
  { name: 'gfx-channel-recreate', expect: [VIOLATION], what: 'a PDU FreeRDP refuses, the channel re-created, 20 times' },
  { name: 'gfx-cache-import-reply', expect: [VIOLATION], what: 'CacheImportReply (5462 slots) never asked for' },
  { name: 'gfx-frames-unended', expect: [VIOLATION, LIMIT], what: '200 StartFrame without EndFrame' },
  { name: 'gfx-frame-ids', expect: [VIOLATION], what: 'EndFrame never started, ids backwards, nested frames' },
  { name: 'dvc-data-first-4g', expect: [LIMIT, VIOLATION], what: 'drdynvc DATA_FIRST declaring 4 GiB, then ~100 KB' },
  { name: 'dvc-data-overrun', expect: [VIOLATION], what: 'drdynvc DATA past the declared length' },
  { name: 'dvc-compressed', expect: [VIOLATION], what: 'drdynvc compressed DATA_FIRST/DATA' },
  { name: 'core-resize-65535', expect: [MISMATCH, LIMIT], what: 'Deactivate-Reactivate to 65535x65535' },
  { name: 'core-resize-16384', expect: [MISMATCH, LIMIT], what: 'Deactivate-Reactivate to 16384x16384' },
  { name: 'core-resize-flip', expect: [MISMATCH], what: 'Deactivate-Reactivate to 1x1 and straight back' },
  { name: 'core-bitmap-outside', expect: [VIOLATION], what: 'bitmap update at (65000,65000)' },
  { name: 'core-bitmap-length', expect: [VIOLATION], what: 'bitmap updates with lengths that do not match' },
  { name: 'core-pointer-mask', expect: [VIOLATION], what: 'pointer 32x32 with masks of 7 and 100 bytes' },
  { name: 'core-pointer-65535', expect: [VIOLATION, LIMIT], what: 'pointers of 65535x65535' },
  { name: 'core-orders', expect: [VIOLATION], what: 'a ScrBlt order although orders are off' },
  { name: 'core-fastpath-unending', expect: [VIOLATION, LIMIT], what: 'fast-path fragments that never end' },
  { name: 'core-fastpath-oversize', expect: [VIOLATION, LIMIT], what: 'fast-path fragments past MultifragMaxRequestSize' },
  { name: 'core-redirect-name', expect: ['RDP_REDIRECT_REFUSED'], redirect: true, what: 'Server Redirection to a host name (no lookup may happen)' },
  { name: 'frozen', expect: ['GUEST_UNCONFIRMED'], frozen: true, what: 'the guest stops reading after 2 input events; 10 keys, lock, capture' },
  { name: 'fuzz', expect: [VIOLATION, LIMIT], fuzz: true, capture: true, what: 'seeded structured fuzzer over valid RDPGFX PDUs' },
];

module.exports = { ATTACKS };
