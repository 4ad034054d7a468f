/* gc-bench-xload MODE SECONDS: draws a workload on $DISPLAY in one full-screen window, for
 * the freerdp-shadow-cli3 comparison in tests/bench/run. The workloads mirror gc-test-guest's:
 *   typing  90 glyphs/s (3 per tick, 30 ticks/s) on a white text page;
 *   scroll  the text page moves up 4 px per tick at 30 ticks/s (XCopyArea + one new row);
 *   motion  every pixel changes, a full-screen XPutImage per tick at 60 ticks/s;
 *   idle    the static page;
 *   damage  draws nothing: counts XDamage "non-empty" notifications on the root window (each
 *           one subtracted at once), i.e. the repaint batches another client (xfreerdp3)
 *           makes on this display; with GC_XLOAD_DAMAGE (headers may be missing).
 * Ticks are paced by CLOCK_MONOTONIC; a late tick is dropped, not queued. The window takes
 * the keyboard focus; a key press of a, s or d paints the marker (32x32 at 1880,1040; grey at
 * start) red, green or blue at once — the glyph the key → glyph latency probes look for
 * (gc-bench-panel's `watch`, gc-bench-probe's `watch`); the marker is redrawn on every tick so
 * no workload hides it. The run ends after SECONDS or when stdin closes, whichever is first; it
 * then prints {"mode":…,"ticks":N,"seconds":S,"keys":K} so the caller knows what the server was
 * given. */
#define _GNU_SOURCE /* ppoll */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
#ifdef GC_XLOAD_DAMAGE
#include <X11/extensions/Xdamage.h>
#endif
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kMarkerX = 1880, kMarkerY = 1040, kMarker = 32 };

static unsigned long marker_rgb = 0x808080;

static unsigned long key_colour(KeySym k) {
  return k == XK_a ? 0xff0000 : k == XK_s ? 0x00ff00 : k == XK_d ? 0x0000ff : 0;
}

static void draw_marker(Display* d, Window w, GC gc) {
  XSetForeground(d, gc, marker_rgb);
  XFillRectangle(d, w, gc, kMarkerX, kMarkerY, kMarker, kMarker);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void text_row(Display* d, Window w, GC gc, int y, int width, unsigned seed) {
  char line[256];
  int n = (width - 40) / 6;
  if (n > 255)
    n = 255;
  for (int i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    line[i] = (seed >> 16) % 7 == 0 ? ' ' : (char)('a' + (seed >> 8) % 26);
  }
  XDrawString(d, w, gc, 20, y, line, n);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gc-bench-xload typing|scroll|motion|idle SECONDS\n");
    return 2;
  }
  const char* mode = argv[1];
  const double seconds = atof(argv[2]);
  Display* d = XOpenDisplay(NULL);
  if (!d) {
    fprintf(stderr, "gc-bench-xload: cannot open display\n");
    return 1;
  }
  const int screen = DefaultScreen(d);
  if (strcmp(mode, "damage") == 0) {
#ifdef GC_XLOAD_DAMAGE
    int event_base = 0, error_base = 0;
    if (!XDamageQueryExtension(d, &event_base, &error_base)) {
      fprintf(stderr, "gc-bench-xload: no DAMAGE extension\n");
      return 1;
    }
    Damage damage = XDamageCreate(d, RootWindow(d, screen), XDamageReportNonEmpty);
    XSync(d, False);
    const double begin = now_s();
    long events = 0;
    while (now_s() - begin < seconds) {
      while (XPending(d)) {
        XEvent e;
        XNextEvent(d, &e);
        if (e.type == event_base + XDamageNotify) {
          ++events;
          XDamageSubtract(d, damage, None, None);
        }
      }
      struct timespec ts = {0, 500000};
      nanosleep(&ts, NULL);
    }
    printf("{\"mode\":\"damage\",\"events\":%ld,\"seconds\":%.3f}\n", events, now_s() - begin);
    XCloseDisplay(d);
    return 0;
#else
    fprintf(stderr, "gc-bench-xload: built without Xdamage\n");
    return 1;
#endif
  }
  const int width = DisplayWidth(d, screen), height = DisplayHeight(d, screen);
  XSetWindowAttributes attrs;
  attrs.override_redirect = True;
  attrs.background_pixel = WhitePixel(d, screen);
  Window w =
      XCreateWindow(d, RootWindow(d, screen), 0, 0, (unsigned)width, (unsigned)height, 0, CopyFromParent,
                    InputOutput, CopyFromParent, CWOverrideRedirect | CWBackPixel, &attrs);
  XSelectInput(d, w, KeyPressMask);
  XMapRaised(d, w);
  XSync(d, False);
  XSetInputFocus(d, w, RevertToPointerRoot, CurrentTime);
  GC gc = XCreateGC(d, w, 0, NULL);
  XSetForeground(d, gc, BlackPixel(d, screen));
  XSetGraphicsExposures(d, gc, False);
  XSync(d, False);
  for (int y = 20; y < height; y += 14)
    text_row(d, w, gc, y, width, (unsigned)y);
  draw_marker(d, w, gc);
  XSync(d, False);

  XImage* img = NULL;
  if (strcmp(mode, "motion") == 0) {
    char* data = malloc((size_t)width * (size_t)height * 4);
    img = XCreateImage(d, DefaultVisual(d, screen), (unsigned)DefaultDepth(d, screen), ZPixmap, 0, data,
                       (unsigned)width, (unsigned)height, 32, 0);
  }
  const double rate = strcmp(mode, "motion") == 0 ? 60.0 : 30.0;
  const double start = now_s();
  long ticks = 0, glyph = 0, keys = 0;
  unsigned seed = 1;
  double next = start;
  int input_open = 1;
  while (now_s() - start < seconds && input_open) {
    /* Keys first: the marker changes as soon as the key arrives, between ticks too. */
    while (XPending(d)) {
      XEvent e;
      XNextEvent(d, &e);
      if (e.type == KeyPress) {
        const unsigned long rgb = key_colour(XLookupKeysym(&e.xkey, 0));
        ++keys;
        if (rgb) {
          marker_rgb = rgb;
          draw_marker(d, w, gc);
          XSync(d, False);
        }
      }
    }
    const double t = now_s();
    if (t < next) {
      /* Sleep until the next tick, a key, or stdin (closed = stop). */
      struct pollfd p[2] = {{ConnectionNumber(d), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
      const struct timespec ts = {0, (long)((next - t) * 1e9)};
      if (ppoll(p, 2, &ts, NULL) > 0 && (p[1].revents & (POLLIN | POLLHUP))) {
        char sink[64];
        if (read(STDIN_FILENO, sink, sizeof sink) <= 0)
          input_open = 0;
      }
      continue;
    }
    while (next <= t)
      next += 1.0 / rate; /* drop missed ticks */
    ++ticks;
    if (strcmp(mode, "typing") == 0) {
      for (int k = 0; k < 3; ++k, ++glyph) {
        const int cols = (width - 40) / 8, rows = (height - 40) / 14;
        const int cx = 20 + (int)(glyph % cols) * 8, cy = 30 + (int)((glyph / cols) % rows) * 14;
        if (cx + 8 > kMarkerX && cy + 3 > kMarkerY)
          continue; /* the marker's cell */
        char c = (char)('a' + glyph % 26);
        XSetForeground(d, gc, WhitePixel(d, screen));
        XFillRectangle(d, w, gc, cx, cy - 11, 8, 14);
        XSetForeground(d, gc, BlackPixel(d, screen));
        XDrawString(d, w, gc, cx, cy, &c, 1);
      }
    } else if (strcmp(mode, "scroll") == 0) {
      XCopyArea(d, w, w, gc, 0, 4, (unsigned)width, (unsigned)height - 4, 0, 0);
      XSetForeground(d, gc, WhitePixel(d, screen));
      XFillRectangle(d, w, gc, 0, height - 4, (unsigned)width, 4);
      XSetForeground(d, gc, BlackPixel(d, screen));
      if (ticks % 4 == 0)
        text_row(d, w, gc, height - 2, width, ++seed);
    } else if (img) {
      uint32_t* px = (uint32_t*)img->data;
      const unsigned phase = (unsigned)ticks * 7u;
      for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
          seed = seed * 1664525u + 1013904223u;
          const unsigned r = ((unsigned)x + phase) & 0xff, g = ((unsigned)y + phase * 2u) & 0xff,
                         b = ((unsigned)(x + y) / 2u + phase) & 0xff;
          px[(size_t)y * (size_t)width + (size_t)x] =
              ((r ^ (seed >> 29)) << 16) | ((g ^ (seed >> 26 & 7)) << 8) | b;
        }
      }
      /* The marker inside the image: one put, no flicker between motion and marker. */
      for (int y = kMarkerY; y < kMarkerY + kMarker && y < height; ++y)
        for (int x = kMarkerX; x < kMarkerX + kMarker && x < width; ++x)
          px[(size_t)y * (size_t)width + (size_t)x] = (uint32_t)marker_rgb;
      XPutImage(d, w, gc, img, 0, 0, 0, 0, (unsigned)width, (unsigned)height);
    }
    if (!img && ticks > 0 && strcmp(mode, "idle") != 0)
      draw_marker(d, w, gc);
    XSync(d, False);
  }
  printf("{\"mode\":\"%s\",\"ticks\":%ld,\"seconds\":%.3f,\"keys\":%ld}\n", mode, ticks, now_s() - start,
         keys);
  if (img)
    XDestroyImage(img);
  XCloseDisplay(d);
  return 0;
}
