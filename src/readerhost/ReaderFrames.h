// ReaderFrames: the console's frame bookkeeping over the RDP reader's leases, apart from the
// protocol client (RdpReader) that asks for them and returns them. Each lease the reader
// grants (wire::Leased) is checked against the shared desktop and the leases before it, its
// damage and the targets of its moves are copied into the frame pool (DesktopFrames), the
// guest's moves are kept for the next frame, and the frame goes out as frameUpdated(). It also
// keeps the pacing's side of "presented": a frame's serial is the newest lease it holds, so
// "the panel presented up to N" needs no table, and a lease that changed no pixel is
// presented with the newest frame, or after kUnchangedPresent when that one was presented.
//
// Thread: the console's main thread; absorb() only while RdpReader holds the lease.
#pragma once

#include "readerhost/DesktopFrames.h"
#include "readerhost/FrameUpdate.h"
#include "readerwire/ReaderTypes.h"
#include "readerwire/ReaderWire.h"

#include <QObject>
#include <QSize>
#include <QTimer>

#include <chrono>
#include <optional>

namespace gc {

class ReaderFrames : public QObject {
  Q_OBJECT
public:
  // The guest's own moves kept behind one frame (FrameUpdate::moves); more: none, the
  // frame's damage covers them.
  static constexpr int kMaxGuestMoves = 16;
  static constexpr std::chrono::milliseconds kUnchangedPresent{100};

  explicit ReaderFrames(QObject* parent = nullptr);

  // The shared desktop's bounds: its pixel count bounds every desktop a lease may describe.
  void setMaxDesktop(QSize maxDesktop) { m_maxDesktop = maxDesktop; }
  QSize maxDesktop() const { return m_maxDesktop; }
  // The desktop as the reader last described it (connected, or a lease).
  void setSize(QSize size) { m_size = size; }
  QSize size() const { return m_size; }
  // A desktop of no more pixels than the shared desktop holds.
  bool fitsShared(QSize size) const;

  // The pool's idle trim runs while the reader does.
  void startTrim() { m_trim.start(); }
  // A new session: its leases are counted from scratch.
  void startSession();

  // One lease, while it is held: checked, absorbed from `pixels` (the shared desktop). The
  // breach when the reader broke a rule (nothing absorbed), else nullopt.
  struct Absorbed {
    bool pending = false; // a frame waits for handOut()
    bool changed = false; // some pixel (or the size) changed
  };
  std::optional<QString> absorb(const wire::Leased& leased, const uchar* pixels, Absorbed& result);
  // After the lease was returned: an unchanged lease is presented later, a pending frame goes
  // out (frameUpdated()).
  void settle(quint64 serial, const Absorbed& result);

  // The panel presented every frame up to `upto`: what to tell the reader, if anything
  // (leases that changed nothing after the newest frame are shown with it).
  std::optional<quint64> present(quint64 upto);

  // The reader is gone: timers stopped, the pool's guest pixels zeroed.
  void wipe();

signals:
  void frameUpdated(const gc::FrameUpdate& update);
  // An unchanged lease's time has come (kUnchangedPresent after it, nothing newer shown).
  void presentDue(quint64 upto);

private:
  void handOut();
  void presentUnchanged(quint64 lease);

  QSize m_maxDesktop;
  QSize m_size;
  quint64 m_lastSerial = 0;
  DesktopFrames m_frames;
  QList<wire::SurfaceMove> m_pendingMoves; // since the last frame handed out
  bool m_movesOverflowed = false;
  QTimer m_trim;

  quint64 m_handedLease = 0; // the serial of the newest frame handed out
  quint64 m_presentedLease = 0;
  quint64 m_unchangedLease = 0; // the newest lease that changed nothing, not yet presented
  QTimer m_unchangedTimer;
};

} // namespace gc
