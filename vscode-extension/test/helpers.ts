import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';

/** vscode-extension/ (tests run from out/test/...). */
export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..');
export const FAKE_CONSOLE = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'fake-console.js');
export const SENTINEL_PASSWORD = 'S3ntinel-Passw0rd-9f1e';
export const SENTINEL_SECRET = 'SENTINEL-SECRET-7c2d';

export async function tempDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'gc-ext-test-'));
}

let grantCounter = 0;
export async function writeGrant(dir: string, fake: Record<string, unknown>, runId = `run-${++grantCounter}`): Promise<string> {
  const file = path.join(dir, `grant-${++grantCounter}.json`);
  const grant = {
    version: 1,
    run_id: runId,
    task_id: 'task-1',
    vm: { name: 'win11-bench' },
    panel: { title: 'Bench VM', username: 'operator' },
    fake,
  };
  await fs.writeFile(file, JSON.stringify(grant));
  return file;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits for a condition driven by events elsewhere; fails after the deadline. */
export async function waitFor<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function readRecord(file: string): Promise<{ argv: string[]; env: Record<string, string>; stdin: string[] }> {
  return JSON.parse(await fs.readFile(file, 'utf8')) as { argv: string[]; env: Record<string, string>; stdin: string[] };
}
