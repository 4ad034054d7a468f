// Lifetimes: a class that owns resources extends Disposable and registers them once;
// dispose() releases them in reverse order, exactly once.

export interface IDisposable {
  dispose(): void;
}

export function toDisposable(fn: () => void): IDisposable {
  let done = false;
  return {
    dispose: () => {
      if (!done) {
        done = true;
        fn();
      }
    },
  };
}

export abstract class Disposable implements IDisposable {
  private readonly owned: IDisposable[] = [];
  private disposed = false;

  protected get isDisposed(): boolean {
    return this.disposed;
  }

  protected register<T extends IDisposable>(value: T): T {
    if (this.disposed) {
      value.dispose();
    } else {
      this.owned.push(value);
    }
    return value;
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    while (this.owned.length > 0) {
      this.owned.pop()?.dispose();
    }
  }
}

/** A minimal typed event, so host classes do not need the vscode module to be testable. */
export class Emitter<T> implements IDisposable {
  private listeners = new Set<(value: T) => void>();

  readonly event = (listener: (value: T) => void): IDisposable => {
    this.listeners.add(listener);
    return toDisposable(() => this.listeners.delete(listener));
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
