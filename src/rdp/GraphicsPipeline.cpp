#include "rdp/GraphicsPipeline.h"

#include "rdp/FrontGuard.h"
#include "rdp/RdpContext.h"
#include "rdp/WLogRouter.h"
#include "rdp/gfx/GfxChannel.h"
#include "rdp/gfx/GfxFront.h"

#include <freerdp/addin.h>
#include <freerdp/channels/channels.h>
#include <freerdp/channels/drdynvc.h>
#include <freerdp/channels/rdpgfx.h>
#include <freerdp/client/cmdline.h>
#include <freerdp/settings.h>

#include <cstring>
#include <string.h>
#include <utility>

namespace gc {

namespace {

// MS-RDPEDYC 2.2.2.1: a create request is short (a header byte, a channel id of up to four
// bytes and a NUL-terminated name); its head is all the watch keeps of a message.
constexpr qsizetype kCreateHeadBound = 1 + 4 + ChannelReport::kMaxNameLength + 2;
constexpr quint8 kCreateRequestCmd = 0x01;
constexpr int kDataFirstCmd = 0x02;
constexpr int kDataFirstCompressedCmd = 0x06;
// What the console's RDPGFX client decodes (gfx/CodecDispatch and uncompressed), by RDPGFX
// codec id: exactly what it accepts (gfx/GfxFront), whatever the caps set confirmed.
constexpr int kDecodedCodecs[] = {gfx::codec::kUncompressed, gfx::codec::kPlanar, gfx::codec::kClearCodec,
                                  gfx::codec::kProgressive, gfx::codec::kAlpha};

QStringList decodedCodecNames() {
  QStringList names;
  for (const int id : kDecodedCodecs)
    names.append(ChannelReport::codecName(id));
  return names;
}

} // namespace

GraphicsPipeline::GraphicsPipeline() = default;
GraphicsPipeline::~GraphicsPipeline() = default;

void GraphicsPipeline::prepare(const front::Limits& limits, DesktopSurface& desktop,
                               std::function<void()> frameBegan, std::function<void()> frameEnded) {
  m_limits = limits;
  m_channel = std::make_unique<gfx::GfxChannel>(limits, desktop, std::move(frameEnded), &m_report);
  m_channel->client().setFrameBegan(std::move(frameBegan));
}

std::optional<front::Violation> GraphicsPipeline::gfxViolation() const {
  return m_channel ? m_channel->violation() : std::nullopt;
}

std::optional<Failure> GraphicsPipeline::gfxFailure() const {
  if (!m_channel)
    return std::nullopt;
  const std::optional<front::Violation> v = m_channel->violation();
  if (!v)
    return std::nullopt;
  const Refusal code = v->kind == front::Violation::Kind::Resource  ? Refusal::RdpResourceLimit
                       : v->kind == front::Violation::Kind::Desktop ? Refusal::RdpDesktopMismatch
                                                                    : Refusal::RdpProtocolViolation;
  // Static strings of ours only: the PDU kind and the rule, never a byte of the guest's.
  return Failure{code,
                 QStringLiteral("%1: %2").arg(QLatin1StringView(v->pdu.data(), qsizetype(v->pdu.size())),
                                              QLatin1StringView(v->rule.data(), qsizetype(v->rule.size())))};
}

bool GraphicsPipeline::configure(rdpSettings* s) {
  const std::pair<FreeRDP_Settings_Keys_Bool, bool> bools[] = {
      {FreeRDP_SupportDynamicChannels, true},
      {FreeRDP_SupportGraphicsPipeline, true},
      // RDPGFX decodes on the worker, inside its event processing (see the header).
      {FreeRDP_SynchronousDynamicChannels, true},
      // Lossless captures: no AVC420/AVC444.
      {FreeRDP_GfxH264, false},
      {FreeRDP_GfxAVC444, false},
      {FreeRDP_GfxAVC444v2, false},
      {FreeRDP_GfxProgressive, true},
      {FreeRDP_GfxProgressiveV2, false},
      {FreeRDP_GfxPlanar, true},
      {FreeRDP_GfxSmallCache, true},
      {FreeRDP_GfxThinClient, false},
      {FreeRDP_GfxSendQoeAck, false},
      {FreeRDP_GfxSuspendFrameAck, false},
  };
  bool ok = true;
  for (const auto& [key, value] : bools)
    ok = ok && freerdp_settings_set_bool(s, key, value);
  return ok;
}

void GraphicsPipeline::install(freerdp* instance, rdpContext* context) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  instance->LoadChannels = &loadChannels;
  if (instance->ReceiveChannelData != &receiveChannelData) {
    ctx->originalReceiveChannelData = instance->ReceiveChannelData;
    instance->ReceiveChannelData = &receiveChannelData;
  }
}

// Called by freerdp_connect (utils_reload_channels) on a fresh channel set, before the MCS
// Connect Initial is built from the channels loaded here.
BOOL GraphicsPipeline::loadChannels(freerdp* instance) {
  rdpContext* context = instance->context;
  rdpSettings* settings = context->settings;
  if (!freerdp_dynamic_channel_collection_find(settings, RDPGFX_CHANNEL_NAME)) {
    const char* const args[] = {RDPGFX_CHANNEL_NAME};
    if (!freerdp_client_add_dynamic_channel(settings, 1, args))
      return FALSE;
  }
  if (freerdp_settings_get_uint32(settings, FreeRDP_DynamicChannelCount) != 1)
    return FALSE; // only ever rdpgfx
  // drdynvc looks "rdpgfx" up through the add-in provider when it initialises: ours.
  gfx::GfxChannel::registerProvider();
  if (GraphicsPipeline* self = reinterpret_cast<RdpContext*>(context)->pipeline; self && self->m_channel)
    self->m_channel->attach(context); // a refusal before the plugin exists still ends the session
  // An ENTRYEX add-in's entry point comes back in the plain type (FreeRDP casts it the same
  // way, WINPR_FUNC_PTR_CAST); through void(*)() the cast is well-defined to the compiler.
  const PVIRTUALCHANNELENTRY plain =
      freerdp_load_channel_addin_entry(DRDYNVC_SVC_CHANNEL_NAME, nullptr, nullptr,
                                       FREERDP_ADDIN_CHANNEL_STATIC | FREERDP_ADDIN_CHANNEL_ENTRYEX);
  const auto entry = reinterpret_cast<PVIRTUALCHANNELENTRYEX>(reinterpret_cast<void (*)()>(plain));
  if (!entry || freerdp_channels_client_load_ex(context->channels, settings, entry, settings) != 0) {
    qCCritical(lcRdp) << "cannot load FreeRDP's drdynvc channel";
    return FALSE;
  }
  return TRUE;
}

void GraphicsPipeline::noteConnected(freerdp* instance) {
  rdpSettings* settings = instance->context->settings;
  QStringList requested, joined;
  const UINT32 count = freerdp_settings_get_uint32(settings, FreeRDP_ChannelCount);
  for (UINT32 i = 0; i < count; ++i) {
    const auto* def = static_cast<const CHANNEL_DEF*>(
        freerdp_settings_get_pointer_array(settings, FreeRDP_ChannelDefArray, i));
    if (!def)
      continue;
    const QString name =
        ChannelReport::sanitise(QByteArrayView(def->name, qstrnlen(def->name, sizeof def->name)));
    requested.append(name);
    if (freerdp_channels_get_id_by_name(instance, def->name) != 0)
      joined.append(name);
  }
  m_drdynvcId = freerdp_channels_get_id_by_name(instance, DRDYNVC_SVC_CHANNEL_NAME);
  // RDP_NEG_RSP's flags as FreeRDP keeps them; 0 after a negotiation without a response.
  constexpr UINT32 kDynvcGfxProtocolSupported = 0x02;
  const bool advertised =
      (freerdp_settings_get_uint32(settings, FreeRDP_NegotiationFlags) & kDynvcGfxProtocolSupported) != 0;
  m_advertised.store(advertised && m_drdynvcId != 0, std::memory_order_release);
  m_report.setGfxAdvertised(advertised);
  m_report.setStaticChannels(std::move(requested), std::move(joined));
  m_report.setAdvertisedCodecs(decodedCodecNames());
}

BOOL GraphicsPipeline::receiveChannelData(freerdp* instance, UINT16 channelId, const BYTE* data, size_t size,
                                          UINT32 flags, size_t totalSize) {
  auto* ctx = reinterpret_cast<RdpContext*>(instance->context);
  if (GraphicsPipeline* self = ctx->pipeline) {
    if (!self->m_drdynvcId)
      self->m_drdynvcId = freerdp_channels_get_id_by_name(instance, DRDYNVC_SVC_CHANNEL_NAME);
    if (self->m_drdynvcId && channelId == self->m_drdynvcId) {
      if (!FrontGuard::admitDynvcChunk(instance->context, data, size, flags, totalSize))
        return FALSE; // refused before drdynvc parses it (FrontGuard records why)
      if (!self->watch(data, size, flags, totalSize))
        return TRUE; // refused before drdynvc reserves anything; the channel error ends the session
    }
  }
  return ctx->originalReceiveChannelData
             ? ctx->originalReceiveChannelData(instance, channelId, data, size, flags, totalSize)
             : FALSE;
}

bool GraphicsPipeline::watch(const BYTE* data, size_t size, UINT32 flags, size_t totalSize) {
  if (flags & CHANNEL_FLAG_FIRST) {
    m_message.clear();
    m_inMessage = true;
    m_headChecked = false;
    // drdynvc reserves the whole declared message at its first chunk.
    if (m_channel && totalSize > m_limits.maxChannelMessageBytes) {
      m_inMessage = false;
      m_channel->refuse(front::Violation::resource("drdynvc.Chunk", "declared message beyond the bound"));
      return false;
    }
  }
  if (!m_inMessage)
    return true;
  const qsizetype room = kCreateHeadBound - m_message.size();
  if (room > 0)
    m_message.append(reinterpret_cast<const char*>(data), std::min<qsizetype>(room, qsizetype(size)));
  if (!m_headChecked && m_channel) {
    if (const std::optional<front::Violation> v = checkDataFirst()) {
      m_inMessage = false;
      m_message.fill('\0');
      m_channel->refuse(*v);
      return false;
    }
  }
  if (!(flags & CHANNEL_FLAG_LAST))
    return true;
  m_inMessage = false;
  if (m_message.isEmpty() || (quint8(m_message[0]) >> 4) != kCreateRequestCmd) {
    m_message.fill('\0');
    return true;
  }
  const int cbChId = m_message[0] & 0x03;
  const qsizetype idBytes = cbChId == 0 ? 1 : cbChId == 1 ? 2 : 4;
  const QByteArrayView rest = QByteArrayView(m_message).sliced(std::min(1 + idBytes, m_message.size()));
  const qsizetype nul = rest.indexOf('\0');
  const QByteArrayView name = nul >= 0 ? rest.first(nul) : rest;
  if (name != QByteArrayView(RDPGFX_DVC_CHANNEL_NAME))
    m_report.noteRefused(name); // no listener: drdynvc answers STATUS_UNSUCCESSFUL
  m_message.fill('\0');
  return true;
}

// MS-RDPEDYC 2.2.3.1 DYNVC_DATA_FIRST (and its compressed form): drdynvc reserves the
// declared Length for the channel before any of it arrives; bounded here first.
std::optional<front::Violation> GraphicsPipeline::checkDataFirst() {
  if (m_message.isEmpty())
    return std::nullopt;
  const quint8 head = quint8(m_message[0]);
  const int cmd = head >> 4;
  if (cmd != kDataFirstCmd && cmd != kDataFirstCompressedCmd) {
    m_headChecked = true;
    return std::nullopt;
  }
  const auto width = [](int cb) { return cb == 0 ? 1 : cb == 1 ? 2 : 4; };
  const qsizetype idBytes = width(head & 0x03), lengthBytes = width((head >> 2) & 0x03);
  if (m_message.size() < 1 + idBytes + lengthBytes)
    return std::nullopt; // the rest of the head is in the next chunk
  m_headChecked = true;
  quint32 length = 0;
  for (qsizetype i = 0; i < lengthBytes; ++i)
    length |= quint32(quint8(m_message[1 + idBytes + i])) << (8 * i);
  if (length > m_limits.maxDvcMessageBytes)
    return front::Violation::resource("drdynvc.DataFirst", "declared length beyond the bound");
  return std::nullopt;
}

} // namespace gc
