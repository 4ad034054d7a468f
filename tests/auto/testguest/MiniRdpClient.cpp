#include "MiniRdpClient.h"

#include "testguest/IdentityMarker.h"

#include <freerdp/addin.h>
#include <freerdp/channels/rdpgfx.h>
#include <freerdp/client/channels.h>
#include <freerdp/client/cmdline.h>
#include <freerdp/client/rdpgfx.h>
#include <freerdp/event.h>
#include <freerdp/freerdp.h>
#include <freerdp/gdi/gdi.h>
#include <freerdp/gdi/gfx.h>
#include <freerdp/input.h>
#include <freerdp/settings.h>
#include <freerdp/transport_io.h>
#include <winpr/stream.h>
#include <winpr/synch.h>

#include <chrono>
#include <cstring>

namespace {

BOOL onDesktopResize(rdpContext* context) {
  return gdi_resize(context->gdi, freerdp_settings_get_uint32(context->settings, FreeRDP_DesktopWidth),
                    freerdp_settings_get_uint32(context->settings, FreeRDP_DesktopHeight));
}

// The context with what the callbacks need (FreeRDP allocates ContextSize bytes).
struct MiniContext {
  rdpContext base;
  bool gfxActive;
  bool noGfxListener;
  MiniRdpClient::Tap* tap;
  pReceiveChannelData forwardChannelData;
  pTransportRWFkt readPdu;
};

MiniContext* miniOf(rdpContext* context) {
  return reinterpret_cast<MiniContext*>(context);
}

BOOL tappedChannelData(freerdp* instance, UINT16 channelId, const BYTE* data, size_t size, UINT32 flags,
                       size_t totalSize) {
  MiniContext* ctx = miniOf(instance->context);
  if (ctx->tap != nullptr && !ctx->tap->channelData(channelId, data, size, flags, totalSize))
    return TRUE;
  return ctx->forwardChannelData(instance, channelId, data, size, flags, totalSize);
}

int tappedReadPdu(rdpTransport* transport, wStream* s) {
  MiniContext* ctx = miniOf(transport_get_context(transport));
  const int len = ctx->readPdu(transport, s);
  // A fast-path PDU's first byte has action 0 in its low bits (a TPKT starts with 3).
  if (len > 0 && ctx->tap != nullptr && (Stream_Buffer(s)[0] & 0x03) == 0 &&
      !ctx->tap->fastPath(Stream_Buffer(s), static_cast<size_t>(len))) {
    // What FreeRDP reads instead: a fast-path PDU with one empty Synchronize update (FreeRDP
    // refuses a PDU without any).
    static const uint8_t kSynchronize[] = {0x00, 0x05, 0x03, 0x00, 0x00};
    Stream_SetPosition(s, 0);
    Stream_Write(s, kSynchronize, sizeof kSynchronize);
    Stream_SealLength(s);
    Stream_SetPosition(s, 0);
    return static_cast<int>(sizeof kSynchronize);
  }
  return len;
}

void onChannelConnected(void* ctx, const ChannelConnectedEventArgs* e) {
  auto* context = static_cast<MiniContext*>(ctx);
  if (std::strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) == 0) {
    context->gfxActive =
        gdi_graphics_pipeline_init(context->base.gdi, static_cast<RdpgfxClientContext*>(e->pInterface));
  }
}

void onChannelDisconnected(void* ctx, const ChannelDisconnectedEventArgs* e) {
  auto* context = static_cast<MiniContext*>(ctx);
  if (std::strcmp(e->name, RDPGFX_DVC_CHANNEL_NAME) == 0) {
    gdi_graphics_pipeline_uninit(context->base.gdi, static_cast<RdpgfxClientContext*>(e->pInterface));
    context->gfxActive = false;
  }
}

BOOL onPreConnect(freerdp* instance) {
  rdpContext* context = instance->context;
  if (freerdp_settings_get_bool(context->settings, FreeRDP_SupportDynamicChannels)) {
    PubSub_SubscribeChannelConnected(context->pubSub, onChannelConnected);
    PubSub_SubscribeChannelDisconnected(context->pubSub, onChannelDisconnected);
  }
  return TRUE;
}

// FreeRDP 3 (re)creates the channel manager after PreConnect and then asks for the addins.
BOOL onLoadChannels(freerdp* instance) {
  rdpContext* context = instance->context;
  if (!freerdp_settings_get_bool(context->settings, FreeRDP_SupportDynamicChannels)) {
    return TRUE;
  }
  if (!reinterpret_cast<MiniContext*>(context)->noGfxListener) {
    return freerdp_client_load_addins(context->channels, context->settings);
  }
  // The flag stays announced (GCC core data is written later); only the plugin is missing.
  return freerdp_settings_set_bool(context->settings, FreeRDP_SupportGraphicsPipeline, FALSE) &&
         freerdp_client_load_addins(context->channels, context->settings) &&
         freerdp_settings_set_bool(context->settings, FreeRDP_SupportGraphicsPipeline, TRUE);
}

BOOL onPostConnect(freerdp* instance) {
  if (!gdi_init(instance, PIXEL_FORMAT_BGRX32)) {
    return FALSE;
  }
  instance->context->update->DesktopResize = onDesktopResize;
  return TRUE;
}

void onPostDisconnect(freerdp* instance) {
  gdi_free(instance);
}

} // namespace

MiniRdpClient::MiniRdpClient() {
  m_instance = freerdp_new();
  m_instance->ContextSize = sizeof(MiniContext);
  m_instance->PreConnect = onPreConnect;
  m_instance->LoadChannels = onLoadChannels;
  m_instance->PostConnect = onPostConnect;
  m_instance->PostDisconnect = onPostDisconnect;
  freerdp_context_new(m_instance);
}

MiniRdpClient::~MiniRdpClient() {
  if (m_connected) {
    freerdp_disconnect(m_instance);
  }
  freerdp_context_free(m_instance);
  freerdp_free(m_instance);
}

bool MiniRdpClient::connect(uint16_t port, const std::string& user, const std::string& password,
                            const std::string& sha256) {
  rdpSettings* s = m_instance->context->settings;
  const std::string pin = "sha256:" + sha256;
  const bool ok =
      freerdp_settings_set_string(s, FreeRDP_ServerHostname, "127.0.0.1") &&
      freerdp_settings_set_uint32(s, FreeRDP_ServerPort, port) &&
      freerdp_settings_set_string(s, FreeRDP_Username, user.c_str()) &&
      freerdp_settings_set_string(s, FreeRDP_Password, password.c_str()) &&
      freerdp_settings_set_string(s, FreeRDP_Domain, "") &&
      freerdp_settings_set_bool(s, FreeRDP_NlaSecurity, TRUE) &&
      freerdp_settings_set_bool(s, FreeRDP_TlsSecurity, FALSE) &&
      freerdp_settings_set_bool(s, FreeRDP_RdpSecurity, FALSE) &&
      freerdp_settings_set_bool(s, FreeRDP_SoftwareGdi, TRUE) &&
      freerdp_settings_set_uint32(s, FreeRDP_ColorDepth, 32) &&
      freerdp_settings_set_string(s, FreeRDP_CertificateAcceptedFingerprints, pin.c_str()) &&
      freerdp_settings_set_bool(s, FreeRDP_SupportDynamicChannels, m_channels != Channels::None) &&
      freerdp_settings_set_bool(s, FreeRDP_SynchronousDynamicChannels, TRUE) &&
      // echo: a dynamic channel this client accepts when the guest offers it.
      freerdp_settings_set_bool(s, FreeRDP_SupportEchoChannel, m_channels != Channels::None) &&
      freerdp_settings_set_bool(s, FreeRDP_SupportGraphicsPipeline,
                                m_channels == Channels::DrdynvcAndGfx ||
                                    m_channels == Channels::GfxWithoutListener) &&
      freerdp_settings_set_bool(s, FreeRDP_GfxH264, FALSE) &&
      freerdp_settings_set_bool(s, FreeRDP_GfxAVC444, FALSE) &&
      freerdp_settings_set_bool(s, FreeRDP_GfxAVC444v2, FALSE) &&
      // Fewer static channels than FreeRDP's defaults (no cliprdr, no audio).
      freerdp_settings_set_bool(s, FreeRDP_RedirectClipboard, FALSE) &&
      freerdp_settings_set_bool(s, FreeRDP_AudioPlayback, FALSE);
  reinterpret_cast<MiniContext*>(m_instance->context)->noGfxListener =
      m_channels == Channels::GfxWithoutListener;
  if (m_channels != Channels::None) {
    // The channel addins (drdynvc, rdpgfx) are built into libfreerdp-client3.
    freerdp_register_addin_provider(freerdp_channels_load_static_addin_entry, 0);
  }
  m_connected = ok && freerdp_connect(m_instance);
  return m_connected;
}

void MiniRdpClient::setTap(Tap* tap) {
  MiniContext* ctx = miniOf(m_instance->context);
  ctx->tap = tap;
  if (ctx->forwardChannelData == nullptr) {
    ctx->forwardChannelData = m_instance->ReceiveChannelData;
    m_instance->ReceiveChannelData = tappedChannelData;
    rdpTransportIo io = *freerdp_get_io_callbacks(m_instance->context);
    ctx->readPdu = io.ReadPdu;
    io.ReadPdu = tappedReadPdu;
    freerdp_set_io_callbacks(m_instance->context, &io);
  }
}

bool MiniRdpClient::sendChannelData(uint16_t channelId, const uint8_t* data, size_t size) {
  return m_instance->SendChannelData(m_instance, channelId, data, size) == TRUE;
}

uint16_t MiniRdpClient::channelId(const char* name) const {
  return freerdp_channels_get_id_by_name(m_instance, name);
}

bool MiniRdpClient::pump(int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    HANDLE handles[MAXIMUM_WAIT_OBJECTS];
    const DWORD count = freerdp_get_event_handles(m_instance->context, handles, MAXIMUM_WAIT_OBJECTS);
    if (count == 0 || WaitForMultipleObjects(count, handles, FALSE, 20) == WAIT_FAILED ||
        !freerdp_check_event_handles(m_instance->context)) {
      return false;
    }
  }
  return true;
}

std::optional<uint32_t> MiniRdpClient::marker() const {
  const rdpGdi* gdi = m_instance->context->gdi;
  if (gdi == nullptr) {
    return std::nullopt;
  }
  return gc::testguest::findMarker(gdi->primary_buffer, static_cast<int>(gdi->stride), gdi->width,
                                   gdi->height);
}

bool MiniRdpClient::gfxActive() const {
  return reinterpret_cast<const MiniContext*>(m_instance->context)->gfxActive;
}

bool MiniRdpClient::sendRefresh(uint16_t x, uint16_t y, uint16_t w, uint16_t h) {
  const RECTANGLE_16 area{x, y, static_cast<UINT16>(x + w - 1), static_cast<UINT16>(y + h - 1)};
  rdpUpdate* update = m_instance->context->update;
  return update->RefreshRect(m_instance->context, 1, &area);
}

int MiniRdpClient::width() const {
  return m_instance->context->gdi ? m_instance->context->gdi->width : 0;
}
int MiniRdpClient::height() const {
  return m_instance->context->gdi ? m_instance->context->gdi->height : 0;
}

uint32_t MiniRdpClient::pixel(int x, int y) const {
  const rdpGdi* gdi = m_instance->context->gdi;
  const uint8_t* p = gdi->primary_buffer + static_cast<size_t>(y) * gdi->stride + static_cast<size_t>(x) * 4;
  return (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[1]) << 8) | p[0];
}

bool MiniRdpClient::sendKey(uint16_t flags, uint8_t scancode) {
  return freerdp_input_send_keyboard_event(m_instance->context->input, flags, scancode);
}

bool MiniRdpClient::sendMouse(uint16_t flags, uint16_t x, uint16_t y) {
  return freerdp_input_send_mouse_event(m_instance->context->input, flags, x, y);
}
