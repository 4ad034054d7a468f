#include "ActionTestSupport.h"

#include <QCryptographicHash>
#include <QJsonArray>

namespace gc::test {

Grant makeGrant(const GrantOptions& options) {
  Grant g;
  g.version = 1;
  g.grantId = QStringLiteral("6f1d2c3b-4a59-4e7d-8c1b-2a3f4e5d6c7b");
  g.runId = options.runId;
  g.taskId = QStringLiteral("task-7");
  g.issuedAt = QDateTime::currentDateTimeUtc();
  g.expiresAt = g.issuedAt.addSecs(options.lifetimeSeconds);
  g.vm = {QStringLiteral("0b7e3a52-8a0f-4c2b-9f1d-6d2e5c4b3a21"), QStringLiteral("gc-test-win"),
          QStringLiteral("test:///default")};
  g.rdp.host = QStringLiteral("127.0.0.1");
  g.rdp.port = 43389;
  g.rdp.guestPort = 3389;
  g.rdp.unpinned = true;
  g.panel.title = QStringLiteral("Test run");
  g.mcp = {options.server, options.tool};
  if (options.candidates) {
    ActionSpec save;
    save.kind = ActionSpec::Kind::KeyChord;
    save.keys = {QStringLiteral("ctrl"), QStringLiteral("s")};
    ActionSpec ok;
    ok.kind = ActionSpec::Kind::Click;
    ok.x = 40;
    ok.y = 30;
    g.candidates = {Candidate{QStringLiteral("save"), QStringLiteral("Save the document"), save},
                    Candidate{QStringLiteral("ok"), QString::fromLatin1(kInjectionLabel), ok}};
  }
  g.actionPolicy = options.policy;
  g.capture = options.capture;
  g.digestHex =
      QCryptographicHash::hash("grant bytes of " + options.runId.toUtf8(), QCryptographicHash::Sha256)
          .toHex();
  return g;
}

QImage makeFrame(int width, int height) {
  QImage image(width, height, QImage::Format_RGB32);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      image.setPixel(x, y, qRgb(x & 0xFF, y & 0xFF, (x ^ y) & 0xFF));
  const QByteArray sentinel(kFrameSentinel);
  for (qsizetype i = 0; i + 2 < sentinel.size(); i += 3)
    image.setPixel(int(i / 3), 0, qRgb(sentinel[i], sentinel[i + 1], sentinel[i + 2]));
  return image;
}

Status RecordingSink::send(const InputEvent& event, QDeadlineTimer) {
  const int attempt = attempts++;
  if (mode == Mode::FailAt && attempt == failAt)
    return Status(Refusal::InputSendFailed, QStringLiteral("the guest connection dropped"));
  events.push_back(event);
  if (onEvent)
    onEvent(event);
  return success();
}

ActionPolicy everyKind() {
  ActionPolicy p;
  p.legacy = false;
  p.kinds = (1u << ActionSpec::kKindCount) - 1;
  return p;
}

QString eventText(const InputEvent& e) {
  switch (e.kind) {
  case InputEvent::Kind::Key:
    return QStringLiteral("k%1%2").arg(e.scancode, 0, 16).arg(e.down ? QLatin1Char('+') : QLatin1Char('-'));
  case InputEvent::Kind::Unicode:
    return QStringLiteral("u%1%2").arg(e.unit, 0, 16).arg(e.down ? QLatin1Char('+') : QLatin1Char('-'));
  case InputEvent::Kind::Pause:
    return QStringLiteral("P%1").arg(e.pauseMs);
  case InputEvent::Kind::Pointer:
    break;
  }
  QString s = QStringLiteral("p%1,%2,%3").arg(e.x).arg(e.y).arg(e.buttons);
  if (e.wheel)
    s += QStringLiteral(",w%1").arg(e.wheel);
  if (e.horizontal)
    s += QLatin1Char('h');
  return s;
}

QJsonObject eventJson(const InputEvent& e) {
  if (e.kind == InputEvent::Kind::Key)
    return {{QStringLiteral("kind"), QStringLiteral("key")},
            {QStringLiteral("scancode"), int(e.scancode)},
            {QStringLiteral("down"), e.down}};
  return {{QStringLiteral("kind"), QStringLiteral("pointer")},
          {QStringLiteral("x"), int(e.x)},
          {QStringLiteral("y"), int(e.y)},
          {QStringLiteral("buttons"), int(e.buttons)}};
}

} // namespace gc::test
