// gc_panel_twbench [--levels 0,50000,120000] [--trials 20]
// Issue 26: the genuine panel's time to authorization while another uid inflates the host's
// TCP table with TIME_WAIT entries. Runs in a private network namespace (root: unshare) so the
// storm disturbs nothing else on the machine, with TIME_WAIT reuse off there so every entry
// stays (and a wide ephemeral port range, so connect() does not slow down as ports fill).
// A child of uid 65534 makes the entries (connect/close storms against its own
// loopback listeners, the client closing first, no SO_LINGER). At each level: the old path's
// cost (one read and scan of /proc/net/tcp, what the pre-hello lookup did per connection), the
// sock_diag lookup's cost, and the time from a panel's connect to its authorization by a real
// PanelServer. One JSON line per level on stdout. Exit 0 when every panel was authorized, 1
// otherwise, 77 when there is no private network namespace to run in.
#include "bridge/panel/LoopbackPeer.h"
#include "bridge/panel/PanelServer.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QWebSocket>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace gc;

namespace {

bool writeSysctl(const char* path, const char* value) {
  FILE* f = std::fopen(path, "w");
  if (!f)
    return false;
  const bool ok = std::fputs(value, f) >= 0;
  return std::fclose(f) == 0 && ok;
}

QByteArray readSysctl(const char* path) {
  QFile f(QString::fromLatin1(path));
  return f.open(QIODevice::ReadOnly) ? f.readAll().trimmed() : QByteArray("?");
}

bool loopbackUp() {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return false;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ::ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  ok = ok && ::ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  ::close(s);
  return ok;
}

// The storm: as uid 65534, `kListeners` loopback listeners; for each count read from `in`,
// that many more connect/close pairs, the client closing first (its socket goes TIME_WAIT);
// then "done\n" on `out`.
constexpr int kListeners = 32; // so no destination runs short of ephemeral ports
[[noreturn]] void storm(int in, int out) {
  if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
      ::setresuid(65534, 65534, 65534) != 0)
    ::_exit(10);
  std::vector<sockaddr_in> targets;
  std::vector<int> listeners;
  for (int i = 0; i < kListeners; ++i) {
    const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (l < 0 || ::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 4096) != 0 ||
        ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ::_exit(11);
    listeners.push_back(l);
    targets.push_back(a);
  }
  char line[32];
  FILE* commands = ::fdopen(in, "r");
  long made = 0;
  while (commands && std::fgets(line, sizeof line, commands)) {
    const long want = std::strtol(line, nullptr, 10);
    for (long n = 0; n < want; ++n, ++made) {
      const int i = int(made % kListeners);
      const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (c < 0 ||
          ::connect(c, reinterpret_cast<const sockaddr*>(&targets[size_t(i)]), sizeof(sockaddr_in)) != 0)
        ::_exit(12);
      const int a = ::accept4(listeners[size_t(i)], nullptr, nullptr, SOCK_CLOEXEC);
      ::close(c); // the active close: this end waits in TIME_WAIT
      if (a >= 0)
        ::close(a);
    }
    if (::write(out, "done\n", 5) != 5)
      ::_exit(13);
  }
  ::_exit(0);
}

// What the old LoopbackPeer did per connection: read the whole table and scan every line.
struct Table {
  long timeWait = 0;
  double scanMs = 0;
};
Table scanProcNetTcp() {
  QElapsedTimer clock;
  clock.start();
  QFile f(QStringLiteral("/proc/net/tcp"));
  Table t;
  if (!f.open(QIODevice::ReadOnly))
    return t;
  const QByteArray all = f.readAll();
  for (const QByteArray& line : all.split('\n')) {
    const QList<QByteArray> fields = line.simplified().split(' ');
    if (fields.size() >= 8 && fields.at(3) == "06")
      ++t.timeWait;
  }
  t.scanMs = double(clock.nsecsElapsed()) / 1e6;
  return t;
}

QJsonObject summary(std::vector<double> v) {
  if (v.empty())
    return {};
  std::sort(v.begin(), v.end());
  auto round = [](double x) { return std::round(x * 100) / 100; };
  return QJsonObject{{QStringLiteral("p50"), round(v[v.size() / 2])},
                     {QStringLiteral("max"), round(v.back())}};
}

// One real PanelServer and one real panel: ms from the panel's open() to panelAuthorized, or
// -1 when it was not authorized within 20 s.
double welcomeMs() {
  PanelPolicy policy;
  policy.run = QStringLiteral("run-tw");
  policy.task = QStringLiteral("task-tw");
  policy.capability.resize(32);
  QRandomGenerator::system()->fillRange(reinterpret_cast<quint32*>(policy.capability.data()), 8);
  PanelServer server(policy);
  if (!server.listen())
    return -1;
  QWebSocket panel;
  QEventLoop loop;
  bool authorized = false;
  QObject::connect(&server, &PanelServer::panelAuthorized, &loop, [&] {
    authorized = true;
    loop.quit();
  });
  QObject::connect(&panel, &QWebSocket::connected, &panel, [&] {
    panel.sendTextMessage(
        QStringLiteral("{\"type\":\"hello\",\"run\":\"run-tw\",\"task\":\"task-tw\",\"capability\":\"%1\","
                       "\"client\":{\"kind\":\"bench\",\"version\":\"1\"}}")
            .arg(QString::fromLatin1(policy.capability.toHex())));
  });
  QTimer::singleShot(20000, &loop, &QEventLoop::quit);
  QElapsedTimer clock;
  clock.start();
  panel.open(QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(server.port())));
  loop.exec();
  const double ms = double(clock.nsecsElapsed()) / 1e6;
  panel.abort();
  return authorized ? ms : -1;
}

} // namespace

int main(int argc, char** argv) {
  // The namespace first, while this is the only thread.
  if (::unshare(CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "gc_panel_twbench: unshare(CLONE_NEWNET): %s\n", std::strerror(errno));
    return 77;
  }
  if (!loopbackUp()) {
    std::fprintf(stderr, "gc_panel_twbench: cannot bring lo up: %s\n", std::strerror(errno));
    return 77;
  }
  writeSysctl("/proc/sys/net/ipv4/tcp_tw_reuse", "0");
  writeSysctl("/proc/sys/net/ipv4/tcp_max_tw_buckets", "262144");
  writeSysctl("/proc/sys/net/ipv4/ip_local_port_range", "1024 65535");
  int toStorm[2], fromStorm[2];
  if (::pipe2(toStorm, O_CLOEXEC) != 0 || ::pipe2(fromStorm, O_CLOEXEC) != 0)
    return 2;
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(toStorm[1]);
    ::close(fromStorm[0]);
    storm(toStorm[0], fromStorm[1]);
  }
  ::close(toStorm[0]);
  ::close(fromStorm[1]);

  QCoreApplication app(argc, argv);
  QList<long> levels{0, 50000, 120000};
  int trials = 20;
  const QStringList args = app.arguments();
  for (qsizetype i = 1; i + 1 < args.size(); i += 2) {
    if (args[i] == u"--levels") {
      levels.clear();
      for (const QString& l : args[i + 1].split(u','))
        levels.append(l.toLong());
    } else if (args[i] == u"--trials") {
      trials = args[i + 1].toInt();
    }
  }
  std::printf("{\"tcp_tw_reuse\":%s,\"tcp_max_tw_buckets\":%s}\n",
              readSysctl("/proc/sys/net/ipv4/tcp_tw_reuse").constData(),
              readSysctl("/proc/sys/net/ipv4/tcp_max_tw_buckets").constData());
  bool allWelcomed = true;
  long made = 0;
  for (long level : levels) {
    QElapsedTimer stormClock;
    stormClock.start();
    if (level > made) {
      const QByteArray command = QByteArray::number(qlonglong(level - made)) + '\n';
      char reply[8] = {};
      if (::write(toStorm[1], command.constData(), size_t(command.size())) != command.size() ||
          ::read(fromStorm[0], reply, 5) != 5) {
        std::fprintf(stderr, "gc_panel_twbench: the storm child failed\n");
        return 2;
      }
      made = level;
    }
    const qint64 stormMs = stormClock.elapsed();
    std::vector<double> scan, lookup, welcome;
    long timeWait = 0;
    int welcomed = 0;
    for (int t = 0; t < trials; ++t) {
      const Table table = scanProcNetTcp();
      timeWait = std::max(timeWait, table.timeWait);
      scan.push_back(table.scanMs);
      const double ms = welcomeMs();
      if (ms >= 0) {
        welcome.push_back(ms);
        ++welcomed;
      }
      // The lookup alone, for a connection of our own.
      QTcpServer listener;
      listener.listen(QHostAddress::LocalHost, 0);
      QTcpSocket client;
      client.connectToHost(QHostAddress::LocalHost, listener.serverPort());
      if (client.waitForConnected(5000) && listener.waitForNewConnection(5000)) {
        QTcpSocket* accepted = listener.nextPendingConnection();
        QElapsedTimer clock;
        clock.start();
        const Outcome<uid_t> uid = LoopbackPeer::uidOf(accepted->peerAddress(), accepted->peerPort(),
                                                       accepted->localAddress(), accepted->localPort());
        const double lookupMs = double(clock.nsecsElapsed()) / 1e6;
        if (uid.ok())
          lookup.push_back(lookupMs);
      }
    }
    allWelcomed = allWelcomed && welcomed == trials;
    const QJsonObject row{{QStringLiteral("storm_target"), qint64(level)},
                          {QStringLiteral("time_wait"), qint64(timeWait)},
                          {QStringLiteral("storm_ms"), stormMs},
                          {QStringLiteral("trials"), trials},
                          {QStringLiteral("welcomed"), welcomed},
                          {QStringLiteral("old_proc_net_tcp_scan_ms"), summary(scan)},
                          {QStringLiteral("sock_diag_lookup_ms"), summary(lookup)},
                          {QStringLiteral("welcome_ms"), summary(welcome)}};
    std::printf("%s\n", QJsonDocument(row).toJson(QJsonDocument::Compact).constData());
    std::fflush(stdout);
  }
  ::close(toStorm[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return allWelcomed ? 0 : 1;
}
