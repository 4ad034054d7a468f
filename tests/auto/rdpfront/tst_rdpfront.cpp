// The validating fronts (issue 24): valid PDUs of a whole connection pass, and each rule
// refuses what breaks it with the PDU kind and the rule, before any parser sees it.
#include "PduBuilder.h"
#include "rdp/front/DynvcFront.h"
#include "rdp/front/PduFront.h"
#include "rdp/front/Wire.h"

#include <QDir>
#include <QFile>
#include <QtTest>

using namespace gc::front;
using namespace gc::front::build;

Q_DECLARE_METATYPE(Violation::Kind)

namespace {

QByteArray qb(const Bytes& b) {
  return QByteArray(reinterpret_cast<const char*>(b.data()), qsizetype(b.size()));
}
std::span<const uint8_t> sp(const QByteArray& b) {
  return {reinterpret_cast<const uint8_t*>(b.constData()), std::size_t(b.size())};
}
QByteArrayList qbl(const std::vector<Bytes>& list) {
  QByteArrayList out;
  for (const Bytes& b : list)
    out.append(qb(b));
  return out;
}

Limits desktop1024(bool fromServer = true) {
  Limits l;
  l.desktopWidth = 1024;
  l.desktopHeight = 768;
  l.sizeFromServer = fromServer;
  return l;
}

// Feeds `pdus` in order; the integrator's part: the static channels once they are wanted.
Checked<PduInfo> feed(PduFront& front, const QByteArrayList& pdus, int* accepted = nullptr) {
  Checked<PduInfo> last = PduInfo{};
  int ok = 0;
  for (const QByteArray& pdu : pdus) {
    if (front.wantsChannels()) {
      const uint16_t statics[] = {1004};
      front.setStaticChannels(statics);
    }
    last = front.check(sp(pdu));
    if (isViolation(last))
      break;
    ++ok;
  }
  if (accepted)
    *accepted = ok;
  return last;
}

// GC_FRONT_CORPUS_DIR=<dir>: the valid sequences are written there as fuzz seeds (2-byte
// little-endian length + PDU, repeated), the format fuzz_pdufront and fuzz_dynvc read.
void writeSeed(const char* name, const QByteArrayList& pdus) {
  const QByteArray dir = qgetenv("GC_FRONT_CORPUS_DIR");
  if (dir.isEmpty())
    return;
  QByteArray out;
  for (const QByteArray& p : pdus) {
    out.append(char(p.size() & 0xFF));
    out.append(char((p.size() >> 8) & 0xFF));
    out.append(p);
  }
  QFile f(QDir(QString::fromLocal8Bit(dir)).filePath(QString::fromLatin1(name)));
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(out);
}

} // namespace

class tst_RdpFront : public QObject {
  Q_OBJECT

private slots:
  void acceptsAWholeSessionAndTracksIt();
  void acceptsValidUpdates_data();
  void acceptsValidUpdates();
  void refusesWhatBreaksARule_data();
  void refusesWhatBreaksARule();
  void keepsRefusingAfterAViolation();
  void reportsRedirectionBeforeFreeRdpReadsIt();
  void reassemblesFragmentsWithoutCopying();
  void checksEveryDesktopSizeTheGuestNames();
  void tracksStaticChannelChunks();
  void dynvcAcceptsAGraphicsSession();
  void dynvcRefusesWhatBreaksARule_data();
  void dynvcRefusesWhatBreaksARule();
  void dynvcChecksFromTheHeadAlone();
  void readsLengthsAndConsumesNothingWhenCutShort_data();
  void readsLengthsAndConsumesNothingWhenCutShort();
};

void tst_RdpFront::acceptsAWholeSessionAndTracksIt() {
  PduFront front(desktop1024());
  const QByteArrayList pdus = qbl(connectionToActive());
  int accepted = 0;
  const auto last = feed(front, pdus, &accepted);
  QVERIFY(!isViolation(last));
  QCOMPARE(accepted, pdus.size());
  QVERIFY(front.active());
  QCOMPARE(front.desktopWidth(), 1024u);
  QCOMPARE(front.desktopHeight(), 768u);
  QVERIFY(std::get<PduInfo>(last).activated);
  writeSeed("session", pdus);
}

void tst_RdpFront::acceptsValidUpdates_data() {
  QTest::addColumn<QByteArray>("pdu");
  QTest::addColumn<int>("items");
  QTest::newRow("surface bits in a frame")
      << qb(fastPath({fpUpdate(4, 0, cat({frameMarker(0, 1), surfaceBits(0, 0, 8, 4), frameMarker(1, 1)}))}))
      << 1;
  QTest::newRow("surface bits at the desktop's corner")
      << qb(fastPath({fpUpdate(4, 0, surfaceBits(1016, 764, 1024, 768))})) << 1;
  QTest::newRow("bitmap, uncompressed and compressed")
      << qb(fastPath({fpUpdate(1, 0,
                               bitmapUpdate({bitmapRect(0, 0, 3, 3, 4, 4, 32, false),
                                             bitmapRect(1020, 764, 1023, 767, 4, 4, 16, true)}))}))
      << 1;
  QTest::newRow("pointer kinds")
      << qb(fastPath({fpUpdate(8, 0, {10, 0, 20, 0}), fpUpdate(9, 0, pointerAttribute(1, 32, 32)),
                      fpUpdate(11, 0, pointerAttribute(2, 32, 32, 32)), fpUpdate(10, 0, {2, 0}),
                      fpUpdate(5, 0, {}), fpUpdate(6, 0, {}), fpUpdate(3, 0, {})}))
      << 7;
  QTest::newRow("palette") << qb(fastPath({fpUpdate(2, 0, cat({{2, 0, 0, 0, 2, 0, 0, 0}, filled(6)}))})) << 1;
  QTest::newRow("slow-path bitmap") << qb(slowData(
                                           2, bitmapUpdate({bitmapRect(0, 0, 63, 63, 64, 64, 24, true)})))
                                    << 1;
  QTest::newRow("slow-path pointer position") << qb(slowData(27, {3, 0, 0, 0, 5, 0, 6, 0})) << 1;
  QTest::newRow("set error info") << qb(slowData(47, {0, 0, 0, 0})) << 1;
  QTest::newRow("monitor layout") << qb(slowData(55, cat({{1, 0, 0, 0}, filled(20, 0)}))) << 1;
  QTest::newRow("save session info, plain notify")
      << qb(slowData(38, cat({{2, 0, 0, 0}, filled(576, 0)}))) << 1;
  QTest::newRow("two share PDUs in one")
      << qb(sendData(1003, cat({shareData(47, {0, 0, 0, 0}), shareData(37, {})}))) << 2;
}

void tst_RdpFront::acceptsValidUpdates() {
  QFETCH(QByteArray, pdu);
  QFETCH(int, items);
  PduFront front(desktop1024());
  QByteArrayList pdus = qbl(connectionToActive());
  pdus.append(pdu);
  const auto result = feed(front, pdus);
  if (const auto* v = std::get_if<Violation>(&result))
    QFAIL(qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(v->pdu), QLatin1String(v->rule))));
  QCOMPARE(int(std::get<PduInfo>(result).items), items);
  writeSeed(QTest::currentDataTag(), pdus);
}

void tst_RdpFront::refusesWhatBreaksARule_data() {
  QTest::addColumn<QByteArrayList>("pdus"); // after the connection to an active 1024x768 session
  QTest::addColumn<Violation::Kind>("kind");
  QTest::addColumn<QString>("pdu");
  QTest::addColumn<QString>("rule");
  const auto P = Violation::Kind::Protocol;
  const auto R = Violation::Kind::Resource;
  const auto row = [](const char* name, std::vector<Bytes> pdus, Violation::Kind kind, const char* pdu,
                      const char* rule) {
    QTest::newRow(name) << qbl(pdus) << kind << QString::fromLatin1(pdu) << QString::fromLatin1(rule);
  };
  Bytes badTpkt = tpkt({0x02, 0xF0, 0x80, 0x68});
  badTpkt[3] += 1;
  row("tpkt length", {badTpkt}, P, "tpkt", "length differs from the PDU's");
  row("x224 not data", {tpkt({0x02, 0xE0, 0x80, 0x00})}, P, "x224", "TPDU code the client does not accept");
  row("mcs choice", {x224Data({0x70, 0, 0})}, P, "mcs", "MCS PDU the client does not accept");
  row("sdin per length", {x224Data({0x68, 0, 2, 0x03, 0xEB, 0x70, 0x05, 1, 2})}, P, "mcs.SendDataIndication",
      "PER length differs from the TPKT length");
  row("sdin to a channel not joined", {sendData(1010, filled(8))}, P, "mcs.SendDataIndication",
      "data on a channel the client did not join");
  Bytes shortShare = shareData(47, {0, 0, 0, 0});
  shortShare[0] += 2;
  row("share control totalLength", {sendData(1003, shortShare)}, P, "slowpath.ShareControl",
      "totalLength beyond the data or shorter than its header");
  row("bulk compression", {sendData(1003, shareData(47, {0, 0, 0, 0}, 0x21))}, P, "slowpath.ShareData",
      "compressed data without negotiated bulk compression");
  row("slow-path orders", {slowData(2, {0, 0, 0, 0})}, P, "slowpath.Orders",
      "drawing orders (the console turns them off)");
  row("client pduType2", {slowData(33, filled(8))}, P, "slowpath.ShareData",
      "a pduType2 the server does not send or the console did not negotiate");
  row("font map size", {slowData(40, filled(6))}, P, "slowpath.FontMap",
      "length differs from the PDU's fixed size");
  row("monitor count", {slowData(55, cat({{17, 0, 0, 0}, filled(340, 0)}))}, R, "slowpath.MonitorLayout",
      "monitorCount beyond the bound");
  row("save session info long",
      {slowData(38,
                cat({{1, 0, 0, 0, 1, 0, 18, 0, 0, 0}, filled(4), {53, 0, 0, 0}, filled(4), filled(558)}))},
      P, "slowpath.SaveSessionInfo", "cbDomain or cbUserName beyond the bound");
  row("demand active while active", {demandActive(1024, 768)}, P, "slowpath.DemandActive",
      "outside the capability exchange");
  row("desktop zero", {deactivateAll(), demandActive(0, 768)}, P, "slowpath.DemandActive",
      "desktop width or height is zero");
  row("desktop beyond the grant", {deactivateAll(), demandActive(2048, 768)}, R, "slowpath.DemandActive",
      "desktop larger than the grant's pixel count");
  row("two bitmap capability sets",
      {deactivateAll(), sendData(1003, shareControl(1, demandActiveBody(800, 600, 2)))}, P,
      "slowpath.DemandActive", "not exactly one bitmap capability set");
  row("fast-path orders", {fastPath({fpUpdate(0, 0, filled(4))})}, P, "fastpath.Orders",
      "drawing orders (the console turns them off)");
  row("fast-path compression", {fastPath({fpUpdate(4, 0, frameMarker(0, 1), 2)})}, P, "fastpath",
      "compression flags without negotiated bulk compression");
  row("fast-path encryption", {{0xC0, 0x04, 0x03, 0x00}}, P, "fastpath",
      "encryption flags without RDP security");
  row("fast-path length", {{0x00, 0x09, 0x03, 0x00, 0x00}}, P, "fastpath", "length differs from the PDU's");
  row("fast-path unknown code", {fastPath({fpUpdate(7, 0, {})})}, P, "fastpath.Update", "unknown updateCode");
  row("surface bits codec", {fastPath({fpUpdate(4, 0, surfaceBits(0, 0, 4, 4, 3))})}, P,
      "fastpath.SurfaceCommands", "a bitmap codec the console did not advertise");
  row("surface bits bpp", {fastPath({fpUpdate(4, 0, surfaceBits(0, 0, 4, 4, 0, 24))})}, P,
      "fastpath.SurfaceCommands", "bpp other than 32");
  row("surface bits outside", {fastPath({fpUpdate(4, 0, surfaceBits(1020, 0, 1028, 4))})}, P,
      "fastpath.SurfaceCommands", "destination rectangle outside the desktop");
  Bytes sbLength = surfaceBits(0, 0, 4, 4);
  sbLength[18] = 0x3F; // bitmapDataLength 63 instead of 64
  row("surface bits length", {fastPath({fpUpdate(4, 0, sbLength)})}, P, "fastpath.SurfaceCommands",
      "bitmapDataLength inconsistent with width and height");
  Bytes sbSize = surfaceBits(0, 0, 4, 4);
  sbSize[14] = 5; // width 5 for a 4-wide rectangle
  row("surface bits size", {fastPath({fpUpdate(4, 0, sbSize)})}, P, "fastpath.SurfaceCommands",
      "bitmap size differs from its destination rectangle");
  row("frame end without begin", {fastPath({fpUpdate(4, 0, frameMarker(1, 1))})}, P,
      "fastpath.SurfaceCommands", "frame end without a begin");
  std::vector<Bytes> nested;
  for (int i = 0; i < 17; ++i)
    nested.push_back(fastPath({fpUpdate(4, 0, frameMarker(0, uint32_t(i)))}));
  row("frames nested beyond the bound", nested, R, "fastpath.SurfaceCommands",
      "frames begun beyond the bound");
  row("bitmap outside",
      {fastPath({fpUpdate(1, 0, bitmapUpdate({bitmapRect(1020, 0, 1024, 3, 5, 4, 32, false)}))})}, P,
      "fastpath.Bitmap", "destination rectangle outside the desktop");
  row("bitmap bpp", {fastPath({fpUpdate(1, 0, bitmapUpdate({bitmapRect(0, 0, 3, 3, 4, 4, 8, false)}))})}, P,
      "fastpath.Bitmap", "bitsPerPixel the console does not decode");
  row("bitmap huge", {slowData(2, bitmapUpdate({bitmapRect(0, 0, 3, 3, 65535, 65535, 32, true)}))}, R,
      "slowpath.Bitmap", "bitmap larger than the desktop");
  Bytes shortBitmap = bitmapUpdate({bitmapRect(0, 0, 3, 3, 4, 4, 32, false)});
  shortBitmap.pop_back();
  row("bitmap data short", {fastPath({fpUpdate(1, 0, shortBitmap)})}, P, "fastpath.Bitmap",
      "the update ends before what it declared");
  Bytes badComp = bitmapUpdate({bitmapRect(0, 0, 3, 3, 4, 4, 32, true)});
  badComp[24] = 21; // cbCompMainBodySize
  row("bitmap compression header", {fastPath({fpUpdate(1, 0, badComp)})}, P, "fastpath.Bitmap",
      "cbCompMainBodySize inconsistent with bitmapLength");
  row("palette colours", {fastPath({fpUpdate(2, 0, cat({{2, 0, 0, 0, 0x01, 0x01, 0, 0}, filled(771)}))})}, P,
      "fastpath.Palette", "numberColors beyond 256");
  row("pointer too large", {fastPath({fpUpdate(11, 0, pointerAttribute(0, 385, 1, 32))})}, R,
      "fastpath.PointerNew", "pointer larger than the bound");
  row("pointer cache index", {fastPath({fpUpdate(10, 0, {32, 0})})}, R, "fastpath.PointerCached",
      "pointer cache index beyond the cache");
  row("pointer xor length", {fastPath({fpUpdate(9, 0, pointerAttribute(0, 16, 16, 0, 2))})}, P,
      "fastpath.PointerColor", "lengthXorMask differs from what width, height and xorBpp imply");
  row("pointer position data", {fastPath({fpUpdate(8, 0, {1, 0, 2, 0, 3})})}, P, "fastpath.PointerPosition",
      "data after the end of the update");
  row("slow-path system pointer", {slowData(27, {1, 0, 0, 0, 1, 0, 0, 0})}, P, "slowpath.Pointer",
      "unknown systemPointerType");
  row("fragment without first", {fastPath({fpUpdate(4, 1, frameMarker(0, 1))})}, P,
      "fastpath.SurfaceCommands", "a fragment without a first");
  row("fragments interleaved", {fastPath({fpUpdate(4, 2, {0x01})}), fastPath({fpUpdate(1, 1, {0x01})})}, P,
      "fastpath.Bitmap", "fragments of two updates interleaved");
  row("single inside fragmented", {fastPath({fpUpdate(4, 2, {0x01})}), fastPath({fpUpdate(3, 0, {})})}, P,
      "fastpath.Synchronize", "a whole update inside a fragmented one");
  row("channel compressed", {channelChunk(1004, 4, 0x00200003, filled(4))}, P, "channel.Chunk",
      "compressed without negotiated channel compression");
  row("channel total beyond the bound", {channelChunk(1004, (32u << 20) + 1, 0x1, filled(16))}, R,
      "channel.Chunk", "declared message length beyond the bound");
  row("channel chunk beyond total",
      {channelChunk(1004, 20, 0x1, filled(16)), channelChunk(1004, 20, 0x2, filled(8))}, P, "channel.Chunk",
      "chunks beyond the declared length");
  row("channel chunk without first", {channelChunk(1004, 20, 0x2, filled(8))}, P, "channel.Chunk",
      "a chunk without a first");
  row("channel first twice", {channelChunk(1004, 20, 0x1, filled(8)), channelChunk(1004, 20, 0x1, filled(8))},
      P, "channel.Chunk", "a new message before the last one ended");
  row("message channel not negotiated", {sendData(1005, {0x02, 0, 0, 0, 1, 2, 3})}, P, "mcs.MessageChannel",
      "a message-channel PDU the console did not negotiate");
  row("confirm after activation", {connectionConfirm()}, P, "x224.ConnectionConfirm",
      "after the MCS connection");
  row("attach user after licensing", {attachUserConfirm()}, P, "mcs.AttachUserConfirm",
      "after the channels were joined");
}

void tst_RdpFront::refusesWhatBreaksARule() {
  QFETCH(QByteArrayList, pdus);
  QFETCH(Violation::Kind, kind);
  QFETCH(QString, pdu);
  QFETCH(QString, rule);
  PduFront front(desktop1024());
  const QByteArrayList prefix = qbl(connectionToActive());
  int accepted = 0;
  const auto result = feed(front, prefix + pdus, &accepted);
  QVERIFY2(isViolation(result), "accepted");
  const Violation v = std::get<Violation>(result);
  QCOMPARE(QLatin1String(v.pdu), pdu);
  QCOMPARE(QLatin1String(v.rule), rule);
  QCOMPARE(v.kind, kind);
  // Refused at the last PDU of the row, not earlier.
  QCOMPARE(accepted, prefix.size() + pdus.size() - 1);
}

void tst_RdpFront::keepsRefusingAfterAViolation() {
  PduFront front(desktop1024());
  QByteArrayList pdus = qbl(connectionToActive());
  pdus.append(qb(fastPath({fpUpdate(0, 0, filled(4))})));
  QVERIFY(isViolation(feed(front, pdus)));
  const auto again = front.check(sp(qb(synchronize())));
  QVERIFY(isViolation(again));
  QCOMPARE(QLatin1String(std::get<Violation>(again).pdu), QLatin1String("fastpath.Orders"));
}

void tst_RdpFront::reportsRedirectionBeforeFreeRdpReadsIt() {
  // Enhanced-security form (share control pduType 10), while active and before the Demand
  // Active: reported as a redirection, never parsed.
  for (bool active : {true, false}) {
    PduFront front(desktop1024());
    auto prefix = connectionToActive();
    if (!active)
      prefix.resize(10); // through the license
    QByteArrayList pdus = qbl(prefix);
    pdus.append(qb(sendData(
        1003,
        shareControl(10, cat({{0, 0, 0x00, 0x04, 50, 0, 1, 0, 0, 0, 0x0D, 0x01, 0, 0}, filled(36, 0xEE)})))));
    const auto result = feed(front, pdus);
    QVERIFY(!isViolation(result));
    QVERIFY(std::get<PduInfo>(result).redirection);
    QCOMPARE(std::get<PduInfo>(result).redirectionFlags, 0x10Du);
    QCOMPARE(std::get<PduInfo>(result).kind, PduInfo::Kind::ServerRedirection);
  }
}

void tst_RdpFront::reassemblesFragmentsWithoutCopying() {
  // One 64x64 surface bits update split over three fast-path PDUs (as the test guest sends
  // its 64 KiB bands): accepted; the same with the LAST fragment one byte short: refused.
  const Bytes update = cat({frameMarker(0, 7), surfaceBits(0, 0, 64, 64), frameMarker(1, 7)});
  const std::size_t third = update.size() / 3;
  const Bytes a(update.begin(), update.begin() + std::ptrdiff_t(third));
  const Bytes b(update.begin() + std::ptrdiff_t(third), update.begin() + std::ptrdiff_t(2 * third));
  const Bytes c(update.begin() + std::ptrdiff_t(2 * third), update.end());
  const Bytes cShort(c.begin(), c.end() - 1);
  for (bool whole : {true, false}) {
    PduFront front(desktop1024());
    QByteArrayList pdus = qbl(connectionToActive());
    pdus << qb(fastPath({fpUpdate(4, 2, a)})) << qb(fastPath({fpUpdate(4, 3, b)}))
         << qb(fastPath({fpUpdate(4, 1, whole ? c : cShort)}));
    const auto result = feed(front, pdus);
    QCOMPARE(isViolation(result), !whole);
    QVERIFY(!front.reassembling());
    if (whole) {
      QCOMPARE(front.framesOpen(), 0u);
      writeSeed("fragments", pdus);
    } else {
      QCOMPARE(QLatin1String(std::get<Violation>(result).rule),
               QLatin1String("the update ends before what it declared"));
    }
  }
  // The reassembly bound counts every fragment.
  Limits small = desktop1024();
  small.maxFastPathReassemblyBytes = uint32_t(a.size() + b.size());
  PduFront front(small);
  QByteArrayList pdus = qbl(connectionToActive());
  pdus << qb(fastPath({fpUpdate(4, 2, a)})) << qb(fastPath({fpUpdate(4, 3, b)}))
       << qb(fastPath({fpUpdate(4, 1, c)}));
  const auto result = feed(front, pdus);
  QVERIFY(isViolation(result));
  QCOMPARE(std::get<Violation>(result).kind, Violation::Kind::Resource);
}

void tst_RdpFront::checksEveryDesktopSizeTheGuestNames() {
  // size_from grant: exactly the grant's; a flip to 1x1 and back is caught at the 1x1.
  PduFront grant(desktop1024(false));
  QByteArrayList pdus = qbl(connectionToActive());
  pdus << qb(deactivateAll()) << qb(demandActive(1, 1)) << qb(deactivateAll()) << qb(demandActive(1024, 768));
  int accepted = 0;
  const auto result = feed(grant, pdus, &accepted);
  QVERIFY(isViolation(result));
  QCOMPARE(QLatin1String(std::get<Violation>(result).rule),
           QLatin1String("desktop size differs from the grant's"));
  QCOMPARE(accepted, pdus.size() - 3);
  // size_from server: within the grant's pixels, each side at most kMaxSide.
  PduFront server(desktop1024(true));
  QByteArrayList resize = qbl(connectionToActive());
  resize << qb(deactivateAll()) << qb(demandActive(800, 600));
  const auto ok = feed(server, resize);
  QVERIFY(!isViolation(ok));
  QVERIFY(std::get<PduInfo>(ok).demandActive);
  QCOMPARE(std::get<PduInfo>(ok).desktopWidth, uint16_t(800));
  QCOMPARE(server.desktopWidth(), 800u);
  // Updates are judged against the new size.
  QVERIFY(isViolation(server.check(sp(qb(fastPath({fpUpdate(4, 0, surfaceBits(796, 0, 804, 4))}))))));
  writeSeed("resize", resize);
}

void tst_RdpFront::tracksStaticChannelChunks() {
  PduFront front(desktop1024());
  QByteArrayList pdus = qbl(connectionToActive());
  pdus << qb(channelChunk(1004, 20, 0x1, filled(8))) << qb(channelChunk(1004, 20, 0x0, filled(4)))
       << qb(channelChunk(1004, 20, 0x2, filled(8))) << qb(channelChunk(1004, 3, 0x3, filled(3)));
  int accepted = 0;
  const auto last = feed(front, pdus, &accepted);
  QVERIFY(!isViolation(last));
  QCOMPARE(accepted, pdus.size());
  const PduInfo info = std::get<PduInfo>(last);
  QCOMPARE(info.kind, PduInfo::Kind::ChannelData);
  QCOMPARE(info.channelId, uint16_t(1004));
  QCOMPARE(info.chunkLength, 3u);
  QCOMPARE(info.channelTotal, 3u);
  // The chunk is where the info says: the last 3 bytes of the PDU.
  QCOMPARE(std::size_t(info.chunkOffset + info.chunkLength), std::size_t(pdus.last().size()));
  writeSeed("channel", pdus);
}

void tst_RdpFront::dynvcAcceptsAGraphicsSession() {
  DynvcFront front(desktop1024());
  const std::vector<Bytes> messages = {dvcCaps(3),
                                       dvcCreate(3, "Microsoft::Windows::RDS::Graphics"),
                                       dvcCreate(4, "CLIPRDR\x01"),
                                       dvcDataFirst(3, 3000, 1590),
                                       dvcData(3, 1410),
                                       dvcData(3, 100),
                                       dvcClose(3),
                                       dvcCreate(5, "Microsoft::Windows::RDS::Graphics")};
  std::vector<DynvcInfo> infos;
  QStringList names;
  for (const Bytes& m : messages) {
    const auto r = front.check(m);
    if (const auto* v = std::get_if<Violation>(&r))
      QFAIL(qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(v->pdu), QLatin1String(v->rule))));
    infos.push_back(std::get<DynvcInfo>(r));
    names.append(QString::fromLatin1(infos.back().name)); // valid until the next check
  }
  QCOMPARE(infos[0].capsVersion, uint16_t(3));
  QVERIFY(infos[1].graphics);
  QVERIFY(!infos[2].graphics);
  QCOMPARE(names[2], QStringLiteral("CLIPRDR?")); // printable ASCII only
  QCOMPARE(names[1], QStringLiteral("Microsoft::Windows::RDS::Graphics"));
  QVERIFY(!infos[3].complete);
  QVERIFY(infos[4].complete);
  QVERIFY(infos[5].complete); // a whole message in one DATA
  QVERIFY(infos[6].graphics);
  QVERIFY(front.graphicsOpen());
  QCOMPARE(front.graphicsChannel(), 5u);
  QByteArrayList seed;
  for (const Bytes& m : messages)
    seed << qb(m);
  writeSeed("dynvc-session", seed);
}

void tst_RdpFront::dynvcRefusesWhatBreaksARule_data() {
  QTest::addColumn<QByteArrayList>("messages");
  QTest::addColumn<Violation::Kind>("kind");
  QTest::addColumn<QString>("pdu");
  QTest::addColumn<QString>("rule");
  const auto P = Violation::Kind::Protocol;
  const auto R = Violation::Kind::Resource;
  const Bytes gfx = dvcCreate(3, "Microsoft::Windows::RDS::Graphics");
  const auto row = [](const char* name, std::vector<Bytes> m, Violation::Kind kind, const char* pdu,
                      const char* rule) {
    QTest::newRow(name) << qbl(m) << kind << QString::fromLatin1(pdu) << QString::fromLatin1(rule);
  };
  row("caps version", {dvcCaps(4)}, P, "drdynvc.Caps", "version other than 1, 2 or 3");
  row("second graphics channel", {gfx, dvcCreate(4, "Microsoft::Windows::RDS::Graphics")}, R,
      "drdynvc.Create", "a second graphics channel while one is open");
  row("name without NUL", {Bytes{0x10, 3, 'a', 'b'}}, P, "drdynvc.Create",
      "ChannelName not NUL-terminated within the message");
  row("name beyond the bound", {cat({{0x10, 3}, filled(1400, 'a'), {0}})}, P, "drdynvc.Create",
      "ChannelName longer than the bound");
  row("channel id width", {Bytes{0x13, 3, 0, 0, 0, 'a', 0}}, P, "drdynvc.Create",
      "ChannelId width invalid or beyond the message");
  row("data first beyond the bound", {gfx, dvcDataFirst(3, (32u << 20) + 1, 100)}, R, "drdynvc.DataFirst",
      "declared length beyond the bound");
  row("data first 4 GiB", {gfx, dvcDataFirst(3, 0xFFFFFFFF, 100)}, R, "drdynvc.DataFirst",
      "declared length beyond the bound");
  row("data first shorter than carried", {gfx, dvcDataFirst(3, 10, 100)}, P, "drdynvc.DataFirst",
      "declared length shorter than the data carried");
  row("data beyond declared", {gfx, dvcDataFirst(3, 200, 100), dvcData(3, 101)}, P, "drdynvc.Data",
      "data beyond the declared length");
  row("data first twice", {gfx, dvcDataFirst(3, 200, 100), dvcDataFirst(3, 200, 100)}, P, "drdynvc.DataFirst",
      "a new message before the last one was complete");
  row("data to a refused channel", {dvcCreate(4, "CLIPRDR"), dvcData(4, 10)}, P, "drdynvc.Data",
      "data for a channel that is not open");
  row("compressed first", {gfx, Bytes{0x60, 3, 10, 1, 2}}, P, "drdynvc.DataFirstCompressed",
      "compressed data without negotiated compression");
  row("compressed data", {gfx, Bytes{0x70, 3, 1, 2}}, P, "drdynvc.DataCompressed",
      "compressed data without negotiated compression");
  row("soft sync tunnels", {Bytes{0x80, 0, 12, 0, 0, 0, 0, 0, 3, 0}}, P, "drdynvc.SoftSyncRequest",
      "Length differs from the message's");
  row("soft sync response", {Bytes{0x90, 0}}, P, "drdynvc", "a command the server does not send");
}

void tst_RdpFront::dynvcRefusesWhatBreaksARule() {
  QFETCH(QByteArrayList, messages);
  QFETCH(Violation::Kind, kind);
  QFETCH(QString, pdu);
  QFETCH(QString, rule);
  DynvcFront front(desktop1024());
  Checked<DynvcInfo> last = DynvcInfo{};
  int accepted = 0;
  for (const QByteArray& m : messages) {
    last = front.check(sp(m));
    if (isViolation(last))
      break;
    ++accepted;
  }
  QVERIFY2(isViolation(last), "accepted");
  QCOMPARE(accepted, messages.size() - 1);
  const Violation v = std::get<Violation>(last);
  QCOMPARE(QLatin1String(v.pdu), pdu);
  QCOMPARE(QLatin1String(v.rule), rule);
  QCOMPARE(v.kind, kind);
}

void tst_RdpFront::dynvcChecksFromTheHeadAlone() {
  // The integrator keeps a message's head only: a 1 MiB DATA_FIRST is judged by its first
  // bytes and its total, exactly as the whole message is.
  const Bytes whole = dvcDataFirst(3, 2u << 20, 1u << 20);
  for (bool headOnly : {false, true}) {
    DynvcFront front(desktop1024());
    QVERIFY(!isViolation(front.check(dvcCreate(3, "Microsoft::Windows::RDS::Graphics"))));
    const std::span<const uint8_t> all(whole);
    const auto r =
        headOnly ? front.checkHead(all.first(DynvcFront::kMaxHeadBytes), whole.size()) : front.check(all);
    QVERIFY(!isViolation(r));
    QCOMPARE(std::get<DynvcInfo>(r).declaredLength, 2u << 20);
    QCOMPARE(std::get<DynvcInfo>(r).carried, uint32_t(whole.size() - 6));
  }
}

QTEST_APPLESS_MAIN(tst_RdpFront)
// Every Wire read consumes nothing when its bytes are not all there, so a caller can refuse
// with the cursor where the field began; the two-byte lengths are where that is easy to break.
void tst_RdpFront::readsLengthsAndConsumesNothingWhenCutShort_data() {
  QTest::addColumn<bool>("per");
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<bool>("ok");
  QTest::addColumn<qulonglong>("value");
  QTest::addColumn<qulonglong>("consumed");
  QTest::newRow("PER short") << true << QByteArray::fromHex("7f00") << true << 0x7fULL << 1ULL;
  QTest::newRow("PER long") << true << QByteArray::fromHex("8123") << true << 0x123ULL << 2ULL;
  QTest::newRow("PER long, cut") << true << QByteArray::fromHex("81") << false << 0ULL << 0ULL;
  QTest::newRow("PER empty") << true << QByteArray() << false << 0ULL << 0ULL;
  QTest::newRow("BER short") << false << QByteArray::fromHex("05") << true << 5ULL << 1ULL;
  QTest::newRow("BER 0x81") << false << QByteArray::fromHex("81ff") << true << 0xffULL << 2ULL;
  QTest::newRow("BER 0x82") << false << QByteArray::fromHex("82010203") << true << 0x102ULL << 3ULL;
  QTest::newRow("BER 0x82, cut") << false << QByteArray::fromHex("8201") << false << 0ULL << 0ULL;
  QTest::newRow("BER indefinite") << false << QByteArray::fromHex("8000") << false << 0ULL << 0ULL;
  QTest::newRow("BER 0x83") << false << QByteArray::fromHex("83010203") << false << 0ULL << 0ULL;
}

void tst_RdpFront::readsLengthsAndConsumesNothingWhenCutShort() {
  QFETCH(bool, per);
  QFETCH(QByteArray, bytes);
  QFETCH(bool, ok);
  QFETCH(qulonglong, value);
  QFETCH(qulonglong, consumed);
  gc::front::Wire wire(std::span(reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(bytes.size())));
  std::size_t got = 0;
  if (per) {
    uint16_t v = 0;
    QCOMPARE(wire.perLength(v), ok);
    got = v;
  } else {
    QCOMPARE(wire.berLength(got), ok);
  }
  QCOMPARE(qulonglong(wire.position()), consumed);
  if (ok)
    QCOMPARE(qulonglong(got), value);
}

#include "tst_rdpfront.moc"
