// Bundles the extension host (node, cjs) and the webview (browser, iife) with esbuild.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: production ? false : 'linked', minify: production, logLevel: 'warning', absWorkingDir: root };

await mkdir(path.join(root, 'dist/media'), { recursive: true });
await mkdir(path.join(root, 'dist/docs'), { recursive: true });
// The frame worker is bundled first and embedded in main.js as a string: the page starts it
// from a blob: URL (a webview's resources are not same-origin with its document).
const worker = await build({ ...common, sourcemap: false, entryPoints: ['media/frameWorker.ts'], write: false, outfile: 'frameWorker.js', platform: 'browser', format: 'iife', target: 'chrome120' });
const workerSource = worker.outputFiles[0].text;
await Promise.all([
  build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] }),
  build({ ...common, entryPoints: ['media/main.ts'], outfile: 'dist/media/main.js', platform: 'browser', format: 'iife', target: 'chrome120', define: { __GC_FRAME_WORKER__: JSON.stringify(workerSource) } }),
  copyFile(path.join(root, 'media/view.css'), path.join(root, 'dist/media/view.css')),
  // "Open Docs" on a refusal notification opens this copy at the code's row.
  copyFile(path.join(root, '..', 'docs', 'troubleshooting.md'), path.join(root, 'dist/docs/troubleshooting.md')),
]);
