// The console <-> relay messages: every message survives the one field list both ends use,
// and a line that is not exactly one of them is refused, whichever end reads it.
#include "relay/RelayProtocol.h"
#include "relay/RelayWire.h"

#include <QJsonArray>
#include <QTest>

using namespace gc;
using namespace gc::relay;

namespace {

QJsonObject obj(std::initializer_list<QPair<QString, QJsonValue>> fields) {
  QJsonObject o;
  for (const auto& [k, v] : fields)
    o.insert(k, v);
  return o;
}

} // namespace

class tst_RelayWire : public QObject {
  Q_OBJECT
private slots:
  void everyConsoleMessageRoundTrips() {
    Hello hello{kProtocol,
                QStringLiteral("run-1"),
                QStringLiteral("srv"),
                QStringLiteral("perform_action"),
                {QStringLiteral("a"), QStringLiteral("b")},
                QStringLiteral("2026-12-03T12:00:00.000Z")};
    const QJsonObject line = encode(ToRelay(hello));
    QCOMPARE(line.value(QStringLiteral("type")).toString(), QStringLiteral("hello"));
    const Outcome<ToRelay> back = decodeToRelay(line);
    QVERIFY(back.ok());
    const auto& h = std::get<Hello>(back.value());
    QCOMPARE(h.run, hello.run);
    QCOMPARE(h.candidates, hello.candidates);
    QCOMPARE(h.expiresAt, hello.expiresAt);

    const Error error{7, QStringLiteral("ACTION_FAILED"), QStringLiteral("m"),
                      obj({{QStringLiteral("k"), 1}})};
    const Outcome<ToRelay> e = decodeToRelay(encode(ToRelay(error)));
    QVERIFY(e.ok());
    QCOMPARE(std::get<Error>(e.value()).receipt.value(), error.receipt.value());
    const Outcome<ToRelay> noReceipt = decodeToRelay(encode(ToRelay(Error{8, QStringLiteral("X"), {}, {}})));
    QVERIFY(noReceipt.ok());
    QVERIFY(!std::get<Error>(noReceipt.value()).receipt);
    QVERIFY(std::holds_alternative<Bound>(decodeToRelay(encode(ToRelay(Bound{}))).value()));
    QCOMPARE(
        std::get<Result>(decodeToRelay(encode(ToRelay(Result{3, obj({{QStringLiteral("a"), 2}})}))).value())
            .id,
        qint64(3));
  }

  void everyRelayMessageRoundTrips() {
    const Outcome<FromRelay> call = decodeFromRelay(
        encode(FromRelay(Call{5, QStringLiteral("status"), obj({{QStringLiteral("x"), true}})})));
    QVERIFY(call.ok());
    QCOMPARE(std::get<Call>(call.value()).op, QStringLiteral("status"));
    const Outcome<FromRelay> bind =
        decodeFromRelay(encode(FromRelay(Bind{QStringLiteral("s"), QStringLiteral("t")})));
    QVERIFY(bind.ok());
    QCOMPARE(std::get<Bind>(bind.value()).tool, QStringLiteral("t"));
  }

  void consoleRefusesWhatIsNotARelayMessage_data() {
    QTest::addColumn<QJsonObject>("line");
    QTest::addColumn<int>("code");
    const int malformed = int(Refusal::ProtocolMalformed), unknown = int(Refusal::ProtocolUnknownType);
    const QJsonObject args = obj({});
    QTest::newRow("no type") << obj({{QStringLiteral("id"), 1}}) << malformed;
    QTest::newRow("type not a string") << obj({{QStringLiteral("type"), 3}}) << malformed;
    QTest::newRow("unknown type") << obj({{QStringLiteral("type"), QStringLiteral("macro")}}) << unknown;
    QTest::newRow("a console message") << obj({{QStringLiteral("type"), QStringLiteral("bound")}}) << unknown;
    QTest::newRow("call without id") << obj({{QStringLiteral("type"), QStringLiteral("call")},
                                             {QStringLiteral("op"), QStringLiteral("status")},
                                             {QStringLiteral("arguments"), args}})
                                     << malformed;
    QTest::newRow("call with a fractional id") << obj({{QStringLiteral("type"), QStringLiteral("call")},
                                                       {QStringLiteral("id"), 1.5},
                                                       {QStringLiteral("op"), QStringLiteral("status")},
                                                       {QStringLiteral("arguments"), args}})
                                               << malformed;
    QTest::newRow("call with a negative id") << obj({{QStringLiteral("type"), QStringLiteral("call")},
                                                     {QStringLiteral("id"), -1},
                                                     {QStringLiteral("op"), QStringLiteral("status")},
                                                     {QStringLiteral("arguments"), args}})
                                             << malformed;
    QTest::newRow("call with arguments not an object")
        << obj({{QStringLiteral("type"), QStringLiteral("call")},
                {QStringLiteral("id"), 1},
                {QStringLiteral("op"), QStringLiteral("status")},
                {QStringLiteral("arguments"), QJsonArray{}}})
        << malformed;
    QTest::newRow("call with an extra field") << obj({{QStringLiteral("type"), QStringLiteral("call")},
                                                      {QStringLiteral("id"), 1},
                                                      {QStringLiteral("op"), QStringLiteral("status")},
                                                      {QStringLiteral("arguments"), args},
                                                      {QStringLiteral("clipboard"), QStringLiteral("x")}})
                                              << malformed;
    QTest::newRow("bind with a numeric tool") << obj({{QStringLiteral("type"), QStringLiteral("bind")},
                                                      {QStringLiteral("server"), QStringLiteral("s")},
                                                      {QStringLiteral("tool"), 1}})
                                              << malformed;
  }
  void consoleRefusesWhatIsNotARelayMessage() {
    QFETCH(QJsonObject, line);
    QFETCH(int, code);
    const Outcome<FromRelay> decoded = decodeFromRelay(line);
    QVERIFY(!decoded.ok());
    QCOMPARE(int(decoded.code()), code);
  }

  void relayRefusesWhatIsNotAConsoleMessage_data() {
    QTest::addColumn<QJsonObject>("line");
    QTest::newRow("hello without candidates") << obj({{QStringLiteral("type"), QStringLiteral("hello")},
                                                      {QStringLiteral("protocol"), 1},
                                                      {QStringLiteral("run"), QStringLiteral("r")},
                                                      {QStringLiteral("server"), QStringLiteral("s")},
                                                      {QStringLiteral("tool"), QStringLiteral("t")},
                                                      {QStringLiteral("expires_at"), QStringLiteral("x")}});
    QTest::newRow("a candidate that is not a string")
        << obj({{QStringLiteral("type"), QStringLiteral("hello")},
                {QStringLiteral("protocol"), 1},
                {QStringLiteral("run"), QStringLiteral("r")},
                {QStringLiteral("server"), QStringLiteral("s")},
                {QStringLiteral("tool"), QStringLiteral("t")},
                {QStringLiteral("candidates"), QJsonArray{1}},
                {QStringLiteral("expires_at"), QStringLiteral("x")}});
    QTest::newRow("error with a receipt that is not an object")
        << obj({{QStringLiteral("type"), QStringLiteral("error")},
                {QStringLiteral("id"), 1},
                {QStringLiteral("code"), QStringLiteral("C")},
                {QStringLiteral("message"), QStringLiteral("m")},
                {QStringLiteral("receipt"), QStringLiteral("r")}});
    QTest::newRow("result without a result")
        << obj({{QStringLiteral("type"), QStringLiteral("result")}, {QStringLiteral("id"), 1}});
    QTest::newRow("a relay message") << obj({{QStringLiteral("type"), QStringLiteral("bind")},
                                             {QStringLiteral("server"), QStringLiteral("s")},
                                             {QStringLiteral("tool"), QStringLiteral("t")}});
  }
  void relayRefusesWhatIsNotAConsoleMessage() {
    QFETCH(QJsonObject, line);
    QVERIFY(!decodeToRelay(line).ok());
  }
};

QTEST_APPLESS_MAIN(tst_RelayWire)
#include "tst_relaywire.moc"
