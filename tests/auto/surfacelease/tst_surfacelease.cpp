// SurfaceLease: when the RDP worker grants the reader the surface of record. A standing
// request (the next frame with changes) must not wake the worker's wait again and again while
// nothing changed, and must stand in for the "frame ready" a reader would otherwise answer.
#include "rdp/SurfaceLease.h"

#include <QTest>

#include <winpr/synch.h>

using gc::SurfaceLease;
using When = SurfaceLease::When;

namespace {

// Serves once; the lease is given back inside the grant, so serve() returns at once. The
// granted serial, or 0 when nothing was granted.
quint64 serveOnce(SurfaceLease& lease, bool changed) {
  quint64 granted = 0;
  lease.serve(
      changed,
      [&](quint64 serial) {
        granted = serial;
        lease.giveBack();
      },
      [] { return false; });
  return granted;
}

bool eventSet(const SurfaceLease& lease) {
  return WaitForSingleObject(lease.event(), 0) == WAIT_OBJECT_0;
}

} // namespace

class tst_SurfaceLease : public QObject {
  Q_OBJECT

private slots:
  void aStandingRequestWaitsForChanges() {
    SurfaceLease lease;
    lease.request(When::FrameReady);
    QVERIFY(eventSet(lease)); // the worker looks at once: a frame may be ready already
    QCOMPARE(serveOnce(lease, false), quint64(0));
    QVERIFY(!eventSet(lease)); // nothing changed: the worker's wait does not spin on it
    QCOMPARE(serveOnce(lease, true), quint64(1));
    QCOMPARE(serveOnce(lease, true), quint64(0)); // granted once: nothing stands any more
  }

  void aBoundaryRequestIsGrantedWithoutChanges() {
    SurfaceLease lease;
    lease.request(When::Boundary);
    QCOMPARE(serveOnce(lease, false), quint64(1));
  }

  void aBoundaryRequestMakesAStandingOneDue() {
    SurfaceLease lease;
    lease.request(When::FrameReady);
    QCOMPARE(serveOnce(lease, false), quint64(0));
    lease.request(When::Boundary);
    QVERIFY(eventSet(lease));
    QCOMPARE(serveOnce(lease, false), quint64(1));
    QCOMPARE(serveOnce(lease, true), quint64(0)); // both were answered by that one grant
  }

  void aStandingRequestWaitsForTheFrameToEnd() {
    SurfaceLease lease;
    lease.frameBegan();
    lease.request(When::FrameReady);
    QCOMPARE(serveOnce(lease, true), quint64(0));
    QVERIFY(!eventSet(lease));
    lease.frameEnded();
    QCOMPARE(serveOnce(lease, true), quint64(1));
  }

  void noFrameReadyIsSaidWhileAStandingRequestWaits() {
    SurfaceLease lease;
    lease.request(When::FrameReady);
    QVERIFY(!lease.takeReadyToSay()); // the grant says it
    QCOMPARE(serveOnce(lease, true), quint64(1));
    QVERIFY(lease.takeReadyToSay()); // nobody asked ahead: said once
    QVERIFY(!lease.takeReadyToSay());
  }
};

QTEST_GUILESS_MAIN(tst_SurfaceLease)
#include "tst_surfacelease.moc"
