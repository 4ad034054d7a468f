#include "SessionFrames.h"

SessionFrames::SessionFrames(gc::RdpSession& session, QObject* parent) : QObject(parent), m_session(session) {
  connect(&session, &gc::RdpSession::frameReady, this, [this] { m_session.requestLease(); });
  connect(
      &session, &gc::RdpSession::leased, this, [this](quint64, const gc::DesktopSurface::Changes& changes) {
        ++m_leases;
        const gc::DesktopSurface& surface = m_session.desktopSurface();
        bool pending = changes.resized && m_frames.resize(surface.size());
        QList<QRect> rects = changes.damage;
        for (const gc::DesktopSurface::Move& m : changes.moves)
          rects.append(m.source.translated(m.target - m.source.topLeft()));
        if (!rects.isEmpty())
          pending = m_frames
                        .absorb(surface.constBits(), surface.stride(), surface.size(),
                                std::span<const QRect>(rects.constData(), std::size_t(rects.size())))
                        .firstPending ||
                    pending;
        m_session.returnLease();
        if (!pending)
          return;
        gc::DesktopFrames::Taken taken = m_frames.take();
        if (!taken.frame.isNull())
          emit frameUpdated(gc::FrameUpdate{std::move(taken.frame), std::move(taken.dirty), {}, ++m_serial});
      });
  // A frame the session announced before this helper existed (its frameReady went nowhere, and
  // the session announces no other until a lease is served): lease it now.
  if (m_session.state() == gc::RdpSession::State::Connected)
    m_session.requestLease();
}
