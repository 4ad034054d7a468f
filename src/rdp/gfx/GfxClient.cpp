#include "rdp/gfx/GfxClient.h"

#include "rdp/gfx/GfxCaps.h"

#include <cstring>

namespace gc::gfx {

using front::Checked;
using front::Ok;
using front::Violation;

GfxClient::GfxClient(const front::Limits& limits, DesktopSurface& desktop, std::function<void()> frameEnded,
                     ChannelReport* report)
    : m_limits(limits), m_table(limits, desktop), m_front(limits), m_zgfx(limits.maxGfxMessageBytes),
      m_codecs(limits), m_frameEnded(std::move(frameEnded)), m_report(report),
      m_ackNow([](uint32_t) { return true; }) {}

GfxClient::~GfxClient() {
  closed();
}

Violation GfxClient::fail(Violation v) {
  if (!m_violation)
    m_violation = v;
  m_comingUp.store(false, std::memory_order_release); // nothing more comes on it
  return *m_violation;
}

bool GfxClient::opened(Write write) {
  m_write = std::move(write);
  m_comingUp.store(m_framesDecoded == 0 && !m_violation, std::memory_order_release);
  m_everOpened.store(true, std::memory_order_release);
  const std::vector<uint8_t> advertise = encodeCapsAdvertise();
  return m_write && m_write(advertise);
}

bool GfxClient::readvertise() {
  if (!m_write || m_violation || !m_front.caps())
    return false;
  m_front.expectCapsConfirm();
  const std::vector<uint8_t> advertise = encodeCapsAdvertise();
  return m_write(advertise);
}

void GfxClient::closed() {
  m_table.clear();
  m_codecs.reset();
  m_zgfx.reset();
  m_front.reset();
  m_scratch.release();
  m_deferred.clear();
  m_write = nullptr;
  m_comingUp.store(false, std::memory_order_release);
}

Checked<Ok> GfxClient::receive(std::span<const uint8_t> message) {
  if (m_violation)
    return *m_violation;
  Checked<std::span<const uint8_t>> plain = m_zgfx.decompress(message);
  if (front::isViolation(plain))
    return fail(std::get<Violation>(plain));
  PduCursor cursor(std::get<std::span<const uint8_t>>(plain));
  for (;;) {
    Checked<std::optional<Pdu>> next = cursor.next();
    if (front::isViolation(next))
      return fail(std::get<Violation>(next));
    const std::optional<Pdu>& pdu = std::get<std::optional<Pdu>>(next);
    if (!pdu)
      break;
    if (Checked<Ok> ok = m_front.check(*pdu, m_table); front::isViolation(ok))
      return fail(std::get<Violation>(ok));
    if (Checked<Ok> ok = execute(*pdu); front::isViolation(ok))
      return fail(std::get<Violation>(ok));
    if (m_report)
      m_report->noteGfxCommand(pduName(*pdu));
  }
  // Commands outside any frame are shown as they come; a frame still open waits for its end.
  if (m_front.inFrame()) {
    if (m_frameBegan)
      m_frameBegan();
  } else if (m_frameEnded) {
    m_frameEnded();
  }
  return Ok{};
}

Checked<Ok> GfxClient::wireToSurface1(const WireToSurface1& p) {
  SurfaceTable::Surface& s = *m_table.surface(p.surfaceId);
  const QRect rect(int(p.dest.left), int(p.dest.top), int(p.dest.width()), int(p.dest.height()));
  if (m_report)
    m_report->noteGfxCodec(p.codecId);
  if (p.codecId == codec::kUncompressed) {
    if (!m_table.write(s, rect, p.data.data(), qsizetype(rect.width()) * 4))
      return Violation::resource("rdpgfx.WireToSurface1", "surface pixels cannot be allocated");
    return Ok{};
  }
  const qsizetype rowBytes = qsizetype(rect.width()) * 4;
  uchar* out = m_scratch.get(std::size_t(rowBytes) * std::size_t(rect.height()));
  const uchar* shown = m_table.pixels(s);
  if (!out || !shown)
    return Violation::resource("rdpgfx.WireToSurface1", "no scratch for the rectangle");
  // What the surface shows there: ClearCodec and alpha draw over it.
  for (int r = 0; r < rect.height(); ++r)
    std::memcpy(out + r * rowBytes,
                shown + qsizetype(rect.top() + r) * m_table.stride(s) + qsizetype(rect.left()) * 4,
                std::size_t(rowBytes));
  const Pixels pixels{out, rowBytes, rect.width(), rect.height()};
  if (Checked<Ok> ok = m_codecs.decode(p.codecId, p.data, pixels, s.pixelFormat == kPixelFormatArgb);
      front::isViolation(ok))
    return ok;
  m_table.write(s, rect, out, rowBytes);
  return Ok{};
}

Checked<Ok> GfxClient::wireToSurface2(const WireToSurface2& p) {
  SurfaceTable::Surface& s = *m_table.surface(p.surfaceId);
  if (m_report)
    m_report->noteGfxCodec(p.codecId);
  uchar* bits = m_table.pixels(s);
  if (!bits)
    return Violation::resource("rdpgfx.WireToSurface2", "surface pixels cannot be allocated");
  const Pixels pixels{bits, m_table.stride(s), s.size.width(), s.size.height()};
  s.progressive = true;
  Checked<Ok> ok =
      m_codecs.decodeProgressive(p.surfaceId, p.data, pixels, s.pixelFormat == kPixelFormatArgb, m_touched);
  m_table.noteDecoded(s, m_touched); // what it wrote before a failure is shown too
  return ok;
}

Checked<Ok> GfxClient::execute(const Pdu& pdu) {
  if (const auto* p = std::get_if<WireToSurface1>(&pdu))
    return wireToSurface1(*p);
  if (const auto* p = std::get_if<WireToSurface2>(&pdu))
    return wireToSurface2(*p);
  if (const auto* p = std::get_if<SolidFill>(&pdu)) {
    SurfaceTable::Surface& s = *m_table.surface(p->surfaceId);
    for (const Rect16& r : p->rects) {
      if (!r.empty() && !m_table.fill(s, QRect(r.left, r.top, int(r.width()), int(r.height())), p->bgrx))
        return Violation::resource("rdpgfx.SolidFill", "surface pixels cannot be allocated");
    }
    return Ok{};
  }
  if (const auto* p = std::get_if<SurfaceToSurface>(&pdu)) {
    SurfaceTable::Surface& from = *m_table.surface(p->sourceId);
    SurfaceTable::Surface& to = *m_table.surface(p->destId);
    const QRect source(p->source.left, p->source.top, int(p->source.width()), int(p->source.height()));
    for (const Point16& pt : p->targets) {
      if (!m_table.copy(from, source, to, QPoint(pt.x, pt.y)))
        return Violation::resource("rdpgfx.SurfaceToSurface", "surface pixels cannot be allocated");
    }
    return Ok{};
  }
  if (const auto* p = std::get_if<SurfaceToCache>(&pdu)) {
    const QRect source(p->source.left, p->source.top, int(p->source.width()), int(p->source.height()));
    if (!m_table.toCache(p->cacheSlot, *m_table.surface(p->surfaceId), source))
      return Violation::resource("rdpgfx.SurfaceToCache", "cache entry cannot be allocated");
    return Ok{};
  }
  if (const auto* p = std::get_if<CacheToSurface>(&pdu)) {
    SurfaceTable::Surface& to = *m_table.surface(p->surfaceId);
    for (const Point16& pt : p->targets) {
      if (!m_table.fromCache(p->cacheSlot, to, QPoint(pt.x, pt.y)))
        return Violation::resource("rdpgfx.CacheToSurface", "surface pixels cannot be allocated");
    }
    return Ok{};
  }
  if (const auto* p = std::get_if<EvictCacheEntry>(&pdu)) {
    m_table.evict(p->cacheSlot);
    return Ok{};
  }
  if (const auto* p = std::get_if<CreateSurface>(&pdu)) {
    m_table.create(p->surfaceId, QSize(p->width, p->height), p->pixelFormat);
    return Ok{};
  }
  if (const auto* p = std::get_if<DeleteSurface>(&pdu)) {
    m_table.forgetDeletedByReset(p->surfaceId);
    m_table.remove(p->surfaceId);
    m_codecs.deleteSurface(p->surfaceId);
    return Ok{};
  }
  if (const auto* p = std::get_if<EndFrame>(&pdu)) {
    endFrame(p->frameId);
    return Ok{};
  }
  if (const auto* p = std::get_if<ResetGraphics>(&pdu)) {
    std::vector<uint16_t> progressive;
    const bool fits = m_table.resetDesktop(QSize(int(p->width), int(p->height)), progressive);
    for (const uint16_t id : progressive)
      m_codecs.deleteSurface(id);
    if (!fits)
      return Violation::resource("rdpgfx.ResetGraphics", "desktop beyond the surface of record");
    m_codecs.resetGraphics();
    return Ok{};
  }
  if (const auto* p = std::get_if<MapSurfaceToOutput>(&pdu)) {
    m_table.mapToOutput(p->surfaceId, QPoint(int(p->originX), int(p->originY)));
    return Ok{};
  }
  if (const auto* p = std::get_if<CapsConfirm>(&pdu)) {
    if (m_report)
      m_report->noteGfxCapsVersion(p->version);
    // The answer to the latest CapsAdvertise only (the server answers in order): one to an
    // earlier re-advertise, from before a later lock's drained input, answers nothing now.
    if (m_capsConfirmed && m_front.capsConfirmsExpected() == 0)
      m_capsConfirmed();
    return Ok{};
  }
  // StartFrame, DeleteEncodingContext: nothing to execute (the front keeps the frame).
  return Ok{};
}

void GfxClient::endFrame(uint32_t frameId) {
  ++m_framesDecoded;
  m_comingUp.store(false, std::memory_order_release);
  if (m_report)
    m_report->noteGfxFrame();
  if (m_frameEnded)
    m_frameEnded();
  if (m_ackNow && !m_ackNow(frameId)) {
    m_deferred.push_back(frameId);
    return;
  }
  acknowledgeDeferred();
  acknowledge(frameId);
}

void GfxClient::acknowledge(uint32_t frameId) {
  // queueDepth: the frames still held by the pacing after this one (0 also means "not
  // available"); never SUSPEND_FRAME_ACKNOWLEDGEMENT.
  const std::vector<uint8_t> ack =
      encodeFrameAcknowledge(uint32_t(m_deferred.size()), frameId, m_framesDecoded);
  if (m_write && m_write(ack))
    ++m_acknowledged;
  m_front.noteAcknowledged(1);
}

void GfxClient::acknowledgeDeferred() {
  while (!m_deferred.empty()) {
    const uint32_t id = m_deferred.front();
    m_deferred.pop_front();
    acknowledge(id);
  }
}

} // namespace gc::gfx
