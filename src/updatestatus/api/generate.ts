// The files generated from this area's API schemas: deploy/crds/update.openshift.io_updatestatuses.yaml, formatted
// with the project's Prettier settings. `npm run generate` (hack/generate.ts) writes it and
// `npm run generate:check` fails when it is stale.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { updateStatusCrdYaml } from './crd.js';

/** Path of the CRD file relative to the project root. */
export const CRD_FILE = 'deploy/crds/update.openshift.io_updatestatuses.yaml';
export const CRD_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..', CRD_FILE);

/** The exact content the CRD file must have. */
export async function crdFileContent(): Promise<string> {
  const config = (await resolveConfig(CRD_PATH)) ?? {};
  return format(updateStatusCrdYaml(), { ...config, filepath: CRD_PATH });
}

export async function generatedFiles(): Promise<{ path: string; content: string }[]> {
  return [{ path: CRD_FILE, content: await crdFileContent() }];
}
