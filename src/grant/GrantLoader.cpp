#include "grant/GrantLoader.h"

#include "common/LibvirtUriRule.h"
#include "common/StrictJson.h"
#include "common/SystemError.h"
#include "grant/GrantSignature.h"
#include "grant/KeyboardLayout.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gc {

namespace {

// action.candidates[i].action.keys[] is the deepest legal value (depth 6).
constexpr int kMaxGrantDepth = 8;
constexpr int kMaxCandidates = 16;
constexpr qsizetype kMaxPanelFields = 32;
constexpr qsizetype kMaxPanelValueLength = 1024;

const QRegularExpression& uuidPattern() {
  static const QRegularExpression re(
      QStringLiteral("\\A[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\z"));
  return re;
}
const QRegularExpression& idPattern() {
  static const QRegularExpression re(QStringLiteral("\\A[A-Za-z0-9._:-]{1,128}\\z"));
  return re;
}
const QRegularExpression& candidateIdPattern() {
  static const QRegularExpression re(QStringLiteral("\\A[A-Za-z0-9._:-]{1,64}\\z"));
  return re;
}
const QRegularExpression& panelKeyPattern() {
  static const QRegularExpression re(QStringLiteral("\\A[A-Za-z_][A-Za-z0-9_]{0,63}\\z"));
  return re;
}
// RFC 3339 restricted to UTC written as "Z"; offsets (even +00:00) are refused so that
// every grant states its times one way.
const QRegularExpression& utcTimePattern() {
  static const QRegularExpression re(
      QStringLiteral("\\A(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,9}))?Z\\z"));
  return re;
}

// What the operator is shown (the panel's title and metadata, the VM's name, the MCP
// server…) must read as what it is: no C0 or C1 control, no DEL, no line or
// paragraph separator, and no bidirectional formatting character (embeddings, overrides,
// isolates, marks), which could make a value display as something else
// (https://trojansource.codes, CVE-2021-42574).
bool isControlOrBidi(char16_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
         (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

bool hasControlCharacters(const QString& s) {
  return std::any_of(s.cbegin(), s.cend(), [](QChar c) { return isControlOrBidi(c.unicode()); });
}

// Field names are echoed in messages; an attacker-chosen one is cut short and made printable.
QString quoteKey(const QString& key) {
  QString out = key.left(40);
  for (QChar& c : out) {
    if (!c.isPrint())
      c = u'?';
  }
  return key.size() > 40 ? out + QStringLiteral("…") : out;
}

QString join(const QString& path, const QString& key) {
  return path.isEmpty() ? key : path + u'.' + key;
}

// Walks the document, remembering the first violation; later reads on a failed reader
// are harmless and their results unused.
class SchemaReader {
public:
  bool failed() const { return !m_error.isEmpty(); }
  Failure failure() const { return Failure{Refusal::GrantSchema, m_error}; }

  void fail(const QString& path, const QString& what) {
    if (m_error.isEmpty())
      m_error = path + QStringLiteral(": ") + what;
  }

  // Every key must be in required or optional; every required key must be there.
  void expectFields(const QJsonObject& object, const QString& path,
                    std::initializer_list<QStringView> required,
                    std::initializer_list<QStringView> optional = {}) {
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
      const QString& key = it.key();
      const auto matches = [&key](QStringView k) { return k == key; };
      if (std::none_of(required.begin(), required.end(), matches) &&
          std::none_of(optional.begin(), optional.end(), matches))
        fail(join(path, quoteKey(key)), QStringLiteral("unknown field"));
    }
    for (QStringView key : required) {
      if (!object.contains(key))
        fail(join(path, key.toString()), QStringLiteral("required"));
    }
  }

  QJsonObject object(const QJsonObject& parent, const QString& path, QStringView key) {
    const QJsonValue v = parent.value(key);
    if (!v.isObject()) {
      fail(join(path, key.toString()), QStringLiteral("expected an object"));
      return {};
    }
    return v.toObject();
  }

  QString string(const QJsonObject& parent, const QString& path, QStringView key, qsizetype maxLength,
                 bool allowControl = false) {
    const QString where = join(path, key.toString());
    const QJsonValue v = parent.value(key);
    if (!v.isString()) {
      fail(where, QStringLiteral("expected a string"));
      return {};
    }
    QString s = v.toString();
    if (s.isEmpty())
      fail(where, QStringLiteral("must not be empty"));
    else if (s.size() > maxLength)
      fail(where, QStringLiteral("longer than %1 characters").arg(maxLength));
    else if (!allowControl && hasControlCharacters(s))
      fail(where, QStringLiteral("contains control or bidirectional formatting characters"));
    return s;
  }

  QString matching(const QJsonObject& parent, const QString& path, QStringView key,
                   const QRegularExpression& pattern, const QString& expected) {
    const QString s = string(parent, path, key, 256);
    if (!failed() && !pattern.match(s).hasMatch())
      fail(join(path, key.toString()), QStringLiteral("expected %1").arg(expected));
    return s;
  }

  qint64 integer(const QJsonObject& parent, const QString& path, QStringView key, qint64 min, qint64 max) {
    const QString where = join(path, key.toString());
    const QJsonValue v = parent.value(key);
    const double d = v.toDouble();
    if (!v.isDouble() || !std::isfinite(d) || std::floor(d) != d) {
      fail(where, QStringLiteral("expected an integer"));
      return 0;
    }
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
      fail(where, QStringLiteral("out of range %1..%2").arg(min).arg(max));
      return 0;
    }
    return static_cast<qint64>(d);
  }

  bool boolean(const QJsonObject& parent, const QString& path, QStringView key) {
    const QJsonValue v = parent.value(key);
    if (!v.isBool())
      fail(join(path, key.toString()), QStringLiteral("expected true or false"));
    return v.toBool();
  }

  QDateTime utcTime(const QJsonObject& parent, const QString& path, QStringView key) {
    const QString where = join(path, key.toString());
    const QString text = string(parent, path, key, 64);
    if (failed())
      return {};
    const QRegularExpressionMatch m = utcTimePattern().match(text);
    if (!m.hasMatch()) {
      fail(where, QStringLiteral("expected an RFC 3339 UTC time ending in Z (no offsets)"));
      return {};
    }
    const QDate date(m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3).toInt());
    // Fractions beyond milliseconds are truncated: QDateTime has millisecond resolution.
    const int ms = m.captured(7).isEmpty() ? 0 : (m.captured(7) + QStringLiteral("00")).left(3).toInt();
    const QTime time(m.captured(4).toInt(), m.captured(5).toInt(), m.captured(6).toInt(), ms);
    if (!date.isValid() || !time.isValid()) {
      fail(where, QStringLiteral("not a valid date and time"));
      return {};
    }
    return QDateTime(date, time, Qt::UTC);
  }

private:
  QString m_error;
};

// rdp.desktop {width, height, size_from} and rdp.keyboard_layout; absent means the defaults.
void readDesktop(SchemaReader& r, const QJsonObject& rdp, Grant::Desktop* desktop) {
  using Desktop = Grant::Desktop;
  if (rdp.contains(u"desktop")) {
    const QString path = QStringLiteral("rdp.desktop");
    const QJsonObject o = r.object(rdp, QStringLiteral("rdp"), u"desktop");
    if (r.failed())
      return;
    r.expectFields(o, path, {u"width", u"height"}, {u"size_from"});
    desktop->width = int(r.integer(o, path, u"width", Desktop::kMin, Desktop::kMax));
    desktop->height = int(r.integer(o, path, u"height", Desktop::kMin, Desktop::kMax));
    // Even sizes: what RDP servers lay out (the GFX surface and H.264/progressive tiles want
    // them; Windows rounds odd ones).
    if (!r.failed() && desktop->width % 2 != 0)
      r.fail(path + QStringLiteral(".width"), QStringLiteral("must be even"));
    if (!r.failed() && desktop->height % 2 != 0)
      r.fail(path + QStringLiteral(".height"), QStringLiteral("must be even"));
    if (!r.failed() && o.contains(u"size_from")) {
      const QString from = r.string(o, path, u"size_from", 16);
      if (from == u"grant")
        desktop->sizeFrom = Desktop::SizeFrom::Grant;
      else if (from == u"server")
        desktop->sizeFrom = Desktop::SizeFrom::Server;
      else if (!r.failed())
        r.fail(path + QStringLiteral(".size_from"), QStringLiteral("expected \"grant\" or \"server\""));
    }
  }
  if (!r.failed() && rdp.contains(u"keyboard_layout")) {
    const QString where = QStringLiteral("rdp.keyboard_layout");
    const QJsonValue v = rdp.value(u"keyboard_layout");
    const std::optional<quint32> klid = v.isString() ? KeyboardLayout::parse(v.toString()) : std::nullopt;
    if (!klid)
      r.fail(where, QStringLiteral("expected a KLID string \"0x\" + 8 hex digits, e.g. \"0x00000409\""));
    else if (!KeyboardLayout::isLayout(*klid))
      r.fail(where, QStringLiteral("not a Windows keyboard layout identifier"));
    else
      desktop->keyboardLayout = *klid;
  }
}

void readRdp(SchemaReader& r, const QJsonObject& root, Grant::Rdp* rdp) {
  const QString path = QStringLiteral("rdp");
  const QJsonObject o = r.object(root, QString(), path);
  if (r.failed())
    return;
  r.expectFields(o, path, {u"host", u"port", u"guest_port"},
                 {u"cert_sha256", u"insecure_no_cert_pin", u"desktop", u"keyboard_layout"});
  rdp->host = r.string(o, path, u"host", 64);
  if (!r.failed() && rdp->host != u"127.0.0.1")
    r.fail(QStringLiteral("rdp.host"), QStringLiteral("must be exactly 127.0.0.1"));
  rdp->port = static_cast<quint16>(r.integer(o, path, u"port", 1, 65535));
  rdp->guestPort = static_cast<quint16>(r.integer(o, path, u"guest_port", 1, 65535));
  if (!r.failed() && rdp->guestPort != 3389)
    r.fail(QStringLiteral("rdp.guest_port"), QStringLiteral("must be 3389"));
  if (r.failed())
    return;

  const bool hasPin = o.contains(u"cert_sha256");
  const bool hasOptOut = o.contains(u"insecure_no_cert_pin");
  if (hasPin && hasOptOut) {
    r.fail(QStringLiteral("rdp.insecure_no_cert_pin"),
           QStringLiteral("not allowed together with cert_sha256"));
  } else if (hasPin) {
    QString hex = r.string(o, path, u"cert_sha256", 128);
    hex.remove(u':');
    const QByteArray raw = QByteArray::fromHex(hex.toLatin1());
    static const QRegularExpression hex64(QStringLiteral("\\A[0-9a-fA-F]{64}\\z"));
    if (!r.failed() && (!hex64.match(hex).hasMatch() || raw.size() != 32))
      r.fail(QStringLiteral("rdp.cert_sha256"), QStringLiteral("expected 64 hex digits (colons allowed)"));
    rdp->certSha256 = raw;
  } else if (hasOptOut) {
    // The opt-out must be spelled out as true; false without a pin is simply a missing pin.
    if (!r.boolean(o, path, u"insecure_no_cert_pin"))
      r.fail(QStringLiteral("rdp.cert_sha256"),
             QStringLiteral("required unless insecure_no_cert_pin is true"));
    rdp->unpinned = true;
  } else {
    r.fail(QStringLiteral("rdp.cert_sha256"), QStringLiteral("required unless insecure_no_cert_pin is true"));
  }
  if (!r.failed())
    readDesktop(r, o, &rdp->desktop);
}

void readPanel(SchemaReader& r, const QJsonObject& root, Grant::Panel* panel) {
  const QString path = QStringLiteral("panel");
  const QJsonObject o = r.object(root, QString(), path);
  if (r.failed())
    return;
  if (o.size() > kMaxPanelFields)
    r.fail(path, QStringLiteral("more than %1 fields").arg(kMaxPanelFields));
  panel->title = r.string(o, path, u"title", 256);
  for (auto it = o.constBegin(); it != o.constEnd() && !r.failed(); ++it) {
    if (!panelKeyPattern().match(it.key()).hasMatch()) {
      r.fail(join(path, quoteKey(it.key())), QStringLiteral("field names are [A-Za-z_][A-Za-z0-9_]{0,63}"));
      break;
    }
    const QJsonValue v = it.value();
    if (!v.isString())
      r.fail(join(path, it.key()), QStringLiteral("expected a string"));
    else if (v.toString().size() > kMaxPanelValueLength)
      r.fail(join(path, it.key()), QStringLiteral("longer than %1 characters").arg(kMaxPanelValueLength));
    else if (hasControlCharacters(v.toString()))
      r.fail(join(path, it.key()), QStringLiteral("contains control or bidirectional formatting characters"));
  }
  panel->metadata = o;
}

void readLock(SchemaReader& r, const QJsonObject& root, Grant::Lock* lock) {
  const QString path = QStringLiteral("lock");
  const QJsonObject o = r.object(root, QString(), path);
  if (r.failed())
    return;
  r.expectFields(o, path, {u"confirmation"});
  const QString c = r.string(o, path, u"confirmation", 16);
  if (r.failed())
    return;
  if (c == u"guest")
    lock->confirmation = Grant::Lock::Confirmation::Guest;
  else if (c == u"settle")
    lock->confirmation = Grant::Lock::Confirmation::Settle;
  else
    r.fail(QStringLiteral("lock.confirmation"), QStringLiteral("expected \"guest\" or \"settle\""));
}

// capture {size: [w, h]} or {long_edge: N}: exactly one. A fixed size is judged against the
// grant's desktop here when the grant fixes it; a server-sized desktop is judged at capture.
void readCapture(SchemaReader& r, const QJsonObject& root, const Grant::Desktop& desktop,
                 CaptureBound* capture) {
  const QString path = QStringLiteral("capture");
  const QJsonObject o = r.object(root, QString(), path);
  if (r.failed())
    return;
  r.expectFields(o, path, {}, {u"size", u"long_edge"});
  if (r.failed())
    return;
  if (o.size() != 1)
    return r.fail(path, QStringLiteral("expected exactly one of size [w, h] or long_edge N"));
  if (o.contains(u"long_edge")) {
    capture->mode = CaptureBound::Mode::LongEdge;
    capture->longEdge = int(r.integer(o, path, u"long_edge", CaptureBound::kMinEdge, CaptureBound::kMaxEdge));
    return;
  }
  const QString where = QStringLiteral("capture.size");
  const QJsonValue v = o.value(u"size");
  const QJsonArray pair = v.toArray();
  if (!v.isArray() || pair.size() != 2)
    return r.fail(where, QStringLiteral("expected [width, height]"));
  int edges[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const double d = pair.at(i).toDouble(-1.0);
    if (!pair.at(i).isDouble() || !std::isfinite(d) || std::floor(d) != d)
      return r.fail(where, QStringLiteral("expected two integers [width, height]"));
    if (d < CaptureBound::kMinEdge || d > CaptureBound::kMaxEdge)
      return r.fail(
          where,
          QStringLiteral("each edge in %1..%2").arg(CaptureBound::kMinEdge).arg(CaptureBound::kMaxEdge));
    edges[i] = int(d);
  }
  capture->mode = CaptureBound::Mode::Size;
  capture->size = QSize(edges[0], edges[1]);
  if (desktop.sizeFrom == Grant::Desktop::SizeFrom::Grant) {
    if (const QString why = capture->misfit(QSize(desktop.width, desktop.height)); !why.isEmpty())
      r.fail(where, why + QStringLiteral(" (rdp.desktop)"));
  }
}

// action.limits: each bound optional, at most ActionSpec's absolute one.
void readLimits(SchemaReader& r, const QJsonObject& action, ActionLimits* limits) {
  const QString path = QStringLiteral("action.limits");
  const QJsonObject o = r.object(action, QStringLiteral("action"), u"limits");
  if (r.failed())
    return;
  r.expectFields(o, path, {},
                 {u"text_chars", u"drag_points", u"hold_seconds", u"wait_seconds", u"scroll_notches"});
  if (o.contains(u"text_chars"))
    limits->textChars = int(r.integer(o, path, u"text_chars", 1, ActionSpec::kMaxTextChars));
  if (o.contains(u"drag_points"))
    limits->dragPoints =
        int(r.integer(o, path, u"drag_points", ActionSpec::kMinDragPoints, ActionSpec::kMaxDragPoints));
  if (o.contains(u"scroll_notches"))
    limits->scrollNotches = int(r.integer(o, path, u"scroll_notches", 1, ActionSpec::kMaxScrollNotches));
  const auto seconds = [&](QStringView key, int maxMs, int* out) {
    if (!o.contains(key) || r.failed())
      return;
    const QJsonValue v = o.value(key);
    const double d = v.toDouble(-1.0);
    if (!v.isDouble() || !std::isfinite(d) || d < 0 || d * 1000.0 > maxMs)
      return r.fail(join(path, key.toString()),
                    QStringLiteral("expected seconds in 0..%1").arg(maxMs / 1000));
    *out = int(std::lround(d * 1000.0));
  };
  seconds(u"hold_seconds", ActionSpec::kMaxHoldMs, &limits->holdMs);
  seconds(u"wait_seconds", ActionSpec::kMaxWaitMs, &limits->waitMs);
}

// The action block: kinds, limits and text_input make the policy every action (a candidate's
// too) is checked against; absent kinds keep the four original kinds in their original shapes.
void readAction(SchemaReader& r, const QJsonObject& root, ActionPolicy* policy,
                QList<Candidate>* candidates) {
  const QJsonObject action = r.object(root, QString(), u"action");
  if (r.failed())
    return;
  r.expectFields(action, QStringLiteral("action"), {}, {u"candidates", u"kinds", u"limits", u"text_input"});
  if (!r.failed() && action.isEmpty())
    r.fail(QStringLiteral("action.candidates"),
           QStringLiteral("required (or action.kinds, limits, text_input)"));
  if (r.failed())
    return;
  if (action.contains(u"kinds")) {
    const QJsonValue kinds = action.value(u"kinds");
    const QJsonArray list = kinds.toArray();
    if (!kinds.isArray() || list.isEmpty() || list.size() > ActionSpec::kKindCount)
      return r.fail(QStringLiteral("action.kinds"),
                    QStringLiteral("expected 1..%1 kind names").arg(ActionSpec::kKindCount));
    policy->legacy = false;
    policy->kinds = 0;
    for (qsizetype i = 0; i < list.size(); ++i) {
      const std::optional<ActionSpec::Kind> kind = ActionSpec::kindFromName(list.at(i).toString());
      const QString where = QStringLiteral("action.kinds[%1]").arg(i);
      if (!list.at(i).isString() || !kind)
        return r.fail(where, QStringLiteral("not a canonical kind (click, move, drag, scroll, key_chord, "
                                            "hold_key, type_text, wait, done, fail)"));
      const quint32 bit = 1u << quint32(*kind);
      if (policy->kinds & bit)
        return r.fail(where, QStringLiteral("duplicate kind"));
      policy->kinds |= bit;
    }
  }
  if (action.contains(u"limits"))
    readLimits(r, action, &policy->limits);
  if (r.failed())
    return;
  if (action.contains(u"text_input")) {
    const QString mode = action.value(u"text_input").toString();
    if (mode == u"scancodes")
      policy->textInput = ActionPolicy::TextInput::Scancodes;
    else if (mode != u"unicode")
      return r.fail(QStringLiteral("action.text_input"),
                    QStringLiteral("expected \"unicode\" or \"scancodes\""));
  }
  if (!action.contains(u"candidates"))
    return;
  const QJsonValue listValue = action.value(u"candidates");
  if (!listValue.isArray()) {
    r.fail(QStringLiteral("action.candidates"), QStringLiteral("expected an array"));
    return;
  }
  const QJsonArray list = listValue.toArray();
  if (list.isEmpty() || list.size() > kMaxCandidates) {
    r.fail(QStringLiteral("action.candidates"),
           QStringLiteral("expected 1..%1 candidates").arg(kMaxCandidates));
    return;
  }
  QSet<QString> ids;
  for (qsizetype i = 0; i < list.size() && !r.failed(); ++i) {
    const QString path = QStringLiteral("action.candidates[%1]").arg(i);
    if (!list.at(i).isObject()) {
      r.fail(path, QStringLiteral("expected an object"));
      return;
    }
    const QJsonObject o = list.at(i).toObject();
    r.expectFields(o, path, {u"id", u"label", u"action"});
    Candidate c;
    c.id = r.matching(o, path, u"id", candidateIdPattern(), QStringLiteral("1..64 of [A-Za-z0-9._:-]"));
    if (!r.failed() && ids.contains(c.id))
      r.fail(path + QStringLiteral(".id"), QStringLiteral("duplicate candidate id"));
    ids.insert(c.id);
    // Labels are data: any text, kept verbatim (empty allowed), only the length is bounded.
    const QJsonValue label = o.value(u"label");
    if (!label.isString())
      r.fail(path + QStringLiteral(".label"), QStringLiteral("expected a string"));
    else if (label.toString().size() > Candidate::kMaxLabelLength)
      r.fail(path + QStringLiteral(".label"),
             QStringLiteral("longer than %1 characters").arg(Candidate::kMaxLabelLength));
    c.label = label.toString();
    const QJsonObject spec = r.object(o, path, u"action");
    if (r.failed())
      return;
    Outcome<ActionSpec> parsed = ActionSpec::fromJson(spec, *policy);
    if (!parsed) {
      r.fail(path + QStringLiteral(".action.") + parsed.failure().message.section(u':', 0, 0),
             parsed.failure().message.section(u':', 1).trimmed());
      return;
    }
    c.action = std::move(parsed).value();
    candidates->append(c);
  }
}

Outcome<Grant> readGrant(const QJsonObject& root) {
  SchemaReader r;
  r.expectFields(root, QString(),
                 {u"version", u"grant_id", u"run_id", u"task_id", u"issued_at", u"expires_at", u"vm", u"rdp",
                  u"panel", u"mcp"},
                 {u"action", u"lock", u"capture"});
  if (r.failed())
    return r.failure();

  Grant g;
  g.version = static_cast<int>(r.integer(root, QString(), u"version", 0, 1000));
  if (!r.failed() && g.version != 1)
    r.fail(QStringLiteral("version"), QStringLiteral("unsupported (expected 1)"));
  g.grantId = r.matching(root, QString(), u"grant_id", uuidPattern(), QStringLiteral("a UUID")).toLower();
  g.runId = r.matching(root, QString(), u"run_id", idPattern(), QStringLiteral("1..128 of [A-Za-z0-9._:-]"));
  g.taskId =
      r.matching(root, QString(), u"task_id", idPattern(), QStringLiteral("1..128 of [A-Za-z0-9._:-]"));
  g.issuedAt = r.utcTime(root, QString(), u"issued_at");
  g.expiresAt = r.utcTime(root, QString(), u"expires_at");
  if (!r.failed() && g.expiresAt <= g.issuedAt)
    r.fail(QStringLiteral("expires_at"), QStringLiteral("must be after issued_at"));
  if (r.failed())
    return r.failure();

  const QString vmPath = QStringLiteral("vm");
  const QJsonObject vm = r.object(root, QString(), vmPath);
  if (!r.failed()) {
    r.expectFields(vm, vmPath, {u"uuid", u"name", u"libvirt_uri"});
    g.vm.uuid = r.matching(vm, vmPath, u"uuid", uuidPattern(), QStringLiteral("a UUID")).toLower();
    g.vm.name = r.string(vm, vmPath, u"name", 256);
    g.vm.libvirtUri = r.string(vm, vmPath, u"libvirt_uri", 1024);
  }
  if (r.failed())
    return r.failure();
  // Its own code, not GRANT_SCHEMA: a transport or host here is an attack, not a typo.
  if (Status local = LibvirtUriRule::check(g.vm.libvirtUri); !local.ok())
    return local.failure();

  readRdp(r, root, &g.rdp);
  if (r.failed())
    return r.failure();
  readPanel(r, root, &g.panel);
  if (r.failed())
    return r.failure();

  const QString mcpPath = QStringLiteral("mcp");
  const QJsonObject mcp = r.object(root, QString(), mcpPath);
  if (!r.failed()) {
    r.expectFields(mcp, mcpPath, {u"server", u"tool"});
    g.mcp.server = r.string(mcp, mcpPath, u"server", 128);
    g.mcp.tool = r.string(mcp, mcpPath, u"tool", 128);
  }
  if (r.failed())
    return r.failure();

  if (root.contains(u"lock"))
    readLock(r, root, &g.lock);
  if (r.failed())
    return r.failure();

  if (root.contains(u"capture"))
    readCapture(r, root, g.rdp.desktop, &g.capture);
  if (r.failed())
    return r.failure();

  if (root.contains(u"action"))
    readAction(r, root, &g.actionPolicy, &g.candidates);
  if (r.failed())
    return r.failure();
  return g;
}

// Reads at most `limit` bytes from a regular file without following it anywhere else: a
// FIFO or device named as the grant could otherwise block or stream forever.
Outcome<QByteArray> readBounded(const QString& path, qsizetype limit, Refusal unreadable) {
  const QByteArray native = QFile::encodeName(path);
  const int fd = ::open(native.constData(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return Failure{unreadable, QStringLiteral("%1: %2").arg(path, errnoText())};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Failure{unreadable, QStringLiteral("%1: not a regular file").arg(path)};
  }
  QByteArray bytes(limit, Qt::Uninitialized);
  qsizetype total = 0;
  while (total < limit) {
    const ssize_t n = ::read(fd, bytes.data() + total, static_cast<size_t>(limit - total));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Failure{unreadable, QStringLiteral("%1: %2").arg(path, errnoText(err))};
    }
    if (n == 0)
      break;
    total += n;
  }
  ::close(fd);
  bytes.truncate(total);
  return bytes;
}

} // namespace

Status GrantLoader::checkFreshness(const Grant& grant, const GrantPolicy& policy, const QDateTime& nowUtc) {
  const QDateTime now = nowUtc.toUTC();
  const qint64 skewMs = qint64(policy.clockSkew.count()) * 1000;
  if (now.msecsTo(grant.issuedAt) > skewMs)
    return Status(Refusal::GrantNotYetValid,
                  QStringLiteral("issued_at is %1 s in the future (skew allowed: %2 s)")
                      .arg(now.secsTo(grant.issuedAt))
                      .arg(policy.clockSkew.count()));
  if (now >= grant.expiresAt)
    return Status(Refusal::GrantExpired, QStringLiteral("expired %1 s ago").arg(grant.expiresAt.secsTo(now)));
  if (grant.issuedAt.msecsTo(grant.expiresAt) > qint64(policy.maxLifetime.count()) * 1000)
    return Status(Refusal::GrantLifetime, QStringLiteral("lifetime %1 s exceeds the maximum of %2 s")
                                              .arg(grant.issuedAt.secsTo(grant.expiresAt))
                                              .arg(policy.maxLifetime.count()));
  if (grant.issuedAt.msecsTo(now) > qint64(policy.freshness.count()) * 1000)
    return Status(Refusal::GrantStale, QStringLiteral("issued %1 s ago; the freshness window is %2 s")
                                           .arg(grant.issuedAt.secsTo(now))
                                           .arg(policy.freshness.count()));
  return success();
}

Outcome<Grant> GrantLoader::parse(const QByteArray& bytes, const GrantPolicy& policy, const QDateTime& nowUtc,
                                  const QByteArray& signature) {
  if (bytes.size() > kMaxGrantBytes)
    return Failure{Refusal::GrantSchema, QStringLiteral("larger than %1 bytes").arg(kMaxGrantBytes)};

  const bool keyConfigured = !policy.issuerPublicKeyPem.isEmpty();
  bool verifiedSignature = false;
  if (!keyConfigured && !policy.allowUnsigned)
    return Failure{Refusal::GrantIssuerKeyMissing,
                   QStringLiteral("grants must be signed and no issuer key is configured (--issuer-key, "
                                  "or %1)")
                       .arg(QLatin1String(GrantPolicy::kMachineIssuerKeyPath))};
  if (keyConfigured && (!signature.isEmpty() || !policy.allowUnsigned)) {
    Status verified = GrantSignature::verify(bytes, signature, policy.issuerPublicKeyPem);
    if (!verified)
      return verified.failure();
    verifiedSignature = true;
  }

  Outcome<QJsonObject> json = StrictJson::parseObject(bytes, kMaxGrantBytes, kMaxGrantDepth);
  if (!json)
    return Failure{Refusal::GrantSchema, QStringLiteral("json: ") + json.failure().message};
  Outcome<Grant> grant = readGrant(*json);
  if (!grant)
    return grant;

  Grant g = std::move(grant).value();
  g.digestHex = QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
  g.signed_ = verifiedSignature;
  Status fresh = checkFreshness(g, policy, nowUtc);
  if (!fresh)
    return fresh.failure();
  return g;
}

Outcome<Grant> GrantLoader::loadFile(const QString& path, const GrantPolicy& policy,
                                     const QDateTime& nowUtc) {
  Outcome<QByteArray> bytes = readBounded(path, kMaxGrantBytes + 1, Refusal::GrantUnreadable);
  if (!bytes)
    return bytes.failure();
  if (bytes->size() > kMaxGrantBytes)
    return Failure{Refusal::GrantSchema, QStringLiteral("larger than %1 bytes").arg(kMaxGrantBytes)};

  QByteArray signature;
  if (policy.issuerPublicKeyPem.isEmpty() && !policy.allowUnsigned)
    return parse(*bytes, policy, nowUtc); // GRANT_ISSUER_KEY_MISSING, without reading anything more
  if (!policy.issuerPublicKeyPem.isEmpty()) {
    const QString sigPath = path + QStringLiteral(".sig");
    struct stat st {};
    if (::lstat(QFile::encodeName(sigPath).constData(), &st) == 0) {
      Outcome<QByteArray> sigFile = readBounded(sigPath, kMaxSignatureFileBytes + 1, Refusal::GrantSignature);
      if (!sigFile)
        return sigFile.failure();
      if (sigFile->size() > kMaxSignatureFileBytes)
        return Failure{Refusal::GrantSignature,
                       QStringLiteral("signature file: larger than %1 bytes").arg(kMaxSignatureFileBytes)};
      Outcome<QByteArray> decoded = GrantSignature::decodeDetached(*sigFile);
      if (!decoded)
        return decoded.failure();
      signature = *decoded;
    } else if (errno != ENOENT) {
      return Failure{Refusal::GrantSignature, QStringLiteral("%1: %2").arg(sigPath, errnoText())};
    }
  }
  return parse(*bytes, policy, nowUtc, signature);
}

} // namespace gc
