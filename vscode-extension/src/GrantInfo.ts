// What the extension reads from a grant for display and for `hello`. It does not
// validate the grant: the console does that and refuses with a typed reason.

import { promises as fs } from 'fs';
import * as path from 'path';
import type { PanelMetadata } from '../shared/protocol';

const MAX_GRANT_BYTES = 64 * 1024;

export interface GrantInfo {
  path: string;
  /** Key for "one panel per run": the grant's run_id, else its real path. */
  key: string;
  runId?: string;
  taskId?: string;
  vmName?: string;
  username?: string;
  panel: PanelMetadata;
}

export async function readGrantInfo(grantPath: string): Promise<GrantInfo> {
  const real = await fs.realpath(path.resolve(grantPath));
  const stat = await fs.stat(real);
  if (!stat.isFile() || stat.size > MAX_GRANT_BYTES) {
    throw new Error('the grant is not a regular file of at most 64 KiB');
  }
  const raw: unknown = JSON.parse(await fs.readFile(real, 'utf8'));
  const grant = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const panelRaw = grant['panel'];
  const panelObj = typeof panelRaw === 'object' && panelRaw !== null && !Array.isArray(panelRaw) ? (panelRaw as Record<string, unknown>) : {};
  const vm = grant['vm'] as Record<string, unknown> | undefined;
  const runId = str(grant['run_id']);
  const info: GrantInfo = {
    path: real,
    key: runId ? `run:${runId}` : `path:${real}`,
    panel: { ...panelObj, title: str(panelObj['title']) ?? 'Guest Console' },
  };
  if (runId) info.runId = runId;
  const taskId = str(grant['task_id']);
  if (taskId) info.taskId = taskId;
  const vmName = str(vm?.['name']);
  if (vmName) info.vmName = vmName;
  const username = str(panelObj['username']);
  if (username) info.username = username;
  return info;
}
