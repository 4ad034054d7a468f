/* gc-live-observer: the live lane's witness inside the guest.
 *
 * A full-screen X window on the guest's desktop (Xvfb :0, behind the RDP shadow server)
 * that reports every key and pointer event it receives, one line each, on stdout (the
 * guest's init points stdout at the serial console, which the host reads), and shows
 * them: the counters are drawn as a row of black/white cells (machine-readable in a
 * captured frame, see MARKER below) and the typed characters as text.
 *
 * Line format (one event per line, nothing else on stdout):
 *   GCOBS <n> key <down|up> <x keycode> <keysym name>
 *   GCOBS <n> button <down|up> <button> <x> <y>
 *   GCOBS <n> motion <x> <y>
 * n counts every event of these kinds, from 1.
 *
 * A second process (forked at start) records, with the X RECORD extension, what reaches
 * the X server on the way to the window: every XTest FakeInput request of a pointer button
 * or motion (what the RDP server injected) and every button event the server then
 * processed, one line each (the host only reads them to explain a mismatch):
 *   GCREC req button <down|up> <button>
 *   GCREC req motion <x> <y>
 *   GCREC dev <down|up> <button> <x> <y>
 * Keys are not recorded: the typed credentials must not appear twice on the serial.
 *
 * MARKER: rows of 32 cells (CELL x CELL px) at (MARKER_X, MARKER_Y + row*CELL), MSB first,
 * black = 1: row 0 the constant MAGIC, row 1 key events, row 2 button events, row 3
 * motion events (each a 32-bit count).
 *
 * Compiled on the host (Debian 12, same ABI as the bookworm guest) and copied into the image.
 */
#include <X11/Xlib.h>
#include <X11/Xproto.h>
#include <X11/Xutil.h>
#include <X11/extensions/record.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { CELL = 12, MARKER_X = 16, MARKER_Y = 16, ROWS = 4 };
static const unsigned long MAGIC = 0x6c1e0b5eUL;

static unsigned long counts[ROWS]; /* [0] unused (MAGIC) */
static unsigned long total;
static char typed[256];

static void draw(Display* d, Window w, GC gc, unsigned long black, unsigned long white, XFontStruct* font) {
  for (int row = 0; row < ROWS; ++row) {
    const unsigned long value = row == 0 ? MAGIC : counts[row];
    for (int bit = 0; bit < 32; ++bit) {
      XSetForeground(d, gc, ((value >> (31 - bit)) & 1UL) ? black : white);
      XFillRectangle(d, w, gc, MARKER_X + bit * CELL, MARKER_Y + row * CELL, CELL, CELL);
    }
  }
  XSetForeground(d, gc, white);
  XFillRectangle(d, w, gc, MARKER_X, MARKER_Y + ROWS * CELL + 8, 1000, 60);
  if (font) {
    char line[128];
    XSetForeground(d, gc, black);
    snprintf(line, sizeof line, "keys %lu  buttons %lu  motions %lu", counts[1], counts[2], counts[3]);
    XDrawString(d, w, gc, MARKER_X, MARKER_Y + ROWS * CELL + 24, line, (int)strlen(line));
    XDrawString(d, w, gc, MARKER_X, MARKER_Y + ROWS * CELL + 48, typed, (int)strlen(typed));
  }
  XFlush(d);
}

/* xXTestFakeInputReq: type at 4, detail at 5, rootX/rootY at 24/26 (XTest protocol 2.2). */
enum { XTEST_FAKE_INPUT = 2 };
static int xtest_major;

static unsigned u16(const unsigned char* p) { return (unsigned)p[0] | ((unsigned)p[1] << 8); }

static void on_record(XPointer unused, XRecordInterceptData* d) {
  (void)unused;
  const unsigned char* p = d->data;
  if (d->category == XRecordFromClient && d->data_len * 4 >= 28 && p[0] == xtest_major && p[1] == XTEST_FAKE_INPUT) {
    const int type = p[4];
    if (type == ButtonPress || type == ButtonRelease)
      printf("GCREC req button %s %u\n", type == ButtonPress ? "down" : "up", p[5]);
    else if (type == MotionNotify)
      printf("GCREC req motion %d %d\n", (short)u16(p + 24), (short)u16(p + 26));
  } else if (d->category == XRecordFromServer && d->data_len * 4 >= 24 && (p[0] == ButtonPress || p[0] == ButtonRelease)) {
    printf("GCREC dev %s %u %d %d\n", p[0] == ButtonPress ? "down" : "up", p[1], (short)u16(p + 20), (short)u16(p + 22));
  }
  XRecordFreeData(d);
}

/* The recording process: never returns while the display lives. */
static void record(void) {
  Display* ctl = XOpenDisplay(NULL);
  Display* data = XOpenDisplay(NULL);
  int first_event, first_error, major, minor;
  if (!ctl || !data || !XRecordQueryVersion(ctl, &major, &minor) ||
      !XQueryExtension(ctl, "XTEST", &xtest_major, &first_event, &first_error)) {
    printf("GCREC unavailable\n");
    _exit(0);
  }
  XRecordRange* range = XRecordAllocRange();
  range->ext_requests.ext_major.first = range->ext_requests.ext_major.last = (unsigned char)xtest_major;
  range->ext_requests.ext_minor.first = range->ext_requests.ext_minor.last = XTEST_FAKE_INPUT;
  range->device_events.first = ButtonPress;
  range->device_events.last = ButtonRelease;
  XRecordClientSpec clients = XRecordAllClients;
  XRecordContext ctx = XRecordCreateContext(ctl, 0, &clients, 1, &range, 1);
  XSync(ctl, False);
  printf("GCREC started\n");
  XRecordEnableContext(data, ctx, on_record, NULL);
  _exit(0);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (fork() == 0)
    record();
  Display* d = XOpenDisplay(NULL);
  if (!d) {
    fprintf(stderr, "gc-live-observer: cannot open the display\n");
    return 1;
  }
  const int screen = DefaultScreen(d);
  const unsigned long black = BlackPixel(d, screen), white = WhitePixel(d, screen);
  const unsigned width = (unsigned)DisplayWidth(d, screen), height = (unsigned)DisplayHeight(d, screen);
  XSetWindowAttributes attrs;
  attrs.background_pixel = white;
  attrs.override_redirect = True; /* no window manager: place it ourselves, full screen */
  attrs.event_mask =
      KeyPressMask | KeyReleaseMask | ButtonPressMask | ButtonReleaseMask | PointerMotionMask | ExposureMask;
  Window w = XCreateWindow(d, RootWindow(d, screen), 0, 0, width, height, 0, CopyFromParent, InputOutput,
                           CopyFromParent, CWBackPixel | CWOverrideRedirect | CWEventMask, &attrs);
  XMapRaised(d, w);
  GC gc = XCreateGC(d, w, 0, NULL);
  XFontStruct* font = XLoadQueryFont(d, "fixed");
  if (font)
    XSetFont(d, gc, font->fid);
  /* A key whose release the console refused (after the lock) must not repeat by itself:
   * every key event the guest sees has to be one the console sent. */
  XAutoRepeatOff(d);
  /* Keyboard focus on our window (there is no window manager to give it). */
  XSetInputFocus(d, w, RevertToPointerRoot, CurrentTime);
  printf("GCOBS 0 started %ux%u\n", width, height);
  draw(d, w, gc, black, white, font);

  for (;;) {
    XEvent e;
    XNextEvent(d, &e);
    switch (e.type) {
    case KeyPress:
    case KeyRelease: {
      char buf[8] = {0};
      KeySym sym = NoSymbol;
      const int n = XLookupString(&e.xkey, buf, sizeof buf - 1, &sym, NULL);
      const char* name = sym != NoSymbol ? XKeysymToString(sym) : NULL;
      ++counts[1];
      printf("GCOBS %lu key %s %u %s\n", ++total, e.type == KeyPress ? "down" : "up", e.xkey.keycode,
             name ? name : "-");
      if (e.type == KeyPress && n == 1 && buf[0] >= 0x20 && buf[0] < 0x7f) {
        size_t len = strlen(typed);
        if (len + 1 >= sizeof typed)
          len = 0;
        typed[len] = buf[0];
        typed[len + 1] = 0;
      }
      draw(d, w, gc, black, white, font);
      break;
    }
    case ButtonPress:
    case ButtonRelease:
      ++counts[2];
      printf("GCOBS %lu button %s %u %d %d\n", ++total, e.type == ButtonPress ? "down" : "up",
             e.xbutton.button, e.xbutton.x, e.xbutton.y);
      draw(d, w, gc, black, white, font);
      break;
    case MotionNotify:
      ++counts[3];
      printf("GCOBS %lu motion %d %d\n", ++total, e.xmotion.x, e.xmotion.y);
      draw(d, w, gc, black, white, font);
      break;
    case Expose:
      if (e.xexpose.count == 0)
        draw(d, w, gc, black, white, font);
      break;
    default:
      break;
    }
  }
}
