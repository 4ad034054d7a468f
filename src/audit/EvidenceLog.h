// The run's evidence (DESIGN.md §10): append-only JSON lines, hash-chained. Lives on the
// main thread; only its fsyncs run on a thread of its own. Records what happened — phases,
// counts, hashes, the receipt — never payloads: no input codes or coordinates, no frames, no
// credentials, no capability.
//
// Line format (one JSON object, keys in this order):
//   {"seq":N,"time":"…Z","event":"…",<fields…>,"prev":"<hash of line N-1>","hash":"<hash>"}
// hash = SHA-256( prev-hash-hex || the line's bytes up to, excluding, `,"hash"` ).
// The first line's prev is 64 zeros. The chain is unkeyed: it proves order and integrity
// only relative to a head obtained out of band (the receipt's and the closed event's
// evidence_head); anyone who can write the file can re-chain an edited log, and a cut log
// verifies on its own. `guest-console evidence verify --head` checks against that anchor.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace gc {

class EvidenceLog : public QObject {
  Q_OBJECT
public:
  explicit EvidenceLog(QObject* parent = nullptr);
  ~EvidenceLog() override;

  // Creates <dir>/<name>.jsonl (dir 0700, file 0600, O_EXCL|O_NOFOLLOW): evidence is never
  // appended to a file we did not create.
  Status open(const QString& dir, const QString& name);
  bool isOpen() const { return m_fd >= 0; }
  QString path() const { return m_path; }

  // Appends one event; fields must not use the reserved keys seq/time/event/prev/hash.
  // Each line is written with one write(2) at once, in order; the log's own thread fsyncs
  // what was written (one fsync for the lines that came while the last one ran), so the
  // step that records a line does not wait for the disk. A failed fsync fails every later
  // append and sync().
  Status append(const QString& event, const QJsonObject& fields = {});
  // Waits until every line appended so far is on disk: before what must not happen without
  // its evidence (the model's action reaching the guest, the receipt, the closed event).
  Status sync();
  QByteArray headHash() const { return m_prev; }
  quint64 count() const { return m_seq; }
  void close(); // sync()s first

  struct Verification {
    bool ok = false;
    quint64 lines = 0;
    QByteArray head;
    QList<QByteArray> hashes; // each intact line's hash, in order (head is the last)
    QString error;            // "line 3: prev does not match line 2"
  };
  static Verification verifyFile(const QString& path);
  static Verification verify(const QByteArray& contents);

private:
  void syncLoop(); // the log's own thread

  int m_fd = -1;
  std::mutex m_syncMutex; // a leaf: the counts below and the syncer's wake-ups
  std::condition_variable m_syncWake, m_synced;
  quint64 m_linesWritten = 0, m_linesSynced = 0;
  bool m_syncFailed = false, m_stopping = false;
  std::thread m_syncer;
  QString m_path;
  QByteArray m_prev;
  quint64 m_seq = 0;
};

} // namespace gc
