// ReaderWire: the one wire format between the console and its RDP reader (issue 24 point 3:
// every message from the reader is untrusted; issue 28: one reader and one writer per wire).
#include "readerwire/ReaderSocket.h"
#include "readerwire/ReaderWire.h"

#include <QTest>
#include <QtEndian>

#include <unistd.h>

using namespace gc;
using namespace gc::wire;

namespace {

template <typename M> M roundTrip(const M& message) {
  const QByteArray datagram = encode(FromReader(message));
  const Outcome<FromReader> decoded = decodeFromReader(datagram);
  if (!decoded.ok())
    qFatal("%s", qPrintable(decoded.failure().toString()));
  return std::get<M>(decoded.value());
}

QByteArray datagramOf(Type type, QByteArray body) {
  char t[2];
  qToLittleEndian(quint16(type), t);
  return QByteArray(t, 2) + body;
}

} // namespace

class tst_ReaderWire : public QObject {
  Q_OBJECT
private slots:
  // A run crosses in one call (more datagrams than one sendmmsg takes, too), and each
  // datagram still arrives alone, whole and in order: the reader decodes them one by one.
  void aBatchArrivesAsItsDatagramsInOrder() {
    const Outcome<ReaderSocket::Pair> pair = ReaderSocket::pair();
    QVERIFY(pair.ok());
    QList<QByteArray> sent;
    for (int i = 0; i < 150; ++i) {
      InputDone done;
      done.id = quint32(1000 + i);
      done.written = quint32(i % 3);
      done.ok = true;
      sent.append(encode(FromReader(done)));
    }
    QVERIFY(
        ReaderSocket::sendAll(pair->reader, std::span<const QByteArray>(sent.constData(), sent.size())).ok());
    static ReaderSocket::Buffer buffer;
    for (int i = 0; i < sent.size(); ++i) {
      int fd = -1;
      QCOMPARE(ReaderSocket::receive(pair->console, buffer, fd, true), ReaderSocket::Received::Datagram);
      QCOMPARE(fd, -1);
      QCOMPARE(buffer.view(), QByteArrayView(sent[i]));
      const Outcome<FromReader> decoded = decodeFromReader(buffer.view());
      QVERIFY(decoded.ok());
      QCOMPARE(std::get<InputDone>(decoded.value()).id, quint32(1000 + i));
    }
    int fd = -1;
    QCOMPARE(ReaderSocket::receive(pair->console, buffer, fd, true), ReaderSocket::Received::WouldBlock);
    ::close(pair->console);
    QVERIFY(!ReaderSocket::sendAll(pair->reader, std::span<const QByteArray>(sent.constData(), 1)).ok());
    ::close(pair->reader);
  }

  void everyReaderMessageSurvivesTheWire() {
    Leased leased;
    leased.serial = 7;
    leased.size = QSize(1920, 1080);
    leased.resized = true;
    leased.moves = {SurfaceMove{QRect(0, 10, 100, 50), QPoint(0, 0)}};
    leased.damage = {QRect(1, 2, 3, 4), QRect(100, 200, 300, 400)};
    const Leased l = roundTrip(leased);
    QCOMPARE(l.serial, 7u);
    QCOMPARE(l.size, QSize(1920, 1080));
    QVERIFY(l.resized);
    QCOMPARE(l.moves, leased.moves);
    QCOMPARE(l.damage, leased.damage);

    Connected connected;
    connected.desktop = QSize(1024, 768);
    connected.security = QStringLiteral("nla");
    connected.trace.certificateAccepted = true;
    connected.trace.pdusAfterCertificate = 12;
    connected.residue.copiesWiped = 3;
    connected.residue.copiesByNeedle[2] = 5;
    connected.channels.staticRequested = {QStringLiteral("drdynvc")};
    connected.channels.refused.insert(QStringLiteral("AUDIO_INPUT"), 2);
    connected.channels.gfxCommands.insert(QStringLiteral("SolidFill"), 7);
    connected.inputCaps = kInputCapUnicode | kInputCapExtendedMouse;
    const Connected c = roundTrip(connected);
    QCOMPARE(c.inputCaps, kInputCapUnicode | kInputCapExtendedMouse);
    QCOMPARE(c.desktop, QSize(1024, 768));
    QCOMPARE(c.security, QStringLiteral("nla"));
    QVERIFY(c.trace.certificateAccepted);
    QCOMPARE(c.trace.pdusAfterCertificate, 12);
    QCOMPARE(c.residue.copiesByNeedle[2], 5);
    QCOMPARE(c.channels.refused.value(QStringLiteral("AUDIO_INPUT")), 2);
    QCOMPARE(c.channels.gfxCommands.value(QStringLiteral("SolidFill")), 7);

    Lost lost;
    lost.failure = Failure{Refusal::RdpProtocolViolation, QStringLiteral("why")};
    lost.violation = ProtocolViolation{Refusal::RdpResourceLimit, QStringLiteral("rdpgfx.CreateSurface"),
                                       QStringLiteral("beyond the pixel budget"), QSize(640, 480)};
    const Lost back = roundTrip(lost);
    QCOMPARE(back.failure.code, Refusal::RdpProtocolViolation);
    QCOMPARE(back.violation.code, Refusal::RdpResourceLimit);
    QCOMPARE(back.violation.rule, QStringLiteral("beyond the pixel budget"));
    QCOMPARE(back.violation.desktop, QSize(640, 480));

    SyncDone sync;
    sync.ok = true;
    sync.result.answered = true;
    sync.result.confirmedBy = SyncConfirmation::RefreshRect;
    sync.result.answerMs = 42;
    const SyncDone s = roundTrip(sync);
    QVERIFY(s.result.answered);
    QCOMPARE(s.result.confirmedBy, SyncConfirmation::RefreshRect);
    QCOMPARE(s.result.answerMs, 42);
  }

  // Every rung of the lock's ladder, and the rung sets, cross the wire as they are; a
  // confirmation byte beyond the known ones is refused, not mapped onto one.
  void syncConfirmationsSurviveTheWire_data() {
    QTest::addColumn<int>("confirmation");
    QTest::addColumn<QString>("name");
    QTest::newRow("settle_only") << int(SyncConfirmation::SettleOnly) << "settle_only";
    QTest::newRow("refresh_rect") << int(SyncConfirmation::RefreshRect) << "refresh_rect";
    QTest::newRow("suppress_output") << int(SyncConfirmation::SuppressOutput) << "suppress_output";
    QTest::newRow("gfx_caps") << int(SyncConfirmation::GfxCaps) << "gfx_caps";
  }
  void syncConfirmationsSurviveTheWire() {
    QFETCH(int, confirmation);
    QFETCH(QString, name);
    SyncDone sync;
    sync.ok = true;
    sync.result.confirmedBy = SyncConfirmation(confirmation);
    sync.result.rungsOffered = 0x07;
    sync.result.rungsAsked = 0x06;
    sync.result.rungsSkipped = 0x01;
    const SyncDone s = roundTrip(sync);
    QCOMPARE(syncConfirmationName(s.result.confirmedBy), name);
    QCOMPARE(s.result.rungsOffered, quint8(0x07));
    QCOMPARE(s.result.rungsAsked, quint8(0x06));
    QCOMPARE(s.result.rungsSkipped, quint8(0x01));
  }
  void refusesAnUnknownSyncConfirmation() {
    SyncDone sync;
    sync.ok = true;
    sync.result.confirmedBy = SyncConfirmation::GfxCaps;
    sync.result.answerMs = 0x0102030405060708; // the confirmation is the byte before it
    QByteArray datagram = encode(FromReader(sync));
    const QByteArray answer("\x08\x07\x06\x05\x04\x03\x02\x01", 8);
    const qsizetype at = datagram.indexOf(answer);
    QVERIFY(at > 0);
    QCOMPARE(quint8(datagram[at - 1]), quint8(SyncConfirmation::GfxCaps));
    QVERIFY(decodeFromReader(datagram).ok());
    datagram[at - 1] = char(4);
    const Outcome<FromReader> decoded = decodeFromReader(datagram);
    QVERIFY(!decoded.ok());
    QVERIFY2(decoded.failure().message.contains(QStringLiteral("unknown confirmation")),
             qPrintable(decoded.failure().message));
  }

  // Issue 25: the action's Unicode code units and horizontal wheel reach the reader intact.
  void actionInputSurvivesTheWire() {
    Unicode unicode;
    unicode.id = 9;
    unicode.codeUnit = 0xD83D;
    unicode.down = true;
    const Outcome<ToReader> u = decodeToReader(encode(ToReader(unicode)));
    QVERIFY(u.ok());
    QCOMPARE(std::get<Unicode>(u.value()).codeUnit, quint16(0xD83D));
    QVERIFY(std::get<Unicode>(u.value()).down);
    Pointer pointer;
    pointer.id = 10;
    pointer.buttons = 0x10;
    pointer.wheel = -120;
    pointer.horizontal = true;
    const Outcome<ToReader> p = decodeToReader(encode(ToReader(pointer)));
    QVERIFY(p.ok());
    QVERIFY(std::get<Pointer>(p.value()).horizontal);
    QCOMPARE(std::get<Pointer>(p.value()).buttons, quint8(0x10));
    // A truncated Unicode message is refused, not guessed.
    QVERIFY(!decodeToReader(encode(ToReader(unicode)).chopped(1)).ok());
  }

  void theStartCarriesCredentialsIntoLockedMemory() {
    Start start;
    start.config.host = QStringLiteral("127.0.0.1");
    start.config.port = 3389;
    start.config.pinSha256 = QByteArray(32, 'p');
    start.config.desktop.width = 1920;
    start.credentials.username = SecureBuffer::copyOf("user").value();
    start.credentials.password = SecureBuffer::copyOf("pass word").value();
    QByteArray datagram = encode(ToReader(std::move(start)));
    const Outcome<ToReader> decoded = decodeToReader(datagram);
    QVERIFY(decoded.ok());
    const auto& s = std::get<Start>(decoded.value());
    QCOMPARE(s.config.port, quint16(3389));
    QCOMPARE(s.config.desktop.width, 1920u);
    QCOMPARE(s.credentials.password.view(), QByteArrayView("pass word"));
    QVERIFY(s.credentials.password.isLockedAndUndumpable());
  }

  // Issue 27: the console paces the guest's frames through the reader.
  void thePacingMessagesSurviveTheWire() {
    for (const PacingMode mode : {PacingMode::Unpaced, PacingMode::NoPanel, PacingMode::Panel}) {
      const Outcome<ToReader> decoded = decodeToReader(encode(ToReader(Pacing{mode})));
      QVERIFY(decoded.ok());
      QCOMPARE(std::get<Pacing>(decoded.value()).mode, mode);
    }
    const Outcome<ToReader> presented = decodeToReader(encode(ToReader(Presented{0x1234567890ull})));
    QVERIFY(presented.ok());
    QCOMPARE(std::get<Presented>(presented.value()).upto, 0x1234567890ull);
  }
  // The console takes the reader's account of the channels only when it is one the reader
  // could have written: our command names, bounded, no negative count.
  void refusesAChannelAccountTheReaderCouldNotHaveWritten() {
    ChannelSnapshot good;
    good.gfxCommands.insert(QStringLiteral("SolidFill"), 3);
    QVERIFY(good.wellFormed());
    ChannelSnapshot negative = good;
    negative.gfxCommands.insert(QStringLiteral("CacheToSurface"), -1);
    QVERIFY(!negative.wellFormed());
    ChannelSnapshot tooMany;
    for (int i = 0; i <= ChannelSnapshot::kMaxGfxCommands; ++i)
      tooMany.gfxCommands.insert(QStringLiteral("Command%1").arg(i), 1);
    QVERIFY(!tooMany.wellFormed());
    ChannelSnapshot unprintable;
    unprintable.gfxCommands.insert(QStringLiteral("Solid\nFill"), 1);
    QVERIFY(!unprintable.wellFormed());
  }

  void refusesAnUnknownPacingMode() {
    const Outcome<ToReader> decoded = decodeToReader(datagramOf(Type::Pacing, QByteArray(1, '\x03')));
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.code(), Refusal::RdpReaderFailed);
    QVERIFY(!decodeToReader(datagramOf(Type::Presented, QByteArray(7, '\0'))).ok()); // short
  }

  void refusesWhatIsNotAMessage_data() {
    QTest::addColumn<QByteArray>("datagram");
    const QByteArray frameReady = encode(FromReader(FrameReady{}));
    QByteArray leased = encode(FromReader(Leased{}));
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("one byte") << QByteArray(1, '\x01');
    QTest::newRow("unknown type") << datagramOf(Type(0x7777), {});
    QTest::newRow("a console message from the reader") << encode(ToReader(Lease{}));
    QTest::newRow("trailing bytes") << frameReady + QByteArray(1, '\0');
    QTest::newRow("truncated") << leased.left(leased.size() - 1);
    QTest::newRow("oversize") << datagramOf(Type::FrameReady, QByteArray(kMaxMessage, '\0'));
    // Resized{size}: then a QSize; a rectangle list with a count beyond its bound:
    QByteArray body;
    body += QByteArray(8, '\0');                               // serial
    body += QByteArray("\x10\x00\x00\x00\x10\x00\x00\x00", 8); // 16x16
    body += QByteArray(1, '\0');                               // resized
    body += QByteArray(4, '\0');                               // no moves
    body += QByteArray("\x01\x04\x00\x00", 4);                 // 1025 rectangles
    QTest::newRow("too many rectangles") << datagramOf(Type::Leased, body);
    QByteArray negative = QByteArray(8, '\0') + QByteArray("\x10\x00\x00\x00\x10\x00\x00\x00", 8) +
                          QByteArray(1, '\0') + QByteArray(4, '\0') + QByteArray("\x01\x00\x00\x00", 4) +
                          QByteArray("\xff\xff\xff\xff\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00", 16);
    QTest::newRow("a rectangle at -1") << datagramOf(Type::Leased, negative);
    // fuzz_readerwire found it: a rectangle whose x + width overflows int was built before it
    // was refused (UBSan in QRect). Refused without building it.
    QByteArray overflow = QByteArray(8, '\0') + QByteArray("\x10\x00\x00\x00\x10\x00\x00\x00", 8) +
                          QByteArray(1, '\0') + QByteArray(4, '\0') + QByteArray("\x01\x00\x00\x00", 4) +
                          QByteArray("\x00\x00\x00\x68\x00\x00\x00\x00\x68\x6a\x68\x68\x01\x00\x00\x00", 16);
    QTest::newRow("a rectangle whose right edge overflows") << datagramOf(Type::Leased, overflow);
    QByteArray failed;
    failed += QByteArray("\x05\x00\x00\x00", 4) + "NOPE!"; // a refusal code that does not exist
    QTest::newRow("an unknown refusal code") << datagramOf(Type::Failed, failed);
    QTest::newRow("a boolean that is 2") << datagramOf(Type::Closed, QByteArray(1, '\x02'));
    QByteArray badUtf8 = QByteArray(1, '\x01') /* ok */ + QByteArray("\x02\x00\x00\x00", 4) + "\xc3\x28";
    QTest::newRow("a string that is not UTF-8")
        << datagramOf(Type::Connected, QByteArray(8, '\x01') + badUtf8);
  }
  void refusesWhatIsNotAMessage() {
    QFETCH(QByteArray, datagram);
    const Outcome<FromReader> decoded = decodeFromReader(datagram);
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.code(), Refusal::RdpReaderFailed);
  }
};

QTEST_GUILESS_MAIN(tst_ReaderWire)
#include "tst_readerwire.moc"
