#include "reader/ReaderWarmup.h"

#include "rdp/ClientBaseline.h"

#include <freerdp/client.h>
#include <freerdp/freerdp.h>

#include <memory>

namespace gc {

namespace {
BOOL warmupClientNew(freerdp* instance, rdpContext*) {
  ClientBaseline::installRefusingCallbacks(instance);
  return TRUE;
}
void warmupClientFree(freerdp*, rdpContext*) {}
} // namespace

Status ReaderWarmup::run() {
  const ClientBaseline::Context context =
      ClientBaseline::newContext(sizeof(rdpClientContext), &warmupClientNew, &warmupClientFree);
  if (!context)
    return Status(Refusal::ResourceExhausted, QStringLiteral("cannot create a FreeRDP context"));
  if (!ClientBaseline::apply(context->settings,
                             ClientTarget{QStringLiteral("127.0.0.1"), 3389, {}, 1000, {}}))
    return Status(Refusal::Internal, QStringLiteral("cannot configure FreeRDP"));
  return success();
}

} // namespace gc
