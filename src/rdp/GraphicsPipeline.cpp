#include "rdp/GraphicsPipeline.h"

#include "rdp/FrontGuard.h"
#include "rdp/RdpContext.h"
#include "rdp/WLogRouter.h"

#include <freerdp/addin.h>
#include <freerdp/channels/channels.h>
#include <freerdp/channels/drdynvc.h>
#include <freerdp/channels/rdpgfx.h>
#include <freerdp/client/cmdline.h>
#include <freerdp/client/rdpgfx.h>
#include <freerdp/codecs.h>
#include <freerdp/event.h>
#include <freerdp/gdi/gdi.h>
#include <freerdp/gdi/gfx.h>
#include <freerdp/settings.h>

#include <atomic>
#include <cstring>
#include <string.h>
#include <utility>

namespace gc {

namespace {

// MS-RDPEDYC 2.2.2.1: a create request is short (a header byte, a channel id of up to four
// bytes and a NUL-terminated name); its head is all the watch keeps of a message.
constexpr qsizetype kCreateHeadBound = 1 + 4 + ChannelReport::kMaxNameLength + 2;
constexpr quint8 kCreateRequestCmd = 0x01;
// The lossless codecs the pipeline decodes (ClearCodec brings its own NSCodec).
constexpr UINT32 kDecodedCodecs = FREERDP_CODEC_PLANAR | FREERDP_CODEC_CLEARCODEC |
                                  FREERDP_CODEC_PROGRESSIVE | FREERDP_CODEC_REMOTEFX |
                                  FREERDP_CODEC_ALPHACODEC;

GraphicsPipeline* pipelineOf(rdpContext* context) {
  return context ? reinterpret_cast<RdpContext*>(context)->pipeline : nullptr;
}
GraphicsPipeline* pipelineOf(RdpgfxClientContext* gfx) {
  auto* gdi = static_cast<rdpGdi*>(gfx ? gfx->custom : nullptr);
  return gdi ? pipelineOf(gdi->context) : nullptr;
}

// The GDI's own handlers (the same functions for every session), wrapped below.
std::atomic<pcRdpgfxDeleteSurface> s_gdiDeleteSurface{nullptr};
std::atomic<pcRdpgfxEvictCacheEntry> s_gdiEvictCacheEntry{nullptr};
std::atomic<pcRdpgfxSurfaceCommand> s_gdiSurfaceCommand{nullptr};
std::atomic<pcRdpgfxEndFrame> s_gdiEndFrame{nullptr};

// Guest pixels: a surface and a cache entry are zeroed before the GDI frees them. Both GDI
// types hold their pixels as data/scanline/height; `get` is the context's lookup for `id`.
template <typename Pixels, typename Lookup> void zeroPixels(RdpgfxClientContext* gfx, Lookup get, UINT16 id) {
  if (!gfx || !get)
    return;
  EnterCriticalSection(&gfx->mux);
  if (auto* pixels = static_cast<Pixels*>(get(gfx, id)); pixels && pixels->data)
    explicit_bzero(pixels->data, std::size_t(pixels->scanline) * pixels->height);
  LeaveCriticalSection(&gfx->mux);
}

UINT zeroingDeleteSurface(RdpgfxClientContext* gfx, const RDPGFX_DELETE_SURFACE_PDU* pdu) {
  if (gfx && pdu)
    zeroPixels<gdiGfxSurface>(gfx, gfx->GetSurfaceData, pdu->surfaceId);
  return s_gdiDeleteSurface.load()(gfx, pdu);
}

UINT zeroingEvictCacheEntry(RdpgfxClientContext* gfx, const RDPGFX_EVICT_CACHE_ENTRY_PDU* pdu) {
  if (gfx && pdu)
    zeroPixels<gdiGfxCacheEntry>(gfx, gfx->GetCacheSlotData, pdu->cacheSlot);
  return s_gdiEvictCacheEntry.load()(gfx, pdu);
}

// What the pipeline decodes, by RDPGFX codec name: kDecodedCodecs, and progressive only as the
// settings offer it.
QStringList decodedCodecNames(const rdpSettings* settings) {
  const bool progressive = (kDecodedCodecs & FREERDP_CODEC_PROGRESSIVE) != 0;
  const std::pair<bool, int> codecs[] = {
      {true, RDPGFX_CODECID_UNCOMPRESSED},
      {(kDecodedCodecs & FREERDP_CODEC_PLANAR) != 0, RDPGFX_CODECID_PLANAR},
      {(kDecodedCodecs & FREERDP_CODEC_REMOTEFX) != 0, RDPGFX_CODECID_CAVIDEO},
      {(kDecodedCodecs & FREERDP_CODEC_CLEARCODEC) != 0, RDPGFX_CODECID_CLEARCODEC},
      {progressive && freerdp_settings_get_bool(settings, FreeRDP_GfxProgressive),
       RDPGFX_CODECID_CAPROGRESSIVE},
      {progressive && freerdp_settings_get_bool(settings, FreeRDP_GfxProgressiveV2),
       RDPGFX_CODECID_CAPROGRESSIVE_V2},
      {(kDecodedCodecs & FREERDP_CODEC_ALPHACODEC) != 0, RDPGFX_CODECID_ALPHA},
  };
  QStringList names;
  for (const auto& [decoded, id] : codecs) {
    if (decoded)
      names.append(ChannelReport::codecName(id));
  }
  return names;
}

UINT countingSurfaceCommand(RdpgfxClientContext* gfx, const RDPGFX_SURFACE_COMMAND* cmd) {
  if (GraphicsPipeline* p = pipelineOf(gfx); p && cmd)
    p->channelReport().noteGfxCodec(quint16(cmd->codecId));
  return s_gdiSurfaceCommand.load()(gfx, cmd);
}

UINT countingEndFrame(RdpgfxClientContext* gfx, const RDPGFX_END_FRAME_PDU* pdu) {
  if (GraphicsPipeline* p = pipelineOf(gfx))
    p->channelReport().noteGfxFrame();
  return s_gdiEndFrame.load()(gfx, pdu);
}

UINT notingCapsConfirm(RdpgfxClientContext* gfx, const RDPGFX_CAPS_CONFIRM_PDU* pdu) {
  if (GraphicsPipeline* p = pipelineOf(gfx); p && pdu && pdu->capsSet)
    p->channelReport().noteGfxCapsVersion(pdu->capsSet->version);
  return CHANNEL_RC_OK;
}

} // namespace

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
      {FreeRDP_GfxProgressiveV2, true},
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
  PubSub_UnsubscribeChannelConnected(context->pubSub, &channelConnected);
  PubSub_UnsubscribeChannelDisconnected(context->pubSub, &channelDisconnected);
  PubSub_SubscribeChannelConnected(context->pubSub, &channelConnected);
  PubSub_SubscribeChannelDisconnected(context->pubSub, &channelDisconnected);
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
  m_report.setStaticChannels(std::move(requested), std::move(joined));
  m_report.setAdvertisedCodecs(decodedCodecNames(settings));
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
      self->watch(data, size, flags);
    }
  }
  return ctx->originalReceiveChannelData
             ? ctx->originalReceiveChannelData(instance, channelId, data, size, flags, totalSize)
             : FALSE;
}

void GraphicsPipeline::watch(const BYTE* data, size_t size, UINT32 flags) {
  if (flags & CHANNEL_FLAG_FIRST) {
    m_message.clear();
    m_inMessage = true;
  }
  if (!m_inMessage)
    return;
  const qsizetype room = kCreateHeadBound - m_message.size();
  if (room > 0)
    m_message.append(reinterpret_cast<const char*>(data), std::min<qsizetype>(room, qsizetype(size)));
  if (!(flags & CHANNEL_FLAG_LAST))
    return;
  m_inMessage = false;
  if (m_message.isEmpty() || (quint8(m_message[0]) >> 4) != kCreateRequestCmd)
    return;
  const int cbChId = m_message[0] & 0x03;
  const qsizetype idBytes = cbChId == 0 ? 1 : cbChId == 1 ? 2 : 4;
  const QByteArrayView rest = QByteArrayView(m_message).sliced(std::min(1 + idBytes, m_message.size()));
  const qsizetype nul = rest.indexOf('\0');
  const QByteArrayView name = nul >= 0 ? rest.first(nul) : rest;
  if (name != QByteArrayView(RDPGFX_DVC_CHANNEL_NAME))
    m_report.noteRefused(name); // no listener: drdynvc answers STATUS_UNSUCCESSFUL
  m_message.fill('\0');
}

void GraphicsPipeline::channelConnected(void* context, const ChannelConnectedEventArgs* e) {
  auto* rdp = static_cast<rdpContext*>(context);
  GraphicsPipeline* self = pipelineOf(rdp);
  if (!self || !e || !e->name || std::strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) != 0)
    return;
  auto* gfx = static_cast<RdpgfxClientContext*>(e->pInterface);
  bool ok = rdp->gdi && gfx && gdi_graphics_pipeline_init(rdp->gdi, gfx);
  if (ok && gfx->codecs) {
    // gdi_graphics_pipeline_init prepares every codec FreeRDP has (FREERDP_CODEC_ALL), AVC's
    // decoder included; the pipeline decodes only what it advertised. No surface exists yet.
    const UINT32 threading = freerdp_settings_get_uint32(rdp->settings, FreeRDP_ThreadingFlags);
    const UINT32 w = freerdp_settings_get_uint32(rdp->settings, FreeRDP_DesktopWidth);
    const UINT32 h = freerdp_settings_get_uint32(rdp->settings, FreeRDP_DesktopHeight);
    freerdp_client_codecs_free(gfx->codecs);
    gfx->codecs = freerdp_client_codecs_new(threading);
    ok = gfx->codecs && freerdp_client_codecs_prepare(gfx->codecs, kDecodedCodecs, w, h);
  }
  if (ok) {
    s_gdiDeleteSurface = gfx->DeleteSurface;
    s_gdiEvictCacheEntry = gfx->EvictCacheEntry;
    s_gdiSurfaceCommand = gfx->SurfaceCommand;
    s_gdiEndFrame = gfx->EndFrame;
    gfx->DeleteSurface = &zeroingDeleteSurface;
    gfx->EvictCacheEntry = &zeroingEvictCacheEntry;
    if (gfx->SurfaceCommand)
      gfx->SurfaceCommand = &countingSurfaceCommand;
    gfx->EndFrame = &countingEndFrame;
    gfx->CapsConfirm = &notingCapsConfirm;
  } else {
    qCCritical(lcRdp) << "cannot start the graphics pipeline's decoder";
  }
  self->m_report.noteDynamicOpened(QStringLiteral(RDPGFX_DVC_CHANNEL_NAME));
  self->m_report.noteGfxOpened(ok);
}

void GraphicsPipeline::channelDisconnected(void* context, const ChannelDisconnectedEventArgs* e) {
  auto* rdp = static_cast<rdpContext*>(context);
  if (!e || !e->name || std::strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) != 0)
    return;
  // rdpgfx's OnClose has already deleted its surfaces and cache entries (zeroed above).
  gdi_graphics_pipeline_uninit(rdp->gdi, static_cast<RdpgfxClientContext*>(e->pInterface));
}

} // namespace gc
