// Cost and memory of the codecs (issue 24 part 2, issue 27.2), reported, not asserted:
// - decode time at 1920x1080 of the console's planar and ClearCodec decoders beside FreeRDP
//   3.10.3's on the same streams (QBENCHMARK: run with -iterations N, Release build);
// - what FreeRDP's progressive decoder allocates for a surface and when (malloc counting in
//   this executable, resident memory from /proc), and what ClearContext holds.
#include "rdp/codec/ClearContext.h"
#include "rdp/codec/PlanarDecoder.h"
#include "rdp/codec/ProgressiveFront.h"
#include "tests/auto/rdpcodec/ClearStreams.h"
#include "tests/auto/rdpcodec/CodecTestSupport.h"
#include "tests/auto/rdpcodec/PlanarSpecEncoder.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTest>

#include <freerdp/codec/clear.h>
#include <freerdp/codec/color.h>
#include <freerdp/codec/planar.h>
#include <freerdp/codec/progressive.h>
#include <freerdp/codec/region.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <malloc.h>
#include <unistd.h>
#include <vector>

using namespace codectest;

#if defined(__SANITIZE_ADDRESS__)
#define GC_COUNTS_MALLOC 0
#else
#define GC_COUNTS_MALLOC 1
// Every allocation of the process goes through here; while `counting` is set (around one
// FreeRDP call) calls and requested bytes are added up. glibc's own entry points do the work.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}
namespace {
std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};
std::atomic<uint64_t> requested{0};
inline void note(size_t n) {
  if (counting.load(std::memory_order_relaxed)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    requested.fetch_add(n, std::memory_order_relaxed);
  }
}
} // namespace
extern "C" void* malloc(size_t n) noexcept {
  note(n);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t c, size_t n) noexcept {
  note(c * n);
  return __libc_calloc(c, n);
}
extern "C" void* realloc(void* p, size_t n) noexcept {
  note(n);
  return __libc_realloc(p, n);
}
extern "C" void free(void* p) noexcept {
  __libc_free(p);
}
extern "C" int posix_memalign(void** p, size_t a, size_t n) noexcept {
  note(n);
  *p = __libc_memalign(a, n);
  return *p ? 0 : 12; // ENOMEM
}
extern "C" void* aligned_alloc(size_t a, size_t n) noexcept {
  note(n);
  return __libc_memalign(a, n);
}
extern "C" void* memalign(size_t a, size_t n) noexcept {
  note(n);
  return __libc_memalign(a, n);
}
#endif

namespace {

struct Counted {
  uint64_t allocations = 0;
  uint64_t bytes = 0;
};

template <typename F> Counted count(F&& f) {
#if GC_COUNTS_MALLOC
  allocations = 0;
  requested = 0;
  counting = true;
  f();
  counting = false;
  return {allocations.load(), requested.load()};
#else
  f();
  return {};
#endif
}

// RssAnon from /proc/self/status, in bytes.
uint64_t rssAnon() {
  QFile f(QStringLiteral("/proc/self/status"));
  if (!f.open(QIODevice::ReadOnly))
    return 0;
  for (const QByteArray& line : f.readAll().split('\n'))
    if (line.startsWith("RssAnon:"))
      return line.mid(8).trimmed().split(' ').value(0).toULongLong() * 1024;
  return 0;
}

double mib(uint64_t b) {
  return double(b) / (1024.0 * 1024.0);
}

std::vector<uint8_t> residualOf(const std::vector<uint8_t>& bgrx) {
  Residual r;
  size_t i = 0;
  const size_t n = bgrx.size() / 4;
  while (i < n) {
    size_t k = 1;
    while (i + k < n && std::equal(&bgrx[i * 4], &bgrx[i * 4] + 3, &bgrx[(i + k) * 4]))
      ++k;
    r.run(bgrx[i * 4], bgrx[i * 4 + 1], bgrx[i * 4 + 2], uint32_t(k));
    i += k;
  }
  return r.b.v;
}

} // namespace

class tst_RdpCodecBench : public QObject {
  Q_OBJECT
private slots:
  void decodesPlanar1080p_data() {
    QTest::addColumn<bool>("ours");
    QTest::addColumn<QByteArray>("stream");
    const uint32_t w = 1920, h = 1080;
    const auto desktop = makePicture(w, h, Pattern::Text);
    PlanarFlags rgbRle;
    rgbRle.rle = true, rgbRle.na = true;
    PlanarFlags rgbRaw;
    rgbRaw.na = true;
    PlanarFlags ycocg;
    ycocg.cll = 3, ycocg.cs = true, ycocg.rle = true, ycocg.na = true;
    const std::pair<const char*, PlanarFlags> kinds[] = {
        {"rle-rgb", rgbRle}, {"raw-rgb", rgbRaw}, {"rle-ycocg-cs", ycocg}};
    for (const auto& [name, f] : kinds) {
      const QByteArray s = toQByteArray(encodePlanar(desktop, w, h, f));
      QTest::addRow("%s-console", name) << true << s;
      QTest::addRow("%s-freerdp", name) << false << s;
    }
  }
  void decodesPlanar1080p() {
    QFETCH(bool, ours);
    QFETCH(QByteArray, stream);
    const uint32_t w = 1920, h = 1080;
    const std::span<const uint8_t> s(reinterpret_cast<const uint8_t*>(stream.constData()),
                                     size_t(stream.size()));
    std::vector<uint8_t> out(size_t(w) * h * 4);
    BITMAP_PLANAR_CONTEXT* planar = freerdp_bitmap_planar_context_new(0, w, h);
    bool ok = true;
    QBENCHMARK {
      if (ours)
        ok = ok &&
             !gc::front::isViolation(gc::codec::PlanarDecoder::decode(s, {out.data(), size_t(w) * 4, w, h}));
      else
        ok = ok && planar_decompress(planar, s.data(), UINT32(s.size()), w, h, out.data(),
                                     PIXEL_FORMAT_BGRX32, w * 4, 0, 0, w, h, FALSE);
    }
    freerdp_bitmap_planar_context_free(planar);
    QVERIFY(ok);
  }

  void decodesClearCodec1080p_data() {
    QTest::addColumn<bool>("ours");
    QTest::addColumn<QByteArray>("stream");
    const uint32_t w = 1920, h = 1080;
    const auto desktop = makePicture(w, h, Pattern::Text);
    Bytes residual;
    residual.bytes(residualOf(desktop));
    // Bands: 52-row bands over the whole screen, every column a short V-bar of 20 pixels.
    Bytes bands;
    for (uint32_t y = 0; y + 52 <= h; y += 52) {
      Band b(0, uint16_t(w - 1), uint16_t(y), uint16_t(y + 51), 0xF0, 0xF0, 0xF0);
      for (uint32_t x = 0; x < w; ++x)
        b.shortMiss(16, bgrRun(20, uint8_t(x)));
      bands.bytes(b.b);
    }
    Bytes nsc;
    nsc.bytes(Subcodec(0, 0, uint16_t(w), uint16_t(h), 1, nscByFreeRdp(desktop, w, h, 3, true)).b);
    const std::pair<const char*, Bytes> kinds[] = {
        {"residual", clearStream(0, 0, &residual, nullptr, nullptr)},
        {"bands", clearStream(0, 0, nullptr, &bands, nullptr)},
        {"nscodec", clearStream(0, 0, nullptr, nullptr, &nsc)}};
    for (const auto& [name, s] : kinds) {
      QTest::addRow("%s-console", name) << true << toQByteArray(s.span());
      QTest::addRow("%s-freerdp", name) << false << toQByteArray(s.span());
    }
  }
  void decodesClearCodec1080p() {
    QFETCH(bool, ours);
    QFETCH(QByteArray, stream);
    const uint32_t w = 1920, h = 1080;
    const std::span<const uint8_t> s(reinterpret_cast<const uint8_t*>(stream.constData()),
                                     size_t(stream.size()));
    std::vector<uint8_t> out(size_t(w) * h * 4);
    gc::codec::ClearContext ctx;
    CLEAR_CONTEXT* clear = clear_context_new(FALSE);
    bool ok = true;
    QBENCHMARK {
      if (ours) {
        ctx.resetSequence();
        ok = ok && !gc::front::isViolation(ctx.decode(s, {out.data(), size_t(w) * 4, w, h}));
      } else {
        clear_context_reset(clear);
        ok = ok && clear_decompress(clear, s.data(), UINT32(s.size()), w, h, out.data(), PIXEL_FORMAT_BGRX32,
                                    w * 4, 0, 0, w, h, nullptr) >= 0;
      }
    }
    clear_context_free(clear);
    QVERIFY(ok);
  }

  // When and what FreeRDP's progressive decoder allocates for a surface, and whether it goes.
  void measuresFreeRdpProgressiveSurfaceContext_data() {
    QTest::addColumn<uint>("w");
    QTest::addColumn<uint>("h");
    QTest::newRow("1024x768") << 1024u << 768u;
    QTest::newRow("1920x1080") << 1920u << 1080u;
    QTest::newRow("2560x1440") << 2560u << 1440u;
  }
  void measuresFreeRdpProgressiveSurfaceContext() {
    if (!GC_COUNTS_MALLOC)
      QSKIP("malloc counting needs a build without AddressSanitizer");
    QFETCH(uint, w);
    QFETCH(uint, h);
    const auto picture = makePicture(w, h, Pattern::Text);
    PROGRESSIVE_CONTEXT* enc = progressive_context_new(TRUE);
    BYTE* out = nullptr;
    UINT32 size = 0;
    QVERIFY(progressive_compress(enc, picture.data(), UINT32(picture.size()), PIXEL_FORMAT_BGRX32, w, h,
                                 w * 4, nullptr, &out, &size) > 0);
    const std::vector<uint8_t> stream(out, out + size);
    progressive_context_free(enc);
    std::vector<uint8_t> surface(size_t(w) * h * 4);
    malloc_trim(0);

    PROGRESSIVE_CONTEXT* p = nullptr;
    const uint64_t rss0 = rssAnon();
    const Counted context = count([&] { p = progressive_context_new(FALSE); });
    const uint64_t rss1 = rssAnon();
    const Counted create = count([&] { progressive_create_surface_context(p, 1, w, h); });
    const uint64_t rss2 = rssAnon();
    REGION16 invalid;
    region16_init(&invalid);
    const Counted decode = count([&] {
      progressive_decompress(p, stream.data(), UINT32(stream.size()), surface.data(), PIXEL_FORMAT_BGRX32,
                             w * 4, 0, 0, &invalid, 1, 1);
    });
    region16_uninit(&invalid);
    const uint64_t rss3 = rssAnon();
    const Counted second = count([&] {
      REGION16 r;
      region16_init(&r);
      progressive_decompress(p, stream.data(), UINT32(stream.size()), surface.data(), PIXEL_FORMAT_BGRX32,
                             w * 4, 0, 0, &r, 1, 2);
      region16_uninit(&r);
    });
    const uint64_t rss4 = rssAnon();
    progressive_delete_surface_context(p, 1);
    const uint64_t rss5 = rssAnon();
    malloc_trim(0);
    const uint64_t rss6 = rssAnon();
    // Dropping and re-making the surface context (what a caller could do between frames
    // when no tile waits for an upgrade): its cost.
    QElapsedTimer t;
    t.start();
    for (int i = 0; i < 20; ++i) {
      progressive_create_surface_context(p, 1, w, h);
      progressive_delete_surface_context(p, 1);
    }
    const double recreateMs = double(t.nsecsElapsed()) / 20 / 1e6;
    progressive_context_free(p);
    const uint32_t freerdpGrid = ((w + (64 - w % 64)) / 64) * ((h + (64 - h % 64)) / 64);
    const uint32_t realGrid = ((w + 63) / 64) * ((h + 63) / 64);
    qInfo("progressive %ux%u: FreeRDP grid %u tiles (the surface needs %u)", w, h, freerdpGrid, realGrid);
    qInfo("  progressive_context_new: %llu allocations, %.1f MiB requested, RssAnon %+.1f MiB",
          (unsigned long long)context.allocations, mib(context.bytes), mib(rss1) - mib(rss0));
    qInfo("  create_surface_context: %llu allocations, %.1f MiB requested, RssAnon %+.1f MiB",
          (unsigned long long)create.allocations, mib(create.bytes), mib(rss2) - mib(rss1));
    qInfo("  first full-surface stream (%u bytes): %llu allocations, %.1f MiB, RssAnon %+.1f MiB", size,
          (unsigned long long)decode.allocations, mib(decode.bytes), mib(rss3) - mib(rss2));
    qInfo("  second stream: %llu allocations, RssAnon %+.1f MiB", (unsigned long long)second.allocations,
          mib(rss4) - mib(rss3));
    qInfo("  delete_surface_context: RssAnon %+.1f MiB; after malloc_trim %+.1f MiB", mib(rss5) - mib(rss4),
          mib(rss6) - mib(rss5));
    qInfo("  create + delete: %.2f ms", recreateMs);
  }

  // What ClearContext makes resident: nothing before its first stream, the slots written after.
  void measuresClearContextMemory() {
    malloc_trim(0);
    const uint64_t before = rssAnon();
    auto* ctx = new gc::codec::ClearContext;
    const uint32_t w = 1920, h = 52;
    std::vector<uint8_t> out(size_t(w) * h * 4);
    Residual r;
    r.run(1, 2, 3, w * h);
    const Bytes s0 = clearStream(0, 0, &r.b, nullptr, nullptr);
    QVERIFY(!gc::front::isViolation(ctx->decode(s0.span(), {out.data(), size_t(w) * 4, w, h})));
    const uint64_t allocated = rssAnon();
    // 18 bands of 1920 new V-bars fill the 32768-slot V-bar storage and cycle the short one.
    uint8_t seq = 1;
    for (int i = 0; i < 18; ++i) {
      Band b(0, uint16_t(w - 1), 0, 51, 9, 9, 9);
      for (uint32_t x = 0; x < w; ++x)
        b.shortMiss(0, bgrRun(52, uint8_t(x + i)));
      QVERIFY(!gc::front::isViolation(ctx->decode(clearStream(0, seq++, nullptr, &b.b, nullptr).span(),
                                                  {out.data(), size_t(w) * 4, w, h})));
    }
    const uint64_t full = rssAnon();
    const size_t fullAllocated = ctx->allocatedBytes();
    delete ctx;
    malloc_trim(0);
    const uint64_t after = rssAnon();
    qInfo(
        "ClearContext: bound %.1f MiB; RssAnon %+.1f MiB after a residual-only stream, %+.1f MiB with every "
        "V-bar slot written (allocated %.1f MiB), %+.1f MiB after destruction",
        mib(gc::codec::ClearContext::storageBytes()), mib(allocated) - mib(before), mib(full) - mib(before),
        mib(fullAllocated), mib(after) - mib(before));
  }
};

QTEST_GUILESS_MAIN(tst_RdpCodecBench)
#include "tst_rdpcodecbench.moc"
