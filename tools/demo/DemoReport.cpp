#include "tools/demo/DemoReport.h"

#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>

namespace gc::tools {

namespace {

QString yesNo(bool b) {
  return b ? QStringLiteral("yes") : QStringLiteral("NO");
}

QString str(const QJsonObject& o, const char* key) {
  const QJsonValue v = o.value(QLatin1String(key));
  return v.isDouble() ? QString::number(v.toInteger()) : v.toString();
}

QString joined(const QJsonValue& list, const QString& separator) {
  QStringList parts;
  for (const QJsonValue& v : list.toArray())
    parts.append(v.toString());
  return parts.join(separator);
}

QString counts(const QJsonObject& byCode) {
  QStringList parts;
  for (auto it = byCode.begin(); it != byCode.end(); ++it)
    parts.append(QStringLiteral("%1 %2").arg(it.key()).arg(it.value().toInteger()));
  return parts.isEmpty() ? QStringLiteral("none") : parts.join(QStringLiteral(", "));
}

} // namespace

DemoReport::DemoReport(FILE* out) : m_out(out) {
  m_clock.start();
}

void DemoReport::print(const QString& text) const {
  std::fputs(text.toUtf8().constData(), m_out);
  std::fputc('\n', m_out);
  std::fflush(m_out);
}

void DemoReport::step(const QString& what, const QString& detail) {
  const qint64 ms = elapsedMs();
  m_steps.append(QJsonObject{
      {QStringLiteral("ms"), ms}, {QStringLiteral("what"), what}, {QStringLiteral("detail"), detail}});
  print(QStringLiteral("  %1 ms  %2  %3").arg(QStringLiteral("+%1").arg(ms), 7).arg(what, -22).arg(detail));
}

void DemoReport::phase(const QString& phase, const QString& reason) {
  const qint64 ms = elapsedMs();
  m_phases.append(QJsonObject{
      {QStringLiteral("phase"), phase}, {QStringLiteral("reason"), reason}, {QStringLiteral("ms"), ms}});
  print(QStringLiteral("  %1 ms  phase %2  %3")
            .arg(QStringLiteral("+%1").arg(ms), 7)
            .arg(phase, -16)
            .arg(reason));
}

void DemoReport::check(const QString& name, bool ok, const QString& detail) {
  m_checks.append(QJsonObject{
      {QStringLiteral("name"), name}, {QStringLiteral("ok"), ok}, {QStringLiteral("detail"), detail}});
}

void DemoReport::fail(const QString& what, const QString& detail) {
  check(what, false, detail);
  print(QStringLiteral("  %1 ms  FAILED: %2  %3")
            .arg(QStringLiteral("+%1").arg(elapsedMs()), 7)
            .arg(what, detail));
}

bool DemoReport::ok() const {
  if (m_checks.isEmpty())
    return false;
  for (const QJsonValue& c : m_checks)
    if (!c.toObject().value(QStringLiteral("ok")).toBool())
      return false;
  return true;
}

QJsonObject DemoReport::toJson() const {
  QJsonObject o{{QStringLiteral("ok"), ok()},         {QStringLiteral("mode"), m_mode},
                {QStringLiteral("checks"), m_checks}, {QStringLiteral("steps"), m_steps},
                {QStringLiteral("phases"), m_phases}, {QStringLiteral("total_ms"), elapsedMs()}};
  for (auto it = m_sections.begin(); it != m_sections.end(); ++it)
    o.insert(it.key(), it.value());
  return o;
}

bool DemoReport::writeJson(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly))
    return false;
  file.write(QJsonDocument(toJson()).toJson(QJsonDocument::Indented));
  return file.commit();
}

void DemoReport::printSummary() const {
  const QJsonObject binding = m_sections.value(QStringLiteral("binding"));
  const QJsonObject input = m_sections.value(QStringLiteral("input"));
  const QJsonObject capture = m_sections.value(QStringLiteral("capture"));
  const QJsonObject receipt = m_sections.value(QStringLiteral("receipt"));
  const QJsonObject cleanup = m_sections.value(QStringLiteral("cleanup"));

  print(QString());
  print(QStringLiteral("Binding"));
  if (binding.isEmpty()) {
    print(QStringLiteral("  (none: the demo stopped before a VM was bound)"));
  } else {
    print(QStringLiteral("  VM           %1  uuid %2").arg(str(binding, "vm_name"), str(binding, "vm_uuid")));
    if (binding.contains(QStringLiteral("decoy")))
      print(QStringLiteral("  decoy        %1 on port %2 (also running; not bound)")
                .arg(str(binding, "decoy"), str(binding, "decoy_port")));
    print(QStringLiteral("  RDP          127.0.0.1:%1 -> guest port 3389  (%2)")
              .arg(str(binding, "port"), str(binding, "libvirt_uri")));
    print(QStringLiteral("  certificate  pinned, sha256 %1…").arg(str(binding, "cert_pin_prefix")));
    print(QStringLiteral("  grant        %1  run %2  task %3  digest %4…")
              .arg(str(binding, "grant_id").left(8), str(binding, "run"), str(binding, "task"),
                   str(binding, "grant_digest").left(16)));
  }

  print(QString());
  print(QStringLiteral("Phases (ms since start)"));
  for (const QJsonValue& v : m_phases) {
    const QJsonObject p = v.toObject();
    print(QStringLiteral("  %1 %2  %3").arg(str(p, "phase"), -10).arg(str(p, "ms"), 7).arg(str(p, "reason")));
  }

  print(QString());
  print(QStringLiteral("Input"));
  if (input.contains(QStringLiteral("sent"))) {
    print(QStringLiteral("  operator     %1").arg(str(input, "script")));
    print(
        QStringLiteral(
            "  panel        sent %1 (%2 in setup, the rest after the lock), acknowledged %3, refused %4 (%5)")
            .arg(str(input, "sent"), str(input, "setup_sent"), str(input, "acknowledged"),
                 str(input, "refused"), counts(input.value(QStringLiteral("refused_by_code")).toObject())));
    print(QStringLiteral("  lock         drained upto %1 before the lock was committed")
              .arg(str(input, "drained_upto")));
  } else if (input.contains(QStringLiteral("script"))) {
    print(QStringLiteral("  operator     %1").arg(str(input, "script")));
  }
  if (input.contains(QStringLiteral("console_counts"))) {
    const QJsonObject c = input.value(QStringLiteral("console_counts")).toObject();
    print(QStringLiteral("  console      accepted %1, delivered %2, refused %3  (evidence)")
              .arg(str(c, "accepted"), str(c, "delivered"),
                   counts(c.value(QStringLiteral("refused")).toObject())));
  }
  if (input.contains(QStringLiteral("guest_received"))) {
    print(QStringLiteral("  guest        received %1 events: %2 in setup, %3 from the action")
              .arg(str(input, "guest_received"), str(input, "guest_setup_count"),
                   str(input, "guest_action_count")));
    print(QStringLiteral("    setup      %1")
              .arg(joined(input.value(QStringLiteral("guest_setup")), QStringLiteral(" · "))));
    print(QStringLiteral("    action     %1")
              .arg(joined(input.value(QStringLiteral("guest_action")), QStringLiteral(" · "))));
    if (input.contains(QStringLiteral("setup_matches")))
      print(QStringLiteral("    = script   %1")
                .arg(yesNo(input.value(QStringLiteral("setup_matches")).toBool())));
    print(QStringLiteral("    = action   %1")
              .arg(yesNo(input.value(QStringLiteral("action_matches")).toBool())));
  }

  print(QString());
  print(QStringLiteral("Capture"));
  if (capture.isEmpty()) {
    print(QStringLiteral("  (none)"));
  } else {
    print(QStringLiteral("  %1x%2 PNG, %3 bytes, sha256 %4… (same as the tool reported: %5)")
              .arg(str(capture, "width"), str(capture, "height"), str(capture, "png_bytes"),
                   str(capture, "sha256").left(16),
                   yesNo(capture.value(QStringLiteral("sha256_matches")).toBool())));
    print(QStringLiteral("  identity marker %1 found: %2")
              .arg(str(capture, "marker_expected"),
                   yesNo(capture.value(QStringLiteral("marker_found")).toBool())));
  }

  print(QString());
  print(QStringLiteral("Receipt"));
  if (receipt.isEmpty()) {
    print(QStringLiteral("  (none)"));
  } else {
    const QString pretty =
        QString::fromUtf8(QJsonDocument(receipt).toJson(QJsonDocument::Indented)).trimmed();
    for (const QString& line : pretty.split(QLatin1Char('\n')))
      print(QStringLiteral("  ") + line);
  }

  print(QString());
  print(QStringLiteral("Cleanup"));
  if (cleanup.contains(QStringLiteral("closed_reason")))
    print(QStringLiteral("  console      closed: %1 (%2), exit %3")
              .arg(str(cleanup, "closed_reason"), str(cleanup, "closed_message"),
                   str(cleanup, "console_exit")));
  if (cleanup.contains(QStringLiteral("run_dir")))
    print(QStringLiteral("  run dir      %1 gone: %2")
              .arg(str(cleanup, "run_dir"), yesNo(cleanup.value(QStringLiteral("run_dir_gone")).toBool())));
  if (cleanup.contains(QStringLiteral("evidence_output")))
    print(QStringLiteral("  evidence     %1  (head = the console's closing head: %2)")
              .arg(str(cleanup, "evidence_output"),
                   yesNo(cleanup.value(QStringLiteral("evidence_head_matches")).toBool())));
  const QJsonObject children = cleanup.value(QStringLiteral("children")).toObject();
  QStringList ended;
  for (auto it = children.begin(); it != children.end(); ++it)
    ended.append(QStringLiteral("%1 %2").arg(it.key(), it.value().toString()));
  if (!ended.isEmpty())
    print(QStringLiteral("  processes    %1").arg(ended.join(QStringLiteral("; "))));
  if (cleanup.contains(QStringLiteral("children_left")))
    print(QStringLiteral("  left running %1").arg(str(cleanup, "children_left")));
  if (cleanup.contains(QStringLiteral("temp_dir")))
    print(QStringLiteral("  temp dir     %1 removed: %2")
              .arg(str(cleanup, "temp_dir"), yesNo(cleanup.value(QStringLiteral("temp_removed")).toBool())));

  print(QString());
  int passed = 0;
  QStringList failed;
  for (const QJsonValue& v : m_checks) {
    const QJsonObject c = v.toObject();
    if (c.value(QStringLiteral("ok")).toBool())
      ++passed;
    else
      failed.append(QStringLiteral("%1 (%2)").arg(str(c, "name"), str(c, "detail")));
  }
  print(QStringLiteral("Result: %1  %2/%3 checks in %4 ms")
            .arg(ok() ? QStringLiteral("PASS") : QStringLiteral("FAIL"))
            .arg(passed)
            .arg(m_checks.size())
            .arg(elapsedMs()));
  for (const QString& f : failed)
    print(QStringLiteral("  failed: ") + f);
}

} // namespace gc::tools
