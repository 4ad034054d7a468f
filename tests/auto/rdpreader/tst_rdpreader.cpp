// RdpReader and the RDP reader process (issue 24 point 3: the part that parses the guest runs
// in a process with nothing to steal; the console treats it as untrusted).
#include "GuestProcess.h"
#include "readerhost/RdpReader.h"
#include "readerwire/ReaderWire.h"
#include "readerwire/SandboxReport.h"
#include "testguest/IdentityMarker.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace gc;

namespace {

QMap<QString, QString> procStatus(qint64 pid) {
  QFile f(QStringLiteral("/proc/%1/status").arg(pid));
  QMap<QString, QString> out;
  if (!f.open(QIODevice::ReadOnly))
    return out;
  for (const QByteArray& line : f.readAll().split('\n')) {
    const qsizetype colon = line.indexOf(':');
    if (colon > 0)
      out.insert(QString::fromLatin1(line.left(colon)), QString::fromLatin1(line.mid(colon + 1)).trimmed());
  }
  return out;
}

// "<fd>=<what readlink says>", e.g. "3=socket:[123]", "0=/dev/null".
QStringList descriptorsOf(qint64 pid) {
  QStringList out;
  const QDir dir(QStringLiteral("/proc/%1/fd").arg(pid));
  for (const QString& fd : dir.entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::System)) {
    char target[512] = {};
    const ssize_t n = ::readlink(QFile::encodeName(dir.filePath(fd)).constData(), target, sizeof target - 1);
    out << fd + QLatin1Char('=') + QString::fromLocal8Bit(target, n > 0 ? n : 0);
  }
  return out;
}

RdpConfig configFor(const GuestProcess& guest, QSize desktop) {
  RdpConfig c;
  c.host = QStringLiteral("127.0.0.1");
  c.port = guest.port();
  c.pinSha256 = QByteArray::fromHex(guest.sha256().toLatin1());
  c.desktop.width = quint32(desktop.width());
  c.desktop.height = quint32(desktop.height());
  return c;
}

Credentials credentials() {
  Credentials c;
  c.username = SecureBuffer::copyOf("tester").value();
  c.password = SecureBuffer::copyOf("throwaway-pw").value();
  return c;
}

// The test guest at 800x600, and the reader in a session with it.
bool startConnected(GuestProcess& guest, RdpReader& reader) {
  if (!guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--width"),
                    QStringLiteral("800"), QStringLiteral("--height"), QStringLiteral("600")}) ||
      !reader.spawn(QSize(800, 600)).ok())
    return false;
  QSignalSpy connected(&reader, &RdpReader::connected);
  reader.start(configFor(guest, QSize(800, 600)), credentials());
  return connected.wait(30000);
}

} // namespace

class tst_RdpReader : public QObject {
  Q_OBJECT
private slots:
  void runsInsideItsSandbox() {
    RdpReader reader;
    QVERIFY(reader.spawn(QSize(1024, 768)).ok());
    QVERIFY(reader.pid() > 0);
    const auto status = procStatus(reader.pid());
    QCOMPARE(status.value(QStringLiteral("Seccomp")), QStringLiteral("2"));
    QCOMPARE(status.value(QStringLiteral("NoNewPrivs")), QStringLiteral("1"));
    QVERIFY(reader.sandbox() & SandboxReport::SyscallFilter);
    if (reader.sandbox() & SandboxReport::NetworkNamespace)
      QVERIFY(QFileInfo(QStringLiteral("/proc/%1/ns/net").arg(reader.pid())).symLinkTarget() !=
              QFileInfo(QStringLiteral("/proc/self/ns/net")).symLinkTarget());
    // What it holds: stdio, its end of the socketpair, and descriptors of its own making
    // (eventfds, the kept /proc files); no other file or socket, not the shared desktop's.
    int sockets = 0;
    const QStringList fds = descriptorsOf(reader.pid());
    QVERIFY2(fds.size() >= 4, qPrintable(fds.join(QLatin1Char(' '))));
    for (const QString& fd : fds) {
      const QString target = fd.section(QLatin1Char('='), 1);
      if (target.startsWith(QLatin1String("socket:")))
        ++sockets;
      else
        QVERIFY2(target == QLatin1String("/dev/null") || target.startsWith(QLatin1String("anon_inode:")) ||
                     target.startsWith(QLatin1String("/proc/")) || fd.startsWith(QLatin1String("2=")),
                 qPrintable(fd));
    }
    QCOMPARE(sockets, 1);
    reader.abort();
  }

  void cannotOpenFilesSocketsProcessesOrCode() {
    RdpReader reader;
    QVERIFY(reader.spawn(QSize(640, 480)).ok());
    const Outcome<QStringList> results = reader.selfTest(wire::SelfTest::ProbeSandbox);
    QVERIFY2(results.ok(), qPrintable(results.ok() ? QString() : results.failure().toString()));
    for (const QString& r : results.value()) {
      const QString what = r.section(QLatin1Char('='), 0, 0);
      const int error = r.section(QLatin1Char('='), 1).toInt();
      QVERIFY2(error != 0, qPrintable(QStringLiteral("the reader may %1").arg(what)));
    }
    QVERIFY(results->size() >= 11);
    reader.abort();
  }

  void connectsOverTheConsolesSocketAndShowsTheGuest() {
    GuestProcess guest;
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--width"),
                         QStringLiteral("800"), QStringLiteral("--height"), QStringLiteral("600")}));
    RdpReader reader;
    QVERIFY(reader.spawn(QSize(800, 600)).ok());
    const Outcome<QByteArray> digest = reader.probe(QStringLiteral("127.0.0.1"), guest.port(),
                                                    QByteArray::fromHex(guest.sha256().toLatin1()), 10000);
    QVERIFY2(digest.ok(), qPrintable(digest.ok() ? QString() : digest.failure().toString()));
    QSignalSpy connected(&reader, &RdpReader::connected);
    QSignalSpy frames(&reader, &RdpReader::frameUpdated);
    reader.start(configFor(guest, QSize(800, 600)), credentials());
    QVERIFY(connected.wait(30000));
    QCOMPARE(connected.first().first().toSize(), QSize(800, 600));
    QCOMPARE(reader.securityProtocol(), QStringLiteral("nla"));
    QVERIFY(reader.connectTrace().certificateAccepted);
    // The desktop the console gets through the shared desktop is the guest's: its marker.
    QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 15000);
    const FrameUpdate update = frames.last().first().value<FrameUpdate>();
    QCOMPARE(update.frame.size(), QSize(800, 600));
    const auto marker =
        testguest::findMarker(update.frame.constBits(), int(update.frame.bytesPerLine()), 800, 600);
    QVERIFY(marker.has_value());
    QCOMPARE(*marker, quint32(guest.ready().value(QStringLiteral("marker")).toString().toUInt(nullptr, 16)));
    // Input goes out through the reader, written and flushed before the answer.
    QVERIFY(reader.sendKey(0x1E, true).ok());
    QVERIFY(reader.sendKey(0x1E, false).ok());
    QVERIFY(guest.waitForEvent(QStringLiteral("input"), 2));
    reader.abort();
    QVERIFY(reader.ultimatumSent());
    // The probe's connection, then the session's: it ended with a Disconnect Provider Ultimatum.
    QVERIFY(guest.waitForEvent(QStringLiteral("client_disconnected"), 2));
    QCOMPARE(
        guest.events(QStringLiteral("client_disconnected")).last().value(QStringLiteral("ultimatum")).toInt(),
        3);
  }

  // The process that parses the guest's bytes runs no code it wrote itself: a write of the
  // guest's choosing cannot become an instruction (no JIT, no writable or anonymous code).
  void runsNoCodeItWroteItselfAfterASession() {
    GuestProcess guest;
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--width"),
                         QStringLiteral("640"), QStringLiteral("--height"), QStringLiteral("480")}));
    RdpReader reader;
    QVERIFY(reader.spawn(QSize(640, 480)).ok());
    QSignalSpy connected(&reader, &RdpReader::connected);
    QSignalSpy frames(&reader, &RdpReader::frameUpdated);
    reader.start(configFor(guest, QSize(640, 480)), credentials());
    QVERIFY(connected.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 15000);
    QVERIFY(reader.sendKey(0x1E, true).ok());
    QVERIFY(reader.sendKey(0x1E, false).ok());
    QVERIFY(guest.waitForEvent(QStringLiteral("input"), 2));
    QFile maps(QStringLiteral("/proc/%1/maps").arg(reader.pid()));
    QVERIFY(maps.open(QIODevice::ReadOnly));
    int code = 0;
    for (const QByteArray& line : maps.readAll().split('\n')) {
      const QList<QByteArray> fields = line.simplified().split(' ');
      if (fields.size() < 5 || fields[1].size() < 3 || fields[1][2] != 'x')
        continue;
      ++code;
      const QByteArray name = fields.size() > 5 ? fields[5] : QByteArray();
      QVERIFY2(fields[1][1] != 'w', line.constData());
      QVERIFY2(name.startsWith('/') || name == "[vdso]" || name == "[vsyscall]", line.constData());
    }
    QVERIFY(code > 0); // the executable and its libraries were read
    reader.abort();
  }

  // While frames are held (the console's encoder is busy), only the lease asked ahead before
  // the hold is granted; after it, what the guest draws waits on the shared desktop: no lease,
  // no frame; the release brings one frame with all of it.
  void heldFramesArriveTogetherOnRelease() {
    GuestProcess guest;
    RdpReader reader;
    QSignalSpy frames(&reader, &RdpReader::frameUpdated);
    QVERIFY(startConnected(guest, reader));
    reader.setLeaseAhead(true); // SETUP: the next frame is asked for ahead
    QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 15000);
    const auto colourAt = [](const FrameUpdate& u, int x, int y) { return u.frame.pixel(x, y) & 0xFFFFFFu; };
    const auto lastShows = [&](qsizetype after, int x, int y, quint32 colour) {
      return frames.size() > after && colourAt(frames.last().first().value<FrameUpdate>(), x, y) == colour;
    };
    reader.holdFrames(true);
    const qsizetype before = frames.size();
    guest.command("{\"cmd\":\"paint\",\"x\":100,\"y\":100,\"w\":40,\"h\":30,\"color\":\"#0000ff\",\"id\":1}");
    // The lease asked ahead when the last frame was absorbed.
    QTRY_VERIFY_WITH_TIMEOUT(lastShows(before, 110, 110, 0x0000FFu), 15000);
    QVERIFY(!reader.frameWaiting());
    const qsizetype held = frames.size();
    guest.command("{\"cmd\":\"paint\",\"x\":300,\"y\":200,\"w\":40,\"h\":30,\"color\":\"#00ff00\",\"id\":2}");
    // Said after the last lease was absorbed (the socket keeps order): no frame is in flight.
    QTRY_VERIFY_WITH_TIMEOUT(reader.frameWaiting(), 15000);
    guest.command("{\"cmd\":\"paint\",\"x\":500,\"y\":400,\"w\":40,\"h\":30,\"color\":\"#ff0000\",\"id\":3}");
    QVERIFY(guest.waitForEvent(QStringLiteral("painted"), 3));
    QCOMPARE(frames.size(), held);
    QVERIFY(reader.frameWaiting());
    reader.holdFrames(false);
    const auto showsBoth = [&] {
      if (frames.size() <= held)
        return false;
      const FrameUpdate u = frames.last().first().value<FrameUpdate>();
      return colourAt(u, 310, 210) == 0x00FF00u && colourAt(u, 510, 410) == 0xFF0000u;
    };
    QTRY_VERIFY_WITH_TIMEOUT(showsBoth(), 15000);
    QCOMPARE(frames.size(), held + 1);
    QVERIFY(!reader.frameWaiting());
    reader.abort();
  }

  // The action's confirmation waits for the reader to read the guest to its end, after SETUP.
  // A lease standing then would be granted for a frame the guest draws: the reader's worker
  // would wait for its return while the reader, inside the finish, waits for the worker. Once
  // leasing ahead is off, nothing stands; the frame's FrameReady simply waits.
  void aGracefulFinishIsConfirmedThoughTheGuestDrewJustBefore_data() {
    QTest::addColumn<bool>("paint");
    QTest::newRow("a frame drawn before the finish") << true;
    QTest::newRow("nothing drawn") << false;
  }
  void aGracefulFinishIsConfirmedThoughTheGuestDrewJustBefore() {
    QFETCH(bool, paint);
    GuestProcess guest;
    RdpReader reader;
    QSignalSpy frames(&reader, &RdpReader::frameUpdated);
    QVERIFY(startConnected(guest, reader));
    reader.setLeaseAhead(true); // SETUP
    QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 15000);
    reader.setLeaseAhead(false); // the lock: the lease asked ahead is granted at the next boundary
    QTRY_VERIFY_WITH_TIMEOUT(!reader.leaseAsked(), 15000);
    if (paint) {
      guest.command(
          "{\"cmd\":\"paint\",\"x\":200,\"y\":100,\"w\":60,\"h\":40,\"color\":\"#ff00ff\",\"id\":7}");
      // No event loop from here on: the lease granted for the paint waits in the console's socket.
      while (guest.events(QStringLiteral("painted")).isEmpty() && guest.process().waitForReadyRead(15000))
        guest.poll();
      QVERIFY(!guest.events(QStringLiteral("painted")).isEmpty());
    }
    const RdpReader::Finish finish = reader.finishGracefully(std::chrono::milliseconds(10000));
    QVERIFY2(finish.confirmed, qPrintable(QStringLiteral("after %1 ms").arg(finish.elapsedMs)));
  }

  // A run longer than the window the console sends ahead: every input arrives, in order,
  // each counted once.
  void aRunOfInputsArrivesInOrderPastTheWindow() {
    GuestProcess guest;
    RdpReader reader;
    QVERIFY(startConnected(guest, reader));
    const int before = int(guest.events(QStringLiteral("input")).size());
    const int n = int(3 * RdpReader::kInputsInFlight + 5);
    std::vector<RdpReader::InputMessage> run;
    for (int i = 0; i < n; ++i)
      run.push_back(wire::Key{.scancode = quint16(0x02 + i % 0x50), .down = i % 2 == 0});
    std::vector<int> written(run.size(), -1);
    std::size_t delivered = 0;
    const Status s = reader.sendInputs(run, std::chrono::seconds(30), &delivered, written);
    QVERIFY2(s.ok(), qPrintable(s.ok() ? QString() : s.failure().toString()));
    QCOMPARE(delivered, run.size());
    QVERIFY(std::all_of(written.begin(), written.end(), [](int w) { return w == 1; }));
    QVERIFY(guest.waitForEvent(QStringLiteral("input"), before + n));
    const QList<QJsonObject> in = guest.events(QStringLiteral("input")).mid(before);
    QCOMPARE(in.size(), n);
    for (int i = 0; i < n; ++i)
      QCOMPARE(in[i].value(QStringLiteral("code")).toInt(), 0x02 + i % 0x50);
    reader.abort();
  }

  // An input the reader refuses stops its run there: what was sent behind it is not written,
  // as if each had waited for the one before; the next run goes as usual.
  void aRunStopsAtItsFirstRefusedInput() {
    GuestProcess guest;
    RdpReader reader;
    QVERIFY(startConnected(guest, reader));
    const int before = int(guest.events(QStringLiteral("input")).size());
    std::vector<RdpReader::InputMessage> run{
        wire::Key{.scancode = 0x1E, .down = true},
        wire::Key{.scancode = 0x121E, .down = true}, // no such prefix: the reader refuses it
        wire::Key{.scancode = 0x30, .down = true},
        wire::Pointer{.x = 10, .y = 20},
    };
    std::vector<int> written(run.size(), -1);
    std::size_t delivered = 0;
    const Status s = reader.sendInputs(run, std::chrono::seconds(30), &delivered, written);
    QVERIFY(!s.ok());
    QCOMPARE(s.failure().code, Refusal::InputInvalid);
    QCOMPARE(delivered, std::size_t(1));
    QCOMPARE(written[0], 1);
    // The next run starts afresh; its key is the second and last thing the guest gets.
    std::vector<RdpReader::InputMessage> next{wire::Key{.scancode = 0x1F, .down = true}};
    QVERIFY(reader.sendInputs(next, std::chrono::seconds(30), &delivered).ok());
    QCOMPARE(delivered, std::size_t(1));
    QVERIFY(guest.waitForEvent(QStringLiteral("input"), before + 2));
    // A marker after both runs: once it is in, nothing of the stopped run can still come.
    QVERIFY(reader.sendPointer(700, 500, 0, 0).ok());
    QVERIFY(guest.waitForEvent(QStringLiteral("input"), before + 3));
    const QList<QJsonObject> in = guest.events(QStringLiteral("input")).mid(before);
    QCOMPARE(in.size(), 3);
    QCOMPARE(in[0].value(QStringLiteral("code")).toInt(), 0x1E);
    QCOMPARE(in[1].value(QStringLiteral("code")).toInt(), 0x1F);
    QCOMPARE(in[2].value(QStringLiteral("x")).toInt(), 700);
    reader.abort();
  }

  void aReaderThatDiesEndsTheSession() {
    GuestProcess guest;
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
    RdpReader reader;
    QVERIFY(reader.spawn(QSize(1024, 768)).ok());
    QSignalSpy connected(&reader, &RdpReader::connected);
    QSignalSpy lost(&reader, &RdpReader::lost);
    reader.start(configFor(guest, QSize(1024, 768)), credentials());
    QVERIFY(connected.wait(30000));
    ::kill(pid_t(reader.pid()), SIGKILL);
    QVERIFY(lost.wait(10000));
    QCOMPARE(lost.first().first().value<Failure>().code, Refusal::RdpReaderFailed);
    QCOMPARE(reader.state(), RdpReader::State::Finished);
  }

  void aReaderThatBreaksTheProtocolIsKilled_data() {
    QTest::addColumn<int>("mode");
    QTest::newRow("malformed datagram") << int(wire::SelfTest::SendMalformed);
    QTest::newRow("a lease nobody asked for") << int(wire::SelfTest::SendUnaskedLease);
    QTest::newRow("damage outside the desktop") << int(wire::SelfTest::SendDamageOutside);
    QTest::newRow("a crash") << int(wire::SelfTest::Crash);
  }
  void aReaderThatBreaksTheProtocolIsKilled() {
    QFETCH(int, mode);
    GuestProcess guest;
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
    RdpReader reader;
    QVERIFY(reader.spawn(QSize(1024, 768)).ok());
    QSignalSpy connected(&reader, &RdpReader::connected);
    QSignalSpy lost(&reader, &RdpReader::lost);
    reader.start(configFor(guest, QSize(1024, 768)), credentials());
    QVERIFY(connected.wait(30000));
    const qint64 pid = reader.pid();
    QVERIFY(reader.selfTest(quint8(mode)).ok());
    QVERIFY(lost.wait(10000));
    QCOMPARE(lost.first().first().value<Failure>().code, Refusal::RdpReaderFailed);
    QVERIFY(!reader.exitDescription().isEmpty());
    QTRY_VERIFY(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid))); // gone, reaped
  }

  void refusesAMissingReaderBeforeAnythingElse() {
    RdpReader reader;
    const Status s = reader.spawn(QSize(1024, 768), QStringLiteral("/nonexistent/guest-console-rdp"));
    QVERIFY(!s.ok());
    QVERIFY(s.code() == Refusal::RdpReaderFailed || s.code() == Refusal::ResourceExhausted);
    QCOMPARE(reader.state(), RdpReader::State::Finished);
  }

  // What the process boundary costs (issue 24 point 3): the reader's spawn, its connect, a key's
  // round trip through the reader (the call returns once the reader wrote and flushed it) and
  // its arrival at the guest, and the abort. tst_rdpsession's eachSendIsOnTheWireWhenItReturns
  // prints the same send figures for the session in-process, in the same ctest run. Figures,
  // not limits: every send must reach the guest, in order.
  void reportsWhatTheProcessBoundaryCosts() {
    GuestProcess guest;
    QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--width"),
                         QStringLiteral("800"), QStringLiteral("--height"), QStringLiteral("600")}));
    const auto now = [] {
      timespec ts{};
      clock_gettime(CLOCK_MONOTONIC, &ts); // the guest's t_ns clock
      return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    };
    RdpReader reader;
    const qint64 t0 = now();
    QVERIFY(reader.spawn(QSize(800, 600)).ok());
    const double spawnMs = double(now() - t0) / 1e6;
    QSignalSpy connected(&reader, &RdpReader::connected);
    const qint64 t1 = now();
    reader.start(configFor(guest, QSize(800, 600)), credentials());
    QVERIFY(connected.wait(30000));
    const double connectMs = double(now() - t1) / 1e6;
    const int before = int(guest.events(QStringLiteral("input")).size());
    QList<double> returnUs, deliveredUs;
    constexpr int kSends = 100;
    for (int i = 0; i < kSends; ++i) {
      const qint64 sentAt = now();
      QVERIFY(reader.sendKey(0x1E, i % 2 == 0).ok());
      returnUs.append(double(now() - sentAt) / 1e3);
      QVERIFY2(guest.waitForEvent(QStringLiteral("input"), before + i + 1),
               qPrintable(QStringLiteral("send #%1 never reached the guest").arg(i)));
      const qint64 decoded =
          qint64(guest.events(QStringLiteral("input")).last().value(QStringLiteral("t_ns")).toDouble());
      deliveredUs.append(double(decoded - sentAt) / 1e3);
    }
    const qint64 t2 = now();
    reader.abort();
    const double abortMs = double(now() - t2) / 1e6;
    QCOMPARE(reader.state(), RdpReader::State::Finished);
    const auto median = [](QList<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const auto p99 = [](QList<double> v) {
      std::sort(v.begin(), v.end());
      return v[qsizetype(0.99 * double(v.size() - 1))];
    };
    qInfo("FIGURE reader_spawn_ms %.1f reader_connect_ms %.1f reader_abort_ms %.1f", spawnMs, connectMs,
          abortMs);
    qInfo("FIGURE reader_sendKey_return_us median=%.1f p99=%.1f (n=%d)", median(returnUs), p99(returnUs),
          kSends);
    qInfo("FIGURE reader_send_to_guest_decode_us median=%.1f p99=%.1f (n=%d)", median(deliveredUs),
          p99(deliveredUs), kSends);
  }
};

QTEST_GUILESS_MAIN(tst_RdpReader)
#include "tst_rdpreader.moc"
