// Writes deploy/crds/update.openshift.io_updatestatuses.yaml from the TypeBox schemas, formatted with the
// project's Prettier settings (run `tsx src/updatestatus/api/generate-crd.ts`; `--check` writes nothing and exits 1
// when the file is out of date, for CI).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { updateStatusCrdYaml } from './crd.js';

export const CRD_PATH = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../deploy/crds/update.openshift.io_updatestatuses.yaml',
);

/** The exact content the CRD file must have. */
export async function crdFileContent(): Promise<string> {
  const config = (await resolveConfig(CRD_PATH)) ?? {};
  return format(updateStatusCrdYaml(), { ...config, filepath: CRD_PATH });
}

async function main(): Promise<void> {
  const want = await crdFileContent();
  if (process.argv.includes('--check')) {
    let have = '';
    try {
      have = readFileSync(CRD_PATH, 'utf8');
    } catch {
      // a missing file is out of date too
    }
    if (have !== want) {
      process.stderr.write(`${CRD_PATH} is out of date: run tsx src/updatestatus/api/generate-crd.ts\n`);
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(CRD_PATH, want);
  process.stdout.write(`wrote ${CRD_PATH}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
