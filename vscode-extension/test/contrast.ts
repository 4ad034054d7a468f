// WCAG contrast of the panel's text as the page renders it: every visible element with text
// of its own (disabled controls are exempt, as WCAG 1.4.3 says), its computed colour over its
// background composited from the nearest opaque ancestor up. Runs in the page (self-contained:
// playwright serialises it), in the browser and the real-VS-Code lanes alike.

export interface ContrastFinding {
  /** A short path to the element: tag#id.class[data-…]. */
  where: string;
  text: string;
  ratio: number;
  fg: string;
  bg: string;
}

export function contrastProbe(): ContrastFinding[] {
  type Rgba = { r: number; g: number; b: number; a: number };
  const parse = (css: string): Rgba | undefined => {
    const m = /rgba?\(([^)]+)\)/.exec(css);
    if (!m || m[1] === undefined) return undefined;
    const p = m[1]
      .split(/[\s,/]+/)
      .filter((x) => x !== '')
      .map((x) => (x.endsWith('%') ? Number(x.slice(0, -1)) / 100 : Number(x)));
    return { r: p[0] ?? 0, g: p[1] ?? 0, b: p[2] ?? 0, a: p.length > 3 ? (p[3] ?? 1) : 1 };
  };
  const over = (top: Rgba, bottom: Rgba): Rgba => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const lum = (c: Rgba): number => {
    const f = (v: number): number => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const hex = (c: Rgba): string => `#${[c.r, c.g, c.b].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
  const background = (el: Element): Rgba => {
    const layers: Rgba[] = [];
    for (let e: Element | null = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) {
        layers.push(c);
        if (c.a >= 1) break;
      }
    }
    let acc: Rgba = { r: 255, g: 255, b: 255, a: 1 }; // the canvas under everything
    for (const layer of layers.reverse()) acc = over(layer, acc);
    return acc;
  };
  const findings: ContrastFinding[] = [];
  for (const el of Array.from(document.body.querySelectorAll<HTMLElement>('*'))) {
    const own = Array.from(el.childNodes)
      .filter((n) => n.nodeType === Node.TEXT_NODE)
      .map((n) => n.textContent ?? '')
      .join('')
      .trim();
    if (own === '' || el.getClientRects().length === 0 || el.closest('[hidden]') || el.closest('[aria-hidden="true"]')) continue;
    if ((el.closest('button') as HTMLButtonElement | null)?.disabled) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden') continue;
    const bg = background(el);
    const fgRaw = parse(style.color);
    if (!fgRaw) continue;
    const fg = over(fgRaw, bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x) as [number, number];
    const where = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).replace(/\s+/g, '.')}` : ''}${el.dataset['phase'] ? `[phase=${el.dataset['phase']}]` : ''}${el.dataset['state'] ? `[state=${el.dataset['state']}]` : ''}`;
    findings.push({ where, text: own.slice(0, 40), ratio: Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100, fg: hex(fg), bg: hex(bg) });
  }
  return findings;
}

/** WCAG 2 AA for normal text. */
export const AA = 4.5;
