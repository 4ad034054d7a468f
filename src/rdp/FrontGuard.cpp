#include "rdp/FrontGuard.h"

#include "privacy/SecureZero.h"
#include "rdp/RdpContext.h"
#include "rdp/WLogRouter.h"

#include <freerdp/channels/channels.h>
#include <freerdp/freerdp.h>
#include <freerdp/settings.h>
#include <freerdp/svc.h>
#include <freerdp/transport_io.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <string.h>

namespace gc {

namespace {

uint64_t nowNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

void noteMax(std::atomic<uint64_t>& max, uint64_t value) {
  uint64_t seen = max.load(std::memory_order_relaxed);
  while (value > seen && !max.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

int readPdu(rdpTransport* transport, wStream* s) {
  rdpContext* context = transport_get_context(transport);
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  const int rc = ctx->originalReadPdu ? ctx->originalReadPdu(transport, s) : -1;
  // rc > 0: the stream holds exactly one complete PDU (position 0, length rc).
  if (rc <= 0 || !ctx->front)
    return rc;
  if (!ctx->front->checkPdu(context, Stream_Buffer(s), Stream_Length(s))) {
    freerdp_set_last_error_if_not(context, FREERDP_ERROR_CONNECT_TRANSPORT_FAILED);
    return -1;
  }
  return rc;
}

} // namespace

FrontGuard::FrontGuard(front::Limits limits) : m_limits(limits), m_pdu(limits), m_dynvc(limits) {}

front::Limits FrontGuard::limitsFor(const RdpConfig& config) {
  front::Limits limits;
  limits.desktopWidth = config.desktop.width ? config.desktop.width : 1920;
  limits.desktopHeight = config.desktop.height ? config.desktop.height : 1080;
  limits.sizeFromServer = config.sizeFromServer || !config.desktop.width || !config.desktop.height;
  return limits;
}

void FrontGuard::install(rdpContext* context, rdpTransportIo& io) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  if (io.ReadPdu == &readPdu)
    return;
  ctx->originalReadPdu = io.ReadPdu;
  io.ReadPdu = &readPdu;
}

bool FrontGuard::checkPdu(rdpContext* context, const uint8_t* data, size_t size) {
  if (m_redirection)
    return false; // the connection is over: nothing after the redirection is read
  freerdp* instance = context->instance;
  if (m_pdu.wantsChannels()) {
    // FreeRDP has processed the MCS Connect Response: its channel ids are known.
    rdpSettings* settings = instance->context->settings;
    std::array<uint16_t, front::PduFront::kMaxStaticChannels> ids{};
    size_t n = 0;
    const UINT32 count = freerdp_settings_get_uint32(settings, FreeRDP_ChannelCount);
    for (UINT32 i = 0; i < count && n < ids.size(); ++i) {
      const auto* def = static_cast<const CHANNEL_DEF*>(
          freerdp_settings_get_pointer_array(settings, FreeRDP_ChannelDefArray, i));
      if (def) {
        char name[CHANNEL_NAME_LEN + 1] = {};
        std::copy_n(def->name, CHANNEL_NAME_LEN, name);
        if (const UINT16 id = freerdp_channels_get_id_by_name(instance, name))
          ids[n++] = id;
      }
    }
    m_pdu.setStaticChannels(std::span<const uint16_t>(ids.data(), n));
  }
  const uint64_t start = nowNs();
  const auto result = m_pdu.check(std::span<const uint8_t>(data, size));
  const uint64_t spent = nowNs() - start;
  m_pdus.fetch_add(1, std::memory_order_relaxed);
  m_bytes.fetch_add(size, std::memory_order_relaxed);
  m_checkNs.fetch_add(spent, std::memory_order_relaxed);
  noteMax(m_maxCheckNs, spent);
  m_checkNsLog2[std::min<size_t>(std::bit_width(spent), m_checkNsLog2.size() - 1)].fetch_add(
      1, std::memory_order_relaxed);
  if (const auto* v = std::get_if<front::Violation>(&result)) {
    record(*v);
    return false;
  }
  if (const auto& info = std::get<front::PduInfo>(result); info.redirection) {
    // Refused here, before FreeRDP reads the target (and resolves any host name in it).
    m_redirectionFlags = info.redirectionFlags;
    m_redirection = true;
    qCWarning(lcRdp) << "the guest sent a Server Redirection PDU: refused before FreeRDP read it";
    return false;
  }
  return true;
}

bool FrontGuard::admitDynvcChunk(rdpContext* context, const uint8_t* data, size_t size, uint32_t flags,
                                 size_t total) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  return !ctx->front || ctx->front->checkDynvcChunk(data, size, flags, total);
}

bool FrontGuard::checkDynvcChunk(const uint8_t* data, size_t size, uint32_t flags, size_t total) {
  std::span<const uint8_t> head;
  if ((flags & CHANNEL_FLAG_FIRST) && (flags & CHANNEL_FLAG_LAST)) {
    // The whole message in one chunk (almost every drdynvc message): judged where it lies.
    m_inMessage = false;
    head = std::span<const uint8_t>(data, data ? size : 0);
    total = head.size();
  } else {
    if (flags & CHANNEL_FLAG_FIRST) {
      m_inMessage = true;
      m_headLength = 0;
      m_total = total;
    }
    if (!m_inMessage) {
      // PduFront refuses a chunk without a first; FreeRDP's own reassembly drops it too.
      return true;
    }
    const size_t take = std::min(m_head.size() - m_headLength, data ? size : 0);
    std::copy_n(data, take, m_head.data() + m_headLength);
    m_headLength += take;
    if (!(flags & CHANNEL_FLAG_LAST))
      return true;
    m_inMessage = false;
    head = std::span<const uint8_t>(m_head.data(), m_headLength);
    total = m_total;
  }
  const uint64_t start = nowNs();
  const auto result = m_dynvc.checkHead(head, total);
  m_dynvcNs.fetch_add(nowNs() - start, std::memory_order_relaxed);
  m_dynvcMessages.fetch_add(1, std::memory_order_relaxed);
  if (m_headLength) { // the copy held guest bytes
    secureZero(m_head.data(), m_headLength);
    m_headLength = 0;
  }
  if (const auto* v = std::get_if<front::Violation>(&result)) {
    record(*v);
    return false;
  }
  return true;
}

void FrontGuard::record(const front::Violation& v) {
  {
    std::lock_guard lock(m_mutex);
    if (m_violation || m_redirection)
      return;
    m_violation = v;
    m_refusedDesktop = m_pdu.refusedDesktop();
  }
  qCWarning(lcRdp).nospace() << "refused a guest PDU: "
                             << QLatin1String(v.pdu.data(), qsizetype(v.pdu.size())) << ": "
                             << QLatin1String(v.rule.data(), qsizetype(v.rule.size()));
}

std::optional<front::Violation> FrontGuard::violation() const {
  std::lock_guard lock(m_mutex);
  return m_violation;
}

std::optional<front::PduFront::Size> FrontGuard::refusedDesktop() const {
  std::lock_guard lock(m_mutex);
  return m_refusedDesktop;
}

std::optional<Failure> FrontGuard::failure() const {
  if (const auto size = refusedDesktop(); size && !m_limits.sizeFromServer) {
    // size_from "grant": any other size is the grant's mismatch, refused before FreeRDP resized.
    return Failure{Refusal::RdpDesktopMismatch,
                   QStringLiteral("the guest presented %1x%2; the grant names %3x%4")
                       .arg(size->width)
                       .arg(size->height)
                       .arg(m_limits.desktopWidth)
                       .arg(m_limits.desktopHeight)};
  }
  if (const auto v = violation()) {
    const QString what = QLatin1String(v->pdu.data(), qsizetype(v->pdu.size())) + QStringLiteral(": ") +
                         QLatin1String(v->rule.data(), qsizetype(v->rule.size()));
    return Failure{v->kind == front::Violation::Kind::Resource ? Refusal::RdpResourceLimit
                                                               : Refusal::RdpProtocolViolation,
                   what};
  }
  if (m_redirection)
    return Failure{
        Refusal::RdpRedirectRefused,
        QStringLiteral("the guest sent a Server Redirection PDU (flags 0x%1); refused before FreeRDP "
                       "read it: no target was resolved, no connection opened")
            .arg(m_redirectionFlags.load(), 0, 16)};
  return std::nullopt;
}

FrontGuard::Counters FrontGuard::counters() const {
  Counters c;
  c.pdus = m_pdus.load();
  c.bytes = m_bytes.load();
  c.checkNs = m_checkNs.load();
  c.maxCheckNs = m_maxCheckNs.load();
  c.dynvcMessages = m_dynvcMessages.load();
  c.dynvcNs = m_dynvcNs.load();
  for (size_t i = 0; i < c.checkNsLog2.size(); ++i)
    c.checkNsLog2[i] = m_checkNsLog2[i].load();
  return c;
}

uint64_t FrontGuard::Counters::percentileNs(double fraction) const {
  uint64_t total = 0;
  for (uint64_t n : checkNsLog2)
    total += n;
  uint64_t seen = 0;
  for (size_t i = 0; i < checkNsLog2.size(); ++i) {
    seen += checkNsLog2[i];
    if (total && double(seen) >= fraction * double(total))
      return uint64_t(1) << i;
  }
  return 0;
}

} // namespace gc
