// gc-bench-frames: figures for docs/performance.md. A plain harness (not a CTest test).
//
//   gc-bench-frames [--frames N] [--cpu C] [workload...]
//   workloads: typing scrolling animation variants encoders stall (default: all)
//
// Each workload runs in its own child process so that VmHWM (peak RSS) is per workload.
// Encoding is timed on one thread pinned to one core (sched_setaffinity), calling
// FrameEncoder directly: exactly the work FramePipeline's single encoder thread does.
#include "bridge/frames/FrameEncoder.h"
#include "bridge/frames/FramePipeline.h"
#include "bridge/frames/PngEncoder.h"
#include "tests/bench/SyntheticDesktop.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QImage>

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sched.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace gc;

namespace {

const QSize kDesktop(1920, 1080);
int g_frames = 300;

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

long vmHwmKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stol(line.substr(6));
    }
  }
  return -1;
}

struct Stats {
  double median = 0;
  double p99 = 0;
  double total = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) {
    return s;
  }
  for (double x : v) {
    s.total += x;
  }
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, size_t(double(v.size()) * 0.99))];
  return s;
}

FrameJob makeJob(const QImage& frame, const QList<QRect>& dirty, quint32 id, bool full, bool copies = false) {
  FrameJob job;
  job.copies = copies; // the panel takes copy records (its hello's "copy_rect")
  job.frame = frame;
  job.damage = DamageMask(frame.size());
  for (const QRect& r : dirty) {
    job.damage.add(r);
  }
  job.full = full;
  job.frameId = id;
  return job;
}

// Runs `frames` frames through one FrameEncoder; frame(i) builds frame i and its dirty
// rects (untimed); only encode() is timed. The first frame (full, for a new panel) is
// reported separately; warm-up frames (before the encoder choice sees motion) are
// included in the figures.
void runWorkload(const char* name, const FrameEncoder::Settings& settings,
                 const std::function<QImage(int, QList<QRect>&)>& frame, bool copies = false) {
  FrameEncoder encoder(settings);
  QList<QRect> dirty;
  QImage first = frame(0, dirty);
  auto start = Clock::now();
  const FrameResult full = encoder.encode(makeJob(first, {}, 1, true));
  const double fullMs = msSince(start);
  std::vector<double> times;
  std::vector<double> bytes;
  qint64 maxBytes = 0;
  int jpegFrames = 0;
  // As in the console, the frame's owner (the console's DesktopFrames) still holds the last
  // frame while the next one is encoded: the encoder's reference is a shared frame.
  QImage held = first;
  for (int i = 1; i <= g_frames; ++i) {
    dirty.clear();
    const QImage next = frame(i, dirty);
    start = Clock::now();
    const FrameResult r = encoder.encode(makeJob(next, dirty, quint32(i + 1), false, copies));
    held = next;
    times.push_back(msSince(start));
    bytes.push_back(double(r.packet.size()));
    maxBytes = std::max<qint64>(maxBytes, r.packet.size());
    jpegFrames += r.jpegRects > 0 ? 1 : 0;
  }
  const Stats t = stats(times);
  const Stats b = stats(bytes);
  std::printf("| %s | %.2f | %.2f | %.0f | %.0f | %lld | %.0f | %d/%d | %.1f ms, %lld B | %.1f | %.1f |\n",
              name, t.median, t.p99, b.median, b.total / double(bytes.size()),
              static_cast<long long>(maxBytes), 1000.0 * double(times.size()) / t.total, jpegFrames, g_frames,
              fullMs, static_cast<long long>(full.packet.size()), double(vmHwmKiB()) / 1024.0,
              double(encoder.bytesHeld()) / (1024.0 * 1024.0));
  std::fflush(stdout);
}

void header() {
  std::printf(
      "| workload | encode median ms | p99 ms | bytes/frame median | mean | max | frames/s (1 core) | "
      "JPEG frames | first full frame | VmHWM MiB | bytesHeld MiB |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
}

QImage typingFrame(const QImage& page, QImage& state, int i, QList<QRect>& dirty) {
  if (i == 0) {
    state = page;
    return state;
  }
  QImage next = state.copy();
  const int col = (i - 1) % 180;
  const int line = ((i - 1) / 180) % 50;
  const QPoint at(8 + col * synthetic::kGlyphWidth, 8 + line * (synthetic::kGlyphHeight + 4));
  synthetic::drawGlyph(next, at.x(), at.y(), quint32(i) * 7919U);
  dirty.append(QRect(at, QSize(synthetic::kGlyphWidth, synthetic::kGlyphHeight)));
  state = next;
  return next;
}

void typing(const FrameEncoder::Settings& settings) {
  const QImage page = synthetic::textPage(kDesktop);
  QImage state;
  runWorkload("typing burst (one 10x16 glyph per frame)", settings,
              [&](int i, QList<QRect>& dirty) { return typingFrame(page, state, i, dirty); });
}

// `copies`: the panel takes copy records, so the encoder's move search (MoveSearch) sends
// the scroll as a copy plus the rows scrolled in (issue 27.5).
void scrolling(const FrameEncoder::Settings& settings, int step, bool copies = false) {
  const QImage tall = synthetic::textPage(QSize(kDesktop.width(), kDesktop.height() + (g_frames + 1) * step));
  const std::string name =
      "scrolling text page (" + std::to_string(step) + " px/frame" + (copies ? ", copy records)" : ")");
  runWorkload(
      name.c_str(), settings,
      [&](int i, QList<QRect>& dirty) {
        dirty.append(QRect(QPoint(0, 0), kDesktop));
        return tall.copy(0, i * step, kDesktop.width(), kDesktop.height());
      },
      copies);
}

void animation(const FrameEncoder::Settings& settings, const char* name) {
  runWorkload(name, settings, [&](int i, QList<QRect>& dirty) {
    dirty.append(QRect(QPoint(0, 0), kDesktop));
    return synthetic::animationFrame(kDesktop, i);
  });
}

void variants() {
  header();
  struct Variant {
    const char* name;
    int quality;
    bool accurateDct;
    bool subsample;
  };
  const Variant list[] = {
      {"animation, JPEG q80 4:2:0 TJFLAG_ACCURATEDCT", 80, true, true},
      {"animation, JPEG q80 4:2:0 fast DCT (default)", 80, false, true},
      {"animation, JPEG q80 4:4:4 fast DCT", 80, false, false},
      {"animation, JPEG q60 4:2:0 fast DCT (panel lagging)", 60, false, true},
      {"animation, JPEG q40 4:2:0 fast DCT (panel lagging)", 40, false, true},
  };
  for (const Variant& v : list) {
    FrameEncoder::Settings s;
    s.policy.qualities[0] = v.quality;
    s.jpeg.accurateDct = v.accurateDct;
    s.jpeg.subsample = v.subsample;
    animation(s, v.name);
  }
  FrameEncoder::Settings pngOnly;
  pngOnly.policy.minLossyArea = qint64(1) << 40; // never lossy
  animation(pngOnly, "animation, PNG only (never JPEG)");
  scrolling(pngOnly, 10);
}

// One encoder on one image region, repeated; median time and size.
void measure(const char* encoder, const char* content, const std::function<qsizetype()>& run) {
  std::vector<double> times;
  qsizetype size = 0;
  const int reps = 15;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    size = run();
    times.push_back(msSince(start));
  }
  std::printf("| %s | %s | %.3f | %lld |\n", content, encoder, stats(times).median,
              static_cast<long long>(size));
  std::fflush(stdout);
}

void encoders() {
  std::printf("| content | encoder | median ms | bytes |\n|---|---|---|---|\n");
  struct Content {
    const char* name;
    QImage image;
  };
  const QImage page = synthetic::textPage(kDesktop);
  const Content contents[] = {
      {"glyph 10x16", page.copy(208, 68, 10, 16)},
      {"UI/text 256x256", page.copy(0, 0, 256, 256)},
      {"text page 1920x1080", page},
      {"animation 1920x1080", synthetic::animationFrame(kDesktop, 10)},
  };
  struct Png {
    const char* name;
    PngEncoder::Settings settings;
  };
  const Png pngs[] = {
      {"libpng level 1, SUB filter (default)", {1, 0x10, Z_DEFAULT_STRATEGY}},
      {"libpng level 1, no filter", {1, 0x08, Z_DEFAULT_STRATEGY}},
      {"libpng level 1, all filters", {1, 0xf8, Z_DEFAULT_STRATEGY}},
      {"libpng level 1, SUB, Z_RLE", {1, 0x10, Z_RLE}},
      {"libpng level 3, SUB filter", {3, 0x10, Z_DEFAULT_STRATEGY}},
      {"libpng level 6, all filters", {6, 0xf8, Z_DEFAULT_STRATEGY}},
  };
  for (const Content& c : contents) {
    const QRect all(QPoint(0, 0), c.image.size());
    for (const Png& p : pngs) {
      const PngEncoder png(p.settings);
      measure(p.name, c.name, [&] {
        QByteArray out;
        png.encode(c.image, all, out);
        return out.size();
      });
    }
    measure("QImage PNG (default)", c.name, [&] {
      QByteArray out;
      QBuffer buffer(&out);
      buffer.open(QIODevice::WriteOnly);
      c.image.save(&buffer, "PNG");
      return out.size();
    });
    measure("zlib deflate level 1 of raw BGRX (no PNG; lower bound)", c.name, [&] {
      uLongf size = compressBound(uLong(c.image.sizeInBytes()));
      std::vector<Bytef> out(size);
      compress2(out.data(), &size, c.image.constBits(), uLong(c.image.sizeInBytes()), 1);
      return qsizetype(size);
    });
    for (const int q : {80, 60}) {
      for (const bool accurate : {false, true}) {
        JpegEncoder jpeg(JpegEncoder::Settings{accurate, true});
        const std::string name =
            "TurboJPEG q" + std::to_string(q) + " 4:2:0" + (accurate ? " ACCURATEDCT" : "");
        measure(name.c_str(), c.name, [&] {
          QByteArray out;
          jpeg.encode(c.image, all, q, out);
          return out.size();
        });
      }
    }
    measure("QImage JPEG q80", c.name, [&] {
      QByteArray out;
      QBuffer buffer(&out);
      buffer.open(QIODevice::WriteOnly);
      c.image.save(&buffer, "JPEG", 80);
      return out.size();
    });
  }
}

// A stalled panel: no acks; 1,000 animation-sized full-screen frames submitted at full speed
// through the real pipeline (encoder thread included). Memory must not grow.
void stall() {
  FramePipeline pipeline;
  int packets = 0;
  QObject::connect(&pipeline, &FramePipeline::packetReady, [&](const QByteArray&, quint32) { ++packets; });
  const QImage a = synthetic::animationFrame(kDesktop, 1);
  const QImage b = synthetic::animationFrame(kDesktop, 2);
  std::printf("| submitted | packets | bytesHeld MiB | VmHWM MiB |\n|---|---|---|---|\n");
  for (int i = 1; i <= 1000; ++i) {
    // A new QImage per submit (detached copy), as the RDP session produces them.
    const QImage frame = (i % 2 == 0 ? a : b).copy();
    pipeline.submit(frame, {QRect(QPoint(0, 0), kDesktop)});
    QCoreApplication::processEvents();
    if (i == 10 || i == 100 || i == 500 || i == 1000) {
      std::printf("| %d | %d | %.1f | %.1f |\n", i, packets, double(pipeline.bytesHeld()) / (1024.0 * 1024.0),
                  double(vmHwmKiB()) / 1024.0);
      std::fflush(stdout);
    }
  }
}

void runOne(const std::string& workload) {
  FrameEncoder::Settings defaults;
  if (workload == "typing") {
    header();
    typing(defaults);
  } else if (workload == "scrolling") {
    header();
    for (const int step : {4, 10}) {
      scrolling(defaults, step);
      scrolling(defaults, step, true);
    }
  } else if (workload == "animation") {
    header();
    animation(defaults, "full-screen animation");
  } else if (workload == "variants") {
    variants();
  } else if (workload == "encoders") {
    encoders();
  } else if (workload == "stall") {
    stall();
  } else {
    std::fprintf(stderr, "unknown workload %s\n", workload.c_str());
  }
}

} // namespace

int main(int argc, char** argv) {
  int cpu = 0;
  std::vector<std::string> workloads;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--frames" && i + 1 < argc) {
      g_frames = std::max(10, std::atoi(argv[++i]));
    } else if (arg == "--cpu" && i + 1 < argc) {
      cpu = std::atoi(argv[++i]);
    } else {
      workloads.push_back(arg);
    }
  }
  if (workloads.empty()) {
    workloads = {"typing", "scrolling", "animation", "variants", "encoders", "stall"};
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    std::perror("sched_setaffinity");
  }
  std::printf("gc-bench-frames: %dx%d, %d frames per workload, pinned to CPU %d\n\n", kDesktop.width(),
              kDesktop.height(), g_frames, cpu);
  for (const std::string& w : workloads) {
    std::printf("### %s\n\n", w.c_str());
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      QCoreApplication app(argc, argv); // image format plugins (QImage JPEG) need an app
      runOne(w);
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("\n");
  }
  return 0;
}
