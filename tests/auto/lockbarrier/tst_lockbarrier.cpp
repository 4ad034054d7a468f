// The lock barrier (session/LockBarrier) over a real RDP session: the console's input sink
// (console/RdpInputSink) into the RDP reader process, against the test guest. The barrier's
// own rules, with a recording sink, are tst_inputgate's; this suite shows they hold on the
// wire, at the guest. (Moved here from tst_console, which it never needed: issue 28.4.)
#include "GuestProcess.h"
#include "console/RdpInputSink.h"
#include "readerhost/RdpReader.h"
#include "session/InputGate.h"
#include "session/LockBarrier.h"
#include "session/PhaseController.h"

#include <QJsonObject>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>

using namespace gc;

class tst_LockBarrier : public QObject {
  Q_OBJECT
private slots:
  // 1,000 lock barriers over one real RDP session: fresh phases/gate/barrier per round,
  // a second thread injecting at random points, and the capture start marked on the same
  // RDP stream (a pointer event at a coordinate unique to the round). The guest's arrival
  // log must be exactly: round 1's accepted events, marker 1, round 2's, marker 2, …
  void barrierStressAgainstRealGuest() {
    GuestProcess guest;
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}, QStringLiteral("op"),
                        QStringLiteral("throwaway-pw")));
    RdpReader session; // the console's path: the RDP reader process
    QVERIFY(session.spawn(QSize(1024, 768)).ok());
    RdpConfig cfg;
    cfg.host = QStringLiteral("127.0.0.1");
    cfg.port = guest.port();
    cfg.pinSha256 = QByteArray::fromHex(guest.sha256().toLatin1());
    Credentials creds;
    creds.username = SecureBuffer::copyOf("op").value();
    creds.password = SecureBuffer::copyOf("throwaway-pw").value();
    QSignalSpy connected(&session, &RdpReader::connected);
    session.start(cfg, std::move(creds));
    QVERIFY(connected.wait(20000));
    QVERIFY(guest.waitForEvent(QStringLiteral("activated")));
    const int before = guest.events(QStringLiteral("input")).size();

    const int rounds = 1000;
    QLoggingCategory::setFilterRules(QStringLiteral("gc.phase.info=false"));
    QList<QList<int>> acceptedPerRound;
    int markerFailures = 0;
    quint64 refusedLocked = 0;
    RdpInputSink sink;
    sink.setSession(&session);
    for (int round = 0; round < rounds; ++round) {
      PhaseController phases;
      InputGateLimits limits;
      limits.burst = 1e6;
      limits.capacity = 100000;
      InputGate gate(&phases, &sink, limits);
      gate.setDesktopSize(QSize(1024, 768));
      LockBarrier barrier(&phases, &gate);
      QObject::connect(&barrier, &LockBarrier::captureStarted, [&] {
        // The capture-start marker, on the same ordered stream as every drained event.
        if (!session.sendPointer(quint16(round % 1000), 700, 0, 0).ok())
          ++markerFailures;
      });
      QList<int> accepted;
      quint64 locked = 0;
      std::atomic<bool> done{false};
      const int total = 5 + int(QRandomGenerator::global()->bounded(25));
      const int lockAt = 1 + int(QRandomGenerator::global()->bounded(total));
      QThread* injector = QThread::create([&] {
        for (int i = 1; i <= total; ++i) {
          if (i == lockAt)
            QMetaObject::invokeMethod(
                &gate, [&] { (void)barrier.requestLock(QStringLiteral("stress")); }, Qt::QueuedConnection);
          QMetaObject::invokeMethod(
              &gate,
              [&, i] {
                // scancode identifies the event within the round; down/up alternate.
                const auto r = gate.submit(InputEvent::key(quint64(i), quint16(0x02 + i), i % 2));
                if (r.ok())
                  accepted.append(i);
                else if (r.code() == Refusal::PhaseLocked)
                  ++locked;
              },
              Qt::QueuedConnection);
          if (QRandomGenerator::global()->bounded(3) == 0)
            QThread::yieldCurrentThread();
        }
        done = true;
      });
      injector->start();
      QTRY_VERIFY_WITH_TIMEOUT(done && accepted.size() + int(locked) == total, 10000);
      injector->wait();
      delete injector;
      QCOMPARE(phases.phase(), Phase::Capturing);
      acceptedPerRound.append(accepted);
      refusedLocked += locked;
    }
    QLoggingCategory::setFilterRules(QString());
    QCOMPARE(markerFailures, 0);
    // Wait until the guest has reported the last round's marker.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          const auto in = guest.events(QStringLiteral("input"));
          return !in.isEmpty() &&
                 in.last().value(QStringLiteral("kind")).toString() != QLatin1String("key") &&
                 in.last().value(QStringLiteral("x")).toInt() == (rounds - 1) % 1000 &&
                 in.last().value(QStringLiteral("y")).toInt() == 700;
        }(),
        60000);
    const QList<QJsonObject> inputs = guest.events(QStringLiteral("input")).mid(before);
    int pos = 0, violations = 0;
    quint64 accepted = 0;
    for (int round = 0; round < rounds; ++round) {
      for (int i : acceptedPerRound[round]) {
        const QJsonObject e = inputs.value(pos++);
        if (e.value(QStringLiteral("kind")).toString() != QLatin1String("key") ||
            e.value(QStringLiteral("code")).toInt() != 0x02 + i)
          ++violations;
        ++accepted;
      }
      const QJsonObject marker = inputs.value(pos++);
      if (marker.value(QStringLiteral("kind")).toString() == QLatin1String("key") ||
          marker.value(QStringLiteral("x")).toInt() != round % 1000 ||
          marker.value(QStringLiteral("y")).toInt() != 700)
        ++violations;
    }
    QCOMPARE(pos, inputs.size()); // nothing else ever arrived
    qInfo("real-guest barrier stress: %d lock transitions, %llu events drained before their capture marker, "
          "%llu refused PHASE_LOCKED, %d violations",
          rounds, accepted, refusedLocked, violations);
    QCOMPARE(violations, 0);
    session.abort();
  }
};

QTEST_GUILESS_MAIN(tst_LockBarrier)
#include "tst_lockbarrier.moc"
