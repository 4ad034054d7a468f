// DemoReport: what the demo found, for a person (a live timeline while it runs, then one
// summary) and for a machine (--json-report). DemoRun fills the sections; the report only
// renders them and keeps the list of checks that decide the exit status.
//
// JSON shape (tests/auto/demo reads it):
//   {"ok", "mode", "checks":[{name, ok, detail}], "steps":[{ms, what, detail}],
//    "phases":[{phase, reason, ms}], "binding":{…}, "input":{…}, "capture":{…},
//    "receipt":{…}, "cleanup":{…}, "pids":{label: pid}}
//
// Thread: the main thread.
#pragma once

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <cstdio>

namespace gc::tools {

class DemoReport {
public:
  explicit DemoReport(FILE* out = stdout);

  qint64 elapsedMs() const { return m_clock.elapsed(); }

  // A line of the live timeline ("  +1234 ms  guest ready        pid 4242, 1024x768").
  void step(const QString& what, const QString& detail = {});
  // A phase the console announced on its control channel, with the time it arrived.
  void phase(const QString& phase, const QString& reason);
  // A check that decides the verdict.
  void check(const QString& name, bool ok, const QString& detail = {});
  // Something went wrong outside a named check (a timeout, a refusal): always a failure.
  void fail(const QString& what, const QString& detail);

  QJsonObject& section(const QString& name) { return m_sections[name]; }
  void setSection(const QString& name, const QJsonObject& value) { m_sections[name] = value; }
  void setMode(const QString& mode) { m_mode = mode; }

  bool ok() const;
  const QJsonArray& phases() const { return m_phases; }
  QJsonObject toJson() const;
  // The summary after the timeline: binding, phases, input, capture, receipt, cleanup, result.
  void printSummary() const;
  bool writeJson(const QString& path) const;

private:
  void print(const QString& text) const;

  FILE* m_out;
  QElapsedTimer m_clock;
  QString m_mode;
  QJsonArray m_steps;
  QJsonArray m_phases;
  QJsonArray m_checks;
  QHash<QString, QJsonObject> m_sections;
};

} // namespace gc::tools
