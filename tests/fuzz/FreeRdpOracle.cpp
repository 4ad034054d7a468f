// freerdp_oracle: FreeRDP 3.10.3's decoders behind a socket, for the differential fuzz targets
// (tests/fuzz, OracleWire.h). A target starts it once (Oracle.cpp) and sends every input its own
// decoder saw, refused ones too: FreeRDP 3.10.3 has known overflows on hostile input, so it runs
// here, in a process of its own, into a surface with an inaccessible page on each side. A crash,
// a sanitizer report or a hang ends this process; the target counts it as FreeRDP's fault and
// starts another.
//
// The codecs are called as FreeRDP's own client calls them: planar, interleaved, ClearCodec,
// RemoteFX Progressive (progressive_decompress on one surface context, as gdi/gfx.c does) and
// NSCodec directly (clear_decompress with the surface's size as its bounds, as gdi/gfx.c does;
// nsc_process_message as clear.c's subcodec 1 does), and for the alpha codec, uncompressed
// RDPGFX and uncompressed legacy bitmaps (for which FreeRDP exports no decoder) FreeRDP's GDI
// itself: gdi_init on an unconnected instance, the RDPGFX handlers of
// gdi_graphics_pipeline_init (CreateSurface, SurfaceCommand), and rdpBitmap::Decompress.
//
// Every FreeRDP routine here is its C one, the path the project's progressive decoder is held
// to: the primitives by PRIMITIVES_PURE_SOFT (chosen before any is used; the SIMD colour
// conversion rounds differently), and RemoteFX's own DWT and quantisation, which rfx_init_sse2
// picks by asking winpr's IsProcessorFeaturePresent rather than the hints, by this process's
// own IsProcessorFeaturePresent (below), which answers no to every feature. (The SSE2 classic
// DWT adds in 16-bit lanes: on coefficients a hostile stream makes overflow, it differs from
// FreeRDP's C DWT.) The lossless codecs are the same on both paths.
//
// Usage: freerdp_oracle <socket fd>. Thread: single-threaded.
#include "OracleWire.h"

#include <freerdp/client/rdpgfx.h>
#include <freerdp/codec/clear.h>
#include <freerdp/codec/color.h>
#include <freerdp/codec/interleaved.h>
#include <freerdp/codec/nsc.h>
#include <freerdp/codec/planar.h>
#include <freerdp/codec/progressive.h>
#include <freerdp/codec/region.h>
#include <freerdp/freerdp.h>
#include <freerdp/gdi/gdi.h>
#include <freerdp/gdi/gfx.h>
#include <freerdp/graphics.h>
#include <freerdp/primitives.h>
#include <freerdp/settings_types.h>
#include <winpr/sysinfo.h>
#include <winpr/wlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace gc::fuzz::oracle;

// Found by the dynamic linker before winpr's: FreeRDP's codecs see a CPU without SIMD.
extern "C" BOOL IsProcessorFeaturePresent(DWORD) {
  return FALSE;
}

namespace {

constexpr uint8_t kCanary = 0xC3;

[[noreturn]] void die(const char* why) {
  std::fprintf(stderr, "freerdp_oracle: %s\n", why);
  std::_Exit(3);
}

// side x side pixels whose last byte is the last byte before an inaccessible page, with an
// inaccessible page before them too and a canary in between: a write past the end faults at
// once, one before the start faults or changes the canary.
class GuardedSurface {
public:
  explicit GuardedSurface(uint32_t side) : m_side(side), m_bytes(size_t(side) * side * 4) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    const size_t inner = (m_bytes + page - 1) / page * page;
    m_mapLength = inner + 2 * page;
    void* map = mmap(nullptr, m_mapLength, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
      die("mmap");
    m_map = static_cast<uint8_t*>(map);
    if (mprotect(m_map + page, inner, PROT_READ | PROT_WRITE) != 0)
      die("mprotect");
    m_slackStart = m_map + page;
    m_bits = m_map + page + inner - m_bytes;
    std::memset(m_slackStart, kCanary, size_t(m_bits - m_slackStart));
  }
  ~GuardedSurface() { munmap(m_map, m_mapLength); }
  GuardedSurface(const GuardedSurface&) = delete;
  GuardedSurface& operator=(const GuardedSurface&) = delete;

  uint8_t* bits() { return m_bits; }
  uint32_t side() const { return m_side; }
  size_t stride() const { return size_t(m_side) * 4; }
  size_t bytes() const { return m_bytes; }
  uint8_t* at(uint32_t x, uint32_t y) { return m_bits + size_t(y) * stride() + size_t(x) * 4; }
  bool canaryIntact() const {
    for (const uint8_t* p = m_slackStart; p < m_bits; ++p)
      if (*p != kCanary)
        return false;
    return true;
  }

private:
  uint32_t m_side;
  size_t m_bytes;
  size_t m_mapLength = 0;
  uint8_t* m_map = nullptr;
  uint8_t* m_slackStart = nullptr;
  uint8_t* m_bits = nullptr;
};

// The GDI's RDPGFX surfaces, keyed as rdpgfx_main.c keeps them.
std::map<UINT16, void*> g_surfaces;

UINT setSurfaceData(RdpgfxClientContext*, UINT16 id, void* data) {
  if (data)
    g_surfaces[id] = data;
  else
    g_surfaces.erase(id);
  return CHANNEL_RC_OK;
}
void* getSurfaceData(RdpgfxClientContext*, UINT16 id) {
  auto it = g_surfaces.find(id);
  return it == g_surfaces.end() ? nullptr : it->second;
}
UINT getSurfaceIds(RdpgfxClientContext*, UINT16** ids, UINT16* count) {
  *ids = nullptr;
  *count = 0;
  return CHANNEL_RC_OK;
}

// FreeRDP 3.10.3's progressive_decompress returns 1, its success, when a block fails to parse
// (its result starts at 1 and that path leaves it so), having drawn nothing of the stream; its
// GDI takes that as success. What tells the failure is what it logged on the way: every parse
// failure logs (at ERROR, or at WARN through Stream_CheckAndLogRequiredLength), and so do a few
// things it goes on from. So the progressive logger alone is at WARN, into a callback that notes
// any message except those: the lines of 3.10.3's progressive.c (the only FreeRDP this project
// builds against) where it logs and carries on.
constexpr unsigned kProgressiveGoesOn[] = {
    1319,             // an upgrade's SRL/RAW lengths do not match: the tile's upgrade is dropped
    1429, 1432, 1435, // an upgrade's quantization differs from the first pass's
    1438,             // an upgrade without RFX_SUBBAND_DIFFING in the context
    1872,             // a second SYNC
    1960, 1962,       // FRAME_END before FRAME_BEGIN, or twice
    1992,             // a CONTEXT's ctxId is not 0
    2001, 2003, 2005, // CONTEXT after FRAME_BEGIN, after FRAME_END, twice
    2097,             // bytes after a REGION's tiles
    2140, 2145,       // REGION outside a frame: skipped
};
bool g_progressiveFailed = false;

BOOL noteProgressiveLog(const wLogMessage* message) {
  if (!message || message->Level < WLOG_WARN)
    return TRUE;
  const std::string_view file = message->FileName ? message->FileName : "";
  const bool goesOn = file.ends_with("/progressive.c") &&
                      std::find(std::begin(kProgressiveGoesOn), std::end(kProgressiveGoesOn),
                                unsigned(message->LineNumber)) != std::end(kProgressiveGoesOn);
  if (!goesOn)
    g_progressiveFailed = true;
  return TRUE;
}

// progressive_decompress's result when it logged a failure and returned success.
constexpr int32_t kProgressiveLoggedFailure = -1;

class Oracle {
public:
  Oracle() {
    // FreeRDP logs every refusal at ERROR; the verdict is all this process reports (for
    // progressive, read from its log: noteProgressiveLog).
    wLog* root = WLog_GetRoot();
    WLog_SetLogLevel(root, WLOG_OFF);
    static wLogCallbacks callbacks{};
    callbacks.message = noteProgressiveLog;
    if (!WLog_SetLogAppenderType(root, WLOG_APPENDER_CALLBACK) ||
        !WLog_ConfigureAppender(WLog_GetLogAppender(root), "callbacks", &callbacks) ||
        !WLog_SetLogLevel(WLog_Get("com.freerdp.codec.progressive"), WLOG_WARN))
      die("log callback");
    m_planar = freerdp_bitmap_planar_context_new(0, kMaxSide, kMaxSide);
    m_interleaved = bitmap_interleaved_context_new(FALSE);
    m_nsc = nsc_context_new();
    m_progressive = progressive_context_new_ex(FALSE, THREADING_FLAGS_DISABLE_THREADS);
    if (!m_planar || !m_interleaved || !m_nsc || !m_progressive)
      die("codec contexts");
    startGdi();
  }

  void begin(const Begin& b) {
    if (b.side < 1 || b.side > kMaxSide)
      die("surface side out of range");
    m_begin = b;
    if (!m_surface || m_surface->side() != b.side)
      m_surface = std::make_unique<GuardedSurface>(b.side);
    fill(m_surface->bits(), m_surface->stride(), b.side, b.fillSeed);
    if (m_clear)
      clear_context_free(m_clear);
    m_clear = nullptr;
    if (b.codec == Codec::Clear && !(m_clear = clear_context_new(FALSE)))
      die("clear context");
    if (b.codec == Codec::Alpha || b.codec == Codec::UncompressedGfx)
      gfxSurface();
    if (b.codec == Codec::Progressive) {
      // A fresh surface context per session: its tiles are the session's alone.
      progressive_delete_surface_context(m_progressive, kProgressiveSurface);
      if (progressive_create_surface_context(m_progressive, kProgressiveSurface, b.side, b.side) < 0)
        die("progressive surface context");
      m_frame = 0;
    }
  }

  // Runs one message; the surface holds FreeRDP's pixels after it.
  Verdict decode(const Decode& d, std::span<const uint8_t> data, int32_t& rc) {
    const uint32_t side = m_surface->side();
    if (uint32_t(d.x) + d.w > side || uint32_t(d.y) + d.h > side || d.w == 0 || d.h == 0)
      die("rectangle outside the surface");
    m_data.assign(data.begin(), data.end()); // FreeRDP's GDI takes a BYTE*, not a const one
    const UINT32 len = UINT32(m_data.size());
    BYTE* src = m_data.empty() ? m_empty : m_data.data();
    const UINT32 stride = UINT32(m_surface->stride());
    BYTE* rect = m_surface->at(d.x, d.y);
    rc = 0;
    bool ok = false;
    switch (m_begin.codec) {
    case Codec::Planar:
      ok = planar_decompress(m_planar, src, len, d.w, d.h, rect,
                             (d.param & 2) ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, stride, 0, 0, d.w,
                             d.h, (d.param & 1) != 0);
      break;
    case Codec::Interleaved: {
      gdiPalette palette{};
      palette.format = PIXEL_FORMAT_BGRX32;
      for (UINT32 i = 0; i < 256; ++i)
        palette.palette[i] = FreeRDPGetColor(PIXEL_FORMAT_BGRX32, i, 255 - i, i ^ 0x5A, 0xFF);
      ok = interleaved_decompress(m_interleaved, src, len, d.w, d.h, d.param, rect, PIXEL_FORMAT_BGRX32,
                                  stride, 0, 0, d.w, d.h, &palette);
      break;
    }
    case Codec::Clear:
      rc = clear_decompress(m_clear, src, len, d.w, d.h, m_surface->bits(), PIXEL_FORMAT_BGRX32, stride, d.x,
                            d.y, side, side, nullptr);
      ok = rc >= 0;
      break;
    case Codec::Nsc:
      ok = nsc_process_message(m_nsc, 32, d.w, d.h, src, len, m_surface->bits(), PIXEL_FORMAT_BGRX32, stride,
                               d.x, d.y, d.w, d.h, FREERDP_FLIP_NONE);
      break;
    case Codec::Alpha:
    case Codec::UncompressedGfx:
      ok = surfaceCommand(d, src, len, rc);
      break;
    case Codec::RawBitmap:
      ok = rawBitmap(d, src, len);
      break;
    case Codec::Progressive: {
      REGION16 invalid;
      region16_init(&invalid);
      g_progressiveFailed = false;
      rc = progressive_decompress(m_progressive, src, len, m_surface->bits(),
                                  m_begin.argb ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32, stride, 0, 0,
                                  &invalid, kProgressiveSurface, ++m_frame);
      region16_uninit(&invalid);
      if (rc >= 0 && g_progressiveFailed)
        rc = kProgressiveLoggedFailure;
      ok = rc >= 0;
      break;
    }
    }
    if (!m_surface->canaryIntact())
      return Verdict::WroteOutside;
    return ok ? Verdict::Accepted : Verdict::Refused;
  }

  const GuardedSurface& surface() const { return *m_surface; }

private:
  void startGdi() {
    m_instance = freerdp_new();
    if (!m_instance || !freerdp_context_new(m_instance))
      die("freerdp instance");
    rdpSettings* s = m_instance->context->settings;
    if (!freerdp_settings_set_uint32(s, FreeRDP_DesktopWidth, kMaxSide) ||
        !freerdp_settings_set_uint32(s, FreeRDP_DesktopHeight, kMaxSide) ||
        !freerdp_settings_set_uint32(s, FreeRDP_ColorDepth, 32))
      die("settings");
    if (!gdi_init(m_instance, PIXEL_FORMAT_BGRX32))
      die("gdi_init");
    m_gfx.GetSurfaceData = getSurfaceData;
    m_gfx.SetSurfaceData = setSurfaceData;
    m_gfx.GetSurfaceIds = getSurfaceIds;
    if (!gdi_graphics_pipeline_init(m_instance->context->gdi, &m_gfx))
      die("gdi_graphics_pipeline_init");
  }

  // An RDPGFX surface of the session's side and format, made by the GDI's CreateSurface, its
  // pixels then moved into the guarded surface (the GDI allocated side x side exactly: sides
  // here are multiples of 16, so its rows are side * 4 bytes apart).
  void gfxSurface() {
    constexpr UINT16 kId = 1;
    if (gdiGfxSurface* old = static_cast<gdiGfxSurface*>(getSurfaceData(&m_gfx, kId))) {
      old->data = m_gdiData;
      RDPGFX_DELETE_SURFACE_PDU del{};
      del.surfaceId = kId;
      if (m_gfx.DeleteSurface(&m_gfx, &del) != CHANNEL_RC_OK)
        die("DeleteSurface");
    }
    if (m_begin.side % 16 != 0)
      die("RDPGFX surfaces here are multiples of 16 pixels");
    RDPGFX_CREATE_SURFACE_PDU create{};
    create.surfaceId = kId;
    create.width = m_begin.side;
    create.height = m_begin.side;
    create.pixelFormat = m_begin.argb ? GFX_PIXEL_FORMAT_ARGB_8888 : GFX_PIXEL_FORMAT_XRGB_8888;
    if (m_gfx.CreateSurface(&m_gfx, &create) != CHANNEL_RC_OK)
      die("CreateSurface");
    auto* surface = static_cast<gdiGfxSurface*>(getSurfaceData(&m_gfx, kId));
    if (!surface || surface->scanline != m_surface->stride() || surface->height != m_begin.side)
      die("unexpected GDI surface layout");
    m_gdiData = surface->data;
    surface->data = m_surface->bits();
  }

  bool surfaceCommand(const Decode& d, BYTE* src, UINT32 len, int32_t& rc) {
    RDPGFX_SURFACE_COMMAND cmd{};
    cmd.surfaceId = 1;
    cmd.codecId = m_begin.codec == Codec::Alpha ? RDPGFX_CODECID_ALPHA : RDPGFX_CODECID_UNCOMPRESSED;
    // As rdpgfx_main.c sets it from the PDU's pixelFormat (the alpha codec's commands carry the
    // surface's).
    const uint32_t pixelFormat = m_begin.codec == Codec::Alpha ? (m_begin.argb ? GFX_PIXEL_FORMAT_ARGB_8888
                                                                               : GFX_PIXEL_FORMAT_XRGB_8888)
                                                               : d.param;
    cmd.format = pixelFormat == GFX_PIXEL_FORMAT_ARGB_8888 ? PIXEL_FORMAT_BGRA32 : PIXEL_FORMAT_BGRX32;
    cmd.left = d.x;
    cmd.top = d.y;
    cmd.right = uint32_t(d.x) + d.w;
    cmd.bottom = uint32_t(d.y) + d.h;
    cmd.width = d.w;
    cmd.height = d.h;
    cmd.length = len;
    cmd.data = src;
    const UINT status = m_gfx.SurfaceCommand(&m_gfx, &cmd);
    rc = int32_t(status);
    return status == CHANNEL_RC_OK;
  }

  bool rawBitmap(const Decode& d, BYTE* src, UINT32 len) {
    rdpContext* context = m_instance->context;
    rdpBitmap* bitmap = Bitmap_Alloc(context);
    if (!bitmap)
      die("Bitmap_Alloc");
    const bool ok = bitmap->Decompress(context, bitmap, src, d.w, d.h, d.param, len, FALSE, 0);
    if (ok) // the GDI's bitmap: w x h pixels in its BGRX32, rows packed, already top-down
      for (uint32_t y = 0; y < d.h; ++y)
        std::memcpy(m_surface->at(d.x, d.y + y), bitmap->data + size_t(y) * d.w * 4, size_t(d.w) * 4);
    bitmap->Free(context, bitmap);
    return ok;
  }

  Begin m_begin;
  std::unique_ptr<GuardedSurface> m_surface;
  std::vector<uint8_t> m_data;
  BYTE m_empty[1] = {0};
  BITMAP_PLANAR_CONTEXT* m_planar = nullptr;
  BITMAP_INTERLEAVED_CONTEXT* m_interleaved = nullptr;
  NSC_CONTEXT* m_nsc = nullptr;
  CLEAR_CONTEXT* m_clear = nullptr;
  static constexpr UINT16 kProgressiveSurface = 1;
  PROGRESSIVE_CONTEXT* m_progressive = nullptr;
  UINT32 m_frame = 0;
  freerdp* m_instance = nullptr;
  RdpgfxClientContext m_gfx{};
  BYTE* m_gdiData = nullptr;
};

bool readAll(int fd, void* buf, size_t n) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

bool writeAll(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const uint8_t*>(buf);
  while (n > 0) {
    const ssize_t r = write(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2)
    die("usage: freerdp_oracle <socket fd>");
  const int fd = std::atoi(argv[1]);
  primitives_set_hints(PRIMITIVES_PURE_SOFT);
  Oracle oracle;
  std::vector<uint8_t> frame;
  for (;;) {
    uint8_t lenBytes[4];
    if (!readAll(fd, lenBytes, 4))
      return 0; // the target went away
    const uint32_t len = uint32_t(lenBytes[0]) | (uint32_t(lenBytes[1]) << 8) |
                         (uint32_t(lenBytes[2]) << 16) | (uint32_t(lenBytes[3]) << 24);
    if (len < 1 || len > kMaxMessage + 64)
      die("frame length");
    frame.resize(len);
    if (!readAll(fd, frame.data(), len))
      return 0;
    Reader r{frame};
    const auto kind = Frame(r.u8());
    if (kind == Frame::Begin) {
      Begin b;
      b.codec = Codec(r.u8());
      b.side = uint16_t(r.u16());
      b.argb = uint8_t(r.u8());
      b.fillSeed = r.u32();
      if (!r.ok)
        die("Begin cut short");
      oracle.begin(b);
      continue; // no reply
    }
    if (kind != Frame::Decode)
      die("unknown frame");
    Decode d;
    d.x = uint16_t(r.u16());
    d.y = uint16_t(r.u16());
    d.w = uint16_t(r.u16());
    d.h = uint16_t(r.u16());
    d.param = r.u32();
    if (!r.ok)
      die("Decode cut short");
    int32_t rc = 0;
    const Verdict v = oracle.decode(d, r.rest(), rc);
    Writer reply;
    reply.u8(uint32_t(v)).u32(uint32_t(rc));
    const GuardedSurface& s = oracle.surface();
    const uint32_t total = uint32_t(reply.bytes.size() + s.bytes());
    const uint8_t head[4] = {uint8_t(total), uint8_t(total >> 8), uint8_t(total >> 16), uint8_t(total >> 24)};
    if (!writeAll(fd, head, 4) || !writeAll(fd, reply.bytes.data(), reply.bytes.size()) ||
        !writeAll(fd, const_cast<GuardedSurface&>(s).bits(), s.bytes()))
      return 0;
  }
}
