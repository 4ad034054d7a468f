// CertificateProbe: learns (and checks) the guest's RDP certificate without credentials.
// FreeRDP negotiates X.224 and completes the TLS handshake, then our certificate callback
// records the leaf's SHA-256 and refuses it, so the connection stops before CredSSP/MCS:
// nothing but the X.224 connection request and the TLS handshake is ever sent.
// Blocking; call from any thread except one that must stay responsive (up to timeoutMs).
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QString>

namespace gc {

class CertificateProbe {
public:
  // The certificate's SHA-256 (32 raw bytes). With a non-empty expectedPin, a different
  // certificate is GUEST_CERT_MISMATCH; no TLS handshake within timeoutMs is RDP_UNREACHABLE.
  // `socketFd`: a TCP socket already connected to host:port, which the probe adopts and
  // closes (the RDP reader process cannot open sockets); -1: FreeRDP connects itself
  // (in-process tests), with `configDir` as its private, empty config directory.
  static Outcome<QByteArray> probe(const QString& host, quint16 port, const QByteArray& expectedPin,
                                   int timeoutMs, const QString& configDir, int socketFd = -1);
};

} // namespace gc
