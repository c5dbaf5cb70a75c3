// Writes deploy/crds/multiarch.openshift.io_*.yaml from the schema definition. Run after changing schema.ts:
// `npx tsx src/podplacement/api/generate.ts` (with `--check` it only reports drift, exit code 1 if any).
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdFileName, renderCrdYaml } from './crd.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG } from './schema.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = path.join(root, 'deploy', 'crds');
const check = process.argv.includes('--check');
let drift = 0;
await mkdir(dir, { recursive: true });
for (const kind of [CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG]) {
  const file = path.join(dir, crdFileName(kind));
  const text = renderCrdYaml(kind);
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current === text) continue;
  if (check) {
    drift++;
    process.stderr.write(`${file} is out of date; run npx tsx src/podplacement/api/generate.ts\n`);
  } else {
    await writeFile(file, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
process.exitCode = drift > 0 ? 1 : 0;
