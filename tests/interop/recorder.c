/* gc-interop-recorder: the interop lane's witness of pointer buttons and keys inside a
 * server's X session (xorgxrdp's X server for xrdp, Xwayland under mutter for GRD).
 *
 * The X server turns the RDP input it is given into X device events; this program records,
 * with the X RECORD extension, every button press and release the server processed (whichever
 * window got it: the session's xterm holds the button grab, so no second client could select
 * them), and every key press and release (its keycode only), one line each on stdout:
 *   GCREC started
 *   GCREC dev <down|up> <button> <root x> <root y>
 *   GCREC key <down|up> <keycode>
 * Run as root with DISPLAY and XAUTHORITY of the session; it ends with the X server.
 */
#include <X11/Xlib.h>
#include <X11/Xproto.h>
#include <X11/extensions/record.h>
#include <stdio.h>

static unsigned u16(const unsigned char* p) { return (unsigned)p[0] | ((unsigned)p[1] << 8); }

/* xEvent (X11 protocol): type at 0, detail (the button) at 1, rootX/rootY at 20/22. */
static void on_record(XPointer unused, XRecordInterceptData* d) {
  (void)unused;
  const unsigned char* p = d->data;
  if (d->category == XRecordFromServer && d->data_len * 4 >= 24 && (p[0] == ButtonPress || p[0] == ButtonRelease))
    printf("GCREC dev %s %u %d %d\n", p[0] == ButtonPress ? "down" : "up", p[1], (short)u16(p + 20),
           (short)u16(p + 22));
  else if (d->category == XRecordFromServer && d->data_len * 4 >= 24 && (p[0] == KeyPress || p[0] == KeyRelease))
    printf("GCREC key %s %u\n", p[0] == KeyPress ? "down" : "up", p[1]);
  XRecordFreeData(d);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  Display* ctl = XOpenDisplay(NULL);
  Display* data = XOpenDisplay(NULL);
  int major, minor;
  if (!ctl || !data || !XRecordQueryVersion(ctl, &major, &minor)) {
    printf("GCREC unavailable\n");
    return 1;
  }
  XRecordRange* range = XRecordAllocRange();
  range->device_events.first = KeyPress; /* KeyPress, KeyRelease, ButtonPress, ButtonRelease */
  range->device_events.last = ButtonRelease;
  XRecordClientSpec clients = XRecordAllClients;
  XRecordContext ctx = XRecordCreateContext(ctl, 0, &clients, 1, &range, 1);
  XSync(ctl, False);
  printf("GCREC started\n");
  XRecordEnableContext(data, ctx, on_record, NULL);
  return 0;
}
