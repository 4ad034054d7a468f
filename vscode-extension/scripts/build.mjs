// Bundles the extension host (node, cjs) and the webview (browser, iife) with esbuild.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: production ? false : 'linked', minify: production, logLevel: 'warning', absWorkingDir: root };

await mkdir(path.join(root, 'dist/media'), { recursive: true });
await Promise.all([
  build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] }),
  build({ ...common, entryPoints: ['media/main.ts'], outfile: 'dist/media/main.js', platform: 'browser', format: 'iife', target: 'chrome120' }),
  copyFile(path.join(root, 'media/view.css'), path.join(root, 'dist/media/view.css')),
]);
