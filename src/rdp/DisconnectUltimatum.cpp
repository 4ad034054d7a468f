#include "rdp/DisconnectUltimatum.h"

#include <freerdp/freerdp.h>
#include <freerdp/transport_io.h>
#include <winpr/stream.h>

#include <array>

namespace gc {

bool DisconnectUltimatum::send(rdpContext* context) {
  if (!context)
    return false;
  rdpTransport* transport = freerdp_get_transport(context);
  const rdpTransportIo* io = freerdp_get_io_callbacks(context);
  if (!transport || !io || !io->WritePdu)
    return false;
  // TPKT (version 3, length 9), X.224 Data TPDU (LI 2, 0xF0, EOT), then the PER-encoded
  // DomainMCSPDU: CHOICE disconnectProviderUltimatum (8) << 2 with the reason's high bit,
  // then its low bit: rn-user-requested (3) = "21 80" (FreeRDP's mcs.c encodes the same).
  constexpr std::array<BYTE, 9> pdu{0x03, 0x00, 0x00, 0x09, 0x02, 0xF0, 0x80, 0x21, 0x80};
  wStream* s = Stream_New(nullptr, pdu.size());
  if (!s)
    return false;
  Stream_Write(s, pdu.data(), pdu.size());
  // WritePdu writes what lies before the stream's position.
  const int written = io->WritePdu(transport, s);
  Stream_Free(s, TRUE);
  return written >= 0;
}

} // namespace gc
