/* gc-bench-probe: the pixel probe for a native RDP client (issue 17.4). It watches the largest
 * mapped top-level window on $DISPLAY (xfreerdp3's, in its own Xvfb), injects keys into it with
 * XTest and reports, on CLOCK_MONOTONIC (the clock of gc-bench-panel and gc-test-guest), when a
 * watched pixel takes a colour and how many changed frames the window showed.
 *
 * stdin, one command per line:
 *   window TIMEOUT_MS        wait for a mapped top-level window (the largest), take focus
 *   watch ID X Y RRGGBB      report `seen` once pixel (X,Y) of the window has that colour
 *   key ID KEYSYM            press and release KEYSYM (e.g. "a"); reports `sent` with the send time
 *   count on|off             count changed frames (grab after each damage batch, compare)
 *   stats                    `stats` {changed, damage, grabs}, then reset
 *   quit
 * stdout: JSON lines {"event":…, "t_ns":…}.
 *
 * A "changed frame": after an XDamage notification the probe waits until the window has been
 * quiet for 2 ms (bounded to 16 ms: one batch of the client's repaint), grabs the window with
 * XShm and counts it when any byte differs from the previous grab. gc-bench-panel counts its
 * `changed` frames the same way (a frame whose pixels differ from the canvas before it). */
#define _GNU_SOURCE
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/XTest.h>
#include <X11/extensions/Xdamage.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

enum { kTolerance = 40, kMaxWatches = 64, kQuietNs = 2000000, kBatchNs = 16000000 };

typedef struct {
  long id;
  int x, y;
  unsigned rgb;
} Watch;

static Display* d;
static Window win;
static int win_w, win_h, damage_base;
static Damage damage;
static XShmSegmentInfo shm;
static XImage* img;
static unsigned char* previous;
static int counting, have_previous;
static long changed, damages, grabs;
static Watch watches[kMaxWatches];
static int nwatches;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void out(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

static int ignore_errors(Display* dpy, XErrorEvent* e) {
  (void)dpy;
  (void)e;
  return 0;
}

static Window largest_window(void) {
  Window root_ret, parent, *children = NULL, best = 0;
  unsigned n = 0;
  long best_area = 0;
  if (!XQueryTree(d, DefaultRootWindow(d), &root_ret, &parent, &children, &n))
    return 0;
  for (unsigned i = 0; i < n; ++i) {
    XWindowAttributes a;
    if (XGetWindowAttributes(d, children[i], &a) && a.map_state == IsViewable && a.class == InputOutput &&
        (long)a.width * a.height > best_area) {
      best_area = (long)a.width * a.height;
      best = children[i];
    }
  }
  if (children)
    XFree(children);
  return best;
}

static void release_image(void) {
  if (!img)
    return;
  XShmDetach(d, &shm);
  XDestroyImage(img);
  shmdt(shm.shmaddr);
  img = NULL;
  free(previous);
  previous = NULL;
}

static int attach(Window w) {
  XWindowAttributes a;
  if (!XGetWindowAttributes(d, w, &a))
    return 0;
  release_image();
  win = w;
  win_w = a.width;
  win_h = a.height;
  img =
      XShmCreateImage(d, a.visual, (unsigned)a.depth, ZPixmap, NULL, &shm, (unsigned)win_w, (unsigned)win_h);
  if (!img)
    return 0;
  const size_t bytes = (size_t)img->bytes_per_line * (size_t)img->height;
  /* IPC_PRIVATE, removed at once: the segment dies with the last attachment. */
  shm.shmid = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (shm.shmid < 0)
    return 0;
  shm.shmaddr = img->data = shmat(shm.shmid, NULL, 0);
  shm.readOnly = False;
  if (!XShmAttach(d, &shm))
    return 0;
  XSync(d, False);
  shmctl(shm.shmid, IPC_RMID, NULL);
  previous = calloc(1, bytes);
  have_previous = 0;
  if (damage)
    XDamageDestroy(d, damage);
  damage = XDamageCreate(d, win, XDamageReportNonEmpty);
  XSetInputFocus(d, win, RevertToPointerRoot, CurrentTime);
  XSync(d, False);
  return 1;
}

static int near(unsigned a, unsigned b) {
  for (int s = 0; s <= 16; s += 8) {
    const int ca = (int)((a >> s) & 0xff), cb = (int)((b >> s) & 0xff);
    if (abs(ca - cb) > kTolerance)
      return 0;
  }
  return 1;
}

static void check_watches(int64_t t, int full_grab) {
  for (int i = 0; i < nwatches;) {
    unsigned px;
    if (full_grab) {
      px = (unsigned)XGetPixel(img, watches[i].x, watches[i].y) & 0xffffff;
    } else {
      XImage* one = XGetImage(d, win, watches[i].x, watches[i].y, 1, 1, AllPlanes, ZPixmap);
      if (!one) {
        ++i;
        continue;
      }
      px = (unsigned)XGetPixel(one, 0, 0) & 0xffffff;
      XDestroyImage(one);
    }
    if (near(px, watches[i].rgb)) {
      out("{\"event\":\"seen\",\"id\":%ld,\"t_ns\":%lld}", watches[i].id, (long long)t);
      watches[i] = watches[--nwatches];
    } else {
      ++i;
    }
  }
}

/* One damage batch has ended: look at the window. */
static void on_batch(void) {
  if (!win)
    return;
  if (counting) {
    if (!XShmGetImage(d, win, img, 0, 0, AllPlanes))
      return;
    const int64_t t = now_ns();
    ++grabs;
    const size_t bytes = (size_t)img->bytes_per_line * (size_t)img->height;
    if (have_previous && memcmp(previous, img->data, bytes) != 0)
      ++changed;
    memcpy(previous, img->data, bytes);
    have_previous = 1;
    check_watches(t, 1);
  } else if (nwatches) {
    check_watches(now_ns(), 0);
  }
}

static int drain_damage(void) {
  int got = 0;
  while (XPending(d)) {
    XEvent e;
    XNextEvent(d, &e);
    if (e.type == damage_base + XDamageNotify) {
      ++damages;
      got = 1;
    }
  }
  if (got && damage)
    XDamageSubtract(d, damage, None, None);
  XFlush(d);
  return got;
}

static void command(char* line) {
  char word[16] = {0}, arg[64] = {0};
  long id = 0;
  int x = 0, y = 0;
  if (sscanf(line, "%15s", word) != 1)
    return;
  if (strcmp(word, "window") == 0) {
    long timeout = 10000;
    sscanf(line, "%*s %ld", &timeout);
    const int64_t end = now_ns() + timeout * 1000000;
    Window w = 0;
    /* An external client's window: polled, bounded (it has no event we could subscribe to
     * before it exists other than SubstructureNotify, which a reparenting-free Xvfb gives). */
    XSelectInput(d, DefaultRootWindow(d), SubstructureNotifyMask);
    while (!(w = largest_window()) && now_ns() < end) {
      struct pollfd p = {ConnectionNumber(d), POLLIN, 0};
      poll(&p, 1, 50);
      while (XPending(d)) {
        XEvent e;
        XNextEvent(d, &e);
      }
    }
    if (w && attach(w))
      out("{\"event\":\"window\",\"width\":%d,\"height\":%d,\"t_ns\":%lld}", win_w, win_h,
          (long long)now_ns());
    else
      out("{\"event\":\"error\",\"what\":\"no window\",\"t_ns\":%lld}", (long long)now_ns());
  } else if (strcmp(word, "watch") == 0 && sscanf(line, "%*s %ld %d %d %63s", &id, &x, &y, arg) == 4) {
    if (nwatches < kMaxWatches && win && x >= 0 && y >= 0 && x < win_w && y < win_h) {
      watches[nwatches++] = (Watch){id, x, y, (unsigned)strtoul(arg, NULL, 16)};
      check_watches(now_ns(), 0); /* already there: seen at once */
    } else {
      out("{\"event\":\"error\",\"what\":\"watch\",\"id\":%ld}", id);
    }
  } else if (strcmp(word, "key") == 0 && sscanf(line, "%*s %ld %63s", &id, arg) == 2) {
    const KeyCode code = XKeysymToKeycode(d, XStringToKeysym(arg));
    if (!code) {
      out("{\"event\":\"error\",\"what\":\"keysym\",\"id\":%ld}", id);
      return;
    }
    const int64_t t = now_ns();
    XTestFakeKeyEvent(d, code, True, CurrentTime);
    XTestFakeKeyEvent(d, code, False, CurrentTime);
    XFlush(d);
    out("{\"event\":\"sent\",\"id\":%ld,\"t_ns\":%lld}", id, (long long)t);
  } else if (strcmp(word, "count") == 0) {
    sscanf(line, "%*s %63s", arg);
    counting = strcmp(arg, "on") == 0;
    have_previous = 0;
  } else if (strcmp(word, "stats") == 0) {
    out("{\"event\":\"stats\",\"changed\":%ld,\"damage\":%ld,\"grabs\":%ld,\"t_ns\":%lld}", changed, damages,
        grabs, (long long)now_ns());
    changed = damages = grabs = 0;
  } else if (strcmp(word, "quit") == 0) {
    release_image();
    XCloseDisplay(d);
    exit(0);
  }
}

int main(void) {
  d = XOpenDisplay(NULL);
  if (!d) {
    fprintf(stderr, "gc-bench-probe: cannot open display\n");
    return 1;
  }
  int ev, err, major, minor;
  if (!XDamageQueryExtension(d, &damage_base, &err) || !XShmQueryExtension(d) ||
      !XTestQueryExtension(d, &ev, &err, &major, &minor)) {
    fprintf(stderr, "gc-bench-probe: needs DAMAGE, MIT-SHM and XTEST\n");
    return 1;
  }
  XSetErrorHandler(ignore_errors); /* the watched client may go away at any time */
  out("{\"event\":\"ready\",\"t_ns\":%lld}", (long long)now_ns());
  char buf[4096];
  size_t used = 0;
  int64_t batch_start = 0, last_damage = 0;
  for (;;) {
    struct pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {ConnectionNumber(d), POLLIN, 0}};
    int timeout = -1;
    if (batch_start) {
      const int64_t t = now_ns();
      int64_t until = last_damage + kQuietNs;
      if (until > batch_start + kBatchNs)
        until = batch_start + kBatchNs;
      timeout = until > t ? (int)((until - t) / 1000000) + 1 : 0;
    }
    if (XPending(d) == 0 && poll(p, 2, timeout) < 0 && errno != EINTR)
      return 1;
    if (drain_damage()) {
      last_damage = now_ns();
      if (!batch_start)
        batch_start = last_damage;
    }
    if (batch_start) {
      const int64_t t = now_ns();
      if (t - last_damage >= kQuietNs || t - batch_start >= kBatchNs) {
        batch_start = 0;
        on_batch();
      }
    }
    if (p[0].revents & (POLLIN | POLLHUP)) {
      const ssize_t n = read(STDIN_FILENO, buf + used, sizeof buf - 1 - used);
      if (n <= 0) {
        release_image();
        XCloseDisplay(d);
        return 0; /* stdin closed: the orchestrator is gone */
      }
      used += (size_t)n;
      buf[used] = 0;
      char* start = buf;
      char* nl;
      while ((nl = strchr(start, '\n'))) {
        *nl = 0;
        command(start);
        start = nl + 1;
      }
      used = (size_t)(buf + used - start);
      memmove(buf, start, used);
      if (used >= sizeof buf - 1)
        used = 0;
    }
  }
}
