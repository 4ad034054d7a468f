// ReaderService: the one object of the RDP reader process (guest-console-rdp), the process
// that parses the guest's bytes. It reads the console's messages (readerwire/ReaderWire.h)
// from its end of a socketpair, runs the certificate probe and one RdpSession at a time over
// the sockets the console hands it, writes the desktop into the shared desktop the console
// gave it, and answers. It holds nothing else worth stealing: no libvirt, no MCP, no files,
// no evidence, no network of its own (ReaderSandbox). The console treats what it says as
// untrusted; it trusts the console (its parent, the only peer of its socketpair).
//
// Thread: the reader's main thread (its Qt event loop); RdpSession's worker posts to it.
#pragma once

#include "rdp/DesktopSurface.h"
#include "readerwire/ReaderWire.h"
#include "readerwire/SharedDesktop.h"

#include <QObject>
#include <QSocketNotifier>

#include <memory>
#include <span>

namespace gc {

class RdpSession;

class ReaderService : public QObject {
  Q_OBJECT
public:
  // `controlFd`: the reader's end of the socketpair (SOCK_SEQPACKET); `desktop`: the shared
  // desktop (already mapped); `sandbox`: what ReaderSandbox applied, for Ready.
  ReaderService(int controlFd, SharedDesktop desktop, quint32 sandbox, QObject* parent = nullptr);
  ~ReaderService() override;

  // Says Ready and starts reading.
  void start();

signals:
  // The console said Abort, or went away: the process exits with `code`.
  void finished(int code);

private:
  void readable();
  void handle(wire::ToReader& message, int fd);
  void send(const wire::FromReader& message);
  // Answers, in order, kInputsPerWake to a call (they carry no payload).
  void sendAll(std::span<const wire::InputDone> answers);
  void probe(const wire::Probe& probe, int fd);
  void startSession(wire::Start& start, int fd);
  void endSession();
  void finish(int code);
  // Test builds: wire::SelfTest; a release reader refuses it and exits.
  void selfTest(quint8 mode);
  // One input (Key, Pointer, Unicode) to the session, and its answer; a chained one only if
  // the input before it was written (ReaderWire.h).
  template <typename Input> wire::InputDone input(const Input& m);
  // As many as the console keeps in flight (ReaderWire.h).
  static constexpr std::size_t kInputsPerWake = wire::kInputsInFlight;

  int m_control;
  SharedDesktop m_desktop;
  quint32 m_sandbox;
  QSocketNotifier m_notifier;
  std::unique_ptr<RdpSession> m_session;
  bool m_finishing = false;
  struct LastInput {
    quint32 id = 0;
    bool written = false;
  } m_lastInput;
};

} // namespace gc
