// GfxChannel: the console's own dynamic virtual channel plugin for RDPGFX
// ("Microsoft::Windows::RDS::Graphics", MS-RDPEGFX), in place of FreeRDP's rdpgfx. Our add-in
// provider answers drdynvc's lookup of "rdpgfx" with our entry point (built on
// freerdp_generic_DVCPluginEntry) and hands every other lookup to FreeRDP's static table.
// Each open sends CapsAdvertise, each message goes to GfxClient, each close zeroes what the
// channel held. One graphics channel at a time; a second open, a channel reopened more than
// kMaxOpens times, or any violation GfxClient finds, ends the session: the violation is kept
// (violation()) and FreeRDP's channel error stops the event loop, so RdpSession closes with
// RDP_PROTOCOL_VIOLATION / RDP_RESOURCE_LIMIT / RDP_DESKTOP_MISMATCH, never a frozen screen.
//
// drdynvc reassembles each message into a stream from its pool, which keeps every stream it ever
// made and hands out the first one big enough: a desktop whose frames grow by a few bytes at a
// time made one more ~900 KiB stream per new largest frame (36 of them, 32 MiB, in 300 frames
// of freerdp-shadow-cli3 motion). reservePool() puts one stream of the largest message the front
// lets through (Limits::maxDvcMessageBytes) into the pool at the first message: every later
// message fits it, and only the pages a message wrote are resident.
//
// Thread: every callback runs on the RDP worker (drdynvc is synchronous there:
// FreeRDP_SynchronousDynamicChannels), under RdpSession::m_ioMutex. violation() on the worker,
// or after it is gone.
#pragma once

#include "rdp/ChannelReport.h"
#include "rdp/DesktopSurface.h"
#include "rdp/front/Limits.h"
#include "rdp/gfx/GfxClient.h"

#include <freerdp/client/channels.h>
#include <freerdp/freerdp.h>

#include <functional>
#include <optional>

namespace gc::gfx {

class GfxChannel {
public:
  static constexpr int kMaxOpens = 4;

  GfxChannel(const front::Limits& limits, DesktopSurface& desktop, std::function<void()> frameEnded,
             ChannelReport* report);
  ~GfxChannel();

  // Makes drdynvc's lookup of "rdpgfx" find our plugin (process-wide; FreeRDP's own static
  // table answers every other name). Call before drdynvc loads its add-ins.
  static void registerProvider();

  GfxClient& client() { return m_client; }
  std::optional<front::Violation> violation() const { return m_client.violation(); }
  bool isOpen() const { return m_callback != nullptr; }
  int opens() const { return m_opens; }

  // The plugin's callbacks (static trampolines in GfxChannel.cpp).
  void attach(rdpContext* context) { m_context = context; }
  UINT onOpen(GENERIC_CHANNEL_CALLBACK* callback);
  UINT onData(GENERIC_CHANNEL_CALLBACK* callback, wStream* data);
  UINT onClose(GENERIC_CHANNEL_CALLBACK* callback);
  // Makes `pool` hold a free stream of `capacity` bytes (allocated, not touched), once per pool;
  // false if it could not be allocated (the pool is left as it was).
  static bool reservePool(wStreamPool* pool, size_t capacity);
  // Records `v` (the first one is kept) and ends the session (FreeRDP's channel error).
  UINT refuse(front::Violation v);

private:
  rdpContext* m_context = nullptr;
  GfxClient m_client;
  ChannelReport* m_report;
  GENERIC_CHANNEL_CALLBACK* m_callback = nullptr; // the open channel's
  int m_opens = 0;
  size_t m_reserveBytes;
  wStreamPool* m_reserved = nullptr; // the drdynvc pool reservePool() has seen to
};

} // namespace gc::gfx
