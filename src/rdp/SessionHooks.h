// SessionHooks: all that the session's stages — SessionSetup (the connection) and FrameMarking
// (the legacy path's frames) — may ask of the session that drives them. The stages are static
// FreeRDP callbacks; they find the hooks in RdpContext. RdpSession implements them privately,
// so a stage sees neither the session's members nor its public interface.
//
// Thread: every hook is called on the session's FreeRDP worker.
#pragma once

#include <QByteArray>
#include <QSize>

#include <optional>

namespace gc {

class ConnectGuard;
class DesktopSurface;

class SessionHooks {
public:
  // ---- the connection (SessionSetup) ---------------------------------------------------
  // The one-connection / no-redirection guard (ConnectGuard.h).
  virtual ConnectGuard& guard() = 0;
  // abort() was called: a connect that has not begun must not begin.
  virtual bool stopping() const = 0;
  // The pin's decision on the guest's leaf certificate (its SHA-256), nullopt when it was
  // refused before the pin (a redirect or gateway hop, an unparsable certificate). Records that
  // the check happened and what it decided (the connect trace). True: accepted.
  virtual bool judgeCertificate(const std::optional<QByteArray>& leafSha256) = 0;
  // Before FreeRDP writes a PDU. False: the socket is shut for writing (finishGracefully), the
  // PDU is dropped and counted. True: write it (counted before or after the pin's decision).
  virtual bool admitWrite() = 0;
  // The connected socket the console handed over, once; -1: FreeRDP connects itself.
  virtual int takeHandedSocket() = 0;
  // FreeRDP connected `fd` (the session keeps a duplicate for abort()).
  virtual void socketConnected(int fd) = 0;

  // ---- the surface of record (postConnect, FrameMarking) -------------------------------
  virtual DesktopSurface& desktop() = 0;
  // The guest names a desktop size: checked against the shared desktop BEFORE anything is
  // sized for it; a refusal is the session's violation (the caller fails the PDU).
  virtual bool admitDesktopSize(QSize size, const char* pdu) = 0;
  // A frame begins / is complete in desktop().
  virtual void desktopFrameBegan() = 0;
  virtual void desktopFrameEnded() = 0;
  // desktop() was resized to an admitted size.
  virtual void noteDesktopResized(QSize size) = 0;

protected:
  ~SessionHooks() = default;
};

} // namespace gc
