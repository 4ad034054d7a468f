// gc::FrameReader: the one reader of GCF1 binary frame updates (the Qt viewer's, the demo's
// and the bench's panels read every frame with it). parse() on every input; a frame that
// parses is applied (its images decoded, its copies moved) onto a previous canvas, when its
// desktop is small enough to keep the fuzzer fast: parse() itself bounds the desktop at
// FrameReader::kMaxSide a side. Only crashes and sanitizer findings count; refusals are the
// expected outcome for almost every input.
#include "bridge/frames/FrameReader.h"

#include <QImage>

#include <cstddef>
#include <cstdint>

namespace {
constexpr int kMaxAppliedSide = 256;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArray packet(reinterpret_cast<const char*>(data), qsizetype(size));
  (void)gc::FrameReader::peekFrameId(packet);
  const gc::Outcome<gc::FrameReader> frame = gc::FrameReader::parse(packet);
  if (!frame.ok())
    return 0;
  const QSize desktop = frame->desktopSize();
  if (desktop.width() > kMaxAppliedSide || desktop.height() > kMaxAppliedSide)
    return 0;
  // Every record's bytes stay inside the packet.
  for (const gc::FrameRecord& r : frame->rects()) {
    const QByteArrayView bytes = frame->bytes(r);
    if (!r.isCopy() && bytes.size() != r.length)
      __builtin_trap();
  }
  // A previous canvas of another size (the update's size wins) and one of the same size.
  QImage previous(desktop.width() / 2 + 1, desktop.height() + 1, QImage::Format_RGB32);
  previous.fill(0xff336699U);
  const gc::Outcome<QImage> first = frame->apply(previous);
  if (first.ok() && first->size() != desktop)
    __builtin_trap();
  if (first.ok())
    (void)frame->apply(*first);
  return 0;
}
