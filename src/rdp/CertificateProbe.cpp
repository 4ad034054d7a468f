#include "rdp/CertificateProbe.h"

#include "rdp/CertificatePin.h"
#include "rdp/ClientBaseline.h"
#include "rdp/WLogRouter.h"

#include <QFile>

#include <freerdp/client.h>
#include <freerdp/freerdp.h>
#include <freerdp/settings.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace gc {

namespace {

struct ProbeContext {
  rdpClientContext common;
  std::optional<QByteArray>* digest;
};

// Records the certificate and always refuses it: the probe never goes past TLS.
int recordCertificate(freerdp* instance, const BYTE* pem, size_t length, const char*, UINT16, DWORD flags) {
  auto* ctx = reinterpret_cast<ProbeContext*>(instance->context);
  if (!(flags & (VERIFY_CERT_FLAG_GATEWAY | VERIFY_CERT_FLAG_REDIRECT)))
    *ctx->digest = CertificatePin::leafSha256FromPem(
        QByteArrayView(reinterpret_cast<const char*>(pem), qsizetype(length)));
  return 0;
}

BOOL probeClientNew(freerdp* instance, rdpContext*) {
  ClientBaseline::installRefusingCallbacks(instance);
  instance->VerifyX509Certificate = &recordCertificate;
  return TRUE;
}

void probeClientFree(freerdp*, rdpContext*) {}

} // namespace

Outcome<QByteArray> CertificateProbe::probe(const QString& host, quint16 port, const QByteArray& expectedPin,
                                            int timeoutMs, const QString& configDir) {
  if (host != QStringLiteral("127.0.0.1"))
    return Failure{Refusal::RdpRuleNotLoopback, QStringLiteral("the RDP host must be 127.0.0.1")};
  if (configDir.isEmpty())
    return Failure{Refusal::Internal, QStringLiteral("no private FreeRDP config directory")};
  WLogRouter::install();

  RDP_CLIENT_ENTRY_POINTS entry{};
  entry.Size = sizeof(RDP_CLIENT_ENTRY_POINTS);
  entry.Version = RDP_CLIENT_INTERFACE_VERSION;
  entry.ContextSize = sizeof(ProbeContext);
  entry.ClientNew = &probeClientNew;
  entry.ClientFree = &probeClientFree;
  std::unique_ptr<rdpContext, decltype(&freerdp_client_context_free)> context(
      freerdp_client_context_new(&entry), &freerdp_client_context_free);
  if (!context)
    return Failure{Refusal::Internal, QStringLiteral("cannot create the FreeRDP context")};
  std::optional<QByteArray> digest;
  reinterpret_cast<ProbeContext*>(context.get())->digest = &digest;

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

  if (!digest)
    return Failure{Refusal::RdpUnreachable,
                   QStringLiteral("no TLS certificate from %1:%2").arg(host).arg(port)};
  if (!expectedPin.isEmpty() && !CertificatePin::matches(*digest, expectedPin))
    return Failure{Refusal::GuestCertMismatch,
                   QStringLiteral("the guest's certificate does not match the pin")};
  return *digest;
}

} // namespace gc
