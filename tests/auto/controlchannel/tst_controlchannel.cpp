#include "session/ControlChannel.h"
#include "session/ControlEvents.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
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

// resources/protocol/control-channel.json, the control channel's one source of truth.
QJsonObject schema() {
  QFile f(QStringLiteral(GC_CONTROL_JSON));
  if (!f.open(QIODevice::ReadOnly))
    return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

// Empty when `value` is what `kind` (a schema field kind, or a nested object of them) allows;
// else what is wrong, at `path`.
QString kindMismatch(const QJsonValue& spec, const QJsonValue& value, const QString& path) {
  if (spec.isObject()) {
    if (!value.isObject())
      return path + QStringLiteral(": not an object");
    const QJsonObject fields = spec.toObject();
    const QJsonObject object = value.toObject();
    for (auto it = object.begin(); it != object.end(); ++it)
      if (!fields.contains(it.key()))
        return path + QLatin1Char('.') + it.key() + QStringLiteral(": not in the schema");
    for (auto it = fields.begin(); it != fields.end(); ++it) {
      const QString wrong =
          kindMismatch(it.value(), object.value(it.key()), path + QLatin1Char('.') + it.key());
      if (!wrong.isEmpty())
        return wrong;
    }
    return {};
  }
  const QString kind = spec.toString();
  if (kind.endsWith(QLatin1Char('?'))) {
    if (value.isUndefined())
      return {};
    return kindMismatch(kind.chopped(1), value, path);
  }
  if (value.isUndefined())
    return path + QStringLiteral(": missing");
  bool ok = false;
  if (kind == QLatin1String("string"))
    ok = value.isString();
  else if (kind == QLatin1String("uint"))
    ok = value.isDouble() && value.toDouble() >= 0 && value.toDouble() == double(value.toInteger());
  else if (kind == QLatin1String("hex64"))
    ok = QRegularExpression(QStringLiteral("^[0-9a-fA-F]{64}$")).match(value.toString()).hasMatch();
  else if (kind == QLatin1String("object"))
    ok = value.isObject();
  else if (kind == QLatin1String("phase"))
    ok = value.isString() && phaseFromName(value.toString()).has_value();
  else if (kind == QLatin1String("refusal"))
    ok = value.isString() && refusalFromName(value.toString()).has_value();
  else
    return path + QStringLiteral(": unknown kind ") + kind;
  return ok ? QString() : path + QStringLiteral(": not a ") + kind;
}

const QByteArray kHead = QByteArray(64, 'a');
const QByteArray kCapability = QByteArray(32, '\x5c').toHex();

} // namespace

Q_DECLARE_METATYPE(gc::control::Event)

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
    QCOMPARE(close.at(0).at(0).value<Refusal>(), Refusal::OperatorClose);
  }

  // The parent says why it closes (a cancelled sign-in, a window reload): that reason, and
  // only one of those a parent can know, becomes the close reason.
  void closeCarriesTheParentsReason_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("reason"); // empty: refused
    QTest::newRow("no reason") << QByteArray("{\"cmd\":\"close\"}\n") << "OPERATOR_CLOSE";
    for (const char* code : {"OPERATOR_CLOSE", "AUTH_CANCELLED", "WINDOW_RELOAD"})
      QTest::newRow(code) << QByteArray("{\"cmd\":\"close\",\"reason\":\"") + code + "\"}\n"
                          << QString::fromLatin1(code);
    for (const char* code : {"PANIC", "ACTION_DONE", "PARENT_GONE", "operator", ""})
      QTest::newRow(qPrintable(QStringLiteral("refused %1").arg(QLatin1String(code))))
          << QByteArray("{\"cmd\":\"close\",\"reason\":\"") + code + "\"}\n"
          << QString();
  }
  void closeCarriesTheParentsReason() {
    QFETCH(QByteArray, line);
    QFETCH(QString, reason);
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    QVERIFY(channel.start());
    QSignalSpy close(&channel, &ControlChannel::closeRequested);
    QSignalSpy refused(&channel, &ControlChannel::refused);
    pipes.write(line);
    QTRY_COMPARE(close.count() + refused.count(), 1);
    if (reason.isEmpty()) {
      QCOMPARE(close.count(), 0);
      QCOMPARE(refused.at(0).at(0).value<Refusal>(), Refusal::ProtocolMalformed);
      QVERIFY(pipes.readOutput().startsWith("{\"event\":\"error\",\"code\":\"PROTOCOL_MALFORMED\""));
    } else {
      QCOMPARE(refusalName(close.at(0).at(0).value<Refusal>()), reason);
    }
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

  // Issue 28: every event the console emits is built by one builder, and each builder's
  // output, as the pipe carries it, is exactly what control-channel.json says: the event's
  // name, its fields, their kinds, nothing extra.
  void everyEventBuilderMatchesTheSchema_data() {
    QTest::addColumn<control::Event>("event");
    const QJsonObject identity{{QStringLiteral("vm_name"), QStringLiteral("demo-vm")}};
    QTest::newRow("ready") << control::ready(QStringLiteral("run-1"), QStringLiteral("task-1"),
                                             QStringLiteral("demo-vm"), identity, 40123, kCapability);
    QTest::newRow("credentials_required with names") << control::credentialsRequired(
        QJsonValue(QStringLiteral("op")), QJsonValue(QStringLiteral("LAB")), 1, 3);
    QTest::newRow("credentials_required without names") << control::credentialsRequired(
        QJsonValue(QJsonValue::Undefined), QJsonValue(QJsonValue::Undefined), 2, 3);
    QTest::newRow("phase") << control::phase(Phase::ReadOnly, QStringLiteral("drained"));
    QTest::newRow("drained") << control::drained(40);
    QTest::newRow("receipt") << control::receipt(
        QJsonObject{{QStringLiteral("event_id"), QStringLiteral("e-1")},
                    {QStringLiteral("evidence_head"), QString::fromLatin1(kHead)}});
    QTest::newRow("error") << control::error(Refusal::PhaseWrong, QStringLiteral("not yet"));
    QTest::newRow("error with its evidence") << control::error(Refusal::GrantReused, QStringLiteral("used"),
                                                               QStringLiteral("/s/evidence/r.jsonl"));
    QTest::newRow("closed") << control::closed(Refusal::OperatorClose, QStringLiteral("closed"), kHead,
                                               QStringLiteral("/s/evidence/run-1.jsonl"));
  }
  void everyEventBuilderMatchesTheSchema() {
    QFETCH(control::Event, event);
    const QJsonObject events = schema().value(QStringLiteral("consoleToParent")).toObject();
    QVERIFY2(events.contains(event.name), qPrintable(event.name));
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    channel.send(event);
    const QByteArray line = pipes.readOutput();
    QVERIFY(line.endsWith('\n'));
    QCOMPARE(line.count('\n'), 1);
    QVERIFY(line.startsWith("{\"event\":\"" + event.name.toLatin1() + "\""));
    QJsonObject sent = QJsonDocument::fromJson(line).object();
    QCOMPARE(sent.take(QStringLiteral("event")).toString(), event.name);
    QCOMPARE(sent, event.fields);
    const QJsonValue spec = events.value(event.name);
    if (spec == QJsonValue(QStringLiteral("receipt"))) {
      QVERIFY(sent.value(QStringLiteral("evidence_head")).isString()); // the receipt's own fields, spread
      return;
    }
    const QString wrong = kindMismatch(spec, sent, event.name);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
  }

  // The schema names no event the console has no builder for (and the other way round: the
  // rows above cover every builder).
  void theSchemaNamesExactlyTheBuiltEvents() {
    QStringList built{QStringLiteral("ready"),   QStringLiteral("credentials_required"),
                      QStringLiteral("phase"),   QStringLiteral("drained"),
                      QStringLiteral("receipt"), QStringLiteral("error"),
                      QStringLiteral("closed")};
    QStringList named = schema().value(QStringLiteral("consoleToParent")).toObject().keys();
    built.sort();
    named.sort();
    QCOMPARE(named, built);
    QCOMPARE(schema()
                 .value(QStringLiteral("limits"))
                 .toObject()
                 .value(QStringLiteral("maxCommandLineBytes"))
                 .toInt(),
             int(ControlChannel::kMaxLineBytes));
  }

  // Every command the schema names is read with exactly its fields: all of them, only the
  // required ones, and one more (refused, nothing emitted).
  void readsEveryCommandTheSchemaNames_data() {
    QTest::addColumn<QString>("cmd");
    for (const QString& cmd : schema().value(QStringLiteral("parentToConsole")).toObject().keys())
      QTest::newRow(qPrintable(cmd)) << cmd;
  }
  void readsEveryCommandTheSchemaNames() {
    QFETCH(QString, cmd);
    const QJsonObject fields =
        schema().value(QStringLiteral("parentToConsole")).toObject().value(cmd).toObject();
    // The reader takes flat strings only: any string, or a close reason's code.
    const auto sample = [](const QString& kind, const QString& key) -> std::optional<QString> {
      if (kind.startsWith(QLatin1String("string")))
        return QStringLiteral("v-") + key;
      if (kind == QLatin1String("close_reason?"))
        return QStringLiteral("WINDOW_RELOAD");
      return std::nullopt;
    };
    for (auto it = fields.begin(); it != fields.end(); ++it)
      QVERIFY2(sample(it.value().toString(), it.key()), qPrintable(it.key()));
    const auto line = [&cmd, &fields, &sample](bool optional, bool extra) {
      QJsonObject o{{QStringLiteral("cmd"), cmd}};
      for (auto it = fields.begin(); it != fields.end(); ++it) {
        if (optional || !it.value().toString().endsWith(QLatin1Char('?')))
          o.insert(it.key(), *sample(it.value().toString(), it.key()));
      }
      if (extra)
        o.insert(QStringLiteral("extra"), QStringLiteral("1"));
      return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
    };
    for (const auto& [optional, extra] :
         {std::pair{true, false}, std::pair{false, false}, std::pair{true, true}}) {
      Pipes pipes;
      ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
      QVERIFY(channel.start());
      QSignalSpy refused(&channel, &ControlChannel::refused);
      int routed = 0;
      connect(&channel, &ControlChannel::credentialsReceived, this, [&routed](Credentials& c) {
        ++routed;
        c.wipe();
      });
      for (auto signal : {&ControlChannel::lockRequested, &ControlChannel::panicRequested})
        connect(&channel, signal, this, [&routed] { ++routed; });
      connect(&channel, &ControlChannel::closeRequested, this, [&routed](Refusal) { ++routed; });
      pipes.write(line(optional, extra));
      QTRY_COMPARE(routed + int(refused.count()), 1);
      QCOMPARE(routed, extra ? 0 : 1);
    }
  }

  void eventsAreOneLineWithEventFirst() {
    Pipes pipes;
    ControlChannel channel(pipes.consoleRead, pipes.consoleWrite);
    channel.send(control::drained(7));
    QCOMPARE(pipes.readOutput(), QByteArray("{\"event\":\"drained\",\"upto\":7}\n"));
  }
};

QTEST_GUILESS_MAIN(tst_ControlChannel)
#include "tst_controlchannel.moc"
