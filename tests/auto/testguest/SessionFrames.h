// SessionFrames: for tests that run RdpSession in-process, what the console does with the
// reader's frames (readerhost/RdpReader): a lease at every frameReady, the changed pixels
// copied into a frame pool, the lease returned, the frame handed out as a FrameUpdate.
#pragma once

#include "rdp/RdpSession.h"
#include "readerhost/DesktopFrames.h"
#include "readerhost/FrameUpdate.h"
#include "readerwire/ReaderTypes.h"

#include <QObject>

class SessionFrames : public QObject {
  Q_OBJECT
public:
  explicit SessionFrames(gc::RdpSession& session, QObject* parent = nullptr);
  // Leases taken so far.
  int leases() const { return m_leases; }

signals:
  void frameUpdated(const gc::FrameUpdate& update);

private:
  gc::RdpSession& m_session;
  gc::DesktopFrames m_frames;
  quint64 m_serial = 0;
  int m_leases = 0;
};
