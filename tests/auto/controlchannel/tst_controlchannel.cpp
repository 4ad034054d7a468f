#include "session/ControlChannel.h"

#include <QSignalSpy>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

using namespace gc;

namespace {

const QByteArray kSentinel = QByteArrayLiteral("S3ntinel-Pw-7f1e");

QStringList g_log;
void captureLog(QtMsgType, const QMessageLogContext&, const QString& msg) {
  g_log << msg;
}

// The console's end of two pipes; the test plays the parent.
struct Pipes {
  Pipes() {
    int a[2], b[2];
    if (::pipe2(a, O_CLOEXEC) == 0 && ::pipe2(b, O_CLOEXEC | O_NONBLOCK) == 0) {
      parentWrite = a[1];
      consoleRead = a[0];
      consoleWrite = b[1];
      parentRead = b[0];
    }
  }
  ~Pipes() {
    for (int fd : {parentWrite, consoleRead, consoleWrite, parentRead})
      if (fd >= 0)
        ::close(fd);
  }
  void write(const QByteArray& bytes) const {
    QCOMPARE(::write(parentWrite, bytes.constData(), bytes.size()), bytes.size());
  }
  QByteArray readOutput() const {
    QByteArray out;
    char buf[4096];
    for (ssize_t n; (n = ::read(parentRead, buf, sizeof buf)) > 0;)
      out.append(buf, n);
    return out;
  }
  void closeParentEnd() {
    ::close(parentWrite);
    parentWrite = -1;
  }
  int parentWrite = -1, consoleRead = -1, consoleWrite = -1, parentRead = -1;
};

} // namespace

class tst_ControlChannel : public QObject {
  Q_OBJECT
private slots:
  void init() { g_log.clear(); }

  void credentialsLandInLockedMemory_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QByteArray>("user");
    QTest::addColumn<QByteArray>("password");
    QTest::addColumn<QByteArray>("domain");
    QTest::newRow("plain") << QByteArray("{\"cmd\":\"credentials\",\"username\":\"op\",\"password\":\"" +
                                         kSentinel + "\",\"domain\":\"LAB\"}\n")
                           << QByteArray("op") << kSentinel << QByteArray("LAB");
    QTest::newRow("escapes") << QByteArray(
                                    "{\"cmd\":\"credentials\",\"username\":\"Ren\\u00e9\",\"password\":"
                                    "\"a\\\"b\\\\c\\/d\\ud83d\\ude00\",\"domain\":\"\"}\r\n")
                             << QByteArray("Ren\xc3\xa9") << QByteArray("a\"b\\c/d\xf0\x9f\x98\x80")
                             << QByteArray();
    QTest::newRow("no domain") << QByteArray(
                                      "{\"cmd\":\"credentials\",\"username\":\"u\",\"password\":\"p\"}\n")
                               << QByteArray("u") << QByteArray("p") << QByteArray();
  }
  void credentialsLandInLockedMemory() {
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, user);
    QFETCH(QByteArray, password);
    QFETCH(QByteArray, domain);
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    QVERIFY(channel.start());
    QByteArray gotUser, gotPassword, gotDomain;
    bool locked = false;
    connect(&channel, &ControlChannel::credentialsReceived, this, [&](Credentials& c) {
      gotUser = c.username.view().toByteArray();
      gotPassword = c.password.view().toByteArray();
      gotDomain = c.domain.view().toByteArray();
      locked = c.password.isLockedAndUndumpable();
    });
    auto previous = qInstallMessageHandler(captureLog);
    pipes.write(line);
    QTRY_COMPARE(gotPassword, password);
    qInstallMessageHandler(previous);
    QCOMPARE(gotUser, user);
    QCOMPARE(gotDomain, domain);
    QVERIFY(locked);
    QVERIFY(!g_log.join(QLatin1Char('\n')).contains(QString::fromUtf8(kSentinel)));
    QVERIFY(!pipes.readOutput().contains(kSentinel)); // never echoed
  }

  void routesCommands() {
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    QVERIFY(channel.start());
    QSignalSpy lock(&channel, &ControlChannel::lockRequested);
    QSignalSpy close(&channel, &ControlChannel::closeRequested);
    QSignalSpy panic(&channel, &ControlChannel::panicRequested);
    pipes.write("{\"cmd\":\"lock\"}\n{\"cmd\":\"close\"}\n");
    pipes.write("{\"cmd\":\"pan");
    pipes.write("ic\"}\n"); // split across reads
    QTRY_COMPARE(panic.count(), 1);
    QCOMPARE(lock.count(), 1);
    QCOMPARE(close.count(), 1);
  }

  void refusesBadLines_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("code");
    QTest::newRow("unknown cmd") << QByteArray("{\"cmd\":\"unlock\"}\n") << "PROTOCOL_UNKNOWN_TYPE";
    QTest::newRow("extra field on lock")
        << QByteArray("{\"cmd\":\"lock\",\"x\":\"1\"}\n") << "PROTOCOL_UNKNOWN_TYPE";
    QTest::newRow("credentials with extra")
        << QByteArray("{\"cmd\":\"credentials\",\"password\":\"" + kSentinel + "\",\"echo\":\"1\"}\n")
        << "PROTOCOL_UNKNOWN_TYPE";
    QTest::newRow("not json") << QByteArray("lock\n") << "PROTOCOL_MALFORMED";
    QTest::newRow("number value") << QByteArray("{\"cmd\":\"credentials\",\"password\":1}\n")
                                  << "PROTOCOL_MALFORMED";
    QTest::newRow("duplicate key") << QByteArray("{\"cmd\":\"lock\",\"cmd\":\"panic\"}\n")
                                   << "PROTOCOL_MALFORMED";
    QTest::newRow("nested") << QByteArray("{\"cmd\":{\"a\":\"b\"}}\n") << "PROTOCOL_MALFORMED";
    QTest::newRow("invalid utf8") << QByteArray("{\"cmd\":\"\xff\"}\n") << "PROTOCOL_MALFORMED";
    QTest::newRow("lone surrogate") << QByteArray("{\"cmd\":\"\\ud800\"}\n") << "PROTOCOL_MALFORMED";
  }
  void refusesBadLines() {
    QFETCH(QByteArray, line);
    QFETCH(QString, code);
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    QVERIFY(channel.start());
    QSignalSpy refused(&channel, &ControlChannel::refused);
    QSignalSpy creds(&channel, &ControlChannel::credentialsReceived);
    QSignalSpy panic(&channel, &ControlChannel::panicRequested);
    pipes.write(line);
    QVERIFY(refused.wait(2000));
    QCOMPARE(refusalName(refused.at(0).at(0).value<Refusal>()), code);
    QCOMPARE(creds.count(), 0);
    QCOMPARE(panic.count(), 0);
    const QByteArray out = pipes.readOutput();
    QVERIFY(out.startsWith("{\"event\":\"error\""));
    QVERIFY(out.contains(code.toLatin1()));
    QVERIFY(!out.contains(kSentinel));
  }

  void oversizeLineIsRefusedAndTheNextOneWorks() {
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    QVERIFY(channel.start());
    QSignalSpy refused(&channel, &ControlChannel::refused);
    QSignalSpy lock(&channel, &ControlChannel::lockRequested);
    const QByteArray huge(int(ControlChannel::kMaxLineBytes) * 3, 'x');
    // Feed the oversize line in pieces while the channel reads, then a good line.
    for (int off = 0; off < huge.size(); off += 4096) {
      pipes.write(huge.mid(off, 4096));
      QCoreApplication::processEvents();
    }
    pipes.write("\n{\"cmd\":\"lock\"}\n");
    QTRY_COMPARE(lock.count(), 1);
    QCOMPARE(refused.count(), 1);
    QCOMPARE(refused.at(0).at(0).value<Refusal>(), Refusal::ProtocolOversize);
  }

  void eofMeansParentGone() {
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    QVERIFY(channel.start());
    QSignalSpy gone(&channel, &ControlChannel::parentGone);
    pipes.closeParentEnd();
    QVERIFY(gone.wait(2000));
  }

  void eventsAreOneLineWithEventFirst() {
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    channel.send(QStringLiteral("phase"), QJsonObject{{QStringLiteral("phase"), QStringLiteral("SETUP")}});
    QCOMPARE(pipes.readOutput(), QByteArray("{\"event\":\"phase\",\"phase\":\"SETUP\"}\n"));
  }
};

QTEST_GUILESS_MAIN(tst_ControlChannel)
#include "tst_controlchannel.moc"
