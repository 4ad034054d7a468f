// What an RDP server answers to each request a lock could confirm itself with, and how fast:
// Refresh Rect (whole desktop, a part, a 64x64 corner), Suppress Output off then on (the desktop
// rectangle), a second RDPGFX CapsAdvertise (the one sent at connect, again). FreeRDP 3's
// client and its software GDI decode everything; this probe only watches what arrives.
//   answers HOST PORT USER WIDTH HEIGHT SHA256     the password: one line on stdin
// One JSON line per request: {"request","answered","answer","ms","first_ms","coverage",...}.
// Built and run by the interop lane (tests/interop/run, grd.js); never a product part.
#include <freerdp/addin.h>
#include <freerdp/channels/rdpgfx.h>
#include <freerdp/client/channels.h>
#include <freerdp/client/cmdline.h>
#include <freerdp/client/rdpgfx.h>
#include <freerdp/event.h>
#include <freerdp/freerdp.h>
#include <freerdp/gdi/gdi.h>
#include <freerdp/gdi/gfx.h>
#include <freerdp/settings.h>
#include <winpr/synch.h>
#include <winpr/wlog.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SURFACES 64
#define MAX_CAPSETS 16

typedef struct {
  rdpContext base;
  RdpgfxClientContext* gfx;
  pcRdpgfxSurfaceCommand surfaceCommand;
  pcRdpgfxSolidFill solidFill;
  pcRdpgfxSurfaceToSurface surfaceToSurface;
  pcRdpgfxCacheToSurface cacheToSurface;
  pcRdpgfxEndFrame endFrame;
  pcRdpgfxCapsAdvertise capsAdvertise;
  pcRdpgfxCapsConfirm capsConfirm;
  pcRdpgfxResetGraphics resetGraphics;
  pcRdpgfxMapSurfaceToOutput mapSurfaceToOutput;
  RDPGFX_CAPSET caps[MAX_CAPSETS];
  UINT16 capsCount;
  int32_t originX[MAX_SURFACES], originY[MAX_SURFACES];
} Probe;

// What arrived since the request: the covered part of the asked area (a byte per pixel).
static struct {
  int width, height;
  int x0, y0, x1, y1; // the asked area, exclusive right/bottom
  uint8_t* mask;
  long covered;
  double t0, firstMs, coveredMs, lastAt, confirmMs, resetMs;
  int frames, surfaceCommands, solidFills, surfaceToSurface, cacheToSurface, confirms, resets;
  int everFrames;
  uint32_t confirmedVersion;
} W;

static double nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static void arm(int x0, int y0, int x1, int y1) {
  W.x0 = x0;
  W.y0 = y0;
  W.x1 = x1;
  W.y1 = y1;
  memset(W.mask, 0, (size_t)W.width * (size_t)W.height);
  W.covered = 0;
  W.t0 = nowMs();
  W.firstMs = W.coveredMs = W.confirmMs = W.resetMs = -1;
  W.lastAt = W.t0;
  W.frames = W.surfaceCommands = W.solidFills = W.surfaceToSurface = W.cacheToSurface = W.confirms =
      W.resets = 0;
}

static long areaOf(void) {
  return (long)(W.x1 - W.x0) * (long)(W.y1 - W.y0);
}

// Marks [l, r) x [t, b) of the output (clipped to the asked area).
static void mark(int l, int t, int r, int b) {
  const double at = nowMs();
  if (W.firstMs < 0)
    W.firstMs = at - W.t0;
  W.lastAt = at;
  if (l < W.x0)
    l = W.x0;
  if (t < W.y0)
    t = W.y0;
  if (r > W.x1)
    r = W.x1;
  if (b > W.y1)
    b = W.y1;
  for (int y = t; y < b; y++)
    for (int x = l; x < r; x++) {
      uint8_t* m = &W.mask[(size_t)y * (size_t)W.width + (size_t)x];
      if (!*m) {
        *m = 1;
        W.covered++;
      }
    }
  if (W.coveredMs < 0 && W.covered == areaOf())
    W.coveredMs = at - W.t0;
}

// FreeRDP's GDI owns gfx->custom: the one probe is found through its GDI's context.
static Probe* probeOf(RdpgfxClientContext* gfx) {
  return (Probe*)((rdpGdi*)gfx->custom)->context;
}

static int32_t ox(Probe* p, UINT16 id) {
  return id < MAX_SURFACES ? p->originX[id] : 0;
}
static int32_t oy(Probe* p, UINT16 id) {
  return id < MAX_SURFACES ? p->originY[id] : 0;
}

// Counted here; the area a command painted comes from the GDI's UpdateSurfaceArea (a progressive
// command's rectangles are inside its payload).
static UINT onSurfaceCommand(RdpgfxClientContext* gfx, const RDPGFX_SURFACE_COMMAND* cmd) {
  W.surfaceCommands++;
  return probeOf(gfx)->surfaceCommand(gfx, cmd);
}

static UINT onUpdateSurfaceArea(RdpgfxClientContext* gfx, UINT16 surfaceId, UINT32 count,
                                const RECTANGLE_16* rects) {
  Probe* p = probeOf(gfx);
  for (UINT32 i = 0; i < count; i++)
    mark(ox(p, surfaceId) + rects[i].left, oy(p, surfaceId) + rects[i].top, ox(p, surfaceId) + rects[i].right,
         oy(p, surfaceId) + rects[i].bottom);
  return CHANNEL_RC_OK;
}

static UINT onSolidFill(RdpgfxClientContext* gfx, const RDPGFX_SOLID_FILL_PDU* pdu) {
  Probe* p = probeOf(gfx);
  W.solidFills++;
  for (UINT16 i = 0; i < pdu->fillRectCount; i++) {
    const RECTANGLE_16* r = &pdu->fillRects[i];
    mark(ox(p, pdu->surfaceId) + r->left, oy(p, pdu->surfaceId) + r->top, ox(p, pdu->surfaceId) + r->right,
         oy(p, pdu->surfaceId) + r->bottom);
  }
  return p->solidFill(gfx, pdu);
}

static UINT onSurfaceToSurface(RdpgfxClientContext* gfx, const RDPGFX_SURFACE_TO_SURFACE_PDU* pdu) {
  Probe* p = probeOf(gfx);
  const int w = pdu->rectSrc.right - pdu->rectSrc.left, h = pdu->rectSrc.bottom - pdu->rectSrc.top;
  W.surfaceToSurface++;
  for (UINT16 i = 0; i < pdu->destPtsCount; i++)
    mark(ox(p, pdu->surfaceIdDest) + pdu->destPts[i].x, oy(p, pdu->surfaceIdDest) + pdu->destPts[i].y,
         ox(p, pdu->surfaceIdDest) + pdu->destPts[i].x + w,
         oy(p, pdu->surfaceIdDest) + pdu->destPts[i].y + h);
  return p->surfaceToSurface(gfx, pdu);
}

static UINT onCacheToSurface(RdpgfxClientContext* gfx, const RDPGFX_CACHE_TO_SURFACE_PDU* pdu) {
  Probe* p = probeOf(gfx);
  W.cacheToSurface++;
  // The cache entry's size is the server's to know: counted, the area left to other commands.
  if (W.firstMs < 0)
    W.firstMs = nowMs() - W.t0;
  W.lastAt = nowMs();
  return p->cacheToSurface(gfx, pdu);
}

static UINT onEndFrame(RdpgfxClientContext* gfx, const RDPGFX_END_FRAME_PDU* pdu) {
  W.frames++;
  W.everFrames++;
  W.lastAt = nowMs();
  return probeOf(gfx)->endFrame(gfx, pdu);
}

static UINT onMapSurfaceToOutput(RdpgfxClientContext* gfx, const RDPGFX_MAP_SURFACE_TO_OUTPUT_PDU* pdu) {
  Probe* p = probeOf(gfx);
  if (pdu->surfaceId < MAX_SURFACES) {
    p->originX[pdu->surfaceId] = (int32_t)pdu->outputOriginX;
    p->originY[pdu->surfaceId] = (int32_t)pdu->outputOriginY;
  }
  return p->mapSurfaceToOutput(gfx, pdu);
}

static UINT onCapsAdvertise(RdpgfxClientContext* gfx, const RDPGFX_CAPS_ADVERTISE_PDU* pdu) {
  Probe* p = probeOf(gfx);
  if (p->capsCount == 0)
    for (UINT16 i = 0; i < pdu->capsSetCount && i < MAX_CAPSETS; i++)
      p->caps[p->capsCount++] = pdu->capsSets[i];
  return p->capsAdvertise(gfx, pdu);
}

static UINT onCapsConfirm(RdpgfxClientContext* gfx, const RDPGFX_CAPS_CONFIRM_PDU* pdu) {
  W.confirms++;
  if (W.confirmMs < 0)
    W.confirmMs = nowMs() - W.t0;
  W.lastAt = nowMs();
  W.confirmedVersion = pdu->capsSet ? pdu->capsSet->version : 0;
  return probeOf(gfx)->capsConfirm ? probeOf(gfx)->capsConfirm(gfx, pdu) : CHANNEL_RC_OK;
}

static UINT onResetGraphics(RdpgfxClientContext* gfx, const RDPGFX_RESET_GRAPHICS_PDU* pdu) {
  W.resets++;
  if (W.resetMs < 0)
    W.resetMs = nowMs() - W.t0;
  W.lastAt = nowMs();
  return probeOf(gfx)->resetGraphics(gfx, pdu);
}

static void onChannelConnected(void* ctx, const ChannelConnectedEventArgs* e) {
  Probe* p = (Probe*)ctx;
  if (strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) != 0)
    return;
  RdpgfxClientContext* gfx = (RdpgfxClientContext*)e->pInterface;
  gdi_graphics_pipeline_init(p->base.gdi, gfx);
  p->gfx = gfx;
  p->surfaceCommand = gfx->SurfaceCommand;
  gfx->SurfaceCommand = onSurfaceCommand;
  p->solidFill = gfx->SolidFill;
  gfx->SolidFill = onSolidFill;
  p->surfaceToSurface = gfx->SurfaceToSurface;
  gfx->SurfaceToSurface = onSurfaceToSurface;
  p->cacheToSurface = gfx->CacheToSurface;
  gfx->CacheToSurface = onCacheToSurface;
  p->endFrame = gfx->EndFrame;
  gfx->EndFrame = onEndFrame;
  p->mapSurfaceToOutput = gfx->MapSurfaceToOutput;
  gfx->MapSurfaceToOutput = onMapSurfaceToOutput;
  p->capsAdvertise = gfx->CapsAdvertise;
  gfx->CapsAdvertise = onCapsAdvertise;
  p->capsConfirm = gfx->CapsConfirm;
  gfx->CapsConfirm = onCapsConfirm;
  p->resetGraphics = gfx->ResetGraphics;
  gfx->ResetGraphics = onResetGraphics;
  gfx->UpdateSurfaceArea = onUpdateSurfaceArea;
}

static void onChannelDisconnected(void* ctx, const ChannelDisconnectedEventArgs* e) {
  Probe* p = (Probe*)ctx;
  if (strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) == 0) {
    gdi_graphics_pipeline_uninit(p->base.gdi, (RdpgfxClientContext*)e->pInterface);
    p->gfx = NULL;
  }
}

static BOOL onPreConnect(freerdp* instance) {
  PubSub_SubscribeChannelConnected(instance->context->pubSub, onChannelConnected);
  PubSub_SubscribeChannelDisconnected(instance->context->pubSub, onChannelDisconnected);
  return TRUE;
}

static BOOL onLoadChannels(freerdp* instance) {
  return freerdp_client_load_addins(instance->context->channels, instance->context->settings);
}

static BOOL onDesktopResize(rdpContext* context) {
  return gdi_resize(context->gdi, freerdp_settings_get_uint32(context->settings, FreeRDP_DesktopWidth),
                    freerdp_settings_get_uint32(context->settings, FreeRDP_DesktopHeight));
}

static BOOL onPostConnect(freerdp* instance) {
  if (!gdi_init(instance, PIXEL_FORMAT_BGRX32))
    return FALSE;
  instance->context->update->DesktopResize = onDesktopResize; // the GDI's ResetGraphics calls it
  return TRUE;
}

static void onPostDisconnect(freerdp* instance) {
  gdi_free(instance);
}

// Runs the session for up to `ms`, or until `done()` says so. False: the connection ended.
static int pump(freerdp* instance, double ms, int (*done)(void)) {
  const double until = nowMs() + ms;
  while (nowMs() < until) {
    HANDLE handles[MAXIMUM_WAIT_OBJECTS];
    const DWORD count = freerdp_get_event_handles(instance->context, handles, MAXIMUM_WAIT_OBJECTS);
    if (count == 0 || WaitForMultipleObjects(count, handles, FALSE, 10) == WAIT_FAILED ||
        !freerdp_check_event_handles(instance->context) ||
        freerdp_shall_disconnect_context(instance->context))
      return 0;
    if (done && done())
      return 1;
  }
  return 1;
}

// Done waiting for an answer: the asked area covered, or nothing new for 1.5 s.
static int answerOver(void) {
  return W.covered == areaOf() || nowMs() - W.lastAt > 1500;
}
static int quietFor500(void) {
  return nowMs() - W.lastAt > 500;
}
static int firstFrame(void) {
  return W.everFrames > 0;
}

static void report(const char* request, int alive, const char* note) {
  const long area = areaOf();
  const int answered = W.covered == area && area > 0;
  printf(
      "{\"request\":\"%s\",\"area\":[%d,%d,%d,%d],\"answered\":%s,\"answer\":\"%s\",\"ms\":%.1f,\"first_ms\":"
      "%.1f,"
      "\"coverage\":%.4f,\"frames\":%d,\"surface_commands\":%d,\"solid_fills\":%d,\"surface_to_surface\":%d,"
      "\"cache_to_surface\":%d,\"caps_confirms\":%d,\"caps_confirm_ms\":%.1f,\"confirmed_version\":\"0x%"
      "08X\","
      "\"reset_graphics\":%d,\"reset_ms\":%.1f,\"session_alive\":%s,\"note\":\"%s\"}\n",
      request, W.x0, W.y0, W.x1 - W.x0, W.y1 - W.y0, answered ? "true" : "false",
      answered ? "updates covering the area" : (W.firstMs >= 0 ? "updates, area not covered" : "nothing"),
      answered ? W.coveredMs : -1.0, W.firstMs, area ? (double)W.covered / (double)area : 0.0, W.frames,
      W.surfaceCommands, W.solidFills, W.surfaceToSurface, W.cacheToSurface, W.confirms, W.confirmMs,
      W.confirmedVersion, W.resets, W.resetMs, alive ? "true" : "false", note);
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: answers HOST PORT USER WIDTH HEIGHT SHA256 (password on stdin)\n");
    return 64;
  }
  char password[256];
  if (!fgets(password, sizeof password, stdin))
    return 64;
  password[strcspn(password, "\r\n")] = 0;
  W.width = atoi(argv[4]);
  W.height = atoi(argv[5]);
  if (W.width <= 0 || W.height <= 0 || W.width > 8192 || W.height > 8192)
    return 64;
  W.mask = calloc((size_t)W.width * (size_t)W.height, 1);
  if (!W.mask)
    return 70;
  WLog_SetLogLevel(WLog_GetRoot(), WLOG_ERROR);
  char pin[80];
  snprintf(pin, sizeof pin, "sha256:%s", argv[6]);
  char configDir[] = "/tmp/gc-answers-XXXXXX";
  if (!mkdtemp(configDir))
    return 70;

  freerdp* instance = freerdp_new();
  instance->ContextSize = sizeof(Probe);
  instance->PreConnect = onPreConnect;
  instance->LoadChannels = onLoadChannels;
  instance->PostConnect = onPostConnect;
  instance->PostDisconnect = onPostDisconnect;
  if (!freerdp_context_new(instance))
    return 70;
  rdpSettings* s = instance->context->settings;
  const BOOL ok = freerdp_settings_set_string(s, FreeRDP_ServerHostname, argv[1]) &&
                  freerdp_settings_set_uint32(s, FreeRDP_ServerPort, (UINT32)atoi(argv[2])) &&
                  freerdp_settings_set_string(s, FreeRDP_Username, argv[3]) &&
                  freerdp_settings_set_string(s, FreeRDP_Password, password) &&
                  freerdp_settings_set_string(s, FreeRDP_Domain, "") &&
                  freerdp_settings_set_string(s, FreeRDP_ConfigPath, configDir) &&
                  freerdp_settings_set_string(s, FreeRDP_CertificateAcceptedFingerprints, pin) &&
                  freerdp_settings_set_uint32(s, FreeRDP_DesktopWidth, (UINT32)W.width) &&
                  freerdp_settings_set_uint32(s, FreeRDP_DesktopHeight, (UINT32)W.height) &&
                  freerdp_settings_set_bool(s, FreeRDP_SoftwareGdi, TRUE) &&
                  freerdp_settings_set_uint32(s, FreeRDP_ColorDepth, 32) &&
                  freerdp_settings_set_bool(s, FreeRDP_SupportDynamicChannels, TRUE) &&
                  freerdp_settings_set_bool(s, FreeRDP_SupportGraphicsPipeline, TRUE) &&
                  freerdp_settings_set_bool(s, FreeRDP_GfxH264, FALSE) &&
                  freerdp_settings_set_bool(s, FreeRDP_GfxAVC444, FALSE) &&
                  freerdp_settings_set_bool(s, FreeRDP_GfxAVC444v2, FALSE) &&
                  freerdp_settings_set_bool(s, FreeRDP_RedirectClipboard, FALSE) &&
                  freerdp_settings_set_bool(s, FreeRDP_AudioPlayback, FALSE);
  memset(password, 0, sizeof password);
  freerdp_register_addin_provider(freerdp_channels_load_static_addin_entry, 0);
  if (!ok || !freerdp_connect(instance)) {
    fprintf(stderr, "answers: connect failed (0x%08X)\n", freerdp_get_last_error(instance->context));
    return 1;
  }
  Probe* p = (Probe*)instance->context;
  rdpUpdate* update = instance->context->update;
  const int w = W.width, h = W.height;
  int alive = 1;

  // The desktop first drawn, then quiet: what comes after a request is its answer.
  arm(0, 0, w, h);
  alive = pump(instance, 30000, firstFrame) && pump(instance, 15000, quietFor500);
  report("connect", alive, "the first picture");
  arm(0, 0, w, h);
  alive = alive && pump(instance, 2000, NULL);
  report("idle", alive, "2 s, nothing asked: what comes anyway");

  struct {
    const char* name;
    int x0, y0, x1, y1;
  } refresh[] = {{"refresh_whole", 0, 0, w, h},
                 {"refresh_part", w / 4, h / 4, 3 * w / 4, 3 * h / 4},
                 {"refresh_corner", 0, 0, 64, 64}};
  for (size_t i = 0; alive && i < sizeof refresh / sizeof refresh[0]; i++) {
    arm(refresh[i].x0, refresh[i].y0, refresh[i].x1, refresh[i].y1);
    const RECTANGLE_16 area = {(UINT16)refresh[i].x0, (UINT16)refresh[i].y0, (UINT16)(refresh[i].x1 - 1),
                               (UINT16)(refresh[i].y1 - 1)};
    update->RefreshRect(instance->context, 1, &area);
    alive = pump(instance, 10000, answerOver);
    report(refresh[i].name, alive, "");
    alive = alive && pump(instance, 10000, quietFor500);
  }

  if (alive) {
    const RECTANGLE_16 desktop = {0, 0, (UINT16)(w - 1), (UINT16)(h - 1)};
    update->SuppressOutput(instance->context, 0, NULL);
    arm(0, 0, w, h);
    alive = pump(instance, 1000, NULL);
    const int whileSuppressed = W.frames;
    arm(0, 0, w, h);
    update->SuppressOutput(instance->context, 1, &desktop);
    alive = alive && pump(instance, 10000, answerOver);
    char note[96];
    snprintf(note, sizeof note, "%d frames in the second it was off", whileSuppressed);
    report("suppress_off_on", alive, note);
    alive = alive && pump(instance, 10000, quietFor500);
  }

  if (alive) {
    arm(0, 0, w, h);
    RDPGFX_CAPS_ADVERTISE_PDU again = {p->capsCount, p->caps};
    const UINT rc = p->gfx && p->capsCount ? p->capsAdvertise(p->gfx, &again) : ERROR_INVALID_STATE;
    alive = pump(instance, 10000, answerOver);
    char note[96];
    snprintf(note, sizeof note, "the connect-time CapsAdvertise again (%u sets, send 0x%X)", p->capsCount,
             rc);
    report("caps_advertise_again", alive, alive ? note : "the server ended the session");
    alive = alive && pump(instance, 10000, quietFor500);
  }

  // Last (it may end the session): one set, the newest version the console would confirm, AVC
  // disabled as the console has it.
  if (alive) {
    UINT32 flags = RDPGFX_CAPS_FLAG_AVC_DISABLED;
    for (UINT16 i = 0; i < p->capsCount; i++)
      if (p->caps[i].version == RDPGFX_CAPVERSION_107)
        flags = p->caps[i].flags;
    RDPGFX_CAPSET one = {RDPGFX_CAPVERSION_107, 4, flags};
    RDPGFX_CAPS_ADVERTISE_PDU single = {1, &one};
    arm(0, 0, w, h);
    const UINT rc = p->gfx ? p->capsAdvertise(p->gfx, &single) : ERROR_INVALID_STATE;
    alive = pump(instance, 10000, answerOver);
    char note[96];
    snprintf(note, sizeof note, "one set, 10.7, flags 0x%X (send 0x%X)%s", flags, rc,
             alive ? "" : ": the server ended the session");
    report("caps_advertise_107_only", alive, note);
  }

  if (alive)
    freerdp_disconnect(instance);
  freerdp_context_free(instance);
  freerdp_free(instance);
  free(W.mask);
  rmdir(configDir);
  return 0;
}
