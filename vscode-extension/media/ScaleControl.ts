// How big the guest's desktop is drawn: "Fit" shrinks it into the panel but never enlarges
// it past one desktop pixel per screen pixel (a small desktop blown up is blurry); "100 %" is
// exactly one desktop pixel per screen (device) pixel, and the stage scrolls. Both follow
// window.devicePixelRatio (VS Code's zoom, a HiDPI screen), also when it changes.
// Runs on the webview's main thread.

export type ScaleMode = 'fit' | 'actual';

export class ScaleControl {
  private modeNow: ScaleMode;
  private desktop = { width: 0, height: 0 };
  private dprQuery: MediaQueryList | undefined;
  private readonly onDprChange = () => this.apply();

  constructor(
    private readonly stage: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private readonly fitButton: HTMLButtonElement,
    private readonly actualButton: HTMLButtonElement,
    private readonly readout: HTMLElement,
    initial: ScaleMode,
    private readonly changed: (mode: ScaleMode) => void,
  ) {
    this.modeNow = initial;
    fitButton.addEventListener('click', () => this.setMode('fit'));
    actualButton.addEventListener('click', () => this.setMode('actual'));
    new ResizeObserver(() => this.apply()).observe(stage);
    this.watchDpr();
    this.apply();
  }

  get mode(): ScaleMode {
    return this.modeNow;
  }

  setMode(mode: ScaleMode): void {
    if (mode !== this.modeNow) {
      this.modeNow = mode;
      this.changed(mode);
    }
    this.apply();
  }

  setDesktop(width: number, height: number): void {
    this.desktop = { width, height };
    this.apply();
  }

  /** Screen (device) pixels per desktop pixel as drawn now. */
  get deviceScale(): number {
    return this.cssScale() * this.dpr();
  }

  private dpr(): number {
    const r = window.devicePixelRatio;
    return Number.isFinite(r) && r > 0 ? r : 1;
  }

  private cssScale(): number {
    const { width, height } = this.desktop;
    const oneToOne = 1 / this.dpr();
    if (this.modeNow === 'actual' || width === 0 || height === 0) {
      return oneToOne;
    }
    const box = this.stage.getBoundingClientRect();
    const fit = Math.min(box.width / width, box.height / height);
    return Math.min(oneToOne, fit > 0 ? fit : oneToOne);
  }

  // A resolution media query fires once when the ratio leaves its value: ask again each time.
  private watchDpr(): void {
    this.dprQuery?.removeEventListener('change', this.onDprWatch);
    this.dprQuery = window.matchMedia(`(resolution: ${this.dpr()}dppx)`);
    this.dprQuery.addEventListener('change', this.onDprWatch);
  }

  private readonly onDprWatch = (): void => {
    this.watchDpr();
    this.onDprChange();
  };

  private apply(): void {
    const actual = this.modeNow === 'actual';
    this.fitButton.setAttribute('aria-pressed', String(!actual));
    this.actualButton.setAttribute('aria-pressed', String(actual));
    this.stage.dataset['scale'] = this.modeNow;
    const { width, height } = this.desktop;
    if (width === 0 || height === 0) {
      this.readout.textContent = '';
      return;
    }
    const scale = this.cssScale();
    // CSS pixels may be fractional: at 100 % and a ratio of 1.25, 640 px wide is 512 CSS px.
    this.canvas.style.width = `${width * scale}px`;
    this.canvas.style.height = `${height * scale}px`;
    this.canvas.style.imageRendering = Math.abs(scale * this.dpr() - 1) < 1e-6 ? 'pixelated' : 'auto';
    const percent = Math.round(scale * this.dpr() * 100);
    this.readout.textContent = `shown at ${percent} %`;
    this.readout.setAttribute('aria-label', `Shown at ${percent} %`);
  }
}
