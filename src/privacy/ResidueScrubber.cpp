#include "privacy/ResidueScrubber.h"

#include <QElapsedTimer>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <string.h>
#include <string>
#include <sys/uio.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace gc {

namespace {

struct Range {
  quintptr begin = 0;
  quintptr end = 0;
  bool contains(quintptr address) const { return address >= begin && address < end; }
};

struct Region {
  Range range;
  bool scannable = false; // private, readable and writable
};

// Kept open by keepProcFilesOpen() (the sandboxed RDP reader); -1: opened per scrub.
std::atomic<int> s_maps{-1};
std::atomic<int> s_pagemap{-1};

// /proc/self/maps, read before any secret byte is copied anywhere (its text is not secret).
std::vector<Region> readMaps() {
  std::string text;
  const int kept = s_maps.load();
  const int fd = kept >= 0 ? kept : ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return {};
  char block[8192];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, block, sizeof block, at); // from the start: the maps as they are now
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    text.append(block, std::size_t(n));
    at += n;
  }
  if (kept < 0)
    ::close(fd);

  std::vector<Region> regions;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string::npos)
      eol = text.size();
    const std::string line = text.substr(at, eol - at);
    at = eol + 1;
    // "begin-end perms offset dev inode [path]"
    unsigned long long begin = 0, end = 0;
    char perms[5] = {};
    int pathAt = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %*s %*s %*s %n", &begin, &end, perms, &pathAt) < 3 ||
        end <= begin)
      continue;
    const std::string path =
        pathAt > 0 && std::size_t(pathAt) <= line.size() ? line.substr(std::size_t(pathAt)) : "";
    Region region;
    region.range = {quintptr(begin), quintptr(end)};
    region.scannable = perms[0] == 'r' && perms[1] == 'w' && perms[3] == 'p' && path != "[vvar]" &&
                       path != "[vsyscall]" && path != "[vdso]";
    regions.push_back(region);
  }
  return regions;
}

Range rangeOf(const SecureBuffer& buffer) {
  const quintptr begin = quintptr(buffer.constData());
  const quintptr page = quintptr(::sysconf(_SC_PAGESIZE));
  return {begin, begin + ((buffer.capacity() + page - 1) / page) * page};
}

// Reads [address, address + length) of our own memory into `into`; the count read, which is
// short where a page is not mapped (any more).
std::size_t readOwn(quintptr address, char* into, std::size_t length) {
  iovec local{into, length};
  iovec remote{reinterpret_cast<void*>(address), length};
  const ssize_t n = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
  return n > 0 ? std::size_t(n) : 0;
}

// The parts of [range) that can hold anything this process wrote: pages that are present or
// swapped and are not file pages (a private file mapping's page becomes anonymous when it is
// written). /proc/self/pagemap, 8 bytes per page (bit 63 present, 62 swapped, 61 file page or
// shared). Reading never-written library data would only fault it in (libcodec2's 15 MB .data,
// pulled in through FreeRDP's ffmpeg dependency, became resident that way). Without pagemap
// the whole range is returned.
std::vector<Range> writtenRuns(int pagemap, const Range& range, std::size_t page) {
  if (pagemap < 0)
    return {range};
  std::vector<Range> runs;
  constexpr std::size_t kBatch = 1024; // pagemap entries per read
  std::uint64_t entries[kBatch];
  const quintptr first = range.begin / page;
  const quintptr pages = (range.end - range.begin) / page;
  for (quintptr done = 0; done < pages;) {
    const std::size_t want = std::size_t(std::min<quintptr>(kBatch, pages - done));
    const ssize_t n = ::pread(pagemap, entries, want * sizeof(std::uint64_t),
                              off_t((first + done) * sizeof(std::uint64_t)));
    if (n != ssize_t(want * sizeof(std::uint64_t)))
      return {range}; // unreadable: scan all of it
    for (std::size_t i = 0; i < want; ++i) {
      const std::uint64_t e = entries[i];
      const bool written = (e & (1ULL << 63) || e & (1ULL << 62)) && !(e & (1ULL << 61));
      if (!written)
        continue;
      const quintptr at = (first + done + i) * page;
      if (!runs.empty() && runs.back().end == at)
        runs.back().end = at + page;
      else
        runs.push_back({at, at + page});
    }
    done += want;
  }
  return runs;
}

bool zeroOwn(quintptr address, std::size_t length) {
  static const char zeros[64] = {};
  while (length > 0) {
    const std::size_t step = std::min(length, sizeof zeros);
    iovec local{const_cast<char*>(zeros), step};
    iovec remote{reinterpret_cast<void*>(address), step};
    if (::process_vm_writev(::getpid(), &local, 1, &remote, 1, 0) != ssize_t(step))
      return false;
    address += step;
    length -= step;
  }
  return true;
}

} // namespace

ScrubReport ResidueScrubber::scrub(std::span<const SecureBuffer* const> needles) {
  QElapsedTimer clock;
  clock.start();
  ScrubReport report;
  struct Usable {
    const SecureBuffer* needle;
    std::size_t index; // position in `needles`
  };
  std::vector<Usable> usable;
  std::vector<Range> excluded;
  std::size_t longest = 0;
  for (std::size_t index = 0; index < needles.size(); ++index) {
    const SecureBuffer* needle = needles[index];
    if (!needle || needle->isEmpty())
      continue;
    excluded.push_back(rangeOf(*needle));
    if (needle->size() < kMinimumNeedle) {
      ++report.needlesTooShort;
      continue;
    }
    usable.push_back({needle, index});
    longest = std::max(longest, needle->size());
  }
  report.needles = int(usable.size());
  if (usable.empty()) {
    report.ok = true;
    report.elapsedUs = clock.nsecsElapsed() / 1000;
    return report;
  }

  const std::vector<Region> regions = readMaps();
  constexpr std::size_t kChunk = 256 * 1024;
  auto scratch = SecureBuffer::allocate(kChunk + longest);
  if (regions.empty() || !scratch.ok()) {
    report.elapsedUs = clock.nsecsElapsed() / 1000;
    return report;
  }
  excluded.push_back(rangeOf(scratch.value()));
  char* const buffer = scratch.value().data();
  const auto isExcluded = [&excluded](quintptr address) {
    return std::any_of(excluded.begin(), excluded.end(),
                       [address](const Range& r) { return r.contains(address); });
  };

  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  const int keptPagemap = s_pagemap.load();
  const int pagemap = keptPagemap >= 0 ? keptPagemap : ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  for (const Region& region : regions) {
    if (!region.scannable)
      continue;
    if (region.range.end - region.range.begin > kMaxMapping) {
      ++report.regionsSkipped;
      continue;
    }
    ++report.regions;
    for (const Range& run : writtenRuns(pagemap, region.range, page)) {
      for (quintptr at = run.begin; at < run.end; at += kChunk) {
        // Each chunk overlaps the next by longest - 1 bytes so a copy across the seam is found
        // once (matches starting in the overlap belong to the next chunk).
        const std::size_t want = std::size_t(std::min<quintptr>(kChunk + longest - 1, run.end - at));
        const std::size_t got = readOwn(at, buffer, want);
        report.bytesScanned += qint64(std::min(got, kChunk));
        for (const Usable& u : usable) {
          const SecureBuffer* needle = u.needle;
          const std::size_t n = needle->size();
          for (std::size_t from = 0; from + n <= got && from < kChunk;) {
            const void* hit = ::memmem(buffer + from, got - from, needle->constData(), n);
            if (!hit)
              break;
            const std::size_t offset = std::size_t(static_cast<const char*>(hit) - buffer);
            if (offset >= kChunk)
              break;
            const quintptr address = at + offset;
            if (!isExcluded(address)) {
              if (zeroOwn(address, n)) {
                ++report.copiesWiped;
                if (u.index < report.copiesByNeedle.size())
                  ++report.copiesByNeedle[u.index];
              } else
                ++report.copiesUnwritable;
            }
            from = offset + 1;
          }
        }
      }
    }
  }
  if (pagemap >= 0 && keptPagemap < 0)
    ::close(pagemap);
  scratch.value().clear();
  report.ok = true;
  report.elapsedUs = clock.nsecsElapsed() / 1000;
  return report;
}

bool ResidueScrubber::keepProcFilesOpen() {
  for (auto [file, slot] :
       {std::pair{"/proc/self/maps", &s_maps}, std::pair{"/proc/self/pagemap", &s_pagemap}}) {
    if (slot->load() >= 0)
      continue;
    const int fd = ::open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return false;
    slot->store(fd);
  }
  return true;
}

Outcome<SecureBuffer> ResidueScrubber::utf16leOf(QByteArrayView utf8) {
  // At most two UTF-16 units (4 bytes) per code point, and a code point takes at least one
  // UTF-8 byte; 2 bytes per input byte covers every sequence of 1-3 bytes and 4 per 4.
  auto out = SecureBuffer::allocate(std::size_t(utf8.size()) * 2 + 2);
  if (!out.ok())
    return out.failure();
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  const auto* const end = p + utf8.size();
  const auto unit = [&out](quint32 u) {
    const char bytes[2] = {char(u & 0xff), char(u >> 8)};
    return out.value().append(QByteArrayView(bytes, 2));
  };
  while (p < end) {
    quint32 cp = 0;
    int extra = 0;
    if (*p < 0x80) {
      cp = *p;
    } else if ((*p & 0xe0) == 0xc0) {
      cp = *p & 0x1f;
      extra = 1;
    } else if ((*p & 0xf0) == 0xe0) {
      cp = *p & 0x0f;
      extra = 2;
    } else if ((*p & 0xf8) == 0xf0) {
      cp = *p & 0x07;
      extra = 3;
    } else {
      return Failure{Refusal::Internal, QStringLiteral("the secret is not valid UTF-8")};
    }
    if (end - p <= extra)
      return Failure{Refusal::Internal, QStringLiteral("the secret is not valid UTF-8")};
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xc0) != 0x80)
        return Failure{Refusal::Internal, QStringLiteral("the secret is not valid UTF-8")};
      cp = (cp << 6) | (p[i] & 0x3f);
    }
    p += extra + 1;
    const bool overlong =
        (extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return Failure{Refusal::Internal, QStringLiteral("the secret is not valid UTF-8")};
    bool ok = true;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      ok = unit(0xd800 | (cp >> 10)) && unit(0xdc00 | (cp & 0x3ff));
    } else {
      ok = unit(cp);
    }
    if (!ok)
      return Failure{Refusal::Internal, QStringLiteral("secure buffer too small")};
  }
  return out;
}

} // namespace gc
