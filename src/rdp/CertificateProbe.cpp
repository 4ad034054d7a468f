#include "rdp/CertificateProbe.h"

#include "rdp/CertificatePin.h"
#include "rdp/ClientBaseline.h"
#include "rdp/WLogRouter.h"

#include <QFile>

#include <freerdp/client.h>
#include <freerdp/error.h>
#include <freerdp/freerdp.h>
#include <freerdp/settings.h>
#include <freerdp/transport_io.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>
#include <utility>

namespace gc {

namespace {

struct ProbeContext {
  rdpClientContext common;
  std::optional<QByteArray>* digest;
  int socketFd; // the console's connected socket, adopted once; -1: FreeRDP connects
};

// The connect of a probe given a socket: that socket, once, to the expected target only.
int adoptSocket(rdpContext* context, rdpSettings* settings, const char*, int, DWORD) {
  auto* ctx = reinterpret_cast<ProbeContext*>(context);
  const int fd = std::exchange(ctx->socketFd, -1);
  if (fd < 0 || !freerdp_settings_set_string(settings, FreeRDP_ClientAddress, "127.0.0.1")) {
    if (fd >= 0)
      ::close(fd);
    freerdp_set_last_error_if_not(context, FREERDP_ERROR_CONNECT_CANCELLED);
    return -1;
  }
  return fd;
}

// Records the certificate and always refuses it: the probe never goes past TLS.
int recordCertificate(freerdp* instance, const BYTE* pem, size_t length, const char*, UINT16, DWORD flags) {
  auto* ctx = reinterpret_cast<ProbeContext*>(instance->context);
  if (!(flags & (VERIFY_CERT_FLAG_GATEWAY | VERIFY_CERT_FLAG_REDIRECT)))
    *ctx->digest = CertificatePin::leafSha256FromPem(
        QByteArrayView(reinterpret_cast<const char*>(pem), qsizetype(length)));
  return 0;
}

// Inside freerdp_connect, before the transport connects: a given socket replaces the connect.
BOOL probePreConnect(freerdp* instance) {
  auto* ctx = reinterpret_cast<ProbeContext*>(instance->context);
  if (ctx->socketFd < 0)
    return TRUE;
  rdpTransportIo io = *freerdp_get_io_callbacks(instance->context);
  io.TCPConnect = &adoptSocket;
  return freerdp_set_io_callbacks(instance->context, &io);
}

BOOL probeClientNew(freerdp* instance, rdpContext* context) {
  reinterpret_cast<ProbeContext*>(context)->socketFd = -1;
  ClientBaseline::installRefusingCallbacks(instance);
  instance->PreConnect = &probePreConnect;
  instance->VerifyX509Certificate = &recordCertificate;
  return TRUE;
}

void probeClientFree(freerdp*, rdpContext*) {}

} // namespace

Outcome<QByteArray> CertificateProbe::probe(const QString& host, quint16 port, const QByteArray& expectedPin,
                                            int timeoutMs, const QString& configDir, int socketFd) {
  if (host != QStringLiteral("127.0.0.1"))
    return Failure{Refusal::RdpRuleNotLoopback, QStringLiteral("the RDP host must be 127.0.0.1")};
  struct CloseUnadopted {
    int& fd;
    ~CloseUnadopted() {
      if (fd >= 0)
        ::close(fd);
    }
  } closeUnadopted{socketFd};
  if (configDir.isEmpty() && socketFd < 0)
    return Failure{Refusal::Internal, QStringLiteral("no private FreeRDP config directory")};
  WLogRouter::install();

  const ClientBaseline::Context context =
      ClientBaseline::newContext(sizeof(ProbeContext), &probeClientNew, &probeClientFree);
  if (!context)
    return Failure{Refusal::Internal, QStringLiteral("cannot create the FreeRDP context")};
  std::optional<QByteArray> digest;
  auto* probeContext = reinterpret_cast<ProbeContext*>(context.get());
  probeContext->digest = &digest;
  probeContext->socketFd = std::exchange(socketFd, -1);

  if (!ClientBaseline::apply(context->settings,
                             ClientTarget{host, port, configDir, timeoutMs, ClientDesktop{}}))
    return Failure{Refusal::Internal, QStringLiteral("cannot configure FreeRDP")};

  // A watchdog bounds the whole probe (TCP connect + handshake), not just the TCP connect.
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (!done.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return finished; }))
      freerdp_abort_connect_context(context.get());
  });
  // FreeRDP's errors from here on (the refused certificate, the aborted handshake) are the
  // point of the probe, not faults; its outcome is reported below.
  const WLogRouter::ExpectedErrors expected;
  freerdp_connect(context->instance); // always fails: the certificate is refused
  {
    std::lock_guard lock(mutex);
    finished = true;
  }
  done.notify_all();
  watchdog.join();
  freerdp_disconnect(context->instance);
  if (probeContext->socketFd >= 0)
    ::close(std::exchange(probeContext->socketFd, -1)); // never adopted

  if (!digest)
    return Failure{Refusal::RdpUnreachable,
                   QStringLiteral("no TLS certificate from %1:%2").arg(host).arg(port)};
  if (!expectedPin.isEmpty() && !CertificatePin::matches(*digest, expectedPin))
    return Failure{Refusal::GuestCertMismatch,
                   QStringLiteral("the guest's certificate does not match the pin")};
  return *digest;
}

} // namespace gc
