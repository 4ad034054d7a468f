#include "rdp/gfx/GfxChannel.h"

#include "rdp/RdpContext.h"

#include <freerdp/addin.h>
#include <freerdp/channels/rdpgfx.h>
#include <winpr/stream.h>

#include <cstdlib>
#include <cstring>

namespace gc::gfx {

namespace {

// FreeRDP allocates the plugin (calloc, pluginSize) and frees it; it carries our pointer.
struct Plugin {
  GENERIC_DYNVC_PLUGIN base;
  GfxChannel* channel;
};

GfxChannel* channelOf(IWTSVirtualChannelCallback* cb) {
  auto* callback = reinterpret_cast<GENERIC_CHANNEL_CALLBACK*>(cb);
  return callback && callback->plugin ? reinterpret_cast<Plugin*>(callback->plugin)->channel : nullptr;
}

UINT onDataReceived(IWTSVirtualChannelCallback* cb, wStream* data) {
  GfxChannel* channel = channelOf(cb);
  return channel ? channel->onData(reinterpret_cast<GENERIC_CHANNEL_CALLBACK*>(cb), data)
                 : ERROR_INTERNAL_ERROR;
}
UINT onOpen(IWTSVirtualChannelCallback* cb) {
  GfxChannel* channel = channelOf(cb);
  return channel ? channel->onOpen(reinterpret_cast<GENERIC_CHANNEL_CALLBACK*>(cb)) : ERROR_INTERNAL_ERROR;
}
UINT onClose(IWTSVirtualChannelCallback* cb) {
  auto* callback = reinterpret_cast<GENERIC_CHANNEL_CALLBACK*>(cb);
  GfxChannel* channel = channelOf(cb);
  const UINT rc = channel ? channel->onClose(callback) : CHANNEL_RC_OK;
  // The generic plugin allocated the callback at the channel's creation; its owner frees it.
  if (callback && callback->plugin) {
    auto* plugin = reinterpret_cast<GENERIC_DYNVC_PLUGIN*>(callback->plugin);
    if (plugin->listener_callback && plugin->listener_callback->channel_callback == callback)
      plugin->listener_callback->channel_callback = nullptr;
  }
  std::free(callback);
  return rc;
}

const IWTSVirtualChannelCallback kCallbacks = {onDataReceived, onOpen, onClose, nullptr};

UINT initPlugin(GENERIC_DYNVC_PLUGIN* base, rdpContext* context, rdpSettings*) {
  auto* ctx = reinterpret_cast<RdpContext*>(context);
  GfxChannel* channel = ctx ? ctx->gfxChannel : nullptr;
  if (!channel)
    return ERROR_BAD_CONFIGURATION; // no session to draw into: FreeRDP loads no plugin
  reinterpret_cast<Plugin*>(base)->channel = channel;
  channel->attach(context);
  return CHANNEL_RC_OK;
}

UINT VCAPITYPE dvcPluginEntry(IDRDYNVC_ENTRY_POINTS* entryPoints) {
  return freerdp_generic_DVCPluginEntry(entryPoints, "com.guestconsole.rdpgfx", RDPGFX_DVC_CHANNEL_NAME,
                                        sizeof(Plugin), sizeof(GENERIC_CHANNEL_CALLBACK), &kCallbacks,
                                        &initPlugin, nullptr);
}

PVIRTUALCHANNELENTRY provider(LPCSTR name, LPCSTR subsystem, LPCSTR type, DWORD flags) {
  if (name && std::strcmp(name, RDPGFX_CHANNEL_NAME) == 0 && (flags & FREERDP_ADDIN_CHANNEL_DYNAMIC)) {
    // The DVC entry's type is drdynvc's to cast back (FreeRDP does the same,
    // WINPR_FUNC_PTR_CAST); through void(*)() the cast is well-defined to the compiler.
    return reinterpret_cast<PVIRTUALCHANNELENTRY>(reinterpret_cast<void (*)()>(&dvcPluginEntry));
  }
  return freerdp_channels_load_static_addin_entry(name, subsystem, type, flags);
}

} // namespace

GfxChannel::GfxChannel(const front::Limits& limits, DesktopSurface& desktop, std::function<void()> frameEnded,
                       ChannelReport* report)
    : m_client(limits, desktop, std::move(frameEnded), report), m_report(report),
      m_reserveBytes(limits.maxDvcMessageBytes) {}

GfxChannel::~GfxChannel() = default;

void GfxChannel::registerProvider() {
  freerdp_register_addin_provider(&provider, 0);
}

UINT GfxChannel::refuse(front::Violation v) {
  const front::Violation first = m_client.fail(v);
  // drdynvc only logs what a channel callback returns; the channel error stops the session.
  if (m_context)
    setChannelError(m_context, ERROR_INVALID_DATA, "rdpgfx: %s", first.rule.data());
  return ERROR_INVALID_DATA;
}

UINT GfxChannel::onOpen(GENERIC_CHANNEL_CALLBACK* callback) {
  if (m_client.violation())
    return refuse(*m_client.violation());
  if (m_callback)
    return refuse(front::Violation::resource("drdynvc.Create", "a second graphics channel"));
  if (++m_opens > kMaxOpens)
    return refuse(front::Violation::resource("drdynvc.Create", "graphics channel reopened too often"));
  m_callback = callback;
  if (m_report) {
    m_report->noteDynamicOpened(QStringLiteral(RDPGFX_DVC_CHANNEL_NAME));
    m_report->noteGfxOpened(true);
  }
  IWTSVirtualChannel* vc = callback->channel;
  const bool sent = m_client.opened([vc](std::span<const uint8_t> bytes) {
    return vc && vc->Write(vc, ULONG(bytes.size()), bytes.data(), nullptr) == CHANNEL_RC_OK;
  });
  return sent ? CHANNEL_RC_OK : ERROR_INTERNAL_ERROR;
}

bool GfxChannel::reservePool(wStreamPool* pool, size_t capacity) {
  wStream* reserve = pool ? StreamPool_Take(pool, capacity) : nullptr;
  if (!reserve)
    return false;
  Stream_Release(reserve); // back into the pool, free for the next message
  return true;
}

UINT GfxChannel::onData(GENERIC_CHANNEL_CALLBACK* callback, wStream* data) {
  if (callback != m_callback || !data)
    return refuse(front::Violation::protocol("drdynvc.Data", "data on a graphics channel not open"));
  if (data->pool != m_reserved) {
    m_reserved = data->pool;
    reservePool(m_reserved, m_reserveBytes); // without it the session works, at the pool's old cost
  }
  const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(Stream_ConstPointer(data)),
                                       Stream_GetRemainingLength(data));
  const front::Checked<front::Ok> ok = m_client.receive(bytes);
  if (front::isViolation(ok))
    return refuse(std::get<front::Violation>(ok));
  return CHANNEL_RC_OK;
}

UINT GfxChannel::onClose(GENERIC_CHANNEL_CALLBACK* callback) {
  if (callback == m_callback) {
    m_client.closed();
    m_callback = nullptr;
  }
  return CHANNEL_RC_OK;
}

} // namespace gc::gfx
