// Writes deploy/crds/dev/*.yaml for this area from the TypeBox schemas. Run: `npx tsx src/nodepool/gen-crds.ts`.
// Idempotent: rewrites only files whose content changed, and prints what it wrote.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCrds } from './crds.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

for (const crd of renderCrds()) {
  const target = path.join(projectRoot, crd.file);
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (current === crd.yaml) continue;
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, crd.yaml);
  process.stdout.write(`wrote ${crd.file}\n`);
}
