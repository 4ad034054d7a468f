// ChannelReport: what happened on the session's virtual channels, for the evidence — the
// static channels the client asked for in the MCS Connect Initial and the server joined, the
// graphics pipeline (opened, the capability version it confirmed, the codecs its frames used,
// frames decoded, each command executed, counted by name), and every dynamic channel the server asked to
// create: the one opened (RDPGFX) and the refused, counted by name.
//
// A hostile guest controls the names: each is sanitised (printable ASCII, others as '?', at
// most kMaxNameLength characters, a longer one cut and marked with '~') and at most
// kMaxDistinctNames distinct names are kept; creates for further names are counted together
// as the overflow. Nothing grows with what the guest sends.
//
// Thread affinity: written on the RDP worker, read on any thread; one mutex, a leaf.
// Qt types only: the console reads the snapshot.
#pragma once

#include "readerwire/ReaderTypes.h"

#include <QByteArrayView>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

#include <mutex>
#include <string_view>

namespace gc {

class ChannelReport {
public:
  static constexpr int kMaxNameLength = ChannelSnapshot::kMaxNameLength;
  static constexpr int kMaxDistinctNames = ChannelSnapshot::kMaxDistinctNames;

  // The report as it crosses to the console (readerwire/ReaderTypes.h).
  using Snapshot = ChannelSnapshot;

  static QString sanitise(QByteArrayView raw) { return ChannelSnapshot::sanitise(raw); }
  // An MS-RDPEGFX 2.2.3.1 codec identifier by the name the evidence and docs use.
  static QString codecName(int id);

  void setStaticChannels(QStringList requested, QStringList joined);
  void setAdvertisedCodecs(QStringList codecs);
  void setGfxAdvertised(bool advertised);
  void noteDynamicOpened(const QString& name);
  void noteRefused(QByteArrayView rawName);
  void noteGfxOpened(bool opened);
  void noteGfxCapsVersion(quint32 version);
  void noteGfxCodec(quint16 codecId);
  void noteGfxFrame();
  // One RDPGFX command the client executed (`name`: GfxPdu's pduName, a fixed set).
  void noteGfxCommand(std::string_view name);

  Snapshot snapshot() const;

private:
  mutable std::mutex m_mutex;
  Snapshot m_data;
  quint32 m_codecBits = 0; // bit per RDPGFX_CODECID_* below 32
};

} // namespace gc
