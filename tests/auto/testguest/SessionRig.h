// SessionRig: what the tests that run RdpSession in-process against the test guest share — the
// credentials, the loopback config pinned to the guest's certificate, the wait for `connected`
// (or `failed`), and reading what the session's frames show.
#pragma once

#include "GuestProcess.h"
#include "privacy/SecureBuffer.h"
#include "rdp/RdpSession.h"
#include "readerhost/FrameUpdate.h"
#include "readerwire/ReaderTypes.h"

#include <QImage>
#include <QSignalSpy>
#include <QTest>

namespace sessionrig {

inline gc::RdpCredentials credentials(const char* user, const char* password) {
  return {gc::SecureBuffer::copyOf(user).value(), gc::SecureBuffer::copyOf(password).value(),
          gc::SecureBuffer()};
}

// 127.0.0.1:<the guest's port>, pinned to its certificate, FreeRDP's config in `configDir`.
inline gc::RdpConfig loopbackConfig(const GuestProcess& guest, const QString& configDir,
                                    int connectTimeoutMs = 15000) {
  gc::RdpConfig c;
  c.host = QStringLiteral("127.0.0.1");
  c.port = guest.port();
  c.pinSha256 = QByteArray::fromHex(guest.sha256().toLatin1());
  c.configDir = configDir;
  c.connectTimeoutMs = connectTimeoutMs;
  return c;
}

// Starts `session` and waits (generously: a loaded machine) until it connected or failed.
inline bool connect(gc::RdpSession& session, const gc::RdpConfig& config, gc::RdpCredentials credentials) {
  QSignalSpy connected(&session, &gc::RdpSession::connected);
  QSignalSpy failed(&session, &gc::RdpSession::failed);
  session.start(config, std::move(credentials));
  if (!QTest::qWaitFor([&] { return !connected.isEmpty() || !failed.isEmpty(); }, 20000))
    return false;
  if (!failed.isEmpty())
    qWarning("connect failed: %s", qPrintable(failed.first().first().value<gc::Failure>().toString()));
  return !connected.isEmpty();
}

// The frame of the last FrameUpdate a spy on SessionFrames::frameUpdated saw (null if none).
inline QImage lastFrame(const QSignalSpy& frames) {
  return frames.isEmpty() ? QImage() : frames.last().first().value<gc::FrameUpdate>().frame;
}

// Every pixel of `area` of `frame` is `rgb` (alpha ignored).
inline bool allPixels(const QImage& frame, const QRect& area, QRgb rgb) {
  if (frame.isNull() || !frame.rect().contains(area))
    return false;
  for (int y = area.top(); y <= area.bottom(); ++y)
    for (int x = area.left(); x <= area.right(); ++x)
      if ((frame.pixel(x, y) & 0xFFFFFF) != (rgb & 0xFFFFFF))
        return false;
  return true;
}

} // namespace sessionrig
