// `npm run generate`: rewrites every generated file of the repository from its source of truth, only where the
// content changed. `npm run generate:check` (part of `npm run lint`, so CI runs it) writes nothing, names every stale
// or missing file on stderr and exits 1. Each area lists its own files in `src/<area>/api/generated-files.ts`
// (`generatedFiles()`, pure); this is the one tool that writes and checks them all. The generators are tools, not
// product: they live here and in hack/bundle/, outside what `npm run build` compiles into dist/.
//   pod placement   deploy/crds/multiarch.openshift.io_*.yaml, deploy/crds/dev/<OpenShift registry-policy kinds>
//   update status   deploy/crds/update.openshift.io_updatestatuses.yaml
//   NodePool        deploy/crds/dev/<hypershift, performance, tuned CRDs>
//   OLM bundle      bundle/ (CSV, CRDs, objects, annotations) from deploy/podplacement/base (hack/bundle/bundle.ts)
//   console plugin  deploy/console-plugin/ (src/dashboard/console-plugin/generated-files.ts)
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles as dashboardFiles } from '../src/dashboard/console-plugin/generated-files.js';
import { generatedFiles as nodePoolFiles } from '../src/nodepool/api/generated-files.js';
import { generatedFiles as podPlacementFiles } from '../src/podplacement/api/generated-files.js';
import type { GeneratedFile } from '../src/runtime/light.js';
import { generatedFiles as updateStatusFiles } from '../src/updatestatus/api/generated-files.js';
import { renderBundle } from './bundle/bundle.js';
import { readBundleSources } from './bundle/sources.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const bundleFiles = async (): Promise<GeneratedFile[]> =>
  renderBundle(await readBundleSources(root)).map((f) => ({ path: `bundle/${f.path}`, content: f.content }));

async function allGeneratedFiles(): Promise<GeneratedFile[]> {
  const files = [
    ...podPlacementFiles(),
    ...updateStatusFiles(),
    ...nodePoolFiles(),
    ...dashboardFiles(),
    ...(await bundleFiles()),
  ];
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new Error(`two generators write ${f.path}`);
    seen.add(f.path);
  }
  return files;
}

/** Folders whose every file is generated: a file there that no generator writes is stale too. */
const GENERATED_FOLDERS = ['bundle', 'deploy/crds/dev'];

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(root, folder), { recursive: true, withFileTypes: true }).catch(
    () => [],
  );
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

async function main(check: boolean): Promise<number> {
  let stale = 0;
  const files = await allGeneratedFiles();
  const written = new Set(files.map((f) => f.path));
  for (const folder of GENERATED_FOLDERS)
    for (const leftover of (await filesUnder(folder)).filter((f) => !written.has(f))) {
      if (check) {
        stale++;
        process.stderr.write(`${leftover} is no longer generated; run npm run generate (it deletes it)\n`);
        continue;
      }
      await rm(path.join(root, leftover));
      process.stdout.write(`deleted ${leftover}\n`);
    }
  for (const file of files) {
    const target = path.join(root, file.path);
    const current = await readFile(target, 'utf8').catch(() => undefined);
    if (current === file.content) continue;
    if (check) {
      stale++;
      process.stderr.write(
        `${file.path} is ${current === undefined ? 'missing' : 'out of date'}; run npm run generate\n`,
      );
      continue;
    }
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.content);
    process.stdout.write(`wrote ${file.path}\n`);
  }
  return stale > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.includes('--check'));
